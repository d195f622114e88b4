// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_memnode.c - the memory evidence's readers: the fault cost's median
 * (source/faultcost.c), /proc/zoneinfo's watermarks and kswapd's CPU time
 * (node/memory.c), on trees made here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "node/memory.h"
#include "source/faultcost.h"

/* The gap less the span less the clock reads', median of the pairs left:
 * a pair whose gap is no longer than its span plus the base is dropped, as
 * is one without a span; too few left is 0. */
static void test_median(void **state)
{
	const __u64 gap[] = {2000, 2100, 1900, 9000, 500, 2050, 0};
	const __u64 span[] = {1200, 1300, 1150, 1250, 1000, 0, 1200};

	/* kept: 750, 750, 700, 7700 (the one an interrupt hit) */
	assert_int_equal(lw_faultcost_median(gap, span, 7, 50), 750);
	/* a base as large as the gaps leaves fewer than half */
	assert_int_equal(lw_faultcost_median(gap, span, 7, 1000), 0);
	assert_int_equal(lw_faultcost_median(gap, span, 0, 0), 0);
}

static void put(const char *root, const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_zones_kswapd(void **state)
{
	char root[] = "/tmp/lw-memnode-XXXXXX", p[512], cmd[64];
	struct lw_zones z;
	unsigned long long ns;
	int n;

	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/proc", root);
	assert_int_equal(mkdir(p, 0755), 0);
	put(root, "/proc/zoneinfo",
	    "Node 0, zone      DMA\n  per-node stats\n      nr_free_pages 10\n"
	    "  pages free     3840\n        boost    0\n        min      33\n"
	    "        low      41\n        high     49\n        spanned  4095\n"
	    "Node 0, zone    DMA32\n  pages free     100000\n        min      4000\n"
	    "        low      5000\n        high     6000\n");
	assert_int_equal(lw_zoneinfo_read(root, &z), 0);
	assert_int_equal(z.zones, 2);
	assert_int_equal(z.free, 103840);
	assert_int_equal(z.min, 4033);
	assert_int_equal(z.low, 5041);
	assert_int_equal(z.high, 6049);
	/* two kswapds and a task whose name only looks like one in its args */
	for (int pid = 80; pid <= 82; pid++) {
		snprintf(p, sizeof(p), "%s/proc/%d", root, pid);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	put(root, "/proc/80/stat", "80 (kswapd0) S 2 0 0 0 -1 2129984 0 0 0 0 7 3 0 0 20 0 1 0\n");
	put(root, "/proc/81/stat", "81 (kswapd1) S 2 0 0 0 -1 2129984 0 0 0 0 1 1 0 0 20 0 1 0\n");
	put(root, "/proc/82/stat", "82 (sh) S 1 0 0 0 -1 0 0 0 0 0 500 500 0 0 20 0 1 0\n");
	assert_int_equal(lw_kswapd_ns(root, &ns, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ns, 12ULL * (1000000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK)));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(lw_zoneinfo_read(root, &z), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_zones_kswapd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
