// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_html.c - latwhy report --html: a page with no script and nothing to
 * fetch, every host-made text escaped, no clock drawn that was not measured,
 * and as many marks as the records hold (one per time bin with slow
 * requests, not one per request). Built records, then a golden capture
 * through the command.
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

#include "latwhy.h"
#include "engine/engine.h"
#include "output/html.h"

/* main.c is not in the library: include it for its table, main renamed. */
#define main latwhy_main
#include "cli/main.c"
#undef main

#define MS 1000000ULL

struct page {
	struct lw_engine *e;
	struct lw_html *h;
	struct lw_fanout fan;
	struct lw_sink sink;
};

static void page_init(struct page *p)
{
	memset(p, 0, sizeof(*p));
	p->e = lw_engine_new();
	p->h = lw_html_new();
	assert_non_null(p->e);
	assert_non_null(p->h);
	assert_int_equal(lw_fanout_add(&p->fan, lw_engine_sink(p->e)), 0);
	assert_int_equal(lw_fanout_add(&p->fan, lw_html_sink(p->h)), 0);
	p->sink = lw_fanout_sink(&p->fan);
}

static void feed(struct page *p, const void *rec, size_t len)
{
	assert_int_equal(lw_sink_record(&p->sink, rec, len), 0);
}

/* the run: pid 7 from 1 s for 4 s, a comm that is HTML */
static void feed_meta(struct page *p)
{
	struct lw_meta_rec m = {.type = LW_REC_META,
				.pid = 7,
				.comm = "a<b&c>\"d",
				.start_ns = 1000 * MS,
				.duration_ns = 4000 * MS,
				.threshold_ns = LW_THRESH_UNKNOWN,
				.req_mode = LW_REQ_SOCKET,
				.tracer_tgid = 99};

	feed(p, &m, sizeof(m));
}

/* a slow request ending at end_ms, all of it sched or irq */
static void feed_req(struct page *p, __u64 end_ms, int bucket)
{
	struct lw_request r = {.type = LW_REC_REQUEST, .pid = 7, .tid = 8, .comm = "w"};

	r.latency_ns = 2 * MS;
	r.start_ns = end_ms * MS - r.latency_ns;
	r.ns[bucket] = r.latency_ns;
	feed(p, &r, sizeof(r));
}

