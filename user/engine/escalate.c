// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * escalate.c - the escalation rule (escalate.h).
 */
#include <math.h>

#include "engine/escalate.h"

const struct lw_esc_conf lw_esc_defaults = {
	.min_slow = 5,
	.min_req = 200,
	.factor = 3.0,
	.floor = 0.02,
	.mean_factor = 1.5,
	.mean_floor_ns = 50000,
	.tau_ns = 60ULL * 1000000000ULL,
	.hold_ns = 10ULL * 1000000000ULL,
	.max_ns = 300ULL * 1000000000ULL,
};

/* The window's counts, its first slow request (0: none known). */
static void esc_window(const struct lw_esc *e, struct lw_esc_counts *w)
{
	*w = (struct lw_esc_counts){};
	for (int i = 0; i < LW_ESC_WINDOW; i++) {
		w->req += e->req[i];
		w->lat_ns += e->lat[i];
		w->slow += e->slow[i];
		if (e->first[i] && (!w->first_ns || e->first[i] < w->first_ns))
			w->first_ns = e->first[i];
	}
}

/* The step into the baseline, weighted by its time: a step holds
 * LW_ESC_STEP_NS of the tau_ns the baseline remembers. */
static void esc_learn(const struct lw_esc_conf *c, struct lw_esc *e, const struct lw_esc_counts *n)
{
	double a = 1.0 - exp(-(double)LW_ESC_STEP_NS / (double)c->tau_ns);

	if (!n->req)
		return;
	/* the first requests seed it: from 0 it would take a minute to
	 * learn what a target has always had */
	if (e->base_req < c->min_req)
		a = (double)n->req / (double)(e->base_req + n->req);
	e->base += a * ((double)n->slow / (double)n->req - e->base);
	e->base_mean += a * ((double)n->lat_ns / (double)n->req - e->base_mean);
	e->base_req += n->req;
}

static bool esc_high(const struct lw_esc_conf *c, const struct lw_esc *e,
		     const struct lw_esc_counts *w)
{
	double share, bar, mean, mbar;

	if (e->base_req < c->min_req || w->slow < c->min_slow || !w->req)
		return false;
	share = (double)w->slow / (double)w->req;
	bar = e->base * c->factor;
	if (bar < e->base + c->floor)
		bar = e->base + c->floor;
	mean = (double)w->lat_ns / (double)w->req;
	mbar = e->base_mean * c->mean_factor;
	if (mbar < e->base_mean + c->mean_floor_ns)
		mbar = e->base_mean + c->mean_floor_ns;
	return share > bar || mean > mbar;
}

enum lw_esc_change lw_esc_step(const struct lw_esc_conf *c, struct lw_esc *e, __u64 now,
			       const struct lw_esc_counts *n, __u64 *since_ns)
{
	struct lw_esc_counts step = *n, w;
	bool high;

	if (step.slow > step.req)
		step.slow = step.req;
	e->pos = (e->pos + 1) % LW_ESC_WINDOW;
	e->req[e->pos] = step.req;
	e->lat[e->pos] = step.lat_ns;
	e->slow[e->pos] = step.slow;
	e->first[e->pos] = step.slow ? step.first_ns : 0;
	esc_window(e, &w);
	high = esc_high(c, e, &w);
	if (high)
		e->high_ns = now;
	if (!e->raised) {
		if (!high) {
			esc_learn(c, e, &step);
			return LW_ESC_SAME;
		}
		e->raised = true;
		e->raised_ns = now;
		if (since_ns)
			*since_ns = w.first_ns && w.first_ns <= now ? w.first_ns : now;
		return LW_ESC_RISE;
	}
	if (now - e->raised_ns >= c->max_ns) {
		/* the level it stays at is its normal now */
		if (w.req) {
			e->base = (double)w.slow / (double)w.req;
			e->base_mean = (double)w.lat_ns / (double)w.req;
		}
		e->raised = false;
		return LW_ESC_FALL;
	}
	if (!high && now - e->high_ns >= c->hold_ns) {
		e->raised = false;
		return LW_ESC_FALL;
	}
	return LW_ESC_SAME;
}
