#!/bin/bash
# Integration tests: load latwhy's real BPF programs against a real server and
# real kernel events, and check the attribution. Needs root (BPF); elsewhere
# each test says it is skipped and why.
#
#   tests/integration/run.sh [TEST ...]     default: all
#
# Every system setting a test changes is restored by the injector that
# changed it (tools/inject.sh traps EXIT/INT/TERM), also when a test fails.
set -u
cd "$(dirname "$0")/../.." || exit 1
LAB_PROG=run.sh
# shellcheck source=tools/lab.sh
. tools/lab.sh # wait_for, quiet_cpu
use_all_cpus
T=build/tools
OUT=$(mktemp -d /tmp/latwhy-it.XXXXXX)
PIDS=()
CGDIRS=()
FAILS=0
PASSES=0
SKIPS=0
NCPU=$(nproc)
SRV_CPU=$((NCPU - 1))
CLI_CPU=0

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	PIDS=()
	for p in "${CGDIRS[@]}"; do # a test's cgroups, empty now
		rmdir "$p" 2>/dev/null
	done
	CGDIRS=()
	unquiet_cpu # a no-op unless a test quieted its CPU or set knobs (awake_cpus)
	if [ -n "${NETNS:-}" ]; then # and its veth pair with it
		ip netns del "$NETNS" 2>/dev/null
		NETNS=
	fi
}
trap 'cleanup; [ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
trap 'cleanup; exit 130' INT TERM

pass() { echo "PASS $1"; PASSES=$((PASSES + 1)); }
fail() { echo "FAIL $1: $2"; FAILS=$((FAILS + 1)); }
skip() { echo "SKIP $1: $2"; SKIPS=$((SKIPS + 1)); }
# no_server NAME: NAME failed before it began; with the server's last words,
# or, when it printed none, whether it still ran and where it waited
no_server() {
	local last st cpu
	last=$(tail -1 "$OUT/server.out" 2>/dev/null)
	if [ -z "$last" ]; then
		st=$(awk '/^State:/ {print $2}' "/proc/$SPID/status" 2>/dev/null)
		# where it is: its CPU times (user, system ticks), last CPU, kernel stack
		last="no output; pid $SPID ${st:+state $st wchan $(cat "/proc/$SPID/wchan" 2>/dev/null)}"
		cpu=$(awk '{sub(/.*\) /, ""); print $37}' "/proc/$SPID/stat" 2>/dev/null)
		[ -n "$st" ] && last+=" utime/stime/cpu $(awk '{sub(/.*\) /, ""); print $12 "/" $13}' "/proc/$SPID/stat" 2>/dev/null)/$cpu stack $(awk '{printf "%s ", $2}' "/proc/$SPID/stack" 2>/dev/null)"
		# and what holds its CPU (it once sat runnable there for 10 s)
		[ -n "$cpu" ] && last+="; on CPU $cpu: $(ps -eLo psr=,pcpu=,stat=,rtprio=,comm= --sort=-pcpu |
			awk -v c="$cpu" '$1 == c { printf "%s %s%% %s rt %s; ", $5, $2, $3, $4; if (++n == 3) exit }')"
		[ -n "$st" ] || last+="exited"
	fi
	fail "$1" "server did not start: $last"
	cleanup
}

# start_server CPU [lat_server args...]: sets SPID and PORT
start_server() {
	local cpu=$1
	shift
	: >"$OUT/server.out" # the last server's port= would match at once
	"$T/lat_server" -p 0 -c "$cpu" "$@" >"$OUT/server.out" 2>&1 &
	SPID=$!
	PIDS+=("$SPID")
	# 30 s: it starts in ~50 ms; once it sat runnable for 10 s (no_server)
	wait_for "$OUT/server.out" 'port=' "$SPID" 30
	PORT=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$OUT/server.out")
	[ -n "$PORT" ]
}

# start_client SECONDS [lat_client args...]
# SECONDS must outlast latwhy's start as well as its trace: loading takes
# 2 s here unloaded (the verifier), seconds more beside a busy client.
start_client() {
	local secs=$1
	shift
	: >"$OUT/client.out" # the last client's p50_us= would match at once
	"$T/lat_client" -p "$PORT" -c 1 -C "$CLI_CPU" -d "$secs" -q "$@" >"$OUT/client.out" 2>&1 &
	PIDS+=("$!")
}

# check NAME PYTHON: run python asserts over $OUT/trace.json (NDJSON) as
# `reqs` (list of request objects) and `summ` (the summary object).
check() {
	local name=$1 code=$2 msg
	if msg=$(python3 - "$OUT/trace.json" 2>&1 <<EOF
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
reqs = [o for o in lines if o["type"] == "request"]
summs = [o for o in lines if o["type"] == "summary"]
assert len(summs) == 1, "expected one summary line, got %d" % len(summs)
summ = summs[0]
def window_counts(lat_t):
    """The requests that ended inside latwhy's window, less 50 ms at each
    end: counted in latwhy's records (--slow 1us: all of them) and in the
    client's replies (lat_client -t). The same requests, however much the
    traced stretch slowed the client: its mean rate over the whole run is
    no measure of what latwhy's window held (23% apart once)."""
    lo = min(r["start_ns"] for r in reqs) + 50000000
    hi = max(r["start_ns"] + r["latency_ns"] for r in reqs) - 50000000
    lw = sum(1 for r in reqs if lo <= r["start_ns"] + r["latency_ns"] < hi)
    cl = sum(1 for f in (l.split() for l in open(lat_t))
             if len(f) == 2 and f[0].isdigit() and lo <= int(f[0]) + int(f[1]) < hi)
    return lw, cl
inc = [r for r in reqs if r.get("incomplete")]
# A missed scheduler transition (rare: up to 0.1% of requests under load)
# marks every request its thread holds open, and an event loop holds many:
# in arrival (16 connections), 2 misses in 35678 requests marked 14 of 44
# slow records. At most 1% of the records, or 0.1% of all requests traced.
assert len(inc) <= max(0.01 * len(reqs), 0.001 * summ["requests"]), \
    "%d incomplete requests of %d records (%d requests)" % (len(inc), len(reqs), summ["requests"])
for r in reqs:
    if r.get("handed_off"):  # answered by another thread: no split by design
        continue
    # frequency is a part of run, idle_polled of idle, irq_entry of irq;
    # incomplete ones too
    s = sum(v for k, v in r["ns"].items() if k not in ("frequency", "idle_polled", "irq_entry"))
    assert abs(s - r["latency_ns"]) <= 0.01 * r["latency_ns"], "breakdown != latency: %s" % r
$code
EOF
	); then
		pass "$name"
	else
		fail "$name" "$(echo "$msg" | tail -1)"
	fi
}

# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_cli_errors() {
	local out rc
	out=$(./latwhy -p 999999 -d 1s 2>&1); rc=$?
	[ $rc -eq 1 ] && [ "$out" = "latwhy: no process with pid 999999" ] ||
		{ fail cli_no_such_pid "rc=$rc out=$out"; return; }
	out=$(./latwhy -p 1 -d 10x 2>&1); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "latwhy: invalid duration '10x' (examples: 500ms, 10s, 2m) (see latwhy --help)" ] ||
		{ fail cli_bad_duration "rc=$rc out=$out"; return; }
	out=$(./latwhy -d 1s 2>&1); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "latwhy: a target is needed: -p PID, --comm NAME, --cgroup PATH or --unit NAME (see latwhy --help)" ] ||
		{ fail cli_no_pid "rc=$rc out=$out"; return; }
	out=$(./latwhy -p 1 --bogus 2>&1); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "latwhy: unknown option '--bogus' (see latwhy --help)" ] ||
		{ fail cli_unknown_option "rc=$rc out=$out"; return; }
	if command -v setpriv >/dev/null; then
		out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			./latwhy -p $$ -d 1s 2>&1); rc=$?
		[ $rc -eq 1 ] && [ "$out" = "latwhy: tracing needs CAP_BPF and CAP_PERFMON (or root): run it with sudo" ] ||
			{ fail cli_unprivileged "rc=$rc out=$out"; return; }
	fi
	pass cli_errors
}

# A target that exits mid-trace: the report covers what was seen and says so.
test_target_exits() {
	sleep 2 &
	local sp=$! rc
	./latwhy -p "$sp" -d 20s -q >"$OUT/exit.txt" 2>&1; rc=$?
	wait "$sp" 2>/dev/null
	if [ $rc -eq 0 ] && grep -q "the process exited during the trace" "$OUT/exit.txt"; then
		pass target_exits
	else
		fail target_exits "rc=$rc: $(tail -3 "$OUT/exit.txt")"
	fi
}

# A tracepoint that cannot be attached: carry on without its cause, say so.
test_skip() {
	local out rc
	out=$(./latwhy -p $$ -d 1s --skip bogus 2>&1); rc=$?
	if [ $rc -ne 2 ] || [ "$out" != "latwhy: --skip: 'bogus' is not a tracepoint latwhy uses" ]; then
		fail skip_unknown "rc=$rc out=$out"
		return
	fi
	start_server "$SRV_CPU" || { no_server skip; return; }
	start_client 6
	./latwhy -p "$SPID" -d 2s -j --slow 1us \
		--skip irq_handler_entry,irq_handler_exit,softirq_entry,softirq_exit \
		>"$OUT/trace.json" 2>"$OUT/latwhy.err"
	if ! grep -q "not attached (skipped or missing from this kernel): irq softirq; those causes are not measured" "$OUT/latwhy.err"; then
		fail skip "no notice on stderr: $(cat "$OUT/latwhy.err")"
		cleanup
		return
	fi
	check skip '
assert summ["not_attached"] == ["irq", "softirq"], summ["not_attached"]
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
	start_server "$SRV_CPU" -e -w 40000 || { no_server arrival; return; }
	start_client 14 -c 16 -r 520
	local client=${PIDS[-1]}
	sleep 0.5
	# both at once, so that they see the same requests (p50 comes from every
	# request at any threshold). 8 s windows: attaching two latwhys holds the
	# client's CPU, and the paced client then catches up in a burst that one
	# window can hold more of than the other; over 4 s the two counts
	# differed by up to 5.1% (2 of 28 runs over the 5% below), over 8 s by
	# at most 2.4% (8 runs). No interrupt-cost measurement at start: it is
	# not what this test is about, and it lengthens the attach.
	./latwhy -p "$SPID" -d 8s -j --irq-cost off --skip sk_data_ready >"$OUT/skip.json" 2>"$OUT/skip.err" &
	local skip=$! cp50
	./latwhy -p "$SPID" -d 8s -j --irq-cost off >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	wait "$skip"
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
# and later than the read: the data's wait for the server is in it
assert p50 > skip['p50_ns'] / 1000, 'p50 %.0f us, without arrival %.0f us' % (p50, skip['p50_ns'] / 1000)
assert 'sk_data_ready' not in summ['not_attached'], summ['not_attached']
assert abs(skip['requests'] - summ['requests']) <= 0.05 * summ['requests'], (skip['requests'], summ['requests'])
assert skip['not_attached'] == ['sk_data_ready'], skip['not_attached']
"
	cleanup
}

