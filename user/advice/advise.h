/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * advise.h - judge the node's switches and a trace's causes, produce findings.
 *
 * Commands in findings (fix, persist, rollback) are shell text in a small
 * grammar that fixscript.c turns into scripts; keep to it:
 *   echo VALUE > /sys/...|/proc/...   a kernel setting (VALUE bare or 'quoted')
 *   cat > /etc/FILE <<'EOF'\n...EOF  a whole file written (unit, tmpfiles, ...)
 *   rm -f /etc/FILE                   a file removed
 *   # text                            a note for the operator, never run
 *   anything else                     one simple command (no redirection)
 */
#ifndef LW_ADVISE_H
#define LW_ADVISE_H

#include <stddef.h>

#include "advice/finding.h"
#include "node/node.h"

/* Thresholds (why these values: see the advisor that uses each, adv.h). */
#define LW_DEEP_IDLE_US	 50	/* C-state exit latency that a request feels */
#define LW_HALT_POLL_NS	 200000 /* the kernel's default guest_halt_poll_ns */
#define LW_SHARE_FINDING 0.10	/* a trace cause this big gets a finding */
#define LW_SHARE_CRIT	 0.25	/* the largest cause this big is critical */
#define LW_IRQ_RATE_WARN 100	/* IRQs/s on the target's CPUs worth a warning */
#define LW_IRQ_RATE_CRIT 1000	/* IRQs/s on the target's CPUs */
#define LW_IRQ_BOOT_MIN	 100	/* IRQs since boot worth moving, without a sample */

/* How many IRQs, softirqs and preemptors a trace hands over: the engine's top ones. */
#define LW_FACT_IRQS	 8
#define LW_FACT_SOFTIRQS 8
#define LW_FACT_PREEMPT	 8
#define LW_FACT_CGROUPS	 LW_CG_LEVELS

/* A task's Kubernetes pod, as the trace named it (issue 31): in false when
 * it is in none, or that is not known (an older capture). */
struct lw_fact_pod {
	bool in;
	bool named; /* from the kubelet's log tree; else name is the pod's uid */
	char ns[64], name[256], container[64], qos[16];
};

/* What a trace measured, handed over by the engine for the live summary. */
struct lw_trace_facts {
	int pid;
	double share[LW_CAUSE_MAX]; /* share of slow-request extra time, 0..1 */
	unsigned long long cause_ns[LW_CAUSE_MAX];
	unsigned long long slow_requests;
	unsigned long long cpus_mask[LW_CPUSET_WORDS]; /* CPUs the target ran on, bit per cpu */
	struct lw_fact_irq {
		unsigned irq, cpu;
		char name[32];
		unsigned long long ns, count;
	} irqs[LW_FACT_IRQS];
	size_t nr_irqs;
	struct lw_fact_softirq {
		char vec[16]; /* "NET_RX", "NET_RX_BACKLOG" */
		unsigned cpu;
		unsigned long long ns, count;
	} softirqs[LW_FACT_SOFTIRQS];
	size_t nr_softirqs;
	struct lw_fact_task {
		unsigned pid;
		char comm[16];
		unsigned long long ns, count;
		int own; /* a thread of the target itself */
		struct lw_fact_pod pod;
	} preempt[LW_FACT_PREEMPT];
	struct lw_fact_pod target_pod; /* the target process's */
	size_t nr_preempt;
	unsigned long long idle_wakeups, idle_wake_ns; /* waits for an idle CPU to wake */
	/* waits for an idle CPU that polled (no C-state): not the exit's */
	unsigned long long idle_poll_wakeups, idle_poll_ns;
	/* one interrupt's entry and exit, measured at start (0: not), and
	 * what the slow requests' irq holds of them */
	unsigned long long irq_entry_cost_ns, irq_entry_ns;
	unsigned long long thp_collapses, thp_scans, compactions;
	unsigned freq_khz; /* lowest clock seen on target CPUs, 0 = no data */
	unsigned ref_khz;
	const char *freq_source;	/* "no frequency data" allowed */
	unsigned long long duration_ns; /* of the trace, 0 unknown */
	/* CFS bandwidth throttling was not told apart (LW_META_NO_QUOTA: no
	 * CONFIG_CFS_BANDWIDTH tracing, a capture of ABI 1): a throttled wait
	 * sits in sched or idle then */
	bool no_quota;
	/* slow requests that waited out a throttle (ns[LW_B_QUOTA] > 0),
	 * those waits summed and the longest (lw_summary's quota_wait*) */
	unsigned long long quota_waits, quota_wait_ns, quota_wait_max_ns;
	/* the target's cgroups' cpu.stat when the trace began, by cgroup path
	 * (lw_explain_quota_start()): what the trace added is the difference
	 * with the node read after it; none: counted since each cgroup was
	 * made */
	struct lw_fact_cg_stat {
		char path[256];
		unsigned long long nr_periods, nr_throttled, throttled_usec;
	} cg_start[LW_FACT_CGROUPS];
	size_t nr_cg_start;
	/* memory management (LW_CAUSE_MEMORY): the slow requests' page
	 * faults and their split, the targets' reclaim and stalls */
	unsigned long long mem_faults_min, mem_faults_maj;
	unsigned long long mem_fault_ns, mem_fault_wait_ns, mem_reclaim_ns, mem_high_ns;
	unsigned long long mem_reclaims, mem_reclaims_memcg, mem_stalls;
	unsigned long long mem_scanned, mem_reclaimed;
	/* the node's free memory against its watermarks while traced, and
	 * kswapd's CPU time (snapshots 0: not read) */
	unsigned long long mem_snapshots, mem_below_low, mem_kswapd_ns, mem_kswapds;
};

/* Findings about the node's switches alone (latwhy check). 0 or -ENOMEM. */
int lw_advise_node(const struct lw_node *n, struct lw_findings *out);

/*
 * Findings for each cause of a trace with share >= LW_SHARE_FINDING, with the
 * trace's evidence and fixes built from the node's state. 0 or -ENOMEM.
 */
int lw_advise_trace(const struct lw_node *n, const struct lw_trace_facts *t,
		    struct lw_findings *out);

#endif /* LW_ADVISE_H */
