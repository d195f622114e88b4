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

#include "capture/record.h"
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
	struct lw_capture_rec cap; /* --capture */
	/* the node with the target as the trace began: its cgroups' counters
	 * then (has_target false when it was not there yet) */
	struct lw_node start;
};

/* --capture FILE: the same records into a capture, as latwhy record. */
static int run_capture(struct run *r)
{
	char label[1024];
	const struct lw_capture_kv kv[] = {
		{"command", "trace --capture"}, {"skip", r->o->conf.skip}, {"targets", label}};

	if (!r->o->capture[0])
		return 0;
	lw_trace_opts_targets(r->o, label, sizeof(label));
	if (lw_capture_rec_open(&r->cap, r->o->capture, false, 0, r->o->conf.pid, kv,
				r->o->conf.pid ? 2 : 3))
		return -EIO;
	return lw_fanout_add(&r->sinks, lw_capture_rec_sink(&r->cap));
}

/* The capture's end, before the summary: both read the node at the end. A
 * capture that could not be written ends the trace with an error. */
static int run_capture_close(struct run *r, bool exited)
{
	int err;

	if (!r->cap.w)
		return 0;
	err = lw_capture_rec_close(&r->cap, exited	     ? 0
					    : r->o->conf.pid ? r->o->conf.pid
							     : lw_tracer_first_pid(r->t));
	if (err)
		fprintf(stderr, "latwhy: cannot write %s: %s; what was written stays readable\n",
			r->o->capture, strerror(-err));
	return err;
}

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
	static int pids[LW_MAX_TGIDS];
	char label[1024];
	int n;

	if (r->o->conf.pid) {
		lw_report_summary(r->eng, r->out, &r->start, "/",
				  lw_tracer_target_exited(r->t) ? 0 : r->o->conf.pid);
		return;
	}
	/* several processes: the summary names the targets as they are now;
	 * the node's facts are the first process's, the CPUs all of theirs */
	lw_tracer_describe(r->t, label, sizeof(label));
	lw_render_set_target(r->out, label);
	n = lw_tracer_pids(r->t, pids, LW_MAX_TGIDS);
	lw_report_summary_pids(r->eng, r->out, &r->start, "/", pids, n);
}

enum lw_run_status lw_trace_run(const struct lw_opts *o)
{
	enum lw_run_status ret = LW_RUN_FAILED;
	struct run r = {.o = o};

	/* the only usage error found here: before anything is loaded */
	if (lw_tracer_check_skip(o->conf.skip))
		return LW_RUN_USAGE;
	if ((o->conf.pid && lw_probe_target(o->conf.pid, r.comm, sizeof(r.comm))) ||
	    lw_probe_privileges())
		return LW_RUN_FAILED;
	if (run_wire(&r)) {
		fprintf(stderr, "latwhy: out of memory\n");
		goto cleanup;
	}
	if (run_capture(&r))
		goto cleanup;
	r.t = lw_tracer_open(&o->conf, r.comm, lw_fanout_sink(&r.sinks));
	if (!r.t)
		goto cleanup;
	/* before the trace runs; a node that cannot be read is no start */
	if (lw_node_read(&r.start, "/", o->conf.pid ? o->conf.pid : lw_tracer_first_pid(r.t)))
		r.start.has_target = false;
	if (!o->conf.pid) {
		char label[1024];

		lw_tracer_describe(r.t, label, sizeof(label));
		lw_render_set_target(r.out, label);
	}
	lw_render_set_skip(r.out, o->conf.skip);
	lw_render_start(r.out, o->conf.pid, r.comm, lw_tracer_flags(r.t), o->conf.slow_ns);
	if (lw_tracer_run(r.t) || run_capture_close(&r, lw_tracer_target_exited(r.t)))
		goto cleanup;
	run_report(&r);
	ret = LW_RUN_OK;
cleanup:
	run_capture_close(&r, false);
	lw_tracer_close(r.t);
	lw_node_free(&r.start);
	lw_render_free(r.out);
	lw_engine_free(r.eng);
	return ret;
}
