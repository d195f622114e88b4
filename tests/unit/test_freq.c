// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_freq.c - frequency source selection and sampling on fixture trees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "source/freq.h"

static char root[64];

static void put(const char *rel, const char *val)
{
	char path[256], cmd[320];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", val);
	fclose(f);
}

static int setup(void **state)
{
	strcpy(root, "/tmp/lw-freq-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void cpu_files(int cpu, const char *drv, const char *cur, const char *max)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cpufreq/scaling_driver", cpu);
	put(rel, drv);
	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
	put(rel, cur);
	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", cpu);
	put(rel, max);
}

/* A VM: no cpufreq directory at all. */
static void test_none(void **state)
{
	struct lw_freq f;

	assert_int_equal(lw_freq_init(&f, root, 2, 0), 0);
	assert_int_equal(f.source, LW_FREQ_NONE);
	assert_int_equal(f.cur_khz[0], 0);
	assert_int_equal(f.ref_khz[0], 0); /* unknown, never invented */
	lw_freq_close(&f);
}

/* acpi-cpufreq emits cpu_frequency: the tracepoint, seeded from sysfs. */
static void test_tracepoint(void **state)
{
	struct lw_freq f;

	cpu_files(0, "acpi-cpufreq", "800000", "3700000");
	cpu_files(1, "acpi-cpufreq", "2100000", "3700000");
	assert_int_equal(lw_freq_init(&f, root, 2, 0), 0);
	assert_int_equal(f.source, LW_FREQ_TRACEPOINT);
	assert_int_equal(f.cur_khz[0], 800000);
	assert_int_equal(f.cur_khz[1], 2100000);
	assert_int_equal(f.ref_khz[1], 3700000);
	lw_freq_close(&f);
	/* --ref-mhz replaces cpuinfo_max_freq */
	assert_int_equal(lw_freq_init(&f, root, 2, 2000000), 0);
	assert_int_equal(f.ref_khz[0], 2000000);
	lw_freq_close(&f);
}

static int calls, last_cpu;
static __u32 last_khz;

static void inject(void *ctx, int cpu, __u32 khz)
{
	calls++;
	last_cpu = cpu;
	last_khz = khz;
}

/* intel_pstate active + HWP and no msr PMU: poll scaling_cur_freq, inject
 * only changes. */
static void test_hwp_poll(void **state)
{
	struct lw_freq f;

	cpu_files(0, "intel_pstate", "1200000", "4500000");
	cpu_files(1, "intel_pstate", "1200000", "4500000");
	put("sys/devices/system/cpu/intel_pstate/status", "active");
	put("sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference", "balance_power");
	assert_int_equal(lw_freq_init(&f, root, 2, 0), 0);
	assert_int_equal(f.source, LW_FREQ_SYSFS_POLL);
	calls = 0;
	lw_freq_sample(&f, inject, NULL);
	assert_int_equal(calls, 0); /* nothing changed since the seed */
	put("sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "3900000");
	lw_freq_sample(&f, inject, NULL);
	assert_int_equal(calls, 1);
	assert_int_equal(last_cpu, 1);
	assert_int_equal(last_khz, 3900000);
	lw_freq_close(&f);
}

static void test_effective(void **state)
{
	/* 2 GHz TSC over 100 ms, APERF/MPERF = 1.5: 3 GHz effective */
	assert_int_equal(lw_freq_effective_khz(200000000ULL, 100000000ULL, 150, 100), 3000000);
	/* half the nominal clock */
	assert_int_equal(lw_freq_effective_khz(200000000ULL, 100000000ULL, 50, 100), 1000000);
	/* no elapsed time or no MPERF progress: not computable */
	assert_int_equal(lw_freq_effective_khz(200000000ULL, 0, 50, 100), 0);
	assert_int_equal(lw_freq_effective_khz(200000000ULL, 100000000ULL, 50, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tracepoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hwp_poll, setup, teardown),
		cmocka_unit_test(test_effective),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
