/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * irq.bpf.h - interrupt time: each CPU's hard-IRQ and softirq counters and
 * handler programs, an interrupt's entry cost, ksoftirqd's run time, and the
 * per-IRQ and per-vector evidence.
 */

#ifndef LW_IRQ_BPF_H
#define LW_IRQ_BPF_H

#include "state.bpf.h"

/* What one interrupt costs a running task beyond its handler on this
 * machine, measured at start (user/source/irqcost.c) and set before load; 0: not
 * measured, and the interrupt counters are not read (see LW_B_IRQ_ENTRY). */
const volatile __u32 irq_entry_ns = 0;

/* Written by userspace: the largest ksoftirqd pid (lw_cpu_state::ksd_pid). */
__u32 ksd_pid_max = 0;

/* Interrupt evidence. Per-CPU arrays: the handlers index them without
 * hashing or atomics; userspace sums nothing, it reads each CPU's row. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LW_IRQ_FAST);
	__type(key, __u32);
	__type(value, struct lw_count);
} irq_ev SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LW_MAX_IRQ_KEYS);
	__type(key, struct lw_irq_key);
	__type(value, struct lw_count);
} irq_ev_hi SEC(".maps"); /* IRQs numbered LW_IRQ_FAST and up */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LW_MAX_IRQ_KEYS);
	__type(key, __u32);
	__type(value, char[LW_IRQ_NAME_LEN]);
} irq_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LW_SOFTIRQ_ROWS);
	__type(key, __u32);
	__type(value, struct lw_count);
} softirq_ev SEC(".maps");

/* The entry and exit cost of the interrupts from count snap to count now
 * (32-bit counters, so a difference), at most max. A count that went
 * backwards is another CPU's after a missed migration: none. */
static __always_inline __u64 intr_cost(__u32 now, __u32 snap, __u64 max)
{
	__s32 n = (__s32)(now - snap);
	__u64 c;

	if (n <= 0)
		return 0;
	c = (__u64)n * irq_entry_ns;
	return c < max ? c : max;
}

/* The CPU's ksoftirqd run time up to now. */
static __always_inline __u64 cpu_ksd_ns(struct lw_cpu_state *cs, __u64 now)
{
	__u64 start = cs->ksd_start;

	return cs->ksd_ns + (start && now > start ? now - start : 0);
}

/*
 * Woken on the CPU it will run on while a softirq runs there (its data's
 * NET_RX, in ksoftirqd or at an IRQ's exit; a BLOCK run that the wake-up's
 * IPI interrupted) which began while nothing here was watched: the rest of
 * that run delays it as much as if it had been timed, so the clock starts
 * now. Only on this CPU: another's softirq may end while we write.
 */
static __always_inline void softirq_clock_on(struct lw_cpu_state *cs, __u32 cpu, __u64 now)
{
	if (cs->softirq_start == LW_SOFTIRQ_UNTIMED && cpu == bpf_get_smp_processor_id()) {
		cs->softirq_start = now;
		cs->softirq_irq_snap = (__u32)cs->irq_ns;
	}
}

/*
 * The softirq time of a wait behind ksoftirqd: its run time there (ksd, a
 * difference of 32-bit ns) less the hard interrupts it may have nested, and
 * their entry and exit. It also holds what the timed softirq time cannot: a
 * run that began before the wait (a BLOCK or NET_RX batch deferred to
 * ksoftirqd while nothing of the target's was on the CPU, untimed), which
 * left a remotely woken target waiting behind "ksoftirqd" as if behind any
 * task. Counted as evidence (LW_SOFTIRQ_KSOFTIRQD) for what it adds to the
 * timed time soft.
 */
