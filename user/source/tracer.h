/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* tracer.h - the live tracer. */
#ifndef LW_TRACER_H
#define LW_TRACER_H

#include "cli/opts.h"

/* How a trace ended: the kind of outcome, which the command maps to its exit. */
enum lw_run_status {
	LW_RUN_OK = 0,
	LW_RUN_FAILED = 1, /* a one-line error was printed */
	LW_RUN_USAGE = 2,  /* the options cannot work here (a bad --skip list) */
};

/* Trace o->pid until Ctrl-C, -d, or its exit; print live view and summary.
 * Returns the process exit code (0, or 1 after a one-line error). */
int lw_trace_run(const struct lw_opts *o);

#endif /* LW_TRACER_H */
