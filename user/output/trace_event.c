// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trace_event.c - the Trace Event Format writer (see trace_event.h).
 *
 * Slices on one track must nest, and an event loop's requests overlap on
 * one thread: each thread's requests are laid out over lanes, a request in
 * the first lane whose last slice has ended, each lane a track of its own
 * ("worker 4251", "worker 4251 #2"). Timestamps are microseconds from the
 * first record's time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "latwhy.h"
#include "advice/finding.h"
#include "engine/engine.h"
#include "output/json.h"
#include "output/trace_event.h"

/* lane k of thread tid is track tid + k * LANE_TID: above any pid */
#define LANE_TID (1u << 22)

struct te_req {
	struct lw_request r;
	unsigned lane;
};

/* one counter sample: CPU cpu's clock (khz) or interrupt time (irq ns) */
struct te_sample {
	__u64 ts_ns;
	__u32 cpu;
	bool clock;
	double v;
};

struct lw_trace_event {
	struct te_req *req;
	size_t nr, cap;
	struct te_sample *smp;
	size_t nr_smp, cap_smp;
	__u64 irq_ns[LW_MAX_CPUS]; /* this tick's IRQ snapshot, summed per CPU */
	__u64 irq_prev[LW_MAX_CPUS];
	__u64 t0, now; /* first record's time; the last tick's */
	int pid;
	char comm[LW_COMM_LEN];
	bool freq_known;
	int err;
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, (*cap ? *cap * 2 : 1024) * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = *cap ? *cap * 2 : 1024;
	return 0;
}

static void sample(struct lw_trace_event *t, __u32 cpu, bool clock, double v)
{
	if (!t->now || grow((void **)&t->smp, &t->cap_smp, t->nr_smp, sizeof(*t->smp))) {
		t->err = t->now ? -ENOMEM : t->err;
		return;
	}
	t->smp[t->nr_smp++] =
		(struct te_sample){.ts_ns = t->now, .cpu = cpu, .clock = clock, .v = v};
}

static void te_tick(struct lw_trace_event *t, const struct lw_tick_rec *k)
{
	/* the interval's interrupt time per CPU: the delta of the snapshots */
	for (int c = 0; c < LW_MAX_CPUS && t->now; c++)
		if (t->irq_ns[c] != t->irq_prev[c])
			sample(t, c, false, (t->irq_ns[c] - t->irq_prev[c]) / 1e6);
	memcpy(t->irq_prev, t->irq_ns, sizeof(t->irq_prev));
	memset(t->irq_ns, 0, sizeof(t->irq_ns));
	t->now = k->ts_ns;
	if (!t->t0)
		t->t0 = k->ts_ns;
}

static int te_record(void *ctx, const void *rec, size_t len)
{
	struct lw_trace_event *t = ctx;
	union {
		__u32 type;
		struct lw_request r;
		struct lw_tick_rec k;
		struct lw_irq_rec i;
		struct lw_cpu_rec c;
		struct lw_meta_rec m;
	} u = {};

	if (len < sizeof(u.type) || len > sizeof(u))
		return 0; /* the engine counts what it cannot take */
	memcpy(&u, rec, len);
	if (u.type == LW_REC_REQUEST && len >= sizeof(u.r)) {
		if (grow((void **)&t->req, &t->cap, t->nr, sizeof(*t->req)))
			return t->err = -ENOMEM;
		t->req[t->nr++].r = u.r;
		if (!t->t0 || u.r.start_ns < t->t0)
			t->t0 = u.r.start_ns;
	} else if (u.type == LW_REC_TICK && len >= sizeof(u.k)) {
		te_tick(t, &u.k);
	} else if (u.type == LW_REC_IRQ && len >= sizeof(u.i) && u.i.cpu < LW_MAX_CPUS) {
		t->irq_ns[u.i.cpu] += u.i.ns;
	} else if (u.type == LW_REC_CPU && len >= sizeof(u.c) && u.c.khz && u.c.events) {
		/* a clock latwhy saw change: never one it did not measure */
		sample(t, u.c.cpu, true, u.c.khz / 1000.0);
	} else if (u.type == LW_REC_META && len >= sizeof(u.m)) {
		t->pid = u.m.pid;
		memcpy(t->comm, u.m.comm, sizeof(t->comm));
	}
	return 0;
}

struct lw_trace_event *lw_trace_event_new(void)
{
	return calloc(1, sizeof(struct lw_trace_event));
}

struct lw_sink lw_trace_event_sink(struct lw_trace_event *t)
{
	return (struct lw_sink){.ctx = t, .record = te_record};
}

void lw_trace_event_free(struct lw_trace_event *t)
{
	if (!t)
		return;
	free(t->req);
	free(t->smp);
	free(t);
}

