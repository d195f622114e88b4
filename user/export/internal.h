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
	bool active;	   /* a tracer is attached and delivering */
	__u64 attached_ns; /* the tracers' programs attached, in all */
	__u32 flags;	   /* enum lw_meta_flags of the running tracer */
	size_t nr_progs;
	struct lw_export_prog progs[LW_EXPORT_PROGS]; /* run time and count so far */
	/* the running tracer's clocks (LW_REC_CPU), 0: unknown */
	__u32 freq_source; /* enum lw_freq_source */
	__u32 khz[LW_MAX_CPUS];
};

/* A target's series on the tracing thread. Series 0 alone: the whole
 * trace is its (TICK, HIST); several (lw_export_add_series()): each has its
 * histogram from lw_export_series_hist(), its requests counted from that.
 * Every series has its slow requests from lw_export_series_causes(). */
struct lw_export_series {
	char label[512]; /* unit, cgroup path or comm */
	__u64 requests;
	__u64 hist_base[LW_HIST_BUCKETS], hist_cur[LW_HIST_BUCKETS];
	/* its slow requests by cause, counted in the kernel */
	struct lw_cause_counts causes_base, causes_cur;
};

struct lw_export {
	char *node_root;
	/* tracing thread only */
	struct lw_export_series ser[LW_MAX_TARGETS];
	int nser;
	__u64 dropped_base, dropped_cur;
	bool active;	     /* records came since the last restart */
	bool detached;	     /* the duty cycle took the programs off */
	__u64 attached_ns;   /* attached time of the stretches that ended */
	__u64 attached_from; /* when the one going on began; 0: none */
	__u32 flags;
	struct export_prog {
		char name[32];
		__u64 base_ns, base_cnt; /* what earlier tracers' reached */
		__u64 cur_ns, cur_cnt;	 /* the running one's */
	} progs[LW_EXPORT_PROGS];
	size_t nr_progs;
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
	int pid;	/* the target's, for the IRQ spread; 0: none */
	/* device IRQs per CPU at the last reading (irq_prev_n CPUs), and the
	 * spread over the target's CPUs since the one before */
	unsigned long long *irq_prev;
	int irq_prev_n;
	bool spread_ok;
	double spread_bits;
	char spread_cpus[128];
};

/* latwhy_captures_total, when captures are on (captures.c). */
void lw_export_captures_write(struct lw_export *x, FILE *f);
/* The node's drift gauges, read again when older than LW_EXPORT_NODE_NS,
 * and the running tracer's clocks from c. */
void lw_export_node_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c);
/* irqspread.c: after a fresh reading n (under node_lock), the device
 * IRQs' spread over the target's CPUs since the last one; and its family. */
void lw_export_spread_update(struct lw_export *x, const struct lw_node *n);
void lw_export_spread_write(struct lw_export *x, FILE *f);
/* Shannon entropy in bits of v[0..nr) over the CPUs of set; false when
 * none of them has any (no spread to measure). */
bool lw_export_entropy(const unsigned long long *v, int nr, const struct lw_cpuset *set,
		       double *bits);
/* bpfstats.c: latwhy_bpf_stats_enabled and, when it is 1, the programs'
 * run time and count. */
void lw_export_bpf_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c);
/* latwhy's own health: CPU time, resident memory, build. */
void lw_export_self_write(FILE *f);

/* A label value escaped for the exposition format (\\, \", \n). */
void lw_export_label(FILE *f, const char *v);
/* # HELP and # TYPE of a family. */
void lw_export_family(FILE *f, const char *name, const char *type, const char *help);

#endif /* LW_EXPORT_INTERNAL_H */
