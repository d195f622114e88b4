// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_cgroup.c - cgroup v2 as a target: the v2 mount found in mountinfo
 * (hybrid, pure v2, none), a unit's cgroup searched in a fixture tree, a
 * cgroup's processes, the path check. Run from the repository root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "node/cgroup.h"

#define FX "tests/fixtures"

static void test_mount_hybrid(void **state)
{
	char m[256];

	/* v1 controllers, a tmpfs at /sys/fs/cgroup, v2 at unified */
	assert_int_equal(lw_cgroup2_mount(FX "/cgroup-hybrid", m, sizeof(m)), 0);
	assert_string_equal(m, "/sys/fs/cgroup/unified");
}

static void test_mount_v2(void **state)
{
	char m[256];

	/* the hierarchy's root wins over a bind mount of a part of it listed
	 * first; \040 is a space */
	assert_int_equal(lw_cgroup2_mount(FX "/cgroup-v2", m, sizeof(m)), 0);
	assert_string_equal(m, "/sys/fs/cgroup v2");
	assert_int_equal(lw_cgroup2_mount(FX "/cgroup-v2", m, 8), -ENAMETOOLONG);
}

static void test_mount_none(void **state)
{
	char m[256];

	assert_int_equal(lw_cgroup2_mount(FX "/cgroup-none", m, sizeof(m)), -ENOENT);
	assert_int_equal(lw_cgroup2_mount(FX "/no-such-tree", m, sizeof(m)), -ENOENT);
	assert_int_equal(lw_cgroup2_mount_parse(FX "/cgroup-none/nothing", m, sizeof(m)), -ENOENT);
}

static void test_find_unit(void **state)
{
	const char *u = FX "/cgroup-hybrid/sys/fs/cgroup/unified";
	char rel[256];

	/* two lat.service directories: the shallower */
	assert_int_equal(lw_cgroup_find_unit(u, "lat.service", rel, sizeof(rel)), 0);
	assert_string_equal(rel, "/system.slice/lat.service");
	assert_int_equal(lw_cgroup_find_unit(u, "session-1.scope", rel, sizeof(rel)), 0);
	assert_string_equal(rel, "/user.slice/user-0.slice/session-1.scope");
	assert_int_equal(lw_cgroup_find_unit(u, "system.slice", rel, sizeof(rel)), 0);
	assert_string_equal(rel, "/system.slice");
	assert_int_equal(lw_cgroup_find_unit(u, "nginx.service", rel, sizeof(rel)), -ENOENT);
	/* a file is no cgroup */
	assert_int_equal(lw_cgroup_find_unit(u, "cgroup.procs", rel, sizeof(rel)), -ENOENT);
	assert_int_equal(lw_cgroup_find_unit(u, "lat.service", rel, 8), -ENAMETOOLONG);
	assert_int_equal(lw_cgroup_find_unit(FX "/nothing", "lat.service", rel, sizeof(rel)),
			 -ENOENT);
}

static void test_procs(void **state)
{
	const char *u = FX "/cgroup-hybrid/sys/fs/cgroup/unified";
	char path[512];
	int pids[4] = {};

	snprintf(path, sizeof(path), "%s/system.slice/lat.service", u);
	assert_int_equal(lw_cgroup_procs(path, pids, 4), 2);
	assert_int_equal(pids[0], 4242);
	assert_int_equal(pids[1], 4243);
	/* more than room: counted, not stored */
	pids[1] = 0;
	assert_int_equal(lw_cgroup_procs(path, pids, 1), 2);
	assert_int_equal(pids[1], 0);
	snprintf(path, sizeof(path), "%s/system.slice", u);
	assert_int_equal(lw_cgroup_procs(path, pids, 4), 0);
	snprintf(path, sizeof(path), "%s/gone", u);
	assert_int_equal(lw_cgroup_procs(path, pids, 4), -ENOENT);
}

static void test_path_ok(void **state)
{
	assert_true(lw_cgroup_path_ok("/"));
	assert_true(lw_cgroup_path_ok("/a"));
	assert_true(lw_cgroup_path_ok("/system.slice/nginx.service"));
	assert_true(lw_cgroup_path_ok("/a/..b/.c"));
	assert_false(lw_cgroup_path_ok(""));
	assert_false(lw_cgroup_path_ok("a"));
	assert_false(lw_cgroup_path_ok("/a/"));
	assert_false(lw_cgroup_path_ok("//a"));
	assert_false(lw_cgroup_path_ok("/a//b"));
	assert_false(lw_cgroup_path_ok("/a/../b"));
	assert_false(lw_cgroup_path_ok("/.."));
	assert_false(lw_cgroup_path_ok("/."));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount_hybrid), cmocka_unit_test(test_mount_v2),
		cmocka_unit_test(test_mount_none),   cmocka_unit_test(test_find_unit),
		cmocka_unit_test(test_procs),	     cmocka_unit_test(test_path_ok),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
