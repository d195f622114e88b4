# shellcheck shell=bash
# 80-pods.sh - Kubernetes pods laid out for real: kubelet-named cgroups in
# the v2 hierarchy (systemd driver, containerd scopes), processes moved in,
# the kubelet's /var/log/pods and /var/log/containers; serve --pods names
# the series by namespace, pod and container, follows a pod removed and one
# added; a pod's slice as --cgroup takes its containers; whose CPU time the
# server's waits were (by="pod" under the other pod's hog, by="host" under
# a host's), and the hog's pod in the evidence. Everything made is removed
# after (pods_cleanup).
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

PODS_MADE=() # the directories and links made, removed in reverse order
# Written when a test makes /var/log/pods: a run killed before pods_cleanup
# (a session's end kills the shell mid-test) left its layout behind, and the
# next run took it for the node's own pods and skipped. Only a layout that
# carries this mark is removed (pods_stale); a node's real pods never do.
PODS_MARK=/var/log/pods/.latwhy-integration

pods_v2_root() {
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
	     $(i + 1) == "cgroup2" && $4 == "/" { print $5; exit }' /proc/self/mountinfo
}

# pods_mkdir DIR: made (with its parents) and remembered, if it was not there
pods_mkdir() {
	local d=$1 todo=()
	while [ ! -e "$d" ]; do
		todo=("$d" "${todo[@]}")
		d=$(dirname "$d")
	done
	for d in "${todo[@]}"; do
		mkdir "$d" || return 1
		PODS_MADE+=("$d")
		if [ "$d" = /var/log/pods ]; then
			: >"$PODS_MARK" || return 1
			PODS_MADE+=("$PODS_MARK")
		fi
	done
}

# pods_stale: a layout an earlier run left behind (PODS_MARK) removed, its
# processes killed, before a test asks whether the node has pods of its own.
# The log directory is made before any cgroup (pod_make), so a kubepods
# cgroup without the mark is never the tests'.
pods_stale() {
	local d
	[ -f "$PODS_MARK" ] || return 0
	if [ -d "$CGROOT/kubepods.slice" ]; then
		find "$CGROOT/kubepods.slice" -name cgroup.procs -exec cat {} + 2>/dev/null |
			xargs -r kill -KILL 2>/dev/null
		sleep 0.2
		find "$CGROOT/kubepods.slice" -depth -type d | while read -r d; do
			rmdir "$d" 2>/dev/null
		done
	fi
	# k8s_daemonset's v1 memory cgroup, named for the shell that made it
	for d in /sys/fs/cgroup/memory/latwhy-k8s-*; do
		[ -d "$d" ] && ! kill -0 "${d##*-}" 2>/dev/null && rmdir "$d" 2>/dev/null
	done
	find /var/log/containers -maxdepth 1 -lname '/var/log/pods/*' -delete 2>/dev/null
	rmdir /var/log/containers 2>/dev/null
	rm -rf /var/log/pods
}

