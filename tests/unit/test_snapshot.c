// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The node snapshot a capture carries: the node reader run on it must see
 * what it saw on the node, so the findings of both are the same, string for
 * string, on every fixture and on this machine.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "advice/advise.h"
#include "node/node.h"
#include "node/snapshot.h"
#include "node/sysfs.h"

static void assert_str_same(const char *a, const char *b);

static void assert_strv_equal(const struct lw_strv *a, const struct lw_strv *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		assert_str_same(a->v[i], b->v[i]);
}

/* On a live node, interrupt counts move between the reader's read and the
 * snapshot's ("115 since boot"): those numbers are masked there. */
static bool live;

static void mask_counts(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (const char *c = in; *c && o + 1 < len; c++) {
		const char *e = c;

		while (live && *e >= '0' && *e <= '9')
			e++;
		if (e > c && !strncmp(e, " since boot", 11)) {
			out[o++] = '#';
			c = e - 1;
			continue;
		}
		out[o++] = *c;
	}
	out[o] = '\0';
}

static void assert_str_same(const char *a, const char *b)
{
	static char x[8192], y[8192];

	if (!a || !b) {
		assert_ptr_equal(a, b);
		return;
	}
	mask_counts(a, x, sizeof(x));
	mask_counts(b, y, sizeof(y));
	assert_string_equal(x, y);
}

static void assert_findings_equal(const struct lw_findings *a, const struct lw_findings *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct lw_finding *x = &a->v[i], *y = &b->v[i];

		assert_int_equal(x->cause, y->cause);
		assert_int_equal(x->severity, y->severity);
		assert_str_same(x->seen, y->seen);
		assert_str_same(x->why, y->why);
		assert_str_same(x->evidence, y->evidence);
		assert_str_same(x->cost, y->cost);
		assert_strv_equal(&x->fix, &y->fix);
		assert_strv_equal(&x->persist, &y->persist);
		assert_strv_equal(&x->rollback, &y->rollback);
		assert_strv_equal(&x->verify, &y->verify);
	}
}

/* Read root (recording), write the snapshot out, read that: same findings. */
static void round_trip(const char *root, int pid)
{
	char dir[] = "/tmp/lw-snapshot-XXXXXX", cmd[64];
	struct lw_findings fa = {}, fb = {};
	struct lw_snapshot s;
	struct lw_node a, b;

	assert_non_null(mkdtemp(dir));
	lw_snapshot_begin(&s);
	assert_int_equal(lw_node_read(&a, root, pid), 0);
	assert_int_equal(lw_snapshot_end(&s, root), 0);
	assert_true(s.n > 0);
	assert_int_equal(lw_snapshot_write(&s, dir), 0);
	assert_int_equal(lw_node_read(&b, dir, pid), 0);
	assert_int_equal(lw_advise_node(&a, &fa), 0);
	assert_int_equal(lw_advise_node(&b, &fb), 0);
	assert_findings_equal(&fa, &fb);
	lw_findings_free(&fa);
	lw_findings_free(&fb);
	lw_node_free(&a);
	lw_node_free(&b);
	lw_snapshot_free(&s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_fixtures(void **state)
{
	static const struct {
		const char *name;
		int pid;
	} fx[] = {{"acpi-powersave", 4242},
		  {"acpi-powersave", 0},
		  {"intel-hwp", 0},
		  {"amd-pstate", 0},
		  {"vm-nocpufreq", 0},
		  {"numa-nic", 4242},
		  /* the cgroup path's limits and the threads' stat files */
		  {"quota-unit", 4242},
		  {"quota-docker", 3131},
		  {"quota-k8s", 5150},
		  {"quota-k8s-cgroupfs", 6262}};

	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		char root[256];

		snprintf(root, sizeof(root), "tests/fixtures/%s", fx[i].name);
		round_trip(root, fx[i].pid);
	}
}

/* The target's memory cgroup is in the snapshot: read from it, the group,
 * its limit and its failcnt are the node's, and its directory is the
 * node's path, not the snapshot's (the fix writes there). */
static void test_memcg(void **state)
{
	const char *root = "tests/fixtures/memory-v1";
	char dir[] = "/tmp/lw-snapshot-XXXXXX", cmd[64];
	struct lw_snapshot s;
	struct lw_node a, b;

	assert_non_null(mkdtemp(dir));
	lw_snapshot_begin(&s);
	assert_int_equal(lw_node_read(&a, root, 4242), 0);
	assert_int_equal(lw_snapshot_end(&s, root), 0);
	assert_int_equal(lw_snapshot_write(&s, dir), 0);
	assert_int_equal(lw_node_read(&b, dir, 4242), 0);
	assert_int_equal(a.memcg.v, 1);
	assert_int_equal(b.memcg.v, 1);
	assert_string_equal(b.memcg.path, "/app");
	assert_string_equal(b.memcg.dir, "/sys/fs/cgroup/memory/app");
	assert_true(b.memcg.max == a.memcg.max && b.memcg.max > 0);
	assert_true(b.memcg.ev_max == a.memcg.ev_max);
	lw_node_free(&a);
	lw_node_free(&b);
	lw_snapshot_free(&s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* This machine, with this process as the target. */
static void test_live(void **state)
{
	live = true;
	round_trip("/", getpid());
	live = false;
}

/* Nothing recorded outside a begin/end pair, and a file's bytes kept. */
static void test_entries(void **state)
{
	struct lw_snapshot s;
	struct lw_node n;

	lw_snapshot_begin(&s);
	assert_int_equal(lw_node_read(&n, "tests/fixtures/vm-nocpufreq", 0), 0);
	assert_int_equal(lw_snapshot_end(&s, "tests/fixtures/vm-nocpufreq"), 0);
	lw_node_free(&n);
	for (size_t i = 0; i < s.n; i++) {
		assert_true(s.v[i].path[0] == '/');
		if (!strcmp(s.v[i].path, "/sys/kernel/mm/transparent_hugepage/enabled")) {
			assert_int_equal(s.v[i].kind, LW_SNAP_FILE);
			assert_int_equal(s.v[i].len, strlen("always [madvise] never\n"));
			assert_memory_equal(s.v[i].data, "always [madvise] never\n", s.v[i].len);
		}
	}
	lw_snapshot_free(&s);
	assert_int_equal(lw_node_read(&n, "tests/fixtures/vm-nocpufreq", 0), 0);
	lw_node_free(&n);
	assert_int_equal(s.n, 0);
}

static void *read_elsewhere(void *arg)
{
	char buf[64];

	lw_sysfs_read(arg, buf, sizeof(buf), "/sys/kernel/mm/transparent_hugepage/enabled");
	return NULL;
}

/* A snapshot holds what its own thread read: another thread's read (a
 * scrape, while the hindsight writer snapshots the node) is not in it. */
static void test_other_thread(void **state)
{
	const char *root = "tests/fixtures/intel-hwp";
	struct lw_snapshot s;
	pthread_t th;
	char buf[64];

	lw_snapshot_begin(&s);
	assert_int_equal(pthread_create(&th, NULL, read_elsewhere, (void *)root), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(s.n, 0);
	lw_sysfs_read(root, buf, sizeof(buf), "/sys/kernel/mm/transparent_hugepage/enabled");
	assert_int_equal(s.n, 1);
	assert_string_equal(s.v[0].path, "/sys/kernel/mm/transparent_hugepage/enabled");
	assert_int_equal(lw_snapshot_end(&s, root), 0);
	lw_snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),     cmocka_unit_test(test_memcg),
		cmocka_unit_test(test_live),	     cmocka_unit_test(test_entries),
		cmocka_unit_test(test_other_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
