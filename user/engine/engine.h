/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * engine.h - the analysis engine: records in, attribution and evidence out.
 *
 * It knows nothing of libbpf. Live tracing, capture files and tests feed it
 * the records of bpf/latwhy.h (it is a sink, sink.h); renderers and the
 * advisor read its summary, and an on_request callback sees each slow request
 * it takes in.
 */
#ifndef LW_ENGINE_H
#define LW_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "latwhy.h"
#include "engine/cause.h"
#include "engine/sink.h"

#define LW_TOP 8

struct lw_engine;

/* Per-cause totals over the slow requests. */
struct lw_cause_stat {
	__u64 ns;	/* ns attributed to the cause */
	double share;	/* ns over the total latency of the slow requests */
	__u64 requests; /* slow requests whose cause this is */
	/* some of its tracepoints were attached (frequency: a clock and a
	 * reference were known): without it, ns and share say nothing */
	bool measured;
};

/* Why the engine could not take in a record, or all of one; each is counted
 * in the summary by kind, never dropped unsaid. */
enum lw_engine_err {
	LW_EERR_SHORT,	 /* shorter than its type's struct */
	LW_EERR_UNKNOWN, /* a type the engine does not know */
	LW_EERR_INVALID, /* a field out of range (a CPU beyond LW_MAX_CPUS) */
	LW_EERR_NOMEM,	 /* out of memory: what it held is missing */
	LW_EERR_MAX,
};

/* The task a slow request waited for longest, over the slow requests. */
struct lw_slow_wait {
	__u32 pid; /* 0: the CPU was idle (wake-up latency) */
	char comm[LW_COMM_LEN];
	__u64 requests; /* slow requests whose longest wait it was */
	__u64 ns;	/* those waits, summed */
};

struct lw_summary {
	int pid;
	char comm[LW_COMM_LEN];
	__u32 tracer_tgid; /* latwhy itself; 0: not known */
	__u32 flags;	   /* enum lw_meta_flags */
	/* a META record, a tick or the histogram came: duration, request
	 * count and percentiles were measured (false: a capture cut before
	 * its first periodic record; they are unknown, not 0) */
	bool counted;
	__u64 duration_ns;
	__u64 requests;
	/* what was attached (LW_REC_TIER, ABI 4; tiers_known false before):
	 * serve's always-attached tier, which then counted the requests,
	 * and full tracing, which alone sees causes and slow records */
	bool tiers_known;
	__u64 watch_ns, full_ns;
	__u64 watch_slow; /* slow requests the always-attached tier counted */
	__u32 escalations;
	__u64 slow_requests;
	__u64 threshold_ns; /* LW_THRESH_UNKNOWN: p99 not established */
	bool threshold_fixed;
	__u64 p50_ns, p99_ns;
	__u64 dropped;
	__u64 incomplete;	   /* requests whose accounting missed a transition */
	__u64 untracked;	   /* requests given up (too many open) */
	__u64 handoffs;		   /* requests answered by another thread than their reader */
	__u64 handoff_slow;	   /* of them slow: not in slow_requests, not split */
	__u64 handoff_slow_ns;	   /* their latency */
	__u32 req_mode;		   /* enum lw_req_mode; AUTO: not known */
	__u64 slow_latency_ns;	   /* total latency of slow requests */
	__u64 bucket_ns[LW_B_MAX]; /* per bucket, over slow requests */
	struct lw_cause_stat cause[LW_CAUSE_MAX];
	enum lw_cause dominant; /* LW_CAUSE_NONE: nothing reached 10% */
	/* The slow requests' time beyond a typical request's (p50 each), and
	 * the part of it their own running holds; running_dominant: more
	 * than any kernel cause's ns, so the verdict is "running" and
	 * dominant only the largest kernel cause (summarize_causes()). */
	__u64 excess_ns;
	__u64 running_excess_ns;
	bool running_dominant;
	/* The part of their running the host took (steal, where the guest's
	 * steal clock was read): not their own running, so out of
	 * running_excess_ns; steal_dominant when it beats both it and every
	 * kernel cause, and the verdict is "steal". */
	__u64 steal_ns;
	bool steal_dominant;
	enum lw_freq_source freq_source;
	bool freq_measured;   /* a clock and a reference were known */
	__u32 irq_entry_ns;   /* one interrupt's entry and exit, measured at start; 0: not */
	__u32 fault_entry_ns; /* one page fault's cost outside its span, the same */
	__u32 freq_min_khz, freq_max_khz, ref_khz; /* over CPUs the target used */
	/* each CPU's last clock, where a clock and a reference were known (all
	 * CPUs, not only the target's); 0: no clock; nr_cpu_khz: CPUs seen */
	__u32 cpu_khz[LW_MAX_CPUS];
	__u32 nr_cpu_khz;
	/* evidence, largest first */
	struct lw_irq_rec irqs[LW_TOP];
	size_t nr_irqs;
	struct lw_softirq_rec softirqs[LW_TOP];
	size_t nr_softirqs;
	struct lw_preempt_rec preempt[LW_TOP]; /* over all requests */
	size_t nr_preempt;
	struct lw_slow_wait slow_waits[LW_TOP]; /* over the slow requests only */
	size_t nr_slow_waits;
	/* their Kubernetes pods, index for index (LW_REC_POD; type 0: in no
	 * pod, or not known: a capture of record ABI 3 and older), and the
	 * run's process's (pid's) */
	struct lw_pod_rec preempt_pod[LW_TOP];
	struct lw_pod_rec slow_wait_pod[LW_TOP];
	struct lw_pod_rec target_pod;
	struct lw_thp_stats thp;
	/* the targets' memory management, cumulative (LW_REC_MEMORY); over
	 * the slow requests measured for it: their faults, and how many had
	 * memory time */
	struct lw_mem_stats mem;
	/* the node's memory while traced (snapshots 0: not read) */
	struct lw_mem_node mem_node;
	__u64 mem_faults_min, mem_faults_maj, mem_requests;
	/* slow requests that waited out a CFS throttle of their cgroup
	 * (ns[LW_B_QUOTA] > 0), those waits summed and the longest; 0 when
	 * not measured (cause[LW_CAUSE_QUOTA].measured says which) */
	__u64 quota_waits, quota_wait_ns, quota_wait_max_ns;
	__u64 cpus_mask[LW_MAX_CPUS / 64]; /* CPUs slow requests ended on */
	__u64 engine_errors;		   /* the sum of engine_error[] */
	__u64 engine_error[LW_EERR_MAX];
};

