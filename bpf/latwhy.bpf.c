// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * latwhy.bpf.c - per-request latency accounting in the kernel.
 *
 * Model. Every target thread is, at any instant, RUNNING (on a CPU),
 * RUNNABLE (on a runqueue, another task on the CPU) or SLEEPING. Time is
 * charged to the state being left at each transition (sched_switch,
 * sched_wakeup) and at request boundaries, so the buckets of a request add up
 * to its latency by construction.
 *
 * Interrupt and clock time are kept as per-CPU monotonic counters (hard-IRQ
 * ns, softirq ns, and the integral of (1 - f/f_ref) dt). A running slice
 * snapshots them when it starts; the deltas when it ends are the IRQ,
 * softirq and clock-loss shares of that slice. No per-event output: one ring
 * buffer record per slow request, everything else in maps read once a
 * second.
 *
 * Layout. One object, built from a unit per concern, each including the
 * units it uses; they are listed, and included below, in that order:
 *   state    each thread's and CPU's state, shared settings and maps
 *   freq     clock loss per CPU (cpu_frequency)
 *   irq      interrupt and softirq time, their evidence (irq, softirq)
 *   account  a thread's buckets: slices, gaps, busy span, checkpoints
 *   thp      khugepaged/kcompactd time, collapses, direct compaction
 *   memory   page faults, direct reclaim, memory stalls (memory.high)
 *   preempt  whose CPU time a wait was: own, pod, host, kernel (issue 31)
 *   sched    thread accounting at switch, waking, wake-up (sched_*)
 *   backlog  a segment's wait in a receive backlog (netif_*)
 *   request  a request's slots, start, end and record
 *   delimit  where requests start and end: syscall, socket, uprobe
 *   watch    serve's always-attached tier: every TCP request timed alone
 * Headers, not objects linked with `bpftool gen object`: every program
 * inlines helpers of several units (a TCP reply runs delimit, request,
 * account, irq and freq code). Across objects such a helper would be a
 * global function, called rather than inlined and verified alone against its
 * prototype, without its callers' knowledge of its arguments; and the shared
 * maps and settings would be extern in all objects but one.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "latwhy.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The ABI of latwhy.h this object was built against: userspace refuses
 * another before load (tracer_check_abi()). */
const volatile __u32 lw_abi_version = LW_ABI_VERSION;

#include "state.bpf.h"
#include "freq.bpf.h"
#include "irq.bpf.h"
#include "account.bpf.h"
#include "thp.bpf.h"
#include "sched.bpf.h"
#include "backlog.bpf.h"
#include "request.bpf.h"
#include "delimit.bpf.h"
#include "watch.bpf.h"
