// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * escalate.c - the escalation rule (escalate.h).
 */
#include <math.h>
#include <stddef.h>

#include "engine/escalate.h"

const struct lw_esc_conf lw_esc_defaults = {
	.min_slow = 5,
	.min_req = 200,
	.min_steps = 8,
	.factor = 3.0,
	.floor = 0.02,
	.mean_factor = 1.5,
	.mean_floor_ns = 10000,
	.spread_k = 6.0,
	.spread_max = 0.10,
	.learn_steps = 120,
	.tau_ns = 60ULL * 1000000000ULL,
	.hold_min_ns = 3ULL * 1000000000ULL,
	.hold_ns = 10ULL * 1000000000ULL,
	.max_ns = 300ULL * 1000000000ULL,
	.check_ns = 20ULL * 1000000000ULL,
	.spike_ns = 1000000000ULL,
	.spike_keep_ns = 600ULL * 1000000000ULL,
	.timed_rate = 1000.0,
};

unsigned int lw_esc_shift(const struct lw_esc_conf *c, double rate, unsigned int cur,
			  unsigned int max_shift)
{
	double timed;
	unsigned int s = 0;

	if (cur > max_shift)
		cur = max_shift;
	timed = rate / (double)(1U << cur);
	if (timed >= c->timed_rate / 2 && timed <= 2 * c->timed_rate)
		return cur;
	while (s < max_shift && rate / (double)(1U << s) > c->timed_rate)
		s++;
	return s;
}

/* The window's counts (its first slow request is esc_since()'s). */
static void esc_window(const struct lw_esc *e, struct lw_esc_counts *w)
{
	*w = (struct lw_esc_counts){};
	for (int i = 0; i < LW_ESC_WINDOW; i++) {
		w->req += e->req[i];
		w->lat_ns += e->lat[i];
		w->slow += e->slow[i];
	}
}

/* The window starts again: of tier from now on. */
static void esc_restart(struct lw_esc *e, enum lw_esc_tier tier)
{
	for (int i = 0; i < LW_ESC_WINDOW; i++)
		e->req[i] = e->slow[i] = e->first[i] = e->lat[i] = 0;
	e->fill = 0;
	e->pend = 0;
	e->tier = tier;
}

static bool esc_ready(const struct lw_esc_conf *c, const struct lw_esc_base *b)
{
	return b->req >= c->min_req && b->steps >= c->min_steps;
}

/* x into a mean and variance that remember a of it: exponentially
 * weighted (West's update). */
static void esc_avg(double *mean, double *var, double x, double a)
{
	double d = x - *mean;

	*mean += a * d;
	*var = (1.0 - a) * (*var + a * d * d);
}

/* A full window of step req requests into its tier's baseline, weighted
 * by time: a step holds LW_ESC_STEP_NS of the tau_ns it remembers. */
static void esc_learn(const struct lw_esc_conf *c, struct lw_esc_base *b,
		      const struct lw_esc_counts *w, __u64 req)
{
	double a = 1.0 - exp(-(double)LW_ESC_STEP_NS / (double)c->tau_ns);

	if (!w->req)
		return;
	/* the first windows seed it, averaged alike: from 0 it would take a
	 * minute to learn what a target has always had, and its spread */
	if (b->req < c->min_req || b->steps < c->learn_steps)
		a = 1.0 / (double)(b->steps + 1);
	esc_avg(&b->share, &b->share_var, (double)w->slow / (double)w->req, a);
	esc_avg(&b->mean, &b->mean_var, (double)w->lat_ns / (double)w->req, a);
	b->req += req;
	b->steps++;
}

/* The bar over base: factor times it, floor and spread above it. */
static double esc_bar(double base, double factor, double floor, double spread)
{
	double bar = base * factor;

	if (bar < base + floor)
		bar = base + floor;
	if (bar < base + spread)
		bar = base + spread;
	return bar;
}

/* The bars of e's tier's baseline: share and mean. */
static void esc_bars(const struct lw_esc_conf *c, const struct lw_esc_base *b, double *share,
		     double *mean)
{
	double spread = fmin(c->spread_k * sqrt(b->share_var), c->spread_max);
	double mspread = c->spread_k * sqrt(b->mean_var);

	if (b->steps < c->learn_steps) {
		spread = c->spread_max;
		mspread = fmax(mspread, b->mean);
	}
	*share = esc_bar(b->share, c->factor, c->floor, spread);
	*mean = esc_bar(b->mean, c->mean_factor, (double)c->mean_floor_ns, mspread);
}

