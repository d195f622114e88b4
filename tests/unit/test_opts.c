// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_opts.c - durations, the commands' option parsing and human-readable
 * durations. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/check_opts.h"
#include "cli/parse.h"
#include "cli/trace_opts.h"
#include "lib/fmt.h"

/* ---- lw_parse_duration -------------------------------------------------- */

static __u64 dur(const char *s)
{
	__u64 ns = 0xdeadbeef;

	if (lw_parse_duration(s, &ns))
		fail_msg("'%s' rejected", s);
	return ns;
}

static void rejects(const char *s)
{
	__u64 ns = 0xdeadbeef;

	if (lw_parse_duration(s, &ns) != -EINVAL)
		fail_msg("'%s' accepted", s ? s : "(null)");
	assert_int_equal(ns, 0xdeadbeef); /* untouched */
}

static void test_duration_ok(void **state)
{
	assert_int_equal(dur("10s"), 10000000000ULL);
	assert_int_equal(dur("250ms"), 250000000ULL);
	assert_int_equal(dur("1.5s"), 1500000000ULL);
	assert_int_equal(dur("800us"), 800000ULL);
	assert_int_equal(dur("5000ns"), 5000ULL);
	assert_int_equal(dur("2m"), 120000000000ULL);
	assert_int_equal(dur("1h"), 3600000000000ULL);
	assert_int_equal(dur("3"), 3000000000ULL); /* bare: seconds */
	assert_int_equal(dur("0.5ms"), 500000ULL);
	assert_int_equal(dur("0"), 0);
	assert_int_equal(dur("1ns"), 1);
}

static void test_duration_bad(void **state)
{
	rejects("10x");
	rejects("");
	rejects("-1s");
	rejects("+1s");
	rejects("s");
	rejects("1e30s");
	rejects("abc");
	rejects(NULL);
	rejects("10 s");
	rejects("10sec");
	rejects("10S");
	rejects("inf");
	rejects("nan");
	rejects("10ms ");
}

/* ---- lw_fmt_ns ---------------------------------------------------------- */

static void test_fmt_ns(void **state)
{
	char b[32];

	assert_string_equal(lw_fmt_ns(b, sizeof(b), 0), "0 ns");
	assert_string_equal(lw_fmt_ns(b, sizeof(b), 999), "999 ns");
	assert_string_equal(lw_fmt_ns(b, sizeof(b), 1000), "1.0 us");
	assert_string_equal(lw_fmt_ns(b, sizeof(b), 1500), "1.5 us");
	assert_string_equal(lw_fmt_ns(b, sizeof(b), 1000000), "1.00 ms");
	assert_string_equal(lw_fmt_ns(b, sizeof(b), 2500000), "2.50 ms");
	assert_string_equal(lw_fmt_ns(b, sizeof(b), 1000000000), "1.00 s");
	assert_string_equal(lw_fmt_ns(b, sizeof(b), 3000000000ULL), "3.00 s");
	assert_string_equal(lw_fmt_ns(b, sizeof(b), 125000000000ULL), "125.00 s");
	/* returns its buffer, truncates safely */
	assert_ptr_equal(lw_fmt_ns(b, sizeof(b), 1), b);
	{
		char small[4];

		lw_fmt_ns(small, sizeof(small), 2500000);
		assert_string_equal(small, "2.5");
	}
}

/* ---- lw_opts_parse ------------------------------------------------------ */

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

static char err[256];

static int parse(struct lw_opts *o, int argc, char **argv)
{
	err[0] = '\0';
	return lw_trace_opts_parse(o, argc, argv, err, sizeof(err));
}

static void test_parse_full(void **state)
{
	struct lw_opts o;
	char *argv[] = {"latwhy", "-p",	       "4242", "-d", "30s", "--slow",
			"2ms",	  "--ref-mhz", "2400", "-j", NULL};

	assert_int_equal(parse(&o, ARGC(argv), argv), 0);
	assert_string_equal(err, "");
	assert_int_equal(o.conf.pid, 4242);
	assert_int_equal(o.conf.duration_ns, 30000000000ULL);
	assert_int_equal(o.conf.slow_ns, 2000000ULL);
	assert_int_equal(o.conf.ref_khz, 2400000);
	assert_true(o.json);
	assert_false(o.quiet);
	assert_false(o.conf.verbose);
	assert_int_equal(o.conf.req_mode, LW_REQ_AUTO);
	assert_int_equal(o.conf.interval_ns, 1000000000ULL);
}

