/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * state.bpf.h - what every unit reads: each thread's and each CPU's state,
 * the settings more than one unit reads, and the maps they share.
 */

#ifndef LW_STATE_BPF_H
#define LW_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "latwhy.h"
#include "compat.bpf.h"

/* Configuration, set by userspace before load. */
/* Requests are keyed by connection (fd or socket) and a wake-up may open
 * one; false: uprobe-delimited requests, one call each. */
const volatile bool req_by_conn = true;
/* lw_sk_ready is loaded: a request can start when its data arrived. */
const volatile bool arrival_known = false;
/* lw_cpu_idle is loaded, and which of its state numbers poll (bit n: state
 * n); userspace reads them from cpuidle's state names ("POLL"). */
const volatile bool idle_state_known = false;
const volatile __u32 idle_poll_states = 0;
/* The kernel's CFS bandwidth state can be read (lw_quota_readable(), which
 * userspace checks in the kernel's BTF): waits of a throttled group are
 * told apart (quota.bpf.h). */
const volatile bool quota_known = false;
/* Page faults are traced, their entry (arch.bpf.h) and their end (perf's
 * page-fault software events, attached by userspace): memory.bpf.h. */
const volatile bool memory_known = false;

/* Set by userspace once every program is attached: a request whose start
 * was seen by a partly attached set of programs would miss time. */
volatile bool armed = false;

/*
 * Bumped by userspace each time it attaches the programs again after a
 * detach (serve --sample): a thread's or a socket's state from an older
 * generation saw only part of what happened while nothing ran, and is
 * started afresh, as at the first attach.
 */
volatile __u32 attach_gen = 0;

/*
 * Written by userspace every 10 s: the listening TCP ports of the target's
 * network namespace, a bit each (listen_known: some were found). A target's TCP socket on any
 * other local port is one it connected itself, a gateway's or a proxy's
 * upstream: what it reads there is a reply to its own request, not one.
 * connect() never picks a local port a listener holds, so the test is exact.
 */
volatile bool listen_known = false;
__u64 listen_ports[65536 / 64] = {};

/*
 * Written by userspace every second: the target has more than one thread,
 * so a request read by one may be answered by another (a thread pool, Go's
 * goroutines moving between threads after a blocking call). A socket then
 * keeps its open request's start and reader (struct sock_state), and a send
 * by another thread ends it there: its latency is measured, its time cannot
 * be split along one thread's transitions (LW_REQ_HANDOFF).
 */
volatile bool handoff_watch = false;

enum lw_tstate {
	TS_UNKNOWN = 0,
	TS_RUNNING,
	TS_RUNNABLE,
	TS_SLEEPING,
};

/* A request's start state. Its key, time and longest wait live in arrays of
 * thread_state, so that finding a slot reads two cache lines, not sixteen. */
struct req_slot {
	__u64 snap[LW_B_MAX]; /* the thread's cum[] at slot_ts */
	__u32 nincomplete;    /* thread_state counters then */
	__u32 nfreq;
	__u64 nfaults;
};

/* The thread's cum[] at a scheduler transition while busy, and the bucket
 * the time after it went to: a request whose data arrived between two
 * transitions starts from there (see request_arrival()). */
struct ckpt {
	__u64 ts;
	__u64 cum[LW_B_MAX];
};

#define LW_CKPTS 4 /* a power of 2 */

