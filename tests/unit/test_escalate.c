// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_escalate.c - serve's escalation rule (engine/escalate.h) on recorded
 * counter series: a target's requests and slow requests every 250 ms step,
 * its baseline learnt, a rise caught in its first step, held while it lasts
 * and 3-10 s after by how long it lasted, checked by the cheap tier alone
 * when full tracing's windows hold it, a shift that never ends given back
 * after 5 minutes; noise, a target that always wanders, warm-up and a
 * trickle of traffic never raising it; full tracing's own cost never
 * holding it up; and four recordings of a real load that wanders, two of
 * them faults of older rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include <cmocka.h>

#include "engine/escalate.h"

#define S	 1000000000ULL
#define STEP	 LW_ESC_STEP_NS
#define PER_STEP 500 /* 2000 requests a second */

struct run {
	struct lw_esc e;
	__u64 now;
	__u64 since;
	int rises, falls, checks, agains;
	__u64 first_rise_at, rise_at, fall_at, check_at;
	enum lw_esc_tier tier; /* what the steps say was attached */
	bool attached;	       /* steps_duty(): full tracing, as serve's duty has it */
};

/* One step of k at r->now under c, its rise or fall tallied. */
static void run_step(struct run *r, const struct lw_esc_conf *c, const struct lw_esc_counts *k)
{
	enum lw_esc_change ch = lw_esc_step(c, &r->e, r->now, k, &r->since);

	if (ch == LW_ESC_RISE) {
		if (!r->rises)
			r->first_rise_at = r->now;
		r->rises++;
		r->rise_at = r->now;
	} else if (ch == LW_ESC_FALL) {
		r->falls++;
		r->fall_at = r->now;
	} else if (ch == LW_ESC_CHECK) {
		r->checks++;
		r->check_at = r->now;
	} else if (ch == LW_ESC_AGAIN) {
		r->agains++;
	}
}

/* n steps of req requests of mean latency mean_ns with slow of them slow,
 * the first slow one 10 ms into each step. */
static void steps_mean(struct run *r, int n, __u64 req, __u64 slow, __u64 mean_ns)
{
	for (int i = 0; i < n; i++) {
		struct lw_esc_counts c0 = {
			.req = req, .lat_ns = req * mean_ns, .slow = slow, .tier = r->tier};

		c0.first_ns = slow ? r->now + 10000000ULL : 0;
		r->now += STEP;
		run_step(r, &lw_esc_defaults, &c0);
	}
}

/* n steps as serve's duty attaches full tracing: while the rule is raised,
 * a mixed step after each change; with full tracing attached, fslow slow
 * at a mean of fmean_ns (its own cost, or the incident's with it). */
static void steps_duty(struct run *r, int n, __u64 req, __u64 slow, __u64 mean_ns, __u64 fslow,
		       __u64 fmean_ns)
{
	for (int i = 0; i < n; i++) {
		bool full = r->e.raised;

		r->tier = full != r->attached ? LW_ESC_MIXED : full ? LW_ESC_FULL : LW_ESC_WATCH;
		r->attached = full;
		if (full)
			steps_mean(r, 1, req, fslow, fmean_ns);
		else
			steps_mean(r, 1, req, slow, mean_ns);
	}
}

/* The same at a mean of 300 us, a lab server's. */
static void steps(struct run *r, int n, __u64 req, __u64 slow)
{
	steps_mean(r, n, req, slow, 300000);
}

static void baseline(struct run *r)
{
	r->now = 100 * S;
	steps(r, 4 * 60, PER_STEP, 5); /* a minute at 1% slow */
	assert_int_equal(r->rises, 0);
	assert_true(r->e.base[LW_ESC_WATCH].share > 0.009 && r->e.base[LW_ESC_WATCH].share < 0.011);
}

