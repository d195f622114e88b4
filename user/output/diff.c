// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* diff.c - latwhy diff's printers (see diff.h). */
#include <stdio.h>

#include "output/diff.h"
#include "lib/fmt.h"
#include "output/json.h"

static const char *const side_name[2] = {"A", "B"};

static void row(FILE *f, const char *label, const char *a, const char *b)
{
	fprintf(f, "  %-24s %-30s %s\n", label, a, b);
}

static void share_str(const struct lw_summary *s, int c, char *buf, size_t len)
{
	if (!s->cause[c].measured)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f%%", s->cause[c].share * 100);
}

static void side_rows(FILE *f, const struct lw_diff_side side[2])
{
	char v[2][64], a[32], b[32];

	for (int i = 0; i < 2; i++)
		snprintf(v[i], 64, "%s, %llu requests",
			 lw_fmt_ns(a, sizeof(a), side[i].s->duration_ns),
			 (unsigned long long)side[i].s->requests);
	row(f, "traced", v[0], v[1]);
	for (int i = 0; i < 2; i++)
		snprintf(v[i], 64, "%s / %s", lw_fmt_ns(a, sizeof(a), side[i].s->p50_ns),
			 lw_fmt_ns(b, sizeof(b), side[i].s->p99_ns));
	row(f, "p50 / p99", v[0], v[1]);
	for (int i = 0; i < 2; i++) {
		const struct lw_summary *s = side[i].s;
		double secs = s->duration_ns / 1e9;

		snprintf(v[i], 64, "%llu (%.1f/s)", (unsigned long long)s->slow_requests,
			 secs > 0 ? s->slow_requests / secs : 0);
	}
	row(f, "slow requests", v[0], v[1]);
	for (int c = LW_CAUSE_NONE + 1; c < LW_CAUSE_MAX; c++) {
		share_str(side[0].s, c, v[0], 64);
		share_str(side[1].s, c, v[1], 64);
		snprintf(a, sizeof(a), "  %s", lw_cause_name(c));
		row(f, a, v[0], v[1]);
	}
	row(f, "dominant", lw_summary_verdict(side[0].s), lw_summary_verdict(side[1].s));
}

/* The slower side's own findings of cause c: its fix lines. */
static void fixes(FILE *f, const struct lw_findings *fs, enum lw_cause c, const char *who)
{
	size_t n = 0;

	for (size_t i = 0; fs && i < fs->n; i++) {
		if (fs->v[i].cause != c)
			continue;
		for (size_t k = 0; k < fs->v[i].fix.n; k++)
			fprintf(f, "     %s %s\n", n++ ? "   " : "fix:", fs->v[i].fix.v[k]);
	}
	if (!n)
		fprintf(f, "     fix: none of %s's findings is of this cause\n", who);
}

static void why(FILE *f, const struct lw_diff_side side[2], const struct lw_diff *d)
{
	char a[32], b[32];
	int s = d->slower;

	if (s < 0) {
		fprintf(f, "\nBoth have the same p99: no side is slower.\n");
		return;
	}
	fprintf(f, "\nWhy %s is slower (p99 %s against %s), most likely first:\n", side_name[s],
		lw_fmt_ns(a, sizeof(a), side[s].s->p99_ns),
		lw_fmt_ns(b, sizeof(b), side[!s].s->p99_ns));
	if (!d->nr_why)
		fprintf(f, "  no cause grew by 5%% of the slow requests' time or more\n");
	for (size_t i = 0; i < d->nr_why; i++) {
		const struct lw_diff_cause *w = &d->why[i];

		char pa[32], pb[32];

		/* a side that did not measure the cause says so, not 0% */
		snprintf(pa, sizeof(pa), w->share[0] < 0 ? "not measured in A" : "%.0f%% of A's",
			 w->share[0] * 100);
		snprintf(pb, sizeof(pb), w->share[1] < 0 ? "not measured in B" : "%.0f%% of B's",
			 w->share[1] * 100);
		fprintf(f, "  %zu. %s: %s slow-request time, %s\n", i + 1, lw_cause_name(w->cause),
			pa, pb);
		if (!w->nr_sw)
			fprintf(f,
				"     no switch of its domain differs: look at the load, not the "
				"node\n");
		for (size_t k = 0; k < w->nr_sw; k++) {
			const struct lw_diff_switch *x = &d->sw[w->sw[k]];

			fprintf(f, "     differs: %s %s on %s, %s on %s\n", x->name, x->v[s],
				side_name[s], x->v[!s], side_name[!s]);
		}
		fixes(f, side[s].fs, w->cause, side_name[s]);
	}
}