struct thread_state {
	__u64 last_ts; /* last transition or checkpoint */
	/* CPU counters when the current running slice started */
	__u64 snap_irq;
	__u64 snap_softirq;
	__u64 snap_flost;
	__u64 snap_steal; /* the CPU's steal clock, with steal_known */
	__u32 snap_intr;  /* lw_cpu_state::nirq + nipi, with irq_entry_ns */
	__u32 state;	  /* enum lw_tstate */
	/* Time is charged to cum[]: a request is open, or the thread woke up
	 * and may be about to read one. Cleared when it sleeps with none open. */
	__u32 busy;
	__u32 open_mask;   /* slots holding an open request */
	__u32 depth;	   /* uprobe nesting */
	__u32 cycle_wake;  /* the busy span began at a wake-up */
	__u32 cycle_ended; /* a request ended since it began */
	__u32 nincomplete; /* missed transitions while busy */
	__u32 nfreq;	   /* run slices with a known clock while busy */
	__u64 waking_ts;   /* sched_waking: its wake-up began (on_wakeup()) */
	__u64 cycle_start;
	__u64 cycle_snap[LW_B_MAX];
	__u64 cum[LW_B_MAX];
	__u64 cycle_top_ns; /* longest wait since the busy span began */
	__u32 cycle_top_pid;
	__u32 in_compact;
	__u32 waiter_pid; /* who took the CPU when we were preempted */
	__u32 waiter_tgid;
	__u64 compact_start;
	char waiter_comm[LW_COMM_LEN];
	/* and, while busy, its cgroup v2 id and its class (enum lw_by)
	 * against this thread's target slot (wait_slot), decided when it took
	 * the CPU: switch_in() no longer has it at hand (preempt.bpf.h) */
	__u64 waiter_cgid;
	__u32 waiter_by;
	__s32 wait_slot;
	/* runqueue wait: the CPU queued on and its IRQ counters then */
	__u32 wait_cpu;
	__u32 waiting; /* counted in that CPU's waiters: LW_WAIT_* */
	__u64 wait_irq;
	__u64 wait_softirq;
	__u64 wait_thp;
	__u32 wait_intr;  /* the wait CPU's lw_cpu_state::nirq, with irq_entry_ns */
	__u64 wait_quota; /* its throttled time then (quota_cpu_ns()) */
	__u32 wait_ksd;	  /* its ksoftirqd's run time, low 32 bits (cpu_ksd_ns()) */
	/* Slots: used_mask has the open and the closed ones. A closed slot
	 * keeps when its request ended, for the next request on its conn. */
	__u32 used_mask;
	/* of the wake-up wait now going on: the stretch its CPU took to leave
	 * idle (on_wakeup()), in ns, saturated; 0: none */
	__u32 wake_idle;
	__u64 mm;	   /* its mm_struct, noted in targ_mms (thp.bpf.h) */
	__u64 pick_closed; /* slot_pick()'s scratch */
	__u64 pick_open;
	/* the last runqueue wait, for a request that arrived during it */
	__u64 last_wait_end;
	__u64 last_wait_ns;
	__u32 last_wait_pid;
	__u32 ckpt_next;
	__u32 ckpt_bucket[LW_CKPTS]; /* where the time after ckpts[k].ts went */
	struct ckpt ckpts[LW_CKPTS];
	__u64 slot_conn[LW_REQ_SLOTS];	 /* fd, struct sock *, or 0 (uprobe) */
	__u64 slot_ts[LW_REQ_SLOTS];	 /* open: start; closed: end */
	__u64 slot_top_ns[LW_REQ_SLOTS]; /* longest single wait since slot_ts */
	__u32 slot_top_pid[LW_REQ_SLOTS];
	struct req_slot slots[LW_REQ_SLOTS];
	/* request_slow()'s buckets of the request ending: here, not on the
	 * stack, where the verifier tracks each one's bounds (the send
	 * programs at 852k of its 1M instructions), nor per CPU, where a
	 * preempted program's could be another thread's */
	__u64 end_ns[LW_B_MAX];
	__u32 gen; /* attach_gen when it was made */
	/* memory.bpf.h: what of the kernel's memory management it is in now
	 * (LW_MEM_*), and whether the sleep now going on is a memory stall */
	__u32 mem_state;
	__u32 mem_stall;
	__u64 fault_start;
	__u64 reclaim_start;
	/* page faults ended: minor in the low 32 bits, major in the high */
	__u64 nfaults;
};

/* memory.bpf.h's precedence, shared with the unit tests: bpf/latwhy.h's
 * lw_mem_run_bucket() and lw_mem_sleep_bucket() (LW_MEM_* there). */
static __always_inline __u32 mem_run_bucket(const struct thread_state *ts)
{
	return lw_mem_run_bucket(ts->in_compact, ts->mem_state);
}

static __always_inline __u32 sleep_bucket(const struct thread_state *ts)
{
	return lw_mem_sleep_bucket(ts->in_compact, ts->mem_state, ts->mem_stall);
}

/* thread_state::waiting: how it is counted in its wait CPU's waiters */
#define LW_WAIT_QUEUED 1 /* a busy thread, runnable there */
#define LW_WAIT_WAKING 2 /* from sched_waking: not yet known to be busy */

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	/* mmapable arrays start page-aligned: with the value's 64-byte
	 * alignment every CPU gets its own cache lines */
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LW_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct lw_cpu_state);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LW_MAX_PREEMPTORS);
	__type(key, __u32);
	__type(value, struct lw_preempt_val);
} preempt_ev SEC(".maps");

static __always_inline struct lw_cpu_state *cpu_state_get(__u32 cpu)
{
	return bpf_map_lookup_elem(&cpus, &cpu);
}

/*
 * The targets, written by userspace at any time (a target added, a process
 * or a cgroup that came back under a new pid or id): no re-attach. A value
 * is the target's slot. targ_tgid_bits has the bit of every tgid in
 * targ_tgids (tgid % LW_TGID_BITS), set after the entry is added; only a
 * tgid whose bit is set is looked up. targ_ncgroups: entries in
 * targ_cgroups; 0, the only case of -p and --comm, skips their lookup.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LW_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u32);
} targ_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LW_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, __u32);
} targ_cgroups SEC(".maps");

__u64 targ_tgid_bits[LW_TGID_BITS / 64] = {};
volatile __u32 targ_ncgroups = 0;
/* The levels (bit n: level n, the root 0) of the cgroups in targ_cgroups
 * that take the cgroups below them (--cgroup, --unit): a task whose
 * cgroup's ancestor there is one is its target's. 0: ids match exactly
 * (pods' containers, whose processes are in them), one lookup. */
