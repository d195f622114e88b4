/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sched.bpf.h - thread accounting at the scheduler's transitions: switch,
 * waking, wake-up, and the split of a runqueue wait among the tasks,
 * interrupts, THP kthreads and idle exits that made it.
 */

#ifndef LW_SCHED_BPF_H
#define LW_SCHED_BPF_H

#include "compat.bpf.h"
#include "quota.bpf.h"
#include "thp.bpf.h"
#include "memory.bpf.h"
#include "preempt.bpf.h"

/*
 * A runqueue wait starts on cpu: interrupts handled there while we wait
 * delayed us as much as the task they interrupted, and so does khugepaged
 * or kcompactd running there (counted by the sched_switch handler). watch:
 * time that CPU's interrupts for us also when not busy (LW_WAIT_WAKING: from
 * sched_waking, before the wake-up says whether it brings a request).
 */
static __always_inline void wait_start(struct thread_state *ts, __u32 cpu, __u64 now, __u32 watch)
{
	struct lw_cpu_state *cs = cpu_state_get(cpu);

	ts->wait_cpu = cpu;
	if (!cs)
		return;
	softirq_clock_on(cs, cpu, now);
	ts->wait_irq = cs->irq_ns;
	ts->wait_softirq = cs->softirq_ns;
	ts->wait_thp = cpu_thp_ns(cs, now);
	ts->wait_ksd = (__u32)cpu_ksd_ns(cs, now);
	if (irq_entry_ns)
		ts->wait_intr = cs->nirq;
	ts->wait_quota = quota_cpu_ns(cpu, now);
	/* IRQs there are evidence while a request waits on it */
	if ((ts->busy || watch) && !ts->waiting) {
		__sync_fetch_and_add(&cs->waiters, 1);
		ts->waiting = watch ? watch : LW_WAIT_QUEUED;
	}
}

/*
 * Split a runqueue wait on cs's CPU, ending now, into the part its group was
 * throttled (quota: nothing else delayed the thread then, so the CPU's
 * interrupts and THP kthreads count for the rest of the wait only, pro rata),
 * interrupt time, THP kthread time (*thp) and the rest, which is returned.
 */
static __always_inline __u64 wait_split(struct thread_state *ts, struct lw_cpu_state *cs, __u32 cpu,
					__u64 delta, __u64 now, __u64 *thp_ns, __u64 quota)
{
	__u64 irq, soft, th, ent, whole = delta;

	*thp_ns = 0;
	if (quota) {
		quota = quota < delta ? quota : delta;
		delta -= quota;
		ts->cum[LW_B_QUOTA] += quota;
	}
	if (cpu != ts->wait_cpu)
		return delta; /* migrated: the other CPU's counters don't apply */
	irq = cs->irq_ns - ts->wait_irq;
	soft = ksd_softirq(ts, cs, now, irq, cs->softirq_ns - ts->wait_softirq);
	th = cpu_thp_ns(cs, now) - ts->wait_thp;
	if (quota) {
		irq = mul_div(irq, delta, whole);
		soft = mul_div(soft, delta, whole);
		th = mul_div(th, delta, whole);
	}
	if (irq + soft > delta) {
		/* A handler that began before the wait and ended in it adds its
		 * whole run at its exit (a BLOCK batch in ksoftirqd that was
		 * running when we were woken): the wait was all interrupts. */
		if (soft > delta)
			soft = delta;
		irq = delta - soft;
	}
	delta -= irq + soft;
	/* device interrupts only: an IPI here may be the wake-up's own (a
	 * wakelist's call-function IPI, ttwu_queue_wakelist()) */
	if (irq_entry_ns) {
		ent = intr_cost(cs->nirq, ts->wait_intr, quota ? whole : delta);
		if (quota) /* the unthrottled rest's share, as above */
			ent = mul_div(ent, whole - quota, whole);
		ent = ent < delta ? ent : delta;
		delta -= ent;
		irq += ent;
		ts->cum[LW_B_IRQ_ENTRY] += ent;
	}
	ts->cum[LW_B_IRQ] += irq;
	ts->cum[LW_B_SOFTIRQ] += soft;
	*thp_ns = th < delta ? th : delta;
	return delta - *thp_ns;
}

