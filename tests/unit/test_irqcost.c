// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_irqcost.c - finding each IPI's gap in a spinning thread's timeline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "source/irqcost.h"

#define US 1000ULL

/* Each IPI gets the longest gap that ends after it was sent and starts
 * before it was done; other stops in the window (a host's own 1-3 us exits)
 * are not it, nor a longer one the thread spent switched out, and gaps
 * elsewhere are ignored. */
static void test_median(void **state)
{
	const struct lw_ipi ipis[] = {
		{100 * US, 112 * US}, {200 * US, 211 * US}, {300 * US, 313 * US},
		{400 * US, 409 * US}, {500 * US, 512 * US},
	};
	const struct lw_gap gaps[] = {
		{50 * US, 52 * US},	    /* before any IPI */
		{101 * US, 111 * US},	    /* 10 us */
		{199 * US, 201 * US},	    /* a 2 us stop, then the IPI's: */
		{202 * US, 214 * US},	    /* 12 us, ends after done */
		{301 * US, 312 * US},	    /* 11 us */
		{400500, 401 * US + 500},   /* 1 us */
		{402 * US, 411 * US},	    /* 9 us */
		{501 * US, 511 * US, true}, /* switched out: not the IPI's */
		{505 * US, 518 * US},	    /* 13 us */
		{600 * US, 700 * US},	    /* preempted, after the last IPI */
	};
	size_t matched;

	assert_int_equal(lw_irqcost_median(gaps, 10, ipis, 5, &matched), 11 * US);
	assert_int_equal(matched, 5);
}

/* Fewer than half of the IPIs seen (the spinning thread did not run): not
 * measured, 0. */
static void test_too_few(void **state)
{
	const struct lw_ipi ipis[] = {
		{100 * US, 112 * US}, {200 * US, 211 * US}, {300 * US, 313 * US},
		{400 * US, 409 * US}, {500 * US, 512 * US},
	};
	const struct lw_gap gaps[] = {{101 * US, 111 * US}, {202 * US, 214 * US}};
	size_t matched;

	assert_int_equal(lw_irqcost_median(gaps, 2, ipis, 5, &matched), 0);
	assert_int_equal(matched, 2);
	/* half is enough; of two, the upper one */
	assert_int_equal(lw_irqcost_median(gaps, 2, ipis, 4, &matched), 12 * US);
	assert_int_equal(lw_irqcost_median(NULL, 0, ipis, 5, &matched), 0);
	assert_int_equal(matched, 0);
	assert_int_equal(lw_irqcost_median(gaps, 2, NULL, 0, &matched), 0);
}

/* A CPU shared with a busy task: the thread's slices away hold no IPI, and
 * with most IPIs lost in them nothing is measured (a 100 us slice is not an
 * interrupt's cost). */
static void test_switched(void **state)
{
	const struct lw_ipi ipis[] = {
		{100 * US, 112 * US}, {200 * US, 211 * US}, {300 * US, 313 * US},
		{400 * US, 409 * US}, {500 * US, 512 * US},
	};
	const struct lw_gap gaps[] = {
		{101 * US, 111 * US},	    {150 * US, 250 * US, true}, {290 * US, 390 * US, true},
		{395 * US, 495 * US, true}, {502 * US, 514 * US},
	};
	size_t matched;

	assert_int_equal(lw_irqcost_median(gaps, 5, ipis, 5, &matched), 0);
	assert_int_equal(matched, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_too_few),
		cmocka_unit_test(test_switched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
