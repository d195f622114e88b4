// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * latwhy.bpf.c - per-request latency accounting in the kernel.
 *
 * Model. Every target thread is, at any instant, RUNNING (on a CPU),
 * RUNNABLE (on a runqueue, another task on the CPU) or SLEEPING. Time is
 * charged to the state being left at each transition (sched_switch,
 * sched_wakeup) and at request boundaries, so the buckets of a request add up
 * to its latency by construction.
 *
 * Interrupt and clock time are kept as per-CPU monotonic counters (hard-IRQ
 * ns, softirq ns, and the integral of (1 - f/f_ref) dt). A running slice
 * snapshots them when it starts; the deltas when it ends are the IRQ,
 * softirq and clock-loss shares of that slice. No per-event output: one ring
 * buffer record per slow request, everything else in maps read once a
 * second.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "latwhy.h"
#include "compat.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define S_IFMT	 00170000
#define S_IFSOCK 0140000

/* Configuration, set by userspace before load. */
const volatile __u32 targ_tgid = 0;
/* Requests are keyed by connection (fd or socket) and a wake-up may open
 * one; false: uprobe-delimited requests, one call each. */
const volatile bool req_by_conn = true;
/* lw_sk_ready is loaded: a request can start when its data arrived. */
const volatile bool arrival_known = false;
/* lw_netif_rx and lw_netif_recv are loaded: a request's wait in a receive
 * backlog is known (see "receive backlog" below). */
const volatile bool backlog_known = false;
/* lw_tcp_send is loaded: TCP requests end there, not in lw_sock_send. */
const volatile bool tcp_send_ends = false;
/* lw_cpu_idle is loaded, and which of its state numbers poll (bit n: state
 * n); userspace reads them from cpuidle's state names ("POLL"). */
const volatile bool idle_state_known = false;
const volatile __u32 idle_poll_states = 0;
/* What one interrupt costs a running task beyond its handler on this
 * machine, measured at start (user/irqcost.c); 0: not measured, and the
 * interrupt counters are not read (see LW_B_IRQ_ENTRY). */
const volatile __u32 irq_entry_ns = 0;

/* Set by userspace once every program is attached: a request whose start
 * was seen by a partly attached set of programs would miss time. */
volatile bool armed = false;

/* With lw_tcp_send loaded, lw_sock_send ends only requests on other sockets
 * (UDP, unix), yet it would run for every send on the host: userspace
 * attaches it once a target thread reads such a socket (non_tcp_seen), and
 * sets sock_send_on then. Until then those reads start no request. */
volatile bool sock_send_on = false;
__u32 non_tcp_seen = 0;
/* lw_netif_rx stamped a segment since userspace last cleared this: only then
 * is lw_netif_recv, which runs for every packet the host receives, kept
 * attached (tracer_backlog()). Set only when clear: a line every handler
 * reads is written once a second at most. */
__u32 backlog_seen = 0;

/* Written by userspace every second: slow-request threshold. */
volatile __u64 slow_thresh_ns = LW_THRESH_UNKNOWN;

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

/* Read by userspace. */
__u64 dropped = 0;
__u64 incomplete = 0; /* requests with a missed scheduler transition */
__u64 untracked = 0;  /* requests given up: every slot of the thread open */
__u64 handoffs = 0;   /* requests answered by another thread than their reader */
__u64 targ_mm = 0;    /* the target's mm_struct, learned at sched_switch */
struct lw_thp_stats thp = {};
__u32 thp_pids[LW_THP_PIDS] = {}; /* written by userspace: see is_thp_kthread() */
__u32 thp_pid_max = 0;		  /* the largest of them, written after them */
__u32 ksd_pid_max = 0;		  /* the largest ksoftirqd pid (lw_cpu_state::ksd_pid) */

enum lw_tstate {
	TS_UNKNOWN = 0,
	TS_RUNNING,
	TS_RUNNABLE,
	TS_SLEEPING,
};

/*
 * Requests. A thread keeps cumulative buckets (cum[]) while it is busy; a
 * request is a slot holding cum[] at its start, and its buckets at the end
 * are the difference. So an event loop can have many requests open at once
 * (redis reads every ready client, then writes every reply) at no extra cost
 * per scheduler event, and every request's buckets add up to its latency.
 *
 * When a request starts. The runqueue wait between the wake-up that
 * delivered a request's data and the receive is latency the client sees (a
 * CPU hog shows up exactly there), so:
 *  - the reads of the first batch after a wake-up start at the wake-up;
 *  - a later read on a connection whose last reply this thread sent while it
 *    stayed busy starts at that reply: the next request cannot have arrived
 *    before it (an overestimate by the client's own turnaround);
 *  - anything else starts at the read.
 * A closed slot keeps its end time for the second rule.
 */
/* A request's start state. Its key, time and longest wait live in arrays of
 * thread_state, so that finding a slot reads two cache lines, not sixteen. */
struct req_slot {
	__u64 snap[LW_B_MAX]; /* the thread's cum[] at slot_ts */
	__u32 nincomplete;    /* thread_state counters then */
	__u32 nfreq;
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
	__u32 snap_intr; /* lw_cpu_state::nirq + nipi, with irq_entry_ns */
	__u32 state;	 /* enum lw_tstate */
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
	/* runqueue wait: the CPU queued on and its IRQ counters then */
	__u32 wait_cpu;
	__u32 waiting; /* counted in that CPU's waiters: LW_WAIT_* */
	__u64 wait_irq;
	__u64 wait_softirq;
	__u64 wait_thp;
	__u32 wait_intr; /* the wait CPU's lw_cpu_state::nirq, with irq_entry_ns */
	__u32 wait_ksd;	 /* its ksoftirqd's run time, low 32 bits (cpu_ksd_ns()) */
	/* Slots: used_mask has the open and the closed ones. A closed slot
	 * keeps when its request ended, for the next request on its conn. */
	__u32 used_mask;
	/* of the wake-up wait now going on: the stretch its CPU took to leave
	 * idle (on_wakeup()), in ns, saturated; 0: none */
	__u32 wake_idle;
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
};

/* thread_state::waiting: how it is counted in its wait CPU's waiters */
#define LW_WAIT_QUEUED 1 /* a busy thread, runnable there */
#define LW_WAIT_WAKING 2 /* from sched_waking: not yet known to be busy */

/* No separate count: it would be a second cold cache line per request. */
struct hist {
	__u64 b[LW_HIST_BUCKETS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/* A target's socket: when data became ready on it and nobody read it yet;
 * with handoff_watch, its open request's start and the thread that read it
 * (0: none open). */
struct sock_state {
	__u64 ready_ts;
	__u64 backlog_ns; /* how long that data waited in a receive backlog */
	__u64 start_ts;
	__u32 reader;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sock_state);
} socks SEC(".maps");

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
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} lat_hist SEC(".maps");

/* Interrupt evidence. Per-CPU arrays: the handlers index them without
 * hashing or atomics; userspace sums nothing, it reads each CPU's row. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LW_IRQ_FAST);
	__type(key, __u32);
	__type(value, struct lw_count);
} irq_ev SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LW_MAX_IRQ_KEYS);
	__type(key, struct lw_irq_key);
	__type(value, struct lw_count);
} irq_ev_hi SEC(".maps"); /* IRQs numbered LW_IRQ_FAST and up */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LW_MAX_IRQ_KEYS);
	__type(key, __u32);
	__type(value, char[LW_IRQ_NAME_LEN]);
} irq_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LW_SOFTIRQ_ROWS);
	__type(key, __u32);
	__type(value, struct lw_count);
} softirq_ev SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LW_MAX_PREEMPTORS);
	__type(key, __u32);
	__type(value, struct lw_preempt_val);
} preempt_ev SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LW_RINGBUF_BYTES);
} events SEC(".maps");

static __always_inline struct lw_cpu_state *cpu_state_get(__u32 cpu)
{
	return bpf_map_lookup_elem(&cpus, &cpu);
}

static __always_inline bool is_target(struct task_struct *t)
{
	return t->tgid == targ_tgid;
}

/*
 * khugepaged and kcompactdN, by pid: userspace finds them at start and every
 * few seconds. The check runs on every context switch; next->pid shares a
 * cache line with the tgid is_target() just read, where comparing comm would
 * cost another line of every kthread switched to.
 */
static __always_inline bool is_thp_kthread(struct task_struct *t)
{
	__u32 pid = t->pid;

	/* kthreads started at boot have small pids: one compare turns away
	 * every task started later, before the loop */
	if (pid > thp_pid_max)
		return false;
	for (int i = 0; i < LW_THP_PIDS; i++)
		if (thp_pids[i] == pid && pid)
			return true;
	return false;
}

/* (a * b) / c without overflowing for slices up to minutes. */
static __always_inline __u64 mul_div(__u64 a, __u64 b, __u64 c)
{
	if (!c)
		return 0;
	if (a < (1ULL << 32) && b < (1ULL << 32))
		return a * b / c;
	return (a >> 16) * b / (c >> 16 ? c >> 16 : 1);
}

/* Clock-loss integral of a CPU up to now. dt is split so that neither
 * product can overflow: dt/ref*loss + (dt%ref)*loss/ref. */
static __always_inline __u64 cpu_flost(struct lw_cpu_state *cs, __u64 now)
{
	__u32 ref = cs->ref_khz, f = cs->khz;
	__u64 dt, loss;

	if (!ref || !f || now < cs->freq_ts)
		return cs->flost;
	if (f > ref)
		f = ref;
	loss = ref - f;
	dt = now - cs->freq_ts;
	return cs->flost + dt / ref * loss + (dt % ref) * loss / ref;
}

