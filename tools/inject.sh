#!/bin/bash
# inject.sh - interference injectors for the latwhy lab.
#
#   tools/inject.sh KIND CPU SECONDS   aim interference at CPU for SECONDS
#   tools/inject.sh irq-cpu            print the CPU disk completion IRQs land on
#
# KIND:
#   sched    lw_hog busy-loops on CPU at nice 0
#   irq      O_DIRECT reads issued from another CPU, completion IRQs on CPU
#            (exit 3 if the disk IRQ does not land on CPU: it is not moved)
#   softirq  lo's RPS steers receive processing to CPU; UDP from another CPU in
#            bursts, one NET_RX run per interrupt (INJECT_SOFTIRQ=flood: datagram
#            by datagram, an interrupt for nearly each: more events, make bench)
#   thp      THP always + eager khugepaged; fragment 512 MiB from another CPU
#   idle     CPU halts as soon as it is idle: its PM QoS resume latency
#            unconstrained, and haltpoll's guest_halt_poll_ns 0 where that is
#            the governor (a VM's halted vCPU; on metal, the C-states the idle
#            governor picks). The accuracy lab otherwise keeps the server's
#            CPU polling (awake_cpus in lab.sh): this is what it undoes.
#
#   INJECT_AVOID=CPU[,CPU...]: CPUs the helpers keep off where another CPU
#   besides CPU is free of them (the lab's client's, on a machine with three
#   or more); on two CPUs they share the one left.
#
#   INJECT_HELPERS=idle (default) or nice: how the helpers on the other CPU
#   run. idle: SCHED_IDLE, preempted at once by any waking task there, so they
#   delay nothing else on that CPU (the lab's client). nice: nice 19, which
#   takes more of that CPU and so makes more events per second (make bench);
#   thp then also runs khugepaged and kcompactd at nice 0 instead of their 19
#   (restored): on a CPU that other injectors keep busy they hardly ran, and
#   make bench's 30 s windows saw no khugepaged scan at all.
#
# Prints one line saying what it does. Every setting it changes is restored,
# and every helper stopped, on exit, also on failure, SIGINT or SIGTERM.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAB_PROG=inject.sh
# shellcheck source=tools/lab.sh
. "$ROOT/tools/lab.sh"
TOOLS=$ROOT/build/tools
LAB=/var/tmp/latwhy-lab
DISK_FILE=$LAB/disk.img
DISK_MB=256
THP=/sys/kernel/mm/transparent_hugepage
RPS=/sys/class/net/lo/queues/rx-0/rps_cpus

PIDS=()      # helpers to stop
NICE_PID=() # kernel threads reniced, and their old nice values
NICE_OLD=()

case ${INJECT_HELPERS:-idle} in
idle) HELPER=(chrt -i 0) ;;
nice) HELPER=(nice -n 19) ;;
*)
	echo "inject.sh: INJECT_HELPERS must be idle or nice, not '$INJECT_HELPERS'" >&2
	exit 2
	;;
esac

AVOID=()
if [ -n "${INJECT_AVOID:-}" ]; then
	if ! [[ $INJECT_AVOID =~ ^[0-9]+(,[0-9]+)*$ ]]; then
		echo "inject.sh: INJECT_AVOID must be a comma-separated list of CPUs, not '$INJECT_AVOID'" >&2
		exit 2
	fi
	IFS=, read -ra AVOID <<<"$INJECT_AVOID"
fi

case ${INJECT_SOFTIRQ:-burst} in
burst | flood) ;;
*)
	echo "inject.sh: INJECT_SOFTIRQ must be burst or flood, not '$INJECT_SOFTIRQ'" >&2
	exit 2
	;;
esac

die() {
	echo "inject.sh: $*" >&2
	exit 1
}

# helper_cpu: where the helpers run: a CPU other than the target's, off the
# INJECT_AVOID CPUs where there is one.
helper_cpu() {
	other_cpu "$CPU" "${AVOID[@]}" || die "need a second online CPU besides CPU $CPU"
}

usage() {
	echo "usage: tools/inject.sh {sched|irq|softirq|thp|idle} CPU SECONDS | tools/inject.sh irq-cpu" >&2
	exit 2
}

