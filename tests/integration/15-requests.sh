# shellcheck shell=bash
# 15-requests.sh - requests: where a request starts and ends in each request mode (socket,
# uprobe, syscall, unix socket, event loops, hand-offs) and skipped tracepoints
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

one_cpu uprobe unix # need no CPU of their own for the server

# A tracepoint that cannot be attached: carry on without its cause, say so.
test_skip() {
	local out rc
	out=$(./latwhy -p $$ -d 1s --skip bogus 2>&1); rc=$?
	if [ $rc -ne 2 ] || [ "$out" != "latwhy: --skip: 'bogus' is not a tracepoint latwhy uses" ]; then
		fail skip_unknown "rc=$rc out=$out"
		return
	fi
	start_server "$SRV_CPU" || { no_server skip; return; }
	start_client 15 # past latwhy's start and its 2 s; cleanup stops it
	./latwhy -p "$SPID" -d 2s -j --slow 1us \
		--skip irq_handler_entry,irq_handler_exit,softirq_entry,softirq_exit \
		>"$OUT/trace.json" 2>"$OUT/latwhy.err"
	if ! grep -q "not attached (skipped or missing from this kernel): irq softirq; those causes are not measured" "$OUT/latwhy.err"; then
		fail skip "no notice on stderr: $(cat "$OUT/latwhy.err")"
		cleanup
		return
	fi
	# a kernel without sk_data_ready lists it too (6.1)
	local also=""
	kernel_has_tp sk_data_ready || also=', "sk_data_ready"'
	check skip '
assert summ["not_attached"] == ["irq", "softirq"'"$also"'], summ["not_attached"]
assert summ["causes"]["irq"]["ns"] is None and summ["causes"]["irq"]["share"] is None
assert summ["causes"]["sched"]["ns"] is not None
assert len(reqs) > 100
'
	# either end of the receive backlog's wait: the wait is not timed,
	# the causes stay (where the kernel has arrival times at all)
	if ./latwhy -p "$SPID" -d 1s -j --skip netif_receive_skb >"$OUT/trace.json" 2>"$OUT/latwhy.err"; then
		check skip_backlog "
arr = 'sk_data_ready' not in summ['not_attached']
assert summ['not_attached'] == (['netif_rx'] if arr else ['sk_data_ready']), summ['not_attached']
assert summ['causes']['irq']['ns'] is not None
"
	else
		fail skip_backlog "exit $?: $(cat "$OUT/latwhy.err")"
	fi
	cleanup
}