static __always_inline __u64 ksd_softirq(struct thread_state *ts, struct lw_cpu_state *cs,
					 __u64 now, __u64 irq, __u64 soft)
{
	__u64 ksd = (__u32)((__u32)cpu_ksd_ns(cs, now) - ts->wait_ksd);
	__u32 key = LW_SOFTIRQ_KSOFTIRQD;
	struct lw_count *c;

	irq += intr_cost(cs->nirq, ts->wait_intr, ksd);
	if (ksd <= irq + soft)
		return soft;
	c = bpf_map_lookup_elem(&softirq_ev, &key);
	if (c) {
		c->ns += ksd - irq - soft;
		c->count++;
	}
	return ksd - irq;
}

/*
 * ksoftirqd leaving or taking its CPU, for ksd_softirq(). Its pid is small
 * (started at boot), so one compare against the largest turns every later
 * task away before the CPU's second cache line is read.
 */
static __always_inline bool ksd_switch_seen(struct task_struct *prev, struct task_struct *next)
{
	/* pids 1..ksd_pid_max: not the idle task's 0, nothing when unknown */
	return (__u32)(prev->pid - 1) < ksd_pid_max || (__u32)(next->pid - 1) < ksd_pid_max;
}

static __always_inline bool is_ksd(struct lw_cpu_state *cs, struct task_struct *t)
{
	return t->pid == cs->ksd_pid && cs->ksd_pid;
}

static __always_inline void ksd_switch(struct lw_cpu_state *cs, struct task_struct *next, __u64 now)
{
	if (cs->ksd_start) {
		cs->ksd_ns += now > cs->ksd_start ? now - cs->ksd_start : 0;
		cs->ksd_start = 0;
	}
	if (is_ksd(cs, next))
		cs->ksd_start = now;
}

/*
 * Interrupt time matters only while a request runs or waits on this CPU: the
 * per-CPU counters are read as deltas over exactly those spans. Elsewhere the
 * handlers return before reading the clock, which is most of their cost.
 */
static __always_inline bool cpu_watched(struct lw_cpu_state *cs)
{
	return (cs->target_cur & LW_CUR_IN_REQ) || cs->waiters;
}

/*
 * An interrupt that nests in a timed softirq (a disk's next completion during
 * the BLOCK softirq of the one before) has its entry and exit in that
 * softirq's time already, which excludes only nested handlers: it is not
 * counted for LW_B_IRQ_ENTRY.
 */
static __always_inline bool in_timed_softirq(struct lw_cpu_state *cs)
{
	return cs->softirq_start > LW_SOFTIRQ_UNTIMED;
}

/*
 * Call-function IPIs (x86's irq_vectors; elsewhere IPIs are device
 * interrupts): RPS's kick of NET_RX on another CPU, TLB shootdowns,
 * smp_call_function. Their handlers are short and not timed; what they cost
 * a running target is mostly their entry and exit, counted here for
 * LW_B_IRQ_ENTRY. Not the reschedule IPI: that one belongs to the
 * preemption it asks for.
 */
static __always_inline void ipi_count(void)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());

	if (cs && (cs->target_cur & LW_CUR_IN_REQ) && !in_timed_softirq(cs))
		cs->nipi++;
}

SEC("tp_btf/call_function_entry")
int BPF_PROG(lw_ipi_call, int vector)
{
	ipi_count();
	return 0;
}

SEC("tp_btf/call_function_single_entry")
int BPF_PROG(lw_ipi_call_single, int vector)
{
	ipi_count();
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(lw_irq_entry, int irq, struct irqaction *action)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());

	if (cs && cpu_watched(cs))
		cs->irq_start = bpf_ktime_get_ns();
	return 0;
}

/* The evidence counter of irq on this CPU; *first when it had none. */
static __always_inline struct lw_count *irq_count(__u32 irq, __u32 cpu, bool *first)
{
	struct lw_irq_key key = {.irq = irq, .cpu = cpu};
	struct lw_count zero = {}, *c;

	if (irq < LW_IRQ_FAST) {
		c = bpf_map_lookup_elem(&irq_ev, &irq);
		*first = c && !c->count && !c->ns;
		return c;
	}
	c = bpf_map_lookup_elem(&irq_ev_hi, &key);
	if (c)
		return c;
	bpf_map_update_elem(&irq_ev_hi, &key, &zero, BPF_NOEXIST);
	*first = true;
	return bpf_map_lookup_elem(&irq_ev_hi, &key);
}

