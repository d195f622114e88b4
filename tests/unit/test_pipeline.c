// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_pipeline.c - records through a fan-out of sinks into the engine, the
 * request lines it writes for what it took in, and its errors in the
 * printed summary. No source: the records are synthetic.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/sink.h"
#include "output/render.h"
#include "output/requests.h"

/* A sink that counts what it got and answers with ret. */
struct counter {
	int records, ticks;
	size_t last_len;
	__u64 last_now;
	int ret;
	int order; /* when it got the last record, of all counters */
};

static int seq;

static int count_record(void *ctx, const void *rec, size_t len)
{
	struct counter *c = ctx;

	c->records++;
	c->last_len = len;
	c->order = ++seq;
	return c->ret;
}

static int count_tick(void *ctx, __u64 now_ns)
{
	struct counter *c = ctx;

	c->ticks++;
	c->last_now = now_ns;
	return c->ret;
}

static struct lw_sink counter_sink(struct counter *c)
{
	return (struct lw_sink){.ctx = c, .record = count_record, .tick = count_tick};
}

static void test_fanout(void **state)
{
	struct counter a = {0}, b = {0};
	struct lw_fanout f = {0};
	struct lw_sink s = lw_fanout_sink(&f);
	__u32 rec = LW_REC_TICK;

	/* no sinks: nothing to do, nothing failed */
	assert_int_equal(lw_sink_record(&s, &rec, sizeof(rec)), 0);
	assert_int_equal(lw_sink_tick(&s, 1), 0);
	assert_int_equal(lw_fanout_add(&f, counter_sink(&a)), 0);
	assert_int_equal(lw_fanout_add(&f, counter_sink(&b)), 0);
	assert_int_equal(lw_sink_record(&s, &rec, sizeof(rec)), 0);
	assert_int_equal(a.records, 1);
	assert_int_equal(b.records, 1);
	assert_int_equal(b.last_len, sizeof(rec));
	assert_true(a.order < b.order); /* in the order they were added */
	assert_int_equal(lw_sink_tick(&s, 42), 0);
	assert_int_equal(a.ticks, 1);
	assert_int_equal(b.last_now, 42);

	/* an error: the others still get the record; the first error wins */
	a.ret = -EINVAL;
	b.ret = -ENOMEM;
	assert_int_equal(lw_sink_record(&s, &rec, sizeof(rec)), -EINVAL);
	assert_int_equal(b.records, 2);
	/* a sink that can take no more outranks the others' errors */
	b.ret = -ECANCELED;
	assert_int_equal(lw_sink_record(&s, &rec, sizeof(rec)), -ECANCELED);
	assert_int_equal(lw_sink_tick(&s, 43), -ECANCELED);
	assert_int_equal(a.records, 3);
	assert_int_equal(a.ticks, 2);
}

static void test_fanout_full(void **state)
{
	struct counter c[LW_FANOUT_MAX] = {0};
	struct lw_fanout f = {0};
	struct lw_sink s = lw_fanout_sink(&f);
	struct lw_sink bare = {0};
	__u32 rec = LW_REC_TICK;

	for (int i = 0; i < LW_FANOUT_MAX; i++)
		assert_int_equal(lw_fanout_add(&f, counter_sink(&c[i])), 0);
	assert_int_equal(lw_fanout_add(&f, counter_sink(&c[0])), -ENOSPC);
	assert_int_equal(lw_sink_record(&s, &rec, sizeof(rec)), 0);
	for (int i = 0; i < LW_FANOUT_MAX; i++)
		assert_int_equal(c[i].records, 1);
	/* a sink without callbacks takes nothing and never fails */
	assert_int_equal(lw_sink_record(&bare, &rec, sizeof(rec)), 0);
	assert_int_equal(lw_sink_tick(&bare, 1), 0);
}

static struct lw_request req(__u32 tid, __u64 latency, __u64 run, __u64 sched)
{
	struct lw_request r;

	memset(&r, 0, sizeof(r));
	r.type = LW_REC_REQUEST;
	r.pid = 4242;
	r.tid = tid;
	r.cpu = 1;
	strcpy(r.comm, "srv");
	r.start_ns = 1000 * tid;
	r.latency_ns = latency;
	r.ns[LW_B_RUN] = run;
	r.ns[LW_B_SCHED] = sched;
	r.flags = LW_REQ_FREQ_KNOWN;
	return r;
}