static void test_rise_first_step(void **state)
{
	struct run r = {};
	__u64 start;

	baseline(&r);
	start = r.now;
	steps(&r, 1, PER_STEP, 100); /* a hog: 20% slow */
	assert_int_equal(r.rises, 1);
	assert_int_equal(r.rise_at, start + STEP);
	/* since: the first slow request of the hog's step, 10 ms into it,
	 * not one of the baseline's before it (1% slow is slow too) */
	assert_int_equal(r.since, start + 10000000ULL);
	assert_true(r.e.raised);
}

static void test_hold_then_fall(void **state)
{
	struct run r = {};
	__u64 end;

	baseline(&r);
	steps(&r, 40, PER_STEP, 100); /* 10 s of it */
	assert_int_equal(r.rises, 1);
	assert_int_equal(r.falls, 0);
	end = r.now;
	steps(&r, 39, PER_STEP, 5); /* back to normal: held 10 s after the
				     * last window that rose (3 steps more) */
	assert_int_equal(r.falls, 0);
	steps(&r, 8, PER_STEP, 5);
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at >= end + 10 * S && r.fall_at <= end + 11 * S);
	/* the rise did not become the baseline */
	assert_true(r.e.base[LW_ESC_WATCH].share > 0.009 && r.e.base[LW_ESC_WATCH].share < 0.011);
	/* and a second incident rises again */
	steps(&r, 1, PER_STEP, 100);
	assert_int_equal(r.rises, 2);
}

/* A spike of half a second (a benchmark's reconnects): held 3 s after its
 * last window, not the 10 s of an incident that lasted. */
static void test_spike_short_hold(void **state)
{
	struct run r = {};
	__u64 last;

	baseline(&r);
	steps(&r, 2, PER_STEP, 100);
	assert_int_equal(r.rises, 1);
	steps(&r, 3, PER_STEP, 5); /* the window still holds the spike */
	last = r.now;
	steps(&r, 4 * 12, PER_STEP, 5);
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at >= last + 3 * S && r.fall_at <= last + 4 * S);
}

/* A target's own spikes: the first rises and falls after the least hold;
 * the next ones like it, however many, do not; one larger rises and is the
 * spike to beat from then on; an incident at the spikes' level rises once
 * it has lasted 2 s, one past them at its first step; forgotten after 10
 * minutes without one. */
static void test_spikes_own(void **state)
{
	struct run r = {};
	__u64 start;

	baseline(&r);
	steps(&r, 1, PER_STEP, 100); /* a quarter-second spike: rises */
	assert_int_equal(r.rises, 1);
	steps(&r, 4 * 20, PER_STEP, 5);
	assert_int_equal(r.falls, 1);
	for (int i = 0; i < 5; i++) { /* the same level, every 20 s */
		steps(&r, 4 * 19, PER_STEP, 5);
		steps(&r, i & 1 ? 4 : 1, PER_STEP, i & 2 ? 100 : 60); /* up to a second */
		steps(&r, 4, PER_STEP, 5);
	}
	assert_int_equal(r.rises, 1);
	steps(&r, 1, PER_STEP, 200); /* larger: rises, then is the one to beat */
	assert_int_equal(r.rises, 2);
	steps(&r, 4 * 20, PER_STEP, 5);
	steps(&r, 1, PER_STEP, 180);
	steps(&r, 4 * 20, PER_STEP, 5);
	assert_int_equal(r.rises, 2);
	start = r.now; /* an incident at the spikes' level */
	steps(&r, 4 * 5, PER_STEP, 100);
	assert_int_equal(r.rises, 3);
	assert_true(r.rise_at >= start + 2 * S && r.rise_at <= start + 3 * S);
	steps(&r, 4 * 30, PER_STEP, 5);
	assert_false(r.e.raised);
	start = r.now; /* a hog past them: its first step */
	steps(&r, 1, PER_STEP, 400);
	assert_int_equal(r.rises, 4);
	assert_int_equal(r.rise_at, start + STEP);
	steps(&r, 4 * 30, PER_STEP, 5);
	steps(&r, 4 * 600, PER_STEP, 5); /* 10 minutes without one */
	start = r.now;
	steps(&r, 1, PER_STEP, 100);
	assert_int_equal(r.rises, 5);
	assert_int_equal(r.rise_at, start + STEP);
}