static __always_inline void snap_cpu(struct thread_state *ts, struct lw_cpu_state *cs, __u64 now)
{
	ts->snap_irq = cs->irq_ns;
	ts->snap_softirq = cs->softirq_ns;
	ts->snap_flost = cpu_flost(cs, now);
	if (irq_entry_ns)
		ts->snap_intr = cs->nirq + cs->nipi;
	ts->last_ts = now;
}

/* The entry and exit cost of the interrupts from count snap to count now
 * (32-bit counters, so a difference), at most max. A count that went
 * backwards is another CPU's after a missed migration: none. */
static __always_inline __u64 intr_cost(__u32 now, __u32 snap, __u64 max)
{
	__s32 n = (__s32)(now - snap);
	__u64 c;

	if (n <= 0)
		return 0;
	c = (__u64)n * irq_entry_ns;
	return c < max ? c : max;
}

/*
 * Charge the running slice [last_ts, now] of a thread that is current on cs's
 * CPU, then start a new slice at now.
 */
static __always_inline void charge_run(struct thread_state *ts, struct lw_cpu_state *cs, __u64 now)
{
	__u64 slice = now - ts->last_ts;
	__u64 irq = cs->irq_ns - ts->snap_irq;
	__u64 soft = cs->softirq_ns - ts->snap_softirq;
	__u64 fl = cpu_flost(cs, now) - ts->snap_flost;
	__u64 run = 0, ent = 0;

	if (irq + soft > slice) /* counters of another CPU after a missed migration */
		irq = soft = 0;
	run = slice - irq - soft;
	if (irq_entry_ns && ts->busy) {
		ent = intr_cost(cs->nirq + cs->nipi, ts->snap_intr, run);
		run -= ent;
	}
	if (ts->busy && now >= ts->last_ts) {
		ts->cum[LW_B_IRQ] += irq + ent;
		ts->cum[LW_B_IRQ_ENTRY] += ent;
		ts->cum[LW_B_SOFTIRQ] += soft;
		if (ts->in_compact) {
			ts->cum[LW_B_THP] += run;
		} else {
			ts->cum[LW_B_RUN] += run;
			/* the clock loss covers the whole slice; keep the run share */
			fl = run == slice ? fl : mul_div(fl, run, slice);
			ts->cum[LW_B_FREQ] += fl < run ? fl : run;
			if (cs->khz && cs->ref_khz)
				ts->nfreq++;
		}
	}
	snap_cpu(ts, cs, now);
}

static __always_inline struct thread_state *thread_get(struct task_struct *t)
{
	return bpf_task_storage_get(&threads, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The CPU's khugepaged/kcompactd time up to now. */
static __always_inline __u64 cpu_thp_ns(struct lw_cpu_state *cs, __u64 now)
{
	__u64 start = cs->thp_start;

	return cs->thp_ns + (start && now > start ? now - start : 0);
}

/* The CPU's ksoftirqd run time up to now. */
static __always_inline __u64 cpu_ksd_ns(struct lw_cpu_state *cs, __u64 now)
{
	__u64 start = cs->ksd_start;

	return cs->ksd_ns + (start && now > start ? now - start : 0);
}

/*
 * Woken on the CPU it will run on while a softirq runs there (its data's
 * NET_RX, in ksoftirqd or at an IRQ's exit; a BLOCK run that the wake-up's
 * IPI interrupted) which began while nothing here was watched: the rest of
 * that run delays it as much as if it had been timed, so the clock starts
 * now. Only on this CPU: another's softirq may end while we write.
 */
static __always_inline void softirq_clock_on(struct lw_cpu_state *cs, __u32 cpu, __u64 now)
{
	if (cs->softirq_start == LW_SOFTIRQ_UNTIMED && cpu == bpf_get_smp_processor_id()) {
		cs->softirq_start = now;
		cs->softirq_irq_snap = (__u32)cs->irq_ns;
	}
}

/*
 * A runqueue wait starts on cpu: interrupts handled there while we wait
 * delayed us as much as the task they interrupted, and so does khugepaged
 * or kcompactd running there (counted by the sched_switch handler). watch:
 * time that CPU's interrupts for us also when not busy (LW_WAIT_WAKING: from
 * sched_waking, before the wake-up says whether it brings a request).
 */
static __always_inline void wait_start(struct thread_state *ts, __u32 cpu, __u64 now, __u32 watch)
{
	struct lw_cpu_state *cs = cpu_state_get(cpu);

	ts->wait_cpu = cpu;
	if (!cs)
		return;
	softirq_clock_on(cs, cpu, now);
	ts->wait_irq = cs->irq_ns;
	ts->wait_softirq = cs->softirq_ns;
	ts->wait_thp = cpu_thp_ns(cs, now);
	ts->wait_ksd = (__u32)cpu_ksd_ns(cs, now);
	if (irq_entry_ns)
		ts->wait_intr = cs->nirq;
	/* IRQs there are evidence while a request waits on it */
	if ((ts->busy || watch) && !ts->waiting) {
		__sync_fetch_and_add(&cs->waiters, 1);
		ts->waiting = watch ? watch : LW_WAIT_QUEUED;
	}
}

static __always_inline void wait_end(struct thread_state *ts)
{
	struct lw_cpu_state *cs;

	if (!ts->waiting)
		return;
	ts->waiting = 0;
	cs = cpu_state_get(ts->wait_cpu);
	if (cs)
		__sync_fetch_and_add(&cs->waiters, -1);
}

/*
 * The softirq time of a wait behind ksoftirqd: its run time there (ksd, a
 * difference of 32-bit ns) less the hard interrupts it may have nested, and
 * their entry and exit. It also holds what the timed softirq time cannot: a
 * run that began before the wait (a BLOCK or NET_RX batch deferred to
 * ksoftirqd while nothing of the target's was on the CPU, untimed), which
 * left a remotely woken target waiting behind "ksoftirqd" as if behind any
 * task. Counted as evidence (LW_SOFTIRQ_KSOFTIRQD) for what it adds to the
 * timed time soft.
 */
static __always_inline __u64 ksd_softirq(struct thread_state *ts, struct lw_cpu_state *cs,
					 __u64 now, __u64 irq, __u64 soft)
{
	__u64 ksd = (__u32)((__u32)cpu_ksd_ns(cs, now) - ts->wait_ksd);
	__u32 key = LW_SOFTIRQ_KSOFTIRQD;
	struct lw_count *c;

	irq += intr_cost(cs->nirq, ts->wait_intr, ksd);
	if (ksd <= irq + soft)
		return soft;
	c = bpf_map_lookup_elem(&softirq_ev, &key);
	if (c) {
		c->ns += ksd - irq - soft;
		c->count++;
	}
	return ksd - irq;
}

/* Split a runqueue wait on cs's CPU, ending now, into interrupt time, THP
 * kthread time (*thp) and the rest, which is returned. */
static __always_inline __u64 wait_split(struct thread_state *ts, struct lw_cpu_state *cs, __u32 cpu,
					__u64 delta, __u64 now, __u64 *thp_ns)
{
	__u64 irq, soft, th, ent;

	*thp_ns = 0;
	if (cpu != ts->wait_cpu)
		return delta; /* migrated: the other CPU's counters don't apply */
	irq = cs->irq_ns - ts->wait_irq;
	soft = ksd_softirq(ts, cs, now, irq, cs->softirq_ns - ts->wait_softirq);
	th = cpu_thp_ns(cs, now) - ts->wait_thp;
	if (irq + soft > delta) {
		/* A handler that began before the wait and ended in it adds its
		 * whole run at its exit (a BLOCK batch in ksoftirqd that was
		 * running when we were woken): the wait was all interrupts. */
		if (soft > delta)
			soft = delta;
		irq = delta - soft;
	}
	delta -= irq + soft;
	/* device interrupts only: an IPI here may be the wake-up's own (a
	 * wakelist's call-function IPI, ttwu_queue_wakelist()) */
	if (irq_entry_ns) {
		ent = intr_cost(cs->nirq, ts->wait_intr, delta);
		delta -= ent;
		irq += ent;
		ts->cum[LW_B_IRQ_ENTRY] += ent;
	}
	ts->cum[LW_B_IRQ] += irq;
	ts->cum[LW_B_SOFTIRQ] += soft;
	*thp_ns = th < delta ? th : delta;
	return delta - *thp_ns;
}

/*
 * A scheduler transition was missed (seen rarely under load: about 0.1% of
 * requests on 6.18 with a CPU hog). Charge the gap to the state we last knew,
 * so the buckets still add up, and mark the request: its split is a guess.
 */
static __always_inline void charge_gap(struct thread_state *ts, __u64 now)
{
	__u32 b = ts->state == TS_RUNNABLE   ? LW_B_SCHED
		  : ts->state == TS_SLEEPING ? LW_B_BLOCKED
					     : LW_B_RUN;

	if (!ts->busy || ts->state == TS_UNKNOWN || now < ts->last_ts)
		return;
	ts->cum[b] += now - ts->last_ts;
	ts->nincomplete++;
	__sync_fetch_and_add(&incomplete, 1);
}

/* The current task's state, made RUNNING on this CPU if we had not seen it. */
static __always_inline struct thread_state *make_running(struct thread_state *ts,
							 struct lw_cpu_state **csp, __u64 now)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());

	if (!ts || !cs)
		return NULL;
	if (ts->state != TS_RUNNING) {
		charge_gap(ts, now); /* we missed its switch-in */
		wait_end(ts);
		ts->state = TS_RUNNING;
		snap_cpu(ts, cs, now);
		cs->target_cur = LW_CUR_TARGET | (ts->busy ? LW_CUR_IN_REQ : 0);
	}
	*csp = cs;
	return ts;
}

