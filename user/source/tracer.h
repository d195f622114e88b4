/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tracer.h - the live record source, and the live trace built on it.
 *
 * The tracer opens, probes, loads and attaches latwhy's BPF programs and
 * polls them: slow requests from the ring buffer as they come and, once an
 * interval, the latency histogram, the request statistics, the evidence maps
 * and the run's meta record as cumulative snapshots. Every record leaves
 * through one struct lw_sink (engine/sink.h): the tracer prints no result
 * and gives no advice; what it says on stderr is why it cannot trace.
 */
#ifndef LW_TRACER_H
#define LW_TRACER_H

#include <stdbool.h>
#include <linux/types.h>

#include "source/conf.h"
#include "engine/sink.h"

struct lw_tracer;

/* Every name of the --skip list is a tracepoint latwhy uses: 0, or -EINVAL
 * said on stderr. Loads nothing: a usage check. */
int lw_tracer_check_skip(const char *list);

/*
 * Open, probe, load, seed and attach for o->pid (named comm), its records to
 * go to sink, which must stay valid until lw_tracer_close(). NULL with errno
 * set, said on stderr, when it cannot.
 */
struct lw_tracer *lw_tracer_open(const struct lw_trace_conf *o, const char *comm,
				 struct lw_sink sink);

/* enum lw_meta_flags known once open: the causes that cannot be measured. */
__u32 lw_tracer_flags(const struct lw_tracer *t);

/*
 * Poll until Ctrl-C (SIGINT, SIGTERM), o->duration_ns, the target's exit or
 * a sink's -ECANCELED; then deliver the last snapshots (META included).
 * 0 or a negative errno.
 */
int lw_tracer_run(struct lw_tracer *t);

/* What is traced, for a header: "pid 42 (srv)", "cgroup /a (3 processes)",
 * several joined by ", ". */
void lw_tracer_describe(const struct lw_tracer *t, char *buf, size_t len);

/* The targets' processes at the last refresh, up to max into pids: how
 * many were stored. */
int lw_tracer_pids(const struct lw_tracer *t, int *pids, int max);

/* The first of the targets' processes now (the node's facts of it); 0 when
 * there is none. */
int lw_tracer_first_pid(const struct lw_tracer *t);

/* Several targets, a series each (serve): how many (slots 0..n-1), the
 * label of one (the unit, the cgroup path, the comm; -p: its process's
 * comm), and its latency histogram since the start (LW_HIST_BUCKETS counts,
 * kept in the kernel per slot when there are several: 0 or -errno). */
int lw_tracer_targets(const struct lw_tracer *t);
void lw_tracer_target_label(const struct lw_tracer *t, int slot, char *buf, size_t len);
/* A slot's first process at the last refresh (the node's facts of that
 * target, its cgroup's CPU quota); 0 when it has none. */
int lw_tracer_target_pid(const struct lw_tracer *t, int slot);
int lw_tracer_target_hist(struct lw_tracer *t, int slot, __u64 *b);
/* A slot's slow requests by cause since the start, counted in the kernel
 * (with or without records, opts' counts_only): 0 or -errno. */
int lw_tracer_target_causes(struct lw_tracer *t, int slot, struct lw_cause_counts *c);
/* A slot's counts since the start by the always-attached tier: every
 * request, the timed ones (1 in 2^shift, bpf/watch.bpf.h), and the slow
 * ones and their latency estimated from those (each timed one weighted by
 * its 2^shift). */
struct lw_watch_counts {
	__u64 req, timed, slow, slow_ns;
};
/* 0, or -ENOENT without that tier. */
int lw_tracer_target_watch(const struct lw_tracer *t, int slot, struct lw_watch_counts *w);
/* A slot's waits for the CPU by whose task ran instead (enum lw_by),
 * counted in the kernel since the start: 0 or -errno. */
int lw_tracer_target_preempted(struct lw_tracer *t, int slot, struct lw_preempt_by *b);

/* A container of a --pods or --pod target, as its slot holds it: names
 * from the kubelet's log tree (node/pods.h), "" unknown. */
struct lw_target_pod {
	char ns[64], name[254], container[64], qos[16], uid[40];
	bool named;	/* the pod's log directory was found; else name is its uid */
	char path[256]; /* the container's cgroup, below the v2 mount */
	__u64 pod_cgid; /* the pod's cgroup (its slice) */
	int pod_level;	/* its level below the v2 root */
};

/* A pod target's slot: free, a container's, or a container's that is gone
 * (its counters kept for LW_POD_HOLD_NS, so that their last values are
 * scraped, then free again). */
enum { LW_SLOT_FREE = 0, LW_SLOT_LIVE, LW_SLOT_GONE };
#define LW_POD_HOLD_NS (30ULL * 1000000000ULL)

/* Slot's pod container into p, its state (LW_SLOT_*) and generation (it
 * changes each time the slot takes another container): false when the
 * slot is no pod target's. */
bool lw_tracer_target_pod(const struct lw_tracer *t, int slot, struct lw_target_pod *p, int *state,
			  __u32 *gen);

/* The target was gone at the last snapshot. */
bool lw_tracer_target_exited(const struct lw_tracer *t);

/* A run ended by SIGINT or SIGTERM (its handler took the signal): the
 * caller's own stop, whatever else ended the run in the same tick. */
bool lw_tracer_stopped(void);

void lw_tracer_close(struct lw_tracer *t);

#endif /* LW_TRACER_H */