static void test_parse_defaults_and_long(void **state)
{
	struct lw_opts o;
	char *a1[] = {"latwhy", "-p", "7", NULL};
	char *a2[] = {"latwhy",	   "--pid",   "8",	   "--duration", "2m",
		      "--json",	   "--quiet", "--verbose", "--interval", "500ms",
		      "--request", "syscall", NULL};
	char *a3[] = {"latwhy", "--pid=9", "--slow=500us", "-qv", NULL};
	char *a4[] = {"latwhy", "-p", "9", "--request", "socket", NULL};

	assert_int_equal(parse(&o, ARGC(a1), a1), 0);
	assert_int_equal(o.conf.pid, 7);
	assert_int_equal(o.conf.duration_ns, 0);
	assert_int_equal(o.conf.slow_ns, 0);
	assert_int_equal(o.conf.ref_khz, 0);
	assert_false(o.json);
	assert_int_equal(o.conf.req_mode, LW_REQ_AUTO);
	assert_int_equal(o.conf.interval_ns, 1000000000ULL);

	assert_int_equal(parse(&o, ARGC(a2), a2), 0);
	assert_int_equal(o.conf.pid, 8);
	assert_int_equal(o.conf.duration_ns, 120000000000ULL);
	assert_true(o.json);
	assert_true(o.quiet);
	assert_true(o.conf.verbose);
	assert_int_equal(o.conf.interval_ns, 500000000ULL);
	assert_int_equal(o.conf.req_mode, LW_REQ_SYSCALL);

	assert_int_equal(parse(&o, ARGC(a3), a3), 0);
	assert_int_equal(o.conf.pid, 9);
	assert_int_equal(o.conf.slow_ns, 500000ULL);
	assert_true(o.quiet);
	assert_true(o.conf.verbose);
	assert_false(o.json);

	assert_int_equal(parse(&o, ARGC(a4), a4), 0);
	assert_int_equal(o.conf.req_mode, LW_REQ_SOCKET);
}

static void test_parse_uprobe(void **state)
{
	struct lw_opts o;
	char *a1[] = {"latwhy", "-p", "1", "--request", "uprobe:/usr/bin/foo:handle", NULL};
	char *a2[] = {"latwhy", "-p", "1", "--request", "uprobe:/x", NULL};
	char *a3[] = {"latwhy", "-p", "1", "--request", "uprobe:/x:", NULL};
	char *a4[] = {"latwhy", "-p", "1", "--request", "uprobe::handle", NULL};
	char *a5[] = {"latwhy", "-p", "1", "--request", "kprobe:foo", NULL};

	assert_int_equal(parse(&o, ARGC(a1), a1), 0);
	assert_int_equal(o.conf.req_mode, LW_REQ_UPROBE);
	assert_string_equal(o.conf.uprobe_bin, "/usr/bin/foo");
	assert_string_equal(o.conf.uprobe_sym, "handle");

	assert_int_equal(parse(&o, ARGC(a2), a2), -EINVAL);
	assert_string_equal(
		err,
		"invalid --request 'uprobe:/x': expected socket, syscall or uprobe:BINARY:SYMBOL");
	assert_int_equal(parse(&o, ARGC(a3), a3), -EINVAL);
	assert_string_equal(
		err,
		"invalid --request 'uprobe:/x:': expected socket, syscall or uprobe:BINARY:SYMBOL");
	assert_int_equal(parse(&o, ARGC(a4), a4), -EINVAL);
	assert_string_equal(err, "invalid --request 'uprobe::handle': expected socket, syscall or "
				 "uprobe:BINARY:SYMBOL");
	assert_int_equal(parse(&o, ARGC(a5), a5), -EINVAL);
	assert_string_equal(
		err,
		"invalid --request 'kprobe:foo': expected socket, syscall or uprobe:BINARY:SYMBOL");
}

