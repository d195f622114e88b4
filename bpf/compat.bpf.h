/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * compat.bpf.h - every kernel difference latwhy's BPF side copes with.
 *
 * Each shim names the kernel change it covers. CO-RE field checks are used
 * rather than version numbers, so a backport that carries the change works.
 * What differs by architecture instead (syscall numbers, registers) is in
 * arch.bpf.h.
 * Userspace-side differences (which tracepoints exist) live in user/source/probe.c.
 *
 * Supported: 5.11 and later, for BPF task storage (the threads map) and
 * bpf_get_current_task_btf() (commits 4cf1bc1f1045, 3ca1032ab7ab), and
 * socket storage from tracing programs (8e4597c627fb): no fallback
 * replaces them, so userspace refuses an older kernel by its BTF
 * (lw_probe_kernel_floor(), user/source/probe.c). Measured with
 * tools/kernels/run.sh --all: 5.10 refused (it fails at the threads map
 * otherwise), 6.1, 6.1 PREEMPT_RT, 6.12, arm64 6.1; and 6.18. No shim
 * covers a change before 5.11.
 */
#ifndef LW_COMPAT_BPF_H
#define LW_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "arch.bpf.h" /* what differs by architecture, not by kernel */

/*
 * __GFP_NOMEMALLOC: 0x80000 in include/linux/gfp.h and, since 6.2,
 * gfp_types.h; bit 19 of an anonymous enum since 6.10 ("mm: enumerate all
 * gfp flags"), which kept every flag where it was. An anonymous enum has no
 * type for a CO-RE enum relocation to name, and the value never moved.
 */
#define LW_GFP_NOMEMALLOC 0x80000u

/*
 * task_struct::state was renamed __state (and became unsigned int) in 5.14,
 * commit 2f064a59a11f ("sched: Change task_struct::state").
 */
struct task_struct___pre514 {
	volatile long state;
} __attribute__((preserve_access_index));

static __always_inline long lw_task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/*
 * The CPU a task is on (or queued on, at wake-up). With THREAD_INFO_IN_TASK
 * (x86, arm64) it moved from task_struct into thread_info in 5.16, commit
 * bcf9033e5449 ("sched: move CPU field back into thread_info if
 * THREAD_INFO_IN_TASK=y"), with 001430c1910d ("arm64: add CPU field to
 * struct thread_info") for arm64.
 */
struct task_struct___pre516 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 lw_task_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___pre516 *)t, cpu);
}

/*
 * A task's cgroup v2 id, as bpf_get_current_cgroup_id() gives it for current
 * (and name_to_handle_at() for the directory): the id of the kernfs node of
 * its default-hierarchy cgroup, a u64 since 5.5 (commit 67c0496e87d1). The
 * way to the cgroup is bcc libbpf-tools'.
 */
static __always_inline __u64 lw_task_cgroup_id(struct task_struct *t)
{
	/* t is a tp_btf argument: direct loads (the verifier makes them
	 * faulting-safe), no helper call on the context-switch path */
	struct kernfs_node *kn = t->cgroups->dfl_cgrp->kn;

	return kn ? kn->id : 0;
}

/*
 * The steal clock of a guest (paravirt_steal_clock(): KVM's, Xen's,
 * VMware's), as the scheduler last read it for this CPU's runqueue:
 * rq::prev_steal_time_rq, the steal taken off the rq clock, brought up to
 * date at every update_rq_clock() (each switch, each wake-up onto the CPU,
 * each tick), so it lags the host by a tick at most. The per-CPU
 * kvm_steal_time itself cannot be named here: per-CPU data symbols are not
 * in kallsyms without CONFIG_KALLSYMS_ALL (not on the development VM), and
 * a typed ksym needs them. The rq is the current task's cfs_rq's (a task
 * of any class has one). Needs CONFIG_PARAVIRT_TIME_ACCOUNTING and
 * CONFIG_FAIR_GROUP_SCHED: without them the fields do not exist and
 * userspace leaves steal_known false.
 */