void lw_diff_print(FILE *f, const struct lw_diff_side side[2], const struct lw_diff *d)
{
	fprintf(f, "A: %s (%s)\nB: %s (%s)\n\n", side[0].file, side[0].host, side[1].file,
		side[1].host);
	row(f, "", "A", "B");
	side_rows(f, side);
	fprintf(f, "\nNode switches that differ:%s\n", d->nr_sw ? "" : " none");
	for (size_t i = 0; i < d->nr_sw; i++)
		fprintf(f, "  %-24s %-30s %s  (%s)\n", d->sw[i].name, d->sw[i].v[0], d->sw[i].v[1],
			lw_cause_name(d->sw[i].cause));
	why(f, side, d);
}

static void json_side(struct lw_json *j, const char *key, const struct lw_diff_side *x)
{
	lw_json_key(j, key);
	lw_json_begin_object(j);
	lw_json_kstr(j, "file", x->file);
	lw_json_kstr(j, "host", x->host);
	lw_json_ku64(j, "duration_ns", x->s->duration_ns);
	lw_json_ku64(j, "requests", x->s->requests);
	lw_json_ku64(j, "slow_requests", x->s->slow_requests);
	lw_json_ku64(j, "p50_ns", x->s->p50_ns);
	lw_json_ku64(j, "p99_ns", x->s->p99_ns);
	lw_json_kstr(j, "dominant", lw_summary_verdict(x->s));
	lw_json_key(j, "shares");
	lw_json_begin_object(j);
	for (int c = LW_CAUSE_NONE + 1; c < LW_CAUSE_MAX; c++) {
		if (x->s->cause[c].measured)
			lw_json_kdouble(j, lw_cause_name(c), x->s->cause[c].share);
		else
			lw_json_knull(j, lw_cause_name(c));
	}
	lw_json_end_object(j);
	lw_json_end_object(j);
}

static void json_why(struct lw_json *j, const struct lw_diff_side side[2], const struct lw_diff *d)
{
	lw_json_key(j, "explain");
	lw_json_begin_array(j);
	for (size_t i = 0; i < d->nr_why; i++) {
		const struct lw_diff_cause *w = &d->why[i];
		const struct lw_findings *fs = side[d->slower].fs;

		lw_json_begin_object(j);
		lw_json_kstr(j, "cause", lw_cause_name(w->cause));
		lw_json_kdouble(j, "share_a", w->share[0]);
		if (w->share[1] < 0)
			lw_json_knull(j, "share_b");
		else
			lw_json_kdouble(j, "share_b", w->share[1]);
		lw_json_key(j, "switches");
		lw_json_begin_array(j);
		for (size_t k = 0; k < w->nr_sw; k++)
			lw_json_string(j, d->sw[w->sw[k]].name);
		lw_json_end_array(j);
		lw_json_key(j, "fix");
		lw_json_begin_array(j);
		for (size_t f = 0; fs && f < fs->n; f++)
			for (size_t k = 0; fs->v[f].cause == w->cause && k < fs->v[f].fix.n; k++)
				lw_json_string(j, fs->v[f].fix.v[k]);
		lw_json_end_array(j);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
}

void lw_diff_json(FILE *f, const struct lw_diff_side side[2], const struct lw_diff *d)
{
	struct lw_json j;

	lw_json_init(&j, f, false);
	lw_json_begin_object(&j);
	lw_json_kstr(&j, "type", "diff");
	json_side(&j, "a", &side[0]);
	json_side(&j, "b", &side[1]);
	if (d->slower < 0)
		lw_json_knull(&j, "slower");
	else
		lw_json_kstr(&j, "slower", d->slower ? "b" : "a");
	lw_json_key(&j, "switches");
	lw_json_begin_array(&j);
	for (size_t i = 0; i < d->nr_sw; i++) {
		lw_json_begin_object(&j);
		lw_json_kstr(&j, "name", d->sw[i].name);
		lw_json_kstr(&j, "cause", lw_cause_name(d->sw[i].cause));
		lw_json_kstr(&j, "a", d->sw[i].v[0]);
		lw_json_kstr(&j, "b", d->sw[i].v[1]);
		lw_json_end_object(&j);
	}
	lw_json_end_array(&j);
	json_why(&j, side, d);
	lw_json_end_object(&j);
	lw_json_end(&j);
}
