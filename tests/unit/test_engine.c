// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_engine.c - the analysis engine: synthetic records in, attribution,
 * shares and evidence out. Exact values throughout.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advice/finding.h" /* lw_softirq_unit() */
#include "engine/engine.h"

#define EPS 1e-9

/* A request with its buckets; ns order: run freq irq softirq thp sched blocked. */
static struct lw_request req(__u32 cpu, __u64 latency, __u64 run, __u64 freq, __u64 irq,
			     __u64 softirq, __u64 thp, __u64 sched, __u64 blocked)
{
	struct lw_request r;

	memset(&r, 0, sizeof(r));
	r.type = LW_REC_REQUEST;
	r.pid = 100;
	r.tid = 101;
	r.cpu = cpu;
	strcpy(r.comm, "srv");
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

static void feed_req(struct lw_engine *e, struct lw_request r)
{
	assert_int_equal(lw_engine_feed(e, &r, sizeof(r)), 0);
}

static void feed_irq(struct lw_engine *e, __u32 irq, __u32 cpu, const char *name, __u64 ns,
		     __u64 count)
{
	struct lw_irq_rec r = {
		.type = LW_REC_IRQ, .irq = irq, .cpu = cpu, .ns = ns, .count = count};

	snprintf(r.name, sizeof(r.name), "%s", name);
	assert_int_equal(lw_engine_feed(e, &r, sizeof(r)), 0);
}

static void feed_softirq(struct lw_engine *e, __u32 vec, __u32 cpu, __u64 ns, __u64 count)
{
	struct lw_softirq_rec r = {
		.type = LW_REC_SOFTIRQ, .vec = vec, .cpu = cpu, .ns = ns, .count = count};

	assert_int_equal(lw_engine_feed(e, &r, sizeof(r)), 0);
}

static void feed_preempt(struct lw_engine *e, __u32 pid, const char *comm, __u64 ns, __u64 count)
{
	struct lw_preempt_rec r = {.type = LW_REC_PREEMPT, .pid = pid, .ns = ns, .count = count};

	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	assert_int_equal(lw_engine_feed(e, &r, sizeof(r)), 0);
}

static void feed_cpu(struct lw_engine *e, __u32 cpu, __u32 khz, __u32 ref_khz)
{
	struct lw_cpu_rec r = {
		.type = LW_REC_CPU, .cpu = cpu, .khz = khz, .ref_khz = ref_khz, .events = 1};

	assert_int_equal(lw_engine_feed(e, &r, sizeof(r)), 0);
}

static void feed_meta(struct lw_engine *e, enum lw_freq_source src, __u64 threshold)
{
	struct lw_meta_rec m = {.type = LW_REC_META,
				.pid = 4242,
				.flags = LW_META_NO_THP,
				.freq_source = src,
				.nr_cpus = 4,
				.start_ns = 1000,
				.duration_ns = 30000000000ULL,
				.threshold_ns = threshold,
				.dropped = 7,
				.requests = 0};

	strcpy(m.comm, "server");
	assert_int_equal(lw_engine_feed(e, &m, sizeof(m)), 0);
}

static void feed_tick(struct lw_engine *e, __u64 ts, __u64 requests, __u64 p50, __u64 p99,
		      __u64 threshold)
{
	struct lw_tick_rec t = {.type = LW_REC_TICK,
				.ts_ns = ts,
				.requests = requests,
				.p50_ns = p50,
				.p99_ns = p99,
				.threshold_ns = threshold};

	assert_int_equal(lw_engine_feed(e, &t, sizeof(t)), 0);
}

static int setup(void **state)
{
	*state = lw_engine_new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	lw_engine_free(*state);
	return 0;
}

/* ---- lw_request_cause --------------------------------------------------- */

static void test_cause_largest(void **state)
{
	struct lw_request r;

	r = req(0, 1000, 0, 400, 100, 0, 200, 300, 0);
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_FREQ);
	r = req(0, 1000, 0, 100, 400, 0, 200, 300, 0);
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_IRQ);
	r = req(0, 1000, 0, 100, 0, 400, 200, 300, 0); /* softirq alone counts as irq */
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_IRQ);
	r = req(0, 1000, 0, 100, 100, 0, 400, 300, 0);
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_THP);
	r = req(0, 1000, 0, 100, 100, 0, 200, 400, 0);
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_SCHED);
	/* irq and softirq are summed: 300 + 300 beats sched 500 */
	r = req(0, 1100, 0, 0, 300, 300, 0, 500, 0);
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_IRQ);
	/* run and blocked are not causes, however large */
	r = req(0, 100000, 55000, 0, 0, 0, 0, 5000, 40000);
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_SCHED);
	/* an idle CPU's wake-up is its own cause, not sched's */
	r = req(0, 1000, 100, 0, 100, 0, 0, 200, 0);
	r.ns[LW_B_IDLE] = 600;
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_IDLE);
	r.ns[LW_B_IDLE] = 150;
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_SCHED);
	/* the part of it a polling CPU took is no cause: sched again */
	r.ns[LW_B_IDLE] = 600;
	r.ns[LW_B_IDLE_POLL] = 500;
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_SCHED);
	/* all of it polled, nothing else: no cause at all */
	r = req(0, 1000, 400, 0, 0, 0, 0, 0, 0);
	r.ns[LW_B_IDLE] = 600;
	r.ns[LW_B_IDLE_POLL] = 600;
	assert_true(lw_request_consistent(&r));
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_NONE);
}

/* The interrupts' entry and exit (IRQ_ENTRY) is a part of IRQ, as FREQ is of
 * RUN: not an addend, and in the irq cause with the rest of IRQ. The cost
 * per interrupt comes from the run's meta record. */
static void test_irq_entry(void **state)
{
	struct lw_engine *e = *state;
	struct lw_request r = req(1, 1000, 300, 0, 450, 50, 0, 200, 0);
	struct lw_meta_rec m = {.type = LW_REC_META, .pid = 4242, .irq_entry_ns = 10500};
	struct lw_summary s;

	r.ns[LW_B_IRQ_ENTRY] = 400;
	assert_true(lw_request_consistent(&r));
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_IRQ);
	r.ns[LW_B_RUN] = 700; /* counted twice: not consistent */
	assert_false(lw_request_consistent(&r));
	r.ns[LW_B_RUN] = 300;
	feed_req(e, r);
	assert_int_equal(lw_engine_feed(e, &m, sizeof(m)), 0);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.irq_entry_ns, 10500);
	assert_int_equal(s.bucket_ns[LW_B_IRQ_ENTRY], 400);
	assert_int_equal(s.cause[LW_CAUSE_IRQ].ns, 500);
	assert_true(fabs(s.cause[LW_CAUSE_IRQ].share - 0.5) < EPS);
	assert_string_equal(lw_bucket_name(LW_B_IRQ_ENTRY), "irq_entry");
}

/* Waits for a polling idle CPU are kept (bucket IDLE_POLL, a part of IDLE)
 * but count for no cause's share. */
static void test_idle_polled(void **state)
{
	struct lw_engine *e = *state;
	struct lw_request r = req(1, 1000, 300, 0, 0, 0, 0, 100, 0);
	struct lw_summary s;

	r.ns[LW_B_IDLE] = 600;
	r.ns[LW_B_IDLE_POLL] = 450;
	feed_req(e, r);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.bucket_ns[LW_B_IDLE], 600);
	assert_int_equal(s.bucket_ns[LW_B_IDLE_POLL], 450);
	assert_int_equal(s.cause[LW_CAUSE_IDLE].ns, 150);
	assert_true(fabs(s.cause[LW_CAUSE_IDLE].share - 0.15) < EPS);
	assert_int_equal(s.cause[LW_CAUSE_IDLE].requests, 1);
}

/* Idle wake-ups add up with the other buckets and make a summary cause of
 * their own, with a share and a dominant verdict like any other. */
