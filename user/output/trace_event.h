/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * trace_event.h - records as the Trace Event Format (JSON), which Perfetto's
 * UI and Chromium's trace viewer open: a track per target thread with a
 * slice per slow request (its breakdown and cause as arguments), counter
 * tracks for each CPU's clock and interrupt time, names as metadata. A
 * sink: it keeps what it needs and writes the file at the end.
 */
#ifndef LW_TRACE_EVENT_H
#define LW_TRACE_EVENT_H

#include <stdio.h>

#include "engine/sink.h"

struct lw_trace_event;

struct lw_trace_event *lw_trace_event_new(void);
struct lw_sink lw_trace_event_sink(struct lw_trace_event *t);
/* The whole trace into f; 0 or -errno (a write error). */
int lw_trace_event_write(struct lw_trace_event *t, FILE *f);
void lw_trace_event_free(struct lw_trace_event *t);

#endif /* LW_TRACE_EVENT_H */
