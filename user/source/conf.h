/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * conf.h - what the live tracer is asked to trace and how: its targets, the
 * slow threshold, request delimiting, what not to attach. The commands fill
 * it from their options (cli/trace_opts.c); the tracer reads nothing else.
 */
#ifndef LW_CONF_H
#define LW_CONF_H

#include <stdbool.h>
#include <linux/types.h>

#include "latwhy.h" /* enum lw_req_mode, LW_MAX_TARGETS */

#define LW_PATH_MAX 4096

/* What a target is: -p PID, --comm NAME (every process of that name),
 * --cgroup PATH (cgroup v2, below its root, and the cgroups below it),
 * --unit NAME (a systemd unit's cgroup), --pods (every container of every
 * Kubernetes pod on the node), --pod NAMESPACE/NAME (one pod's). Several
 * may be given, up to LW_MAX_TARGET_OPTS; a pod target takes a slot per
 * container (LW_MAX_TARGETS in all). */
enum lw_target_kind {
	LW_TARGET_PID = 1,
	LW_TARGET_COMM,
	LW_TARGET_CGROUP,
	LW_TARGET_UNIT,
	LW_TARGET_PODS,
	LW_TARGET_POD,
};

#define LW_MAX_TARGET_OPTS 16

#define LW_TARGET_NAME 512

struct lw_target_opt {
	enum lw_target_kind kind;
	int pid;		   /* LW_TARGET_PID */
	char name[LW_TARGET_NAME]; /* comm, cgroup path ("/a/b"), unit name or "NS/POD" */
};

struct lw_trace_conf {
	/* the pid when the only target is one -p PID, else 0: what the
	 * single-process paths (the node's facts of it, uprobes) use */
	int pid;
	struct lw_target_opt targets[LW_MAX_TARGET_OPTS];
	int ntargets;
	__u64 duration_ns; /* 0 = until Ctrl-C */
	__u64 slow_ns;	   /* 0 = running p99 */
	__u32 ref_khz;	   /* 0 = cpuinfo_max_freq */
	bool verbose;
	enum lw_req_mode req_mode;
	char uprobe_bin[LW_PATH_MAX];
	char uprobe_sym[256];
	__u64 interval_ns; /* how often counters are read (the live view's refresh) */
	char skip[512];	   /* comma-separated tracepoints not to attach */
	/* --irq-cost: one interrupt's entry and exit beyond its handler;
	 * unset: measured at start (irqcost.h); 0: not counted */
	bool irq_cost_set;
	__u64 irq_cost_ns;
	/* slow requests counted in the kernel only, no record each (serve
	 * without a hindsight window): not an option, set by the command */
	bool counts_only;
	/* serve's always-attached tier (bpf/watch.bpf.h) beside full tracing,
	 * where the kernel has what it needs: set by the command */
	bool watch;
};

#endif /* LW_CONF_H */
