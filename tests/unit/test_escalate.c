// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_escalate.c - serve's escalation rule (engine/escalate.h) on recorded
 * counter series: a target's requests and slow requests every 250 ms step,
 * its baseline learnt, a rise caught in its first step, held while it lasts
 * and 10 s after, a shift that never ends given back after 5 minutes, and
 * noise, warm-up and a trickle of traffic never raising it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
	int rises, falls;
	__u64 rise_at, fall_at;
};

/* n steps of req requests of mean latency mean_ns with slow of them slow,
 * the first slow one 10 ms into each step. */
static void steps_mean(struct run *r, int n, __u64 req, __u64 slow, __u64 mean_ns)
{
	for (int i = 0; i < n; i++) {
		struct lw_esc_counts c0 = {.req = req, .lat_ns = req * mean_ns, .slow = slow};
		enum lw_esc_change c;

		c0.first_ns = slow ? r->now + 10000000ULL : 0;
		r->now += STEP;
		c = lw_esc_step(&lw_esc_defaults, &r->e, r->now, &c0, &r->since);
		if (c == LW_ESC_RISE) {
			r->rises++;
			r->rise_at = r->now;
		} else if (c == LW_ESC_FALL) {
			r->falls++;
			r->fall_at = r->now;
		}
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
	assert_true(r->e.base > 0.009 && r->e.base < 0.011);
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
	/* since: the window's first slow request, 10 ms into a step of the
	 * baseline three steps before (1% slow is slow too) */
	assert_true(r.since >= start - 3 * STEP && r.since <= start + STEP);
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
	assert_true(r.e.base > 0.009 && r.e.base < 0.011);
	/* and a second incident rises again */
	steps(&r, 1, PER_STEP, 100);
	assert_int_equal(r.rises, 2);
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
	assert_true(r.e.base > 0.09 && r.e.base < 0.11);
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
	assert_true(r.e.base_mean > 299000 && r.e.base_mean < 301000);
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
	/* and a fast service's shift under the 50 us floor neither */
	r = (struct run){.now = 100 * S};
	steps_mean(&r, 4 * 60, PER_STEP, 5, 10000);
	steps_mean(&r, 8, PER_STEP, 5, 40000); /* 4x, but +30 us */
	assert_int_equal(r.rises, 0);
}

static void test_no_requests(void **state)
{
	struct run r = {};

	baseline(&r);
	steps(&r, 4 * 30, 0, 0); /* the target idle: no judgement, no change */
	assert_int_equal(r.rises, 0);
	assert_true(r.e.base > 0.009 && r.e.base < 0.011);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rise_first_step),	   cmocka_unit_test(test_hold_then_fall),
		cmocka_unit_test(test_shift_given_back),   cmocka_unit_test(test_noise_never),
		cmocka_unit_test(test_warmup_and_trickle), cmocka_unit_test(test_mean_shift),
		cmocka_unit_test(test_no_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