static __always_inline struct thread_state *current_running(struct lw_cpu_state **csp, __u64 now)
{
	return make_running(thread_get(bpf_get_current_task_btf()), csp, now);
}

/*
 * A scheduler transition of a busy thread: keep cum[] as of now, and the
 * bucket the time until the next transition goes to. request_arrival() starts
 * a request whose data arrived in between from here; without arrival times
 * nothing reads them (and the verifier drops this).
 */
static __always_inline void ckpt_take(struct thread_state *ts, __u64 now, __u32 bucket)
{
	__u32 k;

	if (!arrival_known || !ts->busy)
		return;
	k = ts->ckpt_next++ & (LW_CKPTS - 1);
	ts->ckpts[k].ts = now;
	__builtin_memcpy(ts->ckpts[k].cum, ts->cum, sizeof(ts->cum));
	ts->ckpt_bucket[k] = bucket;
}

#define LW_SLOTS_MASK ((1U << LW_REQ_SLOTS) - 1) /* every slot's bit */
#define LW_SLOT_INDEX (LW_REQ_SLOTS - 1)	 /* index bits; LW_REQ_SLOTS is 2^n */

/* The lowest set bit of mask, or -1. */
static __always_inline int slot_lowest(__u32 mask)
{
	for (int i = 0; i < LW_REQ_SLOTS; i++)
		if (mask & (1U << i))
			return i;
	return -1;
}

/*
 * The slot of conn, else a free one, else the closed one that ended first,
 * else the oldest open one: a request that never got its reply (a proxy's
 * upstream read, a client gone) must not hold a slot for ever.
 *
 * The oldest is found as the minimum of (time | index), the index riding in
 * the low bits, kept in thread_state rather than in registers: the verifier
 * does not track map memory, so the iterations do not multiply its states.
 * With the minimum and its index in registers, the 6.1 verifier walked every
 * combination of "updated or not" past its 1M-instruction limit.
 */
static __always_inline int slot_pick(struct thread_state *ts, __u64 conn)
{
	/* volatile: or clang keeps the minima in registers after all */
	volatile __u64 *pick_open = &ts->pick_open, *pick_closed = &ts->pick_closed;
	__u32 used = ts->used_mask, open = ts->open_mask;

	*pick_closed = ~0ULL;
	*pick_open = ~0ULL;
	for (int i = 0; i < LW_REQ_SLOTS; i++) {
		__u64 key;

		if (!(used & (1U << i)))
			continue;
		if (ts->slot_conn[i] == conn)
			return i;
		key = (ts->slot_ts[i] & ~(__u64)LW_SLOT_INDEX) | i;
		if (open & (1U << i)) {
			if (key < *pick_open)
				*pick_open = key;
		} else if (key < *pick_closed) {
			*pick_closed = key;
		}
	}
	if (~used & LW_SLOTS_MASK)
		return slot_lowest(~used & LW_SLOTS_MASK);
	return (*pick_closed != ~0ULL ? *pick_closed : *pick_open) & LW_SLOT_INDEX;
}

/* The open request of conn, or -1. */
static __always_inline int slot_open(struct thread_state *ts, __u64 conn)
{
	__u32 open = ts->open_mask;

	for (int i = 0; i < LW_REQ_SLOTS && open; i++)
		if ((open & (1U << i)) && ts->slot_conn[i] == conn)
			return i;
	return -1;
}

/* Free slot i without ending its request: another thread answered it, so
 * neither its start nor its end is a time this thread's rules may use. */
static __always_inline void slot_drop(struct thread_state *ts, int i)
{
	__u32 bit = 1U << (i & LW_SLOT_INDEX);

	ts->open_mask &= ~bit;
	ts->used_mask &= ~bit;
}

/* Start charging: the busy span begins at now. */
static __always_inline void cycle_open(struct thread_state *ts, __u64 now, bool wake)
{
	ts->busy = 1;
	ts->cycle_wake = wake;
	ts->cycle_ended = 0;
	ts->cycle_start = now;
	__builtin_memcpy(ts->cycle_snap, ts->cum, sizeof(ts->cum));
	ts->cycle_top_ns = 0;
	ts->cycle_top_pid = 0;
}

/* A read socket's state, created at its first read, when anything needs it. */
static __always_inline struct sock_state *sock_state_get(struct sock *sk)
{
	if (!sk || !(arrival_known || handoff_watch))
		return NULL;
	return bpf_sk_storage_get(&socks, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
}

/* When data first became ready on the socket since its last read, or 0; the
 * read consumes it, also one that continues an open request: its second
 * segment would otherwise be taken for the next request's arrival. */
static __always_inline __u64 sock_arrival(struct sock_state *ss, __u64 *backlog)
{
	__u64 ta;

	*backlog = 0;
	if (!ss || !arrival_known)
		return 0;
	ta = ss->ready_ts;
	ss->ready_ts = 0;
	if (backlog_known) {
		*backlog = ss->backlog_ns;
		ss->backlog_ns = 0;
	}
	return ta;
}

/*
 * --request socket, where the kernel has sk_data_ready (6.3+): the time the
 * request's data became ready on its socket, if this thread was busy then
 * (an event loop serving other connections, or preempted, reads it later, and
 * the time in between is this request's too). s->snap is rebuilt as the
 * thread's cum[] at that time: the last checkpoint before it, plus the time
 * since in that checkpoint's bucket. Returns the arrival, or 0 when it is
 * unknown or not inside the busy span: request_start()'s rules apply then.
 */
static __always_inline __u64 request_arrival(struct thread_state *ts, struct req_slot *s, __u64 ta,
					     __u64 now, bool *before_wake)
{
	__u64 best_ts = 0;
	int best = -1;
	__u32 b;

	/* there before the thread woke: it waited since the wake-up, also when
	 * the loop served other connections first */
	*before_wake = ta && ta < ts->cycle_start && ts->cycle_wake;
	if (!ta || ta >= now || ta < ts->cycle_start)
		return 0;
	for (int k = 0; k < LW_CKPTS; k++) {
		__u64 t = ts->ckpts[k].ts;

		if (t >= ts->cycle_start && t <= ta && t >= best_ts) {
			best_ts = t;
			best = k;
		}
	}
	if (best < 0 || best >= LW_CKPTS)
		return 0;
	__builtin_memcpy(s->snap, ts->ckpts[best].cum, sizeof(s->snap));
	b = ts->ckpt_bucket[best];
	if (b < LW_B_MAX)
		s->snap[b] += ta - best_ts;
	return ta;
}

static __always_inline void request_start(__u64 conn, struct sock *sk, __u64 now)
{
	__u32 bit, tid = handoff_watch ? (__u32)bpf_get_current_pid_tgid() : 0;
	struct thread_state *ts;
	struct lw_cpu_state *cs;
	bool same, before_wake = false, from_reply = false;
	struct sock_state *ss;
	struct req_slot *s;
	__u64 ta, backlog;
	int i;

	if (!armed)
		return;
	ss = sock_state_get(sk);
	ta = sock_arrival(ss, &backlog);
	ts = current_running(&cs, now);
	if (!ts)
		return;
	i = slot_pick(ts, conn);
	if (i < 0 || i >= LW_REQ_SLOTS)
		return;
	s = &ts->slots[i];
	bit = 1U << i;
	same = (ts->used_mask & bit) && ts->slot_conn[i] == conn;
	if (same && (ts->open_mask & bit)) {
		if (!handoff_watch || !ss || ss->reader == tid)
			return; /* more of the same request */
		/* another thread answered it (sock_reply()): a new one */
		slot_drop(ts, i);
		same = false;
	}
	if (ts->open_mask & bit) {
		/* every slot open: the oldest request is given up */
		ts->open_mask &= ~bit;
		__sync_fetch_and_add(&untracked, 1);
	}
	charge_run(ts, cs, now);
	if (!ts->busy) {
		cycle_open(ts, now, false);
		cs->target_cur |= LW_CUR_IN_REQ;
	}
	ta = request_arrival(ts, s, ta, now, &before_wake);
	if (ta) {
		ts->slot_ts[i] = ta;
		ts->slot_top_ns[i] = 0;
		ts->slot_top_pid[i] = 0;
		/* the longest wait since: the part after ta of the last one */
		if (ts->last_wait_end > ta) {
			__u64 part = ts->last_wait_end - ta;

			ts->slot_top_ns[i] = part < ts->last_wait_ns ? part : ts->last_wait_ns;
			ts->slot_top_pid[i] = ts->last_wait_pid;
		}
		s->nincomplete = ts->nincomplete;
		s->nfreq = ts->nfreq;
	} else if (req_by_conn && same && ts->slot_ts[i] >= ts->cycle_start && !before_wake) {
		/* its last reply, sent while we stayed busy: the time, snap[],
		 * the counters and the longest wait since are kept from then */
		from_reply = true;
	} else {
		if (req_by_conn && ts->cycle_wake && (!ts->cycle_ended || before_wake)) {
			ts->slot_ts[i] = ts->cycle_start;
			__builtin_memcpy(s->snap, ts->cycle_snap, sizeof(s->snap));
			ts->slot_top_ns[i] = ts->cycle_top_ns;
			ts->slot_top_pid[i] = ts->cycle_top_pid;
		} else {
			ts->slot_ts[i] = now;
			__builtin_memcpy(s->snap, ts->cum, sizeof(s->snap));
			ts->slot_top_ns[i] = 0;
			ts->slot_top_pid[i] = 0;
		}
		s->nincomplete = ts->nincomplete;
		s->nfreq = ts->nfreq;
	}
	/* Its data waited in a receive backlog before it was ready: softirq
	 * latency of this request, before the start chosen above, in no window
	 * of this thread's. Not after its last reply: that start is before the
	 * data was sent, so the wait is inside the request already. */
	if (backlog && !from_reply) {
		ts->slot_ts[i] -= backlog;
		s->snap[LW_B_SOFTIRQ] -= backlog;
	}
	ts->slot_conn[i] = conn;
	ts->used_mask |= bit;
	ts->open_mask |= bit;
	if (handoff_watch && ss) {
		ss->start_ts = ts->slot_ts[i];
		ss->reader = tid;
	}
}

static __always_inline void hist_add(__u64 latency)
{
	__u32 zero = 0, b = lw_hist_bucket(latency);
	struct hist *h = bpf_map_lookup_elem(&lat_hist, &zero);

	if (h && b < LW_HIST_BUCKETS)
		h->b[b]++;
}

/*
 * The request's buckets: cum[] now less its start state. A start rebuilt at
 * the data's arrival (request_arrival()) put the time from the checkpoint to
 * the arrival in one bucket, which can exceed what that bucket then got (a
 * wait that turned out to be mostly interrupts, or an idle CPU's wake-up): a
 * bucket below zero is zero and its excess comes off the others, so that they
 * still add up to the latency: first off those a wait is split into, which
 * hold the rest of that time, run last. A part of another bucket
 * (lw_bucket_whole(): FREQ of RUN, IDLE_POLL of IDLE, IRQ_ENTRY of IRQ) is no
 * addend, and is clamped to its whole.
 */
static __always_inline __u32 excess_bucket(int k)
{
	/* a switch, not a static const array: the array sat at offset 0 of
	 * .rodata's BTF, over targ_tgid, and the kernel refused that BTF
	 * ("Invalid offset"; clang 14, libbpf 1.1) */
	switch (k) {
	case 0:
		return LW_B_IDLE;
	case 1:
		return LW_B_SOFTIRQ;
	case 2:
		return LW_B_IRQ;
	case 3:
		return LW_B_THP;
	case 4:
		return LW_B_SCHED;
	case 5:
		return LW_B_BLOCKED;
	}
	return LW_B_RUN;
}

static __always_inline void request_buckets(struct thread_state *ts, struct req_slot *s, __u64 *ns)
{
	__u64 excess = 0;

	for (int b = 0; b < LW_B_MAX; b++) {
		__s64 d = (__s64)(ts->cum[b] - s->snap[b]);

		if (d < 0) {
			if (lw_bucket_whole(b) == LW_B_MAX)
				excess += -d;
			d = 0;
		}
		ns[b] = d;
	}
	for (int k = 0; k < LW_B_MAX - 1 && excess; k++) {
		__u32 b = excess_bucket(k);
		__u64 take;

		if (b >= LW_B_MAX)
			continue;
		take = ns[b] < excess ? ns[b] : excess;
		ns[b] -= take;
		excess -= take;
	}
	for (int b = 0; b < LW_B_MAX; b++) {
		int w = lw_bucket_whole(b);

		if (w < LW_B_MAX && ns[b] > ns[w])
			ns[b] = ns[w];
	}
}

/* A slow request's record, its header from the current thread; NULL (and
 * counted) when the ring buffer is full. */
static __always_inline struct lw_request *request_rec(__u64 start, __u64 latency)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct lw_request *r;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&dropped, 1);
		return NULL;
	}
	r->type = LW_REC_REQUEST;
	r->pid = t->tgid;
	r->tid = t->pid;
	r->cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->start_ns = start;
	r->latency_ns = latency;
	return r;
}