# A server on a unix socket: with tcp_sendmsg_locked, sock_send_length is
# attached only once the target reads a non-TCP socket (at the next tick),
# and its requests are traced from then on, none of them stretched across
# the wait.
test_unix() {
	local sock=$OUT/echo.sock
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

# net_rx CPU: the kernel's count of NET_RX runs on CPU so far.
net_rx() {
	awk -v c=$(($1 + 2)) '$1 == "NET_RX:" { print $c }' /proc/softirqs
}

# An event loop with 8 connections: reads every ready request, then replies
# to all (redis-style). Every request must be seen, starting at the wake-up
# of its batch; one open request per thread would see one per batch.
test_eventloop() {
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

# More connections than a thread keeps slots for (16): the event loop has 24
# requests open at once, the oldest are given up and counted, and every
# request that is followed still adds up.
test_slots() {
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

# A CPU hog on the server's CPU: sched time, naming the hog. Default p99 mode.
test_sched() {
	start_server "$SRV_CPU" || { no_server sched; return; }
	start_client 9
	"$T/lw_hog" -C "$SRV_CPU" -d 9 &
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

# as_nobody CMD...: run CMD as an unprivileged user (report needs no root)
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# A capture for a ticket: one --capture run reports, as nobody and from a
# copy of the file, exactly what the live trace printed (request lines and
# summary); record's own run makes a file report reads, with the final line
# and the header; the refusals are one line each.
test_capture() {
	local pub=$OUT/pub out rc
	start_server "$SRV_CPU" || { no_server capture; return; }
	start_client 10
	sleep 0.5
	mkdir -p "$pub" && chmod 711 "$OUT" && chmod 755 "$pub" && cp latwhy "$pub/"
	./latwhy -p "$SPID" -d 3s -j --slow 1us --capture "$pub/live.lwy" >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	chmod 644 "$pub/live.lwy"
	as_nobody "$pub/latwhy" report --json "$pub/live.lwy" >"$OUT/report.json" 2>"$OUT/report.err"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$OUT/report.err" ]; then
		fail capture_report "rc=$rc: $(head -3 "$OUT/report.err")"
		cleanup
		return
	fi
	check capture "
import re
rep = [json.loads(l) for l in open('$OUT/report.json')]
cap, rreqs, rsumm = rep[0], [o for o in rep if o['type'] == 'request'], rep[-1]
assert cap['type'] == 'capture' and cap['complete'] and cap['abi_version'] >= 1, cap
assert cap['target']['pid'] == str(summ['pid']) and cap['target']['comm'] == 'lat_server', cap
assert len(reqs) > 1000 and rreqs == reqs, 'requests: live %d, report %d' % (len(reqs), len(rreqs))
def mask(o):  # interrupt counts since boot move between two reads of the node
    return json.loads(re.sub(r'[0-9]+ since boot', '# since boot', json.dumps(o)))
assert mask(rsumm) == mask(summ), [k for k in summ if summ[k] != rsumm.get(k)]
"
	# record itself: the final line, then the report's header
	./latwhy record -p "$SPID" -d 2s -o "$pub/rec.lwy" >"$OUT/rec.out" 2>"$OUT/rec.err"
	rc=$?
	chmod 644 "$pub/rec.lwy" 2>/dev/null
	out=$(as_nobody "$pub/latwhy" report "$pub/rec.lwy" 2>&1)
	if [ $rc -ne 0 ] || ! grep -Eq "^latwhy: wrote $pub/rec.lwy: [0-9]+ requests, [0-9]+ slow, 2\.[0-9]+ s$" "$OUT/rec.err" ||
		! grep -q "^Capture $pub/rec.lwy: latwhy [0-9.]*" <<<"$out" ||
		! grep -q "^Recorded with: record -p $SPID -d 2s -o $pub/rec.lwy$" <<<"$out" ||
		! grep -q '^== latwhy: pid [0-9]* (lat_server), 2\.[0-9]* s traced ==$' <<<"$out"; then
		fail capture_record "rc=$rc: $(tail -2 "$OUT/rec.err") / $(head -3 <<<"$out")"
	else
		pass capture_record
	fi
	out=$(./latwhy record -p "$SPID" -d 1s -o "$pub/rec.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 1 ] || [ "$out" != "latwhy: $pub/rec.lwy exists (--force replaces it)" ]; then
		fail capture_exists "rc=$rc out=$out"
	fi
	cleanup
}

# cut_ok DIR RC: the report of a capture killed mid-run (in DIR/cut.*)
cut_ok() {
	python3 - "$1" "$2" <<'PY'
import json, sys
out, rc = sys.argv[1], int(sys.argv[2])
assert rc == 0, "report of a cut capture: rc %d" % rc
err = open(out + "/cut.err").read()
assert "the capture was cut short (no end record" in err, err
lines = [json.loads(l) for l in open(out + "/cut.json")]
cap, summ = lines[0], lines[-1]
assert not cap["complete"], cap
# 3.5 s recorded, flushed each second: at least 2 s of it kept
assert summ["duration_ns"] >= 2.0e9 and summ["requests"] > 500, summ["duration_ns"]
PY
}

# A capture cut short (kill -9 of the recorder) reads up to its last flush:
# at most a second or so lost, and said; a size cap stops it with a message
# and exit 0; a full disk is one line and exit 1, the file still readable.
test_capture_damage() {
	local f=$OUT/cut.lwy rec out rc mnt=$OUT/small
	start_server "$SRV_CPU" || { no_server capture_damage; return; }
	start_client 40 # outlives the three recordings; cleanup stops it
	sleep 0.5
	./latwhy record -p "$SPID" -d 20s -q -o "$f" 2>"$OUT/rec.err" &
	rec=$!
	wait_for "$OUT/rec.err" '^latwhy: recording pid' "$rec" 20
	sleep 3.5
	kill -9 "$rec"
	wait "$rec" 2>/dev/null
	./latwhy report --json "$f" >"$OUT/cut.json" 2>"$OUT/cut.err"
	rc=$?
	if cut_ok "$OUT" $rc >"$OUT/cut.py" 2>&1; then
		pass capture_killed
	else
		fail capture_killed "$(tail -1 "$OUT/cut.py")"
	fi
	# a cap 12 KiB above what a 1 s capture of this node takes (its
	# header and node snapshots): a few seconds of records
	local cap
	cap=$(($(./latwhy record -p "$SPID" -d 1s -q -o "$OUT/base.lwy" >/dev/null 2>&1; stat -c %s "$OUT/base.lwy") / 1024 + 12))
	out=$(./latwhy record -p "$SPID" -d 30s -q --max-size "${cap}k" -o "$OUT/cap.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q "^latwhy: $OUT/cap.lwy reached its size cap (--max-size $cap.0 KiB): capture stopped after" <<<"$out" ||
		[ "$(stat -c %s "$OUT/cap.lwy")" -gt $((cap * 1024)) ] ||
		! ./latwhy report "$OUT/cap.lwy" 2>/dev/null | grep -q '^== latwhy: pid [0-9]* (lat_server), '; then
		fail capture_cap "rc=$rc: $out"
	else
		pass capture_cap
	fi
	if ! mkdir -p "$mnt" || ! mount -t tmpfs -o size=64k tmpfs "$mnt"; then
		skip capture_full "cannot mount a tmpfs"
		cleanup
		return
	fi
	out=$(./latwhy record -p "$SPID" -d 20s -q --slow 1us -o "$mnt/full.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "^latwhy: cannot write $mnt/full.lwy: No space left on device; what was written stays readable$" <<<"$out" ||
		! ./latwhy report "$mnt/full.lwy" >/dev/null 2>&1; then
		fail capture_full "rc=$rc: $out"
	else
		pass capture_full
	fi
	umount "$mnt"
	cleanup
}

# Files that are not captures: one line each, exit 1, no hang.
test_capture_bad() {
	local d=$OUT/bad f out rc ok=1
	mkdir -p "$d" "$d/dir.lwy"
	: >"$d/empty.lwy"
	echo "hello" >"$d/text.lwy"
	mkfifo "$d/fifo.lwy"
	truncate -s 10G "$d/zeros.lwy"
	for f in empty text fifo zeros dir missing; do
		out=$(timeout 20 ./latwhy report "$d/$f.lwy" 2>&1)
		rc=$?
		if [ $rc -ne 1 ] || [ "$(wc -l <<<"$out")" -ne 1 ] || [[ $out != "latwhy: $d/$f.lwy: "* ]]; then
			fail capture_bad "$f: rc=$rc out=$out"
			ok=
		fi
	done
	out=$(./latwhy report 2>&1)
	rc=$?
	if [ $rc -ne 2 ] || [ "$out" != "latwhy: a capture file is needed: latwhy report FILE (see latwhy report --help)" ]; then
		fail capture_bad "no file: rc=$rc out=$out"
		ok=
	fi
	out=$(./latwhy diff "$d/text.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 2 ] || [ "$out" != "latwhy: diff takes two capture files: latwhy diff A.lwy B.lwy (see latwhy diff --help)" ]; then
		fail capture_bad "diff of one file: rc=$rc out=$out"
		ok=
	fi
	out=$(./latwhy diff tests/captures/sched.lwy "$d/text.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 1 ] || [ "$out" != "latwhy: $d/text.lwy: not a latwhy capture (bad magic)" ]; then
		fail capture_bad "diff with a bad file: rc=$rc out=$out"
		ok=
	fi
	rm -f "$d/zeros.lwy"
	[ -n "$ok" ] && pass capture_bad
}

# latwhy keeps off its target's CPUs: with the server pinned to one, latwhy's
# own affinity excludes it while it traces, and no request waited for it.
# With a target that may use every CPU, latwhy shares them at nice 19 and
# says so.
test_self_place() {
	local lw aff nice
	start_server "$SRV_CPU" || { no_server self_place; return; }
	start_client 4
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

# can_poll CPU: CPU has a polling idle state a PM QoS limit can leave it in
can_poll() {
	local drv
	drv=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null)
	[ -n "$drv" ] && [ "$drv" != none ] &&
		[ "$(cat "/sys/devices/system/cpu/cpu$1/cpuidle/state0/name" 2>/dev/null)" = POLL ]
}

# halt_srv_cpu NAME: the server's CPU halts as soon as it is idle (inject.sh
# idle, for 30 s at most); fails NAME if the injector does not start.
halt_srv_cpu() {
	tools/inject.sh idle "$SRV_CPU" 30 >"$OUT/inject.out" 2>&1 &
	PIDS+=("$!")
	wait_for "$OUT/inject.out" '^inject.sh: idle: ' "$!" 5 && return 0
	fail "$1" "inject.sh idle: $(tail -1 "$OUT/inject.out")"
	cleanup
	return 1
}

# Nothing else on the server's CPU: it goes idle between requests, and every
# request's wake-up waits for it to leave idle (on a VM, the halted vCPU's).
# The same server twice: its CPU kept polling when idle (awake_cpus), then
# halting at once (inject.sh idle). The client's median latency moves by
# what the exit from idle costs, and latwhy's idle per request must move by at
# least a quarter of that: the exit lies between sched_waking and
# sched_wakeup, which started the wait before (that build: idle +0.3 us while
# the client's median moved +12.2 us). Not all of it: the first run after a
# halt is slower too (cold caches, the host's own work), which no tracepoint
# marks; latwhy's idle grew by 44-100% of the median shift here (+11.5 to
# +14 us of +7 to +29). The median, not the mean: the host stalls a few
# requests in a thousand for 2-9 ms, in either run, and their count alone
# moved the client's mean by +7 to +30 us.
#
# Keeping a CPU awake needs a cpuidle driver with a polling state (haltpoll's
# POLL): a PM QoS limit then leaves the governor only that. Without one (an
# AMD guest: current_driver none, the CPU halts in default_idle), the awake
# run keeps the server's CPU busy instead, with a SCHED_IDLE spinner every
# wake-up preempts at once: no polling to see, and no idle exit to blame.
test_idle() {
	local cl awake=poll hog
	# "Nothing else on the server's CPU" is the premise: the machine's own
	# daemons once preempted 242 requests for 74 ms in the 4 s window.
	quiet_cpu "$SRV_CPU" 2>/dev/null
	start_server "$SRV_CPU" || { no_server idle; return; }
	if ! can_poll "$SRV_CPU"; then
		awake=busy
		skip idle_polled "no polling idle state on CPU $SRV_CPU (cpuidle driver $(
			cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo absent
		)): the awake run keeps it busy at SCHED_IDLE instead"
		# outlives the awake run (latwhy's load included); killed after it
		chrt -i 0 "$T/lw_hog" -C "$SRV_CPU" -d 30 &
		hog=$!
		PIDS+=("$hog")
	fi
	awake_cpus "$SRV_CPU" "$CLI_CPU"
	start_client 4
	cl=${PIDS[-1]}
	sleep 0.5
	./latwhy -p "$SPID" -d 3s -j --slow 1us >"$OUT/awake.json" 2>"$OUT/latwhy.err"
	wait "$cl"
	[ -n "${hog:-}" ] && { kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null; }
	mv "$OUT/client.out" "$OUT/awake.client"
	halt_srv_cpu idle || return
	start_client 4
	cl=${PIDS[-1]}
	sleep 0.5
	./latwhy -p "$SPID" -d 3s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	wait "$cl"
	AWAKE=$awake check idle '
import os, re
assert len(reqs) > 1000, "only %d requests" % len(reqs)
woke = [r for r in reqs if r["ns"]["idle"] > 0]
assert len(woke) >= 0.5 * len(reqs), "only %d of %d requests woke an idle CPU" % (len(woke), len(reqs))
c = summ["causes"]
assert c["idle"]["ns"] > 5 * c["sched"]["ns"], "idle is not sched: %s" % c
top = summ["evidence"]["preempted_by"][0]
assert top["pid"] == 0 and top["count"] >= len(woke), "the idle task first: %s" % top
def client_p50(f):
    return float(re.search(r"p50_us=([0-9.]+)", open(f).read()).group(1))
def idle_mean(rs):
    return sum(r["ns"]["idle"] for r in rs) / len(rs) / 1000.0
out = sys.argv[1].rsplit("/", 1)[0]
awake_all = [json.loads(l) for l in open(out + "/awake.json") if l.strip()]
awake = [o for o in awake_all if o["type"] == "request"]
assert len(awake) > 1000, "only %d requests with the CPU awake" % len(awake)
# power:cpu_idle tells a CPU that polled (kept awake) from one that halted
POLL = 4294967295
def waits(s, pid):
    return sum(p["count"] for p in s["evidence"]["preempted_by"] if p["pid"] == pid)
asumm = [o for o in awake_all if o["type"] == "summary"][0]
if os.environ["AWAKE"] == "poll":
    assert waits(asumm, POLL) >= 0.5 * len(awake), "awake: %d polled wake-ups for %d requests: %s" % (
        waits(asumm, POLL), len(awake), asumm["evidence"]["preempted_by"][:3])
    assert waits(asumm, 0) < 0.1 * waits(asumm, POLL), "awake: idle exits %d, polled %d" % (
        waits(asumm, 0), waits(asumm, POLL))
else:  # busy: the wake-ups preempted the spinner, none left idle
    assert waits(asumm, 0) < 0.1 * len(awake), "awake (busy): %d idle exits for %d requests: %s" % (
        waits(asumm, 0), len(awake), asumm["evidence"]["preempted_by"][:3])
    assert idle_mean(awake) < 1, "awake (busy): idle %.1f us per request" % idle_mean(awake)
assert waits(summ, POLL) < 0.1 * waits(summ, 0), "halting: polled %d, idle exits %d" % (
    waits(summ, POLL), waits(summ, 0))
shift = client_p50(out + "/client.out") - client_p50(out + "/awake.client")
lw = idle_mean(reqs) - idle_mean(awake)
print("client median +%.1f us, latwhy idle +%.1f us per request" % (shift, lw), file=sys.stderr)
# below 8 us the exit from idle is too cheap here to tell apart from drift
if shift >= 8:
    assert lw >= 0.25 * shift, "halting the CPU added %.1f us to the median request, latwhy idle only %.1f" % (shift, lw)
'
	cleanup
}

# latwhy's advice, run as written: short requests on a vCPU that halts at
# once make idle the largest cause; the idle finding's fix (the haltpoll
# window) is applied verbatim, and the wake-ups it blamed must shrink (here
# 14-30 us each before, 2-3 us after: at most half must remain); its
# rollback must put the setting back.
# Only the fix and rollback lines run, and only if they touch nothing but the
# haltpoll parameter and latwhy's tmpfiles.d drop-in. On a machine that idles
# through another governor the fix would be a C-state's: skipped.
test_idle_fix() {
	local hp=/sys/module/haltpoll/parameters/guest_halt_poll_ns gov before
	gov=$(cat /sys/devices/system/cpu/cpuidle/current_governor 2>/dev/null)
	if [ "$gov" != haltpoll ] || [ ! -w "$hp" ]; then
		skip idle_fix "cpuidle governor '${gov:-none}' is not haltpoll"
		return
	fi
	quiet_cpu "$SRV_CPU" 2>/dev/null
	# before inject.sh saves its own copy: cleanup puts this one back last
	set_knob "$hp" "$(cat "$hp")"
	awake_cpus "$CLI_CPU"
	halt_srv_cpu idle_fix || return
	# ~25 us of work: the wake-up is a large part of every request
	start_server "$SRV_CPU" -w 15000 || { no_server idle_fix; return; }
	start_client 12
	sleep 0.5
	./latwhy -p "$SPID" -d 3s -j --slow 1us >"$OUT/before.json" 2>"$OUT/latwhy.err"
	if ! python3 - "$OUT" 2>"$OUT/advice.err" <<'EOF'; then
import json, re, sys
out = sys.argv[1]
summ = [json.loads(l) for l in open(out + "/before.json") if '"summary"' in l][0]
f = [x for x in summ["findings"] if x["cause"] == "idle"]
assert f, "no idle finding: %s" % {k: v["share"] for k, v in summ["causes"].items()}
f = f[0]
ok = re.compile(r"^(echo [0-9]+ > /sys/module/haltpoll/parameters/guest_halt_poll_ns"
                r"|rm -f /etc/tmpfiles.d/latwhy-haltpoll.conf)$")
assert f["fix"], "the idle finding has no fix: %s" % f
for line in f["fix"] + f["rollback"]:
    assert ok.match(line), "not a haltpoll command: %r" % line
open(out + "/fix.sh", "w").write("\n".join(f["fix"]) + "\n")
open(out + "/rollback.sh", "w").write("\n".join(f["rollback"]) + "\n")
want = re.search(r"guest_halt_poll_ns  # ([0-9]+)$", f["verify"][0])
assert want, "verify does not say the value: %s" % f["verify"]
open(out + "/want", "w").write(want.group(1) + "\n")
EOF
		fail idle_fix "$(tail -1 "$OUT/advice.err")"
		cleanup
		return
	fi
	cp "$OUT/before.json" "$OUT/trace.json"
	before=$(cat "$hp")
	bash -e "$OUT/fix.sh" || { fail idle_fix "the fix failed: $(cat "$OUT/fix.sh")"; cleanup; return; }
	[ "$(cat "$hp")" = "$(cat "$OUT/want")" ] ||
		{ fail idle_fix "after the fix $hp is $(cat "$hp"), verify says $(cat "$OUT/want")"; cleanup; return; }
	./latwhy -p "$SPID" -d 3s -j --slow 1us >"$OUT/after.json" 2>"$OUT/latwhy.err"
	bash -e "$OUT/rollback.sh" || { fail idle_fix "the rollback failed: $(cat "$OUT/rollback.sh")"; cleanup; return; }
	[ "$(cat "$hp")" = "$before" ] ||
		{ fail idle_fix "after the rollback $hp is $(cat "$hp"), was $before"; cleanup; return; }
	check idle_fix '
out = sys.argv[1].rsplit("/", 1)[0]
def idle_us(f):
    rs = [json.loads(l) for l in open(f) if l.strip()]
    rs = [r for r in rs if r["type"] == "request"]
    assert len(rs) > 1000, "only %d requests in %s" % (len(rs), f)
    return sum(r["ns"]["idle"] for r in rs) / len(rs) / 1000.0
b, a = idle_us(out + "/before.json"), idle_us(out + "/after.json")
print("idle per request: %.1f us before the fix, %.1f after" % (b, a))
assert a <= b / 2, "the fix left idle at %.1f us per request, %.1f before" % (a, b)
'
	cleanup
}

# cal_ipis CPU: the call-function IPIs CPU has taken since boot
cal_ipis() {
	awk -v c=$(($1 + 2)) '$1 == "CAL:" {print $c}' /proc/interrupts
}

# O_DIRECT reads from another CPU whose completions land on the server's CPU.
test_irq() {
	local cpu name
	cpu=$(tools/inject.sh irq-cpu 2>/dev/null) ||
		{ skip irq "no disk completion IRQ found on this machine"; return; }
	[ "$cpu" -lt "$NCPU" ] || { skip irq "disk IRQ CPU $cpu"; return; }
	local cli=0
	[ "$cpu" -eq 0 ] && cli=1
	CLI_CPU=$cli start_server "$cpu" || { no_server irq; return; }
	CLI_CPU=$cli start_client 10
	tools/inject.sh irq "$cpu" 10 >"$OUT/inject.out" 2>&1 &
	PIDS+=("$!")
	sleep 1
	name=$(sed -n 's/.*irq=\([0-9]*\) name=\([^ ]*\).*/\2/p' "$OUT/inject.out" | head -1)
	local cal0 cal1
	cal0=$(cal_ipis "$cpu")
	./latwhy -p "$SPID" -d 6s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	cal1=$(cal_ipis "$cpu")
	./latwhy -p "$SPID" -d 2s -j --slow 1us --irq-cost off >"$OUT/off.json" 2>>"$OUT/latwhy.err"
	check irq "
cpu = $cpu
irqs = [i for i in summ['evidence']['irqs'] if i['cpu'] == cpu]
assert irqs, 'no IRQ evidence on CPU %d: %s' % (cpu, summ['evidence'])
name = '$name'
if name:
    assert any(i['name'] == name for i in irqs), 'IRQ %s not named: %s' % (name, irqs)
soft = [s for s in summ['evidence']['softirqs'] if s['cpu'] == cpu and s['vec'] == 'BLOCK']
assert soft and soft[0]['ns'] > 0, 'no BLOCK softirq on CPU %d' % cpu
assert summ['causes']['irq']['ns'] > 0, summ['causes']
assert sum(1 for r in reqs if r['ns']['irq'] > 0) > 0, 'no request shows irq time'
# each interrupt's entry and exit, measured at start (a VM's: ~10 us here)
cost = summ['irq_entry_cost_ns']
assert isinstance(cost, int) and 100 <= cost <= 1000000, 'irq_entry_cost_ns %r' % cost
ent = sum(r['ns']['irq_entry'] for r in reqs)
assert ent > 0, 'no interrupt entry cost in any request'
assert all(r['ns']['irq_entry'] <= r['ns']['irq'] for r in reqs), 'irq_entry beyond irq'
# a count of interrupts times the cost: no more than interrupts happened
# there, the call-function IPIs that also count included (an AMD guest
# without a cpuidle driver took 10.6k of them in 6 s, a haltpoll one few)
nirq = sum(i['count'] for i in irqs)
ipis = $cal1 - $cal0
assert ent / cost <= (nirq + ipis) * 1.1 + 50, '%d interrupts charged, %d IRQs and %d IPIs on CPU %d' % (
    ent / cost, nirq, ipis, cpu)
assert summ['ns']['irq_entry'] == ent, (summ['ns']['irq_entry'], ent)
off = [json.loads(l) for l in open('$OUT/off.json')]
assert off[-1]['irq_entry_cost_ns'] is None and off[-1]['ns']['irq_entry'] is None, off[-1]
assert all(r['ns']['irq_entry'] is None for r in off[:-1]), 'irq_entry with --irq-cost off'
print('irq: entry cost %d ns, %.1f ms over %d requests (%d interrupts on CPU %d)' %
      (cost, ent / 1e6, len(reqs), nirq, cpu))
"
	cleanup
}

# latwhy check measures what an interrupt costs a running thread as the trace
# does (irqcost.c), on this machine only: a fixture tree gets null.
test_check_irq_cost() {
	local out msg
	./latwhy check --json --sample 200 >"$OUT/check.json" 2>"$OUT/check.err" ||
		{ fail check_irq_cost "latwhy check: $(tail -1 "$OUT/check.err")"; return; }
	out=$(./latwhy check --sample 200 2>&1)
	./latwhy check --json --sample 0 --root tests/fixtures/vm-nocpufreq >"$OUT/fixture.json" \
		2>>"$OUT/check.err" ||
		{ fail check_irq_cost "latwhy check --root: $(tail -1 "$OUT/check.err")"; return; }
	if msg=$(python3 - "$OUT/check.json" "$OUT/fixture.json" "$out" 2>&1 <<'EOF'
import json, re, sys
c = json.load(open(sys.argv[1]))["node"]["interrupts"]["entry_cost_ns"]
assert isinstance(c, int) and 100 <= c <= 1000000, "entry_cost_ns %r" % c
assert json.load(open(sys.argv[2]))["node"]["interrupts"]["entry_cost_ns"] is None, "fixture measured"
m = re.search(r"  entry/exit: ([0-9.]+) us per interrupt beyond its handler", sys.argv[3])
assert m and 0.1 <= float(m.group(1)) <= 1000, "no entry/exit line"
EOF
	); then
		pass check_irq_cost
	else
		fail check_irq_cost "$(echo "$msg" | tail -1)"
	fi
}

# lo's RPS sends a UDP burst's receive processing to the server's CPU (the
# softirq injector): latwhy's fix must be the rps_cpus write that moves it off
# that CPU, with the injector's mask as its rollback; and after running the
# fix, its verify step (latwhy again) must see the NET_RX time there fall.
# Not /proc/softirqs' counts: each local send still raises NET_RX on the
# sender's CPU, to send RPS's IPI.
test_rps() {
	local rps=/sys/class/net/lo/queues/rx-0/rps_cpus fix
	[ -w "$rps" ] || { skip rps "$rps not writable (kernel without RPS?)"; return; }
	start_server "$SRV_CPU" || { no_server rps; return; }
	start_client 14
	tools/inject.sh softirq "$SRV_CPU" 12 >"$OUT/inject.out" 2>&1 &
	PIDS+=("$!")
	sleep 1
	./latwhy -p "$SPID" -d 4s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	fix=$(python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
f = [x for x in s["findings"] if x["cause"] == "irq"]
print(next((l for l in f[0]["fix"] if "/rps_cpus" in l), "") if f else "")' "$OUT/trace.json")
	[ -n "$fix" ] && sh -c "$fix"
	./latwhy -p "$SPID" -d 4s -j >"$OUT/after.json" 2>>"$OUT/latwhy.err"
	check rps "
fix = '''$fix'''
other = [c for c in range($NCPU) if c != $SRV_CPU][0]
want = 'echo %x > $rps' % (1 << other)
assert fix == want, 'fix %r, wanted %r' % (fix, want)
irq = [x for x in summ['findings'] if x['cause'] == 'irq'][0]
assert 'echo %x > $rps' % (1 << $SRV_CPU) in irq['rollback'], irq['rollback']
assert 'NET_RX on CPU $SRV_CPU' in irq['evidence'], irq['evidence']
# the client's segments, steered to the server's CPU too, wait in its
# backlog behind the flood: timed enqueue to dequeue, in the irq bucket
bl = [x for x in summ['evidence']['softirqs'] if x['vec'] == 'NET_RX_BACKLOG' and x['cpu'] == $SRV_CPU]
assert bl and bl[0]['count'] >= 1000, 'backlog waits on the server CPU: %r' % bl
assert bl[0]['ns'] >= 5000 * bl[0]['count'], 'mean backlog wait %d ns' % (bl[0]['ns'] // bl[0]['count'])
assert 'NET_RX_BACKLOG on CPU $SRV_CPU' in irq['evidence'] and ' waits' in irq['evidence'], irq['evidence']
def net_rx(s):
    return sum(x['ns'] for x in s['evidence']['softirqs'] if x['vec'] == 'NET_RX' and x['cpu'] == $SRV_CPU)
after = [json.loads(l) for l in open('$OUT/after.json')][-1]
b, a = net_rx(summ), net_rx(after)
assert b >= 100e6, 'only %d ns of NET_RX on the server CPU in 4 s before the fix' % b
assert a * 10 < b, 'NET_RX on the server CPU: %d ns in 4 s before the fix, %d after' % (b, a)
"
	cleanup
}

# A flood steered to the server's CPU datagram by datagram (lo's RPS, the
# softirq injector's flood mode) keeps its ksoftirqd busy: a request that
# waits behind ksoftirqd waits for softirq work, some of it begun before the
# wait (not timed), and that wait is softirq's, with its own evidence row.
# (Not "more softirq than sched behind ksoftirqd": the flood's receiver,
# which runs there too, may follow it in the same wait, blamed on the task
# that took the CPU first.)
test_ksoftirqd() {
	local rps=/sys/class/net/lo/queues/rx-0/rps_cpus
	[ -w "$rps" ] || { skip ksoftirqd "$rps not writable (kernel without RPS?)"; return; }
	start_server "$SRV_CPU" || { no_server ksoftirqd; return; }
	start_client 10
	INJECT_SOFTIRQ=flood tools/inject.sh softirq "$SRV_CPU" 8 >"$OUT/inject.out" 2>&1 &
	PIDS+=("$!")
	sleep 1
	./latwhy -p "$SPID" -d 4s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	check ksoftirqd "
k = [x for x in summ['evidence']['softirqs'] if x['vec'] == 'KSOFTIRQD']
assert k and k[0]['cpu'] == $SRV_CPU, 'no KSOFTIRQD row on CPU $SRV_CPU: %r' % summ['evidence']['softirqs']
assert k[0]['count'] >= 10 and k[0]['ns'] > 0, k
# what it adds is in the requests' softirq (--slow 1us: every request is
# reported; a wait of a busy span outside any request may add a little)
soft = sum(r['ns']['softirq'] for r in reqs)
assert k[0]['ns'] <= soft * 1.1 + 1e6, 'KSOFTIRQD %d ns, the requests hold %d ns of softirq' % (k[0]['ns'], soft)
"
	cleanup
}

# A client in another network namespace, across a veth pair: a container's
# way in. Its segments enter the host's receive backlog through netif_rx.
# Queued on the client's own CPU, each is the first NET_RX takes there, in
# the sender's own path: no wait, and none is timed. Steered to the server's
# CPU (the host side's RPS), each request's wait there is timed, into its
# softirq.
test_veth() {
	local ns=latwhy-it-$$ host=lwit$$ a=10.231.77.1 b=10.231.77.2
	command -v ip >/dev/null || { skip veth "no ip command (iproute2)"; return; }
	if ! ip netns add "$ns" 2>"$OUT/ip.err"; then
		skip veth "cannot create a network namespace: $(tail -1 "$OUT/ip.err")"
		return
	fi
	NETNS=$ns
	if ! { ip link add "$host" type veth peer name eth0 netns "$ns" &&
		ip addr add "$a/30" dev "$host" && ip link set "$host" up &&
		ip -n "$ns" addr add "$b/30" dev eth0 && ip -n "$ns" link set eth0 up; } 2>"$OUT/ip.err"; then
		fail veth "veth pair: $(tail -1 "$OUT/ip.err")"
		cleanup
		return
	fi
	LAB_ADDR=$a start_server "$SRV_CPU" || { no_server veth; return; }
	ip netns exec "$ns" env LAB_ADDR=$a "$T/lat_client" -p "$PORT" -c 1 -C "$CLI_CPU" -d 9 -q \
		>"$OUT/client.out" 2>&1 &
	PIDS+=("$!")
	sleep 1
	./latwhy -p "$SPID" -d 3s -j --slow 1us >"$OUT/local.json" 2>"$OUT/latwhy.err"
	# the pair goes with the namespace: nothing to restore
	cpu_mask "$SRV_CPU" >"/sys/class/net/$host/queues/rx-0/rps_cpus"
	./latwhy -p "$SPID" -d 3s -j --slow 1us >"$OUT/trace.json" 2>>"$OUT/latwhy.err"
	check veth "
def waits(s):
    bl = [x for x in s['evidence']['softirqs'] if x['vec'] == 'NET_RX_BACKLOG']
    return sum(x['count'] for x in bl), sum(x['ns'] for x in bl)
local = [json.loads(l) for l in open('$OUT/local.json')][-1]
assert local['requests'] > 1000, '%d requests on the client CPU' % local['requests']
n, ns = waits(local)
assert n <= 0.1 * local['requests'], '%d backlog waits for %d requests queued on their own CPU' % (n, local['requests'])
n, ns = waits(summ)
assert summ['requests'] > 1000, '%d requests' % summ['requests']
assert n >= 0.9 * summ['requests'], '%d backlog waits for %d requests' % (n, summ['requests'])
soft = sum(r['ns']['softirq'] for r in reqs)
assert soft >= 0.9 * ns, 'requests hold %d ns of softirq, their backlog waits %d ns' % (soft, ns)
"
	cleanup
}

# How many links attach latwhy's lw_netif_recv (bpftool), printed.
recv_links() {
	python3 - "$(bpftool -j prog show name lw_netif_recv 2>/dev/null)" "$(bpftool -j link show 2>/dev/null)" <<'EOF'
import json, sys
def arr(s):
    j = json.loads(s or "[]")
    return j if isinstance(j, list) else [j]
ids = {p["id"] for p in arr(sys.argv[1])}
print(sum(1 for l in arr(sys.argv[2]) if l.get("prog_id") in ids))
EOF
}

# The receive backlog's dequeue side (netif_receive_skb: every packet the
# host receives) is detached while no local peer sends to the target's
# listening ports for 10 s, and attached again at the next tick once one does.
# lo's RPS steers the client's segments to the server's CPU (restored), so
# that each waits in a backlog and is timed.
test_backlog_idle() {
	local lw idle busy rps=/sys/class/net/lo/queues/rx-0/rps_cpus
	[ -w "$rps" ] || { skip backlog_idle "$rps not writable (kernel without RPS?)"; return; }
	start_server "$SRV_CPU" || { no_server backlog_idle; return; }
	set_knob "$rps" "$(cpu_mask "$SRV_CPU")" || { fail backlog_idle "cannot write $rps"; cleanup; return; }
	./latwhy -p "$SPID" -d 22s -j --slow 1us >"$OUT/trace.json" 2>"$OUT/latwhy.err" &
	lw=$!
	PIDS+=("$lw")
	sleep 13
	idle=$(recv_links)
	start_client 6
	sleep 3
	busy=$(recv_links)
	wait "$lw"
	if [ "$idle" != 0 ] || [ "$busy" != 1 ]; then
		fail backlog_idle "lw_netif_recv links: $idle after 13 s without a client (want 0), $busy with one (want 1)"
		cleanup
		return
	fi
	check backlog_idle "
bl = [x for x in summ['evidence']['softirqs'] if x['vec'] == 'NET_RX_BACKLOG']
n = sum(x['count'] for x in bl)
assert summ['requests'] > 1000, '%d requests' % summ['requests']
# the client's first tick goes untimed: 5 of its 6 s at least
assert n >= 0.6 * summ['requests'], '%d backlog waits for %d requests' % (n, summ['requests'])
"
	cleanup
}

# cpu_frequency events injected into the loaded program on the server's CPU.
test_freq() {
	start_server "$SRV_CPU" || { no_server freq; return; }
	start_client 8
	./latwhy -p "$SPID" -d 5s -j --slow 1us --ref-mhz 2000 >"$OUT/trace.json" 2>"$OUT/latwhy.err" &
	local lw=$!
	sleep 1.5
	# 1000 MHz of a 2000 MHz reference: half of each run is lost.
	"$T/lw_freqinject" "$SRV_CPU" 1000000 >"$OUT/inject.out" 2>&1
	sleep 1.5
	# back up, by program id and twice (-I, -r: make bench's way of
	# feeding each latwhy and its floor)
	local id err rc
	id=$(bpftool -j prog show name lw_cpu_freq 2>/dev/null | python3 -c \
		'import json, sys; j = json.load(sys.stdin); print(max(p["id"] for p in (j if isinstance(j, list) else [j])))')
	"$T/lw_freqinject" -I "${id:-0}" -r 2 "$SRV_CPU" 2000000 >>"$OUT/inject.out" 2>&1
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
run = sum(r['ns']['run'] for r in low); fr = sum(r['ns']['frequency'] for r in low)
assert 0.45 <= fr / run <= 0.55, 'frequency/run = %.3f, expected 0.5 +- 10%%' % (fr / run)
# t2 is read just before the event runs: allow 1 ms for it to land
high = [r for r in reqs if r['start_ns'] > t2 + 1000000]
bad = [r['ns'] for r in high if r['ns']['frequency'] != 0]
assert high and not bad, 'penalty after the clock came back: %s' % bad[:2]
before = [r for r in reqs if r['start_ns'] + r['latency_ns'] < t1]
assert before and all(r['ns']['frequency'] is None for r in before), 'a number before any clock data'
assert summ['freq_source'] == 'cpu_frequency tracepoint', summ['freq_source']
assert summ['evidence']['clock']['ref_khz'] == 2000000
"
	cleanup
}

# THP always + eager khugepaged + a madvised heap: collapses of the target's
# mm. Whether a collapse meets one of this run's slow requests (a fault or
# the mmap lock) is luck: on an AMD guest 2 of 5 runs lost nothing to it.
# The collapses at an eager pace are the finding either way, and it states
# what the slow requests lost.
test_thp() {
	[ -w /sys/kernel/mm/transparent_hugepage/enabled ] ||
		{ skip thp "THP settings not writable"; return; }
	# -R: the server frees heap pages like an allocator purging, so
	# khugepaged has ranges to collapse back while it serves
	start_server "$SRV_CPU" -m 512 -P 256 --thp -R 200 || { no_server thp; return; }
	# the injector fragments memory before it sets the knobs: 3-20 s
	tools/inject.sh thp "$SRV_CPU" 14 >"$OUT/inject.out" 2>&1 &
	PIDS+=("$!")
	if ! wait_for "$OUT/inject.out" '^inject.sh: thp: ' "$!" 90; then
		fail thp "inject.sh thp: $(tail -1 "$OUT/inject.out")"
		cleanup
		return
	fi
	start_client 13
	sleep 1
	./latwhy -p "$SPID" -d 10s -j >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	check thp '
thp = summ["evidence"]["thp"]
assert thp["collapses"] > 0, "no collapse of the target memory: %s" % thp
# the injector runs khugepaged every 10 ms over a heap the server madvises:
# the fix puts the kernel pace back, and says madvise alone keeps the heap
# eligible
f = [x for x in summ["findings"] if x["cause"] == "thp"]
assert f, "no thp finding: %s" % summ["causes"]
pace = "echo 10000 > /sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs"
assert pace in f[0]["fix"], f[0]["fix"]
c = summ["causes"]["thp"]
lost = "%.0f%% of slow-request time (" % (c["share"] * 100)
assert f[0]["evidence"].startswith(lost), (lost, f[0]["evidence"])
assert "khugepaged collapsed %d ranges" % thp["collapses"] in f[0]["evidence"], f[0]["evidence"]
print("thp: %d collapses, %.1f ms (%.1f%%) of slow-request time" % (thp["collapses"], c["ns"] / 1e6, c["share"] * 100))
assert any(l.startswith("# pid %d madvises " % summ["pid"]) for l in f[0]["fix"]), f[0]["fix"]
'
	cleanup
}

# A lab run killed by SIGKILL leaves what it changed (its EXIT trap never
# runs); the next script that sources lab.sh as root restores it from the
# dead run's journal, and leaves a live run's alone.
test_lab_recover() {
	local dir=$OUT/journal knob=/proc/sys/vm/stat_interval old s1 s2 dead live err all before after
	old=$(cat "$knob")
	all=$(cpu_list $$)
	sleep 60 &
	s1=$!
	sleep 60 &
	s2=$!
	PIDS+=("$s1" "$s2")
	mkfifo "$OUT/never"
	LAB_JOURNAL_DIR=$dir bash -c "LAB_PROG=live; . tools/lab.sh; trap restore_affinity EXIT
		set_affinity 0 $s2; echo moved; read -r -t 30 <>\"$OUT/never\"" >"$OUT/live.out" 2>&1 &
	live=$!
	PIDS+=("$live")
	wait_for "$OUT/live.out" moved "$live" 5
	dead=$(LAB_JOURNAL_DIR=$dir bash -c "LAB_PROG=dead; . tools/lab.sh; echo \$\$;
		set_knob $knob 7; set_affinity 0 $s1; kill -KILL \$\$" 2>/dev/null)
	before="$(cat "$knob") $(cpu_list "$s1") $(find "$dir" -type f | wc -l)"
	err=$(LAB_JOURNAL_DIR=$dir bash -c 'LAB_PROG=next; . tools/lab.sh' 2>&1)
	after="$(cat "$knob") $(cpu_list "$s1") $(cpu_list "$s2")"
	kill -TERM "$live" 2>/dev/null
	reap "$live"
	echo "$old" >"$knob" # whatever happened above
	if [ "$before" != "7 0 2" ]; then
		fail lab_recover "the dead run did not leave its changes and a journal: $before"
	elif [ "$err" != "next: restored 2 of 2 settings left by lab run $dead, which died before it could" ]; then
		fail lab_recover "recovery said: $err"
	elif [ "$after" != "$old $all 0" ]; then
		fail lab_recover "after recovery (knob, dead run's task, live run's task): $after, not $old $all 0"
	elif [ -n "$(find "$dir" -type f)" ]; then
		fail lab_recover "journals left: $(find "$dir" -type f)"
	else
		pass lab_recover
	fi
	cleanup
}

# The short accuracy run (tools/accuracy --short: one scenario per cause, about
# a minute): ground truth from the client's own latencies. The scenarios that
# meet the issue's bar in every run today gate here (sched, freq); the others
# are printed and tracked as open work in the README.
test_accuracy() {
	local out=$OUT/accuracy.txt row s
	tools/accuracy/run.sh --short --out "$out" >"$OUT/accuracy.log" 2>&1
	for s in sched freq; do
		row=$(grep -E "^$s +" "$out")
		case $row in
		*PASS*) ;;
		*)
			fail accuracy "$s: ${row:-no row} ($(tail -1 "$OUT/accuracy.log"))"
			return
			;;
		esac
	done
	sed -n '3,15p' "$out"
	pass accuracy
}

# latwhy check's NIC facts against what the kernel reports: this VM's own
# NICs and a veth pair made in a network namespace (veth answers the
# channel query: its maximum is the pair's queue count, as `ip -d link`
# prints it). No BPF: check reads sysfs, procfs and the ethtool ioctls.
test_nic() {
	local ns=lwtest-nic-$$ host=lwnic$$ msg
	command -v ip >/dev/null || { skip nic "no ip command (iproute2)"; return; }
	if ! ip netns add "$ns" 2>"$OUT/ip.err"; then
		skip nic "cannot create a network namespace: $(tail -1 "$OUT/ip.err")"
		return
	fi
	NETNS=$ns
	if ! { ip link add "$host" numrxqueues 4 numtxqueues 4 type veth peer name eth0 netns "$ns" &&
		ip link set "$host" up && ip -n "$ns" link set eth0 up; } 2>"$OUT/ip.err"; then
		fail nic "veth pair: $(tail -1 "$OUT/ip.err")"
		cleanup
		return
	fi
	# the pair goes with the namespace: nothing to restore
	cpu_mask 1 >"/sys/class/net/$host/queues/rx-0/rps_cpus"
	ip -d -j link show "$host" >"$OUT/ip.json" 2>"$OUT/ip.err"
	./latwhy check --sample 0 --json >"$OUT/check.json" 2>"$OUT/check.err"
	./latwhy check --sample 0 >"$OUT/check.txt" 2>>"$OUT/check.err"
	if msg=$(python3 - "$OUT" "$host" 2>&1 <<'EOF'
import glob, json, os, sys
out, host = sys.argv[1], sys.argv[2]
net = json.load(open(out + '/check.json'))['node']['network']
devs = {d['name']: d for d in net['devices']}
text = open(out + '/check.txt').read()
assert 'network devices' in text, 'no network devices section'

def sysfs(dev, f):
    try:
        return open('/sys/class/net/%s/%s' % (dev, f)).read().strip()
    except OSError:
        return None

def cpulist(mask):
    v = int(mask.replace(',', ''), 16)
    cpus = [c for c in range(v.bit_length()) if v >> c & 1]
    runs, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        runs.append(str(cpus[i]) if i == j else '%d-%d' % (cpus[i], cpus[j]))
        i = j + 1
    return ','.join(runs)

irqname = {}
for l in open('/proc/interrupts'):
    f = l.split(':', 1)
    if f[0].strip().isdigit():
        irqname[int(f[0])] = l.split()[-1]

for name in sorted(os.listdir('/sys/class/net')):
    if name == 'lo' or sysfs(name, 'type') == '772':
        assert name not in devs, 'lo listed'
        continue
    assert name in devs, '%s missing: %s' % (name, sorted(devs))
    d = devs[name]
    link = '/sys/class/net/%s/device/driver' % name
    if os.path.exists(link):
        drv = os.path.basename(os.path.realpath(link))
        assert d['driver'] == drv, '%s driver %s, sysfs %s' % (name, d['driver'], drv)
        assert d['kind'] == ('virtio-net' if drv == 'virtio_net' else 'physical'), d['kind']
    rxq = len(glob.glob('/sys/class/net/%s/queues/rx-*' % name))
    txq = len(glob.glob('/sys/class/net/%s/queues/tx-*' % name))
    assert len(d['rx_queues']) == rxq and len(d['tx_queues']) == txq, \
        '%s queues %d/%d, sysfs %d/%d' % (name, len(d['rx_queues']), len(d['tx_queues']), rxq, txq)
    if d['channels']:
        ch = d['channels']
        assert ch['combined'] + ch['rx'] == rxq, '%s channels %s, %d rx queues' % (name, ch, rxq)
    for q in d['rx_queues']:
        m = sysfs(name, 'queues/rx-%d/rps_cpus' % q['queue'])
        assert q['rps_cpus'] == (cpulist(m) if m else None), \
            '%s rx-%d rps %s, sysfs %s' % (name, q['queue'], q['rps_cpus'], m)
        fc = sysfs(name, 'queues/rx-%d/rps_flow_cnt' % q['queue'])
        assert q['rps_flow_cnt'] == (int(fc) if fc else None), '%s rx-%d flows' % (name, q['queue'])
        if q['irq'] is not None:
            aff = open('/proc/irq/%d/smp_affinity_list' % q['irq']).read().strip()
            assert q['affinity'] == aff, \
                '%s rx-%d IRQ %d affinity %s, /proc %s' % (name, q['queue'], q['irq'], q['affinity'], aff)
    sp = sysfs(name, 'speed')
    if sp and sp.lstrip('-').isdigit() and int(sp) > 0:
        assert d['speed_mbps'] == int(sp), '%s speed %s, sysfs %s' % (name, d['speed_mbps'], sp)
    if d['kind'] == 'virtio-net':
        q = d['rx_queues'][0]
        assert q['irq'] is not None and irqname[q['irq']].endswith('-input.0'), \
            'virtio rx-0 IRQ %s' % q['irq']
        assert "a guest's NIC" in d['note'], d['note']

v = devs[host]
link = json.load(open(out + '/ip.json'))[0]
assert v['kind'] == 'veth' and v['driver'] == 'veth', v
ch = v['channels']
assert ch['max_rx'] == link['num_rx_queues'], 'veth max rx %d, ip -d link %d' % (ch['max_rx'], link['num_rx_queues'])
assert ch['max_tx'] == link['num_tx_queues'], 'veth max tx %d, ip -d link %d' % (ch['max_tx'], link['num_tx_queues'])
assert v['rx_queues'][0]['rps_cpus'] == '1', 'veth rx-0 RPS %s' % v['rx_queues'][0]['rps_cpus']
assert v['rss'] is None and v['rings'] is None, 'veth answers rss or rings: %s %s' % (v['rss'], v['rings'])
assert '%s: veth, driver veth' % host in text, 'text has no %s line' % host
print('%d devices checked' % len(devs))
EOF
	); then
		echo "  $msg"
		pass nic
	else
		fail nic "$(echo "$msg" | tail -1)"
	fi
	cleanup
}

# serve_scrape PORT FILE COND [SECONDS]: GET /metrics into FILE until the
# python COND holds over m (each sample's value by name and labels).
serve_scrape() {
	python3 - "$@" <<'EOF'
import sys, time, urllib.request
port, path, cond = sys.argv[1:4]
end = time.time() + float(sys.argv[4] if len(sys.argv) > 4 else 20)
while True:
    try:
        text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5).read().decode()
    except OSError:
        text = ""
    m = dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in text.splitlines()
                                      if l and not l.startswith("#")))
    ok = bool(text) and eval(cond)
    if ok or time.time() > end:
        open(path, "w").write(text)
        sys.exit(0 if ok else 1)
    time.sleep(0.5)
EOF
}

# serve_check NAME FILE [PREV] PYTHON: asserts over m, FILE's samples by name
# and labels, and p, PREV's (an earlier scrape; {} without one).
serve_check() {
	local name=$1 file=$2 prev=/dev/null msg
	[ $# -eq 4 ] && { prev=$3; shift; }
	if msg=$(python3 - "$file" "$prev" 2>&1 <<EOF
import sys
def samples(path):
    return dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in open(path).read().splitlines()
                                        if l and not l.startswith("#")))
m, p = samples(sys.argv[1]), samples(sys.argv[2])
text = open(sys.argv[1]).read()
$3
EOF
	); then
		pass "$name"
	else
		fail "$name" "$(echo "$msg" | tail -1)"
	fi
}

# serve_http PORT METHOD PATH: the status latwhy serve answers with.
serve_http() {
	python3 - "$@" <<'EOF'
import sys, urllib.error, urllib.request
port, method, path = sys.argv[1:4]
req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), method=method,
                             data=b"x" if method == "POST" else None)
try:
    print(urllib.request.urlopen(req, timeout=5).status)
except urllib.error.HTTPError as e:
    print(e.code)
EOF
}

# serve_prom PORT QUERY COND [SECONDS]: query a Prometheus server until the
# python COND holds over r (the result vector: [{"metric":..,"value":..}]).
serve_prom() {
	python3 - "$@" <<'EOF'
import json, sys, time, urllib.parse, urllib.request
port, query, cond = sys.argv[1:4]
end = time.time() + float(sys.argv[4] if len(sys.argv) > 4 else 40)
r = None
while time.time() < end:
    try:
        u = "http://127.0.0.1:%s/api/v1/query?query=%s" % (port, urllib.parse.quote(query))
        r = json.load(urllib.request.urlopen(u, timeout=5))["data"]["result"]
        if eval(cond):
            sys.exit(0)
    except (OSError, ValueError, KeyError):
        pass
    time.sleep(1)
print("%s: %s" % (query, r))
sys.exit(1)
EOF
}

# A real Prometheus on loopback scraping latwhy serve every second: sets PROM
# (its port) and adds it to PIDS; fails when it does not come up.
serve_start_prom() {
	local mport=$1
	PROM=$(free_port)
	cat >"$OUT/prom.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: latwhy
    static_configs:
      - targets: ["127.0.0.1:$mport"]
EOF
	prometheus --config.file="$OUT/prom.yml" --storage.tsdb.path="$OUT/prom" \
		--web.listen-address="127.0.0.1:$PROM" >"$OUT/prom.log" 2>&1 &
	PIDS+=("$!")
	wait_for "$OUT/prom.log" "Server is ready to receive web requests" "$!" 30
}

# serve_as DIR ARGS...: latwhy ARGS (exec'd: $! is latwhy's pid) as nobody
# with only CAP_BPF and CAP_PERFMON, from a copy in DIR nobody may run;
# as root where setpriv or the kernel cannot.
serve_as() {
	local dir=$1
	shift
	if setpriv --help 2>/dev/null | grep -q -- --ambient-caps &&
		caps_nobody +bpf,+perfmon && setpriv "${SETPRIV[@]}" true 2>/dev/null; then
		mkdir -p "$dir" && chmod 711 "$OUT" && chmod 755 "$dir" && cp latwhy "$dir/"
		exec setpriv "${SETPRIV[@]}" "$dir/latwhy" "$@"
	fi
	exec ./latwhy "$@"
}

SERVE_REQ='latwhy_requests_total{target="lat_server"}'
SERVE_SCHED='latwhy_slow_requests_total{target="lat_server",cause="sched"}'

# The scrape of a serve that traced lat_server: every family, the histogram
# against the request count, promtool's linter.
serve_check_first() {
	local out
	serve_check serve_metrics "$OUT/metrics1.txt" '
REQ = "latwhy_requests_total{target=\"lat_server\"}"
assert m[REQ] > 0, m[REQ]
causes = ["frequency", "irq", "thp", "sched", "idle", "none"]
for fam in ("latwhy_slow_requests_total", "latwhy_slow_request_seconds_total"):
    for c in causes:
        k = "%s{target=\"lat_server\",cause=\"%s\"}" % (fam, c)
        assert k in m, k
assert sum(m["latwhy_slow_requests_total{target=\"lat_server\",cause=\"%s\"}" % c] for c in causes) > 0
inf = m["latwhy_request_duration_seconds_bucket{target=\"lat_server\",le=\"+Inf\"}"]
assert inf == m["latwhy_request_duration_seconds_count{target=\"lat_server\"}"]
# the histogram and the ticks count the same requests, one interval apart at most
assert abs(inf - m[REQ]) <= 0.2 * m[REQ], (inf, m[REQ])
bk = [v for k, v in m.items() if k.startswith("latwhy_request_duration_seconds_bucket")]
assert bk == sorted(bk), "buckets not cumulative"
for k in ("latwhy_events_dropped_total", "latwhy_irqbalance_running",
          "latwhy_process_cpu_seconds_total", "latwhy_process_resident_memory_bytes"):
    assert k in m, k
thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().split("[")[1].split("]")[0]
assert m["latwhy_thp_enabled_info{mode=\"%s\"}" % thp] == 1, thp
kd = "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag"
assert m["latwhy_khugepaged_defrag"] == int(open(kd).read()), m["latwhy_khugepaged_defrag"]
assert any(k.startswith("latwhy_build_info{") for k in m)
assert m["latwhy_sampling_active"] == 1
import re
assert not re.search(r"[{,]pid=", text), "a pid label"
for fam in set(l.split()[2] for l in text.splitlines() if l.startswith("# TYPE")):
    assert text.count("# TYPE %s " % fam) == 1 and text.count("# HELP %s " % fam) == 1, fam
'
	# promtool's linter on the scrape, and the Prometheus files' own checks
	if ! command -v promtool >/dev/null; then
		skip serve_promtool "promtool not installed"
	elif out=$(tools/prometheus/check.sh "$OUT/metrics1.txt" 2>&1); then
		pass serve_promtool
	else
		fail serve_promtool "$(echo "$out" | grep -A2 FAIL | head -3 | tr '\n' ' ')"
	fi
}

# What the endpoint refuses, and a second serve on the same port.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
serve_check_http() {
	local mport=$1 codes out rc
	codes="$(serve_http "$mport" GET /) $(serve_http "$mport" GET /nope) $(serve_http "$mport" POST /metrics) $(serve_http "$mport" DELETE /)"
	[ "$codes" = "200 404 405 405" ] && pass serve_http || fail serve_http "GET / /nope, POST /metrics, DELETE /: $codes"
	out=$(./latwhy serve --comm lat_server --listen "127.0.0.1:$mport" 2>&1); rc=$?
	[ $rc -eq 1 ] && [ "$out" = "latwhy: cannot listen on 127.0.0.1:$mport: Address already in use" ] &&
		pass serve_port_in_use || fail serve_port_in_use "rc=$rc out=$out"
}

# latwhy serve --comm lat_server: /metrics for Prometheus, its refusals, a
# port in use, and the server restarted with a new pid: waited for, traced
# again, every counter going on under the same target. With Prometheus
# installed, a real one scrapes it through the restart. Always attached
# (--sample off): serve_sample tests the duty cycle.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_serve() {
	local mport lpid cpid r1 s0 a0 rc PROM=
	mport=$(free_port)
	start_server "$SRV_CPU" || { no_server serve; return; }
	start_client 60
	cpid=${PIDS[-1]}
	# as it runs in production: an unprivileged user holding CAP_BPF and
	# CAP_PERFMON alone (tools/systemd/latwhy.service), where setpriv can
	: >"$OUT/serve.err" # its last run's lines would match at once
	serve_as "$OUT/pub" serve --comm lat_server --sample off --listen "127.0.0.1:$mport" >"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/serve.err" "serving http" "$lpid" 10 ||
		! serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$SERVE_REQ', 0) > 0 and any(v for k, v in m.items() if k.startswith('latwhy_slow_requests_total'))" 30; then
		fail serve "nothing traced: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	grep -q "^latwhy: tracing comm lat_server (1 process)$" "$OUT/serve.err" ||
		fail serve_target "not the test's server alone: $(cat "$OUT/serve.err")"
	if [ "$(awk '/^Uid:/ {print $2}' "/proc/$lpid/status")" = 65534 ]; then
		pass serve_unprivileged
	else
		skip serve_unprivileged "setpriv or the kernel cannot grant CAP_BPF+CAP_PERFMON alone: serve ran as root"
	fi
	serve_check_first
	serve_check_http "$mport"
	if command -v prometheus >/dev/null; then
		serve_start_prom "$mport" || fail serve_prometheus "did not start: $(tail -1 "$OUT/prom.log")"
	fi
	r1=$(awk -v k="$SERVE_REQ" '$1 == k {print $2}' "$OUT/metrics1.txt")
	stop_child "$cpid" # the client, then the server: its next one has a new pid
	stop_child "$SPID"
	if ! wait_for "$OUT/serve.err" "^latwhy: a process named lat_server is gone: waiting for it to come back$" "$lpid" 10; then
		fail serve_restart "no word of the exit: $(tail -1 "$OUT/serve.err")"
		cleanup
		return
	fi
	start_server "$SRV_CPU" || { no_server serve_restart; return; }
	start_client 30
	wait_for "$OUT/serve.err" "^latwhy: a process named lat_server is back: traced again$" "$lpid" 10 ||
		fail serve_target "the restarted server ($SPID) not traced: $(tail -1 "$OUT/serve.err")"
	# the old run's last records are published at its end: wait for the new
	# tracer's (sampling again) before judging the counters
	if ! serve_scrape "$mport" "$OUT/metrics2.txt" \
		"m.get('$SERVE_REQ', 0) > $r1 + 100 and m.get('latwhy_sampling_active') == 1" 30; then
		fail serve_restart "the counters did not go on: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	serve_check serve_restart "$OUT/metrics2.txt" "$OUT/metrics1.txt" '
for k, v in p.items():
    if k.split("{")[0].endswith(("_total", "_bucket", "_count", "_sum")):
        assert k in m, "gone after the restart: " + k
        assert m[k] >= v, "%s went back: %s -> %s" % (k, v, m[k])
assert not [k for k in m if "target=" in k and "target=\"lat_server\"" not in k]
assert m["latwhy_sampling_active"] == 1
'
	# an injected cause: a hog on the server's CPU; its slow requests rise
	# under cause="sched", the scrape's and (below) Prometheus's
	# (at least 10 more, and most of the slow requests since: the running
	# p99 adapts to the hog, so about 1% of its requests stay slow, past
	# the first seconds: 10 s of it gave 17 to 65 here)
	s0=$(awk -v k="$SERVE_SCHED" '$1 == k {print $2}' "$OUT/metrics2.txt")
	a0=$(awk '$1 ~ /^latwhy_slow_requests_total\{/ {n += $2} END {print n + 0}' "$OUT/metrics2.txt")
	"$T/lw_hog" -C "$SRV_CPU" -d 15 &
	PIDS+=("$!")
	serve_scrape "$mport" "$OUT/metrics3.txt" "(lambda d, a: d >= 10 and d >= 0.5 * a)(m.get('$SERVE_SCHED', 0) - ${s0:-0}, sum(v for k, v in m.items() if k.startswith('latwhy_slow_requests_total{')) - $a0)" 30 &&
		pass serve_cause || fail serve_cause "sched slow requests ${s0:-?} -> $(awk -v k="$SERVE_SCHED" '$1 == k {print $2}' "$OUT/metrics3.txt") of all slow $a0 -> $(awk '$1 ~ /^latwhy_slow_requests_total\{/ {n += $2} END {print n + 0}' "$OUT/metrics3.txt")"
	if [ -n "$PROM" ]; then
		serve_prom "$PROM" "$SERVE_SCHED" "r and float(r[0]['value'][1]) >= ${s0:-0} + 10" 40 &&
			serve_prom "$PROM" "latwhy_irqbalance_running" "r and int(float(r[0]['value'][1])) == $(pgrep -x irqbalance >/dev/null && echo 1 || echo 0)" 10 &&
			serve_prom "$PROM" "$SERVE_REQ" "r and float(r[0]['value'][1]) > $r1 + 100" 40 &&
			serve_prom "$PROM" "resets(${SERVE_REQ}[5m])" "r and float(r[0]['value'][1]) == 0" 10 &&
			serve_prom "$PROM" "latwhy_thp_enabled_info" "r and r[0]['metric']['mode'] == open('/sys/kernel/mm/transparent_hugepage/enabled').read().split('[')[1].split(']')[0]" 10 &&
			pass serve_prometheus || fail serve_prometheus "$(tail -1 "$OUT/prom.log")"
	fi
	# SIGTERM to serve and its target at once (a node shutting down): serve
	# stops, also when its trace saw the target go first
	kill -TERM "$SPID" "$lpid"
	for _ in $(seq 100); do kill -0 "$lpid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$lpid" 2>/dev/null; then
		fail serve_stop "still running 10 s after SIGTERM: $(tail -1 "$OUT/serve.err")"
	else
		wait "$lpid"
		rc=$?
		[ $rc -eq 0 ] && pass serve_stop || fail serve_stop "latwhy serve exited $rc on SIGTERM"
	fi
	cleanup
}

# latwhy serve --sample 2s/4s against the lab server, scraped every 0.25 s for
# about 10 s, each scrape taken twice around a look at latwhy's own fds
# (/proc/PID/fdinfo: link_id, prog_id) and bpftool's link and prog lists:
# sampling_active goes 1 and 0; while 0, latwhy holds no link and bpftool
# lists none of the links it held while on, its programs stay loaded, the
# request and attached-seconds counters stand still and the node gauges are
# there; while 1 it holds links. Only samples whose neighbours agree are
# judged: a change between two looks is not a disagreement. No request is
# over 1 s: none spans a detached stretch.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_serve_sample() {
	local mport lpid msg
	mport=$(free_port)
	# ~4 ms of work a request: a detach nearly always lands inside one
	start_server "$SRV_CPU" -w 2500000 || { no_server serve_sample; return; }
	start_client 40
	: >"$OUT/serve.err" # its last run's lines would match at once
	./latwhy serve -p "$SPID" --sample 2s/4s --listen "127.0.0.1:$mport" >"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/serve.err" "^latwhy: tracing pid $SPID (lat_server)$" "$lpid" 10 ||
		! serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$SERVE_REQ', 0) > 0" 20; then
		fail serve_sample "nothing traced: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	if msg=$(python3 - "$mport" "$lpid" 2>&1 <<'EOF'
import json, os, subprocess, sys, time, urllib.request
port, pid = sys.argv[1], int(sys.argv[2])
REQ = 'latwhy_requests_total{target="lat_server"}'
ATT = "latwhy_sampling_attached_seconds_total"
def scrape():
    t = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5).read().decode()
    return dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in t.splitlines()
                                          if l and not l.startswith("#")))