static __always_inline void wait_credit(struct thread_state *ts, __u32 pid, __u32 tgid,
					const char *comm, __u64 cgid, __u64 delta)
{
	struct lw_preempt_val zero = {}, *v;

	if (arrival_known) { /* read by request_start() for an arrival */
		ts->last_wait_ns = delta;
		ts->last_wait_pid = pid;
	}
	if (delta > ts->cycle_top_ns) {
		ts->cycle_top_ns = delta;
		ts->cycle_top_pid = pid;
	}
	/* closed slots too: a next request on their connection may start
	 * back at their end */
	for (int i = 0; i < LW_REQ_SLOTS; i++) {
		if ((ts->used_mask & (1U << i)) && delta > ts->slot_top_ns[i]) {
			ts->slot_top_ns[i] = delta;
			ts->slot_top_pid[i] = pid;
		}
	}
	v = bpf_map_lookup_elem(&preempt_ev, &pid);
	if (!v) {
		__builtin_memcpy(zero.comm, comm, LW_COMM_LEN);
		zero.tgid = tgid;
		zero.cgid = cgid;
		bpf_map_update_elem(&preempt_ev, &pid, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&preempt_ev, &pid);
		if (!v)
			return;
	} else {
		/* named as it runs now: a shell's child that exec'ed lw_hog
		 * was "bash" when it first ran there */
		__builtin_memcpy(v->comm, comm, LW_COMM_LEN);
		v->cgid = cgid; /* and where it is now */
	}
	__sync_fetch_and_add(&v->ns, delta);
	__sync_fetch_and_add(&v->count, 1);
}

/*
 * A wait for an idle CPU: its exit from idle (a C-state, a halted vCPU) and
 * the wake-up's IPI, or, where the idle state polled, no C-state to leave:
 * the wake-up's own time, or a vCPU its host did not run. thp_ns: the THP
 * kthreads' part of the wait, in the THP bucket, blamed on the same.
 */
static __always_inline void idle_credit(struct thread_state *ts, bool polled, __u64 ns,
					__u64 thp_ns)
{
	/* built on the stack: a static const array would sit in .rodata
	 * (see excess_bucket()) */
	char comm[LW_COMM_LEN] = "idle (polling)";

	if (polled) {
		wait_credit(ts, LW_PID_IDLE_POLL, 0, comm, 0, ns + thp_ns);
		ts->cum[LW_B_IDLE_POLL] += ns;
	} else {
		__builtin_memcpy(comm, "swapper", sizeof("swapper"));
		wait_credit(ts, 0, 0, comm, 0, ns + thp_ns);
	}
	ts->cum[LW_B_IDLE] += ns;
}

static __always_inline void switch_out(struct task_struct *prev, struct task_struct *next,
				       bool preempt, struct lw_cpu_state *cs, __u64 now)
{
	struct thread_state *ts = thread_get(prev);
	bool throttled = false;

	if (!ts)
		return;
	if (ts->state == TS_RUNNING)
		charge_run(ts, cs, now);
	else
		charge_gap(ts, now); /* we missed its switch-in */
	wait_end(ts);
	ts->last_ts = now;
	/* A preempted task stays runnable whatever its state word says. */
	if (preempt || lw_task_state(prev) == 0) {
		__u32 cpu = bpf_get_smp_processor_id();

		throttled = quota_check(prev, cpu, now, false);
		ts->state = TS_RUNNABLE;
		wait_start(ts, cpu, now, 0);
		/* Its group spent its quota: next did not take the CPU from it.
		 * What runs when the quota is back decides the rest of the wait,
		 * as after a wake-up (switch_in()). */
		ts->waiter_pid = throttled ? 0 : next->pid;
		ts->waiter_tgid = next->tgid;
		__builtin_memcpy(ts->waiter_comm, next->comm, LW_COMM_LEN);
		/* whose it is, while next is at hand: only a busy thread's
		 * wait is charged (switch_in()), and a runnable one does not
		 * become busy before it runs */
		if (ts->busy && ts->waiter_pid) {
			ts->wait_slot = target_slot_cur();
			ts->waiter_by = by_of(next, prev, ts->wait_slot);
			ts->waiter_cgid = lw_task_cgroup_id(next);
		}
		if (throttled)
			ts->wake_idle = 0;
	} else {
		ts->state = TS_SLEEPING;
		ts->waiter_pid = 0;
		ts->mem_stall = memory_known && lw_task_memstall(prev);
		if (!ts->open_mask)
			ts->busy = 0; /* woke for no request, or all answered */
	}
	ckpt_take(ts, now,
		  ts->state == TS_RUNNABLE ? (throttled ? LW_B_QUOTA : LW_B_SCHED)
					   : sleep_bucket(ts));
}