/* userspace drains every 100 ms anyway: wake it only when filling up, so a
 * busy server does not pay a wake-up per slow request */
static __always_inline void request_submit(struct lw_request *r)
{
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > LW_RINGBUF_BYTES / 2
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
}

static __always_inline void request_emit(struct thread_state *ts, int i, __u64 latency)
{
	struct req_slot *s = &ts->slots[i];
	struct lw_preempt_val *top;
	struct lw_request *r;
	__u32 top_pid;

	r = request_rec(ts->slot_ts[i], latency);
	if (!r)
		return;
	request_buckets(ts, s, r->ns);
	r->flags = (ts->nfreq != s->nfreq ? LW_REQ_FREQ_KNOWN : 0) |
		   (ts->nincomplete != s->nincomplete ? LW_REQ_INCOMPLETE : 0) |
		   (idle_state_known ? LW_REQ_IDLE_KNOWN : 0) |
		   (irq_entry_ns ? LW_REQ_IRQ_ENTRY_KNOWN : 0);
	top_pid = ts->slot_top_pid[i];
	r->preempt_pid = top_pid;
	r->preempt_ns = ts->slot_top_ns[i];
	/* the preemptor evidence holds its comm: slots keep only the pid.
	 * The key is on the stack: 6.1 refuses one in ring-buffer memory
	 * ("R2 type=alloc_mem expected=fp, pkt, pkt_meta, map_key, map_value"). */
	top = top_pid ? bpf_map_lookup_elem(&preempt_ev, &top_pid) : NULL;
	if (top)
		__builtin_memcpy(r->preempt_comm, top->comm, sizeof(r->preempt_comm));
	else
		__builtin_memset(r->preempt_comm, 0, sizeof(r->preempt_comm));
	request_submit(r);
}

/* End the open request in slot i of the current thread's ts. */
static __always_inline void request_end(struct thread_state *ts, int i, __u64 now)
{
	struct lw_cpu_state *cs;
	struct req_slot *s;
	__u64 latency;

	if (i < 0 || i >= LW_REQ_SLOTS || !make_running(ts, &cs, now))
		return;
	s = &ts->slots[i];
	charge_run(ts, cs, now);
	latency = now - ts->slot_ts[i];
	hist_add(latency);
	if (latency > slow_thresh_ns)
		request_emit(ts, i, latency);
	/* closed: keeps when it ended, for the next request on conn */
	ts->open_mask &= ~(1U << i);
	ts->slot_ts[i] = now;
	__builtin_memcpy(s->snap, ts->cum, sizeof(s->snap));
	s->nincomplete = ts->nincomplete;
	s->nfreq = ts->nfreq;
	ts->slot_top_ns[i] = 0;
	ts->slot_top_pid[i] = 0;
	ts->cycle_ended = 1;
}

/* ---- scheduler ---------------------------------------------------------- */

static __always_inline void wait_credit(struct thread_state *ts, __u32 pid, __u32 tgid,
					const char *comm, __u64 delta)
{
	struct lw_preempt_val zero = {}, *v;

	if (arrival_known) { /* read by request_start() for an arrival */
		ts->last_wait_ns = delta;
		ts->last_wait_pid = pid;
	}
	if (delta > ts->cycle_top_ns) {
		ts->cycle_top_ns = delta;
		ts->cycle_top_pid = pid;
	}
	/* closed slots too: a next request on their connection may start
	 * back at their end */
	for (int i = 0; i < LW_REQ_SLOTS; i++) {
		if ((ts->used_mask & (1U << i)) && delta > ts->slot_top_ns[i]) {
			ts->slot_top_ns[i] = delta;
			ts->slot_top_pid[i] = pid;
		}
	}
	v = bpf_map_lookup_elem(&preempt_ev, &pid);
	if (!v) {
		__builtin_memcpy(zero.comm, comm, LW_COMM_LEN);
		zero.tgid = tgid;
		bpf_map_update_elem(&preempt_ev, &pid, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&preempt_ev, &pid);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->ns, delta);
	__sync_fetch_and_add(&v->count, 1);
}

/*
 * A wait for an idle CPU: its exit from idle (a C-state, a halted vCPU) and
 * the wake-up's IPI, or, where the idle state polled, no C-state to leave:
 * the wake-up's own time, or a vCPU its host did not run. thp_ns: the THP
 * kthreads' part of the wait, in the THP bucket, blamed on the same.
 */
static __always_inline void idle_credit(struct thread_state *ts, bool polled, __u64 ns,
					__u64 thp_ns)
{
	/* built on the stack: a static const array would sit in .rodata
	 * (see excess_bucket()) */
	char comm[LW_COMM_LEN] = "idle (polling)";

	if (polled) {
		wait_credit(ts, LW_PID_IDLE_POLL, 0, comm, ns + thp_ns);
		ts->cum[LW_B_IDLE_POLL] += ns;
	} else {
		__builtin_memcpy(comm, "swapper", sizeof("swapper"));
		wait_credit(ts, 0, 0, comm, ns + thp_ns);
	}
	ts->cum[LW_B_IDLE] += ns;
}

static __always_inline void switch_out(struct task_struct *prev, struct task_struct *next,
				       bool preempt, struct lw_cpu_state *cs, __u64 now)
{
	struct thread_state *ts = thread_get(prev);

	if (!ts)
		return;
	if (ts->state == TS_RUNNING)
		charge_run(ts, cs, now);
	else
		charge_gap(ts, now); /* we missed its switch-in */
	wait_end(ts);
	ts->last_ts = now;
	/* A preempted task stays runnable whatever its state word says. */
	if (preempt || lw_task_state(prev) == 0) {
		ts->state = TS_RUNNABLE;
		wait_start(ts, bpf_get_smp_processor_id(), now, 0);
		ts->waiter_pid = next->pid;
		ts->waiter_tgid = next->tgid;
		__builtin_memcpy(ts->waiter_comm, next->comm, LW_COMM_LEN);
	} else {
		ts->state = TS_SLEEPING;
		ts->waiter_pid = 0;
		if (!ts->open_mask)
			ts->busy = 0; /* woke for no request, or all answered */
	}
	ckpt_take(ts, now, ts->state == TS_RUNNABLE ? LW_B_SCHED : LW_B_BLOCKED);
}

static __always_inline void switch_in(struct task_struct *next, struct task_struct *prev,
				      struct lw_cpu_state *cs, __u32 cpu, __u64 now)
{
	struct thread_state *ts = thread_get(next);
	__u64 delta;

