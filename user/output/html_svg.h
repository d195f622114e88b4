/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * html_svg.h - the HTML report's escaping and its SVG charts, for html.c
 * only. Each chart draws data already aggregated: a few hundred elements at
 * most, whatever the capture's size.
 */
#ifndef LW_HTML_SVG_H
#define LW_HTML_SVG_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "engine/engine.h"

#define MAX_BINS       60 /* time bins of a chart */
#define MAX_ROWS       12 /* rows of a bar list */
#define MAX_CLOCK_CPUS 16
/* the timeline's series: enum lw_cause up to idle, then handed off */
#define SERIES_HANDOFF (LW_CAUSE_TRACED_LAST + 1)
#define NR_SERIES      (SERIES_HANDOFF + 1)

/* the run's time, cut into bins of a round width */
struct html_time {
	__u64 t0, t1; /* CLOCK_MONOTONIC */
	__u64 width;  /* of a bin */
	size_t nbins;
};

/* a CPU's clock, measured at ts_ns */
struct html_clock {
	__u64 ts_ns;
	__u32 cpu, khz;
};

/* THP counts of the target's memory so far, where they moved */
struct html_thp {
	__u64 ts_ns;
	__u64 collapses, compactions;
};

/* one row of a bar list: up to two stacked segments */
struct lw_svg_row {
	char label[64];
	char value[96];
	char attrs[160]; /* the mark's data-* attributes, already escaped */
	__u64 seg[2];
	const char *cls; /* seg[0]'s class instead of the chart's, or NULL */
};

/* s as HTML text: & < > " ' escaped, control characters as '?' */
void lw_html_esc(FILE *f, const char *s);
void lw_html_escf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* bins[b * ns + k]: the count of series k in time bin b, stacked */
void lw_svg_stacked_bins(FILE *f, const char *mark, const __u64 *bins, size_t ns,
			 const char *const *names, const struct html_time *t, size_t total);
/* a latency histogram of LW_HIST_BUCKETS, log-log, with the threshold */
void lw_svg_hist(FILE *f, const __u64 *hist, __u64 threshold_ns);
/* the slow requests' time as one bar, by cause */
void lw_svg_shares(FILE *f, const struct lw_summary *s);
/* rows as horizontal bars (the first max of them), the largest full width */
void lw_svg_hbars(FILE *f, const char *mark, const char *const cls[2],
		  const struct lw_svg_row *rows, size_t n, size_t max);
/* each CPU's clock over time, a step line per CPU */
void lw_svg_clock(FILE *f, const struct html_clock *c, size_t n, __u32 ref_khz,
		  const struct html_time *t);
/* THP collapses and compactions per time bin */
void lw_svg_thp(FILE *f, const struct html_thp *v, size_t n, const struct html_time *t);

#endif /* LW_HTML_SVG_H */
