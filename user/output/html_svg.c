// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * html_svg.c - the HTML report's charts (see html_svg.h).
 *
 * Every chart is 720 units wide and scales with the page (viewBox); text
 * sits in margins sized for it, never over a mark.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "latwhy.h"
#include "lib/fmt.h"
#include "output/html_svg.h"

#define W  720
#define PL 52 /* plot area's left margin: the y labels */
#define PR 14
#define PT 14
#define PB 30 /* below it: the x labels */

void lw_html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c == '\'')
			fputs("&#39;", f);
		else if (c < 0x20 && c != '\n' && c != '\t')
			fputc('?', f);
		else
			fputc(c, f);
	}
}

void lw_html_escf(FILE *f, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	lw_html_esc(f, buf);
}

/* The smallest 1, 2 or 5 times a power of ten not below v. */
static double nice_ceil(double v)
{
	double p = 1;

	if (v <= 1)
		return 1;
	while (p * 10 < v)
		p *= 10;
	return v <= p ? p : v <= 2 * p ? 2 * p : v <= 5 * p ? 5 * p : 10 * p;
}

static void svg_open(FILE *f, int h, const char *label, const char *attrs)
{
	fprintf(f,
		"<svg class=\"chart\" viewBox=\"0 0 %d %d\" "
		"width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\"%s%s>\n",
		W, h, W, h, label, attrs ? " " : "", attrs ? attrs : "");
}

/* A horizontal grid line at y with its value at the left. */
static void y_tick(FILE *f, double y, const char *label)
{
	fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", PL, y,
		W - PR, y);
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", PL - 6, y + 4);
	lw_html_esc(f, label);
	fprintf(f, "</text>\n");
}

static void axes(FILE *f, int h)
{
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", PL, PT, PL,
		h - PB);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", PL, h - PB,
		W - PR, h - PB);
}

static void x_label(FILE *f, double x, int h, const char *label, const char *anchor)
{
	fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, h - PB,
		x, h - PB + 4);
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">", x, h - PB + 16, anchor);
	lw_html_esc(f, label);
	fprintf(f, "</text>\n");
}

/* Seconds from the run's start along the x axis, at a round step. */
static void time_ticks(FILE *f, const struct html_time *t, int h)
{
	static const double steps[] = {0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800};
	double len = (t->t1 - t->t0) / 1e9, step = steps[0], pw = W - PL - PR;
	char b[32];

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && len / step > 8; i++)
		step = steps[i];
	while (len / step > 8)
		step *= 2;
	for (double s = 0; s <= len * 1.0001; s += step) {
		snprintf(b, sizeof(b), step < 1 ? "%.1f s" : "%.0f s", s);
		x_label(f, PL + pw * s / len, h, b,
			s + step > len * 1.0001 && s > 0 ? "end"
			: s				 ? "middle"
							 : "start");
	}
}

static double time_x(const struct html_time *t, __u64 ts)
{
	double len = t->t1 - t->t0, d = ts > t->t0 ? ts - t->t0 : 0;

	return PL + (W - PL - PR) * (d > len ? 1 : d / len);
}

static void bin_title(FILE *f, const struct html_time *t, size_t b, const __u64 *v, size_t ns,
		      const char *const *names)
{
	fprintf(f, "<title>%.2f-%.2f s:", b * t->width / 1e9, (b + 1) * t->width / 1e9);
	for (size_t k = 0; k < ns; k++)
		if (v[k])
			fprintf(f, " %s %llu", names[k], (unsigned long long)v[k]);
	fprintf(f, "</title>");
}

