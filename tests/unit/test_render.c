// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_render.c - NDJSON and text output, rendered into memory streams.
 * JSON lines are validated by python3's json module and checked against
 * exact substrings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "advice/finding.h"
#include "output/render.h"
#include "output/requests.h"

/* ---- helpers ------------------------------------------------------------ */

struct out {
	char *buf;
	size_t len;
	FILE *f;
	struct lw_render *r;
};

static void out_open(struct out *o, bool json)
{
	memset(o, 0, sizeof(*o));
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
	o->r = lw_render_new(o->f, json);
	assert_non_null(o->r);
}

/* Close the stream; o->buf holds the output. */
static const char *out_close(struct out *o)
{
	lw_render_free(o->r);
	assert_int_equal(fclose(o->f), 0);
	assert_non_null(o->buf);
	return o->buf;
}

static void out_free(struct out *o)
{
	free(o->buf);
	o->buf = NULL;
}

/* Parse text as one JSON document with python3 and evaluate a Python
 * expression over it (the parsed value is `d`). True when it holds. */
static bool py_json(const char *text, const char *expr)
{
	FILE *p;
	int st;

	setenv("LW_PYEXPR", expr, 1);
	p = popen("python3 -c 'import json,os,sys; d=json.loads(sys.stdin.read()); "
		  "sys.exit(0 if eval(os.environ[\"LW_PYEXPR\"]) else 1)'",
		  "w");
	assert_non_null(p);
	fputs(text, p);
	st = pclose(p);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void assert_json(const char *text, const char *expr)
{
	if (!py_json(text, expr))
		fail_msg("JSON check failed: %s\non: %s", expr, text);
}

static void assert_has(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("missing '%s' in:\n%s", needle, text);
}

static void assert_lacks(const char *text, const char *needle)
{
	if (strstr(text, needle))
		fail_msg("unexpected '%s' in:\n%s", needle, text);
}

/* Exactly one line, newline-terminated. */
static void assert_one_line(const char *text)
{
	const char *nl = strchr(text, '\n');

	assert_non_null(nl);
	assert_int_equal(nl[1], '\0');
}

static struct lw_request req(__u32 cpu, __u64 latency, __u64 run, __u64 freq, __u64 irq,
			     __u64 softirq, __u64 thp, __u64 sched, __u64 blocked)
{
	struct lw_request r;

	memset(&r, 0, sizeof(r));
	r.type = LW_REC_REQUEST;
	r.pid = 4242;
	r.tid = 4243;
	r.cpu = cpu;
	strcpy(r.comm, "srv");
	r.start_ns = 123456789;
	r.latency_ns = latency;
	r.ns[LW_B_RUN] = run;
	r.ns[LW_B_FREQ] = freq;
	r.ns[LW_B_IRQ] = irq;
	r.ns[LW_B_SOFTIRQ] = softirq;
	r.ns[LW_B_THP] = thp;
	r.ns[LW_B_SCHED] = sched;
	r.ns[LW_B_BLOCKED] = blocked;
	return r;
}

/* A summary from synthetic records: two slow requests (A on cpu 1, cause
 * sched; B on cpu 2, cause thp), total slow latency 4000 ns. */
static void build_summary(struct lw_summary *s, enum lw_freq_source src, __u64 threshold,
			  const char *comm)
{
	struct lw_engine *e = lw_engine_new();
	struct lw_meta_rec m = {.type = LW_REC_META,
				.pid = 4242,
				.freq_source = src,
				.nr_cpus = 4,
				.duration_ns = 30000000000ULL,
				.threshold_ns = threshold,
				.dropped = 7,
				.req_mode = LW_REQ_SOCKET,
				.untracked = 3};
	struct lw_tick_rec t = {.type = LW_REC_TICK,
				.ts_ns = 1000000000ULL,
				.requests = 5000,
				.p50_ns = 50000,
				.p99_ns = 900000,
				.threshold_ns = 900000};
	struct lw_cpu_rec c1 = {.type = LW_REC_CPU, .cpu = 1, .khz = 1200000, .ref_khz = 3000000};
	struct lw_cpu_rec c2 = {.type = LW_REC_CPU, .cpu = 2, .khz = 2400000, .ref_khz = 3000000};
	struct lw_irq_rec irq = {
		.type = LW_REC_IRQ, .irq = 36, .cpu = 1, .name = "eth0", .ns = 250, .count = 3};
	struct lw_preempt_rec pr = {
		.type = LW_REC_PREEMPT, .pid = 777, .comm = "hog", .ns = 800, .count = 2};
	struct lw_request a = req(1, 1000, 400, 100, 100, 50, 0, 300, 150);
	struct lw_request b = req(2, 3000, 1000, 0, 0, 0, 1500, 500, 0);

	assert_non_null(e);
	a.preempt_pid = 777;
	strcpy(a.preempt_comm, "hog");
	a.preempt_ns = 300;
	snprintf(m.comm, sizeof(m.comm), "%s", comm);
	a.flags = b.flags = LW_REQ_FREQ_KNOWN;
	assert_int_equal(lw_engine_feed(e, &t, sizeof(t)), 0);
	assert_int_equal(lw_engine_feed(e, &c1, sizeof(c1)), 0);
	assert_int_equal(lw_engine_feed(e, &c2, sizeof(c2)), 0);
	assert_int_equal(lw_engine_feed(e, &irq, sizeof(irq)), 0);
	assert_int_equal(lw_engine_feed(e, &pr, sizeof(pr)), 0);
	assert_int_equal(lw_engine_feed(e, &a, sizeof(a)), 0);
	assert_int_equal(lw_engine_feed(e, &b, sizeof(b)), 0);
	assert_int_equal(lw_engine_feed(e, &m, sizeof(m)), 0);
	lw_engine_summarize(e, s);
	lw_engine_free(e);
}

static void build_findings(struct lw_findings *fs)
{
	struct lw_finding *f;

	memset(fs, 0, sizeof(*fs));
	f = lw_findings_add(fs, LW_CAUSE_THP, LW_SEV_WARN);
	assert_non_null(f);
	assert_int_equal(lw_set(&f->seen, "THP %s", "always"), 0);
	assert_int_equal(lw_set(&f->why, "khugepaged collapses stall the target"), 0);
	assert_int_equal(lw_set(&f->evidence, "THP: %d%% of the slow requests' time", 38), 0);
	assert_int_equal(lw_strv_add(&f->fix, "echo never > %s",
				     "/sys/kernel/mm/transparent_hugepage/enabled"),
			 0);
	assert_int_equal(lw_strv_add(&f->fix, "echo \"a\\b\""), 0);
	assert_int_equal(lw_strv_add(&f->persist, "transparent_hugepage=never"), 0);
	assert_int_equal(lw_strv_add(&f->rollback,
				     "echo always > /sys/kernel/mm/transparent_hugepage/enabled"),
			 0);
	/* verify left empty: an empty array */
}

/* ---- request lines ------------------------------------------------------ */

static void test_request_json_exact(void **state)
{
	struct lw_request r = req(3, 10000, 4000, 0, 500, 250, 0, 5000, 250);
	struct out o;
	const char *s;

	out_open(&o, true);
	lw_request_write(o.f, &r);
	s = out_close(&o);
	assert_one_line(s);
	assert_string_equal(
		s, "{\"type\":\"request\",\"pid\":4242,\"tid\":4243,\"comm\":\"srv\","
		   "\"cpu\":3,\"start_ns\":123456789,\"latency_ns\":10000,"
		   "\"cause\":\"sched\",\"ns\":{\"run\":4000,\"frequency\":null,"
		   "\"irq\":500,\"softirq\":250,\"thp\":0,\"sched\":5000,"
		   "\"idle\":0,\"blocked\":250,\"idle_polled\":null,"
		   "\"irq_entry\":null,\"quota\":null,"
		   "\"fault\":null,\"reclaim\":null,\"memory_high\":null,\"fault_wait\":null,"
		   "\"fault_entry\":null,\"steal\":null}}\n");
	assert_json(s, "d['type'] == 'request' and d['pid'] == 4242 and d['tid'] == 4243 and "
		       "d['comm'] == 'srv' and d['cpu'] == 3 and d['start_ns'] == 123456789 and "
		       "d['latency_ns'] == 10000 and d['cause'] == 'sched' and "
		       "list(d['ns']) == ['run','frequency','irq','softirq','thp','sched',"
		       "'idle','blocked','idle_polled','irq_entry','quota','fault','reclaim',"
		       "'memory_high','fault_wait','fault_entry','steal'] and "
		       "d['ns']['frequency'] is None and d['ns']['idle_polled'] is None and "
		       "d['ns']['irq_entry'] is None and d['ns']['sched'] == 5000 "
		       "and 'preempted_by' not in d");
	out_free(&o);
}

static void test_request_json_freq_known(void **state)
{
	struct lw_request r = req(0, 10000, 6000, 1000, 300, 300, 0, 500, 2900);
	struct out o;
	const char *s;

	r.flags = LW_REQ_FREQ_KNOWN;
	r.preempt_pid = 777;
	strcpy(r.preempt_comm, "hog");
	r.preempt_ns = 400;
	out_open(&o, true);
	lw_request_write(o.f, &r);
	s = out_close(&o);
	assert_one_line(s);
	assert_has(s, "\"cause\":\"frequency\"");
	assert_has(s, "\"ns\":{\"run\":6000,\"frequency\":1000,\"irq\":300,\"softirq\":300,"
		      "\"thp\":0,\"sched\":500,\"idle\":0,\"blocked\":2900,\"idle_polled\":null,"
		      "\"irq_entry\":null,\"quota\":null,"
		      "\"fault\":null,\"reclaim\":null,\"memory_high\":null,\"fault_wait\":null,"
		      "\"fault_entry\":null,\"steal\":null}");
	assert_has(s, "\"preempted_by\":{\"pid\":777,\"comm\":\"hog\",\"ns\":400}");
	assert_json(s, "d['ns']['frequency'] == 1000 and isinstance(d['ns']['frequency'], int) "
		       "and d['preempted_by'] == {'pid': 777, 'comm': 'hog', 'ns': 400}");
	out_free(&o);
}

static void test_request_json_escape(void **state)
{
	struct lw_request r = req(0, 100, 100, 0, 0, 0, 0, 0, 0);
	struct out o;
	const char *s;

	strcpy(r.comm, "a\"b\\c\td");
	out_open(&o, true);
	lw_request_write(o.f, &r);
	s = out_close(&o);
	assert_one_line(s);
	assert_has(s, "\"comm\":\"a\\\"b\\\\c\\td\"");
	assert_has(s, "\"cause\":\"none\"");
	assert_json(s, "d['comm'] == 'a\"b\\\\c\\td'");
	out_free(&o);
}

/* Several requests: NDJSON, one object per line. */
static void test_request_json_ndjson(void **state)
{
	struct out o;
	const char *s, *p;
	int lines = 0;

	out_open(&o, true);
	for (int i = 0; i < 3; i++) {
		struct lw_request r = req(i, 1000, 500, 0, 0, 0, 0, 500, 0);

		lw_request_write(o.f, &r);
	}
	s = out_close(&o);
	for (p = s; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(lines, 3);
	assert_has(s, "\"cpu\":0,");
	assert_has(s, "}\n{\"type\":\"request\"");
	out_free(&o);
}

/* ---- summary line ------------------------------------------------------- */

static void test_summary_json(void **state)
{
	struct lw_summary sum;
	struct lw_findings fs;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_TRACEPOINT, 2000000, "server");
	build_findings(&fs);
	out_open(&o, true);
	lw_render_summary(o.r, &sum, &fs);
	s = out_close(&o);
	assert_one_line(s);
	assert_has(s, "{\"type\":\"summary\",\"pid\":4242,\"comm\":\"server\","
		      "\"duration_ns\":30000000000,\"requests\":5000,\"slow_requests\":2,"
		      "\"threshold_ns\":2000000,\"threshold_kind\":\"fixed\",\"p50_ns\":50000,"
		      "\"p99_ns\":900000,\"freq_source\":\"cpu_frequency tracepoint\","
		      "\"irq_entry_cost_ns\":null,\"fault_entry_cost_ns\":null,\"dropped\":7,"
		      "\"incomplete\":0,\"untracked\":3,"
		      "\"handoffs\":0,"
		      "\"handoff_slow_requests\":0,\"request_mode\":\"socket\","
		      "\"target_exited\":false,\"dominant\":\"thp\",");
	assert_has(s, "\"causes\":{\"frequency\":{\"ns\":100,\"share\":0.025,\"requests\":0},"
		      "\"irq\":{\"ns\":150,\"share\":0.0375,\"requests\":0},"
		      "\"thp\":{\"ns\":1500,\"share\":0.375,\"requests\":1},"
		      "\"sched\":{\"ns\":800,\"share\":0.2,\"requests\":1},"
		      "\"idle\":{\"ns\":0,\"share\":0,\"requests\":0},"
		      "\"quota\":{\"ns\":0,\"share\":0,\"requests\":0},"
		      "\"memory\":{\"ns\":0,\"share\":0,\"requests\":0}}");
	assert_has(s, "\"ns\":{\"run\":1400,\"frequency\":100,\"irq\":100,\"softirq\":50,"
		      "\"thp\":1500,\"sched\":800,\"idle\":0,\"blocked\":150,\"idle_polled\":0,"
		      "\"irq_entry\":null,\"quota\":0,\"fault\":0,\"reclaim\":0,"
		      "\"memory_high\":0,\"fault_wait\":0,\"fault_entry\":null,\"steal\":0}");
	assert_has(s, "\"irqs\":[{\"irq\":36,\"name\":\"eth0\",\"cpu\":1,\"ns\":250,\"count\":3}]");
	assert_has(s, "\"preempted_by\":[{\"pid\":777,\"tgid\":0,\"comm\":\"hog\","
		      "\"tracer\":false,\"ns\":800,\"count\":2,\"pod\":null}],\"slow_waits\":"
		      "[{\"pid\":777,\"comm\":\"hog\",\"tracer\":false,\"requests\":1,\"ns\":300,"
		      "\"pod\":null}]");
	assert_has(s, "\"clock\":{\"min_khz\":1200000,\"max_khz\":2400000,\"ref_khz\":3000000}");
	assert_has(s,
		   "\"findings\":[{\"cause\":\"thp\",\"severity\":\"warn\","
		   "\"seen\":\"THP always\",\"why\":\"khugepaged collapses stall the target\","
		   "\"evidence\":\"THP: 38% of the slow requests' time\",\"cost\":null,"
		   "\"fix\":[\"echo never > /sys/kernel/mm/transparent_hugepage/enabled\","
		   "\"echo \\\"a\\\\b\\\"\"],\"persist\":[\"transparent_hugepage=never\"],"
		   "\"rollback\":[\"echo always > /sys/kernel/mm/transparent_hugepage/enabled\"],"
		   "\"verify\":[]}]}\n");
	assert_json(
		s,
		"d['type'] == 'summary' and d['duration_ns'] == 30000000000 and "
		"d['requests'] == 5000 and d['slow_requests'] == 2 and "
		"d['threshold_ns'] == 2000000 and d['freq_source'] == 'cpu_frequency tracepoint' "
		"and d['dropped'] == 0 + 7 and list(d['causes']) == "
		"['frequency','irq','thp','sched','idle','quota','memory'] and "
		"all(set(v) >= {'ns','share'} for v in d['causes'].values()) and "
		"d['causes']['thp']['ns'] == 1500 and d['causes']['thp']['share'] == 0.375 and "
		"d['causes']['frequency'] == {'ns': 100, 'share': 0.025, 'requests': 0} and "
		"abs(sum(v['share'] for v in d['causes'].values()) - 0.6375) < 1e-12 and "
		"len(d['findings']) == 1 and d['findings'][0]['cause'] == 'thp' and "
		"d['findings'][0]['fix'][1] == 'echo \"a\\\\b\"' and "
		"d['findings'][0]['verify'] == [] and "
		"all(isinstance(d['findings'][0][k], list) for k in "
		"('fix','persist','rollback','verify'))");
	out_free(&o);
	lw_findings_free(&fs);
}

static void test_summary_json_no_freq(void **state)
{
	struct lw_summary sum;
	struct out o;
	const char *s;

	/* CPU records carry a clock, but no source was measured */
	build_summary(&sum, LW_FREQ_NONE, LW_THRESH_UNKNOWN, "server");
	assert_false(sum.freq_measured);
	out_open(&o, true);
	lw_render_summary(o.r, &sum, NULL);
	s = out_close(&o);
	assert_one_line(s);
	assert_has(s, "\"freq_source\":\"no frequency data\"");
	assert_has(s, "\"causes\":{\"frequency\":{\"ns\":null,\"share\":null,\"requests\":0},"
		      "\"irq\":{\"ns\":150,\"share\":0.0375,");
	assert_has(s, "\"threshold_ns\":900000,\"threshold_kind\":\"p99\"");
	assert_has(s, "\"clock\":{\"min_khz\":null,\"max_khz\":null,\"ref_khz\":null}");
	assert_has(s, "\"frequency\":null,\"irq\":"); /* bucket totals: null, not 0 */
	assert_has(s, "\"findings\":[]}\n");
	assert_json(s, "d['freq_source'] == 'no frequency data' and "
		       "d['causes']['frequency']['ns'] is None and "
		       "d['causes']['frequency']['share'] is None and "
		       "d['causes']['sched']['share'] == 0.2 and d['findings'] == []");
	out_free(&o);
}

static void test_summary_json_threshold_unknown(void **state)
{
	struct lw_engine *e = lw_engine_new();
	struct lw_summary sum;
	struct lw_findings fs = {0};
	struct out o;
	const char *s;

	assert_non_null(e);
	lw_engine_summarize(e, &sum); /* nothing at all */
	lw_engine_free(e);
	out_open(&o, true);
	lw_render_summary(o.r, &sum, &fs);
	s = out_close(&o);
	assert_one_line(s);
	assert_has(s, "\"threshold_ns\":null,\"threshold_kind\":\"p99\"");
	assert_has(s, "\"slow_requests\":0,");
	assert_has(s, "\"dominant\":\"none\"");
	assert_has(s, "\"irq\":{\"ns\":0,\"share\":0,\"requests\":0}");
	assert_json(s, "d['threshold_ns'] is None and d['causes']['frequency']['ns'] is None and "
		       "d['findings'] == []");
	out_free(&o);
}

static void test_summary_json_escape(void **state)
{
	struct lw_summary sum;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_TRACEPOINT, 2000000, "q\"x\\y");
	out_open(&o, true);
	lw_render_summary(o.r, &sum, NULL);
	s = out_close(&o);
	assert_one_line(s);
	assert_has(s, "\"comm\":\"q\\\"x\\\\y\"");
	assert_json(s, "d['comm'] == 'q\"x\\\\y'");
	out_free(&o);
}