static void test_shift_given_back(void **state)
{
	struct run r = {};
	__u64 rose;

	baseline(&r);
	steps(&r, 1, PER_STEP, 50);
	rose = r.rise_at;
	steps(&r, 4 * 400, PER_STEP, 50); /* 10% slow for good */
	assert_int_equal(r.rises, 1);
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at >= rose + 300 * S && r.fall_at <= rose + 301 * S);
	/* the new level is the baseline: no rise again at it */
	assert_true(r.e.base[LW_ESC_WATCH].share > 0.09 && r.e.base[LW_ESC_WATCH].share < 0.11);
	assert_false(r.e.raised);
}

static void test_noise_never(void **state)
{
	struct run r = {};

	baseline(&r);
	for (int i = 0; i < 4 * 600; i++) /* 0.4%-2.4% slow, ten minutes */
		steps(&r, 1, PER_STEP, 2 + (i * 7) % 11);
	assert_int_equal(r.rises, 0);
}

static void test_warmup_and_trickle(void **state)
{
	struct run r = {.now = S};

	/* every request slow before the baseline has 200: not judged */
	steps(&r, 10, 10, 10);
	assert_int_equal(r.rises, 0);
	/* a trickle: 4 requests a second, one slow now and then, after a
	 * quiet baseline: fewer than 5 slow in a second never rises */
	r = (struct run){.now = S};
	steps(&r, 4 * 60 * 10, 1, 0);
	for (int i = 0; i < 40; i++)
		steps(&r, 1, 1, i % 2);
	assert_int_equal(r.rises, 0);
	/* but five in a second at a low rate does */
	steps(&r, 4, 2, 2);
	assert_int_equal(r.rises, 1);
}

/* A whole distribution that shifts: every request twice as slow (a hog
 * halving a busy server's CPU), few past the p99 set before it. */
static void test_mean_shift(void **state)
{
	struct run r = {};

	baseline(&r);
	assert_true(r.e.base[LW_ESC_WATCH].mean > 299000 && r.e.base[LW_ESC_WATCH].mean < 301000);
	steps_mean(&r, 4, PER_STEP, 2, 360000); /* 1.2x: noise */
	assert_int_equal(r.rises, 0);
	steps_mean(&r, 1, PER_STEP, 2, 600000); /* 2x: the window's mean 1.4x */
	assert_int_equal(r.rises, 0);
	steps_mean(&r, 1, PER_STEP, 2, 600000); /* 1.6x: half a second in */
	assert_int_equal(r.rises, 1);
	/* one slow outlier alone never rises, however long it was */
	r = (struct run){};
	baseline(&r);
	steps_mean(&r, 8, PER_STEP, 0, 300000);
	{
		struct lw_esc_counts one = {.req = PER_STEP,
					    .lat_ns = PER_STEP * 300000ULL + S, /* one of 1 s */
					    .slow = 1,
					    .first_ns = r.now};

		r.now += STEP;
		assert_int_equal(lw_esc_step(&lw_esc_defaults, &r.e, r.now, &one, &r.since),
				 LW_ESC_SAME);
	}
	/* and a fast service's shift under the 10 us floor neither */
	r = (struct run){.now = 100 * S};
	steps_mean(&r, 4 * 60, PER_STEP, 5, 10000);
	steps_mean(&r, 8, PER_STEP, 5, 18000); /* 1.8x, but +8 us */
	assert_int_equal(r.rises, 0);
	/* over it, a 2.5x shift of a busy server does */
	steps_mean(&r, 8, PER_STEP, 5, 25000);
	assert_int_equal(r.rises, 1);
}