static __always_inline __u64 lw_steal_ns(void)
{
	struct task_struct *t;
	struct cfs_rq *cfs_rq;

	if (!bpf_core_field_exists(struct rq, prev_steal_time_rq) ||
	    !bpf_core_field_exists(struct cfs_rq, rq) ||
	    !bpf_core_field_exists(struct sched_entity, cfs_rq))
		return 0;
	t = bpf_get_current_task_btf();
	cfs_rq = t->se.cfs_rq;
	if (!cfs_rq || !cfs_rq->rq)
		return 0;
	return cfs_rq->rq->prev_steal_time_rq;
}

/*
 * CFS bandwidth control (CONFIG_CFS_BANDWIDTH, cgroup v1 cpu.cfs_quota_us,
 * v2 cpu.max). cfs_rq::throttle_count counts the throttled cfs_rqs among a
 * cfs_rq and its ancestors on that CPU (tg_throttle_down() walks a throttled
 * group's subtree), unchanged from 5.10 to 6.18; sched_entity::cfs_rq and
 * ::parent need CONFIG_FAIR_GROUP_SCHED, which bandwidth control depends
 * on. Read with CO-RE, so a kernel without them loads with quota off.
 */
#define LW_CGROUP_DEPTH 8 /* levels walked: root, kubepods, QoS, pod, container */

static __always_inline bool lw_quota_readable(void)
{
	return bpf_core_field_exists(struct cfs_rq, throttle_count) &&
	       bpf_core_field_exists(struct sched_entity, parent) &&
	       bpf_core_field_exists(struct task_group, cfs_bandwidth);
}

/* The task_group of the topmost throttled cfs_rq above task t on its CPU
 * (the throttle that binds), as an address; 0 when none is throttled. */
static __always_inline __u64 lw_task_throttled_tg(struct task_struct *t)
{
	struct sched_entity *se = &t->se;
	struct cfs_rq *cfs_rq;
	__u64 tg = 0;

	if (!lw_quota_readable())
		return 0;
	/* direct loads from t, a tp_btf argument (faulting-safe, no helper
	 * call): this runs at every preemption of a target thread */
	for (int i = 0; i < LW_CGROUP_DEPTH && se; i++) {
		cfs_rq = se->cfs_rq;
		if (!cfs_rq || cfs_rq->throttle_count <= 0)
			break;
		tg = (__u64)cfs_rq->tg;
		se = se->parent;
	}
	return tg;
}

/* Task t runs under task_group tg (an address) on its CPU. */
static __always_inline bool lw_task_in_tg(struct task_struct *t, __u64 tg)
{
	struct sched_entity *se = &t->se;

	if (!lw_quota_readable())
		return false;
	for (int i = 0; i < LW_CGROUP_DEPTH && se; i++) {
		struct cfs_rq *cfs_rq = se->cfs_rq;

		if (cfs_rq && (__u64)cfs_rq->tg == tg)
			return true;
		se = se->parent;
	}
	return false;
}

/*
 * When task_group tg's throttle, seen at since, ended, at the latest now: its
 * bandwidth timers refill the quota. The period timer is forwarded as it
 * fires (sched_cfs_period_timer()), so its expiry less one period is the
 * last refill; the slack timer hands back runtime that other CPUs returned.
 * Both are CLOCK_MONOTONIC hrtimers, bpf_ktime_get_ns()'s clock. The latest
 * of them after since; now when neither fired since (the quota was changed,
 * or the timers are not readable).
 */
static __always_inline __u64 lw_tg_unthrottled(__u64 tg, __u64 since, __u64 now)
{
	struct cfs_bandwidth *b = &((struct task_group *)tg)->cfs_bandwidth;
	__s64 period = BPF_CORE_READ(b, period);
	__s64 refill = BPF_CORE_READ(b, period_timer.node.expires) - period;
	__s64 slack = BPF_CORE_READ(b, slack_timer.node.expires);
	__u64 end = 0;

	if (period > 0 && refill > (__s64)now) /* forwarded past now: one back */
		refill -= period;
	if (period > 0 && refill > (__s64)since && refill <= (__s64)now)
		end = refill;
	if (slack > (__s64)since && slack <= (__s64)now && (__u64)slack > end)
		end = slack;
	return end ? end : now;
}

