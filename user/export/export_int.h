/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* export_int.h - the exporter's state, shared by its files only. */
#ifndef LW_EXPORT_INT_H
#define LW_EXPORT_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "latwhy.h"
#include "engine/cause.h"
#include "node/node.h"
#include "export/export.h"
#include "export/health.h"

/* A series' labels: target="...", or a pod container's namespace, pod,
 * container (the pod's QoS class for latwhy_pod_info). */
struct lw_export_labels {
	bool pod;
	bool dead; /* dropped: not rendered, its index free again */
	char target[512];
	char ns[64], name[254], container[64], qos[16];
};

/* One target's series: what a scrape sees of it. */
struct lw_export_series_counters {
	struct lw_export_labels lab;
	__u64 requests;
	__u64 slow[LW_CAUSE_MAX];	 /* slow requests by cause */
	__u64 slow_ns[LW_CAUSE_MAX];	 /* their time by cause */
	__u64 watch_slow, watch_slow_ns; /* the always-attached tier's estimates */
	__u64 watch_timed;		 /* ... from these timed requests */
	__u64 hist[LW_HIST_BUCKETS];
};

/* What a scrape sees: everything cumulative since the exporter began. */
struct lw_export_counters {
	struct lw_export_series_counters s[LW_MAX_TARGETS];
	int nseries;
	__u64 dropped;
	bool active;	   /* a tracer is attached and delivering */
	__u64 attached_ns; /* the tracers' programs attached, in all */
	/* the always-attached tier: on now (its records come), its time, and
	 * full tracing's escalations and the last one's delay */
	bool watch_active;
	__u64 watch_ns;
	__u64 escalations;
	bool esc_delay_known;
	__u64 esc_delay_ns;
	__u32 flags; /* enum lw_meta_flags of the running tracer */
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
	struct lw_export_labels lab;
	__u64 requests;
	__u64 hist_base[LW_HIST_BUCKETS], hist_cur[LW_HIST_BUCKETS];
	/* its slow requests by cause, counted in the kernel */
	struct lw_cause_counts causes_base, causes_cur;
	/* and by the always-attached tier, whatever their cause, with every
	 * request (then the series' requests) */
	bool watch_seen;
	struct lw_export_watch watch_base, watch_cur;
};

/* A cgroup the exporter has read, known by its directory's inode: one
 * made again under the same path (a unit restarted) is another. */
struct lw_export_cg_known {
	__u64 dev, ino;
	__u64 periods, throttled, throttled_ns; /* at its last reading */
};

/* The cgroups of a target a scrape remembers: one flapping among more than
 * this many would count one again from its start. */
#define LW_EXPORT_CG_KNOWN 4

/*
 * A target's cgroup CPU bandwidth counters (throttle.c), under cg_lock.
 * The tracing thread says where its cgroup is (dir); each scrape reads it.
 * The counters are the sum of what each of the target's cgroups added
 * while it was the target's: a restart into a new cgroup goes on from
 * where the last one was, never back.
 */
struct lw_export_cg {
	char dir[PATH_MAX]; /* the cpu controller's directory below the root; "" none */
	bool v1;	    /* in a cgroup v1 cpu hierarchy (throttled_time in ns) */
	bool seen;	    /* read once: the counters exist from then on */
	__u64 periods, throttled, throttled_ns;
	/* the quota at the last reading: 0 unlimited, or unread */
	__u64 quota_us, period_us;
	struct lw_export_cg_known known[LW_EXPORT_CG_KNOWN];
	int next_known; /* the one to replace next */
};

/* One reading of a cgroup's cpu controller. */
struct lw_cgroup_cpu {
	__u64 dev, ino;
	__u64 periods, throttled, throttled_ns;
	__u64 quota_us, period_us; /* quota_us 0: unlimited, or unread */
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
	bool watch_active;   /* the running tracer has the always-attached tier */
	__u64 watch_ns;	     /* its attached time, from LW_REC_TIER */
	__u64 escalations, esc_delay_ns;
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
	int pods_other; /* pods summed under pod="other" now (under lock) */
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
	/* each target's cgroup CPU bandwidth counters: the tracing thread
	 * sets their dir, a scrape reads them */
	pthread_mutex_t cg_lock;
	struct lw_export_cg cg[LW_MAX_TARGETS];
	/* whose CPU time the waits were (preempt.c); the pointer under lock,
	 * NULL until the first count */
	struct lw_export_preempt *preempt;
	struct lw_health health; /* stamped at each publish: GET /healthz */
};

/* preempt.c: latwhy_preempted_seconds_total; a restart keeps what each
 * series reached as its base; a series' index taken by another pod starts
 * from 0; freed with the exporter. */
void lw_export_preempt_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c);
void lw_export_preempt_restart(struct lw_export *x);
void lw_export_preempt_forget(struct lw_export *x, int series);
void lw_export_preempt_free(struct lw_export *x);

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
/* throttle.c: the directory of pid's cgroup that holds its cpu controller
 * below root ("" for "/"), and whether it is v1's. 0, -ENOENT (no such
 * process, or no cgroup with a cpu controller), -ENAMETOOLONG. */
int lw_export_cgroup_dir(const char *root, int pid, char *dir, size_t len, bool *v1);
/* One reading of the cgroup at dir: 0, -errno when it is gone, -ENODATA
 * when its cpu.stat has no bandwidth counters (no cpu controller there). */
int lw_export_cgroup_read(const char *dir, bool v1, struct lw_cgroup_cpu *r);
/* A reading into the target's counters: what it added since the last
 * reading of the same cgroup, all of it for a cgroup not read before. */
void lw_export_cg_account(struct lw_export_cg *cg, const struct lw_cgroup_cpu *r);
/* Each target's cgroup read now, and the latwhy_cgroup_cpu_* families. */
void lw_export_cgroup_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c);
/* The targets' processes are gone (a restart): no cgroup to read, no
 * quota known, until lw_export_series_pid() says again; the counters hold. */
void lw_export_cgroup_forget(struct lw_export *x);
/* bpfstats.c: latwhy_bpf_stats_enabled and, when it is 1, the programs'
 * run time and count. */
void lw_export_bpf_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c);
/* latwhy's own health: CPU time, resident memory, build. */
void lw_export_self_write(FILE *f);

/* ns as seconds, exactly (no rounding through a double), and a newline. */
void lw_export_seconds(FILE *f, __u64 ns);
/* `name{target="target"`: the caller adds its other labels and the '}'. */
void lw_export_target(FILE *f, const char *name, const char *target);
/* The same for a series: `name{target="..."` or, of a pod's container,
 * `name{namespace="...",pod="...",container="..."`. */
void lw_export_series_name(FILE *f, const char *name, const struct lw_export_labels *l);
/* A label value escaped for the exposition format (\\, \", \n). */
void lw_export_label(FILE *f, const char *v);
/* # HELP and # TYPE of a family. */
void lw_export_family(FILE *f, const char *name, const char *type, const char *help);

#endif /* LW_EXPORT_INT_H */
