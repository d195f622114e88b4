/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tracer_int.h - the live record source's state, shared by its units:
 *
 *   tracer.c    lifecycle: open, load, seed, attach, poll, close
 *   programs.c  which programs this kernel and these options load
 *   snapshot.c  the BPF maps read into records, once per interval
 *   control.c   adaptive control of the loaded programs while tracing
 *   duty.c      the duty cycle (serve --sample): links off and on again
 *   progstats.c the programs' run time and count (bpf_prog_info)
 *
 * Only source/ includes it; the rest of latwhy sees struct lw_tracer through
 * source/tracer.h and its records through a sink.
 */
#ifndef LW_TRACER_INT_H
#define LW_TRACER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "latwhy.h"
#include "source/conf.h"
#include "engine/sink.h"
#include "source/freq.h"
#include "source/place.h"
#include "source/tracer.h"

struct latwhy_bpf;
struct ring_buffer;
struct lw_duty_state;

#define LW_WATCH_LINKS 2 /* the always-attached tier's programs */

/* Adaptive control's own state (control.c). */
struct lw_control {
	__u64 ticks;
	bool sock_send_tried;  /* see control_sock_send() */
	__u64 backlog_seen_ns; /* lw_netif_rx last stamped (control_backlog()) */
	bool backlog_lost;     /* lw_netif_recv could not be attached again */
};

/* One target while tracing (targets.c). */
struct lw_target_live {
	const struct lw_target_opt *opt;
	__u32 slot;
	char comm[LW_COMM_LEN];	  /* -p: its name */
	char rel[LW_TARGET_NAME]; /* cgroup, unit: path below the v2 mount; "" not known */
	const char *how;	  /* unit: how rel was found */
	bool searched;		  /* unit: found in the tree, not from systemd */
	__u64 cgid;		  /* its id in targ_cgroups; 0: none */
	int nprocs;		  /* its processes at the last refresh */
	bool seen;		  /* it existed once */
	bool waiting;		  /* its absence was said */
	__u64 scanned_ns;	  /* --comm: its last walk of /proc */
	/* a container of --pods or --pod (targets.c's pods_refresh()) */
	int pod_state; /* LW_SLOT_FREE, _LIVE, _GONE */
	__u64 gone_ns; /* _GONE: when it was last seen */
	__u32 gen;     /* bumped each time the slot takes a container */
	struct lw_target_pod pod;
};

struct lw_tracer {
	const struct lw_trace_conf *o;
	struct lw_target_live tg[LW_MAX_TARGETS];
	int ntg;		    /* slots in use: the static targets', then pods' */
	int nstatic;		    /* targets of t->o other than pods: slots 0..nstatic-1 */
	bool pods;		    /* a --pods or --pod target: slots nstatic.. are containers */
	int pods_untraced;	    /* containers past the last slot, said once */
	char cg_mount[LW_PATH_MAX]; /* cgroup v2's mount point, "" for "/" */
	bool cg_known;		    /* cg_mount was found */
	int pids[LW_MAX_TGIDS];	    /* every target's processes, first seen first */
	int pid_slot[LW_MAX_TGIDS]; /* the slot of the target each is of */
	int npids;
	int prev_pids[LW_MAX_TGIDS], prev_slot[LW_MAX_TGIDS]; /* the refresh before */
	int nprev;
	bool pids_changed; /* the last refresh found other processes than the one before */
	struct latwhy_bpf *skel;
	struct ring_buffer *rb;
	struct lw_sink sink; /* where every record goes */
	bool cancelled;	     /* the sink can take no more (-ECANCELED) */
	struct lw_freq freq;
	struct lw_control ctl;
	int nr_cpus;
	__u32 flags;	       /* enum lw_meta_flags found at probe and since */
	enum lw_req_mode mode; /* resolved: never LW_REQ_AUTO */
	__u64 start_ns;
	__u64 req_count;	    /* requests at the previous tick (lw_snapshot_requests()) */
	__u64 slow_in_tick;	    /* ring-buffer records since the previous tick */
	__u64 clock_events;	    /* cpu_frequency events, summed at the last snapshot */
	struct lw_hist_rec *hist;   /* lat_hist summed over CPUs, at the last read */
	__u64 *hist_buf;	    /* per-CPU values of lat_hist, or cause_counts */
	struct lw_count *count_buf; /* per-CPU values of irq_ev, softirq_ev */
	bool target_exited;
	char comm[LW_COMM_LEN];
	struct lw_place place;	    /* where latwhy runs, and at which nice value */
	__u64 dropped_seen;	    /* records dropped at the previous tick */
	__u64 last_tick_ns;	    /* when the previous tick ran (tracer_keep_up()) */
	struct lw_duty_state *duty; /* serve --sample (duty.c); NULL: always attached */
	/* serve's always-attached tier (bpf/watch.bpf.h): loaded, and its
	 * links, kept out of the skeleton's so that a detach of full tracing
	 * leaves them; what the tier records took of its counts */
	bool watch;
	struct bpf_link *watch_links[LW_WATCH_LINKS]; /* tcp_rcv_space_adjust, close */
	__u64 tier_ns;				      /* the previous tier record's end */
	__u64 watch_slow_seen;			      /* watch_slow summed, at it */
	__u32 escalations;			      /* rises since it */
	struct lw_podnames *podnames;		      /* the pods of tasks' cgroups (podnames.c) */
	/* lw_fault_min/maj on every CPU's page-fault perf events (memory.c) */
	struct bpf_link **mem_links;
	int *mem_fds; /* their events, which the links own */
	int nmem_links;
	bool fault_cost_tried; /* faultcost.c ran, once: the duty cycle re-attaches */
	/* the node's memory at each snapshot (LW_REC_MEMORY's node part), and
	 * kswapd's CPU time when the first one was taken */
	struct lw_mem_node mem_node;
	unsigned long long kswapd_base;
	bool kswapd_based;
};

