/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * thp.bpf.h - THP: khugepaged's and kcompactd's time on each CPU, their
 * scans and collapses of the target's memory, and a target thread's direct
 * compaction.
 */

#ifndef LW_THP_BPF_H
#define LW_THP_BPF_H

#include "account.bpf.h"

/* The targets' mm_structs, learned at sched_switch (switch_in(), once per
 * thread and mm): an LRU, so that exited processes' fall out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LW_MAX_TGIDS);
	__type(key, __u64);
	__type(value, __u8);
} targ_mms SEC(".maps");

static __always_inline bool is_target_mm(struct mm_struct *mm)
{
	__u64 key = (__u64)mm;

	return mm && bpf_map_lookup_elem(&targ_mms, &key);
}

/* A target thread switched in with mm: noted once per thread and mm. */
static __always_inline void target_mm_note(__u64 *seen, struct mm_struct *mm)
{
	__u64 key = (__u64)mm;
	__u8 one = 1;

	if (*seen == key || !mm)
		return;
	*seen = key;
	bpf_map_update_elem(&targ_mms, &key, &one, BPF_ANY);
}
/* Read by userspace. */
struct lw_thp_stats thp = {};

__u32 thp_pids[LW_THP_PIDS] = {}; /* written by userspace: see is_thp_kthread() */
__u32 thp_pid_max = 0;		  /* the largest of them, written after them */

/*
 * khugepaged and kcompactdN, by pid: userspace finds them at start and every
 * few seconds. The check runs on every context switch; next->pid shares a
 * cache line with the tgid is_target() just read, where comparing comm would
 * cost another line of every kthread switched to.
 */
static __always_inline bool is_thp_kthread(struct task_struct *t)
{
	__u32 pid = t->pid;

	/* kthreads started at boot have small pids: one compare turns away
	 * every task started later, before the loop */
	if (pid > thp_pid_max)
		return false;
	for (int i = 0; i < LW_THP_PIDS; i++)
		if (thp_pids[i] == pid && pid)
			return true;
	return false;
}

/* The CPU's khugepaged/kcompactd time up to now. */
static __always_inline __u64 cpu_thp_ns(struct lw_cpu_state *cs, __u64 now)
{
	__u64 start = cs->thp_start;

	return cs->thp_ns + (start && now > start ? now - start : 0);
}

/*
 * khugepaged/kcompactd leaving or taking a CPU. Their on-CPU time is kept
 * per CPU so that a request's runqueue wait can be split by it, also when
 * one was already running at the wake-up. The open interval (thp_start)
 * belongs to whatever runs now, so closing needs no check of prev; opening
 * costs every other switch is_thp_kthread()'s pid compare, on the line
 * is_target() already read.
 */
static __always_inline void thp_switch_out(struct lw_cpu_state *cs, __u64 now)
{
	if (cs->thp_start) {
		cs->thp_ns += now > cs->thp_start ? now - cs->thp_start : 0;
		cs->thp_start = 0;
	}
}

static __always_inline void thp_switch_in(struct lw_cpu_state *cs, struct task_struct *next,
					  __u64 now)
{
	if (is_thp_kthread(next))
		cs->thp_start = now;
}

/* Only the mm argument: the ones after it changed type (compat.bpf.h). */
SEC("tp_btf/mm_khugepaged_scan_pmd")
int BPF_PROG(lw_khugepaged_scan, struct mm_struct *mm)
{
	if (is_target_mm(mm))
		__sync_fetch_and_add(&thp.scans, 1);
	return 0;
}

SEC("tp_btf/mm_collapse_huge_page")
int BPF_PROG(lw_collapse, struct mm_struct *mm, int isolated)
{
	if (!is_target_mm(mm))
		return 0;
	if (isolated)
		__sync_fetch_and_add(&thp.collapses, 1);
	else
		__sync_fetch_and_add(&thp.collapse_fail, 1);
	return 0;
}

/* Direct compaction runs in the context of the allocating thread. */
SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(lw_compact_begin)
{
	struct lw_cpu_state *cs;
	struct thread_state *ts;
	__u64 now;

	ts = charge_current(&cs, &now);
	if (!ts)
		return 0;
	ts->in_compact = 1;
	ts->compact_start = now;
	__sync_fetch_and_add(&thp.compactions, 1);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(lw_compact_end)
{
	struct thread_state *ts;
	struct lw_cpu_state *cs;
	__u64 now;

	if (!is_target_cur(bpf_get_current_task_btf()))
		return 0;
	now = bpf_ktime_get_ns();
	ts = current_running(&cs, now);
	if (!ts || !ts->in_compact)
		return 0;
	charge_run(ts, cs, now);
	ts->in_compact = 0;
	__sync_fetch_and_add(&thp.compact_ns, now - ts->compact_start);
	return 0;
}

#endif /* LW_THP_BPF_H */