/* --irq-cost: unset measures at start; off and a duration are given. */
static void test_parse_irq_cost(void **state)
{
	struct lw_opts o;
	char *a1[] = {"latwhy", "-p", "1", NULL};
	char *a2[] = {"latwhy", "-p", "1", "--irq-cost", "off", NULL};
	char *a3[] = {"latwhy", "-p", "1", "--irq-cost", "2.5us", NULL};
	char *a4[] = {"latwhy", "-p", "1", "--irq-cost", "2ms", NULL};
	char *a5[] = {"latwhy", "-p", "1", "--irq-cost", "fast", NULL};

	assert_int_equal(parse(&o, ARGC(a1), a1), 0);
	assert_false(o.conf.irq_cost_set);
	assert_int_equal(parse(&o, ARGC(a2), a2), 0);
	assert_true(o.conf.irq_cost_set);
	assert_int_equal(o.conf.irq_cost_ns, 0);
	assert_int_equal(parse(&o, ARGC(a3), a3), 0);
	assert_true(o.conf.irq_cost_set);
	assert_int_equal(o.conf.irq_cost_ns, 2500);
	assert_int_equal(parse(&o, ARGC(a4), a4), -EINVAL);
	assert_string_equal(err, "invalid --irq-cost '2ms' (off, or up to 1ms: 2us, 800ns)");
	assert_int_equal(parse(&o, ARGC(a5), a5), -EINVAL);
	assert_string_equal(err, "invalid --irq-cost 'fast' (off, or up to 1ms: 2us, 800ns)");
}

static void test_parse_bad_values(void **state)
{
	struct lw_opts o;
	char *a1[] = {"latwhy", "-p", "1", "-d", "10x", NULL};
	char *a2[] = {"latwhy", "-p", "1", "-d", "0s", NULL};
	char *a3[] = {"latwhy", "-p", "1", "--slow", "fast", NULL};
	char *a4[] = {"latwhy", "-p", "1", "--ref-mhz", "0", NULL};
	char *a5[] = {"latwhy", "-p", "1", "--ref-mhz", "2.4", NULL};
	char *a6[] = {"latwhy", "-p", "1", "-i", "50ms", NULL};

	assert_int_equal(parse(&o, ARGC(a1), a1), -EINVAL);
	assert_string_equal(err, "invalid duration '10x' (examples: 500ms, 10s, 2m)");
	assert_int_equal(parse(&o, ARGC(a2), a2), -EINVAL);
	assert_string_equal(err, "invalid duration '0s' (examples: 500ms, 10s, 2m)");
	assert_int_equal(parse(&o, ARGC(a3), a3), -EINVAL);
	assert_string_equal(err, "invalid --slow 'fast' (examples: 2ms, 500us)");
	assert_int_equal(parse(&o, ARGC(a4), a4), -EINVAL);
	assert_string_equal(err, "invalid --ref-mhz '0' (1..100000)");
	assert_int_equal(parse(&o, ARGC(a5), a5), -EINVAL);
	assert_string_equal(err, "invalid --ref-mhz '2.4' (1..100000)");
	assert_int_equal(parse(&o, ARGC(a6), a6), -EINVAL);
	assert_string_equal(err, "invalid interval '50ms' (at least 100ms)");
}

static void test_parse_pid(void **state)
{
	struct lw_opts o;
	char *a0[] = {"latwhy", NULL};
	char *a1[] = {"latwhy", "-j", "-d", "10s", NULL};
	char *a2[] = {"latwhy", "-p", "0", NULL};
	char *a3[] = {"latwhy", "-p", "abc", NULL};
	char *a4[] = {"latwhy", "-p", "-5", NULL};
	char *a5[] = {"latwhy", "-p", "12abc", NULL};
	char *a6[] = {"latwhy", "-p", "99999999999", NULL};

	assert_int_equal(parse(&o, ARGC(a0), a0), -EINVAL);
	assert_string_equal(
		err,
		"a target is needed: -p PID, --comm NAME, --cgroup PATH, --unit NAME, --pods or "
		"--pod NS/NAME");
	assert_int_equal(parse(&o, ARGC(a1), a1), -EINVAL);
	assert_string_equal(
		err,
		"a target is needed: -p PID, --comm NAME, --cgroup PATH, --unit NAME, --pods or "
		"--pod NS/NAME");
	assert_int_equal(parse(&o, ARGC(a2), a2), -EINVAL);
	assert_string_equal(err, "invalid pid '0'");
	assert_int_equal(parse(&o, ARGC(a3), a3), -EINVAL);
	assert_string_equal(err, "invalid pid 'abc'");
	assert_int_equal(parse(&o, ARGC(a4), a4), -EINVAL);
	assert_string_equal(err, "invalid pid '-5'");
	assert_int_equal(parse(&o, ARGC(a5), a5), -EINVAL);
	assert_string_equal(err, "invalid pid '12abc'");
	assert_int_equal(parse(&o, ARGC(a6), a6), -EINVAL);
	assert_string_equal(err, "invalid pid '99999999999'");
}

