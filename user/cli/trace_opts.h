/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* trace_opts.h - the command line of the live trace (and of record and serve). */
#ifndef LW_TRACE_OPTS_H
#define LW_TRACE_OPTS_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <linux/types.h>
#include "source/conf.h"

/* The parser's word when no target was given. */
#define LW_NO_TARGET                                                                               \
	"a target is needed: -p PID, --comm NAME, --cgroup PATH, --unit NAME, --pods or --pod "    \
	"NS/NAME"

/* The trace's command line: what the tracer is given, and how the trace
 * front end shows it. */
struct lw_opts {
	struct lw_trace_conf conf;
	bool json;
	bool quiet;		   /* no live view */
	char capture[LW_PATH_MAX]; /* --capture FILE: "" none */
};

/* The trace's options, for every command that traces: its getopt letters
 * and table entries (a command adds its own, with codes from LW_OPT_OWN). */
enum {
	LW_OPT_SLOW = 256,
	LW_OPT_REF,
	LW_OPT_REQUEST,
	LW_OPT_SKIP,
	LW_OPT_IRQ_COST,
	LW_OPT_CAPTURE,
	LW_OPT_COMM,
	LW_OPT_CGROUP,
	LW_OPT_UNIT,
	LW_OPT_PODS,
	LW_OPT_POD,
	LW_OPT_OWN = 512,
};

#define LW_TRACE_SHORTOPTS "p:d:ji:qv"
#define LW_TRACE_LONGOPTS                                                                          \
	{"pid", required_argument, NULL, 'p'}, {"comm", required_argument, NULL, LW_OPT_COMM},     \
		{"cgroup", required_argument, NULL, LW_OPT_CGROUP},                                \
		{"unit", required_argument, NULL, LW_OPT_UNIT},                                    \
		{"pods", no_argument, NULL, LW_OPT_PODS},                                          \
		{"pod", required_argument, NULL, LW_OPT_POD},                                      \
		{"duration", required_argument, NULL, 'd'},                                        \
		{"slow", required_argument, NULL, LW_OPT_SLOW},                                    \
		{"ref-mhz", required_argument, NULL, LW_OPT_REF},                                  \
		{"request", required_argument, NULL, LW_OPT_REQUEST},                              \
		{"skip", required_argument, NULL, LW_OPT_SKIP},                                    \
		{"irq-cost", required_argument, NULL, LW_OPT_IRQ_COST},                            \
		{"capture", required_argument, NULL, LW_OPT_CAPTURE},                              \
		{"json", no_argument, NULL, 'j'}, {"quiet", no_argument, NULL, 'q'},               \
		{"interval", required_argument, NULL, 'i'}, {"verbose", no_argument, NULL, 'v'},   \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}

/* Defaults: no target, the live view once a second. */
void lw_trace_opts_init(struct lw_opts *o);
/* One of the trace's options (ctx a struct lw_opts): lw_opt_fn's returns. */
int lw_trace_opt(void *ctx, int opt, const char *arg, char *err, size_t errlen);
/* After the last option: a target was given. 0 or -EINVAL with err. */
int lw_trace_opts_done(struct lw_opts *o, char *err, size_t errlen);

/*
 * Parse the trace's argv (argv[0] is the program). 0 on success; 1 when
 * help was asked for; -EINVAL with a one-line message in err otherwise.
 */
int lw_trace_opts_parse(struct lw_opts *o, int argc, char **argv, char *err, size_t errlen);
void lw_trace_usage(FILE *f);

/* The targets as given: "pid 42, cgroup /a, unit x.service". */
void lw_trace_opts_targets(const struct lw_opts *o, char *buf, size_t len);

#endif /* LW_TRACE_OPTS_H */