static __always_inline void switch_in(struct task_struct *next, struct task_struct *prev,
				      struct lw_cpu_state *cs, __u32 cpu, __u64 now)
{
	struct thread_state *ts = thread_get(next);
	__u64 delta;

	if (!ts)
		return;
	delta = now - ts->last_ts;
	if (ts->busy && ts->state == TS_RUNNABLE) {
		__u64 thp_ns, quota = 0, quota_was = ts->cum[LW_B_QUOTA];
		bool idle, polled;
		int slot = -1;

		quota = quota_wait_ns(next, ts->wait_quota, ts->wait_cpu, now);
		delta = wait_split(ts, cs, cpu, delta, now, &thp_ns, quota);
		/* Migrated (the counters were another CPU's) or compacting:
		 * the task that ran last before us decides. */
		if ((cpu != ts->wait_cpu && is_thp_kthread(prev)) || ts->in_compact) {
			thp_ns += delta;
			delta = 0;
		}
		/* Woken onto a CPU that then ran nothing until us (its idle
		 * task, pid 0, is prev): the wait was its exit from idle (a
		 * C-state, a halted vCPU) and the wake-up's IPI, not a task. A
		 * preemption, or a wait on another CPU that this one pulled us
		 * from, stays sched. */
		idle = !ts->waiter_pid && !prev->pid && cpu == ts->wait_cpu;
		/* only lw_cpu_idle sets it: 0 (seeded) without cpu_idle */
		polled = idle && cs->idle_polling;
		/* A wake-up wait whose CPU left idle and then ran another
		 * task before us: its start was that CPU's exit from idle
		 * (on_wakeup()). The rest is the other task's. */
		if (!idle && !ts->waiter_pid && ts->wake_idle && cpu == ts->wait_cpu) {
			__u64 gap = ts->wake_idle < delta ? ts->wake_idle : delta;

			idle_credit(ts, cs->idle_polling, gap, 0);
			delta -= gap;
		}
		/* Blame the task that took the CPU from us, or for a wake-up
		 * wait the one that ran last before us. */
		if (ts->waiter_pid) {
			wait_credit(ts, ts->waiter_pid, ts->waiter_tgid, ts->waiter_comm,
				    ts->waiter_cgid, delta + thp_ns);
			slot = ts->wait_slot;
			by_charge(slot, ts->waiter_by, delta + thp_ns);
		} else if (idle) {
			idle_credit(ts, polled, delta, thp_ns);
			delta = 0; /* in the idle buckets now */
		} else {
			char comm[LW_COMM_LEN];

			__builtin_memcpy(comm, prev->comm, LW_COMM_LEN);
			wait_credit(ts, prev->pid, prev->tgid, comm, lw_task_cgroup_id(prev),
				    delta + thp_ns);
			/* pid 0, the idle task of a CPU that pulled us over, is
			 * the evidence's "CPU idle": no task's time */
			if (prev->pid) {
				slot = target_slot(next);
				by_charge(slot, by_of(prev, next, slot), delta + thp_ns);
			}
		}
		/* its group spent its quota: its own threads took that time */
		if (ts->cum[LW_B_QUOTA] != quota_was) {
			if (slot < 0)
				slot = target_slot(next);
			by_charge(slot, LW_BY_OWN, ts->cum[LW_B_QUOTA] - quota_was);
		}
		if (arrival_known)
			ts->last_wait_end = now;
		if (thp_ns) {
			ts->cum[LW_B_THP] += thp_ns;
			__sync_fetch_and_add(&thp.khugepaged_run_ns, thp_ns);
		}
		ts->cum[LW_B_SCHED] += delta;
	} else if (ts->busy && ts->state == TS_SLEEPING) {
		/* no wake-up seen (the kernel skips a nested run of the
		 * wake-up program): plain blocking */
		mem_sleep(ts, delta);
	} else if (ts->state == TS_RUNNING) {
		charge_gap(ts, now); /* we missed its switch-out */
	}
	wait_end(ts);
	ts->state = TS_RUNNING;
	ts->waiter_pid = 0;
	snap_cpu(ts, cs, now);
	cs->target_cur = LW_CUR_TARGET | (ts->busy ? LW_CUR_IN_REQ : 0);
	target_mm_note(&ts->mm, next->mm);
	ckpt_take(ts, now, LW_B_RUN);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(lw_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	bool out = is_target_cur(prev), in = is_target(next);
	__u32 cpu = bpf_get_smp_processor_id();
	struct lw_cpu_state *cs = cpu_state_get(cpu);
	__u64 now;

	if (!cs)
		return 0;
	/* Most switches involve no target and no THP kthread: no clock read,
	 * no store. */
	if (!out && !in) {
		if (cs->target_cur)
			cs->target_cur = 0;
		if (cs->thp_start || is_thp_kthread(next)) {
			now = bpf_ktime_get_ns();
			thp_switch_out(cs, now);
			thp_switch_in(cs, next, now);
		}
		if (ksd_switch_seen(prev, next) && (cs->ksd_start || is_ksd(cs, next)))
			ksd_switch(cs, next, bpf_ktime_get_ns());
		return 0;
	}
	now = bpf_ktime_get_ns();
	thp_switch_out(cs, now); /* before switch_in splits its wait */
	if (ksd_switch_seen(prev, next))
		ksd_switch(cs, next, now); /* ksoftirqd is never a target */
	if (out)
		switch_out(prev, next, preempt, cs, now);
	if (in)
		switch_in(next, prev, cs, cpu, now);
	else
		cs->target_cur = 0;
	thp_switch_in(cs, next, now); /* after switch_out queued its wait */
	return 0;
}

/*
 * When the wake-up of ts, seen at sched_wakeup at now, began: at its
 * sched_waking, on the waker's CPU. A wake-up queued to another CPU's
 * wakelist (ttwu_queue_wakelist(): across LLCs, and within one to an idle
 * CPU since 6.0, "sched: Remove the limitation of WF_ON_CPU on wakelist if
 * wakee cpu is idle") reaches sched_wakeup only on that CPU, after it left
 * idle: the exit from a C-state, or a halted vCPU's wake-up by its host, lies
 * between the two, and starting the wait at sched_wakeup hid it (24 us per
 * wake-up on the dev VM, 2 us with the vCPU polling). A sched_waking before
 * the thread's last transition belongs to an earlier sleep: the wake-up raced
 * its switch-out.
 */
static __always_inline __u64 wake_began(struct thread_state *ts, __u64 now)
{
	__u64 t = ts->waking_ts;

	ts->waking_ts = 0;
	return t && t >= ts->last_ts && t <= now ? t : now;
}

/*
 * The part of a wake-up's stretch to sched_wakeup (gap) that its idle CPU
 * spent leaving idle: less the interrupts it handled meanwhile, which the
 * wait's split holds when its counters date from sched_waking (timed).
 * Saturated to 32 bits.
 */
static __always_inline __u32 wake_idle_ns(struct thread_state *ts, struct lw_cpu_state *cs,
					  __u64 gap, bool timed)
{
	__u64 intr;

	if (timed && cs) {
		intr = (cs->irq_ns - ts->wait_irq) + (cs->softirq_ns - ts->wait_softirq);
		if (irq_entry_ns)
			intr += intr_cost(cs->nirq, ts->wait_intr, gap);
		gap = gap > intr ? gap - intr : 0;
	}
	return gap < 0xffffffffULL ? gap : 0xffffffffU;
}

static __always_inline int on_wakeup(struct task_struct *p)
{
	struct thread_state *ts;
	bool was_busy;
	struct lw_cpu_state *cs;
	bool from_waking;
	__u64 now, wake;
	__u32 cpu;

	if (!is_target(p))
		return 0;
	ts = thread_find(p);
	if (!ts || ts->state != TS_SLEEPING)
		return 0;
	now = bpf_ktime_get_ns();
	wake = wake_began(ts, now);
	was_busy = ts->busy;
	if (was_busy) {
		/* asleep inside a request */
		__u64 delta = wake - ts->last_ts;

		/* khugepaged releasing the mmap lock it held to collapse our
		 * memory is the one waking us: that sleep is THP's. */
		if (ts->in_compact || is_thp_kthread(bpf_get_current_task_btf())) {
			ts->cum[LW_B_THP] += delta;
			__sync_fetch_and_add(&thp.khugepaged_wake_ns, delta);
		} else {
			mem_sleep(ts, delta);
		}
	}
	/* Its data may be what woke it. With handoff_watch, also when busy:
	 * the requests it holds open may have been answered by other threads
	 * since (their slots are freed only when this thread next touches
	 * their sockets), so reads after this wake-up start from it, not from
	 * a busy span that only those kept open. */
	if (req_by_conn && armed && (!was_busy || handoff_watch))
		cycle_open(ts, wake, true);
	ts->state = TS_RUNNABLE;
	ts->waiter_pid = 0;
	ts->last_ts = wake;
	cpu = lw_task_cpu(p);
	cs = cpu_state_get(cpu);
	/* woken into a throttled group, it waits for the quota first */
	quota_check(p, cpu, now, true);
	/* the counters taken at sched_waking, on the CPU it runs on */
	from_waking = ts->waiting == LW_WAIT_WAKING && ts->wait_cpu == cpu;
	if (!from_waking) {
		wait_end(ts);
		wait_start(ts, cpu, now, 0);
	} else if (!ts->busy) {
		wait_end(ts); /* woken for no request: not a wait to time */
	} else {
		ts->waiting = LW_WAIT_QUEUED;
		if (cs) /* a softirq this wake-up's IPI interrupted */
			softirq_clock_on(cs, cpu, now);
	}
	/* A wake-up queued to an idle CPU reaches sched_wakeup there, from
	 * its idle task, once that CPU left idle: the wait until now was the
	 * exit from idle, less the interrupts it handled first, whatever runs
	 * there before us (ksoftirqd, with the softirq such an interrupt
	 * raised; switch_in()). */
	ts->wake_idle = 0;
	if (!bpf_get_current_task_btf()->pid && bpf_get_smp_processor_id() == cpu)
		ts->wake_idle = wake_idle_ns(ts, cs, now - wake, from_waking);
	ckpt_take(ts, wake, LW_B_SCHED);
	return 0;
}

/* The start of a wake-up: see wake_began(). Only the time is kept; the
 * state changes at sched_wakeup, which every sched_waking is followed by. */
SEC("tp_btf/sched_waking")
int BPF_PROG(lw_sched_waking, struct task_struct *p)
{
	struct thread_state *ts;
	__u64 now;

	if (!is_target(p))
		return 0;
	ts = thread_find(p);
	if (!ts)
		return 0;
	now = bpf_ktime_get_ns();
	ts->waking_ts = now;
	/* The interrupts of the CPU it last ran on count from here: a
	 * wake-up queued to an idle CPU reaches sched_wakeup only after that
	 * CPU handled what came before the IPI (under the lab's disk
	 * injector, interrupts and their softirqs held a third of the time
	 * from sched_waking to sched_wakeup; bpftrace). Not while it is still
	 * switching out: that wake-up races its sleep (wake_began()). */
	if (ts->state == TS_SLEEPING && !ts->waiting && armed)
		wait_start(ts, lw_task_cpu(p), now, LW_WAIT_WAKING);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(lw_sched_wakeup, struct task_struct *p)
{
	return on_wakeup(p);
}

/*
 * power:cpu_idle, on entering an idle state (its number) and on leaving it
 * (PWR_EVENT_EXIT). A thread woken onto an idle CPU waits for that CPU to
 * leave the state it was in: a C-state's exit latency, or nothing much if
 * the state polls (POLL, the kernel's idle=poll, a PM QoS limit that allows
 * no C-state). Only entries change what the CPU is in.
 */
SEC("tp_btf/cpu_idle")
int BPF_PROG(lw_cpu_idle, unsigned int state, unsigned int cpu_id)
{
	struct lw_cpu_state *cs;

	if (state == (unsigned int)-1)
		return 0;
	cs = cpu_state_get(bpf_get_smp_processor_id());
	if (cs)
		cs->idle_polling = state < 32 && ((idle_poll_states >> state) & 1);
	return 0;
}

#endif /* LW_SCHED_BPF_H */