# pods_cleanup: the processes moved back out (killed), every cgroup, log
# directory and link made, deepest first
pods_cleanup() {
	local i p
	cleanup
	for ((i = ${#PODS_MADE[@]} - 1; i >= 0; i--)); do
		p=${PODS_MADE[$i]}
		if [ -L "$p" ] || [ -f "$p" ]; then
			rm -f "$p"
		else
			rmdir "$p" 2>/dev/null || rm -rf "$p"
		fi
	done
	PODS_MADE=()
}

# pod_make NS NAME UID QOS: the pod's slice (systemd driver) in POD
pod_make() {
	local qos=$4 u=${3//-/_}
	if [ "$qos" = guaranteed ]; then
		POD=$CGROOT/kubepods.slice/kubepods-pod$u.slice
	else
		POD=$CGROOT/kubepods.slice/kubepods-$qos.slice/kubepods-$qos-pod$u.slice
	fi
	pods_mkdir "/var/log/pods/$1_$2_$3" && pods_mkdir "$POD"
}

# pod_ctr NS NAME UID CTR ID PID: a container's scope holding PID, its log
# directory and link (CTR "-": the sandbox, no log)
pod_ctr() {
	local d=$POD/cri-containerd-$5.scope
	pods_mkdir "$d" || return 1
	echo "$6" >"$d/cgroup.procs" || return 1
	[ "$4" = - ] && return 0
	pods_mkdir "/var/log/pods/$1_$2_$3/$4" && pods_mkdir /var/log/containers || return 1
	ln -s "/var/log/pods/$1_$2_$3/$4/0.log" "/var/log/containers/$2_$1_$4-$5.log" &&
		PODS_MADE+=("/var/log/containers/$2_$1_$4-$5.log")
}

# pause: a sandbox's process, named as the kubelet's is
start_pause() {
	cp /bin/sleep "$OUT/pause" || return 1
	"$OUT/pause" 600 &
	PIDS+=("$!")
	PAUSE=$!
}

# pods_bound: with two pods serving (web-1, web-2), a second serve bound to
# one pod of series of its own: the other's container summed under
# pod="other" and counted in latwhy_pods_over_bound, no series of its name.
pods_bound() {
	local bport bpid
	bport=$(free_port)
	./latwhy serve --pods --sample off --max-pods 1 --listen "127.0.0.1:$bport" \
		>"$OUT/bound.out" 2>"$OUT/bound.err" &
	bpid=$!
	PIDS+=("$bpid")
	if ! serve_scrape "$bport" "$OUT/bound.txt" "m.get('latwhy_pods_over_bound') == 1" 40; then
		fail pods_bound "over bound $(grep '^latwhy_pods_over_bound' "$OUT/bound.txt"): $(tail -1 "$OUT/bound.err")"
		stop_child "$bpid"
		return
	fi
	serve_check pods_bound "$OUT/bound.txt" '
req = [x for x in m if x.startswith("latwhy_requests_total{")]
pods = sorted(x.split("pod=\"")[1].split("\"")[0] for x in req)
assert pods in (["other", "web-1"], ["other", "web-2"]), pods
assert "latwhy_requests_total{namespace=\"\",pod=\"other\",container=\"\"}" in m, req
info = [x for x in m if x.startswith("latwhy_pod_info{")]
assert len(info) == 1, info
'
	stop_child "$bpid"
}

# serve --pods: a lab server in one pod, a hog on its CPU in another; the
# series by namespace/pod/container, slow requests by sched, no pid or id
# label; the hog's pod removed loses its series, a pod added is served
# within a second or two.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_pods_serve() {
	local mport lpid hog t0 t1 key u1=5c3f1e2a-9b7d-4c8e-a1f0-3d6b2e9c7a41
	local u2=8e1d7c3b-2a4f-4b6e-9d0c-1f5a7e3b9c62 u3=0a7b6c5d-4e3f-4a2b-8c1d-9e8f7a6b5c43
	local id1 id2 id3 id0 web
	CGROOT=$(pods_v2_root)
	[ -n "$CGROOT" ] || { skip pods_serve "no cgroup v2 file system mounted"; return; }
	pods_stale
	[ -e "$CGROOT/kubepods.slice" ] || [ -e /var/log/pods ] &&
		{ skip pods_serve "this node has pods of its own"; return; }
	id0=$(printf '%064x' 1) id1=$(printf '%064x' 2) id2=$(printf '%064x' 3) id3=$(printf '%064x' 4)
	pod_make shop web-1 $u1 burstable || { fail pods_serve "cannot lay out pods"; pods_cleanup; return; }
	start_pause
	pod_ctr shop web-1 $u1 - "$id0" "$PAUSE" || { fail pods_serve "cannot move the sandbox"; pods_cleanup; return; }
	start_server "$SRV_CPU" || { no_server pods_serve; pods_cleanup; return; }
	pod_ctr shop web-1 $u1 server "$id1" "$SPID" || { fail pods_serve "cannot move the server"; pods_cleanup; return; }
	pod_make batch hog-1 $u2 besteffort
	"$T/lw_hog" -C "$SRV_CPU" -d 600 >/dev/null 2>&1 &
	hog=$!
	PIDS+=("$hog")
	pod_ctr batch hog-1 $u2 hog "$id2" "$hog" || { fail pods_serve "cannot move the hog"; pods_cleanup; return; }
	start_client 300
	mport=$(free_port)
	./latwhy serve --pods --sample off --listen "127.0.0.1:$mport" >"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	key='namespace="shop",pod="web-1",container="server"'
	if ! wait_for "$OUT/serve.err" "serving http" "$lpid" 10 ||
		! serve_scrape "$mport" "$OUT/pods1.txt" "m.get('latwhy_slow_requests_total{$key,cause=\"sched\"}', 0) > 0" 40; then
		fail pods_serve "nothing traced: $(grep '^latwhy_requests' "$OUT/pods1.txt" | tr '\n' ' ') $(tail -2 "$OUT/serve.err")"
		pods_cleanup
		return
	fi
	grep -q "^latwhy: tracing 2 pods (2 containers)$" "$OUT/serve.err" ||
		fail pods_serve_header "$(grep tracing "$OUT/serve.err")"
	serve_check pods_serve "$OUT/pods1.txt" '
k = "namespace=\"shop\",pod=\"web-1\",container=\"server\""
assert m["latwhy_requests_total{%s}" % k] > 100, m["latwhy_requests_total{%s}" % k]
assert m["latwhy_slow_requests_total{%s,cause=\"sched\"}" % k] > 0
assert m["latwhy_pod_info{namespace=\"shop\",pod=\"web-1\",qos=\"Burstable\"}"] == 1
assert m["latwhy_pod_info{namespace=\"batch\",pod=\"hog-1\",qos=\"BestEffort\"}"] == 1
assert "latwhy_requests_total{namespace=\"batch\",pod=\"hog-1\",container=\"hog\"}" in m
assert m["latwhy_pods_over_bound"] == 0
# never a pid, a uid or a container id; no target series beside the pods
assert not [x for x in m if "target=" in x or "pid=" in x or "uid" in x or "0000000000" in x], \
    [x for x in m if "target=" in x or "pid=" in x or "uid" in x or "0000000000" in x][:3]
'
	pods_preempted "$mport" pod 'namespace="shop",pod="web-1",container="server"'
	pods_trace_preemptor "$hog"
	# the hog's pod deleted: its series leave once its slot's hold is over
	kill "$hog"
	wait "$hog" 2>/dev/null
	rmdir "$CGROOT/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${u2//-/_}.slice/cri-containerd-$id2.scope" \
		"$CGROOT/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${u2//-/_}.slice"
	rm -rf "/var/log/pods/batch_hog-1_$u2" "/var/log/containers/hog-1_batch_hog-$id2.log"
	t0=$(date +%s.%N)
	if serve_scrape "$mport" "$OUT/pods2.txt" "not [x for x in m if 'hog-1' in x]" 45; then
		t1=$(date +%s.%N)
		pass pods_removed
		echo "     the removed pod's series left after $(echo "$t1 - $t0" | bc) s"
	else
		fail pods_removed "$(grep hog-1 "$OUT/pods2.txt" | head -2 | tr '\n' ' ')"
	fi
	# a hog of the host's on the server's CPU: by="host" grows, "pod" not
	"$T/lw_hog" -C "$SRV_CPU" -d 600 >/dev/null 2>&1 &
	hog=$!
	PIDS+=("$hog")
	pods_preempted "$mport" host 'namespace="shop",pod="web-1",container="server"'
	[ -z "${LW_PODS_KEEP:-}" ] || cp "$OUT"/pre-host-*.txt "$LW_PODS_KEEP"
	kill "$hog"
	wait "$hog" 2>/dev/null
	# a pod added: served within a second or two (one refresh, one scrape)
	pod_make shop web-2 $u3 guaranteed
	web=$POD
	start_server "$SRV_CPU" || { no_server pods_added; pods_cleanup; return; }
	t0=$(date +%s.%N)
	pod_ctr shop web-2 $u3 server "$id3" "$SPID"
	if serve_scrape "$mport" "$OUT/pods3.txt" "'latwhy_requests_total{namespace=\"shop\",pod=\"web-2\",container=\"server\"}' in m" 5; then
		t1=$(date +%s.%N)
		pass pods_added
		echo "     the added pod was served after $(echo "$t1 - $t0" | bc) s"
	else
		fail pods_added "not served within 5 s: $(grep -c '^latwhy_requests_total' "$OUT/pods3.txt") series"
	fi
	grep -q 'latwhy_pod_info{namespace="shop",pod="web-2",qos="Guaranteed"} 1' "$OUT/pods3.txt" ||
		fail pods_added_qos "$(grep pod_info "$OUT/pods3.txt" | tr '\n' ' ')"
	pods_bound
	kill -TERM "$lpid"
	wait "$lpid"
	[ $? -eq 0 ] && pass pods_serve_stop || fail pods_serve_stop "serve did not stop on SIGTERM"
	pods_cgroup "$web"
	pods_cleanup
}

# run_delay PID: the ns PID's threads have waited on a run queue
# (/proc/PID/task/*/schedstat, field 2: the kernel's own count).
run_delay() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $2 } END { printf "%.0f\n", s }'
}

# pods_preempted PORT BY KEY: with a hog of BY ("pod": another pod's, "host":
# a process in no pod) on the server's CPU, latwhy_preempted_seconds_total
# of KEY grows by="BY", BY holds most of what grew and the other classes
# grow little. The truth is the kernel's: the server's threads' run_delay
# over the same 5 s. What grew in all is that run_delay to within 20%, plus
# what one serve tick (1 s: each scrape lags by less) moves it; BY holds two
# thirds of it and three times any other class (kworkers and the node's
# other processes run there too: kernel held 14% in one run). How much the
# hog takes is the scheduler's (0.39 to 1.0 s in 5 s seen here): it must
# take 0.1 s at least, or the test has shown nothing.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
pods_preempted() {
	local port=$1 by=$2 key=$3 t0 t1 d0 d1 msg
	if ! serve_scrape "$port" "$OUT/pre-$by-1.txt" \
		"m.get('latwhy_preempted_seconds_total{$key,by=\"$by\"}', 0) > 0.2" 30; then
		fail "pods_preempted_$by" "by=\"$by\" did not grow: $(grep preempted_seconds "$OUT/pre-$by-1.txt" | tr '\n' ' ')"
		return
	fi
	t0=$(date +%s.%N)
	d0=$(run_delay "$SPID")
	sleep 5
	d1=$(run_delay "$SPID")
	serve_scrape "$port" "$OUT/pre-$by-2.txt" "True" 5
	t1=$(date +%s.%N)
	if msg=$(pycheck "$OUT/pre-$by-2.txt" "$OUT/pre-$by-1.txt" 2>&1 <<EOF
import sys
def samples(path):
    return dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in open(path).read().splitlines()
                                        if l and not l.startswith("#")))
m, p = samples(sys.argv[1]), samples(sys.argv[2])
k, by, wall, rd = '$key', '$by', $t1 - $t0, ($d1 - $d0) / 1e9
n = 'latwhy_preempted_seconds_total{%s,by="%s"}'
g = dict((c, m[n % (k, c)] - p[n % (k, c)]) for c in ('own', 'pod', 'host', 'kernel'))
tot = sum(g.values())
print('     by="%s" grew %.3f s in %.2f s (the kernel: %.3f s waited); the others: %s' % (by, g[by],
      wall, rd, ', '.join('%s %.3f' % (c, g[c]) for c in g if c != by)))
assert rd >= 0.1, ('the hog took %.3f s from the server in %.2f s' % (rd, wall))
assert abs(tot - rd) <= 0.2 * rd + rd / wall, ('all classes %.3f s, the kernel %.3f s' % (tot, rd), g)
assert g[by] >= 2.0 / 3 * tot, g
assert g[by] >= 3 * max(g[c] for c in g if c != by), g
EOF
	); then
		pass "pods_preempted_$by"
		echo "$msg"
	else
		fail "pods_preempted_$by" "$(echo "$msg" | sed 's/^ *//' | tr '\n' ' ')"
	fi
}


