/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * export.h - the Prometheus exporter: a sink that keeps cumulative counters
 * from the records and renders them in the text exposition format.
 *
 * Two threads meet here. The tracing thread feeds records through the sink
 * and publishes a snapshot of the counters at each tick; the HTTP thread
 * renders the last published snapshot, plus the node's drift gauges and
 * latwhy's own health, on each scrape. They share only the snapshot, under
 * a mutex held for a copy, so a scrape never stalls the tracing loop.
 *
 * Counters never go back: a tracer restarted on a new process of the same
 * target starts its cumulative snapshots (HIST, META) from zero again, and
 * lw_export_restart() keeps what the last one reached as their offset.
 */
#ifndef LW_EXPORT_H
#define LW_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "latwhy.h"
#include "engine/sink.h"

/* latwhy_build_info{version}; the build may set it (-DLW_VERSION=...). */
#ifndef LW_VERSION
#define LW_VERSION "dev"
#endif

/* The node's gauges are read again at most this often, on a scrape. */
#define LW_EXPORT_NODE_NS (10ULL * 1000000000ULL)

struct lw_export;

/*
 * An exporter for target (the comm: its `target` label), reading the node's
 * gauges under node_root ("/" on a live node, a fixture tree in tests).
 * NULL with errno set.
 */
struct lw_export *lw_export_new(const char *target, const char *node_root);
void lw_export_free(struct lw_export *x);

/*
 * Several targets, a series each: a series more, labelled (the first is
 * lw_export_new()'s target): its index, or -E2BIG past LW_MAX_TARGETS; the
 * same index for a label given before. With more than one, each series'
 * latency histogram since its tracer began comes from
 * lw_export_series_hist() before each tick.
 */
int lw_export_add_series(struct lw_export *x, const char *label);
void lw_export_series_hist(struct lw_export *x, int series, const __u64 *b);
/*
 * Pods (serve --pods, --pod): a series labelled namespace, pod, container
 * (never a pid, a uid or a container id), qos for latwhy_pod_info: its
 * index, the same for labels given before, a dropped series' index taken
 * again (its counters from 0), or -E2BIG. A pod named "other" with no
 * namespace is the series of the pods over serve's bound.
 */
int lw_export_add_pod_series(struct lw_export *x, const char *ns, const char *pod,
			     const char *container, const char *qos);
/* A series no longer served (its pod is gone): left out of every scrape
 * from the next publish on, its index free. */
void lw_export_drop_series(struct lw_export *x, int series);
/* What a series' targets that left it had counted, kept in it (a pod's
 * container leaving pod="other"): its counters never go back. */
void lw_export_series_retire(struct lw_export *x, int series, const __u64 *hist,
			     const struct lw_cause_counts *c);
/* How many pods are summed under pod="other" now: latwhy_pods_over_bound. */
void lw_export_pods_other(struct lw_export *x, int n);
/* A series' slow requests by cause since its tracer began, as the kernel
 * counted them (lw_tracer_target_causes()), before each tick. */
void lw_export_series_causes(struct lw_export *x, int series, const struct lw_cause_counts *c);
/*
 * A series' target process now, before each tick (0: none): its cgroup's
 * CPU bandwidth counters, latwhy_cgroup_cpu_*, are read at each scrape
 * from the cgroup it is in. Tracing thread.
 */
void lw_export_series_pid(struct lw_export *x, int series, int pid);
/* A series' waits for the CPU by whose task ran instead since its tracer
 * began, as the kernel counted them (lw_tracer_target_preempted()),
 * before each tick: latwhy_preempted_seconds_total{...,by}. And what a
 * slot that left the series had counted, kept in it (preempt.c). */
void lw_export_series_preempted(struct lw_export *x, int series, const struct lw_preempt_by *b);
void lw_export_preempted_retire(struct lw_export *x, int series, const struct lw_preempt_by *b);
/* to += from, counter by counter. */
void lw_cause_counts_add(struct lw_cause_counts *to, const struct lw_cause_counts *from);

/* The exporter as a sink: record() takes the records, tick() publishes. */
struct lw_sink lw_export_sink(struct lw_export *x);

/* Make what was taken in so far what a scrape sees. */
void lw_export_publish(struct lw_export *x);

/*
 * The source is about to start again from zero (a new process of the
 * target): publish what the last run delivered, then keep it as the base
 * its cumulative snapshots add to.
 */
void lw_export_restart(struct lw_export *x);

/*
 * The tracer's programs were attached (on) or detached at now_ns
 * (CLOCK_MONOTONIC), by its duty cycle or at the start and end of a run:
 * latwhy_sampling_active and latwhy_sampling_attached_seconds_total.
 * Tracing thread; published at once.
 */
void lw_export_attached(struct lw_export *x, bool on, __u64 now_ns);
/* Full tracing was attached on a rise of slow requests, delay_ns after the
 * rise's first: latwhy_escalations_total, latwhy_escalation_delay_seconds. */
void lw_export_escalated(struct lw_export *x, __u64 delay_ns);
/* A series' counts since its tracer began by the always-attached tier,
 * before each tick: its requests (every one: latwhy_requests_total from
 * them, not from the histogram, a weighted sample), the timed ones, and
 * the slow ones and their latency (estimates). */
struct lw_export_watch {
	__u64 slow, slow_ns, req, timed;
};
void lw_export_series_watch(struct lw_export *x, int series, const struct lw_export_watch *w);

/* One BPF program's counters from bpf_prog_info (kernel.bpf_stats_enabled),
 * cumulative since its tracer loaded it. */
struct lw_export_prog {
	char name[32];
	__u64 run_ns;
	__u64 run_cnt;
};

#define LW_EXPORT_PROGS 64

/* The running tracer's programs, before a tick: latwhy_bpf_run_*_total.
 * Tracing thread; a restart keeps what they reached as their base. */
void lw_export_progs(struct lw_export *x, const struct lw_export_prog *p, size_t n);

/* The target's process, whose allowed CPUs latwhy_irq_spread_entropy
 * is about; 0: none (the family is absent). Any thread. */
void lw_export_set_pid(struct lw_export *x, int pid);
/* Hindsight captures (latwhy_captures_total{target,reason}): the reasons
 * known from the start, each at 0 (the family appears with the first); at
 * most LW_EXPORT_REASONS. Then one more written, from any thread. */
#define LW_EXPORT_REASONS 16
void lw_export_capture_reason(struct lw_export *x, const char *reason);
void lw_export_capture_written(struct lw_export *x, const char *reason);

/* The exposition text of the last published snapshot, NUL-terminated, in
 * *len bytes (the NUL excluded); free() it. NULL with errno set. */
char *lw_export_render(struct lw_export *x, size_t *len);

/* Histogram bounds: every power of two from 2^LW_EXPORT_LE_MIN ns (1 us) to
 * 2^LW_EXPORT_LE_MAX ns (34 s), edges of the in-kernel histogram's groups. */
#define LW_EXPORT_LE_MIN 10
#define LW_EXPORT_LE_MAX 35

#endif /* LW_EXPORT_H */