static void test_idle_cause(void **state)
{
	struct lw_engine *e = *state;
	struct lw_request r = req(1, 1000, 300, 0, 0, 0, 0, 100, 0);
	struct lw_summary s;

	r.ns[LW_B_IDLE] = 600;
	assert_true(lw_request_consistent(&r));
	feed_req(e, r);
	feed_req(e, req(1, 1000, 500, 0, 0, 0, 0, 500, 0));
	lw_engine_summarize(e, &s);
	assert_int_equal(s.bucket_ns[LW_B_IDLE], 600);
	assert_int_equal(s.cause[LW_CAUSE_IDLE].ns, 600);
	assert_int_equal(s.cause[LW_CAUSE_IDLE].requests, 1);
	assert_int_equal(s.cause[LW_CAUSE_SCHED].ns, 600);
	assert_int_equal(s.cause[LW_CAUSE_SCHED].requests, 1);
	assert_true(fabs(s.cause[LW_CAUSE_IDLE].share - 0.3) < EPS);
	/* a tie goes to the cause scanned first: sched */
	assert_int_equal(s.dominant, LW_CAUSE_SCHED);
	feed_req(e, r);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.dominant, LW_CAUSE_IDLE);
}

/* A throttled wait is quota's: an addend beside sched and idle, the cause
 * where it is the largest, counted in the quota waits; a request without
 * the bucket measured (ABI 1) says nothing of it. */
static void test_quota_cause(void **state)
{
	struct lw_engine *e = *state;
	/* 80 ms: 300 us run, 200 us behind a task, 100 us idle exit, the rest
	 * its cgroup throttled */
	struct lw_request r = req(1, 80000000, 300000, 0, 0, 0, 0, 200000, 0);
	struct lw_request q2 = req(1, 40000000, 300000, 0, 0, 0, 0, 30000000, 0);
	struct lw_summary s;

	r.ns[LW_B_IDLE] = 100000;
	r.ns[LW_B_QUOTA] = 79400000;
	r.flags = LW_REQ_QUOTA_KNOWN;
	assert_true(lw_request_consistent(&r));
	r.ns[LW_B_QUOTA] -= 1000000; /* 1.25% short: the sum must hold it */
	assert_false(lw_request_consistent(&r));
	r.ns[LW_B_QUOTA] += 1000000;
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_QUOTA);
	/* sched larger than the throttled part: sched's */
	q2.ns[LW_B_QUOTA] = 9700000;
	q2.flags = LW_REQ_QUOTA_KNOWN;
	assert_true(lw_request_consistent(&q2));
	assert_int_equal(lw_request_cause(&q2), LW_CAUSE_SCHED);
	feed_req(e, r);
	feed_req(e, q2);
	lw_engine_summarize(e, &s);
	assert_true(s.cause[LW_CAUSE_QUOTA].measured);
	assert_int_equal(s.cause[LW_CAUSE_QUOTA].ns, 79400000 + 9700000);
	assert_int_equal(s.cause[LW_CAUSE_QUOTA].requests, 1);
	assert_int_equal(s.cause[LW_CAUSE_SCHED].requests, 1);
	assert_int_equal(s.cause[LW_CAUSE_IDLE].ns, 100000);
	assert_int_equal(s.dominant, LW_CAUSE_QUOTA);
	assert_int_equal(s.quota_waits, 2);
	assert_int_equal(s.quota_wait_ns, 79400000 + 9700000);
	assert_int_equal(s.quota_wait_max_ns, 79400000);
}

static void test_cause_none(void **state)
{
	struct lw_request r = req(0, 0, 0, 0, 0, 0, 0, 0, 0);

	assert_int_equal(lw_request_cause(&r), LW_CAUSE_NONE);
	r = req(0, 5000, 3000, 0, 0, 0, 0, 0, 2000);
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_NONE);
}

/* Below LW_REQ_CAUSE_MIN_PCT of the latency the largest cause is not the
 * verdict: the request was slow for its own run or sleep. */
static void test_cause_min_share(void **state)
{
	static const struct {
		__u64 latency, run, sched, idle, blocked;
		enum lw_cause want;
	} t[] = {
		/* 3 us of idle in a 750 us request that ran for the rest */
		{750000, 747000, 0, 3000, 0, LW_CAUSE_NONE},
		/* a halted vCPU's 30 us in 350 us is its cause */
		{350000, 320000, 0, 30000, 0, LW_CAUSE_IDLE},
		{100000, 60000, 1, 0, 39999, LW_CAUSE_NONE},
		/* exactly the minimum names it, just under does not */
		{100000, 95000, 5000, 0, 0, LW_CAUSE_SCHED},
		{100000, 95001, 4999, 0, 0, LW_CAUSE_NONE},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct lw_request r =
			req(0, t[i].latency, t[i].run, 0, 0, 0, 0, t[i].sched, t[i].blocked);

		r.ns[LW_B_IDLE] = t[i].idle;
		assert_int_equal(lw_request_cause(&r), t[i].want);
	}
}

/* Ties: the comparison is strict (>), scanning FREQ, IRQ, THP, SCHED, so the
 * lowest enum value among the tied causes wins. */
static void test_cause_ties(void **state)
{
	struct lw_request r;

	r = req(0, 1000, 0, 200, 100, 100, 200, 200, 0); /* all four = 200 */
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_FREQ);
	r = req(0, 1000, 0, 0, 150, 50, 200, 200, 0); /* irq, thp, sched tie */
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_IRQ);
	r = req(0, 1000, 0, 0, 0, 0, 200, 200, 0);
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_THP);
	r = req(0, 1000, 0, 100, 0, 0, 0, 100, 0);
	assert_int_equal(lw_request_cause(&r), LW_CAUSE_FREQ);
}

/* ---- lw_request_consistent ---------------------------------------------- */

static void test_consistent(void **state)
{
	struct lw_request r;

	r = req(0, 10000, 5000, 0, 0, 0, 0, 5000, 0); /* exact */
	assert_true(lw_request_consistent(&r));
	r = req(0, 10000, 5000, 0, 0, 0, 0, 4950, 0); /* 0.5% under */
	assert_true(lw_request_consistent(&r));
	r = req(0, 10000, 5000, 0, 0, 0, 0, 4900, 0); /* exactly 1% under */
	assert_true(lw_request_consistent(&r));
	r = req(0, 10000, 5000, 0, 0, 0, 0, 5100, 0); /* exactly 1% over */
	assert_true(lw_request_consistent(&r));
	r = req(0, 10000, 5000, 0, 0, 0, 0, 4800, 0); /* 2% under */
	assert_false(lw_request_consistent(&r));
	r = req(0, 10000, 5000, 0, 0, 0, 0, 5200, 0); /* 2% over */
	assert_false(lw_request_consistent(&r));
	r = req(0, 10000, 5000, 0, 0, 0, 0, 4899, 0); /* just over 1% */
	assert_false(lw_request_consistent(&r));
	/* every non-FREQ bucket is an addend */
	r = req(0, 10000, 4000, 0, 1000, 1000, 1000, 2000, 1000);
	assert_true(lw_request_consistent(&r));
	/* FREQ is part of RUN: a large FREQ must not be added */
	r = req(0, 10000, 6000, 3000, 0, 0, 0, 4000, 0);
	assert_true(lw_request_consistent(&r));
	/* ...and cannot make up for a missing addend */
	r = req(0, 10000, 6000, 4000, 0, 0, 0, 0, 0);
	assert_false(lw_request_consistent(&r));
	r = req(0, 0, 0, 0, 0, 0, 0, 0, 0);
	assert_true(lw_request_consistent(&r));
}

/* ---- summary: totals, shares, dominant, counts -------------------------- */