	if (!ts)
		return;
	delta = now - ts->last_ts;
	if (ts->busy && ts->state == TS_RUNNABLE) {
		__u64 thp_ns;
		bool idle, polled;

		delta = wait_split(ts, cs, cpu, delta, now, &thp_ns);
		/* Migrated (the counters were another CPU's) or compacting:
		 * the task that ran last before us decides. */
		if ((cpu != ts->wait_cpu && is_thp_kthread(prev)) || ts->in_compact) {
			thp_ns += delta;
			delta = 0;
		}
		/* Woken onto a CPU that then ran nothing until us (its idle
		 * task, pid 0, is prev): the wait was its exit from idle (a
		 * C-state, a halted vCPU) and the wake-up's IPI, not a task. A
		 * preemption, or a wait on another CPU that this one pulled us
		 * from, stays sched. */
		idle = !ts->waiter_pid && !prev->pid && cpu == ts->wait_cpu;
		/* only lw_cpu_idle sets it: 0 (seeded) without cpu_idle */
		polled = idle && cs->idle_polling;
		/* A wake-up wait whose CPU left idle and then ran another
		 * task before us: its start was that CPU's exit from idle
		 * (on_wakeup()). The rest is the other task's. */
		if (!idle && !ts->waiter_pid && ts->wake_idle && cpu == ts->wait_cpu) {
			__u64 gap = ts->wake_idle < delta ? ts->wake_idle : delta;

			idle_credit(ts, cs->idle_polling, gap, 0);
			delta -= gap;
		}
		/* Blame the task that took the CPU from us, or for a wake-up
		 * wait the one that ran last before us. */
		if (ts->waiter_pid) {
			wait_credit(ts, ts->waiter_pid, ts->waiter_tgid, ts->waiter_comm,
				    delta + thp_ns);
		} else if (idle) {
			idle_credit(ts, polled, delta, thp_ns);
			delta = 0; /* in the idle buckets now */
		} else {
			char comm[LW_COMM_LEN];

			__builtin_memcpy(comm, prev->comm, LW_COMM_LEN);
			wait_credit(ts, prev->pid, prev->tgid, comm, delta + thp_ns);
		}
		if (arrival_known)
			ts->last_wait_end = now;
		if (thp_ns) {
			ts->cum[LW_B_THP] += thp_ns;
			__sync_fetch_and_add(&thp.khugepaged_run_ns, thp_ns);
		}
		ts->cum[LW_B_SCHED] += delta;
	} else if (ts->busy && ts->state == TS_SLEEPING) {
		/* no wake-up seen (the kernel skips a nested run of the
		 * wake-up program): plain blocking */
		ts->cum[ts->in_compact ? LW_B_THP : LW_B_BLOCKED] += delta;
	} else if (ts->state == TS_RUNNING) {
		charge_gap(ts, now); /* we missed its switch-out */
	}
	wait_end(ts);
	ts->state = TS_RUNNING;
	ts->waiter_pid = 0;
	snap_cpu(ts, cs, now);
	cs->target_cur = LW_CUR_TARGET | (ts->busy ? LW_CUR_IN_REQ : 0);
	if (targ_mm != (__u64)next->mm) /* written once: khugepaged reads it */
		targ_mm = (__u64)next->mm;
	ckpt_take(ts, now, LW_B_RUN);
}

/*
 * khugepaged/kcompactd leaving or taking a CPU. Their on-CPU time is kept
 * per CPU so that a request's runqueue wait can be split by it, also when
 * one was already running at the wake-up. The open interval (thp_start)
 * belongs to whatever runs now, so closing needs no check of prev; opening
 * costs every other switch is_thp_kthread()'s pid compare, on the line
 * is_target() already read.
 */
static __always_inline void thp_switch_out(struct lw_cpu_state *cs, __u64 now)
{
	if (cs->thp_start) {
		cs->thp_ns += now > cs->thp_start ? now - cs->thp_start : 0;
		cs->thp_start = 0;
	}
}

static __always_inline void thp_switch_in(struct lw_cpu_state *cs, struct task_struct *next,
					  __u64 now)
{
	if (is_thp_kthread(next))
		cs->thp_start = now;
}

/*
 * ksoftirqd leaving or taking its CPU, for ksd_softirq(). Its pid is small
 * (started at boot), so one compare against the largest turns every later
 * task away before the CPU's second cache line is read.
 */
static __always_inline bool ksd_switch_seen(struct task_struct *prev, struct task_struct *next)
{
	/* pids 1..ksd_pid_max: not the idle task's 0, nothing when unknown */
	return (__u32)(prev->pid - 1) < ksd_pid_max || (__u32)(next->pid - 1) < ksd_pid_max;
}

static __always_inline bool is_ksd(struct lw_cpu_state *cs, struct task_struct *t)
{
	return t->pid == cs->ksd_pid && cs->ksd_pid;
}