def own(kind):
    ids = set()
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            for l in open("/proc/%d/fdinfo/%s" % (pid, fd)):
                if l.startswith(kind + ":"):
                    ids.add(int(l.split()[1]))
        except OSError:
            pass
    return ids
def bpftool(what):
    # an object that went away while bpftool listed is an {"error": ...}
    out = subprocess.run(["bpftool", "-j", what, "show"], capture_output=True, text=True).stdout
    return set(o["id"] for o in json.loads(out or "[]") if "id" in o)
S = []
end = time.time() + 10
while time.time() < end:
    a = scrape()
    links, progs = own("link_id"), own("prog_id")
    blinks, bprogs = bpftool("link"), bpftool("prog")
    b = scrape()
    if a["latwhy_sampling_active"] == b["latwhy_sampling_active"] and a[ATT] == b[ATT]:
        S.append(dict(on=b["latwhy_sampling_active"] == 1, req=b[REQ], att=b[ATT], links=links,
                      progs=progs, blinks=blinks, bprogs=bprogs, m=b))
    else:
        S.append(None)
    time.sleep(0.25)
on = [s for s in S if s and s["on"]]
off = [s for s in S if s and not s["on"]]
assert on and off, "sampling_active never %d" % (0 if not off else 1)
seen = set().union(*(s["links"] for s in on))
judged = {True: 0, False: 0}
for i in range(1, len(S) - 1):
    p, s, n = S[i - 1], S[i], S[i + 1]
    if not (p and s and n) or not (p["on"] == s["on"] == n["on"]):
        continue
    judged[s["on"]] += 1
    if s["on"]:
        assert s["links"] and s["links"] <= s["blinks"], "attached: links %s" % s["links"]
        continue
    assert not s["links"], "detached but holding links %s" % s["links"]
    assert not (seen & s["blinks"]), "bpftool still lists links %s" % (seen & s["blinks"])
    assert s["progs"] and s["progs"] <= s["bprogs"], "its programs are not loaded while off"
    assert p["req"] == s["req"] == n["req"], "requests grew while off: %s %s %s" % (p["req"], s["req"], n["req"])
    assert p["att"] == s["att"] == n["att"], "attached seconds grew while off"
    for k in ("latwhy_irqbalance_running", "latwhy_process_resident_memory_bytes"):
        assert k in s["m"], k + " missing while off"
    assert any(k.startswith("latwhy_thp_enabled_info{") for k in s["m"]), "THP gauge missing while off"