void lw_svg_stacked_bins(FILE *f, const char *mark, const __u64 *bins, size_t ns,
			 const char *const *names, const struct html_time *t, size_t total)
{
	const int h = 200;
	double ph = h - PT - PB, bw = (double)(W - PL - PR) / t->nbins, ymax;
	__u64 max = 0;
	char attrs[160], b[32];

	for (size_t i = 0; i < t->nbins; i++) {
		__u64 sum = 0;

		for (size_t k = 0; k < ns; k++)
			sum += bins[i * ns + k];
		max = sum > max ? sum : max;
	}
	ymax = nice_ceil(max);
	snprintf(attrs, sizeof(attrs),
		 "data-bins=\"%zu\" data-bin-ns=\"%llu\" data-t0-ns=\"%llu\" data-total=\"%zu\"",
		 t->nbins, (unsigned long long)t->width, (unsigned long long)t->t0, total);
	svg_open(f, h, "slow requests per time bin, by cause", attrs);
	for (int g = 0; g <= 2; g++) {
		snprintf(b, sizeof(b), "%g", ymax * g / 2);
		if (g != 1 || fmod(ymax, 2) == 0) /* whole counts only */
			y_tick(f, PT + ph * (2 - g) / 2, b);
	}
	for (size_t i = 0; i < t->nbins; i++) {
		const __u64 *v = &bins[i * ns];
		double y = h - PB, gap = bw > 4 ? 1 : 0;
		__u64 sum = 0;

		for (size_t k = 0; k < ns; k++)
			sum += v[k];
		if (!sum)
			continue;
		fprintf(f, "<g class=\"mark %s\" data-bin=\"%zu\" data-count=\"%llu\">", mark, i,
			(unsigned long long)sum);
		bin_title(f, t, i, v, ns, names);
		for (size_t k = 0; k < ns; k++) {
			double sh = ph * v[k] / ymax;

			if (!v[k])
				continue;
			y -= sh;
			fprintf(f,
				"<rect class=\"seg c-%s\" data-count=\"%llu\" x=\"%.2f\" "
				"y=\"%.2f\" "
				"width=\"%.2f\" height=\"%.2f\"/>",
				names[k], (unsigned long long)v[k], PL + i * bw + gap / 2, y,
				bw - gap, sh);
		}
		fprintf(f, "</g>\n");
	}
	axes(f, h);
	time_ticks(f, t, h);
	fprintf(f, "</svg>\n");
}

/* ---- the latency histogram --------------------------------------------- */

struct hist_axis {
	double lmin, lmax; /* log10 of the range's ends, in ns */
};

static double hist_x(const struct hist_axis *a, __u64 ns)
{
	double l = log10(ns ? (double)ns : 1);

	if (l < a->lmin)
		l = a->lmin;
	if (l > a->lmax)
		l = a->lmax;
	return PL + (W - PL - PR) * (l - a->lmin) / (a->lmax - a->lmin);
}

/* "1 us", "20 ms": a round latency */
static const char *round_ns(char *b, size_t len, double ns)
{
	static const char *const unit[] = {"ns", "us", "ms", "s"};
	int u = 0;

	while (ns >= 1000 && u < 3) {
		ns /= 1000;
		u++;
	}
	snprintf(b, len, "%g %s", ns, unit[u]);
	return b;
}

/* 1, 2 and 5 times each power of ten in the range; only the powers where
 * the range is wide */
static void hist_ticks(FILE *f, const struct hist_axis *a, int h)
{
	bool wide = a->lmax - a->lmin > 2.5;
	char b[32];

	for (int e = (int)floor(a->lmin); e <= (int)ceil(a->lmax); e++) {
		for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
			double v = m * pow(10, e);

			if ((wide && m != 1) || log10(v) < a->lmin || log10(v) > a->lmax)
				continue;
			x_label(f, hist_x(a, (__u64)v), h, round_ns(b, sizeof(b), v), "middle");
		}
	}
}

static void hist_threshold(FILE *f, const struct hist_axis *a, int h, __u64 th)
{
	double x = hist_x(a, th);
	char d[32];

	if (th == LW_THRESH_UNKNOWN || !th)
		return;
	fprintf(f,
		"<g class=\"threshold\" data-ns=\"%llu\"><line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
		"y2=\"%d\"/>",
		(unsigned long long)th, x, PT - 4, x, h - PB);
	/* the label on the side with room for it */
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">slow &gt; %s</text></g>\n",
		x > W - 160 ? x - 4 : x + 4, PT + 8, x > W - 160 ? "end" : "start",
		lw_fmt_ns(d, sizeof(d), th));
}

