// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_report.c - `latwhy report FILE [--json] [--html OUT] [--trace-event OUT]`:
 * a capture as the source.
 * Its records feed the same engine as a live trace, and the findings come
 * from the node the capture recorded (its last snapshot, laid out as a root
 * for the node reader), never from the machine report runs on. No root, no
 * BPF.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "cli/cmd.h"
#include "capture/source.h"
#include "cli/parse.h"
#include "cli/summary.h"
#include "engine/engine.h"
#include "lib/fmt.h"
#include "output/html.h"
#include "output/json.h"
#include "output/render.h"
#include "output/requests.h"
#include "output/trace_event.h"

struct report_opts {
	const char *path;
	bool json;
	const char *trace_event; /* --trace-event OUT.json */
	const char *html;	 /* --html OUT.html */
};

static void report_usage(FILE *f)
{
	fprintf(f, "Usage: latwhy report FILE [--json] [--html OUT.html] [--trace-event OUT.json]\n"
		   "\n"
		   "Read a capture made by latwhy record: the summary, evidence and findings a\n"
		   "live trace would have printed at its end, with the host and target it was\n"
		   "recorded on. Any user, any machine: no root, no BPF.\n"
		   "\n"
		   "  -j, --json            NDJSON: a capture line, the request lines, the\n"
		   "                        summary\n"
		   "      --html OUT        also a self-contained HTML page of charts: slow\n"
		   "                        requests over time, latency, causes, interrupts,\n"
		   "                        clock, THP, preemptors, findings\n"
		   "      --trace-event OUT the capture in the Trace Event Format (JSON) for\n"
		   "                        Perfetto or chrome://tracing: a track per thread,\n"
		   "                        a slice per slow request, clock and IRQ counters\n");
}

enum {
	OPT_TRACE_EVENT = 256,
	OPT_HTML,
};

static int report_opt(void *ctx, int c, const char *arg, char *err, size_t errlen)
{
	struct report_opts *o = ctx;

	switch (c) {
	case 'j':
		o->json = true;
		return 0;
	case OPT_TRACE_EVENT:
		o->trace_event = arg;
		return 0;
	case OPT_HTML:
		o->html = arg;
		return 0;
	}
	return -ENOENT;
}

/* 0; 1 for help; -EINVAL with a message in err */
static int report_parse(struct report_opts *o, int argc, char **argv, char *err, size_t len)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"trace-event", required_argument, NULL, OPT_TRACE_EVENT},
		{"html", required_argument, NULL, OPT_HTML},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	const struct lw_cmdline cl = {
		.shortopts = "j",
		.longopts = longopts,
		.take = report_opt,
		.ctx = o,
		.min_args = 1,
		.max_args = 1,
	};
	int first, ret;

	memset(o, 0, sizeof(*o));
	ret = lw_getopt(&cl, argc, argv, &first, err, len);
	if (ret < 0 && !err[0])
		snprintf(err, len,
			 first == argc ? "a capture file is needed: latwhy report FILE"
				       : "one capture file at a time");
	if (!ret)
		o->path = argv[first];
	return ret;
}

/* A hindsight capture of serve: why it was written, and of how long. */
static void header_hindsight(const struct lw_capture_source *l)
{
	const char *why = lw_capture_source_fact(l, LW_CHUNK_OPTIONS, "capture_reason");
	const char *trig = lw_capture_source_fact(l, LW_CHUNK_OPTIONS, "capture_trigger");
	const char *span = lw_capture_source_fact(l, LW_CHUNK_OPTIONS, "capture_span_ns");
	const char *at = lw_capture_source_fact(l, LW_CHUNK_OPTIONS, "capture_time");

	if (!why)
		return;
	printf("Hindsight capture: reason %s", why);
	if (trig)
		printf(" (%s)", trig);
	if (span)
		printf(", the %.2f s before %s", strtoull(span, NULL, 10) / 1e9,
		       at ? at : "it was written");
	printf("\n");
}