assert judged[True] >= 2 and judged[False] >= 2, "too few samples judged: %s" % judged
# no request spans a detached stretch (2 s): their state is started afresh
# after it, so none is longer than the lab server's own (ms)
last = [s for s in S if s][-1]["m"]
H = 'latwhy_request_duration_seconds_bucket{target="lat_server",le="%s"}'
assert last[H % "1.073741824"] == last[H % "+Inf"], \
    "%d requests over 1 s" % (last[H % "+Inf"] - last[H % "1.073741824"])
# the requests grew from one off stretch to the next: counted while on
offs = [s["req"] for s in off]
assert offs[-1] > offs[0], "requests did not grow between off stretches: %s" % offs
print("%d samples, %d on and %d off judged; requests %d -> %d; attached %.1f s" %
      (len(S), judged[True], judged[False], offs[0], offs[-1], [s for s in S if s][-1]["att"]))
EOF
	); then
		pass serve_sample
		echo "   $msg"
	else
		fail serve_sample "$(echo "$msg" | tail -1)"
	fi
	cleanup
}

# dir_names DIR: the names in DIR, one a line, sorted
dir_names() {
	find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort
}

# serve_capture_report NAME FILE: latwhy report of FILE as nobody, from a
# copy of latwhy in $OUT/pub, into $OUT/NAME.rep (stderr in .err).
serve_capture_report() {
	local pub=$OUT/pub
	mkdir -p "$pub" && chmod 711 "$OUT" && chmod 755 "$pub" "$(dirname "$2")" && cp latwhy "$pub/"
	chmod 644 "$2"
	as_nobody "$pub/latwhy" report "$2" >"$OUT/$1.rep" 2>"$OUT/$1.err"
}

