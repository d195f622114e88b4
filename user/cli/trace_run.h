/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* trace_run.h - the live trace: the tracer source wired to its sinks. */
#ifndef LW_TRACE_RUN_H
#define LW_TRACE_RUN_H

#include "cli/trace_opts.h"

/* How a run ended: the kind of outcome, which the command maps to its exit. */
enum lw_run_status {
	LW_RUN_OK = 0,
	LW_RUN_FAILED = 1, /* at run time, after a one-line error on stderr */
	LW_RUN_USAGE = 2,  /* a bad --skip list, found before anything loaded */
};

/*
 * Trace o->pid until Ctrl-C, -d, or its exit: source -> engine (and the
 * live view, or with --json the per-request lines) -> summary -> findings
 * -> output on stdout.
 */
enum lw_run_status lw_trace_run(const struct lw_opts *o);

#endif /* LW_TRACE_RUN_H */
