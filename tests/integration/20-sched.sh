# shellcheck shell=bash
# 20-sched.sh - sched: a CPU hog on the server's CPU, and latwhy's own placement off it
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

# A CPU hog on the server's CPU: sched time, naming the hog. Default p99 mode.
test_sched() {
	start_server "$SRV_CPU" || { no_server sched; return; }
	# both past latwhy's start and its 6 s, however slow the host; cleanup
	# stops them
	start_client 20
	"$T/lw_hog" -C "$SRV_CPU" -d 20 &
	PIDS+=("$!")
	sleep 0.5
	./latwhy -p "$SPID" -d 6s -j >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	check sched '
assert summ["slow_requests"] > 0, "no slow requests"
assert summ["dominant"] == "sched", "dominant is %s" % summ["dominant"]
assert summ["causes"]["sched"]["share"] > 0.3, summ["causes"]
# other load on a shared machine may also preempt; the hog must be named
top = [p["comm"] for p in summ["evidence"]["preempted_by"][:3]]
assert "lw_hog" in top, "lw_hog not among the top preemptors: %s" % top
right = sum(1 for r in reqs if r["cause"] == "sched")
assert right >= 0.9 * len(reqs), "only %d of %d requests blamed on sched" % (right, len(reqs))
# each request names the task it waited for longest
named = sum(1 for r in reqs if r.get("preempted_by", {}).get("comm") == "lw_hog")
assert named >= 0.5 * len(reqs), "only %d of %d requests name lw_hog" % (named, len(reqs))
# and the slow requests alone name it first
w = summ["evidence"]["slow_waits"]
assert w and w[0]["comm"] == "lw_hog" and w[0]["requests"] >= 0.5 * len(reqs), w
# the hog keeps the CPU busy: none of its waits is an idle CPU waking
assert summ["causes"]["idle"]["share"] < 0.1, summ["causes"]
'
	cleanup
}

# latwhy keeps off its target's CPUs: with the server pinned to one, latwhy's
# own affinity excludes it while it traces, and no request waited for it.
# With a target that may use every CPU, latwhy shares them at nice 19 and
# says so.
test_self_place() {
	local lw aff nice
	start_server "$SRV_CPU" || { no_server self_place; return; }
	start_client 20 # past both traces; cleanup stops it
	sleep 0.5
	./latwhy -p "$SPID" -d 3s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err" &
	lw=$!
	sleep 1.5
	aff=$(awk '/^Cpus_allowed_list:/ {print $2}' "/proc/$lw/status")
	wait "$lw"
	check self_place "
aff = set()
for part in '$aff'.split(','):
    lo, _, hi = part.partition('-')
    aff |= set(range(int(lo), int(hi or lo) + 1))
assert aff and $SRV_CPU not in aff, 'latwhy ran on CPUs %s, the target on $SRV_CPU' % sorted(aff)
assert len(reqs) > 1000, 'only %d requests' % len(reqs)
lw = $lw
waited = [r for r in reqs if r.get('preempted_by', {}).get('pid') == lw]
assert not waited, '%d requests waited for latwhy: %s' % (len(waited), waited[:2])
ev = summ['evidence']
assert not [p for p in ev['preempted_by'] if p['tracer'] or p['tgid'] == lw], ev['preempted_by']
assert not [w for w in ev['slow_waits'] if w['tracer'] or w['pid'] == lw], ev['slow_waits']
"
	# the target may run anywhere: latwhy shares its CPUs, reniced
	taskset -apc "0-$((NCPU - 1))" "$SPID" >/dev/null
	./latwhy -p "$SPID" -d 3s -q >"$OUT/shared.txt" 2>"$OUT/shared.err" &
	lw=$!
	# it loads and attaches at its own priority, then yields
	wait_for "$OUT/shared.err" '^latwhy: tracing pid ' "$lw" 10
	sleep 0.5
	nice=$(awk '{sub(/.*\) /, ""); print $17}' "/proc/$lw/stat")
	wait "$lw"
	if [ "$nice" != 19 ] ||
		! grep -qx "latwhy: no CPU outside the target's (0-$((NCPU - 1))): tracing from them at nice 19" "$OUT/shared.err"; then
		fail self_place_shared "nice '$nice': $(cat "$OUT/shared.err")"
	else
		pass self_place_shared
	fi
	cleanup
}
