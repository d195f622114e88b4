/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* serve_opts.h - `latwhy serve`: a target, an address, the trace's options. */
#ifndef LW_SERVE_OPTS_H
#define LW_SERVE_OPTS_H

#include <stdio.h>
#include <stddef.h>

#include <linux/types.h>

#include "latwhy.h" /* LW_COMM_LEN */
#include "cli/trace_opts.h"
#include "source/duty.h"
#include "cli/serve_capture.h"

#define LW_SERVE_HOST "127.0.0.1"
#define LW_SERVE_PORT 9462

/* serve's defaults: attached 3 s of every 90 s (3.3%), every cause traced.
 * docs/serve.md says why. */
#define LW_SERVE_SAMPLE_ON_NS	 (3ULL * 1000000000ULL)
#define LW_SERVE_SAMPLE_EVERY_NS (90ULL * 1000000000ULL)

struct lw_serve_opts {
	/* what to trace: the trace's targets, followed as they come and go */
	struct lw_opts trace;
	char host[64]; /* --listen ADDR:PORT, numeric; [v6]:PORT */
	unsigned port;
	struct lw_duty sample;		      /* --sample X/Y; every_ns 0: off, always attached */
	char causes[64];		      /* --causes, "" all: the others' tracepoints are
					       * added to trace.skip */
	struct lw_serve_capture_opts capture; /* --capture-dir DIR, ... */
	int max_pods;			      /* --max-pods N: pods with series of their own */
};

/* A node's pod limit by default (the kubelet's maxPods): every pod of a
 * node so configured has series of its own. */
#define LW_SERVE_MAX_PODS 110

/* "3s/60s" (X of every Y) or "off": 0, or -EINVAL with a message in err. */
int lw_parse_sample(const char *s, struct lw_duty *d, char *err, size_t errlen);

/*
 * Parse serve's argv: --listen ADDR:PORT, --sample, --causes, --capture-*,
 * and the live trace's options but -j and -d (serve runs until stopped).
 * 0; 1 when help was asked for; -EINVAL with a one-line message in err.
 */
int lw_serve_opts_parse(struct lw_serve_opts *o, int argc, char **argv, char *err, size_t errlen);
void lw_serve_usage(FILE *f);

#endif /* LW_SERVE_OPTS_H */
