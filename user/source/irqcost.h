/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * irqcost.h - what one interrupt costs a running task on this machine,
 * beyond its handler.
 *
 * irq_handler_entry/exit and softirq_entry/exit bracket the handlers only.
 * The rest of an interrupt (the entry stub, the exit and return, and in a
 * virtual machine the host's injection of the interrupt and the guest's
 * return through it) lies outside every tracepoint, yet the interrupted task
 * loses it: about 10 us per interrupt on the development VM against 1-2 us
 * in the handlers, and well under a microsecond on bare metal. latwhy
 * measures it once at start: a thread spins reading the clock on one CPU
 * while another sends it IPIs (membarrier), and the gap the spinning thread
 * sees around each IPI is that cost.
 */
#ifndef LW_IRQCOST_H
#define LW_IRQCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* A time the spinning thread did not run: between two clock reads. */
struct lw_gap {
	__u64 start;
	__u64 end;
	/* it was switched out meanwhile (its context switches went up): the
	 * gap is another task's slice, not an interrupt */
	bool switched;
};

/* One IPI: the clock before membarrier() and after it returned (it waits
 * for the handler to finish on the other CPU). */
struct lw_ipi {
	__u64 sent;
	__u64 done;
};

/*
 * The median length of the gaps that hold an IPI: for each IPI, the longest
 * gap that ends after it was sent and starts before it was done, not counting
 * gaps in which the thread was switched out. gaps and ipis are in time
 * order. *matched gets how many IPIs had one. 0 when fewer than half did
 * (another task held the spinning thread's CPU): not measured.
 */
__u64 lw_irqcost_median(const struct lw_gap *gaps, size_t ngaps, const struct lw_ipi *ipis,
			size_t nipis, size_t *matched);

/*
 * Measure on this machine: spin on spin_cpu, send from send_cpu. The cost in
 * ns, or a negative errno (-ENOSYS without membarrier's private expedited
 * command, -EAGAIN when too few IPIs were seen). Takes about 60 ms.
 */
int lw_irqcost_measure(int spin_cpu, int send_cpu, __u64 *cost_ns);

/*
 * lw_irqcost_measure() from the CPU the caller runs on to the highest other
 * online CPU (root's /sys/devices/system/cpu/online), also one outside the
 * caller's affinity: an interrupt costs the same on every CPU of a machine,
 * and a latwhy kept off the target's CPUs (as the lab keeps it) may still
 * spin there for the measurement's 30 ms, before it attaches anything. A CPU
 * too busy to measure on (-EAGAIN), or outside a cpuset that confines the
 * caller (-EINVAL), is left for the next one down, three tries at most.
 * -ENODEV with one CPU online.
 */
int lw_irqcost_measure_here(const char *root, __u64 *cost_ns);

#endif /* LW_IRQCOST_H */