volatile __u32 targ_cg_levels = 0;
/* The only target process when no cgroup is a target (-p, one process of
 * --comm): compared, not looked up, on every event of the hot path. 0: the
 * maps decide. */
volatile __u32 targ_one = 0;

static __always_inline bool tgid_is_target(__u32 tgid)
{
	__u32 one = targ_one;

	if (one)
		return tgid == one;
	if (!(targ_tgid_bits[(tgid / 64) % (LW_TGID_BITS / 64)] & (1ULL << (tgid % 64))))
		return false;
	return bpf_map_lookup_elem(&targ_tgids, &tgid) != NULL;
}

/*
 * The slot of the cgroup at cgp's ancestor at one of levels (below cgp's
 * own level), -1 none. A global function: the verifier checks it once, not
 * at each of the hot path's call sites (the send programs are near its
 * limit), so the cgroup comes as a number and is read with probe reads.
 */
__noinline int lw_cg_ancestor_slot(__u64 cgp, __u32 levels)
{
	struct cgroup *cg = (struct cgroup *)cgp;
	__u32 *slot;
	__u64 id;
	int own;

	if (!cg)
		return -1;
	own = BPF_CORE_READ(cg, level);
	for (__u32 l = 0; l < LW_CG_ANCESTOR_LEVELS; l++) {
		if ((int)l >= own)
			break;
		if (!((levels >> l) & 1))
			continue;
		id = lw_cgroup_ancestor_id(cg, l);
		slot = id ? bpf_map_lookup_elem(&targ_cgroups, &id) : NULL;
		if (slot)
			return *slot;
	}
	return -1;
}

/* The same for current, through the helper (0 above its own level). */
__noinline int lw_cg_ancestor_slot_cur(__u32 levels)
{
	__u32 *slot;
	__u64 id;

	for (__u32 l = 0; l < LW_CG_ANCESTOR_LEVELS; l++) {
		if (!((levels >> l) & 1))
			continue;
		id = bpf_get_current_ancestor_cgroup_id(l);
		slot = id ? bpf_map_lookup_elem(&targ_cgroups, &id) : NULL;
		if (slot)
			return *slot;
	}
	return -1;
}

/* The slot of task t's cgroup, or of its ancestor at one of
 * targ_cg_levels; -1 none. t is any task: its cgroup read through its
 * css_set (compat.bpf.h). */
static __always_inline int cgroup_slot(struct task_struct *t)
{
	__u32 levels = targ_cg_levels, *slot;
	__u64 id = lw_task_cgroup_id(t);

	slot = id ? bpf_map_lookup_elem(&targ_cgroups, &id) : NULL;
	if (slot)
		return *slot;
	if (!levels)
		return -1;
	/* read, not loaded: a pointer is no global function's argument */
	return lw_cg_ancestor_slot((__u64)BPF_CORE_READ(t, cgroups, dfl_cgrp), levels);
}

/* The same for current: the helpers read its cgroup under RCU. */
static __always_inline int cgroup_slot_cur(void)
{
	__u32 levels = targ_cg_levels, *slot;
	__u64 id = bpf_get_current_cgroup_id();

	slot = id ? bpf_map_lookup_elem(&targ_cgroups, &id) : NULL;
	if (slot)
		return *slot;
	if (!levels)
		return -1;
	return lw_cg_ancestor_slot_cur(levels);
}

static __always_inline bool is_target(struct task_struct *t)
{
	if (tgid_is_target(t->tgid))
		return true;
	if (!targ_ncgroups)
		return false;
	return cgroup_slot(t) >= 0;
}

/* current's target slot, -1 for none; off the hot path (a request's end). */
static __always_inline int target_slot_cur(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, *slot;

	slot = bpf_map_lookup_elem(&targ_tgids, &tgid);
	if (slot)
		return *slot;
	if (!targ_ncgroups)
		return -1;
	return cgroup_slot_cur();
}

/* t is current. */
static __always_inline bool is_target_cur(struct task_struct *t)
{
	if (tgid_is_target(t->tgid))
		return true;
	if (!targ_ncgroups)
		return false;
	return cgroup_slot_cur() >= 0;
}

static __always_inline struct thread_state *thread_get(struct task_struct *t)
{
	struct thread_state *ts;

	ts = bpf_task_storage_get(&threads, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts || ts->gen == attach_gen)
		return ts;
	bpf_task_storage_delete(&threads, t);
	ts = bpf_task_storage_get(&threads, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		ts->gen = attach_gen;
	return ts;
}

/* The thread's state if it has one of this attach generation. */
static __always_inline struct thread_state *thread_find(struct task_struct *t)
{
	struct thread_state *ts = bpf_task_storage_get(&threads, t, 0, 0);

	if (ts && ts->gen != attach_gen) {
		bpf_task_storage_delete(&threads, t);
		return NULL;
	}
	return ts;
}

#endif /* LW_STATE_BPF_H */