/* A target that always wanders: 5 s at 0.4% slow, then a second at 6%
 * (an event loop's batches, a benchmark reconnecting), again and again.
 * The old rule (3x and 2 points) would have called full tracing in at each
 * burst; none does, in the first 10 s (which learn the spread) or after,
 * and a hog's 30% still does. */
static void bursts(struct run *r, int n)
{
	for (int i = 0; i < n; i++) {
		steps(r, 20, PER_STEP, 2);
		steps(r, 4, PER_STEP, 30);
	}
}

static void test_spread(void **state)
{
	struct run r = {.now = 100 * S};

	bursts(&r, 10); /* a minute: 10 points while the spread is learnt */
	assert_int_equal(r.rises, 0);
	bursts(&r, 100); /* ten more, the spread learnt */
	assert_int_equal(r.rises, 0);
	assert_false(r.e.raised);
	steps(&r, 4, PER_STEP, 150);
	assert_int_equal(r.rises, 1);
	/* while it learns, 10 s in, a hog's 30% rises all the same */
	r = (struct run){.now = 100 * S};
	steps(&r, 40, PER_STEP, 5);
	steps(&r, 4, PER_STEP, 150);
	assert_int_equal(r.rises, 1);
}

/* Full tracing slows every request: judged against the cheap tier's
 * baseline it would hold itself up. A scheduled stretch (2.5% slow, 1.3x
 * the mean while it is attached) never rises; an escalation whose hog has
 * gone falls 10 s after its last rising window, the tracing's own cost
 * notwithstanding. */
static void full_stretch(struct run *r, int n, __u64 slow)
{
	r->tier = LW_ESC_MIXED;
	steps(r, 1, PER_STEP, slow);
	r->tier = LW_ESC_FULL;
	steps_mean(r, n, PER_STEP, slow, 390000);
}

static void test_full_tier_own_cost(void **state)
{
	struct run r = {};

	baseline(&r);
	for (int cycle = 0; cycle < 4; cycle++) { /* 3 s of every 90 */
		full_stretch(&r, 11, 12);
		r.tier = LW_ESC_MIXED;
		steps(&r, 1, PER_STEP, 5);
		r.tier = LW_ESC_WATCH;
		steps(&r, 4 * 87, PER_STEP, 5);
	}
	assert_int_equal(r.rises, 0);
	assert_true(r.e.base[LW_ESC_FULL].share > 0.02 && r.e.base[LW_ESC_FULL].share < 0.03);
	assert_true(r.e.base[LW_ESC_WATCH].share > 0.009 && r.e.base[LW_ESC_WATCH].share < 0.011);
	steps(&r, 1, PER_STEP, 100); /* a hog, seen by the cheap tier */
	assert_int_equal(r.rises, 1);
	full_stretch(&r, 4, 100); /* full tracing attached, the hog on */
	full_stretch(&r, 0, 12);
	steps_mean(&r, 4 * 20, PER_STEP, 12, 390000); /* the hog gone: tracing's cost alone */
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at - r.rise_at <= 13 * S);
}

/* A hog that starts inside a duty stretch: full tracing is attached and
 * sees it, so no rise there, even with full tracing's baseline learnt; the
 * cheap tier's first window after the stretch rises (a mixed step and a
 * window: 1.25 s after it). */
static void test_rise_after_stretch(void **state)
{
	struct run r = {};
	__u64 end;

	baseline(&r);
	for (int cycle = 0; cycle < 2; cycle++) { /* full tracing's baseline */
		full_stretch(&r, 11, 12);
		r.tier = LW_ESC_MIXED;
		steps(&r, 1, PER_STEP, 5);
		r.tier = LW_ESC_WATCH;
		steps(&r, 4 * 87, PER_STEP, 5);
	}
	full_stretch(&r, 5, 12);
	steps_mean(&r, 6, PER_STEP / 2, 150, 800000); /* the hog, attached */
	assert_int_equal(r.rises, 0);
	end = r.now;
	r.tier = LW_ESC_MIXED;
	steps_mean(&r, 1, PER_STEP / 2, 150, 800000);
	r.tier = LW_ESC_WATCH;
	steps_mean(&r, 4, PER_STEP / 2, 150, 800000);
	assert_int_equal(r.rises, 1);
	assert_int_equal(r.rise_at, end + 5 * STEP);
}

