// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * html.c - the HTML report's sink and its page (see html.h).
 *
 * Everything is aggregated before it is drawn: slow requests into at most
 * MAX_BINS time bins, the histogram's non-empty buckets, interrupt time per
 * CPU and per vector, so a busy 30 s capture is a few hundred SVG elements
 * whatever its number of requests. Every text that came from the traced
 * host (comm names, IRQ names, finding text) is escaped.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "latwhy.h"
#include "lib/fmt.h"
#include "output/html.h"
#include "output/html_svg.h"

/* a slow request, reduced to what the timeline draws */
struct h_req {
	__u64 end_ns;
	__u8 series; /* enum lw_cause, or SERIES_HANDOFF */
};

/* an IRQ or softirq evidence row, the latest snapshot of its key */
struct html_irq {
	bool soft;
	__u32 irq; /* the vector, for a softirq */
	__u32 cpu;
	char name[LW_IRQ_NAME_LEN];
	__u64 ns, count;
};

struct lw_html {
	struct h_req *req;
	size_t nr_req, cap_req;
	struct html_irq *irq;
	size_t nr_irq, cap_irq;
	struct html_clock *clk;
	size_t nr_clk, cap_clk;
	struct html_thp *thp;
	size_t nr_thp, cap_thp;
	__u64 hist[LW_HIST_BUCKETS];
	bool have_hist;
	__u64 start_ns, end_ns;	 /* the meta record's run */
	__u64 first_ns, last_ns; /* the records' own span */
	__u64 now;		 /* the last tick's time */
	__u32 ref_khz;
	int err;
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? *cap * 2 : 256;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, want * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = want;
	return 0;
}

static void span(struct lw_html *h, __u64 from, __u64 to)
{
	if (from && (!h->first_ns || from < h->first_ns))
		h->first_ns = from;
	if (to > h->last_ns)
		h->last_ns = to;
}

static void on_request(struct lw_html *h, const struct lw_request *r)
{
	if (grow((void **)&h->req, &h->cap_req, h->nr_req, sizeof(*h->req))) {
		h->err = -ENOMEM;
		return;
	}
	h->req[h->nr_req].end_ns = r->start_ns + r->latency_ns;
	h->req[h->nr_req].series =
		(r->flags & LW_REQ_HANDOFF) ? SERIES_HANDOFF : lw_request_cause(r);
	h->nr_req++;
	span(h, r->start_ns, r->start_ns + r->latency_ns);
}

/* IRQ and softirq rows are cumulative: the latest one of a key stands */
static void on_irq(struct lw_html *h, bool soft, __u32 irq, __u32 cpu, const char *name, __u64 ns,
		   __u64 count)
{
	struct html_irq *q = NULL;

	for (size_t i = 0; i < h->nr_irq && !q; i++)
		if (h->irq[i].soft == soft && h->irq[i].irq == irq && h->irq[i].cpu == cpu)
			q = &h->irq[i];
	if (!q) {
		if (grow((void **)&h->irq, &h->cap_irq, h->nr_irq, sizeof(*h->irq))) {
			h->err = -ENOMEM;
			return;
		}
		q = &h->irq[h->nr_irq++];
		memset(q, 0, sizeof(*q));
		q->soft = soft;
		q->irq = irq;
		q->cpu = cpu;
	}
	if (name) {
		memcpy(q->name, name, sizeof(q->name));
		q->name[sizeof(q->name) - 1] = '\0';
	}
	q->ns = ns;
	q->count = count;
}

static void on_cpu(struct lw_html *h, const struct lw_cpu_rec *c)
{
	/* a clock latwhy saw change, never one it did not measure */
	if (!c->khz || !c->events)
		return;
	if (grow((void **)&h->clk, &h->cap_clk, h->nr_clk, sizeof(*h->clk))) {
		h->err = -ENOMEM;
		return;
	}
	h->clk[h->nr_clk++] = (struct html_clock){
		.ts_ns = h->now ? h->now : h->start_ns, .cpu = c->cpu, .khz = c->khz};
	if (c->ref_khz > h->ref_khz)
		h->ref_khz = c->ref_khz;
}

static void on_thp(struct lw_html *h, const struct lw_thp_stats *t)
{
	const struct html_thp *last = h->nr_thp ? &h->thp[h->nr_thp - 1] : NULL;

	if (last ? last->collapses == t->collapses && last->compactions == t->compactions
		 : !t->collapses && !t->compactions)
		return; /* nothing new: a sample only where the counts moved */
	if (grow((void **)&h->thp, &h->cap_thp, h->nr_thp, sizeof(*h->thp))) {
		h->err = -ENOMEM;
		return;
	}
	h->thp[h->nr_thp++] = (struct html_thp){.ts_ns = h->now ? h->now : h->start_ns,
						.collapses = t->collapses,
						.compactions = t->compactions};
}