# Hindsight captures: serve --capture-dir keeps a 10 s window; SIGUSR1
# writes it (the stderr line, the file, the counter, a report as nobody of
# 10 s with requests in it), a second one inside --capture-min-interval is
# refused with one line; then a trigger on sched time fires once lw_hog
# shares the server's CPU, the capture named and reasoned sched, its report
# blaming lw_hog, the directory capped at 2 files.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_serve_capture() {
	local mport lpid caps=$OUT/caps caps2=$OUT/caps2 f out n secs rc
	mport=$(free_port)
	start_server "$SRV_CPU" || { no_server serve_capture; return; }
	start_client 60
	: >"$OUT/serve.err" # its last run's lines would match at once
	./latwhy serve -p "$SPID" --sample off --listen "127.0.0.1:$mport" --capture-dir "$caps" \
		--capture-window 10s >"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/serve.err" "^latwhy: tracing pid $SPID (lat_server)$" "$lpid" 10 ||
		! serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$SERVE_REQ', 0) > 0" 30; then
		fail serve_capture "nothing traced: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	sleep 12 # more than the window: the capture holds its last 10 s only
	kill -USR1 "$lpid"
	if ! wait_for "$OUT/serve.err" "^latwhy: wrote $caps/latwhy-lat_server-[0-9]\{8\}T[0-9]\{6\}Z-signal\.lwy ([0-9]* bytes, reason signal)$" "$lpid" 10; then
		fail serve_capture "no capture on SIGUSR1: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	f=$(dir_names "$caps" | head -1)
	f=$caps/$f
	[ "$(dir_names "$caps")" = "$(basename "$f")" ] && pass serve_capture_file ||
		fail serve_capture_file "$caps holds: $(dir_names "$caps" | tr '\n' ' ')"
	serve_capture_report sig "$f"
	rc=$?
	out=$(cat "$OUT/sig.rep")
	secs=$(sed -n 's/^== latwhy: pid [0-9]* (lat_server), \([0-9.]*\) s traced ==$/\1/p' <<<"$out")
	n=$(sed -n 's/^Requests (socket): \([0-9]*\) .*/\1/p' <<<"$out")
	if [ $rc -eq 0 ] && [ ! -s "$OUT/sig.err" ] && [ "${n:-0}" -gt 0 ] &&
		python3 -c "import sys; sys.exit(not 9.5 <= float('${secs:-0}') <= 11.5)" &&
		grep -q "^Recorded with: serve -p $SPID --sample off --listen 127.0.0.1:$mport --capture-dir $caps --capture-window 10s$" <<<"$out" &&
		grep -q "^Hindsight capture: reason signal, the [0-9.]* s before [0-9-]*T[0-9:]*Z$" <<<"$out"; then
		pass serve_capture_report
	else
		fail serve_capture_report "rc=$rc requests=$n traced=$secs s: $(head -4 "$OUT/sig.rep" | tr '\n' '|') $(head -2 "$OUT/sig.err")"
	fi
	serve_scrape "$mport" "$OUT/metrics2.txt" 'True' 5
	serve_check serve_capture_counter "$OUT/metrics2.txt" '
