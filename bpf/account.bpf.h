/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * account.bpf.h - charging a thread's buckets: its running slices, the gaps
 * of missed transitions, its busy span, its checkpoints. Before thp.bpf.h,
 * whose compaction hooks charge through it; the scheduler's are sched.bpf.h.
 */

#ifndef LW_ACCOUNT_BPF_H
#define LW_ACCOUNT_BPF_H

#include "freq.bpf.h"
#include "irq.bpf.h"

/* Read by userspace: requests with a missed scheduler transition. */
__u64 incomplete = 0;

/* The guest has a steal clock (arch.bpf.h's lw_steal_ns()), set by
 * userspace: a running slice's steal is LW_B_STEAL. */
const volatile bool steal_known = false;

static __always_inline __u64 cpu_steal(void)
{
	return steal_known ? lw_steal_ns() : 0;
}

static __always_inline void snap_cpu(struct thread_state *ts, struct lw_cpu_state *cs, __u64 now)
{
	if (steal_known)
		ts->snap_steal = cpu_steal();
	ts->snap_irq = cs->irq_ns;
	ts->snap_softirq = cs->softirq_ns;
	ts->snap_flost = cpu_flost(cs, now);
	if (irq_entry_ns)
		ts->snap_intr = cs->nirq + cs->nipi;
	ts->last_ts = now;
}

/*
 * Charge the running slice [last_ts, now] of a thread that is current on cs's
 * CPU, then start a new slice at now.
 */
static __always_inline void charge_run(struct thread_state *ts, struct lw_cpu_state *cs, __u64 now)
{
	__u64 slice = now - ts->last_ts;
	__u64 irq = cs->irq_ns - ts->snap_irq;
	__u64 soft = cs->softirq_ns - ts->snap_softirq;
	__u64 fl = cpu_flost(cs, now) - ts->snap_flost;
	__u64 run = 0, ent = 0;

	if (irq + soft > slice) /* counters of another CPU after a missed migration */
		irq = soft = 0;
	run = slice - irq - soft;
	if (irq_entry_ns && ts->busy) {
		ent = intr_cost(cs->nirq + cs->nipi, ts->snap_intr, run);
		run -= ent;
	}
	if (ts->busy && now >= ts->last_ts) {
		ts->cum[LW_B_IRQ] += irq + ent;
		ts->cum[LW_B_IRQ_ENTRY] += ent;
		ts->cum[LW_B_SOFTIRQ] += soft;
		if (ts->in_compact || ts->mem_state) {
			ts->cum[mem_run_bucket(ts)] += run; /* THP, memory's */
		} else {
			ts->cum[LW_B_RUN] += run;
			if (steal_known) {
				/* the host's time in the slice: in the run, since
				 * nothing of the guest's own was counted for it */
				__s64 st = (__s64)(cpu_steal() - ts->snap_steal);

				if (st > 0)
					ts->cum[LW_B_STEAL] += (__u64)st < run ? (__u64)st : run;
			}
			/* the clock loss covers the whole slice; keep the run share */
			fl = run == slice ? fl : mul_div(fl, run, slice);
			ts->cum[LW_B_FREQ] += fl < run ? fl : run;
			if (cs->khz && cs->ref_khz)
				ts->nfreq++;
		}
	}
	snap_cpu(ts, cs, now);
}

/* The runqueue wait that wait_start() (sched.bpf.h) counted in its CPU's
 * waiters is over: that CPU's interrupts no longer delay the thread. */
static __always_inline void wait_end(struct thread_state *ts)
{
	struct lw_cpu_state *cs;

	if (!ts->waiting)
		return;
	ts->waiting = 0;
	cs = cpu_state_get(ts->wait_cpu);
	if (cs)
		__sync_fetch_and_add(&cs->waiters, -1);
}

/*
 * A scheduler transition was missed (seen rarely under load: about 0.1% of
 * requests on 6.18 with a CPU hog). Charge the gap to the state we last knew,
 * so the buckets still add up, and mark the request: its split is a guess.
 */
static __always_inline void charge_gap(struct thread_state *ts, __u64 now)
{
	__u32 b = ts->state == TS_RUNNABLE   ? LW_B_SCHED
		  : ts->state == TS_SLEEPING ? LW_B_BLOCKED
					     : LW_B_RUN;

	if (!ts->busy || ts->state == TS_UNKNOWN || now < ts->last_ts)
		return;
	ts->cum[b] += now - ts->last_ts;
	ts->nincomplete++;
	__sync_fetch_and_add(&incomplete, 1);
}

/* The current task's state, made RUNNING on this CPU if we had not seen it. */
static __always_inline struct thread_state *make_running(struct thread_state *ts,
							 struct lw_cpu_state **csp, __u64 now)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());

	if (!ts || !cs)
		return NULL;
	if (ts->state != TS_RUNNING) {
		charge_gap(ts, now); /* we missed its switch-in */
		wait_end(ts);
		ts->state = TS_RUNNING;
		snap_cpu(ts, cs, now);
		cs->target_cur = LW_CUR_TARGET | (ts->busy ? LW_CUR_IN_REQ : 0);
	}
	*csp = cs;
	return ts;
}

static __always_inline struct thread_state *current_running(struct lw_cpu_state **csp, __u64 now)
{
	return make_running(thread_get(bpf_get_current_task_btf()), csp, now);
}

/* A target's thread begins work the kernel does on its behalf (a direct
 * compaction, a fault, reclaim): it, running, its run charged up to *now;
 * NULL when it is no target's. */
static __always_inline struct thread_state *charge_current(struct lw_cpu_state **csp, __u64 *now)
{
	struct thread_state *ts;

	if (!is_target_cur(bpf_get_current_task_btf()))
		return NULL;
	*now = bpf_ktime_get_ns();
	ts = current_running(csp, *now);
	if (ts)
		charge_run(ts, *csp, *now);
	return ts;
}

/*
 * A scheduler transition of a busy thread: keep cum[] as of now, and the
 * bucket the time until the next transition goes to. request_arrival() starts
 * a request whose data arrived in between from here; without arrival times
 * nothing reads them (and the verifier drops this).
 */
static __always_inline void ckpt_take(struct thread_state *ts, __u64 now, __u32 bucket)
{
	__u32 k;

	if (!arrival_known || !ts->busy)
		return;
	k = ts->ckpt_next++ & (LW_CKPTS - 1);
	ts->ckpts[k].ts = now;
	__builtin_memcpy(ts->ckpts[k].cum, ts->cum, sizeof(ts->cum));
	ts->ckpt_bucket[k] = bucket;
}

/* Start charging: the busy span begins at now. */
static __always_inline void cycle_open(struct thread_state *ts, __u64 now, bool wake)
{
	ts->busy = 1;
	ts->cycle_wake = wake;
	ts->cycle_ended = 0;
	ts->cycle_start = now;
	__builtin_memcpy(ts->cycle_snap, ts->cum, sizeof(ts->cum));
	ts->cycle_top_ns = 0;
	ts->cycle_top_pid = 0;
}

#endif /* LW_ACCOUNT_BPF_H */
