# shellcheck shell=bash
# 85-k8s.sh - deploy/kubernetes/ on this node, without a cluster: the
# image's filesystem built from the Containerfile and the project's .deb
# (tests/k8s/image.sh), the DaemonSet's container run from it with exactly
# its capabilities, mounts and read-only root (tests/k8s/run_pod.sh, in
# new cgroup and mount namespaces, from the cgroup of its own pod) against
# pods laid out as the kubelet lays them out (80-pods.sh's helpers); its
# /metrics and /healthz scraped, a real Prometheus scraping it and every
# query of the Grafana dashboard run there.
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh
# shellcheck source=tests/integration/80-pods.sh
declare -F pod_make >/dev/null || . tests/integration/80-pods.sh
# shellcheck source=tests/integration/60-serve.sh
declare -F serve_start_prom >/dev/null || . tests/integration/60-serve.sh

K8S_MEMCG= # the v1 memory cgroup the pod's container is measured in

k8s_cleanup() {
	pods_cleanup
	[ -n "$K8S_MEMCG" ] && rmdir "$K8S_MEMCG" 2>/dev/null
	K8S_MEMCG=
}

# k8s_http PORT PATH: "STATUS BODY" of a GET
k8s_http() {
	python3 - "$@" <<'PY'
import sys, urllib.error, urllib.request
try:
    r = urllib.request.urlopen("http://127.0.0.1:%s%s" % tuple(sys.argv[1:3]), timeout=5)
    print(r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
except OSError as e:
    print("000", e)
PY
}

# The image, the DaemonSet's container from it, the pods it traces; its
# scrape, its health, its privileges as the kernel holds them, its cost,
# and the dashboard's queries in Prometheus.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_k8s_daemonset() {
	local c1 t1 deb rootfs mport lpid kpid hog key u1 u2 u3 id0 id1 id2 id3 lw_ctr t0 caps st mem cpu msg PROM=
	u1=5c3f1e2a-9b7d-4c8e-a1f0-3d6b2e9c7a41 u2=8e1d7c3b-2a4f-4b6e-9d0c-1f5a7e3b9c62
	u3=3f2e1d0c-9b8a-4765-8432-10fedcba9876
	CGROOT=$(pods_v2_root)
	[ -n "$CGROOT" ] || { skip k8s_daemonset "no cgroup v2 file system mounted"; return; }
	pods_stale
	[ -e "$CGROOT/kubepods.slice" ] || [ -e /var/log/pods ] &&
		{ skip k8s_daemonset "this node has pods of its own"; return; }
	setpriv --help 2>/dev/null | grep -q -- --ambient-caps ||
		{ skip k8s_daemonset "setpriv cannot set ambient capabilities"; return; }
	# the image: the package make deb builds, the Containerfile's lines
	deb=$(find build/deb -maxdepth 1 -name 'latwhy_*.deb' 2>/dev/null | head -1)
	if [ -z "$deb" ]; then
		make -s deb LINTIAN=0 >"$OUT/deb.log" 2>&1 || { fail k8s_image "make deb: $(tail -1 "$OUT/deb.log")"; return; }
		deb=$(find build/deb -maxdepth 1 -name 'latwhy_*.deb' | head -1)
	fi
	if ! rootfs=$(tests/k8s/image.sh build/deb 2>"$OUT/image.err"); then
		skip k8s_daemonset "the image's filesystem could not be built: $(tail -1 "$OUT/image.err")"
		return
	fi
	# shellcheck disable=SC2016 # dpkg-query's own fields
	st=$(chroot "$rootfs" dpkg-query -W -f '${Version} ${Status}' latwhy 2>&1)
	[ "$st" = "$(dpkg-deb -f "$deb" Version) install ok installed" ] &&
		pass k8s_image || fail k8s_image "latwhy in the image: $st"
	echo "     image $rootfs: $(. "$rootfs/etc/os-release" && echo "$PRETTY_NAME"), latwhy $st, $(du -sm "$rootfs" | cut -f1) MB"
	eval "$(python3 tests/k8s/pod_spec.py deploy/kubernetes/daemonset.yaml)" ||
		{ fail k8s_daemonset "cannot read the DaemonSet"; return; }
	# the pods: a lab server in shop/web-1 with its sandbox, a hog on its
	# CPU in batch/hog-1, and latwhy's own, as the DaemonSet makes it
	id0=$(printf '%064x' 11) id1=$(printf '%064x' 12) id2=$(printf '%064x' 13) id3=$(printf '%064x' 14)
	pod_make shop web-1 $u1 burstable || { fail k8s_daemonset "cannot lay out pods"; k8s_cleanup; return; }
	start_pause
	pod_ctr shop web-1 $u1 - "$id0" "$PAUSE" || { fail k8s_daemonset "cannot move the sandbox"; k8s_cleanup; return; }
	start_server "$SRV_CPU" || { no_server k8s_daemonset; k8s_cleanup; return; }
	pod_ctr shop web-1 $u1 server "$id1" "$SPID" || { fail k8s_daemonset "cannot move the server"; k8s_cleanup; return; }
	pod_make batch hog-1 $u2 besteffort
	"$T/lw_hog" -C "$SRV_CPU" -d 600 >/dev/null 2>&1 &
	hog=$!
	PIDS+=("$hog")
	pod_ctr batch hog-1 $u2 hog "$id2" "$hog" || { fail k8s_daemonset "cannot move the hog"; k8s_cleanup; return; }
	start_client 120
	pod_make latwhy latwhy-n7x2q $u3 burstable
	lw_ctr=$POD/cri-containerd-$id3.scope
	pods_mkdir "$lw_ctr" && pods_mkdir /var/log/pods/latwhy_latwhy-n7x2q_$u3/latwhy &&
		ln -s "/var/log/pods/latwhy_latwhy-n7x2q_$u3/latwhy/0.log" "/var/log/containers/latwhy-n7x2q_latwhy_latwhy-$id3.log" &&
		PODS_MADE+=("/var/log/containers/latwhy-n7x2q_latwhy_latwhy-$id3.log")
	# its memory, BPF maps included, in the v1 memory controller where
	# there is one (this VM's v2 has no controllers)
	if [ -d /sys/fs/cgroup/memory ]; then
		K8S_MEMCG=/sys/fs/cgroup/memory/latwhy-k8s-$$
		mkdir -p "$K8S_MEMCG"
	fi
	mport=$(free_port)
	# Prometheus first, scraping every second: its samples must hold the
	# first attached stretch (3 s of every 90), which the dashboard's
	# rates per attached second divide by
	if command -v prometheus >/dev/null; then
		serve_start_prom "$mport" || fail k8s_prometheus "did not start: $(tail -1 "$OUT/prom.log")"
	fi
	# into its container's cgroup, then namespaces rooted there
	bash -c 'echo $$ >"$1/cgroup.procs" && { [ -z "$2" ] || echo $$ >"$2/cgroup.procs"; } &&
		exec unshare --cgroup --mount --fork -- tests/k8s/run_pod.sh "$3" "$4"' \
		k8s "$lw_ctr" "$K8S_MEMCG" "$rootfs" "$mport" >"$OUT/k8s.out" 2>"$OUT/k8s.err" &
	kpid=$!
	PIDS+=("$kpid")
	t0=$(date +%s.%N)
	key='namespace="shop",pod="web-1",container="server"'
	if ! wait_for "$OUT/k8s.err" "serving http" "$kpid" 30 ||
		! serve_scrape "$mport" "$OUT/k8s1.txt" "m.get('latwhy_slow_requests_total{$key,cause=\"sched\"}', 0) > 0" 100; then
		kill -0 "$kpid" 2>/dev/null && st="running" || { wait "$kpid"; st="exited $?"; }
		fail k8s_daemonset "nothing traced ($st): $(grep '^latwhy_requests' "$OUT/k8s1.txt" 2>/dev/null | tr '\n' ' ') $(tail -3 "$OUT/k8s.err" | tr '\n' ' ')"
		k8s_cleanup
		return
	fi
	t1=$(date +%s.%N)
	c1=$(awk '$1 == "latwhy_process_cpu_seconds_total" {print $2}' "$OUT/k8s1.txt")
	lpid=$(pgrep -f -n "^/usr/bin/latwhy serve --pods --listen 0.0.0.0:$mport")
	sed 's/^/     /' "$OUT/k8s.err"
	serve_check k8s_series "$OUT/k8s1.txt" '
k = "namespace=\"shop\",pod=\"web-1\",container=\"server\""
assert m["latwhy_requests_total{%s}" % k] > 100, m["latwhy_requests_total{%s}" % k]
assert m["latwhy_slow_requests_total{%s,cause=\"sched\"}" % k] > 0
assert m["latwhy_pod_info{namespace=\"shop\",pod=\"web-1\",qos=\"Burstable\"}"] == 1
assert m["latwhy_pod_info{namespace=\"batch\",pod=\"hog-1\",qos=\"BestEffort\"}"] == 1
assert not [x for x in m if "target=" in x or "pid=" in x or "0000000000" in x]
'
	grep -E '^latwhy_(requests|slow_requests)_total\{namespace="shop"' "$OUT/k8s1.txt" | grep -v ' 0$' | sed 's/^/     /'
	# what the kernel holds of it: uid 0, the two capabilities bounding,
	# CAP_PERFMON alone once attached, no_new_privs; its namespaces and mounts
	caps=$(caps_of "$lpid")
	[ "$caps" = "0000000000000000 0000004000000000 0000004000000000 000000c000000000 0000000000000000 1" ] &&
		[ "$(awk '/^Uid:/ {print $2}' "/proc/$lpid/status")" = "$K8S_UID" ] &&
		pass k8s_caps || fail k8s_caps "CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs: $caps"
	echo "     latwhy pid $lpid uid $(awk '/^Uid:/ {print $2}' "/proc/$lpid/status") CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs: $caps"
	if msg=$(pycheck "$lpid" 2>&1 <<'PY'
import os, sys
pid = sys.argv[1]
mi = {}
for l in open("/proc/%s/mountinfo" % pid):
    f = l.split()
    mi[f[4]] = (f[5].split(","), f[f.index("-") + 1])
ro = lambda p: "ro" in mi[p][0]
assert ro("/"), "the root is writable: %s" % (mi["/"],)
for p in ("/sys", "/sys/fs/cgroup/unified" if "/sys/fs/cgroup/unified" in mi else "/sys/fs/cgroup",
          "/var/log/pods", "/var/log/containers", "/proc/sys"):
    assert ro(p), "%s is writable: %s" % (p, mi.get(p))
assert not ro("/var/lib/latwhy") and mi["/var/lib/latwhy"][1] == "tmpfs", mi.get("/var/lib/latwhy")
assert [p for p in mi if p.startswith("/sys/") and not ro(p)] == [], "writable below /sys"
# /proc/PID/cgroup reads relative to the reader's namespace: compare the namespaces
assert os.readlink("/proc/%s/ns/cgroup" % pid) != os.readlink("/proc/self/ns/cgroup"), "no cgroup namespace of its own"
assert os.readlink("/proc/%s/ns/pid" % pid) == os.readlink("/proc/self/ns/pid"), "hostPID: the node's PID namespace"
assert os.readlink("/proc/%s/ns/mnt" % pid) != os.readlink("/proc/self/ns/mnt"), "no mount namespace of its own"
assert os.readlink("/proc/%s/root" % pid) != "/", "not in the image's root"
PY
	); then pass k8s_mounts; else fail k8s_mounts "$(tail -1 <<<"$msg")"; fi
	# /healthz: ok attached, and ok once the duty cycle has detached it
	st=$(k8s_http "$mport" "$K8S_PROBE")
	[ "$st" = "200 ok" ] && pass k8s_healthz_attached || fail k8s_healthz_attached "$st"
	if serve_scrape "$mport" "$OUT/k8s2.txt" "m.get('latwhy_sampling_active') == 0" 15; then
		st=$(k8s_http "$mport" "$K8S_PROBE")
		[ "$st" = "200 ok" ] && pass k8s_healthz_detached || fail k8s_healthz_detached "$st"
	else
		fail k8s_healthz_detached "not detached within 15 s (the default --sample 3s/90s)"
	fi
	# its cost against the manifest's limits: CPU over the run so far,
	# its container cgroup's memory peak (BPF maps are charged there)
	# (the first scrape's CPU is mostly loading and verifying the programs;
	# the 90 s from it are one whole duty cycle, the next attach in it)
	while [ "$(echo "$(date +%s.%N) - $t1 < 90" | bc)" = 1 ]; do sleep 1; done
	serve_scrape "$mport" "$OUT/k8s3.txt" "True" 5
	cpu=$(awk -v c1="$c1" -v t1="$t1" -v now="$(date +%s.%N)" '$1 == "latwhy_process_cpu_seconds_total" {printf "%.2f", 1000 * ($2 - c1) / (now - t1)}' "$OUT/k8s3.txt")
	mem=$(cat "$K8S_MEMCG/memory.max_usage_in_bytes" 2>/dev/null || echo 0)
	echo "     cost: ${c1} s of CPU to the first scrape (loading, verifying, attaching), then $cpu millicores over $(echo "$(date +%s.%N) - $t1" | bc | cut -d. -f1) s (one duty cycle: detached, then attached again); RSS $(awk '$1 == "latwhy_process_resident_memory_bytes" {printf "%.1f MiB", $2 / 1048576}' "$OUT/k8s3.txt"); its memory cgroup's peak $((mem / 1048576)) MiB"
	[ "$mem" -gt 0 ] && [ "$mem" -lt "$K8S_MEM_LIMIT" ] && [ "$(echo "$cpu < $K8S_CPU_LIMIT" | bc)" = 1 ] &&
		pass k8s_within_limits || fail k8s_within_limits "cpu ${cpu}m of ${K8S_CPU_LIMIT}m, memory $mem of $K8S_MEM_LIMIT (0: no v1 memory cgroup)"
	# the dashboard now, with a whole cycle in Prometheus: the first
	# attached stretch is cut short by the programs' loading (the cycle's
	# phase starts with serve), and may fall between two scrapes, where a
	# rate per attached second is 0/0; the second, 90 s on, is whole
	if [ -n "${PROM:-}" ]; then
		k8s_dashboard "$mport" "$OUT/k8s2.txt"
	else
		skip k8s_dashboard "no prometheus (tools/deps.sh installs it)"
	fi
	kill -TERM "$lpid"
	for _ in $(seq 50); do kill -0 "$lpid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$lpid" 2>/dev/null && fail k8s_stop "not stopped 5 s after SIGTERM" || pass k8s_stop
	k8s_cleanup
}