static void on_meta(struct lw_html *h, const struct lw_meta_rec *m)
{
	if (!m->start_ns)
		return;
	h->start_ns = m->start_ns;
	h->end_ns = m->start_ns + m->duration_ns;
}

static int html_record(void *ctx, const void *rec, size_t len)
{
	struct lw_html *h = ctx;
	union {
		__u32 type;
		struct lw_request r;
		struct lw_tick_rec k;
		struct lw_irq_rec i;
		struct lw_softirq_rec q;
		struct lw_thp_rec t;
		struct lw_cpu_rec c;
		struct lw_meta_rec m;
	} u = {};

	/* the engine counts what it cannot take */
	if (len < sizeof(u.type))
		return 0;
	memcpy(&u, rec, len < sizeof(u) ? len : sizeof(u)); /* aligned, whatever rec is */
	if (u.type == LW_REC_REQUEST && len >= sizeof(u.r)) {
		on_request(h, &u.r);
	} else if (u.type == LW_REC_TICK && len >= sizeof(u.k)) {
		h->now = u.k.ts_ns;
		span(h, u.k.ts_ns, u.k.ts_ns);
	} else if (u.type == LW_REC_IRQ && len >= sizeof(u.i)) {
		on_irq(h, false, u.i.irq, u.i.cpu, u.i.name, u.i.ns, u.i.count);
	} else if (u.type == LW_REC_SOFTIRQ && len >= sizeof(u.q)) {
		on_irq(h, true, u.q.vec, u.q.cpu, NULL, u.q.ns, u.q.count);
	} else if (u.type == LW_REC_THP && len >= sizeof(u.t)) {
		on_thp(h, &u.t.s);
	} else if (u.type == LW_REC_CPU && len >= sizeof(u.c)) {
		on_cpu(h, &u.c);
	} else if (u.type == LW_REC_META && len >= sizeof(u.m)) {
		on_meta(h, &u.m);
	} else if (u.type == LW_REC_HIST && len >= sizeof(struct lw_hist_rec)) {
		memcpy(h->hist, (const char *)rec + offsetof(struct lw_hist_rec, b),
		       sizeof(h->hist));
		h->have_hist = true;
	}
	return 0;
}

struct lw_html *lw_html_new(void)
{
	return calloc(1, sizeof(struct lw_html));
}

struct lw_sink lw_html_sink(struct lw_html *h)
{
	return (struct lw_sink){.ctx = h, .record = html_record};
}

void lw_html_free(struct lw_html *h)
{
	if (!h)
		return;
	free(h->req);
	free(h->irq);
	free(h->clk);
	free(h->thp);
	free(h);
}

/* ---- the time axis ------------------------------------------------------ */

/* Bins of a round width, at most MAX_BINS of them over the run. */
static void time_axis(const struct lw_html *h, struct html_time *t)
{
	static const __u64 steps_ms[] = {10,	20,	50,	100,	200,	 500,
					 1000,	2000,	5000,	10000,	15000,	 30000,
					 60000, 120000, 300000, 600000, 1800000, 3600000};
	__u64 len;
	size_t i;

	t->t0 = h->start_ns ? h->start_ns : h->first_ns;
	t->t1 = h->end_ns > h->last_ns ? h->end_ns : h->last_ns;
	if (t->t1 <= t->t0)
		t->t1 = t->t0 + 1;
	len = t->t1 - t->t0;
	for (i = 0; i < sizeof(steps_ms) / sizeof(steps_ms[0]); i++)
		if (steps_ms[i] * 1000000ULL * MAX_BINS >= len)
			break;
	t->width = i < sizeof(steps_ms) / sizeof(steps_ms[0]) ? steps_ms[i] * 1000000ULL
							      : len / MAX_BINS + 1;
	t->nbins = (len + t->width - 1) / t->width;
	if (!t->nbins)
		t->nbins = 1;
}

static size_t time_bin(const struct html_time *t, __u64 ts)
{
	size_t b = ts > t->t0 ? (ts - t->t0) / t->width : 0;

	return b < t->nbins ? b : t->nbins - 1;
}

