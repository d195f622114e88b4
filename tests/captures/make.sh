#!/bin/bash
# Record the golden captures report is tested on (root, BPF, about a minute):
# one per injected cause, one of a quiet server (this VM has no frequency
# data), and one cut short. Then pins what report prints of each
# (tests/captures/check.sh --update).
#
#   tests/captures/make.sh [NAME ...]     default: all
set -u
cd "$(dirname "$0")/../.." || exit 1
LAB_PROG=make.sh
# shellcheck source=tools/lab.sh
. tools/lab.sh
T=build/tools
DIR=tests/captures
SRV_CPU=$(($(nproc) - 1))
CLI_CPU=0
WORK=$(mktemp -d /tmp/latwhy-captures.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait; rm -rf "$WORK"' EXIT

# capture NAME CAUSE: server, client, the injector for CAUSE (- for none),
# 4 s recorded into DIR/NAME.lwy
capture() {
	local name=$1 cause=$2 srv port
	"$T/lat_server" -p 0 -c "$SRV_CPU" >"$WORK/server.out" 2>&1 &
	srv=$!
	PIDS+=("$srv")
	wait_for "$WORK/server.out" 'port=' "$srv" 10 || { echo "make.sh: no server" >&2; return 1; }
	port=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$WORK/server.out")
	"$T/lat_client" -p "$port" -c 1 -C "$CLI_CPU" -d 60 -q >/dev/null 2>&1 &
	PIDS+=("$!")
	if [ "$cause" != - ]; then
		tools/inject.sh "$cause" "$SRV_CPU" 30 >"$WORK/inject.out" 2>&1 &
		PIDS+=("$!")
		wait_for "$WORK/inject.out" '^inject.sh: ' "$!" 90 || { echo "make.sh: $cause injector failed" >&2; return 1; }
	fi
	sleep 1
	rm -f "$DIR/$name.lwy"
	./latwhy record -p "$srv" -d 4s -q -o "$DIR/$name.lwy" || return 1
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	PIDS=()
	echo "make.sh: $DIR/$name.lwy ($(stat -c %s "$DIR/$name.lwy") bytes)"
}

NAMES=("$@")
[ ${#NAMES[@]} -eq 0 ] && NAMES=(quiet sched irq softirq thp cut)
for n in "${NAMES[@]}"; do
	case $n in
	quiet) capture quiet - ;;
	cut) # the sched capture cut inside a RECORDS chunk, as a kill -9 leaves one
		head -c $(($(stat -c %s "$DIR/sched.lwy") * 55 / 100)) "$DIR/sched.lwy" >"$DIR/cut.lwy" ;;
	*) capture "$n" "$n" ;;
	esac || exit 1
done
exec tests/captures/check.sh --update
