// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_run.c - how lw_trace_run() ends before it loads anything: a bad
 * --skip list is a usage error, a missing target a run-time failure. Nothing
 * here loads BPF or needs root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/trace_opts.h"
#include "cli/trace_run.h"
#include "source/tracer.h"

/* What fn wrote on stderr, into buf; its return value. */
static int capture_stderr(int (*fn)(const void *), const void *arg, char *buf, size_t len)
{
	FILE *tmp = tmpfile();
	int saved, ret;
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	ret = fn(arg);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return ret;
}

static int check_skip(const void *list)
{
	return lw_tracer_check_skip(list);
}

static int trace_run(const void *o)
{
	return lw_trace_run(o);
}

static void test_check_skip(void **state)
{
	char err[256];

	assert_int_equal(capture_stderr(check_skip, "", err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(
		capture_stderr(check_skip, "sched_waking,cpu_idle,netif_rx", err, sizeof(err)), 0);
	/* a required one may be named: refusing it is the probe's business */
	assert_int_equal(
		capture_stderr(check_skip, "sched_switch,,irq_handler_entry", err, sizeof(err)), 0);
	assert_int_equal(
		capture_stderr(check_skip, "softirq_entry,bogus,cpu_idle", err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "latwhy: --skip: 'bogus' is not a tracepoint latwhy uses\n");
	assert_int_equal(capture_stderr(check_skip, "sched", err, sizeof(err)), -EINVAL);
}

/* Checked first: no target, privileges or placement is looked at. */
static void test_run_usage(void **state)
{
	struct lw_opts o;
	char err[256];

	memset(&o, 0, sizeof(o));
	o.conf.pid = 999999;
	snprintf(o.conf.skip, sizeof(o.conf.skip), "irq_handler_entry,bogus");
	assert_int_equal(capture_stderr(trace_run, &o, err, sizeof(err)), LW_RUN_USAGE);
	assert_string_equal(err, "latwhy: --skip: 'bogus' is not a tracepoint latwhy uses\n");
}

static void test_run_no_target(void **state)
{
	struct lw_opts o;
	char err[256];

	memset(&o, 0, sizeof(o));
	o.conf.pid = 999999;
	snprintf(o.conf.skip, sizeof(o.conf.skip), "irq_handler_entry");
	assert_int_equal(capture_stderr(trace_run, &o, err, sizeof(err)), LW_RUN_FAILED);
	assert_string_equal(err, "latwhy: no process with pid 999999\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_skip),
		cmocka_unit_test(test_run_usage),
		cmocka_unit_test(test_run_no_target),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