/* ---- the page ----------------------------------------------------------- */

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:780px;"
	"color:#222;background:#fff;padding:0 1em}\n"
	"h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.6em 0 .4em;"
	"border-bottom:1px solid #ddd}\n"
	"table.facts td{padding:0 1em 0 0;vertical-align:top;overflow-wrap:anywhere}"
	"table.facts td:first-child{color:#666;white-space:nowrap}\n"
	"h3{font-size:.95em;margin:1em 0 .2em;font-weight:600}\n"
	"p.verdict{font-size:1.1em;font-weight:600}p.nodata{color:#666;font-style:italic}\n"
	"svg.chart{display:block;max-width:100%;height:auto;font-size:11px}\n"
	"svg.chart text{fill:#333}svg .axis{stroke:#999;stroke-width:1}\n"
	"svg .grid{stroke:#eee;stroke-width:1}svg .ref{stroke:#888;stroke-dasharray:4 3}\n"
	"svg .threshold line{stroke:#c00;stroke-width:1.5;stroke-dasharray:5 3}\n"
	"svg .threshold text{fill:#c00}svg .hist-bin{fill:#7a9cc6}"
	"svg .hist-bin.over{fill:#c0392b}\n"
	"svg text.inbar{fill:#fff}svg polyline{fill:none;stroke-width:2}\n"
	"ul.legend{list-style:none;padding:0;margin:.2em 0;display:flex;flex-wrap:wrap;"
	"gap:.4em 1.2em;font-size:12px}\n"
	"i.sw{display:inline-block;width:.9em;height:.9em;margin-right:.3em;"
	"vertical-align:-.1em}\n"
	".c-frequency{fill:#8e44ad;background:#8e44ad}.c-irq{fill:#d35400;"
	"background:#d35400}\n"
	".c-thp{fill:#f1c40f;background:#f1c40f}.c-sched{fill:#2e6da4;background:#2e6da4}\n"
	".c-idle{fill:#27ae60;background:#27ae60}.c-none{fill:#aab;background:#aab}\n"
	".c-quota{fill:#c0392b;background:#c0392b}\n"
	".c-memory{fill:#8e44ad;background:#8e44ad}\n"
	".c-handoff{fill:#555;background:#555}.c-run{fill:#cfd6de;background:#cfd6de}\n"
	".c-blocked{fill:#e8e0cf;background:#e8e0cf}.c-softirq{fill:#f39c5a;"
	"background:#f39c5a}\n"
	".c-tracer{fill:#999;background:#999}.c-collapse{fill:#b7950b;background:#b7950b}\n"
	".c-compact{fill:#6c3483;background:#6c3483}\n"
	"table.shares{border-collapse:collapse;font-size:13px}table.shares td{padding:1px "
	".8em 1px 0}table.shares td.n{text-align:right}\n"
	".finding{border-left:4px solid #999;padding:.2em .8em;margin:.8em 0;"
	"background:#fafafa}\n"
	".sev-crit{border-color:#c0392b}.sev-warn{border-color:#e67e22}"
	".sev-info{border-color:#2e6da4}\n"
	".finding h3{font-size:1em;margin:.3em 0}.finding h4{font-size:.85em;margin:.5em 0 0;"
	"color:#555}\n"
	".finding dl{margin:.2em 0;display:grid;grid-template-columns:6em 1fr;gap:.1em .5em}"
	".finding dt{color:#666}.finding dd{margin:0}\n"
	"pre{background:#272822;color:#f8f8f2;padding:.5em .7em;overflow-wrap:anywhere;"
	"white-space:pre-wrap;font-size:12px;margin:.2em 0}\n"
	"footer{margin-top:2em;color:#888;font-size:12px}\n";

/* A timeline series' names: a cause's (engine/cause.h), or handed off. */
static void series_names(const char **name, const char **label)
{
	for (int c = 0; c < LW_CAUSE_MAX; c++) {
		name[c] = lw_cause_name(c);
		label[c] = lw_cause_label(c);
	}
	name[SERIES_HANDOFF] = "handoff";
	label[SERIES_HANDOFF] = "handed off (not split)";
}

static void legend(FILE *f, const bool *present, const char *const *names,
		   const char *const *labels, size_t n)
{
	fprintf(f, "<ul class=\"legend\">");
	for (size_t i = 0; i < n; i++) {
		if (!present[i])
			continue;
		fprintf(f, "<li><i class=\"sw c-%s\"></i>", names[i]);
		lw_html_esc(f, labels[i]);
		fprintf(f, "</li>");
	}
	fprintf(f, "</ul>\n");
}

static void page_head(FILE *f, const struct lw_html_facts *facts, const struct lw_summary *s)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		   "<title>latwhy report: ");
	lw_html_escf(f, "%s (pid %d) in %s", s->comm, s->pid, facts->title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
}

