/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * quota.bpf.h - the stretches a CPU's cfs_rq of a target's cgroup spends
 * throttled by CFS bandwidth control (cpu.max, cpu.cfs_quota_us).
 *
 * A throttled group's threads stay runnable but are not picked until its
 * quota is refilled, however idle the CPU: that wait is the quota's, neither
 * a task's that ran meanwhile (sched) nor the CPU's idle exit (idle). There is
 * no tracepoint at throttle or unthrottle; latwhy reads the throttled state
 * where it already sees a target thread leave its CPU (sched_switch) or be
 * woken (sched_wakeup), and the end from the group's bandwidth timers when a
 * thread of the group runs there again (lw_tg_unthrottled()).
 *
 * Per CPU: the throttled time so far, a cumulative counter like the
 * interrupt counters, so that every target thread waiting there (the one that
 * spent the quota and its siblings queued behind it) takes its own part of it
 * as a difference over its wait (wait_start(), wait_split()).
 */

#ifndef LW_QUOTA_BPF_H
#define LW_QUOTA_BPF_H

#include "compat.bpf.h"
#include "state.bpf.h"

struct quota_cpu {
	__u64 tg;    /* the task_group throttled now, or last (an address) */
	__u64 since; /* when its throttle was seen; 0: none open */
	__u64 ns;    /* throttled time of closed stretches */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LW_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct quota_cpu);
} quota_cpus SEC(".maps");

/* cpu's throttled time up to now, the open stretch included. */
static __always_inline __u64 quota_cpu_ns(__u32 cpu, __u64 now)
{
	struct quota_cpu *q;

	if (!quota_known)
		return 0;
	q = bpf_map_lookup_elem(&quota_cpus, &cpu);
	if (!q)
		return 0;
	return q->ns + (q->since && now > q->since ? now - q->since : 0);
}

static __always_inline void quota_close_at(struct quota_cpu *q, __u64 end)
{
	if (end > q->since)
		q->ns += end - q->since;
	q->since = 0;
}

/* A target thread leaves cpu, or is woken onto it, with task_group tg
 * throttled: a stretch opens at now, unless one of tg is open. Only one group
 * is followed a CPU: another's stretch is closed now. */
static __always_inline void quota_open(__u32 cpu, __u64 tg, __u64 now)
{
	struct quota_cpu *q = bpf_map_lookup_elem(&quota_cpus, &cpu);

	if (!q || (q->since && q->tg == tg))
		return;
	if (q->since)
		quota_close_at(q, now);
	q->tg = tg;
	q->since = now;
}

/* Target thread t runs on cpu: if its group's stretch is open there, it
 * ended when the group's quota was refilled. */
static __always_inline void quota_close(__u32 cpu, struct task_struct *t, __u64 now)
{
	struct quota_cpu *q = bpf_map_lookup_elem(&quota_cpus, &cpu);

	if (!q || !q->since || !lw_task_in_tg(t, q->tg))
		return;
	quota_close_at(q, lw_tg_unthrottled(q->tg, q->since, now));
}

/* t, a target thread, leaves cpu (or is woken onto it, woken) runnable: is
 * its group throttled there? Opens the stretch if so. */
static __always_inline bool quota_check(struct task_struct *t, __u32 cpu, __u64 now, bool woken)
{
	__u64 tg;

	if (!quota_known || (woken && !lw_wakeup_waits_throttle()))
		return false;
	tg = lw_task_throttled_tg(t);
	if (!tg) {
		/* not throttled now: a stretch of its group still open here
		 * (no thread of it ran here since) is over */
		quota_close(cpu, t, now);
		return false;
	}
	quota_open(cpu, tg, now);
	return true;
}

/* The throttled part of t's runqueue wait on cpu, which ends now (where t
 * runs, or another CPU it was moved to once unthrottled): its group's
 * throttled time on cpu since the wait began (wait_quota). */
static __always_inline __u64 quota_wait_ns(struct task_struct *t, __u64 wait_quota, __u32 cpu,
					   __u64 now)
{
	struct quota_cpu *q;
	__u64 ns;

	if (!quota_known)
		return 0;
	quota_close(cpu, t, now);
	ns = quota_cpu_ns(cpu, now);
	if (ns <= wait_quota)
		return 0;
	q = bpf_map_lookup_elem(&quota_cpus, &cpu);
	/* another group's throttle, on a CPU of several targets' */
	if (!q || !lw_task_in_tg(t, q->tg))
		return 0;
	return ns - wait_quota;
}

#endif /* LW_QUOTA_BPF_H */