static void test_summary_shares(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	/* A: cause sched (300); B: cause thp (1500). Total slow latency 4000. */
	feed_req(e, req(1, 1000, 400, 100, 100, 50, 0, 300, 150));
	feed_req(e, req(2, 3000, 1000, 0, 0, 0, 1500, 500, 0));
	lw_engine_summarize(e, &s);

	assert_int_equal(s.slow_requests, 2);
	assert_int_equal(s.slow_latency_ns, 4000);
	assert_int_equal(s.bucket_ns[LW_B_RUN], 1400);
	assert_int_equal(s.bucket_ns[LW_B_FREQ], 100);
	assert_int_equal(s.bucket_ns[LW_B_IRQ], 100);
	assert_int_equal(s.bucket_ns[LW_B_SOFTIRQ], 50);
	assert_int_equal(s.bucket_ns[LW_B_THP], 1500);
	assert_int_equal(s.bucket_ns[LW_B_SCHED], 800);
	assert_int_equal(s.bucket_ns[LW_B_BLOCKED], 150);

	assert_int_equal(s.cause[LW_CAUSE_FREQ].ns, 100);
	assert_int_equal(s.cause[LW_CAUSE_IRQ].ns, 150);
	assert_int_equal(s.cause[LW_CAUSE_THP].ns, 1500);
	assert_int_equal(s.cause[LW_CAUSE_SCHED].ns, 800);
	assert_true(fabs(s.cause[LW_CAUSE_FREQ].share - 100.0 / 4000.0) < EPS);
	assert_true(fabs(s.cause[LW_CAUSE_IRQ].share - 150.0 / 4000.0) < EPS);
	assert_true(fabs(s.cause[LW_CAUSE_THP].share - 0.375) < EPS);
	assert_true(fabs(s.cause[LW_CAUSE_SCHED].share - 0.2) < EPS);
	assert_int_equal(s.dominant, LW_CAUSE_THP);

	assert_int_equal(s.cause[LW_CAUSE_NONE].requests, 0);
	assert_int_equal(s.cause[LW_CAUSE_FREQ].requests, 0);
	assert_int_equal(s.cause[LW_CAUSE_IRQ].requests, 0);
	assert_int_equal(s.cause[LW_CAUSE_THP].requests, 1);
	assert_int_equal(s.cause[LW_CAUSE_SCHED].requests, 1);

	/* CPUs the slow requests ended on */
	assert_int_equal(s.cpus_mask[0], (1ULL << 1) | (1ULL << 2));
	for (size_t i = 1; i < LW_MAX_CPUS / 64; i++)
		assert_int_equal(s.cpus_mask[i], 0);
}

static void test_summary_empty(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	lw_engine_summarize(e, &s);
	assert_int_equal(s.slow_requests, 0);
	assert_int_equal(s.slow_latency_ns, 0);
	for (int c = 0; c < LW_CAUSE_MAX; c++) {
		assert_int_equal(s.cause[c].ns, 0);
		assert_true(s.cause[c].share == 0.0);
	}
	assert_int_equal(s.dominant, LW_CAUSE_NONE);
	assert_int_equal(s.threshold_ns, LW_THRESH_UNKNOWN);
	assert_false(s.threshold_fixed);
	assert_false(s.freq_measured);
	assert_int_equal(s.freq_source, LW_FREQ_NONE);
	assert_int_equal(s.nr_irqs, 0);
	assert_int_equal(s.nr_softirqs, 0);
	assert_int_equal(s.nr_preempt, 0);
	{
		const struct lw_request *v;

		assert_int_equal(lw_engine_requests(e, &v), 0);
	}
}

static void test_dominant_threshold(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	/* baseline: every cause 9% of 10000 */
	feed_req(e, req(0, 10000, 5000, 900, 500, 400, 900, 900, 2300));
	feed_req(e, req(0, 10000, 5000, 900, 450, 450, 900, 900, 2300));
	lw_engine_summarize(e, &s);
	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_SCHED; c++)
		assert_true(fabs(s.cause[c].share - 0.09) < EPS);
	assert_int_equal(s.dominant, LW_CAUSE_NONE);
	/* per-request causes: ties at 900 -> FREQ for both */
	assert_int_equal(s.cause[LW_CAUSE_FREQ].requests, 2);

	/* exactly 10% is enough */
	feed_req(e, req(0, 10000, 5000, 0, 0, 0, 0, 1200, 3800));
	lw_engine_summarize(e, &s);
	/* sched = 900 + 900 + 1200 = 3000 of 30000 = 10% */
	assert_int_equal(s.cause[LW_CAUSE_SCHED].ns, 3000);
	assert_int_equal(s.slow_latency_ns, 30000);
	assert_true(fabs(s.cause[LW_CAUSE_SCHED].share - 0.10) < EPS);
	assert_int_equal(s.dominant, LW_CAUSE_SCHED);
	assert_int_equal(s.cause[LW_CAUSE_SCHED].requests, 1);
}

/* Equal shares: the lowest enum value wins, as for a single request. */
static void test_dominant_tie(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_req(e, req(0, 10000, 4000, 2000, 0, 0, 0, 2000, 4000));
	feed_req(e, req(0, 10000, 4000, 0, 1000, 1000, 2000, 0, 2000));
	lw_engine_summarize(e, &s);
	assert_true(fabs(s.cause[LW_CAUSE_FREQ].share - 0.1) < EPS);
	assert_true(fabs(s.cause[LW_CAUSE_IRQ].share - 0.1) < EPS);
	assert_true(fabs(s.cause[LW_CAUSE_THP].share - 0.1) < EPS);
	assert_true(fabs(s.cause[LW_CAUSE_SCHED].share - 0.1) < EPS);
	assert_int_equal(s.dominant, LW_CAUSE_FREQ);
	/* A: freq = sched = 2000 -> FREQ; B: irq = thp = 2000 -> IRQ */
	assert_int_equal(s.cause[LW_CAUSE_FREQ].requests, 1);
	assert_int_equal(s.cause[LW_CAUSE_IRQ].requests, 1);
}

static void test_cause_request_counts(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_req(e, req(0, 1000, 1000, 0, 0, 0, 0, 0, 0));	/* none */
	feed_req(e, req(0, 1000, 500, 0, 0, 0, 0, 0, 500));	/* none */
	feed_req(e, req(0, 1000, 500, 300, 100, 0, 0, 0, 400)); /* freq */
	feed_req(e, req(0, 1000, 500, 0, 100, 100, 0, 0, 300)); /* irq */
	feed_req(e, req(0, 1000, 500, 0, 0, 0, 100, 0, 400));	/* thp */
	feed_req(e, req(0, 1000, 500, 0, 0, 0, 100, 200, 200)); /* sched */
	feed_req(e, req(0, 1000, 500, 0, 0, 0, 0, 300, 200));	/* sched */
	feed_req(e, req(0, 1000, 500, 0, 0, 0, 0, 400, 100));	/* sched */
	lw_engine_summarize(e, &s);
	assert_int_equal(s.slow_requests, 8);
	assert_int_equal(s.cause[LW_CAUSE_NONE].requests, 2);
	assert_int_equal(s.cause[LW_CAUSE_FREQ].requests, 1);
	assert_int_equal(s.cause[LW_CAUSE_IRQ].requests, 1);
	assert_int_equal(s.cause[LW_CAUSE_THP].requests, 1);
	assert_int_equal(s.cause[LW_CAUSE_SCHED].requests, 3);
	assert_int_equal(s.cause[LW_CAUSE_IDLE].requests, 0);
	assert_int_equal(s.cause[LW_CAUSE_QUOTA].requests, 0);
}


/* ---- memory and the verdict over the excess ------------------------------ */

/* The precedence of docs/model.md, as memory.bpf.h applies it: compaction
 * is thp's inside a fault or reclaim; reclaim inside a fault is reclaim's; a
 * huge-page fault is thp's; a sleep in a fault is its wait, in a memory
 * stall outside both memory_high's. */