static __always_inline void ksd_switch(struct lw_cpu_state *cs, struct task_struct *next, __u64 now)
{
	if (cs->ksd_start) {
		cs->ksd_ns += now > cs->ksd_start ? now - cs->ksd_start : 0;
		cs->ksd_start = 0;
	}
	if (is_ksd(cs, next))
		cs->ksd_start = now;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(lw_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	bool out = is_target(prev), in = is_target(next);
	__u32 cpu = bpf_get_smp_processor_id();
	struct lw_cpu_state *cs = cpu_state_get(cpu);
	__u64 now;

	if (!cs)
		return 0;
	/* Most switches involve no target and no THP kthread: no clock read,
	 * no store. */
	if (!out && !in) {
		if (cs->target_cur)
			cs->target_cur = 0;
		if (cs->thp_start || is_thp_kthread(next)) {
			now = bpf_ktime_get_ns();
			thp_switch_out(cs, now);
			thp_switch_in(cs, next, now);
		}
		if (ksd_switch_seen(prev, next) && (cs->ksd_start || is_ksd(cs, next)))
			ksd_switch(cs, next, bpf_ktime_get_ns());
		return 0;
	}
	now = bpf_ktime_get_ns();
	thp_switch_out(cs, now); /* before switch_in splits its wait */
	if (ksd_switch_seen(prev, next))
		ksd_switch(cs, next, now); /* ksoftirqd is never a target */
	if (out)
		switch_out(prev, next, preempt, cs, now);
	if (in)
		switch_in(next, prev, cs, cpu, now);
	else
		cs->target_cur = 0;
	thp_switch_in(cs, next, now); /* after switch_out queued its wait */
	return 0;
}

/*
 * When the wake-up of ts, seen at sched_wakeup at now, began: at its
 * sched_waking, on the waker's CPU. A wake-up queued to another CPU's
 * wakelist (ttwu_queue_wakelist(): across LLCs, and within one to an idle
 * CPU since 6.0, "sched: Remove the limitation of WF_ON_CPU on wakelist if
 * wakee cpu is idle") reaches sched_wakeup only on that CPU, after it left
 * idle: the exit from a C-state, or a halted vCPU's wake-up by its host, lies
 * between the two, and starting the wait at sched_wakeup hid it (24 us per
 * wake-up on the dev VM, 2 us with the vCPU polling). A sched_waking before
 * the thread's last transition belongs to an earlier sleep: the wake-up raced
 * its switch-out.
 */
static __always_inline __u64 wake_began(struct thread_state *ts, __u64 now)
{
	__u64 t = ts->waking_ts;

	ts->waking_ts = 0;
	return t && t >= ts->last_ts && t <= now ? t : now;
}

/*
 * The part of a wake-up's stretch to sched_wakeup (gap) that its idle CPU
 * spent leaving idle: less the interrupts it handled meanwhile, which the
 * wait's split holds when its counters date from sched_waking (timed).
 * Saturated to 32 bits.
 */
static __always_inline __u32 wake_idle_ns(struct thread_state *ts, struct lw_cpu_state *cs,
					  __u64 gap, bool timed)
{
	__u64 intr;

	if (timed && cs) {
		intr = (cs->irq_ns - ts->wait_irq) + (cs->softirq_ns - ts->wait_softirq);
		if (irq_entry_ns)
			intr += intr_cost(cs->nirq, ts->wait_intr, gap);
		gap = gap > intr ? gap - intr : 0;
	}
	return gap < 0xffffffffULL ? gap : 0xffffffffU;
}

static __always_inline int on_wakeup(struct task_struct *p)
{
	struct thread_state *ts;
	bool was_busy;
	struct lw_cpu_state *cs;
	bool from_waking;
	__u64 now, wake;
	__u32 cpu;

	if (!is_target(p))
		return 0;
	ts = bpf_task_storage_get(&threads, p, 0, 0);
	if (!ts || ts->state != TS_SLEEPING)
		return 0;
	now = bpf_ktime_get_ns();
	wake = wake_began(ts, now);
	was_busy = ts->busy;
	if (was_busy) {
		/* asleep inside a request */
		__u64 delta = wake - ts->last_ts;

		/* khugepaged releasing the mmap lock it held to collapse our
		 * memory is the one waking us: that sleep is THP's. */
		if (ts->in_compact || is_thp_kthread(bpf_get_current_task_btf())) {
			ts->cum[LW_B_THP] += delta;
			__sync_fetch_and_add(&thp.khugepaged_wake_ns, delta);
		} else {
			ts->cum[LW_B_BLOCKED] += delta;
		}
	}
	/* Its data may be what woke it. With handoff_watch, also when busy:
	 * the requests it holds open may have been answered by other threads
	 * since (their slots are freed only when this thread next touches
	 * their sockets), so reads after this wake-up start from it, not from
	 * a busy span that only those kept open. */
	if (req_by_conn && armed && (!was_busy || handoff_watch))
		cycle_open(ts, wake, true);
	ts->state = TS_RUNNABLE;
	ts->waiter_pid = 0;
	ts->last_ts = wake;
	cpu = lw_task_cpu(p);
	cs = cpu_state_get(cpu);
	/* the counters taken at sched_waking, on the CPU it runs on */
	from_waking = ts->waiting == LW_WAIT_WAKING && ts->wait_cpu == cpu;
	if (!from_waking) {
		wait_end(ts);
		wait_start(ts, cpu, now, 0);
	} else if (!ts->busy) {
		wait_end(ts); /* woken for no request: not a wait to time */
	} else {
		ts->waiting = LW_WAIT_QUEUED;
		if (cs) /* a softirq this wake-up's IPI interrupted */
			softirq_clock_on(cs, cpu, now);
	}
	/* A wake-up queued to an idle CPU reaches sched_wakeup there, from
	 * its idle task, once that CPU left idle: the wait until now was the
	 * exit from idle, less the interrupts it handled first, whatever runs
	 * there before us (ksoftirqd, with the softirq such an interrupt
	 * raised; switch_in()). */
	ts->wake_idle = 0;
	if (!bpf_get_current_task_btf()->pid && bpf_get_smp_processor_id() == cpu)
		ts->wake_idle = wake_idle_ns(ts, cs, now - wake, from_waking);
	ckpt_take(ts, wake, LW_B_SCHED);
	return 0;
}

/* The start of a wake-up: see wake_began(). Only the time is kept; the
 * state changes at sched_wakeup, which every sched_waking is followed by. */
SEC("tp_btf/sched_waking")
int BPF_PROG(lw_sched_waking, struct task_struct *p)
{
	struct thread_state *ts;
	__u64 now;

	if (!is_target(p))
		return 0;
	ts = bpf_task_storage_get(&threads, p, 0, 0);
	if (!ts)
		return 0;
	now = bpf_ktime_get_ns();
	ts->waking_ts = now;
	/* The interrupts of the CPU it last ran on count from here: a
	 * wake-up queued to an idle CPU reaches sched_wakeup only after that
	 * CPU handled what came before the IPI (under the lab's disk
	 * injector, interrupts and their softirqs held a third of the time
	 * from sched_waking to sched_wakeup; bpftrace). Not while it is still
	 * switching out: that wake-up races its sleep (wake_began()). */
	if (ts->state == TS_SLEEPING && !ts->waiting && armed)
		wait_start(ts, lw_task_cpu(p), now, LW_WAIT_WAKING);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(lw_sched_wakeup, struct task_struct *p)
{
	return on_wakeup(p);
}

/*
 * power:cpu_idle, on entering an idle state (its number) and on leaving it
 * (PWR_EVENT_EXIT). A thread woken onto an idle CPU waits for that CPU to
 * leave the state it was in: a C-state's exit latency, or nothing much if
 * the state polls (POLL, the kernel's idle=poll, a PM QoS limit that allows
 * no C-state). Only entries change what the CPU is in.
 */
SEC("tp_btf/cpu_idle")
int BPF_PROG(lw_cpu_idle, unsigned int state, unsigned int cpu_id)
{
	struct lw_cpu_state *cs;

	if (state == (unsigned int)-1)
		return 0;
	cs = cpu_state_get(bpf_get_smp_processor_id());
	if (cs)
		cs->idle_polling = state < 32 && ((idle_poll_states >> state) & 1);
	return 0;
}

/* ---- interrupts --------------------------------------------------------- */

/*
 * Interrupt time matters only while a request runs or waits on this CPU: the
 * per-CPU counters are read as deltas over exactly those spans. Elsewhere the
 * handlers return before reading the clock, which is most of their cost.
 */
static __always_inline bool cpu_watched(struct lw_cpu_state *cs)
{
	return (cs->target_cur & LW_CUR_IN_REQ) || cs->waiters;
}

/*
 * An interrupt that nests in a timed softirq (a disk's next completion during
 * the BLOCK softirq of the one before) has its entry and exit in that
 * softirq's time already, which excludes only nested handlers: it is not
 * counted for LW_B_IRQ_ENTRY.
 */
static __always_inline bool in_timed_softirq(struct lw_cpu_state *cs)
{
	return cs->softirq_start > LW_SOFTIRQ_UNTIMED;
}

/*
 * Call-function IPIs (x86's irq_vectors; elsewhere IPIs are device
 * interrupts): RPS's kick of NET_RX on another CPU, TLB shootdowns,
 * smp_call_function. Their handlers are short and not timed; what they cost
 * a running target is mostly their entry and exit, counted here for
 * LW_B_IRQ_ENTRY. Not the reschedule IPI: that one belongs to the
 * preemption it asks for.
 */
static __always_inline void ipi_count(void)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());

	if (cs && (cs->target_cur & LW_CUR_IN_REQ) && !in_timed_softirq(cs))
		cs->nipi++;
}

SEC("tp_btf/call_function_entry")
int BPF_PROG(lw_ipi_call, int vector)
{
	ipi_count();
	return 0;
}

SEC("tp_btf/call_function_single_entry")
int BPF_PROG(lw_ipi_call_single, int vector)
{
	ipi_count();
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(lw_irq_entry, int irq, struct irqaction *action)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());

	if (cs && cpu_watched(cs))
		cs->irq_start = bpf_ktime_get_ns();
	return 0;
}

/* The evidence counter of irq on this CPU; *first when it had none. */
static __always_inline struct lw_count *irq_count(__u32 irq, __u32 cpu, bool *first)
{
	struct lw_irq_key key = {.irq = irq, .cpu = cpu};
	struct lw_count zero = {}, *c;

	if (irq < LW_IRQ_FAST) {
		c = bpf_map_lookup_elem(&irq_ev, &irq);
		*first = c && !c->count && !c->ns;
		return c;
	}
	c = bpf_map_lookup_elem(&irq_ev_hi, &key);
	if (c)
		return c;
	bpf_map_update_elem(&irq_ev_hi, &key, &zero, BPF_NOEXIST);
	*first = true;
	return bpf_map_lookup_elem(&irq_ev_hi, &key);
}

/*
 * A shared line runs all its actions one after another for every interrupt,
 * each bracketed by its own entry/exit pair: summing the pairs counts the
 * time once, and counting only at the chain's last action (next == NULL)
 * counts the interrupt once, whichever actions claimed it.
 */
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(lw_irq_exit, int irq, struct irqaction *action, int ret)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct lw_cpu_state *cs = cpu_state_get(cpu);
	struct lw_count *c;
	bool first = false;
	__u64 delta;

	if (!cs || !cs->irq_start)
		return 0;
	delta = bpf_ktime_get_ns() - cs->irq_start;
	cs->irq_start = 0;
	cs->irq_ns += delta;
	if (!action->next && !in_timed_softirq(cs))
		cs->nirq++;
	c = irq_count(irq, cpu, &first);
	if (!c)
		return 0;
	/* this CPU's row, and handlers do not nest: no other writer */
	c->ns += delta;
	c->count += action->next ? 0 : 1;
	if (first) {
		char name[LW_IRQ_NAME_LEN] = {};
		__u32 key = irq;

		bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(action, name));
		bpf_map_update_elem(&irq_names, &key, name, BPF_NOEXIST);
	}
	return 0;
}

/*
 * A send by the target raises NET_RX on its own CPU when the peer is local
 * (loopback, a sidecar): the send's local_bh_enable() then runs the peer's
 * receive in the target's context. That is the cost of its own send, not an
 * interrupt: the first NET_RX after the send began (send_conn() sets
 * LW_CUR_SENDING) stays in the thread's run, and is neither timed nor
 * counted as evidence, which spares the two clock reads of every local
 * reply. A context switch clears both flags with the rest of target_cur, so
 * one NET_RX per send at most.
 */
SEC("tp_btf/softirq_entry")
int BPF_PROG(lw_softirq_entry, unsigned int vec)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());
	__u32 cur;

	if (!cs)
		return 0;
	cur = cs->target_cur;
	if ((cur & LW_CUR_SENDING) && vec == NET_RX_SOFTIRQ) {
		cs->target_cur = (cur & ~LW_CUR_SENDING) | LW_CUR_OWN_SOFTIRQ;
		return 0;
	}
	if (!cpu_watched(cs)) {
		/* no clock read: wait_start() may start the clock mid-run */
		cs->softirq_start = LW_SOFTIRQ_UNTIMED;
		return 0;
	}
	cs->softirq_start = bpf_ktime_get_ns();
	cs->softirq_irq_snap = (__u32)cs->irq_ns;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(lw_softirq_exit, unsigned int vec)
{
	struct lw_cpu_state *cs = cpu_state_get(bpf_get_smp_processor_id());
	struct lw_count *c;
	__u32 key = vec;
	__u64 delta, nested;

	if (!cs)
		return 0;
	if (vec == NET_RX_SOFTIRQ && (cs->target_cur & LW_CUR_OWN_SOFTIRQ)) {
		cs->target_cur &= ~LW_CUR_OWN_SOFTIRQ;
		return 0;
	}
	if (cs->softirq_start <= LW_SOFTIRQ_UNTIMED) {
		cs->softirq_start = 0;
		return 0;
	}
	delta = bpf_ktime_get_ns() - cs->softirq_start;
	nested = (__u32)((__u32)cs->irq_ns - cs->softirq_irq_snap);
	delta = delta > nested ? delta - nested : 0;
	cs->softirq_start = 0;
	cs->softirq_ns += delta;
	c = bpf_map_lookup_elem(&softirq_ev, &key);
	if (c) {
		c->ns += delta;
		c->count++;
	}
	return 0;
}