/* ---- text summary ------------------------------------------------------- */

static void test_summary_text_no_freq(void **state)
{
	struct lw_summary sum;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_NONE, 2000000, "server");
	out_open(&o, false);
	lw_render_summary(o.r, &sum, NULL);
	s = out_close(&o);
	assert_has(s, "== latwhy: pid 4242 (server), 30.00 s traced ==");
	assert_has(s, "no frequency data");
	assert_has(s, "clock: no frequency data");
	assert_lacks(s, "0 MHz");
	assert_lacks(s, "MHz");
	assert_has(s, "Verdict: thp (38% of the slow requests' time).");
	assert_has(s, "IRQ 36 (eth0) on CPU 1: 250 ns in 3 interrupts");
	assert_has(s, "ran instead of it: hog (pid 777) 800 ns over 2 waits");
	assert_has(s, "slow requests waited longest for hog (pid 777): in 1 of 2, 300 ns\n");
	assert_has(s, "CPUs the slow requests ran on: 1,2\n");
	assert_has(s, "Dropped: 7 slow-request records were lost");
	assert_has(s, "Requests (socket): 5000 (167/s), p50 50.0 us");
	assert_has(s, "Untracked: 3 requests were given up: a thread had more than 16 open at "
		      "once.\n");
	/* the frequency row: n/a, no value */
	assert_has(s, "  frequency     n/a");
	assert_lacks(s, "frequency    2.5%");
	out_free(&o);
}