assert m["latwhy_captures_total{target=\"lat_server\",reason=\"signal\"}"] == 1, m
assert text.count("# TYPE latwhy_captures_total counter") == 1
'
	if command -v promtool >/dev/null; then
		out=$(promtool check metrics <"$OUT/metrics2.txt" 2>&1) && pass serve_capture_promtool ||
			fail serve_capture_promtool "$(head -2 <<<"$out" | tr '\n' ' ')"
	fi
	kill -USR1 "$lpid"
	wait_for "$OUT/serve.err" "^latwhy: capture refused (reason signal): the last one was [0-9]*\.[0-9] s ago, --capture-min-interval is 300 s$" "$lpid" 10 &&
		[ "$(dir_names "$caps" | wc -l)" -eq 1 ] && pass serve_capture_refused ||
		fail serve_capture_refused "$(tail -1 "$OUT/serve.err"); $(dir_names "$caps" | tr '\n' ' ')"
	stop_child "$lpid"

	# a trigger: 200 ms a second of sched time in slow (> 1 ms) requests
	# for 3 s; lw_hog on the server's CPU takes about half of it
	./latwhy serve -p "$SPID" --sample off --listen "127.0.0.1:$mport" --slow 1ms --capture-dir "$caps2" \
		--capture-on sched:200ms/s:3s --capture-min-interval 0 --capture-max-files 2 \
		>"$OUT/serve2.out" 2>"$OUT/serve2.err" &
	lpid=$!
	PIDS+=("$lpid")
	wait_for "$OUT/serve2.err" "^latwhy: tracing pid $SPID (lat_server)$" "$lpid" 10
	"$T/lw_hog" -C "$SRV_CPU" -d 20 &
	PIDS+=("$!")
	if ! wait_for "$OUT/serve2.err" "^latwhy: wrote $caps2/latwhy-lat_server-.*-sched\.lwy ([0-9]* bytes, reason sched)$" "$lpid" 20; then
		fail serve_capture_trigger "no capture on sched: $(tail -2 "$OUT/serve2.err")"
		cleanup
		return
	fi
	# at least 3 captures of 3 s each: the cap keeps 2
	wait_for "$OUT/serve2.err" "^latwhy: removed $caps2/latwhy-lat_server-.*-sched\.lwy (the capture directory's cap)$" "$lpid" 20 &&
		[ "$(dir_names "$caps2" | grep -c '^latwhy-lat_server-.*-sched\.lwy$')" -eq 2 ] && pass serve_capture_cap ||
		fail serve_capture_cap "$(dir_names "$caps2" | tr '\n' ' ') $(tail -1 "$OUT/serve2.err")"
	f=$caps2/$(dir_names "$caps2" | grep -- '-sched\.lwy$' | head -1)
	serve_capture_report trig "$f"
	grep -q "^Verdict: sched " "$OUT/trig.rep" && grep -q "ran instead of it: lw_hog " "$OUT/trig.rep" &&
		pass serve_capture_trigger ||
		fail serve_capture_trigger "$(grep -E '^(Verdict|Requests|==)' "$OUT/trig.rep" | tr '\n' '|') $(head -1 "$OUT/trig.err")"
	stop_child "$lpid" # before the server: a SIGTERM as it exits is missed
	cleanup
}