static void test_parse_unknown_missing(void **state)
{
	struct lw_opts o;
	char *a1[] = {"latwhy", "-p", "1", "-x", NULL};
	char *a2[] = {"latwhy", "-p", "1", "--bogus", NULL};
	char *a3[] = {"latwhy", "-p", NULL};
	char *a4[] = {"latwhy", "-p", "1", "--slow", NULL};
	char *a5[] = {"latwhy", "-p", "1", "-d", NULL};
	char *a6[] = {"latwhy", "-p", "1", "extra", NULL};
	char *a7[] = {"latwhy", "extra", "-p", "1", NULL};

	assert_int_equal(parse(&o, ARGC(a1), a1), -EINVAL);
	assert_string_equal(err, "unknown option '-x'");
	assert_int_equal(parse(&o, ARGC(a2), a2), -EINVAL);
	assert_string_equal(err, "unknown option '--bogus'");
	assert_int_equal(parse(&o, ARGC(a3), a3), -EINVAL);
	assert_string_equal(err, "option '-p' needs a value");
	assert_int_equal(parse(&o, ARGC(a4), a4), -EINVAL);
	assert_string_equal(err, "option '--slow' needs a value");
	assert_int_equal(parse(&o, ARGC(a5), a5), -EINVAL);
	assert_string_equal(err, "option '-d' needs a value");
	assert_int_equal(parse(&o, ARGC(a6), a6), -EINVAL);
	assert_string_equal(err, "unexpected argument 'extra'");
	/* getopt permutes: a leading positional is still caught */
	assert_int_equal(parse(&o, ARGC(a7), a7), -EINVAL);
	assert_string_equal(err, "unexpected argument 'extra'");
}

/* An unknown option inside a group of short options: the message must name
 * the unknown option, not whatever argv element precedes it. */
static void test_parse_unknown_in_group(void **state)
{
	struct lw_opts o;
	char *a1[] = {"latwhy", "-p", "1", "-xj", NULL};

	assert_int_equal(parse(&o, ARGC(a1), a1), -EINVAL);
	assert_string_equal(err, "unknown option '-x'");
}

static void test_parse_help(void **state)
{
	struct lw_opts o;
	char *a1[] = {"latwhy", "-h", NULL};
	char *a2[] = {"latwhy", "-p", "1", "--help", NULL};

	assert_int_equal(parse(&o, ARGC(a1), a1), 1);
	assert_int_equal(parse(&o, ARGC(a2), a2), 1);
}

static void test_parse_twice(void **state)
{
	struct lw_opts o;
	char *a1[] = {"latwhy", "-p", "11", "-j", "-d", "5s", NULL};
	char *a2[] = {"latwhy", "-q", "-p", "22", NULL};
	char *a3[] = {"latwhy", "-p", "11", "-x", NULL};

	for (int round = 0; round < 3; round++) {
		assert_int_equal(parse(&o, ARGC(a1), a1), 0);
		assert_int_equal(o.conf.pid, 11);
		assert_true(o.json);
		assert_false(o.quiet);
		assert_int_equal(o.conf.duration_ns, 5000000000ULL);
		/* nothing carries over from the previous parse */
		assert_int_equal(parse(&o, ARGC(a2), a2), 0);
		assert_int_equal(o.conf.pid, 22);
		assert_false(o.json);
		assert_true(o.quiet);
		assert_int_equal(o.conf.duration_ns, 0);
		/* an error does not poison the next parse */
		assert_int_equal(parse(&o, ARGC(a3), a3), -EINVAL);
		assert_string_equal(err, "unknown option '-x'");
	}
}

