#!/bin/bash
# noise.sh - how much of the server CPU each injector takes, and how much of
# that no tracepoint in the guest sees.
#
#   tools/accuracy/noise.sh [-d SECONDS] [KIND ...]
#
# KIND: none, or an injector of tools/inject.sh (sched irq softirq thp);
# default: none softirq irq thp. For each, lw_noise spins on the server CPU
# (the lab's, quieted as for make accuracy) and measures the time it loses
# (every gap > 300 ns between two clock reads), while bpftrace sums what the
# tracepoints account for on its stack: hard-IRQ handlers, softirqs, the
# interrupt vectors (IPIs, local timer), and its time off the CPU. The rest
# is "hidden": time the CPU spent outside the guest, such as a VM's interrupt
# delivery, which latwhy (like any in-guest tracer) counts as the running
# task's own run time. Prints one table; a diagnostic, not a test.
#
# Needs root and bpftrace (installed with apt-get when missing); mounts
# tracefs when it is not, and restores every setting it changes on exit.
set -u
cd "$(dirname "$0")/../.." || exit 2
LAB_PROG=noise.sh
# shellcheck source=tools/lab.sh
. tools/lab.sh

SECS=4
KINDS=()
PIDS=()

usage() { lab_usage 5; }

while [ $# -gt 0 ]; do
	case $1 in
	-d)
		{ [ $# -ge 2 ] && [ "$2" -gt 0 ] 2>/dev/null; } || usage
		SECS=$2
		shift
		;;
	-h | --help) usage ;;
	-*) echo "noise.sh: unknown option '$1'" >&2 && usage ;;
	none | sched | irq | softirq | thp) KINDS+=("$1") ;;
	*) echo "noise.sh: unknown kind '$1'" >&2 && usage ;;
	esac
	shift
done
[ ${#KINDS[@]} -eq 0 ] && KINDS=(none softirq irq thp)
[ "$(id -u)" = 0 ] || { echo "noise.sh: needs root" >&2 && exit 1; }

# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	local i
	trap '' INT TERM
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		stop_child "${PIDS[i]}" 10
	done
	unquiet_cpu
	untracefs
	[ -n "$WORK" ] && rm -rf "$WORK"
}
WORK=
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! command -v bpftrace >/dev/null; then
	echo "noise.sh: installing bpftrace" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bpftrace >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bpftrace >/dev/null; } ||
		{ echo "noise.sh: cannot install bpftrace" >&2 && exit 1; }
fi
ensure_tracefs || { echo "noise.sh: tracefs is not mounted and could not be" >&2 && exit 1; }
make -s build/tools/lw_noise build/tools/lw_hog build/tools/udp_flood build/tools/fragment || exit 1

use_all_cpus
SRV_CPU=$(tools/inject.sh irq-cpu 2>/dev/null) || SRV_CPU=$(online_cpus | tail -1)
CLI_CPU=$(other_cpu "$SRV_CPU") || { echo "noise.sh: needs 2 CPUs" >&2 && exit 1; }
quiet_cpu "$SRV_CPU"
WORK=$(mktemp -d /tmp/latwhy-noise.XXXXXX) || exit 1

# pct NS: a bpftrace sum in ns over SECS, as a percentage of the time.
pct() {
	awk -v ns="${1:-0}" -v s="$SECS" 'BEGIN { printf "%.1f", ns / (s * 1e7) }'
}

# bt_val FILE NAME: the value bpftrace printed for @NAME, or 0.
bt_val() {
	awk -v k="@$2:" '$1 == k { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}

NONE_HIDDEN=
NONE_N=
measure() {
	local kind=$1 d=$WORK/$1 inj noise bt lost soft irq vec off nvec traced hidden per
	mkdir -p "$d"
	if [ "$kind" != none ]; then
		taskset -c "$CLI_CPU" tools/inject.sh "$kind" "$SRV_CPU" $((SECS + 6)) >"$d/inject" 2>&1 &
		inj=$!
		PIDS+=("$inj")
		sleep 2 # the injector's settings in place and its load running
	fi
	# the probe runs a second longer than bpftrace counts: both are rates
	build/tools/lw_noise -C "$SRV_CPU" -d $((SECS + 1)) >"$d/noise" 2>&1 &
	noise=$!
	PIDS+=("$noise")
	bpftrace tools/accuracy/noise.bt "$noise" "$SECS" >"$d/bt" 2>&1 &
	bt=$!
	PIDS+=("$bt")
	wait "$noise" "$bt"
	[ -n "${inj:-}" ] && stop_child "$inj" 10
	PIDS=()
	lost=$(awk '$1 == "lost" { sub("%", "", $2); print $2 }' "$d/noise")
	if [ -z "$lost" ] || ! grep -q '^Attaching' "$d/bt"; then
		printf '%-8s  failed: %s\n' "$kind" "$(cat "$d/noise" "$d/bt" | grep -v RLIMIT | tail -1)"
		return
	fi
	soft=$(pct "$(bt_val "$d/bt" soft_ns)")
	irq=$(pct "$(bt_val "$d/bt" irq_ns)")
	vec=$(pct "$(bt_val "$d/bt" vec_ns)")
	off=$(pct "$(bt_val "$d/bt" off_ns)")
	nvec=$(($(bt_val "$d/bt" n_vec) + $(bt_val "$d/bt" n_irq)))
	traced=$(awk -v a="$soft" -v b="$irq" -v c="$vec" -v e="$off" 'BEGIN { printf "%.1f", a + b + c + e }')
	hidden=$(awk -v l="$lost" -v t="$traced" 'BEGIN { printf "%.1f", l - t }')
	# the quiet CPU's own hidden time is not the interrupts': per added one
	[ "$kind" = none ] && NONE_HIDDEN=$hidden NONE_N=$nvec
	per=$(awk -v h="$hidden" -v n="$nvec" -v h0="${NONE_HIDDEN:-}" -v n0="${NONE_N:-}" -v s="$SECS" \
		'BEGIN { if (h0 == "" || n <= n0 * 2) print "-"; else printf "%.1f", (h - h0) / 100 * s * 1e6 / (n - n0) }')
	printf '%-8s  %5s%%  %7s%%  %4s%%  %7s%%  %7s%%  %6s%%  %6s%%  %9d  %s\n' "$kind" "$lost" "$soft" "$irq" \
		"$vec" "$off" "$traced" "$hidden" $((nvec / SECS)) "$per"
}

echo "latwhy noise: CPU $SRV_CPU, $SECS s per kind, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo
printf '%-8s  %6s  %8s  %5s  %8s  %8s  %7s  %7s  %9s  %s\n' kind lost softirq irq vectors 'off-cpu' traced hidden 'interr./s' \
	'hidden us per added interrupt'
for k in "${KINDS[@]}"; do
	measure "$k"
done
echo
echo "lost: the busy loop's gaps > 300 ns; softirq, irq, vectors (IPIs, local timer): handler time on"
echo "its stack; off-cpu: other tasks ran; hidden = lost - traced: time outside the guest that every"
echo "tracer in it counts as the task's own run time. Per added interrupt: the hidden time above the"
echo "none row's, over the interrupts above its (needs none first): an average, not a measurement of"
echo "any one interrupt."