/*
 * Whether a task woken into a throttled group waits out the throttle at
 * once: until 6.18 it does (it is queued on the throttled cfs_rq). 6.18's
 * task based throttle model ("sched/fair: Task based throttle time
 * accounting" series; task_struct::throttled) lets it run in the kernel and
 * throttles it on its return to user space, where latwhy sees it leave.
 */
struct task_struct___618 {
	bool throttled;
} __attribute__((preserve_access_index));

/* A flavour, not vmlinux.h's own field: the arm64 header is made from an
 * older kernel's BTF (vmlinux/vmlinux_arm64.h, 6.12) that lacks it. */
static __always_inline bool lw_wakeup_waits_throttle(void)
{
	return !bpf_core_field_exists(struct task_struct___618, throttled);
}

/*
 * Whether task t is in a memory stall (PSI): task_struct::in_memstall, set
 * by psi_memstall_enter() around reclaim, compaction, a thrashing refault's
 * wait and memory.high's penalty sleep in mem_cgroup_handle_over_high()
 * (renamed __mem_cgroup_handle_over_high() behind an inline test of
 * memcg_nr_pages_over_high in 6.x). A bitfield since PSI came in 4.20,
 * commit eb414681d5a0 ("psi: pressure stall information for CPU, memory,
 * and IO"); absent without CONFIG_PSI, and never set when PSI is disabled
 * at boot (psi=0, CONFIG_PSI_DEFAULT_DISABLED without psi=1): those sleeps
 * stay blocked then. Read with a probe read: a bitfield, not a direct load.
 */
struct task_struct___memstall {
	unsigned int in_memstall : 1;
} __attribute__((preserve_access_index));

static __always_inline bool lw_task_memstall(struct task_struct *t)
{
	struct task_struct___memstall *m = (void *)t;

	if (!bpf_core_field_exists(m->in_memstall))
		return false;
	return BPF_CORE_READ_BITFIELD_PROBED(m, in_memstall);
}

/*
 * Tracepoint arguments that changed type. A tp_btf program may declare fewer
 * arguments than its tracepoint passes, so the programs declare only the
 * leading ones that kept their type:
 *  - mm_khugepaged_scan_pmd (lw_khugepaged_scan, thp.bpf.h): mm only; the
 *    page after it became a folio in 2025 ("khugepaged: Refactor
 *    trace_mm_khugepaged_scan_pmd() to take folio instead of page").
 *  - mm_vmscan_direct_reclaim_begin, mm_vmscan_memcg_reclaim_begin
 *    (memory.bpf.h): none; (order, gfp_flags) lost may_writepage and
 *    classzone_idx over the years (4.x-5.x) and 6.x's memcg variants carry
 *    the memcg. Their _end's first argument, nr_reclaimed, is unchanged
 *    since 2.6.36; lru_shrink_inactive's (nid, nr_scanned) since 4.8.
 */

/*
 * The id of a task's cgroup's ancestor at level (the root is 0), for a
 * cgroup target that takes the cgroups below it. cgroup::ancestors[] (the
 * cgroups, 6.1+: commit 7f203bc89eb6, "cgroup: Replace
 * cgroup->ancestor_ids[] with ->ancestors[]") replaced ancestor_ids[] (their
 * ids, 4.5 to 6.0). level must be at most cg->level. Read with
 * bpf_probe_read_kernel(): a flexible array at a variable index is no
 * direct load.
 */
struct cgroup___pre61 {
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

static __always_inline __u64 lw_cgroup_ancestor_id(struct cgroup *cg, __u32 level)
{
	struct cgroup *a = NULL;
	__u64 id = 0;

	if (bpf_core_field_exists(cg->ancestors)) {
		if (bpf_core_read(&a, sizeof(a), &cg->ancestors[level]) || !a)
			return 0;
		return BPF_CORE_READ(a, kn, id);
	}
	if (bpf_core_read(&id, sizeof(id), &((struct cgroup___pre61 *)cg)->ancestor_ids[level]))
		return 0;
	return id;
}

#endif /* LW_COMPAT_BPF_H */