# caps_nobody CAPS: SETPRIV, setpriv's options for nobody holding only CAPS
# (its list, "+bpf,+perfmon"), ambient so that they survive the exec, and a
# bounding set of those alone. setpriv execs: "setpriv ${SETPRIV[@]} CMD &"
# leaves CMD's pid in $!.
caps_nobody() {
	# shellcheck disable=SC2054 # the commas are setpriv's
	SETPRIV=(--reuid=65534 --regid=65534 --clear-groups --inh-caps="$1"
		--ambient-caps="$1" --bounding-set=-all,"$1")
}

# caps_of PID [TID]: "CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs" of a
# thread of PID (its main one by default), as /proc prints them.
caps_of() {
	awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):|^NoNewPrivs:/ {printf "%s%s", sep, $2; sep = " "}' \
		"/proc/$1/task/${2:-$1}/status" 2>/dev/null
}

# caps_run NAME CAPS ARGS...: latwhy ARGS as nobody with CAPS, stdout to
# $OUT/trace.json and stderr to $OUT/latwhy.err; sets CAPS_SEEN to its
# capabilities once it traces (caps_of), and CAPS_RC.
caps_run() {
	local name=$1 caps=$2 lpid
	shift 2
	caps_nobody "$caps"
	# emptied first: the background job's redirection may come after the
	# wait below has read the last run's "tracing" line (and taken the
	# caps of setpriv, still root: CI saw 1fffeffffff and no NoNewPrivs)
	: >"$OUT/latwhy.err"
	setpriv "${SETPRIV[@]}" "$OUT/pub/latwhy" "$@" >"$OUT/trace.json" 2>"$OUT/latwhy.err" &
	lpid=$!
	CAPS_SEEN=
	# the trace's first line comes after the attach, and the drop
	wait_for "$OUT/latwhy.err" "^latwhy: \(tracing\|recording\) pid" "$lpid" 20 && CAPS_SEEN=$(caps_of "$lpid")
	wait "$lpid"
	CAPS_RC=$?
}