/* The lines the engine's on_request writes are the request writer's, one
 * for each request it took in, through a fan-out like the tracer's. */
static void test_request_lines(void **state)
{
	struct lw_engine *e = lw_engine_new();
	struct lw_request a = req(1, 1000, 400, 600), b = req(2, 3000, 1000, 2000);
	struct counter other = {0};
	struct lw_fanout f = {0};
	struct lw_sink s = lw_fanout_sink(&f);
	char *got = NULL, *want = NULL;
	size_t got_len = 0, want_len = 0;
	FILE *g = open_memstream(&got, &got_len), *w = open_memstream(&want, &want_len);
	struct lw_summary sum;

	assert_non_null(e);
	assert_non_null(g);
	assert_non_null(w);
	lw_engine_on_request(e, lw_requests_on_request, g);
	assert_int_equal(lw_fanout_add(&f, lw_engine_sink(e)), 0);
	assert_int_equal(lw_fanout_add(&f, counter_sink(&other)), 0);
	assert_int_equal(lw_sink_record(&s, &a, sizeof(a)), 0);
	assert_int_equal(lw_sink_record(&s, &b, sizeof(b) - 1), -EINVAL); /* refused */
	assert_int_equal(lw_sink_record(&s, &b, sizeof(b)), 0);
	assert_int_equal(other.records, 3); /* the other sink got all three */
	lw_request_write(w, &a);
	lw_request_write(w, &b);
	assert_int_equal(fclose(g), 0);
	assert_int_equal(fclose(w), 0);
	assert_string_equal(got, want);
	assert_non_null(strstr(got, "\"tid\":1,"));
	assert_non_null(strstr(got, "}\n{\"type\":\"request\",\"pid\":4242,\"tid\":2,"));
	lw_engine_summarize(e, &sum);
	assert_int_equal(sum.slow_requests, 2);
	assert_int_equal(sum.engine_errors, 1);
	free(got);
	free(want);
	lw_engine_free(e);
}

/* The summary printed as text or JSON, into a string to free. */
static char *render(const struct lw_summary *s, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct lw_render *r;

	assert_non_null(f);
	r = lw_render_new(f, json);
	assert_non_null(r);
	lw_render_summary(r, s, NULL);
	lw_render_free(r);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* A short record and one of an unknown type: counted, and said in the
 * summary (text: one line, only then; JSON: always a count). */
static void test_errors_in_summary(void **state)
{
	struct lw_engine *e = lw_engine_new();
	struct lw_request a = req(1, 1000, 400, 600);
	__u32 unknown[8] = {LW_REC_HIST + 7};
	struct lw_meta_rec m = {.type = LW_REC_META, .pid = 4242, .comm = "srv"};
	struct lw_summary s;
	char *text, *json;

	assert_non_null(e);
	assert_int_equal(lw_engine_feed(e, &m, sizeof(m)), 0);
	assert_int_equal(lw_engine_feed(e, &a, sizeof(a)), 0);
	lw_engine_summarize(e, &s);
	text = render(&s, false);
	json = render(&s, true);
	assert_null(strstr(text, "Engine errors"));
	assert_non_null(strstr(json, ",\"engine_errors\":0,"));
	free(text);
	free(json);

	assert_int_equal(lw_engine_feed(e, &a, 10), -EINVAL);
	assert_int_equal(lw_engine_feed(e, unknown, sizeof(unknown)), -EINVAL);
	assert_int_equal(lw_engine_feed(e, unknown, sizeof(unknown)), -EINVAL);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.engine_errors, 3);
	text = render(&s, false);
	json = render(&s, true);
	assert_non_null(strstr(text,
			       "\nEngine errors: 3 (short: 1, unknown type: 2); what they held "
			       "is missing from the numbers above.\n"));
	assert_non_null(strstr(json, "\"dominant\":\"sched\",\"engine_errors\":3,"));
	assert_int_equal(s.slow_requests, 1);
	free(text);
	free(json);
	lw_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fanout),
		cmocka_unit_test(test_fanout_full),
		cmocka_unit_test(test_request_lines),
		cmocka_unit_test(test_errors_in_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