/*
 * The baseline e's window is judged by, NULL if none has been learnt; with
 * *mean_only, by its mean alone. Full tracing's own baseline is learnt on
 * the duty cycle's stretches, the second of them at the earliest: until
 * then a window with full tracing attached is judged by the cheap tier's
 * mean, which full tracing's own cost (~15%) stays well under, and not by
 * its share, which that cost raises (the rise held itself up). Judging
 * none there lost full tracing 10 s into a hog that doubled a lab server's
 * requests, the hog still on.
 */
static const struct lw_esc_base *esc_base(const struct lw_esc_conf *c, const struct lw_esc *e,
					  bool *mean_only)
{
	const struct lw_esc_base *b = &e->base[e->tier];

	*mean_only = false;
	if (e->tier == LW_ESC_FULL && !esc_ready(c, b)) {
		b = &e->base[LW_ESC_WATCH];
		*mean_only = true;
	}
	return esc_ready(c, b) ? b : NULL;
}

/* Over the bars of b: the share (unless mean_only) or the mean. */
static bool esc_over(const struct lw_esc_conf *c, const struct lw_esc_base *b, bool mean_only,
		     __u64 req, __u64 slow, __u64 lat)
{
	double share, mean;

	esc_bars(c, b, &share, &mean);
	return req && ((!mean_only && (double)slow / (double)req > share) ||
		       (double)lat / (double)req > mean);
}

static bool esc_high(const struct lw_esc_conf *c, const struct lw_esc *e,
		     const struct lw_esc_counts *w)
{
	const struct lw_esc_base *b;
	bool mean_only;

	if (e->tier == LW_ESC_MIXED || e->fill < LW_ESC_WINDOW || !w->req || w->slow < c->min_slow)
		return false;
	b = esc_base(c, e, &mean_only);
	return b && esc_over(c, b, mean_only, w->req, w->slow, w->lat_ns);
}

/* When a rise began: the first slow request of the window's first step
 * over the bars by itself, not a slow one of the baseline's before it
 * (1% slow is slow too); else of the window's last step; now if none. */
static __u64 esc_since(const struct lw_esc_conf *c, const struct lw_esc *e, __u64 now)
{
	bool mean_only;
	const struct lw_esc_base *b = esc_base(c, e, &mean_only);

	for (int k = 1; k <= LW_ESC_WINDOW; k++) {
		int i = (e->pos + k) % LW_ESC_WINDOW; /* the oldest first */

		if (e->first[i] && e->first[i] <= now &&
		    (k == LW_ESC_WINDOW ||
		     (b && esc_over(c, b, mean_only, e->req[i], e->slow[i], e->lat[i]))))
			return e->first[i];
	}
	return now;
}

/* The window's highest step, by share and by mean, of those with requests
 * enough to say (4 min_slow): a spike's level whatever part of it the
 * window holds yet. */
static void esc_peak(const struct lw_esc_conf *c, const struct lw_esc *e, double *share,
		     double *mean)
{
	*share = *mean = 0;
	for (int i = 0; i < LW_ESC_WINDOW; i++) {
		if (!e->req[i] || e->req[i] < 4 * c->min_slow)
			continue;
		*share = fmax(*share, (double)e->slow[i] / (double)e->req[i]);
		*mean = fmax(*mean, (double)e->lat[i] / (double)e->req[i]);
	}
}

/* Over the bars, but at or under the target's largest recent spike in
 * share and mean: one of its own spikes, unless it outlasts one. */
static bool esc_spike_like(const struct lw_esc_conf *c, const struct lw_esc *e, __u64 now)
{
	double share, mean;

	if (!e->spike_at || now - e->spike_at > c->spike_keep_ns)
		return false;
	esc_peak(c, e, &share, &mean);
	return share <= e->spike_share && mean <= e->spike_mean;
}

/* A rise fell after its hold: if its windows rose spike_ns at most, it was
 * a spike, and the largest of them the target's own. */
static void esc_spike(const struct lw_esc_conf *c, struct lw_esc *e, __u64 now)
{
	if (e->high_ns - e->raised_ns > c->spike_ns)
		return;
	if (!e->spike_at || now - e->spike_at > c->spike_keep_ns)
		e->spike_share = e->spike_mean = 0;
	e->spike_share = fmax(e->spike_share, e->rise_share);
	e->spike_mean = fmax(e->spike_mean, e->rise_mean);
	e->spike_at = now;
}

