/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* tracer.h - the live tracer. */
#ifndef LW_TRACER_H
#define LW_TRACER_H

#include "cli/opts.h"

/* Trace o->pid until Ctrl-C, -d, or its exit; print live view and summary.
 * Returns the process exit code (0, or 1 after a one-line error). */
int lw_trace_run(const struct lw_opts *o);

#endif /* LW_TRACER_H */
