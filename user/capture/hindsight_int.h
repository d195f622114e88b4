/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* hindsight_int.h - the hindsight window's state, shared by its two files:
 * hindsight.c (the window, the triggers, the copy of a capture) and
 * hindsight_write.c (the writer thread, the file, the directory's cap). */
#ifndef LW_CAPTURE_HINDSIGHT_INT_H
#define LW_CAPTURE_HINDSIGHT_INT_H

#include <limits.h>
#include <pthread.h>

#include "engine/cause.h"
#include "capture/hindsight.h"

/* Tallies of the slow requests per cause, the last row for any cause. */
#define HS_ANY LW_CAUSE_MAX

/* The records between two ticks: each a u32 length, then its bytes. */
struct hs_interval {
	__u64 start_ns, end_ns; /* CLOCK_MONOTONIC; start 0: not known */
	unsigned char *buf;
	size_t len, cap;
	size_t snap_len;	 /* of it, the cumulative snapshots */
	__u64 count[HS_ANY + 1]; /* slow requests */
	__u64 ns[HS_ANY + 1];	 /* their time per cause; any: their latency */
};

/* One capture to write: its records, already windowed, and its facts. */
struct hs_job {
	unsigned char *buf; /* records as in an interval */
	size_t len;
	char reason[16];
	char trigger[64];
	char name[256]; /* latwhy-<target>-<UTC time>-<reason>.lwy */
	char utc[32];	/* the same time, ISO 8601 */
	__u64 span_ns;	/* the window's */
	__u64 not_kept; /* requests the byte bound kept out, this run */
	int pid;
};

struct lw_hindsight {
	struct lw_hindsight_opts o;
	char dir[PATH_MAX];
	char target[64];
	int pid;
	struct lw_capture_kv *kv; /* the caller's facts, copied */
	size_t nkv;
	/* the tracing thread's; the closed intervals (iv, n, bytes, based)
	 * change under win_lock, which the writer holds while it copies */
	pthread_mutex_t win_lock;
	struct hs_interval **iv; /* closed, oldest first */
	size_t n, cap;
	struct hs_interval *open; /* being filled; NULL until a record */
	__u64 bytes;		  /* of every interval's buffer */
	/* iv[0] is the base: only its cumulative snapshots count, as the
	 * state at the window's start; else the window starts with the run */
	bool based;
	__u64 last_end_ns; /* the last tick */
	__u64 dropped;	   /* intervals dropped for the byte bound */
	/* room kept for an interval's snapshots: the last one's size */
	size_t snap_room;
	__u64 dropped_recs; /* requests not kept this run: an interval over the bound */
	__u64 since[LW_HINDSIGHT_TRIGGERS];
	__u64 last_capture_ns; /* 0: none yet */
	volatile sig_atomic_t requested;
	/* the writer */
	lw_hindsight_written_fn on_written;
	void *on_written_ctx;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct hs_job *job; /* waiting or being written */
	bool stopping;
	__u64 written;
};

/* Copy the window into job (writer thread): 0, -ENODATA, -ENOMEM. */
int lw_hs_job_fill(struct lw_hindsight *h, struct hs_job *job);
/* Write job and free it: on the writer thread, or the caller's with sync. */
void lw_hs_write(struct lw_hindsight *h, struct hs_job *job);
/* Start the writer thread (not with sync): 0 or -errno. */
int lw_hs_thread_start(struct lw_hindsight *h);
/* Hand job over (h->job must be NULL), or write it now with sync. */
void lw_hs_submit(struct lw_hindsight *h, struct hs_job *job);
void lw_hs_thread_stop(struct lw_hindsight *h);

#endif /* LW_CAPTURE_HINDSIGHT_INT_H */