/* The step into the window: a change of tier starts it again. */
static void esc_push(struct lw_esc *e, const struct lw_esc_counts *n)
{
	__u64 slow = n->slow < n->req ? n->slow : n->req;

	if (n->tier != e->tier)
		esc_restart(e, n->tier);
	if (n->tier == LW_ESC_MIXED)
		return;
	e->pos = (e->pos + 1) % LW_ESC_WINDOW;
	e->req[e->pos] = n->req;
	e->lat[e->pos] = n->lat_ns;
	e->slow[e->pos] = slow;
	e->first[e->pos] = slow ? n->first_ns : 0;
	if (e->fill < LW_ESC_WINDOW)
		e->fill++;
}

/* How long a rise is held after its last window: the longer it lasted, the
 * longer, so that a spike costs little full tracing and an incident that
 * comes and goes keeps it. */
static __u64 esc_hold(const struct lw_esc_conf *c, const struct lw_esc *e)
{
	__u64 hold = c->hold_min_ns + (e->high_ns - e->raised_ns);

	return hold < c->hold_ns ? hold : c->hold_ns;
}

/* The window w of the cheap tier alone is the target's normal now. */
static void esc_renormal(struct lw_esc *e, const struct lw_esc_counts *w)
{
	if (!w->req)
		return;
	e->base[LW_ESC_WATCH].share = (double)w->slow / (double)w->req;
	e->base[LW_ESC_WATCH].mean = (double)w->lat_ns / (double)w->req;
}

/* A check's window: the rise still there, or over. Until a window of the
 * cheap tier alone is full (while a duty stretch or another target's rise
 * holds full tracing), it waits. */
static enum lw_esc_change esc_checked(const struct lw_esc_conf *c, struct lw_esc *e, __u64 now,
				      bool high)
{
	if (e->tier != LW_ESC_WATCH || e->fill < LW_ESC_WINDOW)
		return LW_ESC_SAME;
	e->checking = false;
	if (!high)
		return LW_ESC_FALL;
	e->raised = true;
	e->high_ns = e->judged_ns = now;
	e->check_ns = e->check_ns * 2 < c->max_ns ? e->check_ns * 2 : c->max_ns;
	return LW_ESC_AGAIN;
}

enum lw_esc_change lw_esc_step(const struct lw_esc_conf *c, struct lw_esc *e, __u64 now,
			       const struct lw_esc_counts *n, __u64 *since_ns)
{
	struct lw_esc_counts w;
	bool high;

	esc_push(e, n);
	esc_window(e, &w);
	high = esc_high(c, e, &w);
	if (e->checking)
		return esc_checked(c, e, now, high);
	if (e->renormal) {
		if (e->tier == LW_ESC_WATCH && e->fill == LW_ESC_WINDOW) {
			esc_renormal(e, &w);
			e->renormal = false;
		}
		return LW_ESC_SAME;
	}
	if (high) {
		e->high_ns = now;
		if (e->tier == LW_ESC_WATCH)
			e->judged_ns = now;
	}
	if (!e->raised) {
		if (!high) {
			e->pend = 0;
			if (e->tier != LW_ESC_MIXED && e->fill == LW_ESC_WINDOW)
				esc_learn(c, &e->base[e->tier], &w, n->req);
			return LW_ESC_SAME;
		}
		/* full tracing attached by a duty stretch or another target's
		 * rise: it sees already, and its own bursts rose here */
		if (e->tier == LW_ESC_FULL)
			return LW_ESC_SAME;
		/* a spike of a second is in 7 windows: over the bars 2 s */
		if (esc_spike_like(c, e, now) && ++e->pend < 2 * LW_ESC_WINDOW)
			return LW_ESC_SAME; /* neither risen on nor learnt */
		e->pend = 0;
		esc_peak(c, e, &e->rise_share, &e->rise_mean);
		e->raised = true;
		e->raised_ns = e->judged_ns = now;
		e->check_ns = c->check_ns;
		if (since_ns)
			*since_ns = esc_since(c, e, now);
		return LW_ESC_RISE;
	}
	if (now - e->raised_ns >= c->max_ns) {
		/* the level it stays at is its normal now: the cheap tier's
		 * own, without full tracing's cost, at its next window */
		if (e->tier == LW_ESC_WATCH)
			esc_renormal(e, &w);
		else
			e->renormal = true;
		e->raised = false;
		return LW_ESC_FALL;
	}
	if (!high && now - e->high_ns >= esc_hold(c, e)) {
		e->raised = false;
		esc_spike(c, e, now);
		return LW_ESC_FALL;
	}
	if (e->tier == LW_ESC_FULL && c->check_ns && now - e->judged_ns >= e->check_ns) {
		e->raised = false;
		e->checking = true;
		return LW_ESC_CHECK;
	}
	return LW_ESC_SAME;
}