static void test_memory_precedence(void **state)
{
	__u64 ns[LW_B_MAX] = {0}, v[LW_CAUSE_MAX];

	(void)state;
	assert_int_equal(lw_mem_run_bucket(0, 0), LW_B_RUN);
	assert_int_equal(lw_mem_run_bucket(0, LW_MEM_FAULT), LW_B_FAULT);
	assert_int_equal(lw_mem_run_bucket(1, LW_MEM_FAULT), LW_B_THP);
	assert_int_equal(lw_mem_run_bucket(0, LW_MEM_FAULT | LW_MEM_HUGE), LW_B_THP);
	assert_int_equal(lw_mem_run_bucket(0, LW_MEM_FAULT | LW_MEM_RECLAIM), LW_B_RECLAIM);
	assert_int_equal(lw_mem_run_bucket(1, LW_MEM_RECLAIM | LW_MEM_MEMCG), LW_B_THP);
	assert_int_equal(lw_mem_run_bucket(0, LW_MEM_RECLAIM | LW_MEM_MEMCG), LW_B_RECLAIM);
	assert_int_equal(lw_mem_sleep_bucket(0, 0, 0), LW_B_BLOCKED);
	assert_int_equal(lw_mem_sleep_bucket(0, 0, 1), LW_B_MEMORY_HIGH);
	assert_int_equal(lw_mem_sleep_bucket(0, LW_MEM_FAULT, 1), LW_B_FAULT_WAIT);
	assert_int_equal(lw_mem_sleep_bucket(0, LW_MEM_FAULT | LW_MEM_RECLAIM, 1), LW_B_RECLAIM);
	assert_int_equal(lw_mem_sleep_bucket(1, LW_MEM_FAULT, 1), LW_B_THP);
	/* the cause is the four buckets' sum; irq inside a fault stays irq */
	ns[LW_B_RUN] = 100;
	ns[LW_B_FAULT] = 300;
	ns[LW_B_RECLAIM] = 200;
	ns[LW_B_MEMORY_HIGH] = 50;
	ns[LW_B_FAULT_WAIT] = 50;
	ns[LW_B_IRQ] = 250;
	lw_cause_ns(ns, v);
	assert_int_equal(v[LW_CAUSE_MEMORY], 600);
	assert_int_equal(v[LW_CAUSE_IRQ], 250);
	assert_int_equal(lw_cause_of(v, 950), LW_CAUSE_MEMORY);
}

static struct lw_request mem_req(__u64 latency, __u64 run, __u64 fault, __u64 idle)
{
	struct lw_request r = req(1, latency, run, 0, 0, 0, 0, 0, 0);

	r.ns[LW_B_FAULT] = fault;
	r.ns[LW_B_IDLE] = idle;
	r.flags = LW_REQ_MEMORY_KNOWN;
	r.faults_min = fault / 1000;
	return r;
}

/* Slow requests whose extra time is page faults: memory is the verdict,
 * their faults the evidence. */
static void test_verdict_memory(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_tick(e, 1000000000ULL, 1000, 300000, 3000000, LW_THRESH_UNKNOWN);
	for (int i = 0; i < 10; i++)
		feed_req(e, mem_req(3000000, 400000, 2500000, 100000));
	lw_engine_summarize(e, &s);
	assert_false(s.running_dominant);
	assert_int_equal(s.dominant, LW_CAUSE_MEMORY);
	assert_string_equal(lw_summary_verdict(&s), "memory");
	assert_int_equal(s.excess_ns, 10 * (3000000 - 300000));
	assert_int_equal(s.running_excess_ns, 10 * (400000 - 300000));
	assert_int_equal(s.mem_faults_min, 10 * 2500);
	assert_int_equal(s.mem_requests, 10);
	assert_true(s.cause[LW_CAUSE_MEMORY].measured);
}

/* The case: running held 75% of the slow requests' time, idle 11%.
 * The verdict is running, not idle; dominant still names idle, the largest
 * kernel cause. */
static void test_verdict_running(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_tick(e, 1000000000ULL, 1000, 300000, 3000000, LW_THRESH_UNKNOWN);
	for (int i = 0; i < 10; i++)
		feed_req(e, mem_req(3000000, 2250000, 90000, 330000));
	lw_engine_summarize(e, &s);
	assert_true(s.running_dominant);
	assert_int_equal(s.dominant, LW_CAUSE_IDLE);
	assert_string_equal(lw_summary_verdict(&s), "running");
	assert_true(lw_summary_excess_share(&s, s.running_excess_ns) > 0.70);
	assert_true(lw_summary_excess_share(&s, s.cause[LW_CAUSE_IDLE].ns) < 0.15);
}

/* No p50 known (a capture cut before its first tick): the excess is the
 * whole latency, and a kernel cause larger than the run still wins. */
static void test_verdict_no_typical(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_req(e, mem_req(1000000, 300000, 700000, 0));
	lw_engine_summarize(e, &s);
	assert_int_equal(s.excess_ns, 1000000);
	assert_false(s.running_dominant);
	assert_string_equal(lw_summary_verdict(&s), "memory");
}

/* ---- evidence ----------------------------------------------------------- */

static void test_irq_snapshot_replaces(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_irq(e, 36, 1, "eth0-rx-1", 100, 1);
	feed_irq(e, 36, 1, "eth0-rx-1", 250, 3);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.nr_irqs, 1);
	assert_int_equal(s.irqs[0].irq, 36);
	assert_int_equal(s.irqs[0].cpu, 1);
	assert_int_equal(s.irqs[0].ns, 250);
	assert_int_equal(s.irqs[0].count, 3);
	assert_string_equal(s.irqs[0].name, "eth0-rx-1");

	/* a different cpu, a different irq: separate keys */
	feed_irq(e, 36, 2, "eth0-rx-1", 400, 4);
	feed_irq(e, 37, 1, "eth0-tx-1", 50, 1);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.nr_irqs, 3);
	assert_int_equal(s.irqs[0].irq, 36);
	assert_int_equal(s.irqs[0].cpu, 2);
	assert_int_equal(s.irqs[0].ns, 400);
	assert_int_equal(s.irqs[1].irq, 36);
	assert_int_equal(s.irqs[1].cpu, 1);
	assert_int_equal(s.irqs[1].ns, 250);
	assert_int_equal(s.irqs[2].irq, 37);
	assert_int_equal(s.irqs[2].cpu, 1);
	assert_int_equal(s.irqs[2].ns, 50);
	assert_string_equal(s.irqs[2].name, "eth0-tx-1");

	/* a snapshot may also go down (counter reset): still replaced */
	feed_irq(e, 36, 2, "eth0-rx-1", 10, 1);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.nr_irqs, 3);
	assert_int_equal(s.irqs[0].ns, 250);
	assert_int_equal(s.irqs[2].ns, 10);
	assert_int_equal(s.irqs[2].cpu, 2);
}

static void test_irq_top_capped(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;
	/* 12 keys, fed in a scrambled order */
	static const unsigned order[12] = {5, 11, 0, 7, 3, 9, 1, 10, 6, 2, 8, 4};

	for (int i = 0; i < 12; i++)
		feed_irq(e, 100 + order[i], order[i] % 4, "dev", 1000 * (order[i] + 1), order[i]);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.nr_irqs, LW_TOP);
	for (int i = 0; i < LW_TOP; i++) {
		assert_int_equal(s.irqs[i].irq, 111 - i);
		assert_int_equal(s.irqs[i].ns, 1000 * (12 - i));
		assert_int_equal(s.irqs[i].cpu, (11 - i) % 4);
	}
}

static void test_softirq_snapshot(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_softirq(e, 3, 0, 100, 1); /* NET_RX cpu0 */
	feed_softirq(e, 3, 0, 700, 9);
	feed_softirq(e, 3, 1, 300, 2); /* separate key: other cpu */
	feed_softirq(e, 1, 0, 500, 5); /* separate key: other vec */
	lw_engine_summarize(e, &s);
	assert_int_equal(s.nr_softirqs, 3);
	assert_int_equal(s.softirqs[0].vec, 3);
	assert_int_equal(s.softirqs[0].cpu, 0);
	assert_int_equal(s.softirqs[0].ns, 700);
	assert_int_equal(s.softirqs[0].count, 9);
	assert_int_equal(s.softirqs[1].vec, 1);
	assert_int_equal(s.softirqs[1].ns, 500);
	assert_int_equal(s.softirqs[2].vec, 3);
	assert_int_equal(s.softirqs[2].cpu, 1);
	assert_int_equal(s.softirqs[2].ns, 300);
	assert_string_equal(lw_softirq_name(3), "NET_RX");
	assert_string_equal(lw_softirq_name(9), "RCU");
	assert_string_equal(lw_softirq_name(LW_SOFTIRQ_BACKLOG), "NET_RX_BACKLOG");
	assert_string_equal(lw_softirq_name(LW_SOFTIRQ_KSOFTIRQD), "KSOFTIRQD");
	assert_string_equal(lw_softirq_name(LW_SOFTIRQ_ROWS), "?");
	assert_string_equal(lw_softirq_unit("NET_RX"), "runs");
	assert_string_equal(lw_softirq_unit("NET_RX_BACKLOG"), "waits");
	assert_string_equal(lw_softirq_unit("KSOFTIRQD"), "waits");
}