/* The summary as text or as its JSON line, without findings. */
static const char *summary_out(struct out *o, const struct lw_summary *sum, bool json)
{
	out_open(o, json);
	lw_render_summary(o->r, sum, NULL);
	return out_close(o);
}

/* serve's tiers: a capture says how long each was attached, and rates are
 * over the time of what counted the requests; a capture with no tier
 * record (before ABI 4) says nothing of them, its rate over the run. */
static void test_summary_tiers(void **state)
{
	struct lw_summary sum;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_NONE, 2000000, "server"); /* 5000 in 30 s */
	s = summary_out(&o, &sum, false);
	assert_lacks(s, "Attached:");
	assert_has(s, "Requests (socket): 5000 (167/s)");
	out_free(&o);
	s = summary_out(&o, &sum, true);
	assert_has(s, "\"requests_per_s\":166.666666666667,\"attached\":null,");
	out_free(&o);

	/* the duty cycle alone: attached 3 s of the 30, its requests of those */
	sum.tiers_known = true;
	sum.full_ns = 3000000000ULL;
	s = summary_out(&o, &sum, false);
	assert_has(s, "Attached: full tracing 3.00 s of it (duty cycle): requests and rates are of "
		      "those 3.00 s\n");
	assert_has(s, "Requests (socket): 5000 (1667/s)");
	out_free(&o);

	/* the always-attached tier all along, full tracing on an escalation */
	sum.watch_ns = 25000000000ULL;
	sum.watch_slow = 40;
	sum.escalations = 1;
	s = summary_out(&o, &sum, false);
	assert_has(s, "Attached: TCP requests counted for 25.00 s (always-attached tier: ~40 "
		      "slow); full tracing 3.00 s (1 escalation), whose slow requests alone have "
		      "causes\n");
	assert_has(s, "Requests (socket): 5000 (200/s)");
	out_free(&o);
	s = summary_out(&o, &sum, true);
	assert_has(s, "\"requests_per_s\":200,\"attached\":{\"watch_ns\":25000000000,"
		      "\"watch_slow_requests\":40,\"full_ns\":3000000000,\"escalations\":1},");
	out_free(&o);

	/* attached the whole run (a live trace's record): no line */
	sum.watch_ns = 0;
	sum.full_ns = sum.duration_ns;
	s = summary_out(&o, &sum, false);
	assert_lacks(s, "Attached:");
	out_free(&o);
}