static void page_header(FILE *f, const struct lw_html_facts *facts, const struct lw_summary *s)
{
	char d[32], p50[32], p99[32], th[32], own[256];

	fprintf(f, "<header>\n<h1>latwhy: ");
	lw_html_escf(f, "pid %d (%s)", s->pid, s->comm);
	fprintf(f, "</h1>\n<table class=\"facts\">\n");
	for (size_t i = 0; i < facts->n; i++) {
		fprintf(f, "<tr><td>");
		lw_html_esc(f, facts->v[i].label);
		fprintf(f, "</td><td>");
		lw_html_esc(f, facts->v[i].value ? facts->v[i].value : "?");
		fprintf(f, "</td></tr>\n");
	}
	if (s->threshold_ns == LW_THRESH_UNKNOWN)
		snprintf(th, sizeof(th), "not established");
	else
		lw_fmt_ns(th, sizeof(th), s->threshold_ns);
	fprintf(f, "<tr><td>traced</td><td>");
	if (!s->counted) /* cut before its first periodic record */
		lw_html_escf(f,
			     "duration and requests not counted (no periodic record); slow (> "
			     "%s%s): %llu recorded",
			     th, s->threshold_fixed ? "" : ", running p99",
			     (unsigned long long)s->slow_requests);
	else
		lw_html_escf(f, "%s, %llu requests (%s), p50 %s, p99 %s; slow (> %s%s): %llu",
			     lw_fmt_ns(d, sizeof(d), s->duration_ns),
			     (unsigned long long)s->requests, lw_req_mode_name(s->req_mode),
			     lw_fmt_ns(p50, sizeof(p50), s->p50_ns),
			     lw_fmt_ns(p99, sizeof(p99), s->p99_ns), th,
			     s->threshold_fixed ? "" : ", running p99",
			     (unsigned long long)s->slow_requests);
	fprintf(f, "</td></tr>\n</table>\n<p class=\"verdict\">");
	if (!s->slow_requests)
		fprintf(f, "No slow requests were split into causes.");
	else if (lw_summary_verdict_own(s, own, sizeof(own)) > 0) {
		fprintf(f, "Verdict: ");
		lw_html_esc(f, own);
		fprintf(f, ".");
	} else if (s->dominant == LW_CAUSE_NONE)
		fprintf(f, "Verdict: no kernel cause reaches 10%% of the slow requests' time.");
	else
		fprintf(f, "Verdict: %s (%.0f%% of the slow requests' time).",
			lw_cause_name(s->dominant), s->cause[s->dominant].share * 100);
	fprintf(f, "</p>\n</header>\n");
}

/* Slow requests per time bin, stacked by cause. */
static void sec_timeline(FILE *f, const struct lw_html *h, const struct html_time *t)
{
	__u64(*bins)[NR_SERIES] = calloc(t->nbins, sizeof(*bins));
	bool present[NR_SERIES] = {};
	const char *name[NR_SERIES], *label[NR_SERIES];
	char w[32];

	if (!bins)
		return;
	series_names(name, label);
	for (size_t i = 0; i < h->nr_req; i++) {
		bins[time_bin(t, h->req[i].end_ns)][h->req[i].series]++;
		present[h->req[i].series] = true;
	}
	fprintf(f, "<section id=\"timeline\">\n<h2>Slow requests over time</h2>\n");
	if (!h->nr_req) {
		fprintf(f,
			"<p class=\"nodata\">no slow requests in this capture</p>\n</section>\n");
		free(bins);
		return;
	}
	fprintf(f, "<p>By the cause of each request, in bins of %s (by when they ended).</p>\n",
		lw_fmt_ns(w, sizeof(w), t->width));
	lw_svg_stacked_bins(f, "slow-bin", &bins[0][0], NR_SERIES, name, t, h->nr_req);
	legend(f, present, name, label, NR_SERIES);
	fprintf(f, "</section>\n");
	free(bins);
}

static void sec_hist(FILE *f, const struct lw_html *h, const struct lw_summary *s)
{
	fprintf(f, "<section id=\"latency\">\n<h2>Latency distribution</h2>\n");
	if (!h->have_hist) {
		fprintf(f, "<p class=\"nodata\">no latency histogram in this capture</p>\n");
	} else {
		fprintf(f, "<p>Every request's latency (log scales); red: above the slow "
			   "threshold.</p>\n");
		lw_svg_hist(f, h->hist, s->threshold_ns);
	}
	fprintf(f, "</section>\n");
}

