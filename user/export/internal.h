/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* internal.h - the exporter's state, shared by its files only. */
#ifndef LW_EXPORT_INTERNAL_H
#define LW_EXPORT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "latwhy.h"
#include "advice/finding.h" /* enum lw_cause */
#include "engine/engine.h"
#include "node/node.h"
#include "export/export.h"

/* One target's series: what a scrape sees of it. */
struct lw_export_series_counters {
	__u64 requests;
	__u64 slow[LW_CAUSE_MAX];    /* slow requests by cause */
	__u64 slow_ns[LW_CAUSE_MAX]; /* their time by cause */
	__u64 hist[LW_HIST_BUCKETS];
};

/* What a scrape sees: everything cumulative since the exporter began. */
struct lw_export_counters {
	struct lw_export_series_counters s[LW_MAX_TARGETS];
	int nseries;
	__u64 dropped;
	bool active; /* a tracer is attached and delivering */
	/* the running tracer's clocks (LW_REC_CPU), 0: unknown */
	__u32 freq_source; /* enum lw_freq_source */
	__u32 khz[LW_MAX_CPUS];
};

/* A target's series on the tracing thread. Series 0 alone: the whole
 * trace is its (TICK, HIST); several (lw_export_add_series()): each has its
 * slow requests by process (the classifier) and its histogram from
 * lw_export_series_hist(), its requests counted from that. */
struct lw_export_series {
	char label[512];       /* unit, cgroup path or comm */
	struct lw_engine *eng; /* its slow requests' attribution */
	__u64 requests;
	__u64 hist_base[LW_HIST_BUCKETS], hist_cur[LW_HIST_BUCKETS];
};

struct lw_export {
	char *node_root;
	/* tracing thread only */
	struct lw_export_series ser[LW_MAX_TARGETS];
	int nser;
	int (*classify)(void *ctx, __u32 tgid); /* a series, or -1 */
	void *classify_ctx;
	__u64 dropped_base, dropped_cur;
	bool active; /* records came since the last restart */
	__u32 freq_source;
	__u32 khz[LW_MAX_CPUS];
	/* the snapshot, published by the tracing thread */
	pthread_mutex_t lock;
	struct lw_export_counters pub;
	/* hindsight captures written, by reason: under lock */
	struct {
		char reason[16];
		__u64 n;
	} captures[LW_EXPORT_REASONS];
	size_t ncaptures; /* reasons known; 0: no --capture-dir, no family */
	/* the node's gauges: HTTP thread only, behind their own lock */
	pthread_mutex_t node_lock;
	struct lw_node node;
	bool node_read; /* node holds a reading */
	__u64 node_ns;	/* when it was read */
};

/* latwhy_captures_total, when captures are on (captures.c). */
void lw_export_captures_write(struct lw_export *x, FILE *f);
/* The node's drift gauges, read again when older than LW_EXPORT_NODE_NS,
 * and the running tracer's clocks from c. */
void lw_export_node_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c);
/* latwhy's own health: CPU time, resident memory, build. */
void lw_export_self_write(FILE *f);

/* A label value escaped for the exposition format (\\, \", \n). */
void lw_export_label(FILE *f, const char *v);
/* # HELP and # TYPE of a family. */
void lw_export_family(FILE *f, const char *name, const char *type, const char *help);

#endif /* LW_EXPORT_INTERNAL_H */
