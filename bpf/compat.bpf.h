/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * compat.bpf.h - every kernel difference latwhy's BPF side copes with.
 *
 * Each shim names the kernel change it covers. CO-RE field checks are used
 * rather than version numbers, so a backport that carries the change works.
 * Userspace-side differences (which tracepoints exist) live in user/probe.c.
 */
#ifndef LW_COMPAT_BPF_H
#define LW_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

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
 * its default-hierarchy cgroup. kernfs_node::id was union kernfs_node_id, a
 * u64 id over ino and generation, until 5.5, commit 67c0496e87d1 ("kernfs:
 * convert kernfs_node->id from union kernfs_node_id to u64"); the same 8
 * bytes either way, read whole. The way to the cgroup is bcc libbpf-tools'.
 */
union kernfs_node_id___pre55 {
	struct {
		__u32 ino;
		__u32 generation;
	};
	__u64 id;
};

struct kernfs_node___pre55 {
	union kernfs_node_id___pre55 id;
} __attribute__((preserve_access_index));

static __always_inline __u64 lw_task_cgroup_id(struct task_struct *t)
{
	/* t is a tp_btf argument: direct loads (the verifier makes them
	 * faulting-safe), no helper call on the context-switch path */
	struct kernfs_node *kn = t->cgroups->dfl_cgrp->kn;

	if (!kn)
		return 0;
	if (bpf_core_type_exists(union kernfs_node_id___pre55))
		return ((struct kernfs_node___pre55 *)kn)->id.id;
	return kn->id;
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
	for (int i = 0; i < LW_CGROUP_DEPTH && se; i++) {
		cfs_rq = BPF_CORE_READ(se, cfs_rq);
		if (!cfs_rq || BPF_CORE_READ(cfs_rq, throttle_count) <= 0)
			break;
		tg = (__u64)BPF_CORE_READ(cfs_rq, tg);
		se = BPF_CORE_READ(se, parent);
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
		if ((__u64)BPF_CORE_READ(se, cfs_rq, tg) == tg)
			return true;
		se = BPF_CORE_READ(se, parent);
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
static __always_inline bool lw_wakeup_waits_throttle(void)
{
	return !bpf_core_field_exists(struct task_struct, throttled);
}

/*
 * Tracepoint arguments that changed type. A tp_btf program may declare fewer
 * arguments than its tracepoint passes, so the programs declare only the
 * leading ones that kept their type:
 *  - mm_khugepaged_scan_pmd (lw_khugepaged_scan, thp.bpf.h): mm only; the
 *    page after it became a folio in 2025 ("khugepaged: Refactor
 *    trace_mm_khugepaged_scan_pmd() to take folio instead of page").
 */

/*
 * Syscall number and first argument at sys_exit. The entry registers stay in
 * pt_regs for the whole syscall, but the return value overwrites the first
 * argument register on arm64, which keeps a copy in orig_x0. An architecture
 * difference, not a kernel change: the numbers are those of
 * arch/x86/entry/syscalls/syscall_64.tbl and, for arm64,
 * include/uapi/asm-generic/unistd.h; the registers are pt_regs' in each
 * arch/<arch>/include/asm/ptrace.h.
 */
#if defined(__TARGET_ARCH_x86)
#define LW_NR_read     0
#define LW_NR_write    1
#define LW_NR_readv    19
#define LW_NR_writev   20
#define LW_NR_sendfile 40
#define LW_NR_sendto   44
#define LW_NR_recvfrom 45
#define LW_NR_sendmsg  46
#define LW_NR_recvmsg  47
#define LW_NR_recvmmsg 299
#define LW_NR_sendmmsg 307

static __always_inline long lw_sys_nr(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, orig_ax);
}

static __always_inline long lw_sys_arg0(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, di);
}
#elif defined(__TARGET_ARCH_arm64)
#define LW_NR_read     63
#define LW_NR_write    64
#define LW_NR_readv    65
#define LW_NR_writev   66
#define LW_NR_sendfile 71
#define LW_NR_sendto   206
#define LW_NR_recvfrom 207
#define LW_NR_sendmsg  211
#define LW_NR_recvmsg  212
#define LW_NR_recvmmsg 243
#define LW_NR_sendmmsg 269

static __always_inline long lw_sys_nr(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, syscallno);
}

static __always_inline long lw_sys_arg0(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, orig_x0);
}
#else
#error "latwhy: syscall numbers for this architecture are not defined"
#endif

#endif /* LW_COMPAT_BPF_H */
