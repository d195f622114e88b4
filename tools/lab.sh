# shellcheck shell=bash
# lab.sh - shell helpers shared by the lab scripts (demo.sh, inject.sh,
# accuracy/run.sh, accuracy/noise.sh, bench/run.sh). Sourced, not run:
#
#   LAB_PROG=demo.sh
#   . "$(dirname "$0")/lab.sh"
#
# LAB_PROG starts every message printed from here. Children are the calling
# script's own background processes ($$ is its pid, also in subshells).

# Has our child $1 exited? A zombie counts, and so does a pid that is no
# longer our child (bash reaped it already; the number may even be reused).
# Reads /proc without forking: it is polled often.
gone() {
	local stat ppid
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
	stat=${stat##*) }
	read -r _ ppid _ <<<"$stat"
	[ "${stat%% *}" = Z ] || [ "$ppid" != $$ ]
}

# reap PID [SECONDS]: wait for a signalled child, SIGKILL it after SECONDS
# (default 5). Polls instead of a bare `wait`: in a trap that interrupted
# `wait`, bash can block in `wait` on a child it has already reaped until
# some other child exits.
reap() {
	local i
	for ((i = 0; i < ${2:-5} * 10; i++)); do
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

# stop_child PID [SECONDS]: SIGTERM a child (every lab tool and latwhy finish
# cleanly on it; SIGINT is ignored by a script's background children), then
# reap it.
stop_child() {
	[ -n "$1" ] || return 0
	gone "$1" || kill -TERM "$1" 2>/dev/null
	reap "$@"
}

# wait_for FILE PATTERN PID [SECONDS]: until FILE matches PATTERN (0), the
# child PID exits or SECONDS (default 10) pass (1). Exited means seen gone
# twice, 0.1 s apart: the integration tests twice failed a server at once,
# "no output", that was then found running (state R).
wait_for() {
	local i
	for ((i = 0; i < ${4:-10} * 10; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		gone "$3" && sleep 0.1 && gone "$3" && break
		sleep 0.1
	done
	grep -q -- "$2" "$1" 2>/dev/null
}

# Online CPUs, one per line, from a list like "0-3,6".
online_cpus() {
	local part
	local -a parts
	IFS=, read -ra parts </sys/devices/system/cpu/online
	for part in "${parts[@]}"; do
		seq "${part%-*}" "${part#*-}"
	done
}

# use_all_cpus: a lab script places its own processes; one started with a
# narrower CPU list than the machine's (a launcher's leftover affinity, a
# taskset) would confine everything it does not pin there, and `nproc` would
# count only that list. Widen the script's own list to every online CPU, and
# say so. A cpuset that forbids it leaves the list as it was, also said.
use_all_cpus() {
	local all had
	local -a online
	mapfile -t online < <(online_cpus)
	[ "$(nproc)" -lt ${#online[@]} ] || return 0
	all=$(printf '%s,' "${online[@]}")
	all=${all%,}
	had=$(cpu_list $$)
	if taskset -a -pc "$all" $$ >/dev/null 2>&1; then
		echo "$LAB_PROG: started on CPUs $had only, of $all online; widened to all" >&2
	else
		echo "$LAB_PROG: may run on CPUs $had only, of $all online (cpuset?)" >&2
	fi
}

# cpu_list TID: the task's CPU list as taskset prints it ("0,1", "0-3"); fails
# for a task that is gone.
cpu_list() {
	local l
	l=$(taskset -pc "$1" 2>/dev/null) || return 1
	echo "${l##*: }"
}

# other_cpu CPU [AVOID...]: the first online CPU other than CPU that is none
# of AVOID; where every other CPU is one of them, the first other than CPU.
# Returns 1 if CPU is the only one.
other_cpu() {
	local c a first=
	for c in $(online_cpus); do
		[ "$c" = "$1" ] && continue
		[ -n "$first" ] || first=$c
		for a in "${@:2}"; do
			[ "$c" = "$a" ] && continue 2
		done
		echo "$c"
		return 0
	done
	[ -n "$first" ] || return 1
	echo "$first"
}

# lab_usage LINE: the script's synopsis, line LINE of its header comment,
# on stderr without the comment's "# ", then exit 2.
lab_usage() {
	sed -n "${1}p" "$0" | sed 's/^# \{0,3\}//' >&2
	exit 2
}

# cpu_mask CPU...: the hex mask of these CPUs in comma-separated 32-bit
# groups, as the kernel prints and parses cpumasks (rps_cpus, workqueue).
cpu_mask() {
	local c i max=0 out=""
	local -a grp=()
	for c in "$@"; do
		[ "$c" -gt "$max" ] && max=$c
	done
	for ((i = 0; i <= max / 32; i++)); do
		grp[i]=0
	done
	for c in "$@"; do
		grp[c / 32]=$((grp[c / 32] | (1 << (c % 32))))
	done
	for ((i = max / 32; i >= 0; i--)); do
		out+=$(printf '%08x' "${grp[i]}")
		[ "$i" -gt 0 ] && out+=,
	done
	echo "$out"
}

# A TCP port on 127.0.0.1 that nothing listens on: the kernel's choice.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# held_prog PID NAME: the id of the BPF program NAME (bpftool's name: the
# first 15 characters) that process PID holds open, by the prog_id lines of
# its fds' fdinfo: that latwhy's own program, not merely the newest of the
# name (another latwhy loaded at the time would be fed instead). Fails when
# PID holds none.
held_prog() {
	local held loaded
	held=$(awk '/^prog_id:/ { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u)
	loaded=$(bpftool prog show name "$2" 2>/dev/null | sed -n 's/^\([0-9]*\): .*/\1/p' | sort -u)
	comm -12 <(echo "$held") <(echo "$loaded") | grep -m1 .
}

# CPU lists changed by set_affinity and their old values, restored by
# restore_affinity (newest first), which the caller's EXIT trap must call.
LAB_AFF_TIDS=()
LAB_AFF_OLD=()

# set_affinity CPULIST TID...: tasks that refuse (per-CPU kernel threads, a
# task gone meanwhile) are left as they are. Returns 1 if no task is on
# CPULIST now. The old lists are journaled before any task moves, and the
# journal is rewritten without the tasks that refused.
set_affinity() {
	local cpus=$1 t old i n=${#LAB_AFF_TIDS[@]} moved=1
	local -a tids=() olds=()
	shift
	for t in "$@"; do
		old=$(cpu_list "$t") || continue
		[ "$old" = "$cpus" ] && moved=0 && continue
		LAB_AFF_TIDS+=("$t")
		LAB_AFF_OLD+=("$old")
	done
	journal_sync
	for ((i = n; i < ${#LAB_AFF_TIDS[@]}; i++)); do
		taskset -pc "$cpus" "${LAB_AFF_TIDS[i]}" >/dev/null 2>&1 || continue
		tids+=("${LAB_AFF_TIDS[i]}")
		olds+=("${LAB_AFF_OLD[i]}")
		moved=0
	done
	LAB_AFF_TIDS=("${LAB_AFF_TIDS[@]:0:n}" "${tids[@]}")
	LAB_AFF_OLD=("${LAB_AFF_OLD[@]:0:n}" "${olds[@]}")
	journal_sync
	return "$moved"
}

restore_affinity() {
	local i
	for ((i = ${#LAB_AFF_TIDS[@]} - 1; i >= 0; i--)); do
		[ -e "/proc/${LAB_AFF_TIDS[i]}" ] || continue
		taskset -pc "${LAB_AFF_OLD[i]}" "${LAB_AFF_TIDS[i]}" >/dev/null 2>&1 ||
			echo "$LAB_PROG: could not restore the CPU list of ${LAB_AFF_TIDS[i]} to ${LAB_AFF_OLD[i]}" >&2
	done
	LAB_AFF_TIDS=()
	LAB_AFF_OLD=()
	journal_sync
}

# quiet_cpu CPU...: these CPUs belong to the lab until unquiet_cpu (which the
# caller's EXIT trap must call; it also restores every set_knob): every task
# that may run elsewhere (the machine's own processes, unbound kernel threads
# such as kdamond and rcu_preempt, unbound workqueues) is confined to the
# other CPUs, so that what runs there is what the lab puts there. At least
# one online CPU must be left out. Per-CPU kernel threads
# (ksoftirqd, kworker/N:M) cannot move and stay: their work is the CPU's own.
LAB_WQ_MASK=/sys/devices/virtual/workqueue/cpumask
# Per-CPU vmstat folding runs every vm.stat_interval seconds on every CPU, in
# a kworker that cannot move: 0.2 ms a time on the development VM, which a
# 12 s baseline sees as a preemption or two. Once a minute while quiet.
LAB_STAT=/proc/sys/vm/stat_interval
# Free page reporting (virtio-balloon) hands freed memory back to the host
# from a kworker of the CPU that freed it, 2 s later: a server exiting on the
# quiet CPU left the next scenario's baseline a 4-43 ms run of
# page_reporting_process there (bpftrace, workqueue_execute_start/end). An
# order above the largest (10) reports nothing while the lab runs.
LAB_PAGE_REPORTING=/sys/module/page_reporting/parameters/page_reporting_order
# Conntrack's garbage collector scans its whole hash table about once a
# minute, from a kworker of the CPU it last ran on: 4.7 ms for 262144 empty
# buckets on the development VM, on the quiet CPU, in whichever scenario was
# running (bpftrace). With 1024 buckets it takes under 0.1 ms.
LAB_CT_BUCKETS=/proc/sys/net/netfilter/nf_conntrack_buckets
quiet_cpu() {
	local others list t
	local -a tids=()
	printf -v list '%s,' "$@"
	list=${list%,}
	others=$(online_cpus | grep -vxF "${@/#/-e}" | paste -sd, -)
	if [ -z "$others" ]; then
		echo "$LAB_PROG: cannot quiet CPU $list: no online CPU would be left for the rest" >&2
		return 1
	fi
	[ -w "$LAB_STAT" ] && set_knob "$LAB_STAT" 60
	[ -w "$LAB_PAGE_REPORTING" ] && set_knob "$LAB_PAGE_REPORTING" 11
	[ -w "$LAB_CT_BUCKETS" ] && [ "$(cat "$LAB_CT_BUCKETS")" -gt 1024 ] &&
		set_knob "$LAB_CT_BUCKETS" 1024
	# shellcheck disable=SC2086 # a list of CPUs
	[ -w "$LAB_WQ_MASK" ] && set_knob "$LAB_WQ_MASK" "$(cpu_mask ${others//,/ })"
	for t in /proc/[0-9]*/task/[0-9]*; do
		tids+=("${t##*/}")
	done
	set_affinity "$others" "${tids[@]}"
	echo "$LAB_PROG: CPU $list quieted: ${#LAB_AFF_TIDS[@]} tasks moved to CPU $others" >&2
}

unquiet_cpu() {
	restore_affinity
	restore_knobs
}

# Settings changed by set_knob and their old values, restored by
# restore_knobs (newest first, so a knob changed twice ends at its original
# value), which the caller's EXIT trap must call.
LAB_KNOB_FILE=()
LAB_KNOB_OLD=()

# The value to write back: the bracketed word of "always [madvise] never".
knob_value() {
	local v
	v=$(cat "$1") || return 1
	if [[ $v =~ \[([^]]*)\] ]]; then
		v=${BASH_REMATCH[1]}
	fi
	echo "$v"
}

# set_knob FILE VALUE: the old value is remembered first, so it is restored
# even if this write half-fails. Returns 1 if FILE cannot be read or written.
set_knob() {
	local old
	old=$(knob_value "$1") || return 1
	LAB_KNOB_FILE+=("$1")
	LAB_KNOB_OLD+=("$old")
	journal_sync
	echo "$2" 2>/dev/null >"$1"
}

restore_knobs() {
	local i
	for ((i = ${#LAB_KNOB_FILE[@]} - 1; i >= 0; i--)); do
		echo "${LAB_KNOB_OLD[i]}" 2>/dev/null >"${LAB_KNOB_FILE[i]}" ||
			echo "$LAB_PROG: could not restore ${LAB_KNOB_FILE[i]} to '${LAB_KNOB_OLD[i]}'" >&2
	done
	LAB_KNOB_FILE=()
	LAB_KNOB_OLD=()
	journal_sync
}

# ---- the journal: what a lab run that died had changed ------------------------
#
# An EXIT trap restores a script's settings, but nothing runs after SIGKILL (a
# CI timeout, the OOM killer, a shell's kill -9): a quieted CPU then stays
# quiet, with every movable task on the other CPUs, and every process started
# later inherits that narrow CPU list (it cost this project a CI run). So each
# script keeps what it has yet to restore in a journal file named after its
# pid and start time, and lab_recover, which runs whenever lab.sh is sourced
# as root, restores the journals of runs that are gone.
LAB_JOURNAL_DIR=${LAB_JOURNAL_DIR:-/run/latwhy-lab}
LAB_JOURNAL=

# A process's start time (clock ticks since boot): with its pid, a name no
# later process reuses.
proc_start() {
	local stat
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	# shellcheck disable=SC2086 # fields
	set -- $stat
	echo "${20}"
}

# Rewrite this script's journal from what it has yet to restore; remove it
# once that is nothing.
journal_sync() {
	local i tmp
	if [ ${#LAB_KNOB_FILE[@]} -eq 0 ] && [ ${#LAB_AFF_TIDS[@]} -eq 0 ]; then
		[ -n "$LAB_JOURNAL" ] && rm -f "$LAB_JOURNAL"
		return 0
	fi
	if [ -z "$LAB_JOURNAL" ]; then
		mkdir -p "$LAB_JOURNAL_DIR" 2>/dev/null || return 0
		LAB_JOURNAL=$LAB_JOURNAL_DIR/$$.$(proc_start $$)
	fi
	tmp=$LAB_JOURNAL.tmp
	{
		for ((i = 0; i < ${#LAB_KNOB_FILE[@]}; i++)); do
			printf 'knob\t%s\t%s\n' "${LAB_KNOB_FILE[i]}" "${LAB_KNOB_OLD[i]}"
		done
		for ((i = 0; i < ${#LAB_AFF_TIDS[@]}; i++)); do
			printf 'aff\t%s\t%s\n' "${LAB_AFF_TIDS[i]}" "${LAB_AFF_OLD[i]}"
		done
	} >"$tmp" 2>/dev/null && mv -f "$tmp" "$LAB_JOURNAL"
}

# lab_recover: restore what dead lab runs left, the last started first (so
# that of two runs that changed one knob, the older run's saved value, the
# original, is written last), each journal newest change first.
lab_recover() {
	local j base pid start n kind what old i
	local -a lines journals
	[ -d "$LAB_JOURNAL_DIR" ] || return 0
	mapfile -t journals < <(cd "$LAB_JOURNAL_DIR" && printf '%s\n' [0-9]*.[0-9]* | sort -t. -k2,2nr)
	for j in "${journals[@]}"; do
		base=$LAB_JOURNAL_DIR/$j
		[[ $j =~ ^([0-9]+)\.([0-9]+)$ ]] || continue
		pid=${BASH_REMATCH[1]}
		start=${BASH_REMATCH[2]}
		[ "$(proc_start "$pid")" = "$start" ] && continue # still running
		rm -f "$base.tmp" # a rewrite the kill cut short; the journal before it stands
		mapfile -t lines <"$base"
		n=0
		for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
			IFS=$'\t' read -r kind what old <<<"${lines[i]}"
			case $kind in
			knob) echo "$old" 2>/dev/null >"$what" && n=$((n + 1)) ;;
			aff) [ -e "/proc/$what" ] && taskset -pc "$old" "$what" >/dev/null 2>&1 && n=$((n + 1)) ;;
			esac
		done
		rm -f "$base"
		echo "$LAB_PROG: restored $n of ${#lines[@]} settings left by lab run $pid, which died before it could" >&2
	done
}

# awake_cpus CPU...: these CPUs poll when idle instead of entering an idle
# state (a halted vCPU, a C-state) until restore_knobs (or unquiet_cpu): a PM
# QoS resume latency of "n/a" (no exit latency allowed) leaves the idle
# governor only polling. The wake-ups of a lab's server then wait for no CPU to wake,
# unless the lab injects that (inject.sh idle): on the development VM a
# halted server vCPU added 22-32 us to every request.
awake_cpus() {
	local c f
	for c in "$@"; do
		f=/sys/devices/system/cpu/cpu$c/power/pm_qos_resume_latency_us
		[ -e "$f" ] && [ "$(cat "$f")" != n/a ] && set_knob "$f" n/a
	done
	return 0
}

# ensure_tracefs: tracefs where bpftrace looks for tracepoints, mounted if it
# is not; untracefs (from the caller's EXIT trap) unmounts what this mounted.
LAB_TRACEFS_MOUNTED=
ensure_tracefs() {
	[ -e /sys/kernel/tracing/events ] && return 0
	[ -e /sys/kernel/debug/tracing/events ] && return 0
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && LAB_TRACEFS_MOUNTED=1
}

untracefs() {
	if [ -n "$LAB_TRACEFS_MOUNTED" ]; then
		umount /sys/kernel/tracing 2>/dev/null
	fi
	LAB_TRACEFS_MOUNTED=
}

# A root script cleans up after lab runs that died (see the journal above).
if [ "$EUID" -eq 0 ]; then
	lab_recover
fi

# cpu_quota_where: "1 DIR" or "2 DIR": where a cgroup with a CPU quota can
# be made, under cgroup v1's cpu hierarchy (cpu.cfs_quota_us) or a cgroup v2
# root with cpu in its controllers (cpu.max, enabled for its children here);
# nothing without a cpu controller.
cpu_quota_where() {
	local v1 v2
	v1=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
	     $(i + 1) == "cgroup" && $4 == "/" && $NF ~ /(^|,)cpu(,|$)/ { print $5; exit }' \
		/proc/self/mountinfo)
	if [ -n "$v1" ] && [ -e "$v1/cpu.cfs_quota_us" ]; then
		echo "1 $v1"
		return
	fi
	v2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
	     $(i + 1) == "cgroup2" && $4 == "/" { print $5; exit }' /proc/self/mountinfo)
	if [ -n "$v2" ] && grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
		grep -qw cpu "$v2/cgroup.subtree_control" || echo +cpu >"$v2/cgroup.subtree_control"
		grep -qw cpu "$v2/cgroup.subtree_control" && echo "2 $v2"
	fi
}

# cpu_quota_set V DIR US: the quota of cgroup DIR (of cgroup version V), US
# per 100 ms period; -1 for none.
cpu_quota_set() {
	if [ "$1" = 1 ]; then
		echo 100000 >"$2/cpu.cfs_period_us" && echo "$3" >"$2/cpu.cfs_quota_us"
	elif [ "$3" = -1 ]; then
		echo "max 100000" >"$2/cpu.max"
	else
		echo "$3 100000" >"$2/cpu.max"
	fi
}