# k8s_dashboard PORT SCRAPE: every query of deploy/kubernetes/dashboard.json
# in the real Prometheus (PROM) scraping serve, its variables at "all":
# each returns data, or says SKIP with why for a family serve does not
# export here (the scrape SCRAPE shows it absent).
k8s_dashboard() {
	local out rc
	out=$(python3 - "$PROM" "$2" deploy/kubernetes/dashboard.json <<'PY'
import json, math, os, re, sys, time, urllib.parse, urllib.request
prom, scrape, path = sys.argv[1:4]
have = {l.split("{")[0].split(" ")[0] for l in open(scrape) if l and not l.startswith("#")}
cpufreq = os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq")
# why a family may be absent from this node's scrape
ABSENT = {
    "latwhy_preempted_seconds_total": "not exported by this build: who took the CPU is issue 31's, on another branch",
    "latwhy_cpufreq_governor_info": None if cpufreq else "no cpufreq on this node: serve exports no governor",
    "latwhy_cpu_frequency_hertz": None if cpufreq else "no cpufreq on this node: serve exports no clock",
    "latwhy_cpu_frequency_max_hertz": None if cpufreq else "no cpufreq on this node: serve exports no clock",
}
def query(q):
    u = "http://127.0.0.1:%s/api/v1/query?query=%s" % (prom, urllib.parse.quote(q))
    return json.load(urllib.request.urlopen(u, timeout=5))["data"]["result"]
fails = 0
d = json.load(open(path))
for p in d["panels"]:
    for t in p["targets"]:
        q = re.sub(r"\$(instance|namespace|pod)\b", ".*", t["expr"])
        fams = {re.sub(r"_(bucket|count|sum)$", "", f) for f in re.findall(r"\b(latwhy_[a-z_]+)", q)}
        gone = [f for f in sorted(fams) if f not in have and not any(h.startswith(f) for h in have)]
        why = [ABSENT.get(f) for f in gone]
        end, r = time.time() + 30, []
        while time.time() < end and not gone:
            try:
                r = [x for x in query(q) if not math.isnan(float(x["value"][1]))]
            except (OSError, ValueError, KeyError):
                r = []
            if r:
                break
            time.sleep(1)
        name = "%s [%s]" % (p["title"], t.get("legendFormat", t["refId"]))
        if r:
            r.sort(key=lambda x: -float(x["value"][1]))
            vals = ", ".join("%s %.4g" % ("/".join(x["metric"].get(k, "") for k in ("namespace", "pod", "cause", "by", "mode") if x["metric"].get(k)) or "node", float(x["value"][1])) for x in r[:4])
            print("PASS k8s_dashboard: %s: %d series (%s%s)" % (name, len(r), vals, ", ..." if len(r) > 4 else ""))
        elif gone and all(why):
            print("SKIP k8s_dashboard: %s: %s" % (name, "; ".join(why)))
        else:
            fails += 1
            print("FAIL k8s_dashboard: %s: no data%s" % (name, " (%s absent from the scrape)" % ", ".join(gone) if gone else ""))
sys.exit(1 if fails else 0)
PY
)
	rc=$?
	# one line each, counted as run.sh counts them
	while IFS= read -r l; do
		case $l in
		PASS\ *) echo "$l"; PASSES=$((PASSES + 1)) ;;
		SKIP\ *) echo "$l"; SKIPS=$((SKIPS + 1)) ;;
		FAIL\ *) echo "$l"; FAILS=$((FAILS + 1)) ;;
		*) echo "$l" ;;
		esac
	done <<<"$out"
	return $rc
}

