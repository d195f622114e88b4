// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trace_run.c - the live trace: one source, its sinks, then the report.
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

#include "cli/summary.h"
#include "cli/trace_run.h"
#include "engine/engine.h"
#include "output/live.h"
#include "output/render.h"
#include "output/requests.h"
#include "source/probe.h"
#include "source/tracer.h"

struct run {
	const struct lw_opts *o;
	char comm[LW_COMM_LEN];
	struct lw_engine *eng;
	struct lw_render *out;
	struct lw_live_view live;
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
	if (!r->o->json && !r->o->quiet)
		lw_fanout_add(&r->sinks, lw_live_view_sink(&r->live, r->eng, r->out));
	return 0;
}

/* The run's end: the engine's summary, the node's findings on it, printed. */
static void run_report(struct run *r)
{
	lw_report_summary(r->eng, r->out, "/", lw_tracer_target_exited(r->t) ? 0 : r->o->pid);
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