static int cmp_req(const void *a, const void *b)
{
	const struct lw_request *x = &((const struct te_req *)a)->r,
				*y = &((const struct te_req *)b)->r;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Each request into the first lane of its thread that is free at its start;
 * the number of lanes the busiest thread needed, or -ENOMEM. */
static int lay_out(struct lw_trace_event *t)
{
	__u64 *end = NULL;
	size_t lanes = 0, cap = 0, most = 0;

	qsort(t->req, t->nr, sizeof(*t->req), cmp_req);
	for (size_t i = 0; i < t->nr; i++) {
		const struct lw_request *r = &t->req[i].r;
		size_t k;

		if (!i || r->tid != t->req[i - 1].r.tid)
			lanes = 0;
		for (k = 0; k < lanes && end[k] > r->start_ns; k++)
			;
		if (k == lanes) {
			if (grow((void **)&end, &cap, lanes, sizeof(*end))) {
				free(end);
				return -ENOMEM;
			}
			lanes++;
		}
		end[k] = r->start_ns + r->latency_ns;
		t->req[i].lane = k;
		most = lanes > most ? lanes : most;
	}
	free(end);
	return (int)most;
}

static double us(const struct lw_trace_event *t, __u64 ns)
{
	return ns > t->t0 ? (ns - t->t0) / 1e3 : 0;
}

static void meta_event(struct lw_json *j, const char *what, int pid, __u32 tid, const char *name)
{
	lw_json_begin_object(j);
	lw_json_kstr(j, "ph", "M");
	lw_json_kstr(j, "name", what);
	lw_json_ku64(j, "pid", pid);
	lw_json_ku64(j, "tid", tid);
	lw_json_key(j, "args");
	lw_json_begin_object(j);
	lw_json_kstr(j, "name", name);
	lw_json_end_object(j);
	lw_json_end_object(j);
}

static void names(struct lw_trace_event *t, struct lw_json *j)
{
	char b[64];

	snprintf(b, sizeof(b), "%s (pid %d)", t->comm[0] ? t->comm : "target", t->pid);
	meta_event(j, "process_name", t->pid, 0, b);
	/* sorted by thread, and a thread's lane k is first used after its
	 * lanes below k: each lane named when first met */
	for (size_t i = 0, named = 0; i < t->nr; i++) {
		const struct te_req *q = &t->req[i];

		if (i && q->r.tid != t->req[i - 1].r.tid)
			named = 0;
		if (q->lane < named)
			continue;
		named = q->lane + 1;
		if (q->lane)
			snprintf(b, sizeof(b), "%s %u #%u", q->r.comm, q->r.tid, q->lane + 1);
		else
			snprintf(b, sizeof(b), "%s %u", q->r.comm, q->r.tid);
		meta_event(j, "thread_name", t->pid, q->r.tid + q->lane * LANE_TID, b);
	}
}

static void slice(struct lw_trace_event *t, struct lw_json *j, const struct te_req *q)
{
	const struct lw_request *r = &q->r;
	enum lw_cause c = lw_request_cause(r);

	lw_json_begin_object(j);
	lw_json_kstr(j, "ph", "X");
	lw_json_kstr(j, "cat", "slow request");
	lw_json_kstr(j, "name", (r->flags & LW_REQ_HANDOFF) ? "handed off" : lw_cause_name(c));
	lw_json_ku64(j, "pid", t->pid ? (__u32)t->pid : r->pid);
	lw_json_ku64(j, "tid", r->tid + q->lane * LANE_TID);
	lw_json_kdouble(j, "ts", us(t, r->start_ns));
	lw_json_kdouble(j, "dur", r->latency_ns / 1e3);
	lw_json_key(j, "args");
	lw_json_begin_object(j);
	lw_json_kstr(j, "cause", lw_cause_name(c));
	for (int b = 0; b < LW_B_MAX; b++) {
		char k[32];

		if (b == LW_B_FREQ && !(r->flags & LW_REQ_FREQ_KNOWN))
			continue; /* no clock data: no number */
		snprintf(k, sizeof(k), "%s_us", lw_bucket_name(b));
		lw_json_kdouble(j, k, r->ns[b] / 1e3);
	}
	if (r->preempt_pid)
		lw_json_kstr(j, "preempted_by", r->preempt_comm);
	lw_json_end_object(j);
	lw_json_end_object(j);
}

static void counter(struct lw_trace_event *t, struct lw_json *j, const struct te_sample *m)
{
	char name[48];

	snprintf(name, sizeof(name), m->clock ? "clock cpu %u" : "irq time cpu %u", m->cpu);
	lw_json_begin_object(j);
	lw_json_kstr(j, "ph", "C");
	lw_json_kstr(j, "name", name);
	lw_json_ku64(j, "pid", t->pid);
	lw_json_kdouble(j, "ts", us(t, m->ts_ns));
	lw_json_key(j, "args");
	lw_json_begin_object(j);
	lw_json_kdouble(j, m->clock ? "MHz" : "ms", m->v);
	lw_json_end_object(j);
	lw_json_end_object(j);
}

int lw_trace_event_write(struct lw_trace_event *t, FILE *f)
{
	struct lw_tick_rec last = {.ts_ns = t->now};
	struct lw_json j;
	int err = lay_out(t);

	if (err < 0 || t->err)
		return err < 0 ? err : t->err;
	te_tick(t, &last); /* the last interval's interrupt time */
	lw_json_init(&j, f, false);
	lw_json_begin_object(&j);
	lw_json_kstr(&j, "displayTimeUnit", "ms");
	lw_json_key(&j, "traceEvents");
	lw_json_begin_array(&j);
	names(t, &j);
	for (size_t i = 0; i < t->nr; i++)
		slice(t, &j, &t->req[i]);
	for (size_t i = 0; i < t->nr_smp; i++)
		counter(t, &j, &t->smp[i]);
	lw_json_end_array(&j);
	lw_json_end_object(&j);
	lw_json_end(&j);
	return fflush(f) || ferror(f) ? -EIO : 0;
}