/* Escalated before full tracing has a baseline of its own (serve's first
 * minutes): held by the cheap tier's mean while the hog lasts, 30 s here;
 * checked 20 s in, the hog still there: raised again 1.25 s later, the next
 * check 40 s on; then falls 10 s after the hog, full tracing's cost (1.3x
 * the mean, the share 2.4x) notwithstanding. */
static void test_full_unlearnt_holds(void **state)
{
	struct run r = {};
	__u64 gone;

	baseline(&r);
	assert_int_equal(r.e.base[LW_ESC_FULL].steps, 0);
	/* a hog: half the rate, twice the mean */
	steps_duty(&r, 4 * 30, PER_STEP / 2, 100, 600000, 100, 620000);
	assert_int_equal(r.rises, 1);
	assert_int_equal(r.checks, 1);
	assert_true(r.check_at >= r.rise_at + 20 * S && r.check_at <= r.rise_at + 22 * S);
	assert_int_equal(r.agains, 1);
	assert_int_equal(r.falls, 0);
	assert_true(r.e.raised);
	gone = r.now;
	steps_duty(&r, 4 * 20, PER_STEP, 5, 300000, 12, 390000);
	assert_int_equal(r.checks, 1);
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at >= gone + 10 * S && r.fall_at <= gone + 12 * S);
	/* it learnt nothing of the hog while raised or checking */
	assert_true(r.e.base[LW_ESC_WATCH].mean < 310000);
}

/* A rise on a steady load whose full tracing costs it bursts (a second at
 * 3x the mean every 2 s): judged by the cheap tier's mean, each keeps it
 * raised. Checked 20 s after the rise, the cheap tier alone sees the
 * baseline: falls within a window of the check, never raised again. */
static void test_check_lets_go(void **state)
{
	struct run r = {};

	baseline(&r);
	steps_duty(&r, 2, PER_STEP, 100, 600000, 100, 600000); /* a spike */
	assert_int_equal(r.rises, 1);
	for (int i = 0; i < 60; i++) {
		steps_duty(&r, 4, PER_STEP, 5, 300000, 5, 330000);
		steps_duty(&r, 4, PER_STEP, 5, 300000, 40, 900000);
	}
	assert_int_equal(r.checks, 1);
	assert_true(r.check_at >= r.rise_at + 20 * S && r.check_at <= r.rise_at + 22 * S);
	assert_int_equal(r.agains, 0);
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at > r.check_at &&
		    r.fall_at <= r.check_at + 3 * STEP + LW_ESC_WINDOW * STEP);
	assert_false(r.e.raised);
	assert_int_equal(r.rises, 1);
}

/* An incident of minutes: checked at 20 s, then 40 s and 80 s after each
 * window that saw it alone; the same rise throughout, max_ns counted from
 * its start: given back 300 s after it, not after the last check. */
static void test_check_doubles(void **state)
{
	struct run r = {};
	__u64 rose;

	baseline(&r);
	steps_duty(&r, 4 * 400, PER_STEP / 2, 100, 600000, 100, 620000);
	rose = r.rise_at;
	assert_int_equal(r.rises, 1);
	assert_int_equal(r.checks, 3); /* at 20 s, 61.25 s, 142.5 s */
	assert_int_equal(r.agains, 3);
	assert_true(r.check_at >= rose + 142 * S && r.check_at <= rose + 144 * S);
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at >= rose + 300 * S && r.fall_at <= rose + 301 * S);
	/* its level the cheap tier's normal from the next window without
	 * full tracing, not full tracing's: not raised again at it */
	steps_duty(&r, 4 * 30, PER_STEP / 2, 100, 600000, 100, 620000);
	assert_int_equal(r.rises, 1);
	assert_true(r.e.base[LW_ESC_WATCH].mean > 590000 && r.e.base[LW_ESC_WATCH].mean < 610000);
}