/* The interrupts' entry and exit: a part of irq, said with its count and the
 * cost measured at start; null where nothing was measured, and said so. */
static void test_irq_entry(void **state)
{
	struct lw_request r = req(1, 10000, 4000, 0, 2500, 250, 0, 3000, 250);
	struct lw_summary sum;
	struct out o;
	const char *s;

	r.flags = LW_REQ_IRQ_ENTRY_KNOWN;
	r.ns[LW_B_IRQ_ENTRY] = 2200;
	out_open(&o, true);
	lw_request_write(o.f, &r);
	s = out_close(&o);
	assert_has(s, "\"idle_polled\":null,\"irq_entry\":2200,\"quota\":null,\"fault\":null");
	assert_json(s, "d['ns']['irq'] == 2500 and d['ns']['irq_entry'] == 2200 and "
		       "d['cause'] == 'sched'");
	out_free(&o);

	build_summary(&sum, LW_FREQ_NONE, 2000000, "server");
	sum.irq_entry_ns = 11000;
	sum.bucket_ns[LW_B_IRQ] += 33000;
	sum.bucket_ns[LW_B_IRQ_ENTRY] = 33000;
	assert_has(summary_out(&o, &sum, false),
		   "  interrupt entry/exit: 33.0 us in irq, beyond the handlers: 3 interrupts at "
		   "11.0 us each (measured at start)\n");
	out_free(&o);
	assert_json(summary_out(&o, &sum, true),
		    "d['irq_entry_cost_ns'] == 11000 and d['ns']['irq_entry'] == 33000 and "
		    "d['ns']['irq'] == 33100");
	out_free(&o);

	/* none hit the slow requests: no line, and 0 is a measurement */
	sum.bucket_ns[LW_B_IRQ_ENTRY] = 0;
	assert_lacks(summary_out(&o, &sum, false), "interrupt entry/exit");
	out_free(&o);
	assert_json(summary_out(&o, &sum, true), "d['ns']['irq_entry'] == 0");
	out_free(&o);

	/* not measured (one CPU, --irq-cost off) */
	sum.irq_entry_ns = 0;
	assert_has(
		summary_out(&o, &sum, false),
		"  interrupt entry/exit: not measured (--irq-cost off, one CPU, or the measurement "
		"failed: -v says why): irq holds the handlers only\n");
	out_free(&o);
	assert_json(summary_out(&o, &sum, true),
		    "d['irq_entry_cost_ns'] is None and d['ns']['irq_entry'] is None");
	out_free(&o);

	/* nor without the IRQ tracepoints: irq itself is not measured then */
	sum.flags = LW_META_NO_IRQ;
	assert_lacks(summary_out(&o, &sum, false), "interrupt entry/exit");
	out_free(&o);
}

