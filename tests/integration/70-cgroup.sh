# shellcheck shell=bash
# 70-cgroup.sh - cgroup: --cgroup targets, trace, record and serve
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

# cgroup v2's mount point, wherever it is (this VM: hybrid, v1 controllers
# and v2 at /sys/fs/cgroup/unified): the mount of the hierarchy's root.
cgroup2_root() {
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
	     $(i + 1) == "cgroup2" && $4 == "/" { print $5; exit }' /proc/self/mountinfo
}

# cgroup_make NAME: a cgroup of the test's below the v2 root (removed by
# cleanup once empty); its path in CG.
cgroup_make() {
	CG=$CGROOT/$1
	mkdir "$CG" || return 1
	CGDIRS+=("$CG")
}

# latwhy --cgroup /NAME: the lab server moved into a cgroup of the test's;
# every request it answers is counted, as the -p tests count them (against
# the client's replies in latwhy's window); then serve --cgroup through the server's restart into the cgroup
# made again (a new id, as systemd does): the counters go on, one label.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_cgroup() {
	local name cpid lpid mport r1 rc CG
	CGROOT=$(cgroup2_root)
	[ -n "$CGROOT" ] || { skip cgroup "no cgroup v2 file system mounted"; return; }
	name=latwhy-it-$$
	cgroup_make "$name" || { fail cgroup "cannot make $CGROOT/$name"; return; }
	start_server "$SRV_CPU" || { no_server cgroup; return; }
	echo "$SPID" >"$CG/cgroup.procs"
	start_client 9 -t "$OUT/lat.t"
	cpid=${PIDS[-1]}
	sleep 0.5
	# every request a record (--slow 1us): latwhy's count against the
	# client's replies in the same window, as with -p (test_gateway)
	./latwhy --cgroup "/$name" -d 3s -q -j --slow 1us >"$OUT/trace.json" 2>"$OUT/trace.err"
	rc=$?
	wait_for "$OUT/client.out" 'p50_us=' "$cpid" # its replies written
	start_client 30
	cpid=${PIDS[-1]}
	# a capture of the cgroup: the report names it, as the live trace did
	if ./latwhy record --cgroup "/$name" -o "$OUT/cg.lwy" -d 1s 2>"$OUT/record.err" &&
		./latwhy report "$OUT/cg.lwy" 2>&1 | grep -q "^== latwhy: cgroup /$name, [0-9.]* s traced ==$"; then
		pass cgroup_record
	else
		fail cgroup_record "$(tail -1 "$OUT/record.err")"
	fi
	grep -q "^latwhy: tracing cgroup /$name (1 process), slow = " "$OUT/trace.err" ||
		fail cgroup_header "$(head -1 "$OUT/trace.err")"
	[ $rc -eq 0 ] && check cgroup "
