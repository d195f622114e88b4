/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * serve_capture.h - `latwhy serve --capture-dir DIR`: hindsight captures
 * (capture/hindsight.h) wired into serve: its options, the window beside the
 * exporter on the tracer's sink, SIGUSR1, and latwhy_captures_total.
 */
#ifndef LW_SERVE_CAPTURE_H
#define LW_SERVE_CAPTURE_H

#include <stdio.h>

#include "capture/hindsight.h"
#include "cli/trace_opts.h" /* LW_OPT_OWN */
#include "engine/sink.h"

struct lw_export;

struct lw_serve_capture_opts {
	struct lw_hindsight_opts hs; /* hs.dir NULL: no hindsight */
	int first;		     /* the first --capture-* option given, 0 none */
};

/* serve's --capture-* options, for its getopt table */
enum {
	LW_OPT_CAPTURE_DIR = LW_OPT_OWN + 64,
	LW_OPT_CAPTURE_ON,
	LW_OPT_CAPTURE_WINDOW,
	LW_OPT_CAPTURE_MIN_INTERVAL,
	LW_OPT_CAPTURE_MAX_FILES,
	LW_OPT_CAPTURE_MAX_BYTES,
};

#define LW_SERVE_CAPTURE_LONGOPTS                                                                  \
	{"capture-dir", required_argument, NULL, LW_OPT_CAPTURE_DIR},                              \
		{"capture-on", required_argument, NULL, LW_OPT_CAPTURE_ON},                        \
		{"capture-window", required_argument, NULL, LW_OPT_CAPTURE_WINDOW},                \
		{"capture-min-interval", required_argument, NULL, LW_OPT_CAPTURE_MIN_INTERVAL},    \
		{"capture-max-files", required_argument, NULL, LW_OPT_CAPTURE_MAX_FILES},          \
	{                                                                                          \
		"capture-max-bytes", required_argument, NULL, LW_OPT_CAPTURE_MAX_BYTES             \
	}

/* One of the --capture-* options, its value arg (pointing into argv): 0,
 * -EINVAL with a one-line message in err, -ENOENT when c is none of them. */
int lw_serve_capture_opt(struct lw_serve_capture_opts *o, int c, const char *arg, char *err,
			 size_t errlen);
/* After every option: 0, or -EINVAL (a --capture-* option without a
 * --capture-dir). */
int lw_serve_capture_check(const struct lw_serve_capture_opts *o, char *err, size_t errlen);
/* "irq:5/s:10s", "sched:20ms/s:5s", "any:50", ...: 0 or -EINVAL with err. */
int lw_hindsight_trigger_parse(const char *spec, struct lw_hindsight_trigger *t, char *err,
			       size_t errlen);
void lw_serve_capture_usage(FILE *f);

struct lw_serve_capture {
	struct lw_hindsight *h; /* NULL: no --capture-dir */
	struct lw_export *x;
	struct lw_fanout sinks;
};

/* The directory checked (made when missing), the window made, its reasons
 * at 0 in the exporter, SIGUSR1 caught; argv (the command's) recorded as
 * the captures' command. 0 (also without --capture-dir); -errno, said. */
int lw_serve_capture_start(struct lw_serve_capture *c, const struct lw_serve_capture_opts *o,
			   const struct lw_opts *trace, struct lw_export *x, const char *target,
			   int argc, char **argv);
/* The tracer's sink: the exporter, and the window when there is one. */
struct lw_sink lw_serve_capture_sink(struct lw_serve_capture *c, struct lw_export *x);
/* The target's process now, whose facts a capture records. */
void lw_serve_capture_set_pid(struct lw_serve_capture *c, int pid);
/* A capture being written is finished; then freed. */
void lw_serve_capture_stop(struct lw_serve_capture *c);

#endif /* LW_SERVE_CAPTURE_H */