struct lw_engine *lw_engine_new(void);
void lw_engine_free(struct lw_engine *e);

/* Who the records are of, for the summary until a META record says so: a
 * capture capped or cut before its first periodic snapshot holds none, but
 * its TARGET facts name the process. comm may be NULL. */
void lw_engine_set_target(struct lw_engine *e, __u32 pid, const char *comm);

/*
 * Feed one record. Evidence records (IRQ, SOFTIRQ, PREEMPT, POD, THP, CPU,
 * HIST) are cumulative snapshots and replace the previous value for their
 * key.
 * Returns 0; -EINVAL for a record that is short, of an unknown type or out of
 * range; -ENOMEM. Every error is also counted by kind in the summary.
 */
int lw_engine_feed(struct lw_engine *e, const void *rec, size_t len);

/* The engine as a sink of a record source: record() is lw_engine_feed(). */
struct lw_sink lw_engine_sink(struct lw_engine *e);

/* Called for each slow request the engine took in (handed-off ones too),
 * after it was counted: the per-request output hangs here. */
typedef void (*lw_request_fn)(void *ctx, const struct lw_request *r);
void lw_engine_on_request(struct lw_engine *e, lw_request_fn fn, void *ctx);

/* The cause of one request: the largest of frequency, irq+softirq, thp, sched
 * and idle, if it holds LW_REQ_CAUSE_MIN_PCT of the latency; LW_CAUSE_NONE
 * otherwise. */
enum lw_cause lw_request_cause(const struct lw_request *r);
/* A request's ns per traced cause (the buckets each is made of); the
 * others 0. */
void lw_request_cause_ns(const struct lw_request *r, __u64 v[LW_CAUSE_MAX]);

/* |sum of buckets - latency| within 1% of the latency. */
bool lw_request_consistent(const struct lw_request *r);

void lw_engine_summarize(const struct lw_engine *e, struct lw_summary *s);

/* The time requests were counted over: the always-attached tier's where it
 * ran, else full tracing's, else (no tier record) the whole run: the
 * requests' rate is over it. */
__u64 lw_summary_counted_ns(const struct lw_summary *s);
/* Full tracing was not attached the whole run (serve's tiers): the summary
 * says for how long. */
bool lw_summary_part_time(const struct lw_summary *s);

/* The verdict's name: "running" (running_dominant), else the dominant
 * cause's ("none" too). */
const char *lw_summary_verdict(const struct lw_summary *s);
/* The verdict line's text for running or steal (NULL for a kernel cause's
 * verdict), one sentence without its "Verdict: ". */
int lw_summary_verdict_own(const struct lw_summary *s, char *buf, size_t len);
/* ns as a share of the slow requests' excess (excess_ns), at most 1. */
double lw_summary_excess_share(const struct lw_summary *s, __u64 ns);

/* A pod as text: "pod batch/cruncher-5f, container cruncher" ("pod
 * batch/cruncher-5f" when the container is not named; "pod with uid U (no
 * log directory)" when the pod is not); "" for type 0 (no pod). Returns
 * buf. */
const char *lw_pod_words(const struct lw_pod_rec *p, char *buf, size_t len);

/* The task pid (of tgid, 0 when not known) is latwhy itself. */
bool lw_summary_is_tracer(const struct lw_summary *s, __u32 pid, __u32 tgid);

/* The slow requests kept so far (the newest LW_KEEP at most). */
size_t lw_engine_requests(const struct lw_engine *e, const struct lw_request **v);

/* Quantile q (0..1) of a latency histogram of LW_HIST_BUCKETS counts. */
__u64 lw_hist_quantile(const __u64 *b, __u64 total, double q);
/* Lowest value of a histogram bucket. */
__u64 lw_hist_lower(__u32 bucket);

const char *lw_freq_source_name(enum lw_freq_source s);
/* "socket", "syscall", "uprobe": how requests were delimited. */
const char *lw_req_mode_name(enum lw_req_mode m);
const char *lw_bucket_name(enum lw_bucket b);
const char *lw_softirq_name(__u32 vec);
/* "short", "unknown type", "malformed", "out of memory" */
const char *lw_engine_err_name(enum lw_engine_err k);

#endif /* LW_ENGINE_H */