static void share_row(FILE *f, const struct lw_summary *s, int c)
{
	char d[32];

	fprintf(f, "<tr><td><i class=\"sw c-%s\"></i>%s</td>", lw_cause_name(c), lw_cause_name(c));
	if (!s->cause[c].measured) {
		fprintf(f, "<td class=\"n\">n/a</td><td></td><td>%s</td></tr>\n",
			c == LW_CAUSE_FREQ ? "no frequency data" : "not measured");
		return;
	}
	fprintf(f, "<td class=\"n\">%.1f%%</td><td class=\"n\">%s</td><td>",
		s->cause[c].share * 100, lw_fmt_ns(d, sizeof(d), s->cause[c].ns));
	if (s->cause[c].requests)
		fprintf(f, "cause of %llu slow requests", (unsigned long long)s->cause[c].requests);
	fprintf(f, "%s</td></tr>\n", c == (int)s->dominant ? " (dominant)" : "");
}

static void sec_causes(FILE *f, const struct lw_summary *s)
{
	char d[32];

	fprintf(f, "<section id=\"causes\">\n<h2>Where the slow requests' time went</h2>\n");
	if (!s->slow_requests || !s->slow_latency_ns) {
		fprintf(f, "<p class=\"nodata\">no slow requests</p>\n</section>\n");
		return;
	}
	fprintf(f, "<p>%s in %llu slow requests.</p>\n",
		lw_fmt_ns(d, sizeof(d), s->slow_latency_ns), (unsigned long long)s->slow_requests);
	lw_svg_shares(f, s);
	fprintf(f, "<table class=\"shares\">\n");
	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++)
		share_row(f, s, c);
	fprintf(f,
		"<tr><td><i class=\"sw c-run\"></i>running</td><td class=\"n\">%.1f%%</td>"
		"<td></td><td></td></tr>\n",
		100.0 * s->bucket_ns[LW_B_RUN] / s->slow_latency_ns);
	fprintf(f,
		"<tr><td><i class=\"sw c-blocked\"></i>blocked</td><td class=\"n\">%.1f%%"
		"</td><td></td><td></td></tr>\n</table>\n</section>\n",
		100.0 * s->bucket_ns[LW_B_BLOCKED] / s->slow_latency_ns);
}

/* softirq rows that count waits, not runs on their CPU */
static bool irq_is_wait(const struct html_irq *q)
{
	return q->soft && lw_softirq_is_wait(lw_softirq_name(q->irq));
}

static int cmp_row(const void *a, const void *b)
{
	const struct lw_svg_row *x = a, *y = b;
	__u64 u = x->seg[0] + x->seg[1], v = y->seg[0] + y->seg[1];

	return u < v ? 1 : u > v ? -1 : 0;
}

/* Interrupt time per CPU: hard IRQ and softirq runs while a target ran. */
static void irq_per_cpu(FILE *f, const struct lw_html *h)
{
	struct lw_svg_row *rows = calloc(h->nr_irq, sizeof(*rows));
	static const char *const cls[2] = {"c-irq", "c-softirq"};
	size_t n = 0;

	if (!rows)
		return;
	for (int cpu = 0; cpu < LW_MAX_CPUS; cpu++) {
		struct lw_svg_row *r = &rows[n];
		char a[32], b[32];

		memset(r, 0, sizeof(*r));
		for (size_t i = 0; i < h->nr_irq; i++)
			if (h->irq[i].cpu == (__u32)cpu && !irq_is_wait(&h->irq[i]))
				r->seg[h->irq[i].soft] += h->irq[i].ns;
		if (!r->seg[0] && !r->seg[1])
			continue;
		snprintf(r->label, sizeof(r->label), "CPU %d", cpu);
		snprintf(r->value, sizeof(r->value), "irq %s, softirq %s",
			 lw_fmt_ns(a, sizeof(a), r->seg[0]), lw_fmt_ns(b, sizeof(b), r->seg[1]));
		snprintf(r->attrs, sizeof(r->attrs),
			 "data-cpu=\"%d\" data-irq-ns=\"%llu\" "
			 "data-softirq-ns=\"%llu\"",
			 cpu, (unsigned long long)r->seg[0], (unsigned long long)r->seg[1]);
		if (++n == h->nr_irq)
			break;
	}
	fprintf(f, "<h3>Per CPU</h3>\n");
	lw_svg_hbars(f, "irq-cpu", cls, rows, n, MAX_ROWS);
	free(rows);
}

/* a vector's totals over CPUs, beside its row */
struct vec_acc {
	__u64 key; /* soft << 32 | vector */
	__u64 count;
	char cpus[40]; /* the CPUs it ran on, as far as the label holds them */
};