/*
 * A shared line runs all its actions one after another for every interrupt,
 * each bracketed by its own entry/exit pair: summing the pairs counts the
 * time once, and counting only at the chain's last action (next == NULL)
 * counts the interrupt once, whichever actions claimed it.
 */
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(lw_irq_exit, int irq, struct irqaction *action, int ret)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct lw_cpu_state *cs = cpu_state_get(cpu);
	struct lw_count *c;
	bool first = false;
	__u64 delta;

	if (!cs || !cs->irq_start)
		return 0;
	delta = bpf_ktime_get_ns() - cs->irq_start;
	cs->irq_start = 0;
	cs->irq_ns += delta;
	if (!action->next && !in_timed_softirq(cs))
		cs->nirq++;
	c = irq_count(irq, cpu, &first);
	if (!c)
		return 0;
	/* this CPU's row, and handlers do not nest: no other writer */
	c->ns += delta;
	c->count += action->next ? 0 : 1;
	if (first) {
		char name[LW_IRQ_NAME_LEN] = {};
		__u32 key = irq;

		bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(action, name));
		bpf_map_update_elem(&irq_names, &key, name, BPF_NOEXIST);
	}
	return 0;
}

/*
 * A send by the target raises NET_RX on its own CPU when the peer is local
 * (loopback, a sidecar): the send's local_bh_enable() then runs the peer's
 * receive in the target's context. That is the cost of its own send, not an
 * interrupt: the first NET_RX after the send began (send_conn() sets
 * LW_CUR_SENDING) stays in the thread's run, and is neither timed nor
 * counted as evidence, which spares the two clock reads of every local
 * reply. A context switch clears both flags with the rest of target_cur, so
 * one NET_RX per send at most.
 */
SEC("tp_btf/softirq_entry")
int BPF_PROG(lw_softirq_entry, unsigned int vec)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());
	__u32 cur;

	if (!cs)
		return 0;
	cur = cs->target_cur;
	if ((cur & LW_CUR_SENDING) && vec == NET_RX_SOFTIRQ) {
		cs->target_cur = (cur & ~LW_CUR_SENDING) | LW_CUR_OWN_SOFTIRQ;
		return 0;
	}
	if (!cpu_watched(cs)) {
		/* no clock read: wait_start() may start the clock mid-run */
		cs->softirq_start = LW_SOFTIRQ_UNTIMED;
		return 0;
	}
	cs->softirq_start = bpf_ktime_get_ns();
	cs->softirq_irq_snap = (__u32)cs->irq_ns;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(lw_softirq_exit, unsigned int vec)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());
	struct lw_count *c;
	__u32 key = vec;
	__u64 delta, nested;

	if (!cs)
		return 0;
	if (vec == NET_RX_SOFTIRQ && (cs->target_cur & LW_CUR_OWN_SOFTIRQ)) {
		cs->target_cur &= ~LW_CUR_OWN_SOFTIRQ;
		return 0;
	}
	if (cs->softirq_start <= LW_SOFTIRQ_UNTIMED) {
		cs->softirq_start = 0;
		return 0;
	}
	delta = bpf_ktime_get_ns() - cs->softirq_start;
	nested = (__u32)((__u32)cs->irq_ns - cs->softirq_irq_snap);
	delta = delta > nested ? delta - nested : 0;
	cs->softirq_start = 0;
	cs->softirq_ns += delta;
	c = bpf_map_lookup_elem(&softirq_ev, &key);
	if (c) {
		c->ns += delta;
		c->count++;
	}
	return 0;
}

#endif /* LW_IRQ_BPF_H */