static void header_text(const struct lw_capture_source *l)
{
	const char *host = lw_capture_source_fact(l, LW_CHUNK_HOST, "hostname");
	const char *kern = lw_capture_source_fact(l, LW_CHUNK_HOST, "kernel_release");
	const char *cpu = lw_capture_source_fact(l, LW_CHUNK_HOST, "cpu_model");
	const char *on = lw_capture_source_fact(l, LW_CHUNK_HOST, "cpus_online");
	const char *cmd = lw_capture_source_fact(l, LW_CHUNK_OPTIONS, "command");
	const struct lw_capture_info *in = lw_capture_reader_info(l->r);

	printf("Capture %s: latwhy %s, host %s (kernel %s, %s, CPUs %s)\n", l->path,
	       in->latwhy_version[0] ? in->latwhy_version : "?", host ? host : "?",
	       kern ? kern : "?", cpu ? cpu : "CPU model unknown", on ? on : "?");
	if (cmd)
		printf("Recorded with: %s\n", cmd);
	header_hindsight(l);
}

static void header_json(const struct lw_capture_source *l)
{
	static const char *const host[] = {"hostname",	  "kernel_release", "cpu_model",
					   "cpus_online", "numa",	    "boot_id"};
	static const char *const target[] = {"pid", "comm", "cmdline", "cpus_allowed", "cgroup"};
	const struct lw_capture_info *in = lw_capture_reader_info(l->r);
	struct lw_json j;

	lw_json_init(&j, stdout, false);
	lw_json_begin_object(&j);
	lw_json_kstr(&j, "type", "capture");
	lw_json_kstr(&j, "file", l->path);
	lw_json_ku64(&j, "format_version", in->format_version);
	lw_json_ku64(&j, "abi_version", in->abi_version);
	lw_json_kstr(&j, "latwhy_version", in->latwhy_version);
	lw_json_ku64(&j, "records", in->records);
	lw_json_kbool(&j, "complete", in->has_end && !in->truncated);
	lw_json_ku64(&j, "bad_chunks", in->bad_chunks);
	lw_json_key(&j, "host");
	lw_json_begin_object(&j);
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
		const char *v = lw_capture_source_fact(l, LW_CHUNK_HOST, host[i]);

		if (v)
			lw_json_kstr(&j, host[i], v);
		else
			lw_json_knull(&j, host[i]);
	}
	lw_json_end_object(&j);
	lw_json_key(&j, "target");
	lw_json_begin_object(&j);
	for (size_t i = 0; i < sizeof(target) / sizeof(target[0]); i++) {
		const char *v = lw_capture_source_fact(l, LW_CHUNK_TARGET, target[i]);

		if (v)
			lw_json_kstr(&j, target[i], v);
		else
			lw_json_knull(&j, target[i]);
	}
	lw_json_end_object(&j);
	lw_json_end_object(&j);
	lw_json_end(&j);
}

/* A file written whole by write(ctx, f); one that cannot be written is one
 * line and a failed run. */
static int report_file(const char *path, int (*write)(void *ctx, FILE *f), void *ctx)
{
	FILE *f = fopen(path, "we");
	int err;

	if (!f) {
		fprintf(stderr, "latwhy: cannot create %s: %s\n", path, strerror(errno));
		return -errno;
	}
	err = write(ctx, f);
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "latwhy: cannot write %s: %s\n", path, strerror(-err));
	return err;
}

static int write_trace_event(void *ctx, FILE *f)
{
	return lw_trace_event_write(ctx, f);
}

/* what --html draws beside the sink's records */
struct report_page {
	struct lw_html *h;
	const struct lw_capture_source *l;
	const struct lw_summary *s;
	const struct lw_findings *fs;
};