/* The row of vector q in rows[0..*n), added if new. */
static size_t vec_row(struct lw_svg_row *rows, struct vec_acc *acc, size_t *n,
		      const struct html_irq *q)
{
	__u64 key = (__u64)q->soft << 32 | q->irq;
	struct lw_svg_row *r = &rows[*n];

	for (size_t i = 0; i < *n; i++)
		if (acc[i].key == key)
			return i;
	memset(&acc[*n], 0, sizeof(acc[*n]));
	acc[*n].key = key;
	if (q->soft)
		snprintf(r->label, sizeof(r->label), "softirq %s", lw_softirq_name(q->irq));
	else
		snprintf(r->label, sizeof(r->label), "IRQ %u %s", q->irq, q->name);
	return (*n)++;
}

static void vec_text(struct lw_svg_row *r, const struct vec_acc *a)
{
	bool soft = a->key >> 32;
	const char *unit = soft ? lw_softirq_unit(lw_softirq_name((__u32)a->key)) : "interrupts";
	__u64 ns = r->seg[0] + r->seg[1];
	char d[32];

	snprintf(r->value, sizeof(r->value), "%s, %llu %s, CPU %s", lw_fmt_ns(d, sizeof(d), ns),
		 (unsigned long long)a->count, unit, a->cpus);
	snprintf(r->attrs, sizeof(r->attrs),
		 "data-kind=\"%s\" data-vec=\"%u\" data-ns=\"%llu\" data-count=\"%llu\"",
		 soft ? "softirq" : "irq", (__u32)a->key, (unsigned long long)ns,
		 (unsigned long long)a->count);
}

static void irq_per_vector(FILE *f, const struct lw_html *h)
{
	struct lw_svg_row *rows = calloc(h->nr_irq, sizeof(*rows));
	struct vec_acc *acc = calloc(h->nr_irq, sizeof(*acc));
	static const char *const cls[2] = {"c-irq", "c-softirq"};
	size_t n = 0;

	if (!rows || !acc)
		goto cleanup;
	for (size_t i = 0; i < h->nr_irq; i++) {
		const struct html_irq *q = &h->irq[i];
		size_t k = vec_row(rows, acc, &n, q);
		size_t used = strlen(acc[k].cpus);

		rows[k].seg[q->soft] += q->ns;
		acc[k].count += q->count;
		snprintf(acc[k].cpus + used, sizeof(acc[k].cpus) - used, "%s%u", used ? "," : "",
			 q->cpu);
	}
	for (size_t i = 0; i < n; i++)
		vec_text(&rows[i], &acc[i]);
	qsort(rows, n, sizeof(*rows), cmp_row);
	fprintf(f, "<h3>Per IRQ and softirq vector (all CPUs)</h3>\n");
	lw_svg_hbars(f, "irq-vec", cls, rows, n, MAX_ROWS);
cleanup:
	free(rows);
	free(acc);
}

static void sec_irqs(FILE *f, const struct lw_html *h, const struct lw_summary *s)
{
	static const bool present[2] = {true, true};
	static const char *const names[2] = {"irq", "softirq"};
	static const char *const labels[2] = {"hard IRQ", "softirq"};

	fprintf(f, "<section id=\"irqs\">\n<h2>Interrupts while it ran</h2>\n");
	if (s->flags & LW_META_NO_IRQ && s->flags & LW_META_NO_SOFTIRQ)
		fprintf(f, "<p class=\"nodata\">not measured (irq tracepoints not attached)</p>\n");
	else if (!h->nr_irq)
		fprintf(f, "<p class=\"nodata\">no interrupt hit its threads</p>\n");
	else {
		legend(f, present, names, labels, 2);
		irq_per_cpu(f, h);
		irq_per_vector(f, h);
	}
	fprintf(f, "</section>\n");
}

static void sec_clock(FILE *f, const struct lw_html *h, const struct html_time *t)
{
	fprintf(f, "<section id=\"clock\">\n<h2>Clock per CPU</h2>\n");
	if (!h->nr_clk)
		fprintf(f, "<p class=\"nodata\" id=\"no-freq\">no frequency data</p>\n");
	else {
		fprintf(f, "<p>Each CPU's clock in MHz, where latwhy saw it change.</p>\n");
		lw_svg_clock(f, h->clk, h->nr_clk, h->ref_khz, t);
	}
	fprintf(f, "</section>\n");
}

