#!/bin/bash
# demo.sh - what `make demo` runs: a latency server under load, one injected
# cause of slow requests aimed at the server's CPU, and latwhy explaining them.
#
#   DEMO_CAUSE    sched (default), irq, softirq or thp: the tools/inject.sh KIND
#   DEMO_SECONDS  how long latwhy traces (default 10)
#   DEMO_CONNS    client connections (default 1: one server thread, so the only
#                 competition for its CPU is the injected one)
#   LATWHY        the tracer to run (default ./latwhy)
#
# The server runs on the last CPU (for irq: the CPU the disk IRQ lands on),
# the client on another CPU. Every child is stopped on any exit.
set -u
cd "$(dirname "$0")/.." || exit 1
LAB_PROG=demo.sh
# shellcheck source=tools/lab.sh
. tools/lab.sh

T=build/tools
LATWHY=${LATWHY:-./latwhy}
CAUSE=${DEMO_CAUSE:-sched}
SECS=${DEMO_SECONDS:-10}
CONNS=${DEMO_CONNS:-1}
WORK=
SERVER_PID=
CLIENT_PID=
INJECT_PID=
LATWHY_PID=

die() {
	echo "demo.sh: $*" >&2
	exit 1
}

# latwhy first, so it prints what it saw; then the injector, which restores
# the system settings it changed.
cleanup() {
	# A second Ctrl-C must not leave the injector's settings behind.
	trap '' INT TERM
	stop_child "$LATWHY_PID"
	stop_child "$INJECT_PID"
	stop_child "$CLIENT_PID"
	stop_child "$SERVER_PID"
	LATWHY_PID=
	INJECT_PID=
	CLIENT_PID=
	SERVER_PID=
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

last_cpu() {
	local online
	online=$(cat /sys/devices/system/cpu/online)
	echo "${online##*[,-]}"
}

start_server() {
	"$T/lat_server" -p 0 -c "$SRV_CPU" "${SERVER_ARGS[@]}" >"$WORK/server.out" 2>&1 &
	SERVER_PID=$!
	wait_for "$WORK/server.out" 'port=' "$SERVER_PID" ||
		die "server did not start: $(tail -1 "$WORK/server.out")"
	PORT=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$WORK/server.out")
	echo "demo: $(head -1 "$WORK/server.out") on CPU $SRV_CPU ${SERVER_ARGS[*]}"
}

# Runs until stopped with SIGTERM, which still prints the summary line.
start_client() {
	"$T/lat_client" -p "$PORT" -c "$CONNS" -C "$CLI_CPU" -d 86400 -q >"$WORK/client.out" 2>&1 &
	CLIENT_PID=$!
	echo "demo: lat_client $CONNS connection(s) on CPU $CLI_CPU"
	sleep 1
	! gone "$CLIENT_PID" || die "client failed: $(tail -1 "$WORK/client.out")"
}

# Outlasts latwhy's start-up and run; stopped explicitly afterwards. Its
# line ends in "for Ns" once the interference runs; errors do not. The
# script itself stays off the server's CPU (its helpers pin themselves):
# latwhy would rightly name it among what ran there.
start_injector() {
	taskset -c "$CLI_CPU" tools/inject.sh "$CAUSE" "$SRV_CPU" $((SECS + 60)) >"$WORK/inject.out" 2>&1 &
	INJECT_PID=$!
	wait_for "$WORK/inject.out" '^inject.sh: .* for [0-9]*s$' "$INJECT_PID" ||
		die "injector failed: $(tail -1 "$WORK/inject.out")"
	echo "demo: $(head -1 "$WORK/inject.out")"
}

run_demo() {
	local rc

	start_server
	start_client
	start_injector
	echo "demo: $LATWHY -p $SERVER_PID -d ${SECS}s"
	# In the background so that a signal to this script is handled at once
	# (bash runs traps only after a foreground child ends); latwhy installs
	# its own SIGINT handler, so Ctrl-C still reaches it.
	"$LATWHY" -p "$SERVER_PID" -d "${SECS}s" &
	LATWHY_PID=$!
	wait "$LATWHY_PID"
	rc=$?
	LATWHY_PID=
	stop_child "$CLIENT_PID"
	CLIENT_PID=
	stop_child "$INJECT_PID"
	INJECT_PID=
	stop_child "$SERVER_PID"
	SERVER_PID=
	echo "demo: client: $(grep '^requests=' "$WORK/client.out" || tail -1 "$WORK/client.out")"
	return "$rc"
}

[ "$(id -u)" -eq 0 ] || die "must run as root (latwhy loads BPF programs; injectors change sysfs)"
case $CAUSE in
sched | irq | softirq | thp) ;;
*) die "DEMO_CAUSE must be sched, irq, softirq or thp, not '$CAUSE'" ;;
esac
if ! [[ $SECS =~ ^[0-9]+$ ]] || [ "$SECS" -eq 0 ]; then
	die "DEMO_SECONDS must be whole seconds > 0, not '$SECS'"
fi
SECS=$((10#$SECS))
[[ $CONNS =~ ^[1-9][0-9]*$ ]] || die "DEMO_CONNS must be a whole number > 0, not '$CONNS'"
command -v "$LATWHY" >/dev/null || die "$LATWHY not found (run make, or set LATWHY)"
for t in lat_server lat_client; do
	[ -x "$T/$t" ] || die "$T/$t missing (run make)"
done

SRV_CPU=$(last_cpu)
CLI_CPU=0
if [ "$CAUSE" = irq ]; then
	SRV_CPU=$(tools/inject.sh irq-cpu 2>/dev/null) ||
		die "cannot find the CPU the disk completion IRQ lands on (tools/inject.sh irq-cpu)"
fi
[ "$SRV_CPU" -eq 0 ] && CLI_CPU=$(last_cpu)
[ "$SRV_CPU" -ne "$CLI_CPU" ] || die "needs at least 2 CPUs"

# THP trouble needs a server whose memory changes: a madvised heap that an
# allocator-style purge keeps splitting, for khugepaged to collapse again.
SERVER_ARGS=()
[ "$CAUSE" = thp ] && SERVER_ARGS=(--thp -R 200)

WORK=$(mktemp -d /tmp/latwhy-demo.XXXXXX) || die "mktemp failed"
run_demo
