/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* opts.h - command-line options of the live tracer. */
#ifndef LW_OPTS_H
#define LW_OPTS_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <linux/types.h>
#include "source/conf.h"

/* The parser's word when no target was given. */
#define LW_NO_TARGET "a target is needed: -p PID, --comm NAME, --cgroup PATH or --unit NAME"

/* The trace's command line: what the tracer is given, and how the trace
 * front end shows it. */
struct lw_opts {
	struct lw_trace_conf conf;
	bool json;
	bool quiet;		   /* no live view */
	char capture[LW_PATH_MAX]; /* --capture FILE: "" none */
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

#endif /* LW_OPTS_H */
