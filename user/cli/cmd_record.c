// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_record.c - `latwhy record -p PID -o FILE`: the live source into a
 * capture (capture/record.h), with a progress line. The file gets the host,
 * the target, the options and the node as the node reader saw it at the
 * start and at the end, then every record, flushed each interval (a kill -9
 * loses at most the last one).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture/record.h"
#include "cli/cmd.h"
#include "cli/record_opts.h"
#include "lib/fmt.h"
#include "source/probe.h"
#include "source/tracer.h"

struct recorder {
	const struct lw_record_opts *o;
	struct lw_capture_rec cap;
	bool tty; /* progress redrawn in place */
};

static void rec_progress(const struct recorder *r, bool last)
{
	const struct lw_capture_rec *c = &r->cap;
	char b[32], d[32];

	if (r->o->trace.quiet || (!r->tty && !last))
		return;
	lw_fmt_bytes(b, sizeof(b), c->w ? lw_capture_writer_bytes(c->w) : 0);
	if (!last) {
		fprintf(stderr, "\r\033[Krecording %.0f / %.0f s  requests %llu  slow %llu  %s",
			c->elapsed_ns / 1e9, r->o->trace.conf.duration_ns / 1e9,
			(unsigned long long)c->requests, (unsigned long long)c->slow, b);
		return;
	}
	fprintf(stderr, "%slatwhy: wrote %s: %llu requests, %llu slow, %s\n",
		r->tty ? "\r\033[K" : "", r->o->path, (unsigned long long)c->requests,
		(unsigned long long)c->slow, lw_fmt_ns(d, sizeof(d), c->elapsed_ns));
}

static int progress_tick(void *ctx, __u64 now_ns)
{
	rec_progress(ctx, false);
	return 0;
}

/* The options in force, as facts. */
static int rec_open(struct recorder *r, int argc, char **argv)
{
	char cmd[1024] = "", d[32], m[32], targets[1024];
	size_t off = 0;

	for (int i = 0; i < argc && off < sizeof(cmd); i++)
		off += snprintf(cmd + off, sizeof(cmd) - off, "%s%s", i ? " " : "", argv[i]);
	snprintf(d, sizeof(d), "%llu", (unsigned long long)r->o->trace.conf.duration_ns);
	snprintf(m, sizeof(m), "%llu", (unsigned long long)r->o->trace.conf.slow_ns);
	const struct lw_capture_kv kv[] = {
		{"command", cmd},     {"duration_ns", d},
		{"slow_ns", m},	      {"skip", r->o->trace.conf.skip},
		{"targets", targets}, /* last: only without a single -p
				    process */
	};

	lw_trace_opts_targets(&r->o->trace, targets, sizeof(targets));
	return lw_capture_rec_open(&r->cap, r->o->path, r->o->force, r->o->max_size,
				   r->o->trace.conf.pid, kv,
				   sizeof(kv) / sizeof(kv[0]) - (r->o->trace.conf.pid ? 1 : 0));
}

/* Why the capture stopped early, if it did; the file keeps what it has. */
static void rec_say_error(const struct recorder *r, int err)
{
	char b[32], d[32];

	if (err == -EFBIG)
		fprintf(stderr,
			"latwhy: %s reached its size cap (--max-size %s): capture stopped after "
			"%s\n",
			r->o->path, lw_fmt_bytes(b, sizeof(b), r->o->max_size),
			lw_fmt_ns(d, sizeof(d), r->cap.elapsed_ns));
	else if (err)
		fprintf(stderr, "latwhy: cannot write %s: %s; what was written stays readable\n",
			r->o->path, strerror(-err));
}

/* Whose facts close the capture: none when the target exited. */
static int rec_end_pid(const struct lw_opts *o, const struct lw_tracer *t)
{
	if (t && lw_tracer_target_exited(t))
		return 0;
	if (o->conf.pid || !t)
		return o->conf.pid;
	return lw_tracer_first_pid(t);
}

static enum lw_exit rec_run(struct recorder *r, int argc, char **argv)
{
	const struct lw_opts *o = &r->o->trace;
	struct lw_fanout sinks = {};
	char comm[LW_COMM_LEN] = "", d[32];
	struct lw_tracer *t = NULL;
	bool traced = false;
	int err;

	if (lw_tracer_check_skip(o->conf.skip))
		return LW_EXIT_USAGE;
	if ((o->conf.pid && lw_probe_target(o->conf.pid, comm, sizeof(comm))) ||
	    lw_probe_privileges())
		return LW_EXIT_FAIL;
	if (rec_open(r, argc, argv))
		return LW_EXIT_FAIL;
	lw_fanout_add(&sinks, lw_capture_rec_sink(&r->cap));
	lw_fanout_add(&sinks, (struct lw_sink){.ctx = r, .tick = progress_tick});
	t = lw_tracer_open(&o->conf, comm, lw_fanout_sink(&sinks));
	if (t) {
		char who[1024];

		lw_tracer_describe(t, who, sizeof(who));
		fprintf(stderr, "latwhy: recording %s into %s for %s. Ctrl-C ends it early.\n", who,
			r->o->path, lw_fmt_ns(d, sizeof(d), o->conf.duration_ns));
		/* a run the cap stopped is a capture like any other */
		traced = !lw_tracer_run(t) || r->cap.err == -EFBIG;
	}
	err = lw_capture_rec_close(&r->cap, rec_end_pid(o, t));
	lw_tracer_close(t);
	rec_say_error(r, err);
	if (!traced || (err && err != -EFBIG))
		return LW_EXIT_FAIL;
	rec_progress(r, true);
	return LW_EXIT_OK;
}

enum lw_exit lw_cmd_record(int argc, char **argv)
{
	struct lw_record_opts o;
	struct recorder r = {.o = &o, .tty = isatty(STDERR_FILENO)};
	char err[256];
	int ret;

	ret = lw_cmd_parsed("record", lw_record_opts_parse(&o, argc, argv, err, sizeof(err)), err,
			    lw_record_usage);
	if (ret >= 0)
		return ret;
	return rec_run(&r, argc, argv);
}