/* tracer.c */
__u64 lw_now_ns(void);
/* One record to the sink. Its errors are the sink's to count; only
 * -ECANCELED stops the trace (t->cancelled). */
void lw_tracer_emit(struct lw_tracer *t, const void *rec, size_t len);
/* A process of target slot into the BPF filter, live: 0 or -errno. */
int lw_tracer_add_tgid(struct lw_tracer *t, __u32 tgid, __u32 slot);

/* targets.c */
/* The targets of t->o, the cgroup v2 mount if one is a cgroup; each -p
 * checked (said on stderr). 0 or -errno. */
int lw_targets_init(struct lw_tracer *t);
/* Every target's processes and cgroup ids now; with apply, into the BPF
 * filter. Says once what is waited for; sets t->target_exited when every
 * target is a -p process and none is left. */
int lw_targets_refresh(struct lw_tracer *t, bool apply);
void lw_targets_describe(const struct lw_tracer *t, char *buf, size_t len);

/* Attach every program the skeleton attaches, and the uprobes; said on
 * stderr when it cannot. At open, and again by the duty cycle. */
int lw_tracer_attach(struct lw_tracer *t);
/* memory.c: whether perf's page-fault software events can be opened; their
 * programs attached on every CPU (again: the old links first), detached. */
bool lw_memory_probe(void);
int lw_memory_attach(struct lw_tracer *t);
void lw_memory_detach(struct lw_tracer *t);
void lw_memory_close(struct lw_tracer *t);

/* One interval's snapshots and the sink's tick now, out of turn: what the
 * programs counted up to a detach is published at it. */
void lw_tracer_tick_now(struct lw_tracer *t);

/* duty.c: attach or detach at now as the duty cycle says; 0 or the
 * negative errno of an attach that failed (said on stderr). */
int lw_duty_poll(struct lw_tracer *t, __u64 now);
/* The run ended at now: detached, for whom is told. */
void lw_duty_end(struct lw_tracer *t, __u64 now);
/* The programs are attached now (always, without a duty cycle). */
bool lw_duty_attached(const struct lw_tracer *t);
/* When the duty cycle changes next, or its escalation rule steps; 0 before
 * it started, or without one. */
__u64 lw_duty_next(const struct lw_tracer *t);
/* Full tracing's attached time since the last call, up to now. */
__u64 lw_duty_take_full_ns(struct lw_tracer *t, __u64 now);
/* A rise of slow requests is on: full tracing on for it, or let go for
 * the cheap tier alone to judge it (a check). */
bool lw_duty_escalated(const struct lw_tracer *t);
/* An interval's tick while detached: the maps stand still, so no snapshot
 * is read or sent; only whether the target still exists. */
void lw_duty_idle_tick(struct lw_tracer *t, __u64 now);

/* programs.c: switch off what this kernel or --skip and --request leave out,
 * configure .rodata; 0 or a negative errno said on stderr. */
int lw_tracer_probe(struct lw_tracer *t);

/* podnames.c: the Kubernetes pod of a task, for the preemptor evidence
 * (LW_REC_POD). By the cgroup v2 id the kernel saw it in (tgid: its
 * process, read when the id is no container's: a cgroup below one), or
 * by a process's own cgroup: 0 with out's names set (not its type and
 * pid), -ENOENT when it is in no pod (or none can be read). The node's
 * pods are walked again for an id not seen before, once a second at most. */
struct lw_podnames;
int lw_podnames_of_cgid(struct lw_tracer *t, __u64 cgid, __u32 tgid, struct lw_pod_rec *out);
int lw_podnames_of_pid(struct lw_tracer *t, int pid, struct lw_pod_rec *out);
void lw_podnames_free(struct lw_podnames *p);

/* snapshot.c */
/* Read lat_hist into t->hist; returns the requests it counts. */
__u64 lw_snapshot_hist(struct lw_tracer *t);
/* Requests so far: every one the always-attached tier counted where it
 * runs (its histogram holds a weighted sample), else hist_count. */
__u64 lw_snapshot_requests(const struct lw_tracer *t, __u64 hist_count);
/* The evidence maps (IRQ, SOFTIRQ, PREEMPT, CPU, THP) as records. */
void lw_snapshot_evidence(struct lw_tracer *t);
/* The META record; after lw_snapshot_evidence(), whose clock events it uses. */
void lw_snapshot_meta(struct lw_tracer *t);

/* control.c */
/* Before attaching: the kernel threads and sockets the programs watch. */
void lw_control_start(struct lw_tracer *t);
/* Once per interval, at now: refresh them, attach or detach programs. */
void lw_control_tick(struct lw_tracer *t, __u64 now);
/* The slow threshold in force after this interval's histogram (count
 * requests so far, p99 over them). */
__u64 lw_control_threshold(struct lw_tracer *t, __u64 count, __u64 p99);

#endif /* LW_TRACER_INT_H */