static void test_preempt_top(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;
	char comm[16];

	/* 12 preemptors, ascending ns, so sorting is needed */
	for (int i = 0; i < 12; i++) {
		snprintf(comm, sizeof(comm), "hog%d", i);
		feed_preempt(e, 2000 + i, comm, 10 * (i + 1), i + 1);
	}
	/* a newer snapshot of pid 2000: replaced, not added, and now on top */
	feed_preempt(e, 2000, "hog0", 5000, 50);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.nr_preempt, LW_TOP);
	assert_int_equal(s.preempt[0].pid, 2000);
	assert_int_equal(s.preempt[0].ns, 5000);
	assert_int_equal(s.preempt[0].count, 50);
	assert_string_equal(s.preempt[0].comm, "hog0");
	for (int i = 1; i < LW_TOP; i++) {
		assert_int_equal(s.preempt[i].pid, 2000 + 12 - i);
		assert_int_equal(s.preempt[i].ns, 10 * (12 - i + 1));
		snprintf(comm, sizeof(comm), "hog%d", 12 - i);
		assert_string_equal(s.preempt[i].comm, comm);
	}
	for (int i = 1; i < LW_TOP; i++)
		assert_true(s.preempt[i - 1].ns >= s.preempt[i].ns);
}

static void test_thp_replaced(void **state)
{
	struct lw_engine *e = *state;
	struct lw_thp_rec t = {.type = LW_REC_THP,
			       .s = {.scans = 10,
				     .collapses = 2,
				     .collapse_fail = 1,
				     .compactions = 3,
				     .compact_ns = 4000,
				     .khugepaged_wake_ns = 5,
				     .khugepaged_run_ns = 6}};
	struct lw_summary s;

	assert_int_equal(lw_engine_feed(e, &t, sizeof(t)), 0);
	t.s.scans = 12;
	t.s.collapses = 3;
	t.s.collapse_fail = 0;
	t.s.compactions = 4;
	t.s.compact_ns = 9000;
	t.s.khugepaged_wake_ns = 7;
	t.s.khugepaged_run_ns = 8;
	assert_int_equal(lw_engine_feed(e, &t, sizeof(t)), 0);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.thp.scans, 12);
	assert_int_equal(s.thp.collapses, 3);
	assert_int_equal(s.thp.collapse_fail, 0);
	assert_int_equal(s.thp.compactions, 4);
	assert_int_equal(s.thp.compact_ns, 9000);
	assert_int_equal(s.thp.khugepaged_wake_ns, 7);
	assert_int_equal(s.thp.khugepaged_run_ns, 8);
}

/* ---- clock -------------------------------------------------------------- */

static void test_cpu_no_source(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_meta(e, LW_FREQ_NONE, LW_THRESH_UNKNOWN);
	feed_cpu(e, 0, 1200000, 3000000);
	feed_req(e, req(0, 1000, 1000, 0, 0, 0, 0, 0, 0));
	lw_engine_summarize(e, &s);
	assert_int_equal(s.freq_source, LW_FREQ_NONE);
	assert_false(s.freq_measured);

	/* no meta at all: no source either */
	lw_engine_free(e);
	*state = e = lw_engine_new();
	feed_cpu(e, 0, 1200000, 3000000);
	lw_engine_summarize(e, &s);
	assert_false(s.freq_measured);
}

static void test_cpu_measured(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_meta(e, LW_FREQ_TRACEPOINT, LW_THRESH_UNKNOWN);
	feed_cpu(e, 0, 800000, 3000000); /* no slow request here: ignored */
	feed_cpu(e, 1, 1200000, 3000000);
	feed_cpu(e, 2, 2400000, 3000000);
	feed_cpu(e, 3, 3500000, 3500000); /* no slow request here: ignored */
	feed_cpu(e, 5, 0, 3000000);	  /* clock unknown: ignored */
	feed_req(e, req(1, 1000, 1000, 0, 0, 0, 0, 0, 0));
	feed_req(e, req(2, 1000, 1000, 0, 0, 0, 0, 0, 0));
	feed_req(e, req(5, 1000, 1000, 0, 0, 0, 0, 0, 0));
	lw_engine_summarize(e, &s);
	assert_int_equal(s.freq_source, LW_FREQ_TRACEPOINT);
	assert_true(s.freq_measured);
	assert_int_equal(s.freq_min_khz, 1200000);
	assert_int_equal(s.freq_max_khz, 2400000);
	assert_int_equal(s.ref_khz, 3000000);

	/* a later snapshot of cpu 1 replaces the earlier one */
	feed_cpu(e, 1, 1800000, 3000000);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.freq_min_khz, 1800000);
	assert_int_equal(s.freq_max_khz, 2400000);
}

static void test_cpu_khz_without_ref(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_meta(e, LW_FREQ_TRACEPOINT, LW_THRESH_UNKNOWN);
	feed_cpu(e, 0, 1200000, 0); /* no reference: not a measurement */
	feed_req(e, req(0, 1000, 1000, 0, 0, 0, 0, 0, 0));
	lw_engine_summarize(e, &s);
	assert_false(s.freq_measured);
	assert_int_equal(s.freq_min_khz, 0);
	assert_int_equal(s.freq_max_khz, 0);
}

/* ---- META and TICK ------------------------------------------------------ */

static void test_meta(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	feed_tick(e, 1000000000ULL, 100, 50000, 900000, 900000);
	feed_meta(e, LW_FREQ_APERF_MPERF, 2000000);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.pid, 4242);
	assert_string_equal(s.comm, "server");
	assert_int_equal(s.flags, LW_META_NO_THP);
	assert_int_equal(s.duration_ns, 30000000000ULL);
	assert_int_equal(s.dropped, 7);
	assert_int_equal(s.freq_source, LW_FREQ_APERF_MPERF);
	assert_true(s.threshold_fixed);
	assert_int_equal(s.threshold_ns, 2000000); /* the fixed --slow, not the tick's */
	assert_int_equal(s.requests, 100);	   /* meta.requests 0: tick sum */

	/* p99 threshold: meta says unknown, the latest tick's threshold is used */
	feed_meta(e, LW_FREQ_NONE, LW_THRESH_UNKNOWN);
	lw_engine_summarize(e, &s);
	assert_false(s.threshold_fixed);
	assert_int_equal(s.threshold_ns, 900000);

	/* meta.requests, when set, wins over the tick sum */
	{
		struct lw_meta_rec m = {.type = LW_REC_META,
					.pid = 9,
					.requests = 12345,
					.threshold_ns = LW_THRESH_UNKNOWN};

		assert_int_equal(lw_engine_feed(e, &m, sizeof(m)), 0);
	}
	lw_engine_summarize(e, &s);
	assert_int_equal(s.pid, 9);
	assert_string_equal(s.comm, "");
	assert_int_equal(s.requests, 12345);
	/* meta duration 0: the ticks' span (a single tick: 0) */
	assert_int_equal(s.duration_ns, 0);
}

/* The source's target (a capture's TARGET facts) until a META record names
 * it: a capture capped before its first snapshot holds none. */
static void test_target_before_meta(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	lw_engine_summarize(e, &s);
	assert_int_equal(s.pid, 0);
	assert_string_equal(s.comm, "");
	lw_engine_set_target(e, 4242, "a-comm-longer-than-fifteen");
	lw_engine_summarize(e, &s);
	assert_int_equal(s.pid, 4242);
	assert_string_equal(s.comm, "a-comm-longer-t"); /* LW_COMM_LEN, cut */
	lw_engine_set_target(e, 4242, NULL);
	lw_engine_summarize(e, &s);
	assert_string_equal(s.comm, "");
	feed_meta(e, LW_FREQ_NONE, LW_THRESH_UNKNOWN);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.pid, 4242);
	assert_string_equal(s.comm, "server"); /* the META record's */
}