static void thp_table(FILE *f, const struct lw_summary *s)
{
	char d[32], r[32], w[32];

	fprintf(f, "<table class=\"shares\">\n");
	fprintf(f,
		"<tr><td>collapses of its memory</td><td class=\"n\">%llu</td><td>%llu failed"
		"</td></tr>\n",
		(unsigned long long)s->thp.collapses, (unsigned long long)s->thp.collapse_fail);
	fprintf(f, "<tr><td>khugepaged scans</td><td class=\"n\">%llu</td><td></td></tr>\n",
		(unsigned long long)s->thp.scans);
	fprintf(f, "<tr><td>direct compactions</td><td class=\"n\">%llu</td><td>%s</td></tr>\n",
		(unsigned long long)s->thp.compactions, lw_fmt_ns(d, sizeof(d), s->thp.compact_ns));
	fprintf(f,
		"<tr><td>khugepaged/kcompactd ran while it waited</td><td class=\"n\">%s"
		"</td><td>woke it: %s</td></tr>\n</table>\n",
		lw_fmt_ns(r, sizeof(r), s->thp.khugepaged_run_ns),
		lw_fmt_ns(w, sizeof(w), s->thp.khugepaged_wake_ns));
}

static void sec_thp(FILE *f, const struct lw_html *h, const struct lw_summary *s,
		    const struct html_time *t)
{
	fprintf(f, "<section id=\"thp\">\n<h2>Transparent huge pages</h2>\n");
	if (s->flags & LW_META_NO_THP && s->flags & LW_META_NO_COMPACT)
		fprintf(f, "<p class=\"nodata\">not measured (THP tracepoints not attached)</p>\n");
	else if (!h->nr_thp)
		fprintf(f, "<p class=\"nodata\">no THP collapse or compaction of its memory in "
			   "this capture</p>\n");
	else
		lw_svg_thp(f, h->thp, h->nr_thp, t);
	thp_table(f, s);
	fprintf(f, "</section>\n");
}

static void preempt_label(const struct lw_summary *s, const struct lw_preempt_rec *p, char *buf,
			  size_t len)
{
	if (p->pid == LW_PID_IDLE_POLL)
		snprintf(buf, len, "idle CPU, polling (no C-state)");
	else if (!p->pid)
		snprintf(buf, len, "idle CPU (exit and wake-up)");
	else if (lw_summary_is_tracer(s, p->pid, p->tgid))
		snprintf(buf, len, "latwhy (this tracer)");
	else
		snprintf(buf, len, "%s (%s %u)", p->comm,
			 p->tgid == (__u32)s->pid ? "its own thread" : "pid", p->pid);
}

static void preemptors(FILE *f, const struct lw_summary *s)
{
	static const char *const cls[2] = {"c-sched", "c-sched"};
	struct lw_svg_row rows[LW_TOP] = {};
	char d[32];

	for (size_t i = 0; i < s->nr_preempt; i++) {
		const struct lw_preempt_rec *p = &s->preempt[i];
		bool tracer = p->pid && p->pid != LW_PID_IDLE_POLL &&
			      lw_summary_is_tracer(s, p->pid, p->tgid);

		preempt_label(s, p, rows[i].label, sizeof(rows[i].label));
		rows[i].seg[0] = p->ns;
		rows[i].cls = !p->pid || p->pid == LW_PID_IDLE_POLL ? "c-idle"
			      : tracer				    ? "c-tracer"
								    : NULL;
		snprintf(rows[i].value, sizeof(rows[i].value), "%s over %llu waits",
			 lw_fmt_ns(d, sizeof(d), p->ns), (unsigned long long)p->count);
		snprintf(rows[i].attrs, sizeof(rows[i].attrs),
			 "data-pid=\"%u\" data-ns=\"%llu\" data-count=\"%llu\" data-tracer=\"%d\"",
			 p->pid, (unsigned long long)p->ns, (unsigned long long)p->count, tracer);
	}
	fprintf(f, "<h3>Ran on its CPU while it waited (all requests)</h3>\n");
	lw_svg_hbars(f, "preempt", cls, rows, s->nr_preempt, LW_TOP);
}