# Least privilege: nobody, holding only CAP_BPF and CAP_PERFMON, traces the
# root-owned lab server, and once attached holds only CAP_PERFMON (the
# node reader's, for another user's smaps at the end: CAP_BPF is dropped;
# the bounding set cannot be without CAP_SETPCAP); uprobes, which need
# CAP_SYS_ADMIN, fall back to the socket layer with one notice, and are used
# when it is granted; without the two, one line and exit 1. serve --comm
# drops CAP_BPF as well (its target's next process needs no new load: the
# filter takes it), and answers /metrics from a thread that holds none.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_caps() {
	local pub=$OUT/pub out rc mport lpid cpid tid main http r1 bare=0000000000000000
	local req='latwhy_requests_total{target="lw_caps_srv"}'
	local perfmon=0000004000000000 two=000000c000000000
	if ! setpriv --help 2>/dev/null | grep -q -- --ambient-caps; then
		skip caps "setpriv has no --ambient-caps (util-linux 2.31+)"
		return
	fi
	caps_nobody +bpf,+perfmon
	if ! setpriv "${SETPRIV[@]}" true 2>/dev/null; then
		skip caps "this kernel has no CAP_BPF/CAP_PERFMON (5.8+)"
		return
	fi
	mkdir -p "$pub" && chmod 711 "$OUT" && chmod 755 "$pub" &&
		cp latwhy build/tests/uprobe_target "$pub/"
	start_server "$SRV_CPU" || { no_server caps; return; }
	start_client 60
	sleep 0.5
	# a symbol of the server's that is no request: with the fallback, the
	# socket layer's requests are traced
	caps_run caps_trace +bpf,+perfmon -p "$SPID" -d 3s -j --slow 1us \
		--request "uprobe:$T/lat_server:main"
	out=$(grep -v '^latwhy: tracing pid' "$OUT/latwhy.err")
	[ "$out" = "latwhy: no CAP_SYS_ADMIN: uprobes cannot be attached, so request boundaries come from the socket layer instead of --request uprobe" ] &&
		pass caps_notice || fail caps_notice "stderr: $out"
	[ "$CAPS_SEEN" = "$bare $perfmon $perfmon $two $bare 1" ] &&
		pass caps_dropped || fail caps_dropped "Inh Prm Eff Bnd Amb NoNewPrivs after attach: $CAPS_SEEN"
	[ $CAPS_RC -eq 0 ] && check caps_trace '
assert summ["requests"] > 1000, summ["requests"]
assert len(reqs) > 1000, len(reqs)
' || fail caps_trace "rc=$CAPS_RC: $(tail -1 "$OUT/latwhy.err")"
	# granted, CAP_SYS_ADMIN times the server's calls, then goes too
	taskset -c "$SRV_CPU" "$pub/uprobe_target" 8 >"$OUT/target.out" &
	PIDS+=("$!")
	sleep 0.3
	caps_run caps_uprobe +bpf,+perfmon,+sys_admin -p "${PIDS[-1]}" -d 2s -j --slow 1us \
		--request "uprobe:$pub/uprobe_target:handle_request"
	out=$(grep -v '^latwhy: tracing pid' "$OUT/latwhy.err")
	if [ $CAPS_RC -ne 0 ] || [ -n "$out" ]; then
		fail caps_uprobe "rc=$CAPS_RC: $out"
	else
		check caps_uprobe '
assert len(reqs) > 100, "only %d requests" % len(reqs)
lat = sorted(r["latency_ns"] for r in reqs)
assert 250000 <= lat[len(lat) // 2] <= 1000000, lat[len(lat) // 2]
'
	fi
	[ "$CAPS_SEEN" = "$bare $perfmon $perfmon 000000c000200000 $bare 1" ] &&
		pass caps_uprobe_dropped || fail caps_uprobe_dropped "after attach: $CAPS_SEEN"
	# record, the same way, into a directory nobody may write
	mkdir -p "$pub/rec" && chmod 777 "$pub/rec"
	caps_run caps_record +bpf,+perfmon record -p "$SPID" -d 2s -o "$pub/rec/caps.lwy"
	out=$(grep -v '^latwhy: recording pid' "$OUT/latwhy.err")
	[ $CAPS_RC -eq 0 ] && [[ "$out" =~ ^"latwhy: wrote $pub/rec/caps.lwy: "[1-9][0-9]*" requests" ]] &&
		pass caps_record || fail caps_record "rc=$CAPS_RC: $out"
	[ "$CAPS_SEEN" = "$bare $perfmon $perfmon $two $bare 1" ] &&
		pass caps_record_dropped || fail caps_record_dropped "after attach: $CAPS_SEEN"
	# without them: one line, exit 1 (with one of the two as without)
	for c in "" +bpf; do
		if [ -z "$c" ]; then
			out=$(as_nobody "$pub/latwhy" -p "$SPID" -d 1s 2>&1)
		else
			caps_nobody "$c"
			out=$(setpriv "${SETPRIV[@]}" "$pub/latwhy" -p "$SPID" -d 1s 2>&1)
		fi
		rc=$?
		[ $rc -eq 1 ] && [ "$out" = "latwhy: tracing needs CAP_BPF and CAP_PERFMON (or root): run it with sudo" ] &&
			pass "caps_refused${c:+_bpf_only}" || fail "caps_refused${c:+_bpf_only}" "rc=$rc out=$out"
	done
	# serve --comm as nobody: scraped, CAP_PERFMON alone kept on the tracing
	# thread (the node reader's), none on the HTTP server's. The server under
	# a name of its own: another lat_server may be running.
	cleanup
	cp "$T/lat_server" "$pub/lw_caps_srv"
	caps_server || { no_server caps_serve; return; }
	start_client 30
	cpid=${PIDS[-1]}
	mport=$(free_port)
	caps_nobody +bpf,+perfmon
	: >"$OUT/serve.err" # its last run's lines would match at once
	setpriv "${SETPRIV[@]}" "$pub/latwhy" serve --comm lw_caps_srv --sample off --listen "127.0.0.1:$mport" \
		>"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if wait_for "$OUT/serve.err" "serving http" "$lpid" 10 &&
		serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$req', 0) > 0" 30; then
		pass caps_serve
	else
		fail caps_serve "nothing traced: $(tail -2 "$OUT/serve.err")"
	fi
	main=$(caps_of "$lpid")
	http=
	for tid in /proc/"$lpid"/task/*; do
		tid=${tid##*/}
		[ "$tid" = "$lpid" ] || http+="$(caps_of "$lpid" "$tid");"
	done
	[ "$main" = "$bare $perfmon $perfmon $two $bare 1" ] && [ "$http" = "$bare $bare $bare $two $bare 1;" ] &&
		pass caps_serve_dropped || fail caps_serve_dropped "tracing thread: $main; others: $http"
	# the server restarted: its new process traced, with CAP_PERFMON alone
	r1=$(awk -v k="$req" '$1 == k {print $2}' "$OUT/metrics1.txt")
	stop_child "$cpid"
	stop_child "$SPID"
	caps_server || { no_server caps_retrace; return; }
	start_client 30
	if serve_scrape "$mport" "$OUT/metrics2.txt" "m.get('$req', 0) > ${r1:-0} + 100" 30; then
		pass caps_retrace
	else
		fail caps_retrace "not traced again: $(tail -2 "$OUT/serve.err")"
	fi
	kill -TERM "$lpid" # before its target: a stop that lands mid-retrace is lost
	wait "$lpid"
	cleanup
}

# caps_server: the lab server as $OUT/pub/lw_caps_srv, a name no other test's
# server has, on the server's CPU; sets SPID and PORT.
caps_server() {
	: >"$OUT/server.out"
	"$OUT/pub/lw_caps_srv" -p 0 -c "$SRV_CPU" >"$OUT/server.out" 2>&1 &
	SPID=$!
	PIDS+=("$SPID")
	wait_for "$OUT/server.out" 'port=' "$SPID" 10 || return 1
	PORT=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$OUT/server.out")
}

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

# serve's slow requests by cause are the kernel's counts (cause_counts);
# its hindsight window holds the records of the same requests, which the
# engine attributes on its own. With the client done and the counts
# published, a scrape and the window's capture must agree cause by cause:
# the same requests, the same rule (lw_cause_of()) on both sides.
test_serve_counts() {
	local mport lpid cpid caps=$OUT/caps3 f msg
	mport=$(free_port)
	start_server "$SRV_CPU" || { no_server serve_counts; return; }
	./latwhy serve -p "$SPID" --sample off --slow 1ms --listen "127.0.0.1:$mport" \
		--capture-dir "$caps" >"$OUT/serve3.out" 2>"$OUT/serve3.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/serve3.err" "^latwhy: tracing pid $SPID (lat_server)$" "$lpid" 10; then
		fail serve_counts "not traced: $(tail -2 "$OUT/serve3.err")"
		cleanup
		return
	fi
	start_client 8
	cpid=${PIDS[-1]}
	"$T/lw_hog" -C "$SRV_CPU" -d 4 &
	PIDS+=("$!")
	wait "$cpid" # no request after it
	sleep 2.5    # two of serve's ticks: the last counts published
	serve_scrape "$mport" "$OUT/metrics3.txt" 'True' 5
	kill -USR1 "$lpid"
	if ! wait_for "$OUT/serve3.err" "^latwhy: wrote $caps/.*-signal\.lwy " "$lpid" 10; then
		fail serve_counts "no capture on SIGUSR1: $(tail -2 "$OUT/serve3.err")"
		cleanup
		return
	fi
	f=$caps/$(dir_names "$caps" | head -1)
	./latwhy report --json "$f" >"$OUT/counts.json" 2>"$OUT/counts.err"
	if msg=$(python3 - "$OUT/metrics3.txt" "$OUT/counts.json" 2>&1 <<'EOF'
import json, sys
m = dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in open(sys.argv[1]).read().splitlines()
                                    if l and not l.startswith("#")))
summ = [o for o in map(json.loads, open(sys.argv[2])) if o["type"] == "summary"][0]
key = 'latwhy_%s{target="lat_server",cause="%s"}'
assert m["latwhy_events_dropped_total"] == 0 and summ["dropped"] == 0, "records dropped"
slow = m[key % ("slow_requests_total", "sched")]
assert slow >= 50, "only %d slow requests for sched with lw_hog on the CPU" % slow
named = 0
for c, v in summ["causes"].items():
    k = m[key % ("slow_requests_total", c)]
    assert k == v["requests"], "%s: the kernel counted %d, the engine %d" % (c, k, v["requests"])
    named += v["requests"]
    if v["ns"] is not None:
        secs = m[key % ("slow_request_seconds_total", c)]
        assert abs(secs - v["ns"] / 1e9) < 1e-6, "%s: %.9f s, the engine %.9f s" % (c, secs, v["ns"] / 1e9)
none = summ["slow_requests"] - named + summ["handoff_slow_requests"]
assert m[key % ("slow_requests_total", "none")] == none, (m[key % ("slow_requests_total", "none")], none)
print("%d slow requests, sched %d" % (summ["slow_requests"], slow))
EOF
	); then
		pass serve_counts
		echo "  $msg"
	else
		fail serve_counts "$(tail -1 <<<"$msg") $(head -1 "$OUT/counts.err")"
	fi
	stop_child "$lpid"
	cleanup
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

# shellcheck source=tests/integration/quota.sh
. tests/integration/quota.sh

if [ "$(id -u)" != 0 ]; then
	echo "SKIP integration: loading BPF programs needs root (or CAP_BPF+CAP_PERFMON)"
	exit 0
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "SKIP integration: the kernel has no BTF (/sys/kernel/btf/vmlinux)"
	exit 0
fi
TESTS=("$@")
[ ${#TESTS[@]} -eq 0 ] && TESTS=(cli_errors target_exits skip uprobe syscall unix eventloop arrival slots gateway sched self_place capture capture_damage capture_bad idle idle_fix irq check_irq_cost rps ksoftirqd veth backlog_idle freq thp lab_recover nic serve serve_sample serve_capture serve_counts caps cgroup quota accuracy)
for t in "${TESTS[@]}"; do
	# These put the server on its own CPU, away from the client and latwhy.
	case $t in
	cli_errors | target_exits | uprobe | unix | accuracy) ;;
	*) if [ "$NCPU" -lt 2 ]; then
		skip "$t" "needs 2 CPUs, may run on $NCPU"
		continue
	fi ;;
	esac
	"test_$t"
done
echo "integration: $PASSES passed, $FAILS failed, $SKIPS skipped"
[ "$FAILS" -eq 0 ]