static void test_no_requests(void **state)
{
	struct run r = {};

	baseline(&r);
	steps(&r, 4 * 30, 0, 0); /* the target idle: no judgement, no change */
	assert_int_equal(r.rises, 0);
	assert_true(r.e.base[LW_ESC_WATCH].share > 0.009 && r.e.base[LW_ESC_WATCH].share < 0.011);
}

/* ---- recorded on the bench's redis twins (tests/fixtures/escalate) ---- */

#define LW_FIXTURES "tests/fixtures/escalate/"
#define REC_MAX	    1024

/* One sample of a recording: the watched twin's cumulative counts, and
 * whether full tracing was attached. */
struct rec {
	__u64 t_ns, req, lat, slow;
	int full;
};

static int rec_load(const char *name, struct rec *v, int max)
{
	char path[256], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), LW_FIXTURES "%s", name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long req, lat, slow, slow_ns, first;
		double t;
		int full;

		if (sscanf(line, "%lf %llu %llu %llu %llu %llu %d", &t, &req, &lat, &slow, &slow_ns,
			   &first, &full) != 7)
			continue; /* its comments and header */
		v[n++] = (struct rec){(__u64)(t * 1e9), req, lat, slow, full};
	}
	fclose(f);
	assert_true(n > 300);
	return n;
}

/* Replays samples [0, n) as steps from 100 s on, a change of what was
 * attached a mixed step; from hog_at to hog_end (sample indices) a hog
 * halving the rate, doubling every latency and making 30% slow. */
static void rec_replay(struct run *r, const struct lw_esc_conf *c, const struct rec *v, int n,
		       int hog_at, int hog_end)
{
	r->now = 100 * S + v[0].t_ns;
	for (int i = 1; i < n; i++) {
		struct lw_esc_counts k = {.req = v[i].req - v[i - 1].req,
					  .lat_ns = v[i].lat - v[i - 1].lat,
					  .slow = v[i].slow - v[i - 1].slow};

		k.tier = v[i].full != v[i - 1].full ? LW_ESC_MIXED
			 : v[i].full		    ? LW_ESC_FULL
						    : LW_ESC_WATCH;
		if (i >= hog_at && i < hog_end) {
			/* half the requests, each twice as slow: the
			 * same latency in all */
			k.req /= 2;
			k.slow = k.req * 3 / 10;
		}
		r->now += v[i].t_ns - v[i - 1].t_ns;
		k.first_ns = k.slow ? r->now - STEP / 2 : 0;
		run_step(r, c, &k);
	}
}

/* The share of requests timed: about 1000 a second whatever the rate,
 * all of a slow target's, kept while the rate wanders within 2x, capped. */
static void test_timed_shift(void **state)
{
	const struct lw_esc_conf *c = &lw_esc_defaults;

	(void)state;
	assert_int_equal(lw_esc_shift(c, 0, 0, 12), 0);
	assert_int_equal(lw_esc_shift(c, 300, 0, 12), 0);
	assert_int_equal(lw_esc_shift(c, 1900, 0, 12), 0); /* within 2x: kept */
	assert_int_equal(lw_esc_shift(c, 2500, 0, 12), 2); /* 625 a second */
	assert_int_equal(lw_esc_shift(c, 15000, 0, 12), 4);
	assert_int_equal(lw_esc_shift(c, 12000, 4, 12), 4); /* 750: kept */
	assert_int_equal(lw_esc_shift(c, 6000, 4, 12), 3);  /* 375: lowered */
	assert_int_equal(lw_esc_shift(c, 40, 4, 12), 0);    /* a trickle: all */
	assert_int_equal(lw_esc_shift(c, 1e9, 0, 12), 12);  /* capped */
	assert_int_equal(lw_esc_shift(c, 1e9, 12, 12), 12);
	assert_int_equal(lw_esc_shift(c, 1e9, 30, 12), 12); /* out of range in */
}

