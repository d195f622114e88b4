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

# Has our child $1 exited? A zombie counts, and so does a pid that is no
# longer our child (bash reaped it already; the number may even be reused).
gone() {
	local stat ppid
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
	stat=${stat##*) }
	read -r _ ppid _ <<<"$stat"
	[ "${stat%% *}" = Z ] || [ "$ppid" != $$ ]
}

# stop PID: SIGTERM a child, SIGKILL it after 5 s, reap it. Polls instead of a
# bare `wait`: in a trap that interrupted `wait`, bash can block in `wait` on a
# child it has already reaped until some other child exits.
stop() {
	local i
	[ -n "$1" ] || return 0
	gone "$1" || kill -TERM "$1" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		gone "$1" && break
		sleep 0.1
	done
	gone "$1" || kill -KILL "$1" 2>/dev/null
	while ! gone "$1"; do
		sleep 0.1
	done
	[ -e "/proc/$1" ] && wait "$1" 2>/dev/null
	return 0
}

# latwhy first, so it prints what it saw; then the injector, which restores
# the system settings it changed.
cleanup() {
	# A second Ctrl-C must not leave the injector's settings behind.
	trap '' INT TERM
	stop "$LATWHY_PID"
	stop "$INJECT_PID"
	stop "$CLIENT_PID"
	stop "$SERVER_PID"
	LATWHY_PID=
	INJECT_PID=
	CLIENT_PID=
	SERVER_PID=
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_for FILE PATTERN PID: until FILE matches PATTERN (0), PID exits or 10 s pass.
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		gone "$3" && break
		sleep 0.1
	done
	grep -q "$2" "$1" 2>/dev/null
}

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
# line ends in "for Ns" once the interference runs; errors do not.
start_injector() {
	tools/inject.sh "$CAUSE" "$SRV_CPU" $((SECS + 60)) >"$WORK/inject.out" 2>&1 &
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
	stop "$CLIENT_PID"
	CLIENT_PID=
	stop "$INJECT_PID"
	INJECT_PID=
	stop "$SERVER_PID"
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