static void test_tick(void **state)
{
	struct lw_engine *e = *state;
	struct lw_summary s;

	lw_engine_summarize(e, &s);
	assert_int_equal(s.threshold_ns, LW_THRESH_UNKNOWN);

	feed_tick(e, 5000000000ULL, 100, 10000, 90000, LW_THRESH_UNKNOWN);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.requests, 100);
	assert_int_equal(s.p50_ns, 10000);
	assert_int_equal(s.p99_ns, 90000);
	assert_int_equal(s.threshold_ns, LW_THRESH_UNKNOWN);

	feed_tick(e, 6000000000ULL, 250, 12000, 95000, 95000);
	feed_tick(e, 7000000000ULL, 50, 11000, 99000, 99000);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.requests, 400);
	assert_int_equal(s.p50_ns, 11000); /* the latest tick's quantiles */
	assert_int_equal(s.p99_ns, 99000);
	assert_int_equal(s.threshold_ns, 99000);
	assert_false(s.threshold_fixed);
	assert_int_equal(s.duration_ns, 2000000000ULL); /* no meta: span of ticks */
}

/* ---- lw_engine_feed errors ---------------------------------------------- */

static void test_feed_errors(void **state)
{
	struct lw_engine *e = *state;
	struct lw_request r = req(0, 1000, 1000, 0, 0, 0, 0, 0, 0);
	struct lw_irq_rec irq = {.type = LW_REC_IRQ, .irq = 1, .ns = 5};
	struct lw_meta_rec m = {.type = LW_REC_META};
	struct lw_cpu_rec c = {.type = LW_REC_CPU, .cpu = LW_MAX_CPUS, .khz = 1, .ref_khz = 1};
	__u32 t;
	__u8 big[512] = {0};
	struct lw_summary s;

	assert_int_equal(lw_engine_feed(e, &r, 0), -EINVAL);
	assert_int_equal(lw_engine_feed(e, &r, 3), -EINVAL);
	/* short records of known types */
	assert_int_equal(lw_engine_feed(e, &r, sizeof(r) - 1), -EINVAL);
	assert_int_equal(lw_engine_feed(e, &irq, sizeof(irq) - 8), -EINVAL);
	assert_int_equal(lw_engine_feed(e, &m, sizeof(m) - 1), -EINVAL);
	for (t = LW_REC_REQUEST; t <= LW_REC_META; t++) {
		memcpy(big, &t, sizeof(t));
		assert_int_equal(lw_engine_feed(e, big, sizeof(t)), -EINVAL);
	}
	/* unknown types, even long enough */
	t = 0;
	memcpy(big, &t, sizeof(t));
	assert_int_equal(lw_engine_feed(e, big, sizeof(big)), -EINVAL);
	t = LW_REC_META + 1;
	memcpy(big, &t, sizeof(t));
	assert_int_equal(lw_engine_feed(e, big, sizeof(big)), -EINVAL);
	t = 0xffffffffu;
	memcpy(big, &t, sizeof(t));
	assert_int_equal(lw_engine_feed(e, big, sizeof(big)), -EINVAL);
	/* cpu out of range */
	assert_int_equal(lw_engine_feed(e, &c, sizeof(c)), -EINVAL);

	/* nothing was taken in */
	lw_engine_summarize(e, &s);
	assert_int_equal(s.slow_requests, 0);
	assert_int_equal(s.nr_irqs, 0);
	assert_int_equal(s.pid, 0);

	/* a longer buffer than the record is fine */
	{
		__u8 buf[sizeof(r) + 16] = {0};

		memcpy(buf, &r, sizeof(r));
		assert_int_equal(lw_engine_feed(e, buf, sizeof(buf)), 0);
	}
	lw_engine_summarize(e, &s);
	assert_int_equal(s.slow_requests, 1);
}

/* Every record the engine refuses is counted by kind in the summary, and
 * leaves nothing else behind. */
static void test_engine_errors(void **state)
{
	struct lw_engine *e = *state;
	struct lw_request r = req(0, 1000, 1000, 0, 0, 0, 0, 0, 0);
	struct lw_cpu_rec c = {.type = LW_REC_CPU, .cpu = LW_MAX_CPUS, .khz = 1, .ref_khz = 1};
	__u8 big[64] = {0};
	__u32 t = LW_REC_POD + 1; /* the first type after the last */
	struct lw_summary s;

	lw_engine_summarize(e, &s);
	assert_int_equal(s.engine_errors, 0);
	for (int k = 0; k < LW_EERR_MAX; k++)
		assert_int_equal(s.engine_error[k], 0);

	assert_int_equal(lw_engine_feed(e, &r, sizeof(r) - 1), -EINVAL);
	assert_int_equal(lw_engine_feed(e, &r, 2), -EINVAL);
	memcpy(big, &t, sizeof(t));
	assert_int_equal(lw_engine_feed(e, big, sizeof(big)), -EINVAL);
	assert_int_equal(lw_engine_feed(e, &c, sizeof(c)), -EINVAL);
	/* a histogram is long: 64 bytes of one are short */
	t = LW_REC_HIST;
	memcpy(big, &t, sizeof(t));
	assert_int_equal(lw_engine_feed(e, big, sizeof(big)), -EINVAL);
	feed_req(e, r);

	lw_engine_summarize(e, &s);
	assert_int_equal(s.engine_error[LW_EERR_SHORT], 3);
	assert_int_equal(s.engine_error[LW_EERR_UNKNOWN], 1);
	assert_int_equal(s.engine_error[LW_EERR_INVALID], 1);
	assert_int_equal(s.engine_error[LW_EERR_NOMEM], 0);
	assert_int_equal(s.engine_errors, 5);
	assert_int_equal(s.slow_requests, 1); /* only the whole one */
	assert_int_equal(s.p50_ns, 0);	      /* no histogram was taken */
	assert_string_equal(lw_engine_err_name(LW_EERR_SHORT), "short");
	assert_string_equal(lw_engine_err_name(LW_EERR_UNKNOWN), "unknown type");
	assert_string_equal(lw_engine_err_name(LW_EERR_INVALID), "malformed");
	assert_string_equal(lw_engine_err_name(LW_EERR_NOMEM), "out of memory");
	assert_string_equal(lw_engine_err_name(LW_EERR_MAX), "unknown");
}

/* The engine as a sink: the same as feeding it, errors included. */
static void test_engine_sink(void **state)
{
	struct lw_engine *e = *state;
	struct lw_sink k = lw_engine_sink(e);
	struct lw_request r = req(2, 1000, 400, 0, 0, 0, 0, 600, 0);
	struct lw_summary s;

	assert_ptr_equal(k.ctx, e);
	assert_int_equal(lw_sink_record(&k, &r, sizeof(r)), 0);
	assert_int_equal(lw_sink_record(&k, &r, 3), -EINVAL);
	assert_int_equal(lw_sink_tick(&k, 5), 0);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.slow_requests, 1);
	assert_int_equal(s.engine_error[LW_EERR_SHORT], 1);
}

/* The summary's quantiles come from the latest histogram when there is one,
 * computed as lw_hist_quantile() does, and replace the tick's. */
