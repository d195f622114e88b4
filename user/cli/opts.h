/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* opts.h - command-line options of the live tracer. */
#ifndef LW_OPTS_H
#define LW_OPTS_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <linux/types.h>
#include "latwhy.h" /* enum lw_req_mode */

#define LW_PATH_MAX 4096

/* What a target is: -p PID, --comm NAME (every process of that name),
 * --cgroup PATH (cgroup v2, below its root), --unit NAME (a systemd unit's
 * cgroup). Several may be given, up to LW_MAX_TARGETS. */
enum lw_target_kind {
	LW_TARGET_PID = 1,
	LW_TARGET_COMM,
	LW_TARGET_CGROUP,
	LW_TARGET_UNIT,
};

#define LW_TARGET_NAME 512

struct lw_target_opt {
	enum lw_target_kind kind;
	int pid;		   /* LW_TARGET_PID */
	char name[LW_TARGET_NAME]; /* comm, cgroup path ("/a/b") or unit name */
};

/* The parser's word when no target was given. */
#define LW_NO_TARGET "a target is needed: -p PID, --comm NAME, --cgroup PATH or --unit NAME"

struct lw_opts {
	/* the pid when the only target is one -p PID, else 0: what the
	 * single-process paths (the node's facts of it, uprobes) use */
	int pid;
	struct lw_target_opt targets[LW_MAX_TARGETS];
	int ntargets;
	__u64 duration_ns; /* 0 = until Ctrl-C */
	__u64 slow_ns;	   /* 0 = running p99 */
	__u32 ref_khz;	   /* 0 = cpuinfo_max_freq */
	bool json;
	bool quiet; /* no live view */
	bool verbose;
	enum lw_req_mode req_mode;
	char uprobe_bin[LW_PATH_MAX];
	char uprobe_sym[256];
	__u64 interval_ns; /* live view refresh */
	char skip[512];	   /* comma-separated tracepoints not to attach */
	/* --irq-cost: one interrupt's entry and exit beyond its handler;
	 * unset: measured at start (irqcost.h); 0: not counted */
	bool irq_cost_set;
	__u64 irq_cost_ns;
	char capture[LW_PATH_MAX]; /* --capture FILE: "" none */
	/* slow requests counted in the kernel only, no record each (serve
	 * without a hindsight window): not an option, set by the command */
	bool counts_only;
};

/*
 * Parse "250ms", "10s", "1.5s", "2m", "800us", "5000ns" (bare numbers are
 * seconds). 0 or -EINVAL.
 */
int lw_parse_duration(const char *s, __u64 *ns);

/*
 * Parse the tracer's argv (argv[0] is the program). 0 on success; 1 when
 * help was printed; -EINVAL with a one-line message in err otherwise.
 */
int lw_opts_parse(struct lw_opts *o, int argc, char **argv, char *err, size_t errlen);

void lw_opts_usage(FILE *f);

/* For commands that take their own options out of argv before the trace's
 * parser sees the rest: argv[*i] is "--name=value" (the value), or "--name"
 * with the value next (advancing *i); NULL otherwise. */
const char *lw_opt_value(int argc, char **argv, int *i, const char *name);

/* One of a command's own options at argv[*i] (advancing *i past its value):
 * 1 taken, 0 not its own, -EINVAL with a message in err. */
typedef int (*lw_opt_take_fn)(void *ctx, int argc, char **argv, int *i, char *err, size_t errlen);

/* argv without the options take() took, argv[0] first, for the trace's
 * parser: *n entries and room for one more. NULL with err set when take()
 * refused one or memory ran out; the caller frees the array. */
char **lw_opts_rest(int argc, char **argv, lw_opt_take_fn take, void *ctx, int *n, char *err,
		    size_t errlen);

/* The targets as given: "pid 42, cgroup /a, unit x.service". */
void lw_opts_targets(const struct lw_opts *o, char *buf, size_t len);

/* name is in the comma-separated list */
bool lw_list_has(const char *list, const char *name);

#endif /* LW_OPTS_H */
