// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * run.c - the live trace: one source, its sinks, then the report.
 *
 *   tracer (source) -> fan-out -> engine -> on_request: NDJSON lines (--json)
 *                             \-> live view (text, not --quiet)
 *   engine summary -> findings (advice) -> text or JSON summary
 *
 * Only the wiring is here: the tracer prints no result, the engine does no
 * I/O, the printers read the summary.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "advice/explain.h"
#include "engine/engine.h"
#include "output/render.h"
#include "output/requests.h"
#include "source/probe.h"
#include "source/tracer.h"

/* The live view as a sink: each interval's TICK kept, the view drawn from
 * the engine's summary when the interval ends. */
struct live_view {
	struct lw_engine *eng;
	struct lw_render *out;
	struct lw_tick_rec tick; /* this interval's */
	__u64 prev_ts;		 /* the previous interval's end; 0: none */
	__u64 start_ns;		 /* the run's start, from META */
};

static int live_record(void *ctx, const void *rec, size_t len)
{
	struct live_view *v = ctx;
	struct lw_meta_rec m;
	__u32 type;

	if (len < sizeof(type))
		return 0; /* the engine counts it */
	memcpy(&type, rec, sizeof(type));
	if (type == LW_REC_TICK && len >= sizeof(v->tick)) {
		v->prev_ts = v->tick.ts_ns;
		memcpy(&v->tick, rec, sizeof(v->tick));
	} else if (type == LW_REC_META && len >= sizeof(m)) {
		memcpy(&m, rec, sizeof(m));
		v->start_ns = m.start_ns;
	}
	return 0;
}

static int live_tick(void *ctx, __u64 now_ns)
{
	struct live_view *v = ctx;
	struct lw_summary s;

	lw_engine_summarize(v->eng, &s);
	lw_render_live(v->out, &s, &v->tick,
		       v->tick.ts_ns - (v->prev_ts ? v->prev_ts : v->start_ns));
	return 0;
}

struct run {
	const struct lw_opts *o;
	char comm[LW_COMM_LEN];
	struct lw_engine *eng;
	struct lw_render *out;
	struct live_view live;
	struct lw_fanout sinks;
	struct lw_tracer *t;
};

/* The sinks the source feeds: the engine, and the live view in text mode;
 * the request lines hang on the engine, which decides what it took in. */
static int run_wire(struct run *r)
{
	r->eng = lw_engine_new();
	r->out = lw_render_new(stdout, r->o->json);
	if (!r->eng || !r->out)
		return -ENOMEM;
	if (r->o->json)
		lw_engine_on_request(r->eng, lw_requests_on_request, stdout);
	lw_fanout_add(&r->sinks, lw_engine_sink(r->eng));
	if (!r->o->json && !r->o->quiet) {
		r->live.eng = r->eng;
		r->live.out = r->out;
		lw_fanout_add(&r->sinks, (struct lw_sink){.ctx = &r->live,
							  .record = live_record,
							  .tick = live_tick});
	}
	return 0;
}

/* The run's end: the engine's summary, the node's findings on it, printed. */
static void run_report(struct run *r)
{
	struct lw_findings fs = {};
	struct lw_summary s;
	int err;

	lw_engine_summarize(r->eng, &s);
	err = lw_explain(&s, "/", lw_tracer_target_exited(r->t) ? 0 : r->o->pid, &fs);
	if (err)
		fprintf(stderr, "latwhy: cannot read the node's settings (%s): no findings\n",
			strerror(-err));
	lw_render_summary(r->out, &s, &fs);
	lw_findings_free(&fs);
}

enum lw_run_status lw_trace_run(const struct lw_opts *o)
{
	enum lw_run_status ret = LW_RUN_FAILED;
	struct run r = {.o = o};

	/* the only usage error found here: before anything is loaded */
	if (lw_tracer_check_skip(o->skip))
		return LW_RUN_USAGE;
	if (lw_probe_target(o->pid, r.comm, sizeof(r.comm)) || lw_probe_privileges())
		return LW_RUN_FAILED;
	if (run_wire(&r)) {
		fprintf(stderr, "latwhy: out of memory\n");
		goto cleanup;
	}
	r.t = lw_tracer_open(o, r.comm, lw_fanout_sink(&r.sinks));
	if (!r.t)
		goto cleanup;
	lw_render_start(r.out, o->pid, r.comm, lw_tracer_flags(r.t), o->slow_ns);
	if (lw_tracer_run(r.t))
		goto cleanup;
	run_report(&r);
	ret = LW_RUN_OK;
cleanup:
	lw_tracer_close(r.t);
	lw_render_free(r.out);
	lw_engine_free(r.eng);
	return ret;
}