void lw_svg_hist(FILE *f, const __u64 *hist, __u64 threshold_ns)
{
	const int h = 220;
	double ph = h - PT - PB, lcmax;
	struct hist_axis a;
	__u64 max = 0, total = 0;
	int lo = -1, hi = -1;
	char attrs[64], b[32];

	for (int i = 0; i < LW_HIST_BUCKETS; i++) {
		if (!hist[i])
			continue;
		lo = lo < 0 ? i : lo;
		hi = i;
		max = hist[i] > max ? hist[i] : max;
		total += hist[i];
	}
	if (lo < 0) {
		fprintf(f, "<p class=\"nodata\">no requests in the histogram</p>\n");
		return;
	}
	a.lmin = log10(lw_hist_lower(lo) ? (double)lw_hist_lower(lo) : 1);
	a.lmax = log10((double)lw_hist_lower(hi + 1 < LW_HIST_BUCKETS ? hi + 1 : hi));
	if (a.lmax - a.lmin < 0.5) /* one narrow peak: half a decade around it */
		a.lmax = a.lmin + 0.5;
	lcmax = log10(1.0 + max);
	snprintf(attrs, sizeof(attrs), "data-total=\"%llu\"", (unsigned long long)total);
	svg_open(f, h, "latency histogram", attrs);
	for (double c = 1; c <= max; c *= 10) {
		snprintf(b, sizeof(b), "%g", c);
		y_tick(f, h - PB - ph * log10(1 + c) / lcmax, b);
	}
	for (int i = lo; i <= hi; i++) {
		__u64 l = lw_hist_lower(i), u = lw_hist_lower(i + 1);
		double x = hist_x(&a, l), w = hist_x(&a, u) - x,
		       bh = ph * log10(1.0 + hist[i]) / lcmax;

		if (!hist[i])
			continue;
		fprintf(f,
			"<rect class=\"mark hist-bin%s\" data-count=\"%llu\" data-lo-ns=\"%llu\" "
			"x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>",
			threshold_ns != LW_THRESH_UNKNOWN && l >= threshold_ns ? " over" : "",
			(unsigned long long)hist[i], (unsigned long long)l, x, h - PB - bh,
			w > 1 ? w : 1, bh);
		lw_html_escf(f, "%s: %llu requests", lw_fmt_ns(b, sizeof(b), l),
			     (unsigned long long)hist[i]);
		fprintf(f, "</title></rect>\n");
	}
	axes(f, h);
	hist_ticks(f, &a, h);
	hist_threshold(f, &a, h, threshold_ns);
	fprintf(f, "</svg>\n");
}

/* ---- cause shares ------------------------------------------------------- */

struct share {
	const char *name, *label;
	__u64 ns;
};

static size_t shares_of(const struct lw_summary *s, struct share *v)
{
	__u64 run = s->bucket_ns[LW_B_RUN];
	size_t n = 0;

	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++)
		if (s->cause[c].measured && s->cause[c].ns)
			v[n++] = (struct share){lw_cause_name(c), lw_cause_name(c), s->cause[c].ns};
	/* frequency is a part of run: drawn once */
	if (s->cause[LW_CAUSE_FREQ].measured)
		run -= s->cause[LW_CAUSE_FREQ].ns < run ? s->cause[LW_CAUSE_FREQ].ns : run;
	if (run)
		v[n++] = (struct share){"run", "running", run};
	if (s->bucket_ns[LW_B_BLOCKED])
		v[n++] = (struct share){"blocked", "blocked", s->bucket_ns[LW_B_BLOCKED]};
	return n;
}

void lw_svg_shares(FILE *f, const struct lw_summary *s)
{
	struct share v[LW_CAUSE_MAX + 2];
	size_t n = shares_of(s, v);
	__u64 sum = 0;
	double x = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i].ns;
	/* buckets add up to the latency within 1%: the bar is their sum */
	sum = sum > s->slow_latency_ns ? sum : s->slow_latency_ns;
	svg_open(f, 36, "the slow requests' time by cause", NULL);
	for (size_t i = 0; i < n; i++) {
		double share = (double)v[i].ns / s->slow_latency_ns, w = (double)W * v[i].ns / sum;

		fprintf(f,
			"<g class=\"mark cause-share\" data-cause=\"%s\" data-ns=\"%llu\" "
			"data-share=\"%.4f\"><title>%s %.1f%%</title>",
			v[i].name, (unsigned long long)v[i].ns, share, v[i].label, share * 100);
		fprintf(f, "<rect class=\"c-%s\" x=\"%.2f\" y=\"2\" width=\"%.2f\" height=\"32\"/>",
			v[i].name, x, w);
		if (w >= 70)
			fprintf(f,
				"<text class=\"%s\" x=\"%.1f\" y=\"22\" text-anchor=\"middle\">%s "
				"%.0f%%</text>",
				strcmp(v[i].name, "run") && strcmp(v[i].name, "blocked") &&
						strcmp(v[i].name, "thp")
					? "inbar"
					: "",
				x + w / 2, v[i].label, share * 100);
		fprintf(f, "</g>\n");
		x += w;
	}
	fprintf(f, "</svg>\n");
}

