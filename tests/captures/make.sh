#!/bin/bash
# Record the golden captures report is tested on (root, BPF, about a minute):
# one per injected cause, one of a quiet server (this VM has no frequency
# data), one under a CPU quota (quota: 20 ms a 100 ms period), one with a low clock fed to the recorder's own lw_cpu_freq program
# (freq: lw_freqinject, as the accuracy lab's freq scenario), and one cut
# short. Then pins what report prints of each (tests/captures/check.sh
# --update).
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
FREQ_REF_MHZ=3700 # the freq capture's reference clock: 800 MHz of 3700, powersave's (field notes)
WORK=$(mktemp -d /tmp/latwhy-captures.XXXXXX)
PIDS=()
QCG=
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait; rm -rf "$WORK"; [ -z "$QCG" ] || rmdir "$QCG"' EXIT

# feed_clock PID: once latwhy PID records, the client's CPU at full clock
# (the --ref-mhz reference), the server's at full clock and 200 ms later at
# 800 MHz for the rest of the capture: a clock per CPU. No cpufreq driver
# here: the events go to that latwhy's own program.
feed_clock() {
	local id ref=$((FREQ_REF_MHZ * 1000))
	wait_for "$WORK/record.err" '^latwhy: recording pid' "$1" 20 || return 1
	id=$(held_prog "$1" lw_cpu_freq) || { echo "make.sh: latwhy $1 holds no lw_cpu_freq program" >&2; return 1; }
	{ "$T/lw_freqinject" -I "$id" "$CLI_CPU" "$ref" &&
		"$T/lw_freqinject" -I "$id" -i 200 "$SRV_CPU" "$ref" 800000; } >"$WORK/freq.log" 2>&1 ||
		{ echo "make.sh: lw_freqinject failed: $(tail -1 "$WORK/freq.log")" >&2; return 1; }
}

# quota_cgroup PID: the server into a cgroup of its own with 20 ms of CPU
# every 100 ms (tools/lab.sh's cpu_quota_where: v1 or v2), removed at exit.
quota_cgroup() {
	local where
	where=$(cpu_quota_where)
	[ -n "$where" ] || { echo "make.sh: no cpu controller for the quota capture" >&2; return 1; }
	QCG=${where#* }/latwhy-captures-$$
	mkdir "$QCG" && cpu_quota_set "${where%% *}" "$QCG" 20000 && echo "$1" >"$QCG/cgroup.procs"
}

# capture NAME CAUSE [RECORD OPTION ...]: server, client, the injector for
# CAUSE (- for none; freq: feed_clock), REC_DUR (default 4s) recorded into
# DIR/NAME.lwy
capture() {
	local name=$1 cause=$2 srv port rec
	shift 2
	"$T/lat_server" -p 0 -c "$SRV_CPU" >"$WORK/server.out" 2>&1 &
	srv=$!
	PIDS+=("$srv")
	wait_for "$WORK/server.out" 'port=' "$srv" 10 || { echo "make.sh: no server" >&2; return 1; }
	port=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$WORK/server.out")
	"$T/lat_client" -p "$port" -c 1 -C "$CLI_CPU" -d 60 -q >/dev/null 2>&1 &
	PIDS+=("$!")
	if [ "$cause" = quota ]; then
		quota_cgroup "$srv" || return 1
	elif [ "$cause" != - ] && [ "$cause" != freq ]; then
		tools/inject.sh "$cause" "$SRV_CPU" 30 >"$WORK/inject.out" 2>&1 &
		PIDS+=("$!")
		wait_for "$WORK/inject.out" '^inject.sh: ' "$!" 90 || { echo "make.sh: $cause injector failed" >&2; return 1; }
	fi
	sleep 1
	rm -f "$DIR/$name.lwy"
	./latwhy record -p "$srv" -d "${REC_DUR:-4s}" -q "$@" -o "$DIR/$name.lwy" 2>"$WORK/record.err" &
	rec=$!
	PIDS+=("$rec")
	# make.sh's own forks run on the client's CPU, not the server's: the
	# report would name them among the server's preemptors
	if [ "$cause" = freq ]; then
		(taskset -pc "$CLI_CPU" "$BASHPID" >/dev/null && feed_clock "$rec") || return 1
	fi
	wait "$rec" || { cat "$WORK/record.err" >&2; return 1; }
	cat "$WORK/record.err" >&2
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	PIDS=()
	echo "make.sh: $DIR/$name.lwy ($(stat -c %s "$DIR/$name.lwy") bytes)"
}

# freq_ok: the freq capture's report names frequency. Other load on the
# server's CPU can outweigh it: then it is to be recorded again. (Into a
# file, not a pipe: grep -q would leave report to die of SIGPIPE.)
freq_ok() {
	./latwhy report "$DIR/freq.lwy" >"$WORK/freq.report" 2>/dev/null
	grep -q '^Verdict: frequency' "$WORK/freq.report" && return 0
	echo "make.sh: $DIR/freq.lwy: the verdict is not frequency (other load on CPU $SRV_CPU?): run it again" >&2
	return 1
}

NAMES=("$@")
[ ${#NAMES[@]} -eq 0 ] && NAMES=(quiet sched irq softirq thp freq quota cut)
for n in "${NAMES[@]}"; do
	case $n in
	quiet) capture quiet - ;;
	# every request slow (--slow below the server's ~200 us of work), so
	# the clock's share of their running time is what the report weighs;
	# 2 s, as each of them is a record
	freq) REC_DUR=2s capture freq freq --ref-mhz "$FREQ_REF_MHZ" --slow 100us && freq_ok ;;
	cut) # the sched capture cut inside a RECORDS chunk, as a kill -9 leaves one
		head -c $(($(stat -c %s "$DIR/sched.lwy") * 55 / 100)) "$DIR/sched.lwy" >"$DIR/cut.lwy" ;;
	*) capture "$n" "$n" ;;
	esac || exit 1
done
# not exec: the EXIT trap removes WORK
tests/captures/check.sh --update
