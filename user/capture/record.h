/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * record.h - a capture written from a live source: the file's header facts
 * (host, target, options, the node at the start), a sink for every record,
 * flushed each interval, and the node at the end.
 */
#ifndef LW_CAPTURE_RECORD_H
#define LW_CAPTURE_RECORD_H

#include <stdbool.h>
#include <linux/types.h>

#include "capture/capture.h"
#include "engine/sink.h"

struct lw_capture_rec {
	struct lw_capture_writer *w;
	int err;	  /* the first write error; -EFBIG: the size cap */
	__u64 requests;	  /* all requests, from the ticks */
	__u64 slow;	  /* slow-request records */
	__u64 elapsed_ns; /* the trace's, from META */
};

/* Create path (replacing it only with force), capped at max_size bytes, and
 * write the header facts of pid: the options as n key/value facts. Prints
 * its one-line error; 0 or -errno. */
int lw_capture_rec_open(struct lw_capture_rec *c, const char *path, bool force, __u64 max_size,
			int pid, const struct lw_capture_kv *opts, size_t n);
/* The writer as a sink: records appended, flushed at each tick. A write
 * error, or the cap, stops the source (-ECANCELED) and stays in c->err. */
struct lw_sink lw_capture_rec_sink(struct lw_capture_rec *c);
/* The node at the end (pid 0: the target exited), the END trailer, closed.
 * Returns c->err, or the first error closing met. */
int lw_capture_rec_close(struct lw_capture_rec *c, int pid);

#endif /* LW_CAPTURE_RECORD_H */
