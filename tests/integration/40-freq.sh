# shellcheck shell=bash
# 40-freq.sh - freq: a lowered CPU clock, fed to latwhy with BPF_PROG_TEST_RUN
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

# cpu_frequency events injected into the loaded program on the server's CPU:
# this test's latwhy's own lw_cpu_freq (held_prog: the program ids in its
# fdinfo), not the newest of the name, which another latwhy loaded at the
# time would be (CI once fed one, and this trace had no clock data at all).
test_freq() {
	local lw id err rc
	start_server "$SRV_CPU" || { no_server freq; return; }
	start_client 20 # past latwhy's start and its 5 s; cleanup stops it
	: >"$OUT/latwhy.err" # a last run's banner would match at once
	./latwhy -p "$SPID" -d 5s -j --slow 1us --ref-mhz 2000 >"$OUT/trace.json" 2>"$OUT/latwhy.err" &
	lw=$!
	# attached (~1.2 s here), and half a second of requests before any clock
	if ! wait_for "$OUT/latwhy.err" '^latwhy: tracing pid' "$lw" 20 || ! id=$(held_prog "$lw" lw_cpu_freq); then
		fail freq "latwhy holds no lw_cpu_freq program: $(tail -1 "$OUT/latwhy.err")"
		wait "$lw"
		cleanup
		return
	fi
	sleep 0.5
	# 1000 MHz of a 2000 MHz reference: half of each run is lost.
	"$T/lw_freqinject" -I "$id" "$SRV_CPU" 1000000 >"$OUT/inject.out" 2>&1
	sleep 1.5
	# back up, by program id and twice (-I, -r: make bench's way of
	# feeding each latwhy and its floor)
	"$T/lw_freqinject" -I "$id" -r 2 "$SRV_CPU" 2000000 >>"$OUT/inject.out" 2>&1
	err=$("$T/lw_freqinject" -I 2147483647 "$SRV_CPU" 2000000 2>&1)
	rc=$?
	wait "$lw"
	if [ $rc -ne 1 ] || [ "$err" != "lw_freqinject: no program with id 2147483647" ]; then
		fail freq "lw_freqinject -I of no program: exit $rc, '$err'"
		cleanup
		return
	fi
	local t1 t2
	t1=$(sed -n '1s/.*ts_ns=\([0-9]*\).*/\1/p' "$OUT/inject.out")
	t2=$(sed -n '2s/.*ts_ns=\([0-9]*\).*/\1/p' "$OUT/inject.out")
	if [ -z "$t1" ] || [ -z "$t2" ] || [ "$(grep -c '^injected ' "$OUT/inject.out")" != 3 ]; then
		fail freq "injection failed: $(cat "$OUT/inject.out")"
		cleanup
		return
	fi
	check freq "
t1, t2 = $t1, $t2
low = [r for r in reqs if r['start_ns'] > t1 and r['start_ns'] + r['latency_ns'] < t2]
assert len(low) > 50, 'only %d requests inside the low-clock window' % len(low)
run = sum(num(r, 'run') for r in low); fr = sum(num(r, 'frequency') for r in low)
assert 0.45 <= fr / run <= 0.55, 'frequency/run = %.3f, expected 0.5 +- 10%%' % (fr / run)
# t2 is read just before the event runs: allow 1 ms for it to land
high = [r for r in reqs if r['start_ns'] > t2 + 1000000]
bad = [r['ns'] for r in high if num(r, 'frequency') != 0]
assert high and not bad, 'penalty after the clock came back: %s' % bad[:2]
before = [r for r in reqs if r['start_ns'] + r['latency_ns'] < t1]
assert before and all(r['ns']['frequency'] is None for r in before), 'a number before any clock data'
assert summ['freq_source'] == 'cpu_frequency tracepoint', summ['freq_source']
assert summ['evidence']['clock']['ref_khz'] == 2000000
"
	cleanup
}
