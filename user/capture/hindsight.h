/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hindsight.h - hindsight captures: a sink that keeps the last minute of
 * records in memory and, when a trigger fires, writes them as a capture
 * file (the format of `latwhy record`, so `latwhy report` reads it).
 *
 * The window is a queue of intervals (the records between two ticks of the
 * source), bounded in time (opts.window_ns) and in bytes (opts.window_bytes),
 * the oldest interval dropped first. The source's cumulative snapshots (HIST,
 * META, the evidence) count from the start of its run, so a capture of the
 * window holds them as differences: the newest snapshot less the one at the
 * window's start (the end of the oldest interval kept), and a report of it
 * gives the window's requests, rates and evidence, not the run's.
 *
 * Triggers are checked at each tick on the tracing thread; the file is
 * written on a thread of its own (a node snapshot and an fsync can take
 * long), from a copy of the window taken at the tick.
 */
#ifndef LW_CAPTURE_HINDSIGHT_H
#define LW_CAPTURE_HINDSIGHT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "capture/capture.h"
#include "engine/sink.h"

#define LW_HINDSIGHT_WINDOW_NS	(60ULL * 1000000000ULL)
#define LW_HINDSIGHT_MIN_GAP_NS (300ULL * 1000000000ULL)
#define LW_HINDSIGHT_MAX_FILES	20
#define LW_HINDSIGHT_MAX_BYTES	(256ULL << 20)
/* The window's memory: 16 MiB hold about 100,000 slow requests (160 bytes
 * each, with their length and interval overhead), 1,700 a second for a
 * minute, besides one cumulative snapshot a second (about 5 kB on a small
 * host). Past it the oldest intervals go and the window is shorter. */
#define LW_HINDSIGHT_WINDOW_BYTES (16ULL << 20)
#define LW_HINDSIGHT_TRIGGERS	  8

/* What a trigger measures, per second of an interval. */
enum lw_hindsight_kind {
	LW_HS_COUNT, /* slow requests of the cause */
	LW_HS_TIME,  /* ns of the cause in slow requests */
};

/* --capture-on CAUSE:THRESHOLD:FOR (cli/serve_capture.c parses it). */
struct lw_hindsight_trigger {
	int cause; /* enum lw_cause, or -1: any slow request */
	enum lw_hindsight_kind kind;
	double per_s;	 /* the threshold: over it, per second */
	__u64 for_ns;	 /* over it for this long */
	char text[64];	 /* as given, for the capture's facts */
	char reason[16]; /* the cause's name, "any" */
};

struct lw_hindsight_opts {
	const char *dir;    /* where captures go; NULL: hindsight off */
	__u64 window_ns;    /* 0: LW_HINDSIGHT_WINDOW_NS */
	__u64 window_bytes; /* 0: LW_HINDSIGHT_WINDOW_BYTES */
	__u64 min_gap_ns;   /* --capture-min-interval; set: min_gap_set */
	bool min_gap_set;
	unsigned max_files; /* 0: LW_HINDSIGHT_MAX_FILES */
	__u64 max_bytes;    /* 0: LW_HINDSIGHT_MAX_BYTES */
	struct lw_hindsight_trigger triggers[LW_HINDSIGHT_TRIGGERS];
	size_t ntriggers;
	/* write in the thread that fires, not on a thread of its own (tests) */
	bool sync;
};

/* After a capture is written (on the writer thread): reason as given to it,
 * the file's path and size. The serve command counts it here. */
typedef void (*lw_hindsight_written_fn)(void *ctx, const char *reason, const char *path,
					__u64 bytes);

struct lw_hindsight;

/*
 * A window for target (its label: file names and facts), the process pid
 * (TARGET facts and the node's per-process files; 0: none) and the options
 * in force as n facts (copied; the OPTIONS chunk). NULL with errno set.
 */
struct lw_hindsight *lw_hindsight_new(const struct lw_hindsight_opts *o, const char *target,
				      int pid, const struct lw_capture_kv *opts, size_t n);
/* Waits for a capture being written, then frees. */
void lw_hindsight_free(struct lw_hindsight *h);
void lw_hindsight_on_written(struct lw_hindsight *h, lw_hindsight_written_fn fn, void *ctx);

/* The window as a sink: record() keeps, tick() closes an interval, checks the
 * triggers and the signal, and starts a capture. */
struct lw_sink lw_hindsight_sink(struct lw_hindsight *h);

/* A new run of the source (the target restarted, pid its new process): the
 * window starts again, its cumulative snapshots counting from zero. */
void lw_hindsight_restart(struct lw_hindsight *h, int pid);
/* The process whose facts a capture records from now on (a target's new
 * process, traced by the same run): the window goes on. */
void lw_hindsight_set_pid(struct lw_hindsight *h, int pid);

/* Async-signal-safe: a capture with reason "signal" at the next tick. */
void lw_hindsight_request(struct lw_hindsight *h);

/*
 * Write a capture of the window now, reason given (the trigger's text too,
 * or NULL), at now_ns (CLOCK_MONOTONIC, as the ticks): 0 when started (or
 * written, with opts.sync); -EBUSY while another is written; -EAGAIN within
 * the minimum interval of the last one; -ENODATA with no interval kept yet.
 * Says nothing: tick() says a refused signal.
 */
int lw_hindsight_capture(struct lw_hindsight *h, const char *reason, const char *trigger,
			 __u64 now_ns);

/* What the window holds now: intervals, bytes, and the span from its start
 * (the base snapshot, or the run's start) to its newest tick. */
size_t lw_hindsight_intervals(const struct lw_hindsight *h);
__u64 lw_hindsight_bytes(const struct lw_hindsight *h);
__u64 lw_hindsight_span_ns(const struct lw_hindsight *h);
/* Intervals dropped for the byte bound (not for age); captures written. */
__u64 lw_hindsight_dropped(const struct lw_hindsight *h);
__u64 lw_hindsight_written(const struct lw_hindsight *h);

/* The trigger's state: since when its cause has been over the threshold,
 * 0 when it is not. */
__u64 lw_hindsight_trigger_since(const struct lw_hindsight *h, size_t i);

/* Remove the oldest latwhy-*.lwy regular files of dir (by mtime, then
 * name) until at most max_files of them and max_bytes remain, keeping the
 * file named keep (a name in dir, or NULL). Other files are never touched.
 * The number removed, or -errno when dir cannot be read. */
int lw_hindsight_prune(const char *dir, unsigned max_files, __u64 max_bytes, const char *keep);

#endif /* LW_CAPTURE_HINDSIGHT_H */