/* A receive backlog's waits are shown as waits, on the CPU that took the
 * data, in the live line and in the summary; NET_RX runs as before; and
 * waits behind ksoftirqd as waits. */
static void test_backlog_evidence(void **state)
{
	struct lw_tick_rec t = {.type = LW_REC_TICK, .requests = 10, .threshold_ns = 900000};
	struct lw_summary sum;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_NONE, 2000000, "server");
	sum.softirqs[0] = (struct lw_softirq_rec){
		.vec = LW_SOFTIRQ_BACKLOG, .cpu = 0, .ns = 2000000, .count = 400};
	sum.softirqs[1] = (struct lw_softirq_rec){.vec = 3, .cpu = 1, .ns = 1000000, .count = 9};
	sum.softirqs[2] = (struct lw_softirq_rec){
		.vec = LW_SOFTIRQ_KSOFTIRQD, .cpu = 1, .ns = 500000, .count = 7};
	sum.nr_softirqs = 3;
	out_open(&o, false);
	lw_render_live(o.r, &sum, &t, 1000000000ULL);
	s = out_close(&o);
	assert_has(s, "its data waited for NET_RX@cpu0 2.00 ms  softirq NET_RX@cpu1 1.00 ms\n");
	/* every traced cause on the live line, quota too */
	assert_has(s, "  slow-request time: frequency n/a  irq ");
	assert_has(s, "  idle 0.0%  quota 0.0%  memory 0.0%\n");
	out_free(&o);
	s = summary_out(&o, &sum, false);
	assert_has(s, "  softirq NET_RX_BACKLOG on CPU 0: 2.00 ms in 400 waits\n"
		      "  softirq NET_RX on CPU 1: 1.00 ms in 9 runs\n"
		      "  softirq KSOFTIRQD on CPU 1: 500.0 us in 7 waits\n");
	out_free(&o);
	s = summary_out(&o, &sum, true);
	assert_json(s, "d['evidence']['softirqs'][0] == {'vec': 'NET_RX_BACKLOG', 'cpu': 0, "
		       "'ns': 2000000, 'count': 400}");
	out_free(&o);
}