static void test_parse_targets(void **state)
{
	struct lw_opts o;
	char *a1[] = {"latwhy", "--cgroup", "/latwhy-test", NULL};
	char *a2[] = {"latwhy",	       "-p", "1",	 "-p",	 "2",
		      "--comm",	       "x",  "--cgroup", "/a/b", "--unit",
		      "nginx.service", NULL};
	char *a3[] = {"latwhy", "-p", "7", NULL};
	char *b1[] = {"latwhy", "--cgroup", "latwhy-test", NULL};
	char *b2[] = {"latwhy", "--cgroup", "/a/../b", NULL};
	char *b3[] = {"latwhy", "--cgroup", "/a/", NULL};
	char *b4[] = {"latwhy", "--unit", "nginx", NULL};
	char *b5[] = {"latwhy", "--unit", "a/b.service", NULL};
	char *b6[] = {"latwhy", "--comm", "", NULL};
	char *b7[] = {"latwhy", "--comm", "a-name-too-long-x", NULL};
	char *b8[] = {"latwhy", "-p", "3", "--pid=3", NULL};
	char *b9[] = {"latwhy", "--cgroup", NULL};

	assert_int_equal(parse(&o, ARGC(a1), a1), 0);
	assert_int_equal(o.conf.ntargets, 1);
	assert_int_equal(o.conf.targets[0].kind, LW_TARGET_CGROUP);
	assert_string_equal(o.conf.targets[0].name, "/latwhy-test");
	assert_int_equal(o.conf.pid, 0); /* no single process */
	assert_int_equal(parse(&o, ARGC(a2), a2), 0);
	assert_int_equal(o.conf.ntargets, 5);
	assert_int_equal(o.conf.targets[0].kind, LW_TARGET_PID);
	assert_int_equal(o.conf.targets[1].pid, 2);
	assert_int_equal(o.conf.targets[2].kind, LW_TARGET_COMM);
	assert_string_equal(o.conf.targets[2].name, "x");
	assert_string_equal(o.conf.targets[3].name, "/a/b");
	assert_int_equal(o.conf.targets[4].kind, LW_TARGET_UNIT);
	assert_string_equal(o.conf.targets[4].name, "nginx.service");
	assert_int_equal(o.conf.pid, 0);
	assert_int_equal(parse(&o, ARGC(a3), a3), 0);
	assert_int_equal(o.conf.pid, 7);
	/* the targets as a capture records them */
	{
		char buf[256];

		assert_int_equal(parse(&o, ARGC(a2), a2), 0);
		lw_trace_opts_targets(&o, buf, sizeof(buf));
		assert_string_equal(buf, "pid 1, pid 2, comm x, cgroup /a/b, unit nginx.service");
		lw_trace_opts_targets(&o, buf, 12);
		assert_string_equal(buf, "pid 1, pid ");
	}

	assert_int_equal(parse(&o, ARGC(b1), b1), -EINVAL);
	assert_string_equal(err, "invalid --cgroup 'latwhy-test': a path below the cgroup v2 "
				 "root, such as /system.slice/nginx.service");
	assert_int_equal(parse(&o, ARGC(b2), b2), -EINVAL);
	assert_string_equal(err, "invalid --cgroup '/a/../b': a path below the cgroup v2 root, "
				 "such as /system.slice/nginx.service");
	assert_int_equal(parse(&o, ARGC(b3), b3), -EINVAL);
	assert_int_equal(parse(&o, ARGC(b4), b4), -EINVAL);
	assert_string_equal(err, "invalid --unit 'nginx': a unit name such as nginx.service");
	assert_int_equal(parse(&o, ARGC(b5), b5), -EINVAL);
	assert_string_equal(err, "invalid --unit 'a/b.service': a unit name such as nginx.service");
	assert_int_equal(parse(&o, ARGC(b6), b6), -EINVAL);
	assert_string_equal(err, "--comm needs a process name of 1 to 15 characters");
	assert_int_equal(parse(&o, ARGC(b7), b7), -EINVAL);
	assert_string_equal(err, "--comm needs a process name of 1 to 15 characters");
	assert_int_equal(parse(&o, ARGC(b8), b8), -EINVAL);
	assert_string_equal(err, "target '3' given twice");
	assert_int_equal(parse(&o, ARGC(b9), b9), -EINVAL);
	assert_string_equal(err, "option '--cgroup' needs a value");
}