static void test_hist_record(void **state)
{
	struct lw_engine *e = *state;
	struct lw_hist_rec *h = calloc(1, sizeof(*h));
	__u64 total = 0;
	struct lw_summary s;

	assert_non_null(h);
	h->type = LW_REC_HIST;
	for (__u64 us = 1; us <= 1000; us++)
		h->b[lw_hist_bucket(us * 1000)]++;
	feed_tick(e, 1000000000ULL, 1000, 11, 22, LW_THRESH_UNKNOWN);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.p50_ns, 11); /* no histogram yet: the tick's */
	assert_int_equal(s.p99_ns, 22);
	assert_int_equal(lw_engine_feed(e, h, sizeof(*h)), 0);
	lw_engine_summarize(e, &s);
	for (__u32 i = 0; i < LW_HIST_BUCKETS; i++)
		total += h->b[i];
	assert_int_equal(total, 1000);
	assert_int_equal(s.p50_ns, lw_hist_quantile(h->b, total, 0.50));
	assert_int_equal(s.p99_ns, lw_hist_quantile(h->b, total, 0.99));
	assert_true(s.p50_ns > 400000 && s.p50_ns < 600000);
	assert_int_equal(s.requests, 1000); /* still the ticks' sum */

	/* a cumulative snapshot: the next one replaces it */
	memset(h->b, 0, sizeof(h->b));
	h->b[lw_hist_bucket(5000)] = 4;
	assert_int_equal(lw_engine_feed(e, h, sizeof(*h)), 0);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.p50_ns, lw_hist_quantile(h->b, 4, 0.50));
	assert_true(s.p99_ns <= lw_hist_lower(lw_hist_bucket(5000) + 1));
	free(h);
}

/* Whether each cause was measured is in the summary: frequency where clocks
 * were known, irq and thp unless all their tracepoints were missing. */
static void test_cause_measured(void **state)
{
	struct lw_engine *e = *state;
	struct lw_meta_rec m = {.type = LW_REC_META, .pid = 1, .freq_source = LW_FREQ_NONE};
	struct lw_summary s;

	lw_engine_summarize(e, &s);
	assert_false(s.cause[LW_CAUSE_FREQ].measured);
	assert_true(s.cause[LW_CAUSE_IRQ].measured);
	assert_true(s.cause[LW_CAUSE_THP].measured);
	assert_true(s.cause[LW_CAUSE_SCHED].measured);
	assert_true(s.cause[LW_CAUSE_IDLE].measured);

	m.flags = LW_META_NO_IRQ | LW_META_NO_THP;
	assert_int_equal(lw_engine_feed(e, &m, sizeof(m)), 0);
	lw_engine_summarize(e, &s);
	assert_true(s.cause[LW_CAUSE_IRQ].measured); /* softirq still was */
	assert_true(s.cause[LW_CAUSE_THP].measured); /* compaction still was */

	m.flags = LW_META_NO_IRQ | LW_META_NO_SOFTIRQ | LW_META_NO_THP | LW_META_NO_COMPACT;
	m.freq_source = LW_FREQ_TRACEPOINT;
	assert_int_equal(lw_engine_feed(e, &m, sizeof(m)), 0);
	feed_cpu(e, 0, 2000000, 3000000);
	lw_engine_summarize(e, &s);
	assert_false(s.cause[LW_CAUSE_IRQ].measured);
	assert_false(s.cause[LW_CAUSE_THP].measured);
	assert_true(s.cause[LW_CAUSE_FREQ].measured);
	assert_true(s.cause[LW_CAUSE_SCHED].measured);
}

/* on_request sees each slow request the engine took in, handed-off ones
 * too, after it was counted; none it refused. */
struct seen {
	struct lw_engine *e;
	int n;
	__u64 last_latency;
	__u64 slow_then;
};

static void on_req(void *ctx, const struct lw_request *r)
{
	struct seen *v = ctx;
	struct lw_summary s;

	v->n++;
	v->last_latency = r->latency_ns;
	lw_engine_summarize(v->e, &s);
	v->slow_then = s.slow_requests + s.handoff_slow;
}

static void test_on_request(void **state)
{
	struct lw_engine *e = *state;
	struct seen v = {.e = e};
	struct lw_request r = req(1, 1000, 400, 0, 0, 0, 0, 600, 0);
	struct lw_irq_rec irq = {.type = LW_REC_IRQ, .irq = 1, .ns = 5};

	feed_req(e, r); /* before a callback: nobody told */
	lw_engine_on_request(e, on_req, &v);
	r.latency_ns = 2000;
	r.ns[LW_B_RUN] = 1400;
	feed_req(e, r);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.last_latency, 2000);
	assert_int_equal(v.slow_then, 2);
	assert_int_equal(lw_engine_feed(e, &r, sizeof(r) - 1), -EINVAL);
	assert_int_equal(lw_engine_feed(e, &irq, sizeof(irq)), 0);
	assert_int_equal(v.n, 1); /* neither a short request nor evidence */
	r.flags = LW_REQ_HANDOFF;
	r.latency_ns = 7000;
	feed_req(e, r);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.last_latency, 7000);
	assert_int_equal(v.slow_then, 3);
	lw_engine_on_request(e, NULL, NULL);
	feed_req(e, r);
	assert_int_equal(v.n, 2);
}

/* ---- request ring ------------------------------------------------------- */

static void test_request_ring(void **state)
{
	struct lw_engine *e = *state;
	struct lw_request r = req(3, 1000, 900, 0, 0, 0, 0, 100, 0);
	const struct lw_request *v = NULL;
	struct lw_summary s;
	size_t n;

	r.start_ns = 0;
	assert_int_equal(lw_engine_feed(e, &r, sizeof(r)), 0);
	n = lw_engine_requests(e, &v);
	assert_int_equal(n, 1);
	assert_non_null(v);
	assert_int_equal(v[0].latency_ns, 1000);
	assert_int_equal(v[0].cpu, 3);
	assert_string_equal(v[0].comm, "srv");

	for (__u64 i = 1; i < 100005; i++) {
		r.start_ns = i;
		lw_engine_feed(e, &r, sizeof(r));
	}
	n = lw_engine_requests(e, &v);
	assert_int_equal(n, 100000);
	/* the oldest five were overwritten; all kept ones are distinct */
	{
		__u64 sum = 0;

		for (size_t i = 0; i < n; i++) {
			assert_true(v[i].start_ns >= 5);
			sum += v[i].start_ns;
		}
		/* sum of 5..100004 */
		assert_int_equal(sum, (__u64)100004 * 100005 / 2 - (0 + 1 + 2 + 3 + 4));
	}
	/* totals are over every request fed, not only those kept */
	lw_engine_summarize(e, &s);
	assert_int_equal(s.slow_requests, 100005);
	assert_int_equal(s.slow_latency_ns, 100005ULL * 1000);
	assert_int_equal(s.cause[LW_CAUSE_SCHED].requests, 100005);
}

/* ---- histogram ---------------------------------------------------------- */

static void check_bucket(__u64 v)
{
	__u32 b = lw_hist_bucket(v);
	__u64 lo = lw_hist_lower(b);

	if (b >= LW_HIST_BUCKETS)
		fail_msg("bucket %u of %llu out of range", b, (unsigned long long)v);
	if (!(lo <= v))
		fail_msg("lower(%u) = %llu > %llu", b, (unsigned long long)lo,
			 (unsigned long long)v);
	if (!(v < lw_hist_lower(b + 1)))
		fail_msg("%llu >= lower(%u) = %llu", (unsigned long long)v, b + 1,
			 (unsigned long long)lw_hist_lower(b + 1));
}

static void test_hist_bucket(void **state)
{
	static const __u64 vals[] = {
		8,
		9,
		15,
		16,
		17,
		31,
		32,
		100,
		1000,
		1023,
		1024,
		65535,
		65536,
		123456789,
		1ULL << 32,
		(1ULL << 32) - 1,
		(1ULL << 40) + 5,
		UINT64_MAX / 3,
		1ULL << 62,
		(1ULL << 63) - 1,
		1ULL << 63,
	};

	for (__u64 v = 0; v < 8; v++) {
		assert_int_equal(lw_hist_bucket(v), v);
		assert_int_equal(lw_hist_lower(v), v);
	}
	/* exact small boundaries: 8..15 one per bucket, then width 2 */
	assert_int_equal(lw_hist_bucket(8), 8);
	assert_int_equal(lw_hist_bucket(15), 15);
	assert_int_equal(lw_hist_bucket(16), 16);
	assert_int_equal(lw_hist_bucket(17), 16);
	assert_int_equal(lw_hist_bucket(18), 17);
	assert_int_equal(lw_hist_lower(16), 16);
	assert_int_equal(lw_hist_lower(17), 18);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		check_bucket(vals[i]);
	/* every power of two and its neighbours below 2^63 */
	for (int k = 3; k < 63; k++) {
		check_bucket((1ULL << k) - 1);
		check_bucket(1ULL << k);
		check_bucket((1ULL << k) + 1);
		check_bucket((1ULL << k) + (1ULL << (k - 1)));
	}
	/* a dense sweep, and monotonicity */
	{
		__u32 prev = 0;

		for (__u64 v = 0; v < 200000; v++) {
			__u32 b = lw_hist_bucket(v);

			check_bucket(v);
			assert_true(b >= prev);
			assert_true(b <= prev + 1);
			prev = b;
		}
	}
	/* pseudo-random values across the range */
	{
		__u64 x = 0x9e3779b97f4a7c15ULL;

		for (int i = 0; i < 100000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			check_bucket(x >> (i % 64));
		}
	}
	assert_true(lw_hist_bucket(UINT64_MAX) < LW_HIST_BUCKETS);
	assert_true(lw_hist_lower(lw_hist_bucket(UINT64_MAX)) <= UINT64_MAX);
}