assert summ['requests'] > 0, summ['requests']
assert summ['dropped'] == 0, summ['dropped']
lw, cl = window_counts('$OUT/lat.t')
assert abs(lw - cl) <= 0.002 * cl + 3, 'latwhy: %d requests ended in its window, the client: %d replies' % (lw, cl)
assert summ['pid'] == $SPID, summ['pid']
" || fail cgroup "latwhy exited $rc: $(tail -1 "$OUT/trace.err")"

	mport=$(free_port)
	: >"$OUT/serve.err" # its last run's lines would match at once
	./latwhy serve --cgroup "/$name" --sample off --listen "127.0.0.1:$mport" >"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	local req="latwhy_requests_total{target=\"/$name\"}"
	if ! wait_for "$OUT/serve.err" "serving http" "$lpid" 10 ||
		! serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$req', 0) > 0" 30; then
		fail cgroup_serve "nothing traced: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	grep -q "^latwhy: tracing cgroup /$name (1 process)$" "$OUT/serve.err" ||
		fail cgroup_serve "$(cat "$OUT/serve.err")"
	r1=$(awk -v k="$req" '$1 == k {print $2}' "$OUT/metrics1.txt")
	stop_child "$cpid"
	stop_child "$SPID"
	rmdir "$CG" # made again below: a new cgroup, a new id
	if ! wait_for "$OUT/serve.err" "cgroup /$name is gone: waiting for it to come back" "$lpid" 10; then
		fail cgroup_restart "no word of the removal: $(tail -1 "$OUT/serve.err")"
		cleanup
		return
	fi
	mkdir "$CG"
	start_server "$SRV_CPU" || { no_server cgroup_restart; return; }
	echo "$SPID" >"$CG/cgroup.procs"
	start_client 30
	wait_for "$OUT/serve.err" "cgroup /$name is back: traced again" "$lpid" 10 ||
		fail cgroup_restart "not followed: $(tail -1 "$OUT/serve.err")"
	if ! serve_scrape "$mport" "$OUT/metrics2.txt" "m.get('$req', 0) > $r1 + 100" 30; then
		fail cgroup_restart "the counters did not go on: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	serve_check cgroup_restart "$OUT/metrics2.txt" "$OUT/metrics1.txt" '
for k, v in p.items():
    if k.split("{")[0].endswith(("_total", "_bucket", "_count", "_sum")):
        assert k in m, "gone after the restart: " + k
        assert m[k] >= v, "%s went back: %s -> %s" % (k, v, m[k])
assert not [k for k in m if "target=" in k and "target=\"/'"$name"'\"" not in k]
'
	kill -TERM "$lpid"
	wait "$lpid"
	rc=$?
	[ $rc -eq 0 ] && pass cgroup_serve_stop || fail cgroup_serve_stop "latwhy serve exited $rc on SIGTERM"
	cgroup_two "$name"
	cleanup
}

# serve --cgroup /NAME --cgroup /NAME-b: a server in each, a series each.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
cgroup_two() {
	local a=$1 b=$1-b mport lpid CG
	CG=$CGROOT/$a
	cgroup_make "$b" || { fail cgroup_two "cannot make $CGROOT/$b"; return; }
	start_server "$SRV_CPU" || { no_server cgroup_two; return; }
	echo "$SPID" >"$CG/cgroup.procs"
	start_client 30
	mport=$(free_port)
	./latwhy serve --cgroup "/$a" --cgroup "/$b" --sample off --listen "127.0.0.1:$mport" \
		>"$OUT/serve2.out" 2>"$OUT/serve2.err" &
	lpid=$!
	PIDS+=("$lpid")
	wait_for "$OUT/serve2.err" "serving http" "$lpid" 10 || { fail cgroup_two "$(tail -1 "$OUT/serve2.err")"; return; }
	start_server "$SRV_CPU" || { no_server cgroup_two; return; }
	echo "$SPID" >"$CGROOT/$b/cgroup.procs"
	start_client 30
	if ! serve_scrape "$mport" "$OUT/metrics3.txt" \
		"m.get('latwhy_requests_total{target=\"/$a\"}', 0) > 0 and m.get('latwhy_requests_total{target=\"/$b\"}', 0) > 0" 30; then
		fail cgroup_two "not two series: $(grep '^latwhy_requests_total' "$OUT/metrics3.txt" | tr '\n' ' ') $(tail -1 "$OUT/serve2.err")"
		return
	fi
	serve_check cgroup_two "$OUT/metrics3.txt" '
labels = set(k.split("target=\"")[1].split("\"")[0] for k in m if "target=" in k)
assert labels == {"/'"$a"'", "/'"$b"'"}, labels
for t in labels:
    k = "latwhy_request_duration_seconds_bucket{target=\"%s\",le=\"+Inf\"}" % t
    assert m[k] == m["latwhy_request_duration_seconds_count{target=\"%s\"}" % t], t
    assert m["latwhy_requests_total{target=\"%s\"}" % t] == m[k], t
    assert all("latwhy_slow_requests_total{target=\"%s\",cause=\"%s\"}" % (t, c) in m
               for c in ("frequency", "irq", "thp", "sched", "idle", "none")), t
for fam in set(l.split()[2] for l in text.splitlines() if l.startswith("# TYPE")):
    assert text.count("# TYPE %s " % fam) == 1, fam
'
}