/* ---- bar lists ---------------------------------------------------------- */

/* label cut to what its side of the row holds, with an ellipsis */
static void row_label(FILE *f, const char *s)
{
	char b[48];

	if (strlen(s) < sizeof(b) - 4) {
		lw_html_esc(f, s);
		return;
	}
	memcpy(b, s, sizeof(b) - 4);
	b[sizeof(b) - 4] = '\0';
	lw_html_esc(f, b);
	fputs("\xe2\x80\xa6", f);
}

void lw_svg_hbars(FILE *f, const char *mark, const char *const cls[2],
		  const struct lw_svg_row *rows, size_t n, size_t max)
{
	const int rh = 30;
	__u64 top = 1;

	n = n < max ? n : max;
	for (size_t i = 0; i < n; i++)
		top = rows[i].seg[0] + rows[i].seg[1] > top ? rows[i].seg[0] + rows[i].seg[1] : top;
	svg_open(f, (int)n * rh + 4, mark, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct lw_svg_row *r = &rows[i];
		double y = i * rh + 2, w0 = (double)W * r->seg[0] / top,
		       w1 = (double)W * r->seg[1] / top;

		fprintf(f, "<g class=\"mark %s\" %s><title>", mark, r->attrs);
		lw_html_escf(f, "%s: %s", r->label, r->value);
		fprintf(f, "</title><text x=\"0\" y=\"%.0f\">", y + 11);
		row_label(f, r->label);
		fprintf(f, "</text><text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">", W, y + 11);
		lw_html_esc(f, r->value);
		fprintf(f, "</text>");
		fprintf(f,
			"<rect class=\"%s\" x=\"0\" y=\"%.0f\" width=\"%.2f\" height=\"11\"/>"
			"<rect class=\"%s\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"11\"/>",
			r->cls ? r->cls : cls[0], y + 15, w0 > 1 || !r->seg[0] ? w0 : 1, cls[1], w0,
			y + 15, w1);
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</svg>\n");
	if (n == max)
		fprintf(f, "<p class=\"nodata\">the %zu largest</p>\n", max);
}

/* ---- the clock ---------------------------------------------------------- */

static const char *const palette[] = {"#2e6da4", "#d35400", "#27ae60", "#8e44ad",
				      "#c0392b", "#16a085", "#7f8c8d", "#b7950b"};

static int cmp_clock(const void *a, const void *b)
{
	const struct html_clock *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* CPU c[0].cpu's samples c[0..n) as a step line to the run's end. */
static void clock_line(FILE *f, const struct html_clock *c, size_t n, double mhz_max,
		       const struct html_time *t, int h, const char *color)
{
	double ph = h - PT - PB;
	__u32 lo = c[0].khz, hi = c[0].khz;

	for (size_t i = 0; i < n; i++) {
		lo = c[i].khz < lo ? c[i].khz : lo;
		hi = c[i].khz > hi ? c[i].khz : hi;
	}
	fprintf(f,
		"<polyline class=\"mark clock-cpu\" data-cpu=\"%u\" data-points=\"%zu\" "
		"data-min-khz=\"%u\" data-max-khz=\"%u\" style=\"stroke:%s\" points=\"",
		c[0].cpu, n, lo, hi, color);
	for (size_t i = 0; i < n; i++) {
		double y = h - PB - ph * (c[i].khz / 1000.0) / mhz_max;

		if (i)
			fprintf(f, " %.1f,%.1f", time_x(t, c[i].ts_ns),
				h - PB - ph * (c[i - 1].khz / 1000.0) / mhz_max);
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", time_x(t, c[i].ts_ns), y);
	}
	fprintf(f, " %.1f,%.1f\"><title>CPU %u: %u-%u MHz</title></polyline>\n", time_x(t, t->t1),
		h - PB - ph * (c[n - 1].khz / 1000.0) / mhz_max, c[0].cpu, lo / 1000, hi / 1000);
}

static void clock_legend(FILE *f, const struct html_clock *c, size_t n, size_t cpus)
{
	size_t k = 0;

	fprintf(f, "<ul class=\"legend\">");
	for (size_t i = 0; i < n && k < MAX_CLOCK_CPUS; i++) {
		if (i && c[i].cpu == c[i - 1].cpu)
			continue;
		fprintf(f, "<li><i class=\"sw\" style=\"background:%s\"></i>CPU %u</li>",
			palette[k++ % (sizeof(palette) / sizeof(palette[0]))], c[i].cpu);
	}
	fprintf(f, "</ul>\n");
	if (cpus > MAX_CLOCK_CPUS)
		fprintf(f, "<p class=\"nodata\">%zu more CPUs not drawn</p>\n",
			cpus - MAX_CLOCK_CPUS);
}

void lw_svg_clock(FILE *f, const struct html_clock *in, size_t n, __u32 ref_khz,
		  const struct html_time *t)
{
	struct html_clock *c = malloc(n * sizeof(*c));
	const int h = 200;
	double ph = h - PT - PB, ymax;
	__u32 max = ref_khz;
	size_t cpus = 0;
	char b[32];

	if (!c)
		return;
	memcpy(c, in, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_clock);
	for (size_t i = 0; i < n; i++) {
		max = c[i].khz > max ? c[i].khz : max;
		cpus += !i || c[i].cpu != c[i - 1].cpu;
	}
	ymax = nice_ceil(max / 1000.0);
	svg_open(f, h, "clock per CPU over time", NULL);
	for (int g = 0; g <= 4; g++) {
		snprintf(b, sizeof(b), "%g", ymax * g / 4);
		y_tick(f, PT + ph * (4 - g) / 4, b);
	}
	if (ref_khz) {
		double y = h - PB - ph * (ref_khz / 1000.0) / ymax;

		fprintf(f, "<line class=\"ref\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", PL,
			y, W - PR, y);
		fprintf(f,
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">reference %u MHz</text>\n",
			W - PR, y - 3, ref_khz / 1000);
	}
	for (size_t i = 0, j, k = 0; i < n && k < MAX_CLOCK_CPUS; i = j, k++) {
		for (j = i; j < n && c[j].cpu == c[i].cpu; j++)
			;
		clock_line(f, &c[i], j - i, ymax, t, h,
			   palette[k % (sizeof(palette) / sizeof(palette[0]))]);
	}
	axes(f, h);
	time_ticks(f, t, h);
	fprintf(f, "</svg>\n");
	clock_legend(f, c, n, cpus);
	free(c);
}

/* ---- THP ---------------------------------------------------------------- */

void lw_svg_thp(FILE *f, const struct html_thp *v, size_t n, const struct html_time *t)
{
	static const char *const names[2] = {"collapse", "compact"};
	__u64(*bins)[2] = calloc(t->nbins, sizeof(*bins));
	__u64 pc = 0, pm = 0, total = 0;

	if (!bins)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t b = v[i].ts_ns > t->t0 ? (v[i].ts_ns - t->t0) / t->width : 0;

		b = b < t->nbins ? b : t->nbins - 1;
		/* cumulative counts: what moved since the last sample */
		bins[b][0] += v[i].collapses > pc ? v[i].collapses - pc : 0;
		bins[b][1] += v[i].compactions > pm ? v[i].compactions - pm : 0;
		pc = v[i].collapses;
		pm = v[i].compactions;
	}
	total = pc + pm;
	fprintf(f, "<p>Collapses of its memory and its direct compactions, per bin.</p>\n");
	lw_svg_stacked_bins(f, "thp-bin", &bins[0][0], 2, names, t, total);
	fprintf(f, "<ul class=\"legend\"><li><i class=\"sw c-collapse\"></i>khugepaged collapses"
		   "</li><li><i class=\"sw c-compact\"></i>direct compactions</li></ul>\n");
	free(bins);
}
