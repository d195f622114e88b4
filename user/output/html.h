/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * html.h - a capture as one self-contained HTML page, for people who would
 * rather look than read: slow requests over time by cause, the latency
 * distribution with the slow threshold, cause shares, interrupt time per CPU
 * and per vector, the clock per CPU, THP work, the preemptors and the
 * findings with their commands. Inline CSS and SVG only: no script, and
 * nothing the page fetches.
 *
 * A sink like trace_event.h: it keeps what it needs of the records (binned
 * at the end, never one SVG element per request) and writes the page once
 * the engine's summary and the findings are known.
 *
 * Marks a test can count: every chart's marks have class "mark KIND"
 * (slow-bin, hist-bin, cause-share, irq-cpu, irq-vec, clock-cpu, thp-bin,
 * preempt, slow-wait) and data-* attributes with their numbers.
 */
#ifndef LW_HTML_H
#define LW_HTML_H

#include <stdio.h>

#include "advice/finding.h"
#include "engine/engine.h"
#include "engine/sink.h"

/* One line of the page's header: "host", "vm". A NULL value is "?". */
struct lw_html_fact {
	const char *label;
	const char *value;
};

struct lw_html_facts {
	const char *title; /* the capture's file name */
	const struct lw_html_fact *v;
	size_t n;
};

struct lw_html;

struct lw_html *lw_html_new(void);
struct lw_sink lw_html_sink(struct lw_html *h);
/* The page into f, from what the sink kept, the summary s and the findings
 * fs (NULL: none could be made). 0 or -errno (out of memory, a write). */
int lw_html_write(struct lw_html *h, FILE *f, const struct lw_html_facts *facts,
		  const struct lw_summary *s, const struct lw_findings *fs);
void lw_html_free(struct lw_html *h);

#endif /* LW_HTML_H */