/* A steady load whose 250 ms steps swing from 0 to 7% slow and 0.3x to 3x
 * the mean (two servers sharing a CPU, a benchmark restarting): the rule
 * learnt over 10 s called full tracing in 15.5 s into it, and held it 26 s
 * on nothing; learnt over 30 s it never does, and the recording is one
 * that the 10 s rule fails on. */
static void test_recorded_learning(void **state)
{
	static struct rec v[REC_MAX];
	struct lw_esc_conf ten = lw_esc_defaults;
	int n = rec_load("redis-twins-learning.tsv", v, REC_MAX);
	struct run r = {};

	rec_replay(&r, &lw_esc_defaults, v, n, n, n);
	assert_int_equal(r.rises, 0);
	ten.learn_steps = 40;
	r = (struct run){};
	rec_replay(&r, &ten, v, n, n, n);
	assert_true(r.rises >= 1);
	assert_true(r.first_rise_at >= 114 * S && r.first_rise_at <= 117 * S);
}

/* A whole 90 s cycle of the same load, its duty stretches in it: no rise;
 * a hog from 45 s to 60 s in it rises in its first step and falls within
 * 12 s of its end, however the load wanders. */
static void test_recorded_cycle(void **state)
{
	static struct rec v[REC_MAX];
	int n = rec_load("redis-twins-cycle.tsv", v, REC_MAX), at = 0, end = 0;
	struct run r = {};

	rec_replay(&r, &lw_esc_defaults, v, n, n, n);
	assert_int_equal(r.rises, 0);
	assert_false(r.e.raised);
	while (at < n && v[at].t_ns < 45 * S)
		at++;
	end = at;
	while (end < n && v[end].t_ns < 60 * S)
		end++;
	r = (struct run){};
	rec_replay(&r, &lw_esc_defaults, v, n, at, end);
	assert_int_equal(r.rises, 1);
	assert_true(r.rise_at >= 100 * S + v[at].t_ns &&
		    r.rise_at <= 100 * S + v[at].t_ns + STEP / 2);
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at <= 100 * S + v[end].t_ns + 12 * S);
}

/* A rise on the same load that full tracing's own cost held 39 s (the
 * server at half its rate and 8x its mean while attached): the recording's
 * tiers are an older rule's, full tracing attached from 46.3 s to 85 s.
 * Today's rule rose in those windows by themselves (47.28 s), on full
 * tracing's own bursts; only the cheap tier alone rises now: no rise on
 * it. A hog's second just before it rises, and full tracing's bursts hold
 * it to its check 20 s later, which waits for the cheap tier alone and
 * falls at its first window, not 39 s later. */
static void test_recorded_held(void **state)
{
	static struct rec v[REC_MAX];
	struct lw_esc_conf old = lw_esc_defaults;
	int n = rec_load("redis-twins-held.tsv", v, REC_MAX), at = 0, end;
	struct run r = {};

	rec_replay(&r, &lw_esc_defaults, v, n, n, n);
	assert_int_equal(r.rises, 0);
	while (at < n && v[at].t_ns < 45 * S)
		at++;
	end = at + 4;
	assert_true(!v[end - 1].full && v[end + 1].full);
	old.check_ns = 0;
	r = (struct run){};
	rec_replay(&r, &old, v, n, at, end);
	assert_int_equal(r.rises, 1);
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at - r.rise_at >= 35 * S);
	r = (struct run){};
	rec_replay(&r, &lw_esc_defaults, v, n, at, end);
	assert_int_equal(r.rises, 1);
	assert_true(r.rise_at <= 100 * S + v[at].t_ns + STEP + STEP / 2);
	assert_int_equal(r.checks, 1); /* 20 s after its last window alone */
	assert_true(r.check_at >= r.rise_at + 20 * S && r.check_at <= r.rise_at + 22 * S);
	assert_int_equal(r.agains, 0);
	assert_int_equal(r.falls, 1);
	assert_true(r.fall_at <= 100 * S + 87 * S);
}