# /healthz with a real tracer that stops: serve -p a process that exits
# answers 503 "tracer stopped: every target exited" while /metrics goes on.
# shellcheck disable=SC2015
test_k8s_healthz_exit() {
	local mport lpid sp st
	mport=$(free_port)
	sleep 600 &
	sp=$!
	PIDS+=("$sp")
	./latwhy serve -p "$sp" --sample off --listen "127.0.0.1:$mport" >"$OUT/hz.out" 2>"$OUT/hz.err" &
	lpid=$!
	PIDS+=("$lpid")
	wait_for "$OUT/hz.err" "^latwhy: tracing pid" "$lpid" 30 || { fail k8s_healthz_exit "serve did not start: $(tail -1 "$OUT/hz.err")"; cleanup; return; }
	st=$(k8s_http "$mport" /healthz)
	[ "$st" = "200 ok" ] || { fail k8s_healthz_exit "while tracing: $st"; cleanup; return; }
	kill "$sp"
	wait_for "$OUT/hz.err" "every target exited" "$lpid" 10
	st=$(k8s_http "$mport" /healthz)
	[ "$st" = "503 tracer stopped: every target exited" ] && [ "$(k8s_http "$mport" /metrics | head -c3)" = 200 ] &&
		pass k8s_healthz_exit || fail k8s_healthz_exit "after the target exited: $st; $(tail -1 "$OUT/hz.err")"
	cleanup
}