static void slow_waits(FILE *f, const struct lw_summary *s)
{
	static const char *const cls[2] = {"c-sched", "c-sched"};
	struct lw_svg_row rows[LW_TOP] = {};
	char d[32];

	for (size_t i = 0; i < s->nr_slow_waits; i++) {
		const struct lw_slow_wait *w = &s->slow_waits[i];
		struct lw_preempt_rec p = {.pid = w->pid};

		memcpy(p.comm, w->comm, sizeof(p.comm));
		preempt_label(s, &p, rows[i].label, sizeof(rows[i].label));
		rows[i].seg[0] = w->ns;
		rows[i].cls = w->pid && w->pid != LW_PID_IDLE_POLL ? NULL : "c-idle";
		snprintf(rows[i].value, sizeof(rows[i].value), "%s, longest wait in %llu of %llu",
			 lw_fmt_ns(d, sizeof(d), w->ns), (unsigned long long)w->requests,
			 (unsigned long long)s->slow_requests);
		snprintf(rows[i].attrs, sizeof(rows[i].attrs),
			 "data-pid=\"%u\" data-ns=\"%llu\" data-requests=\"%llu\"", w->pid,
			 (unsigned long long)w->ns, (unsigned long long)w->requests);
	}
	fprintf(f, "<h3>What the slow requests waited for longest</h3>\n");
	lw_svg_hbars(f, "slow-wait", cls, rows, s->nr_slow_waits, LW_TOP);
}

static void sec_preempt(FILE *f, const struct lw_summary *s)
{
	fprintf(f, "<section id=\"preempt\">\n<h2>Who ran while it waited</h2>\n");
	if (!s->nr_preempt && !s->nr_slow_waits)
		fprintf(f, "<p class=\"nodata\">nothing ran on its CPUs while it waited</p>\n");
	if (s->nr_preempt)
		preemptors(f, s);
	if (s->nr_slow_waits)
		slow_waits(f, s);
	fprintf(f, "</section>\n");
}

static void finding_field(FILE *f, const char *label, const char *v)
{
	if (!v)
		return;
	fprintf(f, "<dt>%s</dt><dd>", label);
	lw_html_esc(f, v);
	fprintf(f, "</dd>");
}

static void finding_cmds(FILE *f, const char *label, const struct lw_strv *v)
{
	if (!v->n)
		return;
	fprintf(f, "<h4>%s</h4>\n<pre class=\"cmd %s\">", label, label);
	for (size_t i = 0; i < v->n; i++) {
		lw_html_esc(f, v->v[i]);
		fputc('\n', f);
	}
	fprintf(f, "</pre>\n");
}

static void finding(FILE *f, const struct lw_finding *x)
{
	const char *sev = lw_severity_name(x->severity);

	fprintf(f, "<article class=\"finding sev-%s\" data-cause=\"%s\" data-severity=\"%s\">\n",
		sev, lw_cause_name(x->cause), sev);
	fprintf(f, "<h3>[%s] %s: ", sev, lw_cause_name(x->cause));
	lw_html_esc(f, x->seen ? x->seen : "");
	fprintf(f, "</h3>\n<dl>");
	finding_field(f, "why", x->why);
	finding_field(f, "evidence", x->evidence);
	finding_field(f, "cost", x->cost);
	fprintf(f, "</dl>\n");
	finding_cmds(f, "fix", &x->fix);
	finding_cmds(f, "persist", &x->persist);
	finding_cmds(f, "rollback", &x->rollback);
	finding_cmds(f, "verify", &x->verify);
	fprintf(f, "</article>\n");
}

/* The findings of the text report, in its order: most severe first. */
static void sec_findings(FILE *f, const struct lw_findings *fs)
{
	fprintf(f, "<section id=\"findings\" data-count=\"%zu\">\n<h2>Findings</h2>\n",
		fs ? fs->n : 0);
	if (!fs)
		fprintf(f, "<p class=\"nodata\">no findings: the capture holds no node "
			   "snapshot</p>\n");
	else if (!fs->n)
		fprintf(f, "<p>No findings.</p>\n");
	for (int sev = LW_SEV_CRIT; fs && sev >= LW_SEV_INFO; sev--)
		for (size_t i = 0; i < fs->n; i++)
			if ((int)fs->v[i].severity == sev)
				finding(f, &fs->v[i]);
	fprintf(f, "</section>\n");
}

int lw_html_write(struct lw_html *h, FILE *f, const struct lw_html_facts *facts,
		  const struct lw_summary *s, const struct lw_findings *fs)
{
	struct html_time t;

	if (h->err)
		return h->err;
	time_axis(h, &t);
	page_head(f, facts, s);
	page_header(f, facts, s);
	sec_timeline(f, h, &t);
	sec_hist(f, h, s);
	sec_causes(f, s);
	sec_irqs(f, h, s);
	sec_clock(f, h, &t);
	sec_thp(f, h, s, &t);
	sec_preempt(f, s);
	sec_findings(f, fs);
	fprintf(f,
		"<footer>latwhy %s: latwhy report --html. No script; nothing on this page "
		"is fetched.</footer>\n</body>\n</html>\n",
		LW_VERSION);
	return fflush(f) || ferror(f) ? -EIO : 0;
}