/* A steady nginx whose 1 s windows burst to 4-16% slow a few times a
 * minute on a 0.5-1% baseline, and whose mean moves 2x with them (serve
 * rose at six of them in its 240 s): a hog from 200 s to 210 s in it rises
 * in its first step all the same, and falls within 12 s of its end. */
static void test_recorded_bursts_hog(void **state)
{
	static struct rec v[REC_MAX];
	int n = rec_load("nginx-twins-steady.tsv", v, REC_MAX), at = 0, end;
	struct run r = {};

	while (at < n && v[at].t_ns < 200 * S)
		at++;
	end = at + 40;
	assert_true(end < n && !v[at].full && !v[at + 1].full);
	rec_replay(&r, &lw_esc_defaults, v, end + 4 * 12, at, end);
	assert_true(r.rises >= 1);
	assert_true(r.rise_at >= 100 * S + v[at].t_ns &&
		    r.rise_at <= 100 * S + v[at].t_ns + STEP + STEP / 2);
	assert_false(r.e.raised);
	assert_true(r.fall_at <= 100 * S + v[end].t_ns + 12 * S);
}

/* The same recording replayed twice, as a serve that has run a while
 * sees the load: its two rises in the first pass (a burst 41 s in, just
 * past learning, and a mean's at 101.75 s) are its spread being learnt;
 * none in the second. Before the cheap tier alone judged, the second pass
 * rose three times, all in full tracing's windows. */
static void test_recorded_bursts_warm(void **state)
{
	static struct rec v[2 * REC_MAX];
	int n = rec_load("nginx-twins-steady.tsv", v, REC_MAX), first;
	struct run r = {};

	for (int i = 0; i < n; i++) {
		v[n + i] = v[i];
		v[n + i].t_ns += v[n - 1].t_ns + STEP;
		v[n + i].req += v[n - 1].req;
		v[n + i].lat += v[n - 1].lat;
		v[n + i].slow += v[n - 1].slow;
	}
	rec_replay(&r, &lw_esc_defaults, v, n, n, n);
	first = r.rises;
	assert_int_equal(first, 2);
	r = (struct run){};
	rec_replay(&r, &lw_esc_defaults, v, 2 * n, 2 * n, 2 * n);
	assert_int_equal(r.rises, first);
	assert_false(r.e.raised);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rise_first_step),
		cmocka_unit_test(test_hold_then_fall),
		cmocka_unit_test(test_spike_short_hold),
		cmocka_unit_test(test_spikes_own),
		cmocka_unit_test(test_shift_given_back),
		cmocka_unit_test(test_noise_never),
		cmocka_unit_test(test_warmup_and_trickle),
		cmocka_unit_test(test_mean_shift),
		cmocka_unit_test(test_no_requests),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_full_tier_own_cost),
		cmocka_unit_test(test_rise_after_stretch),
		cmocka_unit_test(test_full_unlearnt_holds),
		cmocka_unit_test(test_check_lets_go),
		cmocka_unit_test(test_check_doubles),
		cmocka_unit_test(test_timed_shift),
		cmocka_unit_test(test_recorded_learning),
		cmocka_unit_test(test_recorded_cycle),
		cmocka_unit_test(test_recorded_held),
		cmocka_unit_test(test_recorded_bursts_hog),
		cmocka_unit_test(test_recorded_bursts_warm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