/* Requests by connection without sk_data_ready: said in text, and the
 * tracepoint is listed as not attached in JSON. */
static void test_summary_no_arrival(void **state)
{
	struct lw_summary sum;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_NONE, 2000000, "server");
	assert_lacks(summary_out(&o, &sum, false), "no arrival times");
	out_free(&o);

	sum.flags |= LW_META_NO_ARRIVAL;
	s = summary_out(&o, &sum, false);
	assert_has(s, "slow (> 2.00 ms): 2\n  no arrival times (sk_data_ready): a request starts "
		      "at the wake-up, the last reply or the read; an event loop's queueing may be "
		      "under- or overstated\n");
	out_free(&o);

	s = summary_out(&o, &sum, true);
	assert_has(s, "\"not_attached\":[\"sk_data_ready\"]");
	assert_json(s,
		    "d['not_attached'] == ['sk_data_ready'] and d['causes']['irq']['ns'] == 150");
	out_free(&o);

	/* arrival times, without the receive backlog's wait */
	sum.flags = LW_META_NO_BACKLOG;
	s = summary_out(&o, &sum, false);
	assert_lacks(s, "no arrival times");
	assert_has(s, "slow (> 2.00 ms): 2\n  no receive backlog waits (netif_rx, "
		      "netif_receive_skb): data that waited for NET_RX before it was ready is not "
		      "in its request\n");
	out_free(&o);
	s = summary_out(&o, &sum, true);
	assert_json(s, "d['not_attached'] == ['netif_rx'] and d['causes']['irq']['ns'] == 150");
	out_free(&o);
}

/* Why each tracepoint was not attached: asked, the kernel's, the request
 * mode's, another's; not known where a capture did not record --skip. */