static void test_parse_pods(void **state)
{
	struct lw_opts o;
	char buf[256];
	char *a1[] = {"latwhy", "--pods", NULL};
	char *a2[] = {
		"latwhy", "--pod", "shop/checkout-7d9f4", "--pod", "kube-system/coredns.x2", "-p",
		"4",	  NULL};
	char *b1[] = {"latwhy", "--pod", "checkout", NULL};
	char *b2[] = {"latwhy", "--pod", "Shop/x", NULL};
	char *b3[] = {"latwhy", "--pod", "a/b/c", NULL};
	char *b4[] = {"latwhy", "--pod", "a.b/c", NULL};
	char *b5[] = {"latwhy", "--pods", "--pods", NULL};

	assert_int_equal(parse(&o, ARGC(a1), a1), 0);
	assert_int_equal(o.conf.ntargets, 1);
	assert_int_equal(o.conf.targets[0].kind, LW_TARGET_PODS);
	assert_int_equal(o.conf.pid, 0);
	assert_int_equal(parse(&o, ARGC(a2), a2), 0);
	assert_int_equal(o.conf.ntargets, 3);
	assert_int_equal(o.conf.targets[0].kind, LW_TARGET_POD);
	assert_string_equal(o.conf.targets[0].name, "shop/checkout-7d9f4");
	assert_string_equal(o.conf.targets[1].name, "kube-system/coredns.x2");
	assert_int_equal(o.conf.pid, 0); /* a pod is no single process */
	lw_trace_opts_targets(&o, buf, sizeof(buf));
	assert_string_equal(buf, "pod shop/checkout-7d9f4, pod kube-system/coredns.x2, pid 4");
	assert_int_equal(parse(&o, ARGC(a1), a1), 0);
	lw_trace_opts_targets(&o, buf, sizeof(buf));
	assert_string_equal(buf, "pods");
	assert_int_equal(parse(&o, ARGC(b1), b1), -EINVAL);
	assert_string_equal(err, "invalid --pod 'checkout': NAMESPACE/NAME, such as "
				 "shop/checkout-7d9f4");
	assert_int_equal(parse(&o, ARGC(b2), b2), -EINVAL);
	assert_int_equal(parse(&o, ARGC(b3), b3), -EINVAL);
	assert_int_equal(parse(&o, ARGC(b4), b4), -EINVAL); /* no '.' in a namespace */
	assert_int_equal(parse(&o, ARGC(b5), b5), -EINVAL);
	assert_string_equal(err, "target '--pods' given twice");
}

static void test_too_many_targets(void **state)
{
	struct lw_opts o;
	char *a[2 * (LW_MAX_TARGET_OPTS + 1) + 2] = {"latwhy"};
	char pids[LW_MAX_TARGET_OPTS + 1][16];
	int n = 1;

	for (int i = 0; i <= LW_MAX_TARGET_OPTS; i++) {
		snprintf(pids[i], sizeof(pids[i]), "%d", i + 1);
		a[n++] = "-p";
		a[n++] = pids[i];
	}
	a[n] = NULL;
	assert_int_equal(parse(&o, n, a), -EINVAL);
	assert_string_equal(err, "too many targets (at most 16)");
	assert_int_equal(parse(&o, n - 2, a), 0);
	assert_int_equal(o.conf.ntargets, LW_MAX_TARGET_OPTS);
}

static void test_usage(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	lw_trace_usage(f);
	fclose(f);
	assert_non_null(strstr(buf, "Usage: latwhy [trace] TARGET..."));
	assert_non_null(strstr(buf, "--cgroup PATH"));
	assert_non_null(strstr(buf, "--request SPEC"));
	free(buf);
}

/* ---- lw_check_opts_parse ------------------------------------------------ */

static int check_parse(struct lw_check_opts *o, int argc, char **argv)
{
	err[0] = '\0';
	return lw_check_opts_parse(o, argc, argv, err, sizeof(err));
}

