// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_caps.c - what latwhy keeps of its capabilities once attached. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/capability.h>

#include <cmocka.h>

#include "source/caps.h"

#define C(c)	 (1ULL << (c))
#define TWO	 (C(CAP_BPF) | C(CAP_PERFMON))
#define ROOT	 ((1ULL << 41) - 1) /* every capability of 6.x */
#define OLD_ROOT ((1ULL << 38) - 1) /* before 5.8: no CAP_PERFMON, CAP_BPF */

/* The systemd unit's two, tracing another user's server: the smaps read at
 * the end needs CAP_PERFMON; nothing needs CAP_BPF once attached. */
static void test_two_foreign(void **state)
{
	struct lw_caps_use u = {.foreign = true};

	assert_int_equal(lw_caps_keep(TWO, &u), C(CAP_PERFMON));
	u.foreign = false; /* its own: nothing at all */
	assert_int_equal(lw_caps_keep(TWO, &u), 0);
	u.shared = true; /* CAP_SYS_NICE is not held: not kept */
	assert_int_equal(lw_caps_keep(TWO, &u), 0);
}

/* serve --comm: what a fresh load and attach need, of what is held. */
static void test_retrace(void **state)
{
	struct lw_caps_use u = {.retrace = true};

	assert_int_equal(lw_caps_keep(TWO, &u), TWO);
	u.uprobe = true; /* held: kept; not held: nothing to keep */
	assert_int_equal(lw_caps_keep(TWO | C(CAP_SYS_ADMIN), &u), TWO | C(CAP_SYS_ADMIN));
	assert_int_equal(lw_caps_keep(TWO, &u), TWO);
	u.uprobe = false;
	assert_int_equal(lw_caps_keep(TWO | C(CAP_SYS_ADMIN), &u), TWO);
	u.memlock = true;
	assert_int_equal(lw_caps_keep(TWO | C(CAP_SYS_RESOURCE), &u), TWO | C(CAP_SYS_RESOURCE));
}

/* Root drops to the node reader's two; what it traces does not matter. */
static void test_root(void **state)
{
	struct lw_caps_use u = {0};

	assert_int_equal(lw_caps_keep(ROOT, &u), C(CAP_PERFMON) | C(CAP_DAC_READ_SEARCH));
	u.shared = true;
	assert_int_equal(lw_caps_keep(ROOT, &u),
			 C(CAP_PERFMON) | C(CAP_DAC_READ_SEARCH) | C(CAP_SYS_NICE));
	u = (struct lw_caps_use){.retrace = true, .uprobe = true};
	assert_int_equal(lw_caps_keep(ROOT, &u),
			 TWO | C(CAP_DAC_READ_SEARCH) | C(CAP_SYS_NICE) | C(CAP_SYS_ADMIN));
}

/* Before 5.8 CAP_SYS_ADMIN loads BPF and CAP_SYS_PTRACE passes the read
 * check; neither CAP_BPF nor CAP_PERFMON exists. */
static void test_old_kernel(void **state)
{
	struct lw_caps_use u = {.foreign = true};

	assert_int_equal(lw_caps_keep(OLD_ROOT, &u), C(CAP_SYS_PTRACE) | C(CAP_DAC_READ_SEARCH));
	u.retrace = true;
	u.memlock = true;
	assert_int_equal(lw_caps_keep(OLD_ROOT, &u), C(CAP_SYS_PTRACE) | C(CAP_DAC_READ_SEARCH) |
							     C(CAP_SYS_NICE) | C(CAP_SYS_ADMIN) |
							     C(CAP_SYS_RESOURCE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_foreign),
		cmocka_unit_test(test_retrace),
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_old_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