static void test_hist_quantile(void **state)
{
	__u64 *b = calloc(LW_HIST_BUCKETS, sizeof(*b));
	__u64 p50, p99;

	assert_non_null(b);
	assert_int_equal(lw_hist_quantile(b, 0, 0.5), 0);
	assert_int_equal(lw_hist_quantile(b, 0, 0.99), 0);

	for (__u64 us = 1; us <= 1000; us++)
		b[lw_hist_bucket(us * 1000)]++;
	p50 = lw_hist_quantile(b, 1000, 0.50);
	p99 = lw_hist_quantile(b, 1000, 0.99);
	/* exact: rank 500 -> 500 us, rank 990 -> 990 us */
	assert_true(fabs((double)p50 - 500000.0) <= 0.125 * 500000.0);
	assert_true(fabs((double)p99 - 990000.0) <= 0.125 * 990000.0);
	assert_true(p50 < p99);
	/* p100 is at most the top of the last bucket */
	assert_true(lw_hist_quantile(b, 1000, 1.0) <= lw_hist_lower(lw_hist_bucket(1000000) + 1));
	assert_true(lw_hist_quantile(b, 1000, 1.0) >= 1000000 * 7 / 8);

	/* one value: every quantile is inside its bucket */
	memset(b, 0, LW_HIST_BUCKETS * sizeof(*b));
	b[lw_hist_bucket(123456)] = 10;
	p50 = lw_hist_quantile(b, 10, 0.5);
	assert_true(p50 >= lw_hist_lower(lw_hist_bucket(123456)));
	assert_true(p50 <= lw_hist_lower(lw_hist_bucket(123456) + 1));
	assert_true(fabs((double)p50 - 123456.0) <= 0.125 * 123456.0);
	free(b);
}

static void test_names(void **state)
{
	assert_string_equal(lw_freq_source_name(LW_FREQ_NONE), "no frequency data");
	assert_string_equal(lw_freq_source_name(LW_FREQ_TRACEPOINT), "cpu_frequency tracepoint");
	assert_string_equal(lw_bucket_name(LW_B_RUN), "run");
	assert_string_equal(lw_bucket_name(LW_B_FREQ), "frequency");
	assert_string_equal(lw_bucket_name(LW_B_IDLE), "idle");
	assert_string_equal(lw_bucket_name(LW_B_BLOCKED), "blocked");
	assert_string_equal(lw_cause_name(LW_CAUSE_IDLE), "idle");
	assert_string_equal(lw_bucket_name(LW_B_MAX), "unknown");
	assert_string_equal(lw_cause_name(LW_CAUSE_IRQ), "irq");
	assert_string_equal(lw_cause_name(LW_CAUSE_NONE), "none");
}

/* The longest wait of each slow request, summed per task over the slow
 * requests only: a frequent preemptor of fast requests does not count. */
static void test_slow_waits(void **state)
{
	struct lw_engine *e = *state;
	struct lw_request r;
	struct lw_summary s;

	for (int i = 0; i < 5; i++) {
		r = req(1, 1000, 100, 0, 0, 0, 0, 900, 0);
		r.preempt_pid = 777;
		strcpy(r.preempt_comm, "hog");
		r.preempt_ns = 800;
		feed_req(e, r);
	}
	r = req(1, 1000, 100, 0, 0, 0, 0, 900, 0);
	r.preempt_pid = 888;
	strcpy(r.preempt_comm, "cron");
	r.preempt_ns = 900;
	feed_req(e, r);
	/* idle: pid 0 with a wait is the CPU waking up */
	r = req(1, 1000, 100, 0, 0, 0, 0, 900, 0);
	r.preempt_ns = 50;
	feed_req(e, r);
	/* no wait at all: not counted */
	feed_req(e, req(1, 1000, 1000, 0, 0, 0, 0, 0, 0));
	/* the all-requests evidence names another task on top */
	feed_preempt(e, 999, "busy", 1000000, 5000);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.preempt[0].pid, 999);
	assert_int_equal(s.nr_slow_waits, 3);
	assert_int_equal(s.slow_waits[0].pid, 777);
	assert_string_equal(s.slow_waits[0].comm, "hog");
	assert_int_equal(s.slow_waits[0].requests, 5);
	assert_int_equal(s.slow_waits[0].ns, 4000);
	assert_int_equal(s.slow_waits[1].pid, 888);
	assert_int_equal(s.slow_waits[1].requests, 1);
	assert_int_equal(s.slow_waits[2].pid, 0);
	assert_int_equal(s.slow_waits[2].ns, 50);
}

/* A request answered by another thread than its reader: its latency is
 * counted apart, and the shares stay over the requests that were split. */
static void test_handoff(void **state)
{
	struct lw_engine *e = *state;
	struct lw_request h = req(1, 9000, 0, 0, 0, 0, 0, 0, 0);
	struct lw_meta_rec m = {.type = LW_REC_META, .pid = 7, .handoffs = 40};
	struct lw_summary s;

	h.flags = LW_REQ_HANDOFF;
	feed_req(e, req(1, 1000, 400, 0, 0, 0, 0, 600, 0));
	feed_req(e, h);
	feed_req(e, h);
	assert_int_equal(lw_engine_feed(e, &m, sizeof(m)), 0);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.slow_requests, 1);
	assert_int_equal(s.slow_latency_ns, 1000);
	assert_int_equal(s.handoff_slow, 2);
	assert_int_equal(s.handoff_slow_ns, 18000);
	assert_int_equal(s.handoffs, 40);
	assert_true(fabs(s.cause[LW_CAUSE_SCHED].share - 0.6) < EPS);
	assert_int_equal(s.cause[LW_CAUSE_NONE].requests, 0);
	assert_int_equal(s.dominant, LW_CAUSE_SCHED);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cause_largest),
		cmocka_unit_test(test_cause_none),
		cmocka_unit_test(test_cause_min_share),
		cmocka_unit_test(test_cause_ties),
		cmocka_unit_test(test_consistent),
		T(test_summary_shares),
		T(test_summary_empty),
		T(test_idle_cause),
		T(test_quota_cause),
		T(test_idle_polled),
		T(test_irq_entry),
		T(test_dominant_threshold),
		T(test_dominant_tie),
		T(test_cause_request_counts),
		T(test_irq_snapshot_replaces),
		T(test_irq_top_capped),
		T(test_softirq_snapshot),
		T(test_preempt_top),
		T(test_slow_waits),
		T(test_thp_replaced),
		T(test_cpu_no_source),
		T(test_cpu_measured),
		T(test_cpu_khz_without_ref),
		T(test_meta),
		T(test_target_before_meta),
		T(test_tick),
		T(test_feed_errors),
		T(test_engine_errors),
		T(test_engine_sink),
		T(test_hist_record),
		T(test_cause_measured),
		T(test_on_request),
		T(test_request_ring),
		T(test_handoff),
		cmocka_unit_test(test_hist_bucket),
		cmocka_unit_test(test_hist_quantile),
		cmocka_unit_test(test_names),
		T(test_verdict_memory),
		T(test_verdict_running),
		T(test_verdict_no_typical),
		cmocka_unit_test(test_memory_precedence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