static void test_not_attached_why(void **state)
{
	struct lw_summary sum;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_NONE, 2000000, "server");
	sum.flags = LW_META_NO_FREQ | LW_META_NO_ARRIVAL | LW_META_NO_BACKLOG | LW_META_NO_THP;
	sum.req_mode = LW_REQ_SOCKET;
	out_open(&o, true);
	lw_render_set_skip(o.r, "irq_handler_entry,cpu_frequency");
	lw_render_summary(o.r, &sum, NULL);
	s = out_close(&o);
	assert_json(s,
		    "d['not_attached'] == ['khugepaged', 'cpu_frequency', 'sk_data_ready', "
		    "'netif_rx'] and d['not_attached_why'] == {'khugepaged': 'not in this kernel', "
		    "'cpu_frequency': 'skipped', 'sk_data_ready': 'not in this kernel', "
		    "'netif_rx': 'needs sk_data_ready'}");
	out_free(&o);

	sum.req_mode = LW_REQ_SYSCALL;
	out_open(&o, true);
	lw_render_set_skip(o.r, "");
	lw_render_summary(o.r, &sum, NULL);
	s = out_close(&o);
	assert_json(s, "d['not_attached_why']['sk_data_ready'] == 'not used by --request syscall' "
		       "and d['not_attached_why']['cpu_frequency'] == 'not in this kernel'");
	out_free(&o);

	/* never set: a capture that did not record its --skip */
	s = summary_out(&o, &sum, true);
	assert_json(s, "d['not_attached_why']['khugepaged'] == 'skipped or not in this kernel'");
	out_free(&o);
	sum.flags = 0;
	s = summary_out(&o, &sum, true);
	assert_json(s, "d['not_attached'] == [] and d['not_attached_why'] == {}");
	out_free(&o);
}

/* Requests answered by another thread: said under the requests line, with
 * their slow ones and latency; a record of one has no cause. */
static void test_handoff(void **state)
{
	struct lw_request r = req(1, 9000, 0, 0, 0, 0, 0, 0, 0);
	struct lw_summary sum;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_NONE, 2000000, "server");
	assert_lacks(summary_out(&o, &sum, false), "handed off");
	out_free(&o);

	sum.handoffs = 40;
	sum.handoff_slow = 3;
	sum.handoff_slow_ns = 12000000;
	s = summary_out(&o, &sum, false);
	assert_has(s, "slow (> 2.00 ms): 2\n  handed off: 40 requests (3 of them slow, 12.00 ms) "
		      "were answered by another thread than the one that read them (a thread "
		      "pool, goroutines moving between threads): their latency is measured, their "
		      "time is not split into causes (the shares below are over the other slow "
		      "requests)\n");
	out_free(&o);

	/* every slow request handed off: nothing to split, and it says why */
	sum.slow_requests = 0;
	s = summary_out(&o, &sum, false);
	assert_has(s, "No slow requests could be split into causes: every one was handed off.\n");
	out_free(&o);

	s = summary_out(&o, &sum, true);
	assert_json(s, "d['handoffs'] == 40 and d['handoff_slow_requests'] == 3");
	out_free(&o);

	r.flags = LW_REQ_HANDOFF;
	out_open(&o, true);
	lw_request_write(o.f, &r);
	s = out_close(&o);
	assert_json(s,
		    "d['handed_off'] is True and d['cause'] is None and d['latency_ns'] == 9000");
	out_free(&o);
}

/* pid 0 is the idle task: the wait was a wake-up latency, not a preemptor */
static void test_summary_text_idle_wait(void **state)
{
	struct lw_summary sum;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_NONE, 2000000, "server");
	sum.preempt[1] = sum.preempt[0];
	sum.preempt[0].pid = 0;
	sum.preempt[0].tgid = 0;
	snprintf(sum.preempt[0].comm, sizeof(sum.preempt[0].comm), "swapper/1");
	sum.preempt[0].ns = 5000;
	sum.preempt[0].count = 4;
	sum.nr_preempt = 2;
	out_open(&o, false);
	lw_render_summary(o.r, &sum, NULL);
	s = out_close(&o);
	assert_has(s, "CPU idle while it waited: 5.0 us over 4 wake-ups");
	assert_lacks(s, "swapper/1");
	assert_has(s, "ran instead of it: hog (pid 777) 800 ns over 2 waits");
	assert_has(s, "slow requests waited longest for hog (pid 777): in 1 of 2, 300 ns\n");
	out_free(&o);

	/* an idle CPU that polled (power:cpu_idle): no exit latency to blame */
	sum.preempt[0].pid = LW_PID_IDLE_POLL;
	snprintf(sum.preempt[0].comm, sizeof(sum.preempt[0].comm), "idle (polling)");
	sum.slow_waits[0].pid = LW_PID_IDLE_POLL;
	out_open(&o, false);
	lw_render_summary(o.r, &sum, NULL);
	s = out_close(&o);
	assert_has(s, "  CPU idle but polling while it waited (no C-state to leave): 5.0 us over 4 "
		      "wake-ups (the wake-up itself, or a vCPU its host did not run)\n");
	assert_lacks(s, "CPU idle while it waited");
	assert_has(s, "slow requests waited longest for a polling idle CPU to switch: in 1 of 2");
	out_free(&o);

	/* their time: kept beside running and blocked, not a cause */
	sum.bucket_ns[LW_B_IDLE] = 5000;
	sum.bucket_ns[LW_B_IDLE_POLL] = 400;
	out_open(&o, false);
	lw_render_summary(o.r, &sum, NULL);
	s = out_close(&o);
	assert_has(s, ", waiting for a polling idle CPU 10.0%)\n");
	out_free(&o);
	assert_json(summary_out(&o, &sum, true), "d['ns']['idle_polled'] == 400");
	out_free(&o);
	sum.bucket_ns[LW_B_IDLE_POLL] = 0;

	/* without cpu_idle, said where idle time was counted */
	sum.flags = LW_META_NO_IDLE_STATE;
	sum.bucket_ns[LW_B_IDLE] = 0;
	assert_lacks(summary_out(&o, &sum, false), "no idle states");
	out_free(&o);
	sum.bucket_ns[LW_B_IDLE] = 5000;
	assert_has(summary_out(&o, &sum, false),
		   "  no idle states (cpu_idle): a wait for an idle CPU counts as its exit from "
		   "idle, also where the CPU only polled\n");
	out_free(&o);
	assert_json(summary_out(&o, &sum, true),
		    "d['not_attached'] == ['cpu_idle'] and d['ns']['idle_polled'] is None");
	out_free(&o);
}