static void test_check_parse(void **state)
{
	struct lw_check_opts o;
	char *a1[] = {"check", NULL};
	char *a2[] = {"check", "-p", "42", "-j", "-r", "/tmp/x", "-s", "0", "-f", "fix.sh", NULL};
	char *a3[] = {"check", "--pid",	       "7", "--json", "--root=/r", "--sample",
		      "60000", "--fix-script", "f", NULL};

	assert_int_equal(check_parse(&o, ARGC(a1), a1), 0);
	assert_int_equal(o.pid, 0);
	assert_false(o.json);
	assert_string_equal(o.root, "/");
	assert_int_equal(o.sample_ms, LW_CHECK_SAMPLE_MS);
	assert_null(o.fix_script);

	assert_int_equal(check_parse(&o, ARGC(a2), a2), 0);
	assert_int_equal(o.pid, 42);
	assert_true(o.json);
	assert_string_equal(o.root, "/tmp/x");
	assert_int_equal(o.sample_ms, 0);
	assert_string_equal(o.fix_script, "fix.sh");

	/* nothing carries over from the previous parse */
	assert_int_equal(check_parse(&o, ARGC(a1), a1), 0);
	assert_int_equal(o.pid, 0);
	assert_false(o.json);
	assert_null(o.fix_script);

	assert_int_equal(check_parse(&o, ARGC(a3), a3), 0);
	assert_int_equal(o.pid, 7);
	assert_true(o.json);
	assert_string_equal(o.root, "/r");
	assert_int_equal(o.sample_ms, 60000);
	assert_string_equal(o.fix_script, "f");
}

static void test_check_parse_bad(void **state)
{
	struct lw_check_opts o;
	char *a1[] = {"check", "-p", "0", NULL};
	char *a2[] = {"check", "-p", "abc", NULL};
	char *a3[] = {"check", "--sample", "99999", NULL};
	char *a4[] = {"check", "-x", NULL};
	char *a5[] = {"check", "--bogus", NULL};
	char *a6[] = {"check", "-p", NULL};
	char *a7[] = {"check", "--pid", NULL};
	char *a8[] = {"check", "extra", "-p", "1", NULL};
	char *a9[] = {"check", "-jx", NULL};
	char *h1[] = {"check", "-h", NULL};
	char *h2[] = {"check", "-p", "1", "--help", NULL};

	assert_int_equal(check_parse(&o, ARGC(a1), a1), -EINVAL);
	assert_string_equal(err, "invalid pid '0'");
	assert_int_equal(check_parse(&o, ARGC(a2), a2), -EINVAL);
	assert_string_equal(err, "invalid pid 'abc'");
	assert_int_equal(check_parse(&o, ARGC(a3), a3), -EINVAL);
	assert_string_equal(err, "invalid sample length '99999' (0-60000 ms)");
	assert_int_equal(check_parse(&o, ARGC(a4), a4), -EINVAL);
	assert_string_equal(err, "unknown option '-x'");
	assert_int_equal(check_parse(&o, ARGC(a5), a5), -EINVAL);
	assert_string_equal(err, "unknown option '--bogus'");
	assert_int_equal(check_parse(&o, ARGC(a6), a6), -EINVAL);
	assert_string_equal(err, "option '-p' needs a value");
	assert_int_equal(check_parse(&o, ARGC(a7), a7), -EINVAL);
	assert_string_equal(err, "option '--pid' needs a value");
	/* options stop at the first other word */
	assert_int_equal(check_parse(&o, ARGC(a8), a8), -EINVAL);
	assert_string_equal(err, "unexpected argument 'extra'");
	assert_int_equal(check_parse(&o, ARGC(a9), a9), -EINVAL);
	assert_string_equal(err, "unknown option '-x'");
	assert_int_equal(check_parse(&o, ARGC(h1), h1), 1);
	assert_int_equal(check_parse(&o, ARGC(h2), h2), 1);
}

static void test_check_usage(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	lw_check_opts_usage(f);
	fclose(f);
	assert_non_null(strstr(buf, "Usage: latwhy check [-p PID] [--json] [--root DIR]"));
	assert_non_null(strstr(buf, "(default 1000, 0 = none)"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_ok),
		cmocka_unit_test(test_duration_bad),
		cmocka_unit_test(test_fmt_ns),
		cmocka_unit_test(test_parse_full),
		cmocka_unit_test(test_parse_irq_cost),
		cmocka_unit_test(test_parse_defaults_and_long),
		cmocka_unit_test(test_parse_uprobe),
		cmocka_unit_test(test_parse_bad_values),
		cmocka_unit_test(test_parse_pid),
		cmocka_unit_test(test_parse_unknown_missing),
		cmocka_unit_test(test_parse_unknown_in_group),
		cmocka_unit_test(test_parse_help),
		cmocka_unit_test(test_parse_twice),
		cmocka_unit_test(test_parse_targets),
		cmocka_unit_test(test_parse_pods),
		cmocka_unit_test(test_too_many_targets),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_check_parse),
		cmocka_unit_test(test_check_parse_bad),
		cmocka_unit_test(test_check_usage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
