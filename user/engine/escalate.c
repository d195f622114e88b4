// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * escalate.c - the escalation rule (escalate.h).
 */
#include <math.h>

#include "engine/escalate.h"

const struct lw_esc_conf lw_esc_defaults = {
	.min_slow = 3,
	.min_req = 200,
	.factor = 3.0,
	.floor = 0.02,
	.tau_ns = 60ULL * 1000000000ULL,
	.hold_ns = 10ULL * 1000000000ULL,
	.max_ns = 300ULL * 1000000000ULL,
};

/* The window's counts, and its first slow request (0: none known). */
static void esc_window(const struct lw_esc *e, __u64 *req, __u64 *slow, __u64 *first)
{
	*req = *slow = *first = 0;
	for (int i = 0; i < LW_ESC_WINDOW; i++) {
		*req += e->req[i];
		*slow += e->slow[i];
		if (e->first[i] && (!*first || e->first[i] < *first))
			*first = e->first[i];
	}
}

/* The step's share into the baseline, weighted by its time: a step holds
 * LW_ESC_STEP_NS of the tau_ns the baseline remembers. */
static void esc_learn(const struct lw_esc_conf *c, struct lw_esc *e, __u64 req, __u64 slow)
{
	double a = 1.0 - exp(-(double)LW_ESC_STEP_NS / (double)c->tau_ns);
	double share;

	if (!req)
		return;
	share = (double)slow / (double)req;
	/* the first requests seed it: from 0 it would take a minute to
	 * learn a share a target has always had */
	if (e->base_req < c->min_req)
		a = (double)req / (double)(e->base_req + req);
	e->base += a * (share - e->base);
	e->base_req += req;
}

static bool esc_high(const struct lw_esc_conf *c, const struct lw_esc *e, __u64 req, __u64 slow)
{
	double share, bar;

	if (e->base_req < c->min_req || slow < c->min_slow || !req)
		return false;
	share = (double)slow / (double)req;
	bar = e->base * c->factor;
	if (bar < e->base + c->floor)
		bar = e->base + c->floor;
	return share > bar;
}

enum lw_esc_change lw_esc_step(const struct lw_esc_conf *c, struct lw_esc *e, __u64 now, __u64 req,
			       __u64 slow, __u64 first_ns, __u64 *since_ns)
{
	__u64 wreq, wslow, wfirst;
	bool high;

	e->pos = (e->pos + 1) % LW_ESC_WINDOW;
	e->req[e->pos] = req;
	e->slow[e->pos] = slow < req ? slow : req;
	e->first[e->pos] = slow ? first_ns : 0;
	esc_window(e, &wreq, &wslow, &wfirst);
	high = esc_high(c, e, wreq, wslow);
	if (high)
		e->high_ns = now;
	if (!e->raised) {
		if (!high) {
			esc_learn(c, e, req, e->slow[e->pos]);
			return LW_ESC_SAME;
		}
		e->raised = true;
		e->raised_ns = now;
		if (since_ns)
			*since_ns = wfirst && wfirst <= now ? wfirst : now;
		return LW_ESC_RISE;
	}
	if (now - e->raised_ns >= c->max_ns) {
		/* the level it stays at is its normal now */
		e->base = wreq ? (double)wslow / (double)wreq : e->base;
		e->raised = false;
		return LW_ESC_FALL;
	}
	if (!high && now - e->high_ns >= c->hold_ns) {
		e->raised = false;
		return LW_ESC_FALL;
	}
	return LW_ESC_SAME;
}