# pods_trace_preemptor HOG: latwhy --pod shop/web-1 with the hog's pod on
# its CPU names the hog's pod in the evidence (JSON and text), and the
# sched finding's fix is Kubernetes' (the static CPU manager policy), not a
# taskset of the hog's container's process.
pods_trace_preemptor() {
	local hog=$1
	# the test's one client: a second one would be served by a second
	# worker thread of the server's, which then waits behind its sibling
	./latwhy --pod shop/web-1 -d 3s -q -j >"$OUT/trace.json" 2>"$OUT/trace.err"
	check pods_preemptor_json "
p = summ['evidence']['preempted_by'][0]
assert p['comm'] == 'lw_hog' and p['pid'] == $hog, p
assert p['pod'] == {'namespace': 'batch', 'name': 'hog-1', 'container': 'hog',
                    'qos': 'BestEffort', 'named': True}, p['pod']
w = summ['evidence']['slow_waits'][0]
assert w['pid'] == $hog and w['pod']['name'] == 'hog-1', w
f = [x for x in summ['findings'] if x['cause'] == 'sched'][0]
fix = '\n'.join(f['fix'])
assert 'cpu-manager-policy=static' in fix and 'pod batch/hog-1' in fix, fix
assert 'taskset -apc' not in fix, fix
assert any('cpu_manager_state' in v for v in f['verify']), f['verify']
"
	./latwhy --pod shop/web-1 -d 3s >"$OUT/trace.txt" 2>&1
	if grep -q "ran instead of it: lw_hog (pod batch/hog-1, container hog; pid $hog)" "$OUT/trace.txt"; then
		pass pods_preemptor_text
	else
		fail pods_preemptor_text "$(grep -m2 'ran instead' "$OUT/trace.txt" | tr '\n' ' ')"
	fi
	# a capture carries the names: report, as nobody, needs no /proc of
	# the node (LW_PODS_KEEP=DIR keeps it, tests/captures/pods.lwy's origin,
	# with the scrapes and the text trace, for docs/kubernetes.md)
	local pub=$OUT/pub
	mkdir -p "$pub" && chmod 711 "$OUT" && chmod 755 "$pub" && cp latwhy "$pub/"
	./latwhy record --pod shop/web-1 -d 3s -o "$pub/pods.lwy" >/dev/null 2>"$OUT/record.err"
	chmod 644 "$pub/pods.lwy"
	as_nobody "$pub/latwhy" report --json "$pub/pods.lwy" >"$OUT/trace.json" 2>"$OUT/report.err"
	check pods_preemptor_capture "
p = [x for x in summ['evidence']['preempted_by'] if x['pid'] == $hog][0]
assert p['pod'] and p['pod']['namespace'] == 'batch' and p['pod']['name'] == 'hog-1', p
f = [x for x in summ['findings'] if x['cause'] == 'sched'][0]
assert 'cpu-manager-policy=static' in '\n'.join(f['fix']), f['fix']
"
	[ -z "${LW_PODS_KEEP:-}" ] || cp "$pub/pods.lwy" "$OUT/trace.txt" "$OUT"/pre-pod-*.txt "$LW_PODS_KEEP"
}

# --cgroup of a pod's slice: its containers' processes, in the cgroups
# below it, are the target's (decided in the kernel by ancestry)
pods_cgroup() {
	local rel=${1#"$CGROOT"}
	start_client 10
	./latwhy --cgroup "$rel" -d 3s -q -j >"$OUT/trace.json" 2>"$OUT/trace.err"
	check pods_cgroup_slice "
assert summ['requests'] > 100, summ['requests']
"
	grep -q "^latwhy: tracing cgroup $rel (1 process)" "$OUT/trace.err" ||
		fail pods_cgroup_procs "$(head -1 "$OUT/trace.err")"
}