static int write_html(void *ctx, FILE *f)
{
	const struct report_page *p = ctx;
	const struct lw_capture_source *l = p->l;
	const char *ver = lw_capture_reader_info(l->r)->latwhy_version;
	const struct lw_html_fact v[] = {
		{"capture", l->path},
		{"recorded by", ver[0] ? ver : NULL},
		{"host", lw_capture_source_fact(l, LW_CHUNK_HOST, "hostname")},
		{"kernel", lw_capture_source_fact(l, LW_CHUNK_HOST, "kernel_release")},
		{"CPU", lw_capture_source_fact(l, LW_CHUNK_HOST, "cpu_model")},
		{"CPUs online", lw_capture_source_fact(l, LW_CHUNK_HOST, "cpus_online")},
		{"NUMA", lw_capture_source_fact(l, LW_CHUNK_HOST, "numa")},
		{"target", lw_capture_source_fact(l, LW_CHUNK_TARGET, "cmdline")},
		{"its CPUs", lw_capture_source_fact(l, LW_CHUNK_TARGET, "cpus_allowed")},
		{"cgroup", lw_capture_source_fact(l, LW_CHUNK_TARGET, "cgroup")},
		{"recorded with", lw_capture_source_fact(l, LW_CHUNK_OPTIONS, "command")},
	};
	const struct lw_html_facts facts = {
		.title = l->path, .v = v, .n = sizeof(v) / sizeof(v[0])};

	return lw_html_write(p->h, f, &facts, p->s, p->fs);
}

/* The extra sinks of --trace-event and --html, each fed every record. */
static void report_feed(struct lw_capture_source *l, struct lw_trace_event *te, struct lw_html *h)
{
	struct lw_fanout fan = {};
	struct lw_sink all;

	if (te)
		lw_fanout_add(&fan, lw_trace_event_sink(te));
	if (h)
		lw_fanout_add(&fan, lw_html_sink(h));
	all = lw_fanout_sink(&fan);
	lw_capture_source_run(l, fan.n ? &all : NULL);
}

static enum lw_exit report_run(const struct report_opts *o, struct lw_capture_source *l)
{
	const struct lw_capture_info *in = lw_capture_reader_info(l->r);
	struct lw_render *out = lw_render_new(stdout, o->json);
	struct lw_trace_event *te = o->trace_event ? lw_trace_event_new() : NULL;
	struct lw_html *h = o->html ? lw_html_new() : NULL;
	struct lw_findings fs = {};
	enum lw_exit ret = LW_EXIT_FAIL;
	struct report_page page;
	struct lw_summary s;
	int err = 0;

	if (!out || (o->trace_event && !te) || (o->html && !h)) {
		fprintf(stderr, "latwhy: out of memory\n");
		goto cleanup;
	}
	if (o->json)
		header_json(l);
	else
		header_text(l);
	/* recorded without a single -p process: named by its targets */
	lw_render_set_target(out, lw_capture_source_fact(l, LW_CHUNK_OPTIONS, "targets"));
	lw_render_set_skip(out, lw_capture_source_fact(l, LW_CHUNK_OPTIONS, "skip"));
	report_feed(l, te, h);
	lw_engine_summarize(l->e, &s);
	if (l->root[0]) /* the findings of the node it was recorded on */
		lw_report_findings(l->e, &l->start, l->root,
				   (s.flags & LW_META_TARGET_EXITED) ? 0 : s.pid, &s, &fs);
	lw_render_summary(out, &s, l->root[0] ? &fs : NULL);
	page = (struct report_page){.h = h, .l = l, .s = &s, .fs = l->root[0] ? &fs : NULL};
	if (!in->records) {
		fprintf(stderr, "latwhy: %s: no records to report\n", o->path);
		goto cleanup;
	}
	if (te)
		err = report_file(o->trace_event, write_trace_event, te);
	if (h && report_file(o->html, write_html, &page))
		err = -EIO;
	if (!err)
		ret = LW_EXIT_OK;
cleanup:
	lw_findings_free(&fs);
	lw_html_free(h);
	lw_trace_event_free(te);
	lw_render_free(out);
	return ret;
}

enum lw_exit lw_cmd_report(int argc, char **argv)
{
	struct report_opts o;
	struct lw_capture_source l;
	char err[256];
	enum lw_exit ret;
	int p;

	/* a closed pipe (report | head) ends the output, not the process:
	 * the capture's temporary node tree is still removed */
	signal(SIGPIPE, SIG_IGN);
	p = lw_cmd_parsed("report", report_parse(&o, argc, argv, err, sizeof(err)), err,
			  report_usage);
	if (p >= 0)
		return p;
	if (lw_capture_source_open(&l, o.path, o.json ? lw_requests_on_request : NULL, stdout)) {
		lw_capture_source_close(&l);
		return LW_EXIT_FAIL;
	}
	ret = report_run(&o, &l);
	lw_capture_source_close(&l);
	return ret;
}