static char *page_write(struct page *p, const struct lw_findings *fs)
{
	const struct lw_html_fact v[] = {{"host", "h<1>"}, {"kernel", NULL}};
	const struct lw_html_facts facts = {.title = "x.lwy", .v = v, .n = 2};
	struct lw_summary s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	lw_engine_summarize(p->e, &s);
	assert_int_equal(lw_html_write(p->h, f, &facts, &s, fs), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void page_free(struct page *p)
{
	lw_html_free(p->h);
	lw_engine_free(p->e);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

/* The sum of the data-count attributes of the marks of kind what. */
static unsigned long long sum_counts(const char *s, const char *what)
{
	unsigned long long sum = 0;

	while ((s = strstr(s, what))) {
		const char *c = strstr(s, "data-count=\"");

		assert_non_null(c);
		sum += strtoull(c + 12, NULL, 10);
		s += strlen(what);
	}
	return sum;
}

static void assert_self_contained(const char *out)
{
	assert_int_equal(count(out, "<script"), 0);
	assert_int_equal(count(out, "http://"), 0);
	assert_int_equal(count(out, "https://"), 0);
	assert_int_equal(count(out, "src="), 0);
	assert_int_equal(count(out, "href="), 0);
	assert_int_equal(count(out, "url("), 0);
	assert_int_equal(count(out, "@import"), 0);
	assert_non_null(strstr(out, "</html>\n"));
}

static void test_built(void **state)
{
	struct lw_preempt_rec pr = {
		.type = LW_REC_PREEMPT, .pid = 42, .comm = "<&>", .ns = 5 * MS, .count = 3};
	struct lw_preempt_rec self = {
		.type = LW_REC_PREEMPT, .pid = 99, .comm = "latwhy", .ns = MS, .count = 1};
	struct lw_findings fs = {};
	struct lw_finding *x;
	struct page p;
	char *out;

	page_init(&p);
	feed_meta(&p);
	/* 4 s in bins of 100 ms: bins 1, 15 and 39 have slow requests */
	feed_req(&p, 1150, LW_B_SCHED);
	feed_req(&p, 1180, LW_B_IRQ);
	feed_req(&p, 2550, LW_B_SCHED);
	feed_req(&p, 4990, LW_B_SCHED);
	feed(&p, &pr, sizeof(pr));
	feed(&p, &self, sizeof(self));
	x = lw_findings_add(&fs, LW_CAUSE_SCHED, LW_SEV_CRIT);
	assert_non_null(x);
	assert_int_equal(lw_set(&x->seen, "tasks <ran>"), 0);
	assert_int_equal(lw_strv_add(&x->fix, "echo 1 > /proc/x && true"), 0);
	out = page_write(&p, &fs);

	assert_self_contained(out);
	/* every text from the host escaped, never raw */
	assert_non_null(strstr(out, "a&lt;b&amp;c&gt;&quot;d"));
	assert_null(strstr(out, "a<b"));
	assert_non_null(strstr(out, "&lt;&amp;&gt; (pid 42)"));
	assert_null(strstr(out, "<&>"));
	assert_non_null(strstr(out, "<td>h&lt;1&gt;</td>"));
	/* the tracer named as itself */
	assert_non_null(strstr(out, "latwhy (this tracer)"));
	assert_non_null(strstr(out, "data-pid=\"99\" data-ns=\"1000000\" data-count=\"1\" "
				    "data-tracer=\"1\""));
	/* the finding's command ready to copy, escaped */
	assert_non_null(strstr(out, "<pre class=\"cmd fix\">echo 1 &gt; /proc/x &amp;&amp; "
				    "true\n</pre>"));
	assert_non_null(strstr(out, "[crit] sched: tasks &lt;ran&gt;"));
	/* no clock records: said, never a number */
	assert_non_null(strstr(out, "<p class=\"nodata\" id=\"no-freq\">no frequency data</p>"));
	assert_null(strstr(out, " MHz"));
	assert_int_equal(count(out, "mark clock-cpu"), 0);
	/* a mark per bin with slow requests, holding them all */
	assert_non_null(
		strstr(out, "data-bins=\"40\" data-bin-ns=\"100000000\" data-t0-ns=\"1000000000\" "
			    "data-total=\"4\""));
	assert_int_equal(count(out, "class=\"mark slow-bin\""), 3);
	assert_non_null(strstr(out, "class=\"mark slow-bin\" data-bin=\"1\" data-count=\"2\""));
	assert_non_null(strstr(out, "class=\"mark slow-bin\" data-bin=\"15\" data-count=\"1\""));
	assert_non_null(strstr(out, "class=\"mark slow-bin\" data-bin=\"39\" data-count=\"1\""));
	assert_int_equal(sum_counts(out, "class=\"mark slow-bin\""), 4);
	assert_non_null(strstr(out, "<rect class=\"seg c-irq\" data-count=\"1\""));
	assert_int_equal(count(out, "class=\"mark preempt\""), 2);
	/* no histogram record: no histogram drawn */
	assert_int_equal(count(out, "mark hist-bin"), 0);
	assert_non_null(strstr(out, "no latency histogram in this capture"));
	free(out);
	lw_findings_free(&fs);
	page_free(&p);
}

/* 10000 slow requests are as many marks as bins, not requests. */
static void test_aggregated(void **state)
{
	struct lw_hist_rec *hist = calloc(1, sizeof(*hist));
	struct page p;
	char *out;

	assert_non_null(hist);
	hist->type = LW_REC_HIST;
	hist->b[lw_hist_bucket(300000)] = 9000;
	hist->b[lw_hist_bucket(2 * MS)] = 1000;
	page_init(&p);
	feed_meta(&p);
	for (int i = 0; i < 10000; i++)
		feed_req(&p, 1003 + i * 3990 / 10000, LW_B_SCHED);
	feed(&p, hist, sizeof(*hist));
	out = page_write(&p, NULL);
	assert_int_equal(count(out, "class=\"mark slow-bin\""), 40);
	assert_int_equal(sum_counts(out, "class=\"mark slow-bin\""), 10000);
	assert_int_equal(count(out, "<rect"), 40 + 2 + 1);
	assert_int_equal(count(out, "class=\"mark hist-bin"), 2);
	assert_int_equal(sum_counts(out, "class=\"mark hist-bin"), 10000);
	assert_non_null(strstr(out, "no findings: the capture holds no node snapshot"));
	assert_true(strlen(out) < 64 * 1024);
	free(out);
	page_free(&p);
	free(hist);
}

/* Measured clocks draw a line per CPU; THP collapses a mark per bin. */
static void test_clock_thp(void **state)
{
	struct lw_tick_rec t = {.type = LW_REC_TICK};
	struct lw_thp_rec thp = {.type = LW_REC_THP};
	struct page p;
	char *out;

	page_init(&p);
	feed_meta(&p);
	feed_req(&p, 1500, LW_B_THP);
	for (int s = 2; s <= 5; s++) {
		t.ts_ns = s * 1000 * MS;
		feed(&p, &t, sizeof(t));
		for (__u32 c = 0; c < 2; c++) {
			struct lw_cpu_rec cpu = {.type = LW_REC_CPU,
						 .cpu = c,
						 .khz = 1800000 + 100000 * s,
						 .ref_khz = 2400000,
						 .events = s};

			feed(&p, &cpu, sizeof(cpu));
		}
		thp.s.collapses = s >= 3 ? 2 : 0; /* two at 3 s, none after */
		feed(&p, &thp, sizeof(thp));
	}
	out = page_write(&p, NULL);
	assert_self_contained(out);
	/* the requests' frequency cause may be unmeasured; the clock was */
	assert_null(strstr(out, "id=\"no-freq\""));
	assert_int_equal(count(out, "class=\"mark clock-cpu\""), 2);
	assert_non_null(strstr(out, "data-cpu=\"1\" data-points=\"4\" data-min-khz=\"2000000\" "
				    "data-max-khz=\"2300000\""));
	assert_non_null(strstr(out, "reference 2400 MHz"));
	assert_int_equal(count(out, "class=\"mark thp-bin\""), 1);
	assert_non_null(strstr(out, "class=\"mark thp-bin\" data-bin=\"20\" data-count=\"2\""));
	free(out);
	page_free(&p);
}

/* ---- through the command ------------------------------------------------ */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* latwhy argv... with stdout and stderr into files; its exit code */
static int run(char **argv, const char *out, const char *err)
{
	int so = dup(1), se = dup(2), rc;
	FILE *o = fopen(out, "we"), *e = fopen(err, "we");
	int argc = 0;

	assert_non_null(o);
	assert_non_null(e);
	while (argv[argc])
		argc++;
	fflush(stdout);
	fflush(stderr);
	assert_true(dup2(fileno(o), 1) >= 0 && dup2(fileno(e), 2) >= 0);
	rc = latwhy_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	fclose(o);
	fclose(e);
	return rc;
}

/* The text report is the same with --html; the page holds the capture's
 * 40 slow requests (tests/captures/sched.json has 40 request lines). */
static void test_capture(void **state)
{
	char dir[] = "/tmp/lw-html.XXXXXX", page[64], o1[64], o2[64], e[64];
	char *plain[] = {"latwhy", "report", "tests/captures/sched.lwy", NULL};
	char *html[] = {"latwhy", "report", "tests/captures/sched.lwy", "--html", page, NULL};
	char *a, *b, *out;

	assert_non_null(mkdtemp(dir));
	snprintf(page, sizeof(page), "%s/r.html", dir);
	snprintf(o1, sizeof(o1), "%s/o1", dir);
	snprintf(o2, sizeof(o2), "%s/o2", dir);
	snprintf(e, sizeof(e), "%s/e", dir);
	assert_int_equal(run(plain, o1, e), LW_EXIT_OK);
	assert_int_equal(run(html, o2, e), LW_EXIT_OK);
	a = slurp(o1);
	b = slurp(o2);
	assert_string_equal(a, b);
	out = slurp(page);
	assert_self_contained(out);
	assert_int_equal(sum_counts(out, "class=\"mark slow-bin\""), 40);
	assert_non_null(strstr(out, "data-total=\"4417\"")); /* the histogram: every request */
	assert_non_null(strstr(out, "taskset -apc 0 5530\n"));
	assert_non_null(strstr(out, "no frequency data"));
	free(a);
	free(b);
	free(out);
	unlink(page);
	unlink(o1);
	unlink(o2);
	unlink(e);
	rmdir(dir);
}

/* A page that cannot be written: one line, exit 1. */
static void test_unwritable(void **state)
{
	char *argv[] = {
		"latwhy", "report", "tests/captures/sched.lwy", "--html", "/nonexistent/dir/r.html",
		NULL};
	char o[] = "/tmp/lw-html-o.XXXXXX", e[] = "/tmp/lw-html-e.XXXXXX";
	char *err;

	close(mkstemp(o));
	close(mkstemp(e));
	assert_int_equal(run(argv, o, e), LW_EXIT_FAIL);
	err = slurp(e);
	assert_string_equal(err, "latwhy: cannot create /nonexistent/dir/r.html: No such file or "
				 "directory\n");
	free(err);
	unlink(o);
	unlink(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built),	   cmocka_unit_test(test_aggregated),
		cmocka_unit_test(test_clock_thp),  cmocka_unit_test(test_capture),
		cmocka_unit_test(test_unwritable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