# --request uprobe:BINARY:SYMBOL: a request is one call, entry to return.
test_uprobe() {
	build/tests/uprobe_target 6 >"$OUT/target.out" &
	local tp=$!
	PIDS+=("$tp")
	sleep 0.3
	./latwhy -p "$tp" -d 3s -j --slow 1us --request uprobe:build/tests/uprobe_target:handle_request \
		>"$OUT/trace.json" 2>"$OUT/latwhy.err"
	check uprobe '
assert len(reqs) > 100, "only %d requests" % len(reqs)
lat = sorted(r["latency_ns"] for r in reqs)
med = lat[len(lat) // 2]
# handle_request spins about 300 us; a call, not the 1 ms sleep between calls
assert 250000 <= med <= 1000000, "median %d ns" % med
assert summ["requests"] >= len(reqs)
'
	cleanup
}

# --request syscall (raw_syscalls): the same requests as the socket default.
test_syscall() {
	start_server "$SRV_CPU" || { no_server syscall; return; }
	start_client 9
	sleep 0.5
	./latwhy -p "$SPID" -d 3s -j --slow 1us --request syscall >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	check syscall '
assert summ["request_mode"] == "syscall", summ["request_mode"]
assert len(reqs) > 1000, "only %d requests" % len(reqs)
lat = sorted(r["latency_ns"] for r in reqs)
# ~200 us of work per request on the dev VM; a request, not an idle gap
assert 50000 <= lat[len(lat) // 2] <= 5000000, "median %d ns" % lat[len(lat) // 2]
'
	cleanup
}

# A server on a unix socket: with tcp_sendmsg_locked, sock_send_length is
# attached only once the target reads a non-TCP socket (at the next tick),
# and its requests are traced from then on, none of them stretched across
# the wait.
test_unix() {
	local sock=$OUT/echo.sock
	need_socket unix "it checks that --request auto picks socket for a Unix socket" || return
	python3 - "$sock" >"$OUT/server.out" 2>&1 <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
while True:
    d = c.recv(64)
    if not d:
        break
    sum(range(2000))  # a little work per request
    c.sendall(d)
PY
	SPID=$!
	PIDS+=("$SPID")
	wait_for "$OUT/server.out" listening "$SPID" 5
	python3 - "$sock" 8 >"$OUT/client.out" 2>&1 <<'PY' &
import socket, sys, time
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(sys.argv[1])
end, n = time.monotonic() + float(sys.argv[2]), 0
while time.monotonic() < end:
    c.sendall(b"x" * 64)
    got = 0
    while got < 64:
        got += len(c.recv(64 - got))
    n += 1
print("requests=%d" % n)
PY
	PIDS+=("$!")
	sleep 0.5
	./latwhy -p "$SPID" -d 4s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	check unix "
assert summ['request_mode'] == 'socket', summ['request_mode']
assert len(reqs) >= 1000, 'only %d requests' % len(reqs)
lat = sorted(r['latency_ns'] for r in reqs)
assert lat[len(lat) // 2] < 2000000, 'median %d ns' % lat[len(lat) // 2]
# nothing opened before sock_send_length was attached and ended after
assert lat[-1] < 500000000, 'longest %d ns' % lat[-1]
"
	cleanup
}

# net_rx CPU: the kernel's count of NET_RX runs on CPU so far.
net_rx() {
	awk -v c=$(($1 + 2)) '$1 == "NET_RX:" { print $c }' /proc/softirqs
}

# An event loop with 8 connections: reads every ready request, then replies
# to all (redis-style). Every request must be seen, starting at the wake-up
# of its batch; one open request per thread would see one per batch.
test_eventloop() {
	need_socket eventloop "an event loop's requests are told apart by connection only in socket mode" || return
	start_server "$SRV_CPU" -e -w 20000 || { no_server eventloop; return; }
	start_client 10 -c 8 -t "$OUT/lat.t"
	local client=${PIDS[-1]} rx0 rx1 cp50
	sleep 0.5
	rx0=$(net_rx "$SRV_CPU")
	./latwhy -p "$SPID" -d 4s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	rx1=$(net_rx "$SRV_CPU")
	wait_for "$OUT/client.out" 'p50_us=' "$client"
	cp50=$(sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p' "$OUT/client.out")
	check eventloop "
assert summ['request_mode'] == 'socket', summ['request_mode']
assert summ['untracked'] == 0 and summ['dropped'] == 0, (summ['untracked'], summ['dropped'])
# every request of the 8 connections (a batch's replies reach the client
# over some microseconds: at most one batch apart at each end)
lw, cl = window_counts('$OUT/lat.t')
assert abs(lw - cl) <= 0.002 * cl + 16, 'latwhy: %d requests ended in its window, the client: %d replies' % (lw, cl)
# a request starts at its batch's wake-up, not at its own read
p50 = summ['p50_ns'] / 1000
assert 0.5 * $cp50 <= p50 <= 1.5 * $cp50, 'p50 %.0f us, client p50 $cp50 us' % p50
# each reply's send runs its local client's receive (NET_RX) in the loop's
# context (the kernel's count below): the send's own cost, not an interrupt,
# and not evidence of one (the build before had irq at 96% of all requests'
# time here: every open request counted it)
rx = $rx1 - $rx0
assert rx >= 0.5 * summ['requests'], 'NET_RX ran %d times on CPU $SRV_CPU for %d requests' % (rx, summ['requests'])
own = sum(s['count'] for s in summ['evidence']['softirqs'] if s['vec'] == 'NET_RX' and s['cpu'] == $SRV_CPU)
assert own < 0.1 * rx, '%d of %d NET_RX runs on CPU $SRV_CPU counted as evidence' % (own, rx)
irq = summ['causes']['irq']
assert irq['share'] < 0.1, 'irq is %.0f%% of all requests: %s' % (100 * irq['share'], irq)
"
	cleanup
}

# An event loop with more ready connections than it serves at once: a
# request's data waits in its socket while the loop serves the others, and
# that wait is the request's. With sk_data_ready (6.3+) a request starts when
# its data arrived. Without it the start is a guess: at the read (the build
# before arrivals put the p50 at 0.4-0.75x the client's) or, when the loop never
# sleeps, at the connection's last reply (which adds the client's pause
# between requests); so the run with --skip sk_data_ready beside it is only
# checked to count the same requests.
test_arrival() {
	if ! bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "'btf_trace_sk_data_ready'"; then
		skip arrival "the kernel has no sk_data_ready tracepoint (6.3+)"
		return
	fi
	# -w 20000 (about 32 us a request, a quarter of a CPU at this rate):
	# at 40000 the loop was saturated in one of three clean-clone runs on
	# the Intel guest (p50 1150-1279 us), where it never sleeps and a
	# request without arrival times starts at its connection's last reply,
	# before its data arrived: then the one check below fails by design
	# 16 connections at 260/s each: at 520 the AMD guest (no cpuidle driver,
	# a slower core) saturated the loop in one clean-clone run (p50 980 us)
	# and in another the two traces' counts differed by 5.8%
	start_server "$SRV_CPU" -e -w 20000 || { no_server arrival; return; }
	start_client 24 -c 16 -r 260 -t "$OUT/sent.txt"
	local client=${PIDS[-1]}
	sleep 0.5
	# both at once, so that they see the same requests (p50 comes from every
	# request at any threshold). 8 s windows: attaching two latwhys holds the
	# client's CPU, and the paced client then catches up in a burst that one
	# window can hold more of than the other; over 4 s the two counts
	# differed by up to 5.1% (2 of 28 runs over the 5% below), over 8 s by
	# at most 2.4% (8 runs). No interrupt-cost measurement at start: it is
	# not what this test is about, and it lengthens the attach.
	local skip cp50 t0 c0 busy
	t0=$(date +%s%N)
	c0=$(awk '{print $14 + $15}' "/proc/$SPID/stat")
	./latwhy -p "$SPID" -d 8s -j --irq-cost off --skip sk_data_ready >"$OUT/skip.json" 2>"$OUT/skip.err" &
	skip=$!
	./latwhy -p "$SPID" -d 8s -j --irq-cost off >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	wait "$skip"
	# the loop's own CPU over both traces, as a share of its one CPU
	busy=$(awk -v c0="$c0" -v t0="$t0" -v t1="$(date +%s%N)" -v hz="$(getconf CLK_TCK)" \
		'{ printf "%.3f", ($14 + $15 - c0) / hz / ((t1 - t0) / 1e9) }' "/proc/$SPID/stat")
	# every request counted: the trace alone, its rate over its counted
	# time against the client's (paced, 16 x 260 a second). Not the two
	# above against each other: run at once, the one with arrival times
	# counted 5% fewer a second (3946 against 4167) on the AMD guest with
	# haltpoll, where each alone counted the client's rate to 0.2%. Nor
	# against the client's mean over its run: paced, it catches up after a
	# stall, and in one clean-clone run it sent 16% under its mean during
	# the trace. Against what it sent while the trace could have counted.
	local m0 m1
	m0=$(python3 -c 'import time; print(time.monotonic_ns())')
	./latwhy -p "$SPID" -d 4s -j --irq-cost off >"$OUT/alone.json" 2>>"$OUT/latwhy.err"
	m1=$(python3 -c 'import time; print(time.monotonic_ns())')
	wait_for "$OUT/client.out" 'p50_us=' "$client"
	cp50=$(sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p' "$OUT/client.out")
	check arrival "
p50 = summ['p50_ns'] / 1000
# near the client's, which adds its own CPU's delays to every request (16
# threads on one CPU beside two latwhys): 64-195 us below it in 12 runs of
# both builds of 2026-12-02, at client p50s of 280-580 us (so a ratio, 0.44
# at the fastest, says less than the gap)
assert $cp50 - 250 <= p50 <= 1.25 * $cp50, 'p50 %.0f us, client p50 $cp50 us' % p50
skip = [json.loads(l) for l in open('$OUT/skip.json') if l.strip()][-1]
sp50 = skip['p50_ns'] / 1000
# Against the run without arrival times, by what the loop did. Where it
# slept between batches, that run starts a request at the wake-up or the
# read, after the data arrived: later than the arrival, by ~1 us at a
# quarter of a CPU (94 against 93 us), 275 us at 87% (572 against 297).
# Where it never slept (the CPU all its own, a slow host), it starts one
# at its connection's last reply, before the data: earlier (1001 against
# 1060 us in a clean-clone run at night).
if $busy < 0.95:
    assert p50 >= sp50, 'p50 %.0f us, without arrival %.0f us (the loop %.0f%% busy)' % (p50, sp50, $busy * 100)
else:
    assert p50 <= sp50, 'p50 %.0f us, without arrival %.0f us, the loop %.0f%% busy (never asleep)' % (p50, sp50, $busy * 100)
assert 'sk_data_ready' not in summ['not_attached'], summ['not_attached']
alone = [json.loads(l) for l in open('$OUT/alone.json') if l.strip()][-1]
r = alone['requests_per_s']
# the trace counted some stretch of its duration between the two stamps
# (after its attach): the client's rate over every such stretch bounds it
dur = alone['duration_ns']
sent = sorted(int(l.split()[0]) for l in open('$OUT/sent.txt'))
import bisect
rates = [(bisect.bisect_left(sent, t + dur) - bisect.bisect_left(sent, t)) * 1e9 / dur
         for t in range($m0, max($m0, $m1 - dur) + 1, 10**7)]
lo, hi = min(rates), max(rates)
assert r and 0.95 * lo <= r <= 1.05 * hi, \
    '%.0f requests a second counted (dropped %d, incomplete %d, untracked %d), the client %.0f-%.0f' % (
        r or 0, alone['dropped'], alone['incomplete'], alone['untracked'], lo, hi)
assert skip['not_attached'] == ['sk_data_ready'], skip['not_attached']
"
	cleanup
}

# More connections than a thread keeps slots for (16): the event loop has 24
# requests open at once, the oldest are given up and counted, and every
# request that is followed still adds up.
test_slots() {
	need_socket slots "slots are kept per connection only in socket mode" || return
	start_server "$SRV_CPU" -e -w 5000 || { no_server slots; return; }
	start_client 10 -c 24
	sleep 0.5
	./latwhy -p "$SPID" -d 3s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	check slots '
assert summ["untracked"] > 0, "no request given up with 24 open (%d requests, %d records, %d dropped)" % (summ["requests"], len(reqs), summ["dropped"])
assert len(reqs) > 1000, "only %d requests" % len(reqs)
'
	cleanup
}

# A gateway (lat_server -U): each request goes on to an upstream server
# before the reply, and the thread that reads it hands it to another thread
# of its connection, which replies (-H), as a thread pool or a Go server's
# goroutines do. The upstream's answers are not requests; each request is
# counted once, ended by the other thread's reply, with its latency and no
# split; the reading thread holds nothing open. (The build before counted
# almost none: every read continued a request its thread never answered.)
test_gateway() {
	local up client cp50
	need_socket gateway "a request handed to another thread is matched to its reply by connection only in socket mode" || return
	"$T/lat_server" -p 0 -c "$CLI_CPU" -w 2000 >"$OUT/upstream.out" 2>&1 &
	PIDS+=("$!")
	wait_for "$OUT/upstream.out" 'port=' "$!" 5 || {
		fail gateway "upstream did not start"
		cleanup
		return
	}
	up=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$OUT/upstream.out")
	start_server "$SRV_CPU" -U "$up" -H -w 20000 || { no_server gateway; return; }
	start_client 10 -t "$OUT/lat.t"
	client=${PIDS[-1]}
	sleep 0.5
	./latwhy -p "$SPID" -d 4s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	wait_for "$OUT/client.out" 'p50_us=' "$client"
	cp50=$(sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p' "$OUT/client.out")
	check gateway "
# the client's requests, not the gateway's own to its upstream (equal
# counts in six runs of six; the client's mean rate, checked before, was
# 10% under the rate in latwhy's window once in six full runs)
lw, cl = window_counts('$OUT/lat.t')
assert summ['dropped'] == 0, summ['dropped']
assert abs(lw - cl) <= 0.002 * cl + 3, 'latwhy: %d requests ended in its window, the client: %d replies' % (lw, cl)
assert summ['untracked'] == 0, summ['untracked']
assert summ.get('handoffs', 0) >= 0.9 * summ['requests'], '%d handed off of %d' % (summ.get('handoffs', 0), summ['requests'])
p50 = summ['p50_ns'] / 1000
assert 0.5 * $cp50 <= p50 <= 1.1 * $cp50, 'p50 %.0f us, client p50 $cp50 us' % p50
assert len(reqs) > 1000, 'only %d slow-request records' % len(reqs)
bad = [r for r in reqs if not r.get('handed_off') or r['cause'] is not None or any(r['ns'][k] for k in r['ns'] if k != 'frequency')]
assert len(bad) <= 0.01 * len(reqs), '%d of %d records not a handoff without a split: %s' % (len(bad), len(reqs), bad[:1])
"
	cleanup
}