/* ---- clock -------------------------------------------------------------- */

/*
 * raw_tp rather than tp_btf so that tests and the lab can drive it with
 * BPF_PROG_TEST_RUN: args[0] = new clock in kHz, args[1] = cpu.
 */
SEC("raw_tp/cpu_frequency")
int lw_cpu_freq(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 khz = ctx->args[0], cpu = ctx->args[1];
	struct lw_cpu_state *cs = cpu_state_get(cpu);
	__u64 now = bpf_ktime_get_ns();

	if (!cs)
		return 0;
	cs->flost = cpu_flost(cs, now);
	cs->freq_ts = now;
	cs->khz = khz;
	cs->freq_events++;
	return 0;
}

/* ---- THP ---------------------------------------------------------------- */

/* Only the mm argument: the ones after it changed type (page -> folio). */
SEC("tp_btf/mm_khugepaged_scan_pmd")
int BPF_PROG(lw_khugepaged_scan, struct mm_struct *mm)
{
	if (targ_mm && (__u64)mm == targ_mm)
		__sync_fetch_and_add(&thp.scans, 1);
	return 0;
}

SEC("tp_btf/mm_collapse_huge_page")
int BPF_PROG(lw_collapse, struct mm_struct *mm, int isolated)
{
	if (!targ_mm || (__u64)mm != targ_mm)
		return 0;
	if (isolated)
		__sync_fetch_and_add(&thp.collapses, 1);
	else
		__sync_fetch_and_add(&thp.collapse_fail, 1);
	return 0;
}

/* Direct compaction runs in the context of the allocating thread. */
SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(lw_compact_begin)
{
	struct thread_state *ts;
	struct lw_cpu_state *cs;
	__u64 now;

	if (!is_target(bpf_get_current_task_btf()))
		return 0;
	now = bpf_ktime_get_ns();
	ts = current_running(&cs, now);
	if (!ts)
		return 0;
	charge_run(ts, cs, now);
	ts->in_compact = 1;
	ts->compact_start = now;
	__sync_fetch_and_add(&thp.compactions, 1);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(lw_compact_end)
{
	struct thread_state *ts;
	struct lw_cpu_state *cs;
	__u64 now;

	if (!is_target(bpf_get_current_task_btf()))
		return 0;
	now = bpf_ktime_get_ns();
	ts = current_running(&cs, now);
	if (!ts || !ts->in_compact)
		return 0;
	charge_run(ts, cs, now);
	ts->in_compact = 0;
	__sync_fetch_and_add(&thp.compact_ns, now - ts->compact_start);
	return 0;
}

/* ---- requests ----------------------------------------------------------- */

static __always_inline bool is_recv_nr(long nr)
{
	return nr == LW_NR_read || nr == LW_NR_readv || nr == LW_NR_recvfrom ||
	       nr == LW_NR_recvmsg || nr == LW_NR_recvmmsg;
}

static __always_inline bool is_send_nr(long nr)
{
	return nr == LW_NR_write || nr == LW_NR_writev || nr == LW_NR_sendto ||
	       nr == LW_NR_sendmsg || nr == LW_NR_sendmmsg || nr == LW_NR_sendfile;
}

static __always_inline bool fd_is_socket(struct task_struct *t, __u32 fd)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds, *f = NULL;
	umode_t mode;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return false;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_core_read(&f, sizeof(f), &fds[fd]) || !f)
		return false;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	return (mode & S_IFMT) == S_IFSOCK;
}

/*
 * A reply on sk by thread tid, with handoff_watch. The socket's open request
 * is the one its last reader started. Read by tid: this reply ends it, in
 * tid's slot (true). Read by another thread: it ends here, its latency
 * measured, its time spent on threads whose transitions cannot be told
 * apart from their other work, so its record carries no split
 * (LW_REQ_HANDOFF) rather than a wrong one; and a request tid itself still
 * holds open on sk was answered by another thread before (false).
 */
static __always_inline bool sock_reply(const struct sock *sk, __u32 tid)
{
	struct sock_state *ss;
	struct lw_request *r;
	__u64 latency;
	__u32 reader;

	if (!sk->sk_bpf_storage)
		return true; /* never read by a target thread while watched */
	ss = bpf_sk_storage_get(&socks, (struct sock *)sk, 0, 0);
	if (!ss)
		return true;
	reader = ss->reader;
	ss->reader = 0;
	if (reader == tid)
		return true;
	if (!reader)
		return false;
	latency = bpf_ktime_get_ns() - ss->start_ts;
	hist_add(latency);
	__sync_fetch_and_add(&handoffs, 1);
	if (latency <= slow_thresh_ns)
		return false;
	r = request_rec(ss->start_ts, latency);
	if (!r)
		return false;
	__builtin_memset(r->ns, 0, sizeof(r->ns));
	r->flags = LW_REQ_HANDOFF;
	r->preempt_pid = 0;
	r->preempt_ns = 0;
	__builtin_memset(r->preempt_comm, 0, sizeof(r->preempt_comm));
	request_submit(r);
	return false;
}

/* A send on conn (sk: its socket, or NULL in syscall mode) by a target
 * thread ends conn's open request, if any. The check before the clock read
 * keeps other sends cheap. */
static __always_inline void send_conn(__u64 conn, const struct sock *sk)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct lw_cpu_state *cs;
	struct thread_state *ts;
	int i;

	if (!is_target(t))
		return;
	cs = cpu_state_get(bpf_get_smp_processor_id());
	if (cs && (cs->target_cur & LW_CUR_TARGET))
		cs->target_cur |= LW_CUR_SENDING; /* see lw_softirq_entry() */
	ts = bpf_task_storage_get(&threads, t, 0, 0);
	i = ts ? slot_open(ts, conn) : -1;
	if (handoff_watch && sk && !sock_reply(sk, t->pid)) {
		if (ts && i >= 0)
			slot_drop(ts, i); /* answered by another thread */
		return;
	}
	if (ts && i >= 0)
		request_end(ts, i, bpf_ktime_get_ns());
}

/* --request syscall. The send side is at entry: the request ends when the
 * reply starts. */
SEC("tp_btf/sys_enter")
int BPF_PROG(lw_sys_enter, struct pt_regs *regs, long id)
{
	if (is_send_nr(id))
		send_conn((__u32)lw_sys_arg0(regs), NULL);
	return 0;
}

/* The receive side is at exit, once data arrived. */
SEC("tp_btf/sys_exit")
int BPF_PROG(lw_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *t;
	__u32 fd;

	if (ret <= 0)
		return 0;
	t = bpf_get_current_task_btf();
	if (!is_target(t) || !is_recv_nr(lw_sys_nr(regs)))
		return 0;
	fd = lw_sys_arg0(regs);
	if (!fd_is_socket(t, fd))
		return 0;
	request_start(fd, NULL, bpf_ktime_get_ns());
	return 0;
}

/* A TCP socket on a listening port: accepted from a client. */
static __always_inline bool tcp_inbound(const struct sock *sk)
{
	__u16 port = sk->__sk_common.skc_num;

	return !listen_known || ((listen_ports[port / 64] >> (port % 64)) & 1);
}

/*
 * --request socket: the socket layer's own tracepoints, so that no program
 * sits on raw_syscalls (which puts every syscall of every task on the traced
 * slow path). sock_recv_length/sock_send_length fire at the end of
 * sock_recvmsg()/sock_sendmsg(), since 6.3 ("net: Add sock_recv_length and
 * sock_send_length tracepoints"). The end of a send is late for a request's
 * end (the reply left when the transmit began), so a TCP request ends at
 * tcp_sendmsg_locked, which fires before the data is queued, since 6.12
 * ("trace: tcp: Add tracepoint for tcp_sendmsg_locked()"); sock_send_length
 * is the fallback. user/tracer.c probes which of them the kernel has.
 */
SEC("tp_btf/sock_recv_length")
int BPF_PROG(lw_sock_recv, struct sock *sk, int ret, int flags)
{
	if (ret <= 0 || !is_target(bpf_get_current_task_btf()))
		return 0;
	if (sk->sk_protocol == IPPROTO_TCP) {
		if (!tcp_inbound(sk))
			return 0; /* a reply from its upstream */
	} else if (!sock_send_on) {
		if (!non_tcp_seen)
			non_tcp_seen = 1; /* nothing would end its request yet */
		return 0;
	}
	request_start((__u64)sk, sk, bpf_ktime_get_ns());
	return 0;
}

/*
 * ---- receive backlog ----
 *
 * A segment sent over loopback, a veth pair or a tun device is queued in a
 * CPU's receive backlog (netif_rx()), and waits there for that CPU's NET_RX
 * softirq, behind every packet queued before it: with RPS steering a flood
 * to the server's CPU, a request waited 34 us on average and up to 1.2 ms
 * before sk_data_ready, where its window starts (README, Accuracy). So
 * netif_rx stamps each data segment for a target's listening port, keyed
 * by its skb, and netif_receive_skb, where NET_RX takes it, leaves the wait
 * for the sk_data_ready that follows on that CPU. Only the wait is timed,
 * enqueue to dequeue: the segment's own protocol work after it is no
 * interference. Segments a NIC delivers never enter a backlog through
 * netif_rx (RPS from a driver's NAPI poll enqueues directly): not covered.
 *
 * The stamps sit in slots (seg_slot()) that hold the skb's address: the
 * dequeue side turns every other packet of the host away with two loads and
 * a compare, once it has counted the packet for its CPU (rx_taken in its
 * lw_cpu_state, a line the CPU's softirq programs touch anyway). A stamp
 * overwritten before its segment was taken is a wait not timed: less blame,
 * never more (the sequence check catches a slot both CPUs wrote at once).
 */
