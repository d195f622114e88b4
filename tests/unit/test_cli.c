// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_cli.c - the command table: which command runs, latwhy --help, a
 * command's --help, and the exact usage errors. Nothing here reaches BPF:
 * every trace command line is one its parser refuses.
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

#include "capture/capture.h"
#include "cli/check_opts.h"
#include "cli/trace_opts.h"

/* main.c is not in the library: include it for its table, main renamed. */
#define main latwhy_main
#include "cli/main.c"
#undef main

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

/* ---- helpers ------------------------------------------------------------ */

static char *read_all(FILE *f)
{
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	rewind(f);
	do {
		cap += 4096;
		buf = realloc(buf, cap + 1);
		assert_non_null(buf);
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	buf[n] = '\0';
	return buf;
}

struct run {
	int rc;
	char *out;
	char *err;
};

/* latwhy argv..., with stdout and stderr captured. */
static struct run latwhy(int argc, char **argv)
{
	FILE *o = tmpfile(), *e = tmpfile();
	struct run r;
	int so, se;

	assert_non_null(o);
	assert_non_null(e);
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	assert_true(so >= 0 && se >= 0);
	assert_true(dup2(fileno(o), 1) >= 0 && dup2(fileno(e), 2) >= 0);
	r.rc = latwhy_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	r.out = read_all(o);
	r.err = read_all(e);
	fclose(o);
	fclose(e);
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static char *usage_of(void (*usage)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	usage(f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* A usage error: exit 2, nothing on stdout, exactly msg on stderr. */
static void assert_usage_error(int argc, char **argv, const char *msg)
{
	struct run r = latwhy(argc, argv);

	assert_int_equal(r.rc, LW_EXIT_USAGE);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, msg);
	run_free(&r);
}

/* ---- the table ---------------------------------------------------------- */

static void test_unknown_command(void **state)
{
	char *a1[] = {"latwhy", "bogus", NULL};
	char *a2[] = {"latwhy", "bogus", "-p", "1", NULL};
	char *a3[] = {"latwhy", "extra", "-p", "1", NULL};

	assert_usage_error(ARGC(a1), a1, "latwhy: unknown command 'bogus' (see latwhy --help)\n");
	assert_usage_error(ARGC(a2), a2, "latwhy: unknown command 'bogus' (see latwhy --help)\n");
	assert_usage_error(ARGC(a3), a3, "latwhy: unknown command 'extra' (see latwhy --help)\n");
}

static void test_help_lists_commands(void **state)
{
	char *a1[] = {"latwhy", "--help", NULL};
	char *a2[] = {"latwhy", "-h", NULL};
	struct run r1 = latwhy(ARGC(a1), a1), r2 = latwhy(ARGC(a2), a2);

	assert_int_equal(r1.rc, LW_EXIT_OK);
	assert_string_equal(r1.err, "");
	assert_non_null(strstr(r1.out, "Usage: latwhy COMMAND [OPTIONS]\n"));
	assert_non_null(strstr(r1.out, "the same as: latwhy trace [OPTIONS]\n"));
	assert_non_null(strstr(r1.out, "\n  trace    trace a live process"));
	assert_non_null(strstr(r1.out, "\n  check    judge the node's latency switches"));
	assert_non_null(strstr(r1.out, "\n  record   capture a live process's records"));
	assert_non_null(strstr(r1.out, "\n  report   read a capture anywhere"));
	assert_non_null(strstr(r1.out, "\n  serve    trace until stopped, serving the metrics"));
	assert_non_null(strstr(r1.out, "\n  diff     two captures side by side"));
	assert_int_equal(r2.rc, LW_EXIT_OK);
	assert_string_equal(r2.out, r1.out);
	run_free(&r1);
	run_free(&r2);
}

static void test_command_help(void **state)
{
	char *a1[] = {"latwhy", "check", "--help", NULL};
	char *a2[] = {"latwhy", "check", "-h", NULL};
	char *a3[] = {"latwhy", "trace", "--help", NULL};
	char *a4[] = {"latwhy", "-p", "1", "--help", NULL};
	char *check = usage_of(lw_check_opts_usage), *trace = usage_of(lw_trace_usage);
	struct run r;

	assert_non_null(strstr(check, "Usage: latwhy check [-p PID] [--json] [--root DIR]"));
	r = latwhy(ARGC(a1), a1);
	assert_int_equal(r.rc, LW_EXIT_OK);
	assert_string_equal(r.out, check);
	assert_string_equal(r.err, "");
	run_free(&r);
	r = latwhy(ARGC(a2), a2);
	assert_int_equal(r.rc, LW_EXIT_OK);
	assert_string_equal(r.out, check);
	run_free(&r);
	r = latwhy(ARGC(a3), a3);
	assert_int_equal(r.rc, LW_EXIT_OK);
	assert_string_equal(r.out, trace);
	assert_string_equal(r.err, "");
	run_free(&r);
	r = latwhy(ARGC(a4), a4);
	assert_int_equal(r.rc, LW_EXIT_OK);
	assert_string_equal(r.out, trace);
	run_free(&r);
	free(check);
	free(trace);
}

/* An option first, or nothing at all: the trace command, with today's
 * messages, byte for byte. */
static void test_default_command(void **state)
{
	char *a0[] = {"latwhy", NULL};
	char *a1[] = {"latwhy", "-p", "1", "-d", "10x", NULL};
	char *a2[] = {"latwhy", "-d", "1s", NULL};
	char *a3[] = {"latwhy", "-p", "1", "--bogus", NULL};
	char *a4[] = {"latwhy", "trace", "-p", "1", "-d", "10x", NULL};
	char *a5[] = {"latwhy", "trace", "-d", "1s", NULL};

	assert_usage_error(ARGC(a0), a0,
			   "latwhy: a target is needed: -p PID, --comm NAME, --cgroup PATH, "
			   "--unit NAME, --pods or --pod NS/NAME (see latwhy trace --help)\n");
	assert_usage_error(ARGC(a1), a1,
			   "latwhy: invalid duration '10x' (examples: 500ms, 10s, 2m) (see latwhy "
			   "trace --help)\n");
	assert_usage_error(ARGC(a2), a2,
			   "latwhy: a target is needed: -p PID, --comm NAME, --cgroup PATH, "
			   "--unit NAME, --pods or --pod NS/NAME (see latwhy trace --help)\n");
	assert_usage_error(ARGC(a3), a3,
			   "latwhy: unknown option '--bogus' (see latwhy trace --help)\n");
	assert_usage_error(ARGC(a4), a4,
			   "latwhy: invalid duration '10x' (examples: 500ms, 10s, 2m) (see latwhy "
			   "trace --help)\n");
	assert_usage_error(ARGC(a5), a5,
			   "latwhy: a target is needed: -p PID, --comm NAME, --cgroup PATH, "
			   "--unit NAME, --pods or --pod NS/NAME (see latwhy trace --help)\n");
	{
		char *b1[] = {"latwhy", "--cgroup", "a/b", NULL};
		char *b2[] = {"latwhy", "record", "--unit", "nginx", "-o", "/tmp/x.lwy", NULL};
		char *b3[] = {"latwhy", "serve", "--cgroup", "/a/../b", NULL};

		assert_usage_error(
			ARGC(b1), b1,
			"latwhy: invalid --cgroup 'a/b': a path below the cgroup v2 root, "
			"such as /system.slice/nginx.service (see latwhy trace --help)\n");
		assert_usage_error(
			ARGC(b2), b2,
			"latwhy: invalid --unit 'nginx': a unit name such as nginx.service "
			"(see latwhy record --help)\n");
		assert_usage_error(ARGC(b3), b3,
				   "latwhy: invalid --cgroup '/a/../b': a path below the cgroup v2 "
				   "root, such as /system.slice/nginx.service (see latwhy serve "
				   "--help)\n");
	}
}

static void test_check_errors(void **state)
{
	char *a1[] = {"latwhy", "check", "--bogus", NULL};
	char *a2[] = {"latwhy", "check", "--pid", NULL};
	char *a3[] = {"latwhy", "check", "extra", NULL};
	char *a4[] = {"latwhy", "check", "--sample", "0", "--root", "/nonexistent-dir", NULL};
	struct run r;

	assert_usage_error(ARGC(a1), a1,
			   "latwhy: unknown option '--bogus' (see latwhy check --help)\n");
	assert_usage_error(ARGC(a2), a2,
			   "latwhy: option '--pid' needs a value (see latwhy check --help)\n");
	assert_usage_error(ARGC(a3), a3,
			   "latwhy: unexpected argument 'extra' (see latwhy check --help)\n");
	r = latwhy(ARGC(a4), a4);
	assert_int_equal(r.rc, LW_EXIT_FAIL);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err,
			    "latwhy check: reading /nonexistent-dir: No such file or directory\n");
	run_free(&r);
}

/* ---- dispatch over a table of its own ----------------------------------- */

static int ran, ran_argc;
static const char *ran_argv0;

static enum lw_exit stub(int which, int argc, char **argv)
{
	ran = which;
	ran_argc = argc;
	ran_argv0 = argv[0];
	return LW_EXIT_OK;
}

static enum lw_exit stub_one(int argc, char **argv)
{
	return stub(1, argc, argv);
}

static enum lw_exit stub_two(int argc, char **argv)
{
	return stub(2, argc, argv);
}

static void test_dispatch(void **state)
{
	static const struct lw_cmd t[] = {
		{"one", "the first", stub_one},
		{"two", "the second", stub_two},
	};
	char *a0[] = {"prog", NULL};
	char *a1[] = {"prog", "-x", "y", NULL};
	char *a2[] = {"prog", "two", "-x", NULL};
	char *a3[] = {"prog", "one", NULL};

	assert_int_equal(lw_cmd_dispatch(t, 2, ARGC(a0), a0), LW_EXIT_OK);
	assert_int_equal(ran, 1);
	assert_int_equal(ran_argc, 1);
	assert_string_equal(ran_argv0, "prog");
	assert_int_equal(lw_cmd_dispatch(t, 2, ARGC(a1), a1), LW_EXIT_OK);
	assert_int_equal(ran, 1);
	assert_int_equal(ran_argc, 3);
	assert_string_equal(ran_argv0, "prog");
	assert_int_equal(lw_cmd_dispatch(t, 2, ARGC(a2), a2), LW_EXIT_OK);
	assert_int_equal(ran, 2);
	assert_int_equal(ran_argc, 2);
	assert_string_equal(ran_argv0, "two");
	assert_int_equal(lw_cmd_dispatch(t, 2, ARGC(a3), a3), LW_EXIT_OK);
	assert_int_equal(ran, 1);
	assert_int_equal(ran_argc, 1);
	assert_string_equal(ran_argv0, "one");
}

static void test_usage_rows(void **state)
{
	static const struct lw_cmd t[] = {
		{"one", "the first", stub_one},
		{"two", "the second", stub_two},
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	lw_cmd_usage(f, t, 2);
	assert_int_equal(fclose(f), 0);
	assert_non_null(
		strstr(buf, "latwhy [OPTIONS]          the same as: latwhy one [OPTIONS]\n"));
	assert_non_null(strstr(buf, "Commands:\n  one      the first\n  two      the second\n\n"));
	free(buf);
}

/* ---- report of a capture without a META record ------------------------- */

/* A capture capped before latwhy's first periodic snapshot: its file header
 * and facts, two slow requests, and no META record (nor NODE chunk). */
static void write_capture_without_meta(const char *path)
{
	static const struct lw_capture_kv host[] = {{"hostname", "node-a"},
						    {"kernel_release", "6.1.0-test"}};
	static const struct lw_capture_kv target[] = {{"pid", "4242"}, {"comm", "gateway"}};
	struct lw_capture_opts o = {.latwhy_version = "0.9-test", .abi_version = LW_ABI_VERSION};
	struct lw_capture_writer *w = lw_capture_writer_open(path, &o);
	struct lw_request q;

	assert_non_null(w);
	assert_int_equal(lw_capture_writer_add_facts(w, LW_CHUNK_HOST, host, 2), 0);
	assert_int_equal(lw_capture_writer_add_facts(w, LW_CHUNK_TARGET, target, 2), 0);
	for (unsigned i = 0; i < 2; i++) {
		memset(&q, 0, sizeof(q));
		q.type = LW_REC_REQUEST;
		q.pid = 4242;
		q.tid = 4243 + i;
		snprintf(q.comm, sizeof(q.comm), "worker");
		q.start_ns = 1000000000ull + i * 1000000ull;
		q.latency_ns = 2000000;
		q.ns[LW_B_RUN] = 500000;
		q.ns[LW_B_SCHED] = 1500000;
		assert_int_equal(lw_capture_writer_append(w, &q, sizeof(q)), 0);
	}
	assert_int_equal(lw_capture_writer_close(w), 0);
}

/* Its report names the target from the TARGET facts, not "pid 0 ()". */
static void test_report_without_meta(void **state)
{
	char dir[] = "/tmp/latwhy-cli-XXXXXX", path[64];
	char *text[] = {"latwhy", "report", path, NULL};
	char *json[] = {"latwhy", "report", "--json", path, NULL};
	struct run r;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/capped.lwy", dir);
	write_capture_without_meta(path);

	r = latwhy(ARGC(text), text);
	assert_int_equal(r.rc, LW_EXIT_OK);
	assert_non_null(strstr(r.out, "\n== latwhy: pid 4242 (gateway), duration unknown ==\n"));
	assert_null(strstr(r.out, "pid 0 ()"));
	/* nothing counted the requests: no number stands for them */
	assert_non_null(strstr(
		r.out, "Requests (delimiting not known): not counted (no periodic record: the "
		       "capture ends before the first); slow (> "));
	assert_non_null(strstr(r.out, "): 2 recorded\n"));
	assert_null(strstr(r.out, "0 ns traced"));
	assert_null(strstr(r.out, "p50 0 ns"));
	run_free(&r);

	r = latwhy(ARGC(json), json);
	assert_int_equal(r.rc, LW_EXIT_OK);
	assert_non_null(strstr(r.out,
			       "{\"type\":\"summary\",\"pid\":4242,\"comm\":\"gateway\","
			       "\"duration_ns\":null,\"requests\":null,\"slow_requests\":2,"));
	assert_non_null(strstr(r.out, "\"p50_ns\":null,\"p99_ns\":null,"));
	run_free(&r);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_command), cmocka_unit_test(test_help_lists_commands),
		cmocka_unit_test(test_command_help),	cmocka_unit_test(test_default_command),
		cmocka_unit_test(test_check_errors),	cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_usage_rows),	cmocka_unit_test(test_report_without_meta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
