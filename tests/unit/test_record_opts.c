// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* latwhy record's options: its own, the trace's, and what it refuses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cli/parse.h"
#include "cli/record_opts.h"

#define ARGV(...) ((char *[]){"latwhy", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)) + 1)
#define PARSE(o, err, ...)                                                                         \
	lw_record_opts_parse(o, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), err, sizeof(err))

static void test_size(void **state)
{
	__u64 b;

	assert_int_equal(lw_parse_size("4096", &b), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(lw_parse_size("64M", &b), 0);
	assert_int_equal(b, 64ULL << 20);
	assert_int_equal(lw_parse_size("1G", &b), 0);
	assert_int_equal(b, 1ULL << 30);
	assert_int_equal(lw_parse_size("512kB", &b), 0);
	assert_int_equal(b, 512ULL << 10);
	assert_int_equal(lw_parse_size("0", &b), -EINVAL);
	assert_int_equal(lw_parse_size("-1", &b), -EINVAL);
	assert_int_equal(lw_parse_size("12T", &b), -EINVAL);
	assert_int_equal(lw_parse_size("", &b), -EINVAL);
}

static void test_defaults(void **state)
{
	struct lw_record_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-p", "42", "-o", "x.lwy"), 0);
	assert_int_equal(o.trace.conf.pid, 42);
	assert_string_equal(o.path, "x.lwy");
	assert_true(o.trace.conf.duration_ns == LW_RECORD_DEFAULT_NS);
	assert_true(o.max_size == LW_RECORD_DEFAULT_MAX);
	assert_false(o.force);
}

static void test_own_and_trace(void **state)
{
	struct lw_record_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "--output=y.lwy", "-p", "7", "--max-size", "8M", "-d", "5s",
			       "--force", "--slow", "2ms", "-q"),
			 0);
	assert_string_equal(o.path, "y.lwy");
	assert_true(o.max_size == 8ULL << 20);
	assert_true(o.trace.conf.duration_ns == 5000000000ULL);
	assert_true(o.trace.conf.slow_ns == 2000000ULL);
	assert_true(o.force && o.trace.quiet);
	assert_int_equal(PARSE(&o, err, "-oz.lwy", "-p", "7", "--max-size=1G"), 0);
	assert_string_equal(o.path, "z.lwy");
	assert_true(o.max_size == 1ULL << 30);
}

static void test_errors(void **state)
{
	struct lw_record_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-p", "7"), -EINVAL);
	assert_string_equal(err, "a capture file is needed: -o FILE");
	assert_int_equal(PARSE(&o, err, "-p", "7", "-o", "x", "-j"), -EINVAL);
	assert_string_equal(err, "record writes a capture, not JSON: read it with latwhy report "
				 "FILE --json");
	assert_int_equal(PARSE(&o, err, "-p", "7", "-o", "x", "--max-size", "lots"), -EINVAL);
	assert_string_equal(err, "invalid --max-size 'lots' (examples: 64M, 1G)");
	assert_int_equal(PARSE(&o, err, "-p", "7", "-o"), -EINVAL);
	assert_string_equal(err, "option '-o' needs a value");
	assert_int_equal(PARSE(&o, err, "-o", "x"), -EINVAL);
	assert_string_equal(err, "a target is needed: -p PID, --comm NAME, --cgroup PATH, --unit "
				 "NAME, --pods or --pod NS/NAME");
	assert_int_equal(PARSE(&o, err, "-p", "7", "-o", "x", "-d", "10x"), -EINVAL);
	assert_string_equal(err, "invalid duration '10x' (examples: 500ms, 10s, 2m)");
	assert_int_equal(PARSE(&o, err, "--help"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_own_and_trace),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
