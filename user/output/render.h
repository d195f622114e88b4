/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * render.h - the live view, the summary and NDJSON output.
 *
 * Renderers read the engine's summary only, so live tracing, capture files
 * and reports print the same way.
 */
#ifndef LW_RENDER_H
#define LW_RENDER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "engine/engine.h"
#include "advice/finding.h"

struct lw_render;

struct lw_render *lw_render_new(FILE *f, bool json);
void lw_render_free(struct lw_render *r);

/* Name the target in the text by label ("cgroup /a (3 processes)") rather
 * than by the summary's pid and comm; NULL or "" goes back to those. */
void lw_render_set_target(struct lw_render *r, const char *label);
/* The --skip list the trace ran with ("" none), so that the summary says why
 * each tracepoint it lacks was not attached; NULL: not known (a capture
 * that did not record it). */
void lw_render_set_skip(struct lw_render *r, const char *skip);
/* One line saying what is traced and what cannot be (missing tracepoints). */
void lw_render_start(struct lw_render *r, int pid, const char *comm, __u32 flags, __u64 slow_ns);
/* The live view, once per interval (text mode only). */
void lw_render_live(struct lw_render *r, const struct lw_summary *s, const struct lw_tick_rec *t,
		    __u64 interval_ns);
/* The summary: text, or one NDJSON line. */
void lw_render_summary(struct lw_render *r, const struct lw_summary *s,
		       const struct lw_findings *fs);

#endif /* LW_RENDER_H */
