/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * faultcost.h - what one page fault costs a task beyond the span latwhy
 * times (bpf/memory.bpf.h: its entry tracepoint to its accounting's perf
 * event).
 *
 * Outside that span lie the exception's entry, its return, the retried
 * access's TLB refill (in a VM a walk of two page tables) and latwhy's own
 * programs: about 0.7 us a fault on the development VM against 1.5 us inside
 * it, time the faulting request loses and that would otherwise be counted
 * as its own running. Measured once, after attaching: a latwhy thread
 * touches fresh pages, each touch timed from user space, while the BPF side
 * keeps each of that thread's fault spans; the median difference, less the
 * clock reads' own cost, is the cost.
 */
#ifndef LW_FAULTCOST_H
#define LW_FAULTCOST_H

#include <stddef.h>
#include <linux/types.h>

/*
 * The median of gap[i] - span[i] - base over the n pairs where the gap
 * exceeds span + base (a pair where it does not had its fault or its clock
 * reads cut differently: left out). 0 when fewer than half the pairs are
 * left. Sorts nothing in place: gap and span are read only.
 */
__u64 lw_faultcost_median(const __u64 *gap, const __u64 *span, size_t n, __u64 base);

struct lw_tracer;

/*
 * Measure on this machine with t's programs attached (lw_tracer_attach()):
 * the cost in ns, written to the BPF side's fault_entry_ns, or a negative
 * errno (-EAGAIN: too few faults matched). Takes about 10 ms.
 */
int lw_faultcost_measure(struct lw_tracer *t, __u64 *cost_ns);

#endif /* LW_FAULTCOST_H */