/* latwhy's own waits are named as the tracer's, in text and JSON, and the
 * target's other preemptors keep their names */
static void test_tracer_named(void **state)
{
	struct lw_summary sum;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_NONE, 2000000, "server");
	sum.tracer_tgid = 777;
	assert_false(lw_summary_is_tracer(&sum, 778, 0));
	assert_true(lw_summary_is_tracer(&sum, 778, 777));
	s = summary_out(&o, &sum, false);
	assert_has(s, "ran instead of it: latwhy (this tracer) 800 ns over 2 waits\n");
	assert_has(s, "slow requests waited longest for latwhy (this tracer): in 1 of 2");
	assert_lacks(s, "hog (pid 777)");
	out_free(&o);
	assert_json(summary_out(&o, &sum, true),
		    "d['evidence']['preempted_by'][0]['tracer'] is True and "
		    "d['evidence']['slow_waits'][0]['tracer'] is True");
	out_free(&o);
	sum.tracer_tgid = 0; /* not known (a record without it) */
	assert_has(summary_out(&o, &sum, false), "ran instead of it: hog (pid 777)");
	out_free(&o);
}

static void test_summary_text_freq(void **state)
{
	struct lw_summary sum;
	struct lw_findings fs;
	struct out o;
	const char *s;

	build_summary(&sum, LW_FREQ_TRACEPOINT, 2000000, "server");
	build_findings(&fs);
	out_open(&o, false);
	lw_render_summary(o.r, &sum, &fs);
	s = out_close(&o);
	assert_has(s, "clock: 1200-2400 MHz of 3000 MHz (cpu_frequency tracepoint)\n"
		      "  clock per CPU, last reading: cpu 1 1200 MHz, cpu 2 2400 MHz\n");
	assert_has(s, "  frequency    2.5%  100 ns");
	assert_has(s, "  thp         37.5%  1.5 us     cause of 1 slow requests  <- dominant\n");
	assert_lacks(s, "no frequency data");
	assert_has(s, "Findings:\n  [warn] thp: THP always\n");
	assert_has(s, "    fix:      echo never > /sys/kernel/mm/transparent_hugepage/enabled\n");
	assert_has(s, "    rollback: echo always > /sys/kernel/mm/transparent_hugepage/enabled\n");
	out_free(&o);
	/* CPUs at one clock in a row are one range; one without a clock is
	 * left out */
	sum.nr_cpu_khz = 6;
	sum.cpu_khz[3] = 2400000;
	sum.cpu_khz[5] = 800000;
	out_open(&o, false);
	lw_render_summary(o.r, &sum, NULL);
	assert_has(out_close(&o),
		   "  clock per CPU, last reading: cpu 1 1200 MHz, cpus 2-3 2400 MHz, "
		   "cpu 5 800 MHz\n");
	out_free(&o);
	lw_findings_free(&fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_json_exact),
		cmocka_unit_test(test_request_json_freq_known),
		cmocka_unit_test(test_request_json_escape),
		cmocka_unit_test(test_request_json_ndjson),
		cmocka_unit_test(test_summary_json),
		cmocka_unit_test(test_summary_json_no_freq),
		cmocka_unit_test(test_summary_json_threshold_unknown),
		cmocka_unit_test(test_summary_json_escape),
		cmocka_unit_test(test_summary_text_no_freq),
		cmocka_unit_test(test_summary_text_idle_wait),
		cmocka_unit_test(test_summary_text_freq),
		cmocka_unit_test(test_summary_tiers),
		cmocka_unit_test(test_tracer_named),
		cmocka_unit_test(test_summary_no_arrival),
		cmocka_unit_test(test_backlog_evidence),
		cmocka_unit_test(test_not_attached_why),
		cmocka_unit_test(test_irq_entry),
		cmocka_unit_test(test_handoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