struct rx_seg {
	__u64 skb;
	__u64 ts;
	__u32 seq;
	__u32 cpu;   /* the CPU that queued it */
	__u32 taken; /* that CPU's lw_cpu_state::rx_taken then */
	__u32 pad;
};

static struct rx_seg backlog_segs[LW_BACKLOG_SLOTS]; /* no userspace reader */

/* The last stamped segment NET_RX took on this CPU, for the sk_data_ready
 * after it. */
struct rx_last {
	__u64 wait_ns; /* 0: none pending */
	__u32 end_seq; /* the receiver's rcv_nxt once the segment is queued */
	__u16 lport;   /* host order, as skc_num */
	__u16 rport;   /* network order, as skc_dport */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rx_last);
} rx_last SEC(".maps");

/*
 * The slot of an skb's stamp, from two of its fields that do not change
 * between the enqueue and the dequeue: its flow hash (a TCP sender sets it,
 * skb_set_hash_from_sk()) and its length. Not from its address: the verifier
 * shifts no pointer, and turning one into a number costs a map round trip on
 * every packet of the host. Segments of one flow and size share a slot: the
 * later stamp wins, the earlier segment's wait is not timed.
 */
static __always_inline struct rx_seg *seg_slot(const struct sk_buff *skb)
{
	return &backlog_segs[(skb->hash ^ (skb->len * 0x9e3779b1u)) & (LW_BACKLOG_SLOTS - 1)];
}

#define LW_ETH_P_IP   0x0800
#define LW_ETH_P_IPV6 0x86DD
#define LW_IP_FRAG    0x3fff /* more fragments, fragment offset */

struct tcp_seg {
	__u32 seq, end_seq;
	__u16 dport; /* host order */
	__u16 sport; /* network order */
};

/* A TCP segment with data for a listening port of the target's, its IP
 * header at skb->data (eth_type_trans() pulled the link header before
 * netif_rx(); __netif_receive_skb_core() resets it there). One read for
 * both headers, when IPv4 has no options. */
static __always_inline bool tcp_seg_parse(const struct sk_buff *skb, struct tcp_seg *g)
{
	__u8 h[sizeof(struct ipv6hdr) + sizeof(struct tcphdr)];
	__u16 proto = skb->protocol;
	__u32 hlen, len, thlen;
	struct tcphdr th;

	if (bpf_probe_read_kernel(h, sizeof(h), skb->data))
		return false;
	if (proto == bpf_htons(LW_ETH_P_IP)) {
		struct iphdr *iph = (struct iphdr *)h;

		if (iph->protocol != IPPROTO_TCP || (iph->frag_off & bpf_htons(LW_IP_FRAG)))
			return false;
		hlen = iph->ihl * 4;
		len = bpf_ntohs(iph->tot_len);
	} else if (proto == bpf_htons(LW_ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)h;

		if (ip6->nexthdr != IPPROTO_TCP)
			return false;
		hlen = sizeof(*ip6);
		len = hlen + bpf_ntohs(ip6->payload_len);
	} else {
		return false;
	}
	if (hlen == sizeof(struct iphdr))
		__builtin_memcpy(&th, h + sizeof(struct iphdr), sizeof(th));
	else if (hlen == sizeof(struct ipv6hdr))
		__builtin_memcpy(&th, h + sizeof(struct ipv6hdr), sizeof(th));
	else if (bpf_probe_read_kernel(&th, sizeof(th), skb->data + hlen))
		return false;
	g->dport = bpf_ntohs(th.dest);
	if (!((listen_ports[g->dport / 64] >> (g->dport % 64)) & 1))
		return false;
	thlen = th.doff * 4;
	if (len <= hlen + thlen) /* no data: no sk_data_ready (or a BIG TCP length of 0) */
		return false;
	g->seq = bpf_ntohl(th.seq);
	g->end_seq = g->seq + (len - hlen - thlen);
	g->sport = th.source;
	return true;
}

/* Queued to a backlog: loopback_xmit(), veth, tun; since 2.6.35. */
SEC("tp_btf/netif_rx")
int BPF_PROG(lw_netif_rx, struct sk_buff *skb)
{
	struct lw_cpu_state *cs;
	struct rx_seg *v;
	struct tcp_seg g;

	if (!listen_known || !tcp_seg_parse(skb, &g))
		return 0;
	v = seg_slot(skb);
	v->ts = bpf_ktime_get_ns();
	v->seq = g.seq;
	v->cpu = bpf_get_smp_processor_id();
	cs = cpu_state_get(v->cpu);
	v->taken = cs ? cs->rx_taken : 0;
	v->skb = (__u64)skb;
	if (!backlog_seen)
		backlog_seen = 1;
	return 0;
}

/* Taken by NET_RX (every received packet passes here). */
SEC("tp_btf/netif_receive_skb")
int BPF_PROG(lw_netif_recv, struct sk_buff *skb)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0, taken = 0;
	struct lw_cpu_state *cs = cpu_state_get(cpu);
	struct rx_seg *v = seg_slot(skb);
	struct rx_last *last;
	struct tcp_seg g;
	__u64 ts, now;

	if (cs)
		taken = cs->rx_taken++;
	if (v->skb != (__u64)skb)
		return 0;
	v->skb = 0;
	ts = v->ts;
	now = bpf_ktime_get_ns();
	/* a dropped segment's stamp, its skb since reused for another */
	if (!tcp_seg_parse(skb, &g) || g.seq != v->seq || now < ts)
		return 0;
	/*
	 * Taken on the CPU that queued it, and nothing taken there before it:
	 * it waited behind no packet, only for its sender's path to unwind to
	 * the NET_RX that the sender's own local_bh_enable() runs (0.6-0.8 us
	 * a loopback or veth segment on the development VM). That is the hop's
	 * own cost, not a wait: timed, it was softirq in every request, and the
	 * cause of 103 of an idle nginx's 160 slow requests (13-20 us each).
	 */
	if (cs && v->cpu == cpu && v->taken == taken)
		return 0;
	last = bpf_map_lookup_elem(&rx_last, &zero);
	if (!last)
		return 0;
	last->wait_ns = now - ts;
	last->end_seq = g.end_seq;
	last->lport = g.dport;
	last->rport = g.sport;
	return 0;
}

/* The backlog wait of the segment that made sk ready, if NET_RX took it on
 * this CPU just before: its ports match and it is what sk's receive queue
 * ends with. Counted as evidence once per segment. */
static __always_inline __u64 backlog_take(const struct sock *sk)
{
	__u32 zero = 0, key = LW_SOFTIRQ_BACKLOG;
	struct rx_last *last;
	struct lw_count *c;
	__u64 w;

	last = bpf_map_lookup_elem(&rx_last, &zero);
	if (!last || !last->wait_ns || sk->__sk_common.skc_num != last->lport ||
	    sk->__sk_common.skc_dport != last->rport ||
	    BPF_CORE_READ((struct tcp_sock *)sk, rcv_nxt) != last->end_seq)
		return 0;
	w = last->wait_ns;
	last->wait_ns = 0;
	c = bpf_map_lookup_elem(&softirq_ev, &key);
	if (c) {
		c->ns += w;
		c->count++;
	}
	return w;
}

/*
 * Data became ready on a socket, since 6.3 ("net/sock: Introduce
 * trace_sk_data_ready()"). Only a socket a target thread has read from has
 * socket storage: every other one returns at the first check.
 */
SEC("tp_btf/sk_data_ready")
int BPF_PROG(lw_sk_ready, const struct sock *sk)
{
	struct sock_state *ss;
	__u64 w;

	/* most sockets have no BPF storage at all: no helper call for them */
	if (!sk->sk_bpf_storage)
		return 0;
	ss = bpf_sk_storage_get(&socks, (struct sock *)sk, 0, 0);
	if (!ss)
		return 0;
	w = backlog_known && sk->sk_protocol == IPPROTO_TCP ? backlog_take(sk) : 0;
	if (!ss->ready_ts) {
		ss->ready_ts = bpf_ktime_get_ns();
		ss->backlog_ns = w;
	}
	return 0;
}

/*
 * For every TCP peer, local ones included. Over loopback the reply reaches
 * the client only when the sending CPU's softirq delivers it, inside the
 * send: ending there instead put that delivery (the request's own reply, and
 * whatever else sat in the backlog) in every request's softirq bucket, and
 * baselines without any interrupt load showed irq shares up to 30%. The
 * backlog wait of a flood is the smaller loss (see README, Accuracy).
 */
SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(lw_tcp_send, const struct sock *sk)
{
	send_conn((__u64)sk, sk);
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(lw_sock_send, struct sock *sk, int ret, int flags)
{
	/* a TCP request ended in lw_tcp_send already: no second storage
	 * lookup and slot search for every TCP send of the target (once a
	 * non-TCP socket got this program attached) */
	if (tcp_send_ends && sk->sk_protocol == IPPROTO_TCP)
		return 0;
	send_conn((__u64)sk, sk);
	return 0;
}

/* --request uprobe:BINARY:SYMBOL: a request is one call, entry to return. */
SEC("uprobe")
int BPF_KPROBE(lw_req_entry)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct thread_state *ts;

	if (!is_target(t))
		return 0;
	ts = thread_get(t);
	if (!ts)
		return 0;
	if (ts->depth++ == 0)
		request_start(0, NULL, bpf_ktime_get_ns());
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(lw_req_return)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct thread_state *ts;

	if (!is_target(t))
		return 0;
	ts = bpf_task_storage_get(&threads, t, 0, 0);
	if (!ts || !ts->depth)
		return 0;
	if (--ts->depth == 0)
		request_end(ts, slot_open(ts, 0), bpf_ktime_get_ns());
	return 0;
}