cleanup() {
	local i p
	# A second Ctrl-C must not cut the restoring short.
	trap '' INT TERM
	for p in "${PIDS[@]}"; do
		gone "$p" || kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		reap "$p"
	done
	PIDS=()
	restore_knobs
	for ((i = ${#NICE_PID[@]} - 1; i >= 0; i--)); do
		renice -n "${NICE_OLD[i]}" -p "${NICE_PID[i]}" >/dev/null 2>&1 ||
			echo "inject.sh: could not restore the nice value of ${NICE_PID[i]} to ${NICE_OLD[i]}" >&2
	done
	NICE_PID=()
	NICE_OLD=()
	restore_affinity
	rm -f "$LAB/fragment.$$" "$LAB/tick.$$"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# knob FILE VALUE: set_knob (lab.sh), or die.
knob() {
	set_knob "$1" "$2" || die "cannot set $1 to '$2'"
}

# set_nice NICE PID...: remember each old value first, as set_knob does.
set_nice() {
	local n=$1 p old
	shift
	for p in "$@"; do
		old=$(ps -o nice= -p "$p" 2>/dev/null) || continue
		old=${old// /}
		[ "$old" = "$n" ] && continue
		NICE_PID+=("$p")
		NICE_OLD+=("$old")
		renice -n "$n" -p "$p" >/dev/null 2>&1 || die "cannot renice $p to $n"
	done
}

# Two runs changing the same knobs would restore each other's values: the
# second saves the first's "always" and writes it back last. One at a time.
lock_kind() {
	mkdir -p "$LAB" || die "cannot create $LAB"
	exec 9>"$LAB/$1.lock" || die "cannot open $LAB/$1.lock"
	flock -n 9 || die "$1: another inject.sh $1 is running"
}

need_tool() {
	[ -x "$TOOLS/$1" ] || die "$TOOLS/$1 missing (run make)"
}

# wait_helpers SECONDS: let the helpers run; stop early if one fails. Polls
# once a second instead of one long `wait -n`: bash can defer a trap that
# lands just before a blocking wait until that wait ends, which could hold a
# SIGTERM for the whole run. The second is a `read -t` on a FIFO that nothing
# writes, not a `sleep`: a forked sleep runs on the client's CPU, and under
# PREEMPT_NONE a waking client waits for its fork and exec to leave the
# kernel; with THP injected an exec can compact memory first (latwhy traced
# on the client showed inject.sh ahead of it for 20 ms in 20 s).
wait_helpers() {
	local end p rc tick fifo="$LAB/tick.$$"
	local -a left
	{ mkdir -p "$LAB" && mkfifo "$fifo"; } || die "cannot create $fifo"
	exec {tick}<>"$fifo"
	rm -f "$fifo"
	end=$((${EPOCHREALTIME//[!0-9]/} + $1 * 1000000))
	while [ "${EPOCHREALTIME//[!0-9]/}" -lt "$end" ]; do
		left=()
		for p in "${PIDS[@]}"; do
			if gone "$p"; then
				wait "$p"
				rc=$?
				[ "$rc" -eq 0 ] || die "helper pid $p failed (exit $rc)"
			else
				left+=("$p")
			fi
		done
		PIDS=("${left[@]}")
		read -r -t 1 -u "$tick" _
	done
	exec {tick}>&-
}

# ---- disk completion IRQs ----------------------------------------------------

# /proc/interrupts as "IRQ NAME TOTAL" lines, numbered IRQs only.
irq_table() {
	awk 'NR == 1 { ncpu = NF; next }
	     $1 ~ /^[0-9]+:$/ {
		t = 0
		for (i = 2; i <= ncpu + 1; i++) t += $i
		print substr($1, 1, length($1) - 1), $NF, t
	     }' /proc/interrupts
}

# The driver instance behind the disk holding $LAB: virtio1, nvme0, ...
disk_driver_name() {
	local src disk
	src=$(findmnt -no SOURCE -T "$LAB" 2>/dev/null) || return 1
	disk=$(lsblk -no PKNAME "$src" 2>/dev/null | head -1)
	[ -n "$disk" ] || disk=$(basename "$src")
	basename "$(readlink -f "/sys/class/block/$disk/device")"
}

# IRQs (as "IRQ NAME" lines) whose counters grow during O_DIRECT reads.
probe_disk_irqs() {
	ensure_disk_file || return 1
	irq_table >"$LAB/irq.before"
	taskset -c "$(other_cpu "${1:-0}")" dd if="$DISK_FILE" of=/dev/null iflag=direct bs=4k \
		count=512 status=none || return 1
	irq_table | awk 'NR == FNR { before[$1] = $3; next }
			 $3 - before[$1] >= 256 { print $1, $2 }' "$LAB/irq.before" -
	rm -f "$LAB/irq.before"
}

# The disk's completion IRQs as "IRQ NAME" lines: by the device behind $LAB,
# then by well-known names, then by probing.
disk_irqs() {
	local drv found
	mkdir -p "$LAB" || return 1
	drv=$(disk_driver_name)
	if [ -n "$drv" ]; then
		found=$(irq_table | awk -v d="$drv" \
			'index($2, d "-req") == 1 || $2 ~ ("^" d "q[1-9][0-9]*$") { print $1, $2 }')
	fi
	if [ -z "${found:-}" ]; then
		found=$(irq_table | awk '$2 ~ /^(virtio[0-9]+-req|nvme[0-9]+q[1-9]|ahci|ata)/ {
			print $1, $2 }')
	fi
	[ -n "${found:-}" ] || found=$(probe_disk_irqs "$@")
	[ -n "${found:-}" ] && echo "$found"
}

# The single CPU all of the disk's completion IRQs land on, or fail.
disk_irq_cpu() {
	local irqs irq name cpu="" c
	irqs=$(disk_irqs) || return 1
	while read -r irq name; do
		c=$(cat "/proc/irq/$irq/effective_affinity_list" 2>/dev/null) || return 1
		[[ $c =~ ^[0-9]+$ ]] || return 1
		[ -z "$cpu" ] || [ "$cpu" = "$c" ] || return 1
		cpu=$c
	done <<<"$irqs"
	[ -n "$cpu" ] && echo "$cpu"
}

ensure_disk_file() {
	local size
	mkdir -p "$LAB" || return 1
	size=$(stat -c %s "$DISK_FILE" 2>/dev/null)
	[ "${size:-0}" -eq $((DISK_MB << 20)) ] && return 0
	# Written, not fallocated: O_DIRECT reads of unwritten extents never reach the disk.
	dd if=/dev/zero of="$DISK_FILE.tmp" bs=1M count="$DISK_MB" oflag=direct conv=fsync \
		status=none && mv "$DISK_FILE.tmp" "$DISK_FILE"
}

# ---- injectors ---------------------------------------------------------------

inject_sched() {
	need_tool lw_hog
	"$TOOLS/lw_hog" -C "$CPU" -d "$DUR" &
	PIDS+=("$!")
	echo "inject.sh: sched: lw_hog pid=$! busy-loops on CPU $CPU at nice 0 for ${DUR}s"
	wait_helpers "$DUR"
}

# The exit from idle is the cause: the wake-up of a request's thread waits
# for its CPU to leave the state it entered. A PM QoS resume latency of "n/a"
# (what awake_cpus writes) lets the idle governor pick only polling; 0 is no
# constraint. haltpoll polls up to guest_halt_poll_ns before it halts.
inject_idle() {
	local qos=/sys/devices/system/cpu/cpu$CPU/power/pm_qos_resume_latency_us
	local hp=/sys/module/haltpoll/parameters/guest_halt_poll_ns desc
	[ -w "$qos" ] || die "idle: $qos is not writable"
	lock_kind idle
	knob "$qos" 0
	desc="pm_qos_resume_latency_us 0"
	if [ -w "$hp" ] && [ "$(cat /sys/devices/system/cpu/cpuidle/current_governor 2>/dev/null)" = haltpoll ]; then
		knob "$hp" 0
		desc+=", guest_halt_poll_ns 0"
	fi
	echo "inject.sh: idle: CPU $CPU enters idle states at once ($desc) for ${DUR}s"
	wait_helpers "$DUR"
}

inject_irq() {
	local irqs irq name c other desc="" i
	irqs=$(disk_irqs "$CPU") || die "irq: no disk completion IRQ found in /proc/interrupts"
	while read -r irq name; do
		c=$(cat "/proc/irq/$irq/effective_affinity_list" 2>/dev/null)
		if [ "$c" != "$CPU" ]; then
			echo "inject.sh: irq: disk IRQ $irq ($name) lands on CPU ${c:-?}, not CPU $CPU;" \
				"not moving it (try CPU $(disk_irq_cpu || echo '?'))" >&2
			exit 3
		fi
		desc+="irq=$irq name=$name "
	done <<<"$irqs"
	ensure_disk_file || die "irq: cannot create $DISK_FILE"
	other=$(helper_cpu) || exit 1
	# timeout(1) runs each loop in its own process group and, when signalled,
	# passes the signal to the whole group: the running dd stops too.
	# INJECT_HELPERS=idle: the readers' own CPU time never delays what else
	# runs on the other CPU (the lab's client), only their IRQs land on CPU.
	for i in 1 2; do
		# shellcheck disable=SC2016 # $1 is expanded by the inner sh
		timeout -s TERM $((DUR + 5)) "${HELPER[@]}" taskset -c "$other" sh -c \
			'while dd if="$1" of=/dev/null iflag=direct bs=4k status=none; do :; done' \
			sh "$DISK_FILE" &
		PIDS+=("$!")
	done
	echo "inject.sh: irq: ${desc}cpu=$CPU: 2 O_DIRECT 4k readers of $DISK_FILE on CPU $other for ${DUR}s"
	wait_helpers "$DUR"
}

inject_softirq() {
	local old other
	need_tool udp_flood
	[ -w "$RPS" ] || die "softirq: $RPS not writable (kernel without RPS?)"
	lock_kind softirq
	old=$(cat "$RPS")
	other=$(helper_cpu) || exit 1
	knob "$RPS" "$(cpu_mask "$CPU")"
	# Bursts by default: datagram by datagram, nearly each one costs the
	# CPU an RPS interrupt, and on a VM each interrupt some 8 us outside
	# the guest that no tracer sees (tools/accuracy/noise.sh), as much as
	# the softirq time itself. NAPI batches a busy NIC's receive the same.
	local mode=(-b 2000) how="bursts (2000/s of 1024 datagrams)"
	if [ "${INJECT_SOFTIRQ:-burst}" = flood ]; then
		mode=()
		how="flood (datagram by datagram)"
	fi
	# INJECT_HELPERS=idle: the sender soaks up the other CPU without delaying
	# the client there (a waking task preempts it at once; nice 19 does not).
	"${HELPER[@]}" taskset -c "$other" "$TOOLS/udp_flood" -p 0 -C "$CPU" -d "$DUR" "${mode[@]}" &
	PIDS+=("$!")
	echo "inject.sh: softirq: lo rps_cpus $old -> $(cat "$RPS") (CPU $CPU);" \
		"UDP $how from CPU $other, receiver on CPU $CPU, for ${DUR}s"
	wait_helpers "$DUR"
}

inject_thp() {
	local other k was="" ready="$LAB/fragment.$$"
	need_tool fragment
	[ -w "$THP/enabled" ] || die "thp: $THP not writable (kernel without THP?)"
	lock_kind thp
	# Fragment first, and say ready only once it is done: populating
	# 512 MiB of fresh memory stalled the other vCPU for 50 ms on the
	# development VM with THP untouched (the host's work, invisible to the
	# guest), which a client already running would count as THP's. The
	# fragmenter runs on the other CPU, by default SCHED_IDLE, so as not to
	# delay the client.
	other=$(helper_cpu) || exit 1
	"${HELPER[@]}" taskset -c "$other" "$TOOLS/fragment" -d "$DUR" >"$ready" &
	PIDS+=("$!")
	wait_for "$ready" '^fragment: ' "$!" 60 || die "thp: fragment did not finish: $(cat "$ready")"
	rm -f "$ready"
	for k in enabled defrag khugepaged/defrag khugepaged/pages_to_scan \
		khugepaged/scan_sleep_millisecs khugepaged/alloc_sleep_millisecs; do
		was+="$k=$(knob_value "$THP/$k") "
	done
	knob "$THP/enabled" always
	knob "$THP/defrag" always
	knob "$THP/khugepaged/defrag" 1
	knob "$THP/khugepaged/pages_to_scan" 4096
	knob "$THP/khugepaged/scan_sleep_millisecs" 10
	knob "$THP/khugepaged/alloc_sleep_millisecs" 10
	# khugepaged and kcompactd work on the server's CPU only: the cause is
	# meant to hit the server, and on the client's CPU they would delay the
	# client, which no server-side tracer can see.
	local p pinned="" kthreads
	kthreads=$(pgrep -x khugepaged; pgrep '^kcompactd')
	for p in $kthreads; do
		set_affinity "$CPU" "$p" && pinned+=" $(cat "/proc/$p/comm" 2>/dev/null)"
	done
	# shellcheck disable=SC2086 # a list of pids
	[ "${INJECT_HELPERS:-idle}" = nice ] && set_nice 0 $kthreads && pinned+=" at nice 0"
	echo "inject.sh: thp: enabled=always defrag=always khugepaged defrag=1 pages_to_scan=4096" \
		"scan/alloc_sleep=10ms (was ${was% }); on CPU $CPU:${pinned:- (none pinned)};" \
		"fragmented 512 MiB (${INJECT_HELPERS:-idle}) on CPU $other, held for ${DUR}s"
	wait_helpers "$DUR"
}

# ---- main --------------------------------------------------------------------

if [ "${1:-}" = irq-cpu ]; then
	[ $# -eq 1 ] || usage
	disk_irq_cpu || die "irq-cpu: cannot tell which CPU the disk completion IRQs land on"
	exit 0
fi
[ $# -eq 3 ] || usage
KIND=$1
CPU=$2
DUR=$3
[[ $CPU =~ ^[0-9]+$ ]] || die "bad CPU '$CPU'"
online_cpus | grep -qx "$CPU" || die "CPU $CPU is not online"
if ! [[ $DUR =~ ^[0-9]+$ ]] || [ "$DUR" -eq 0 ]; then
	die "bad SECONDS '$DUR' (whole seconds > 0)"
fi
DUR=$((10#$DUR))
[ "$(id -u)" -eq 0 ] || die "must run as root"

case $KIND in
sched) inject_sched ;;
irq) inject_irq ;;
softirq) inject_softirq ;;
thp) inject_thp ;;
idle) inject_idle ;;
*) usage ;;
esac
