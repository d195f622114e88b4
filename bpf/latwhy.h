/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * latwhy.h - the ABI between latwhy's BPF programs and userspace.
 *
 * Everything that crosses the kernel/user boundary is defined here: record
 * structs (tagged by enum lw_rec_type), map keys and values, limits. The same
 * records are what the analysis engine consumes, whether they come from the
 * live ring buffer, a capture file or a synthetic test.
 *
 * Included both by BPF C (after vmlinux.h) and by userspace (after
 * <linux/types.h>), so only __u32/__u64 style types are used.
 */
#ifndef LATWHY_H
#define LATWHY_H

/* the BPF side has the kernel types from vmlinux.h */
#ifndef __bpf__
#include <linux/types.h>
#endif

/*
 * The version of this ABI. Bump it with any change to a record struct, to
 * the values of an enum or flag that crosses (record types, bucket order),
 * to a map's key or value, or to a limit shared with userspace. The BPF
 * object carries the version it was built against (lw_abi_version), which
 * latwhy checks before load; once it passed, LW_ABI_VERSION is what a
 * capture records.
 */
#define LW_ABI_VERSION 4

#define LW_COMM_LEN	16
#define LW_IRQ_NAME_LEN 32
#define LW_MAX_CPUS	512
#define LW_MAX_IRQ_KEYS 2048
/* IRQs numbered below this are counted in a per-CPU array (no hashing in
 * the handler); the rest, rare outside very large hosts, in a hash. */
#define LW_IRQ_FAST	  1024
#define LW_MAX_PREEMPTORS 1024
#define LW_MAX_THREADS	  65536
#define LW_NR_SOFTIRQS	  10
/* softirq evidence has one row more than the kernel's vectors: the time a
 * target's TCP segments waited in a CPU's receive backlog (loopback, veth,
 * tun) for that CPU's NET_RX to take them (lw_netif_rx, lw_netif_recv) */
#define LW_SOFTIRQ_BACKLOG LW_NR_SOFTIRQS
/* and one more: a target's runqueue waits behind its CPU's ksoftirqd, for
 * the part of ksoftirqd's run that no timed softirq holds (wait_split()) */
#define LW_SOFTIRQ_KSOFTIRQD (LW_NR_SOFTIRQS + 1)
#define LW_SOFTIRQ_ROWS	     (LW_NR_SOFTIRQS + 2)
#define LW_BACKLOG_SLOTS     1024 /* stamps of segments in backlogs; a power of 2 */
#define LW_REQ_SLOTS	     16	  /* requests a thread can have open at once */
#define LW_THP_PIDS	     8	  /* khugepaged + kcompactd per NUMA node, tracked */
#define LW_RINGBUF_BYTES     (1 << 20)
/* faults whose spans the fault-cost calibration keeps (memory.bpf.h) */
#define LW_FAULT_CALIB 1024
/* Targets: up to LW_MAX_TARGETS slots (-p, --comm, --cgroup, --unit, and a
 * slot per container of --pods and --pod), each 0..LW_MAX_TARGETS-1, the
 * value of its entries in targ_tgids (a process) and targ_cgroups (a cgroup
 * v2 id; several ids may share a slot). LW_MAX_TGIDS processes and
 * LW_MAX_CGROUPS cgroups in all. ABI 3: 256 slots (16 before), the
 * cgroups' own bound. */
#define LW_MAX_TARGETS 256
#define LW_MAX_TGIDS   4096
#define LW_MAX_CGROUPS 4096

/* serve's always-attached tier (watch.bpf.h): 1 in 2^shift of a target's
 * requests sampled (counted 2^shift times and timed), shift at most
 * LW_WATCH_SHIFT_MAX. */
#define LW_WATCH_SHIFT_MAX 12

/*
 * Whether the request that starts with write_seq seq on a socket of hash
 * skc_hash (its 4-tuple's, the kernel's) is in the always-attached tier's
 * sample of 1 in 2^shift, under a run's seed: the top shift bits of a hash
 * of the three are 0. A function of the request alone, so every read of it
 * decides the same; and a sample at a shift is within the one at any
 * smaller shift. Mixed by murmur3's finaliser, so that a socket whose
 * replies are all one length (seq a progression) is sampled 1 in 2^shift
 * too. Shared by BPF and userspace (tests/unit/test_sample.c).
 */
static inline int lw_watch_sampled(__u32 skc_hash, __u32 seq, __u32 seed, __u32 shift)
{
	__u32 h = skc_hash ^ seq ^ seed;

	if (!shift)
		return 1;
	h ^= h >> 16;
	h *= 0x85ebca6bU;
	h ^= h >> 13;
	h *= 0xc2b2ae35U;
	h ^= h >> 16;
	return !(h >> (32 - (shift & 31)));
}
/* The deepest level of a --cgroup target that takes its descendants
 * (targ_cg_levels, a bit a level); the root is level 0. */
#define LW_CG_ANCESTOR_LEVELS 16
/* targ_tgid_bits: a bit per tgid modulo this, set for every tgid in
 * targ_tgids, so that a task of no target costs one load, not a lookup */
#define LW_TGID_BITS 65536

/* Latency histogram: log2 groups split into 2^LW_HIST_SUB_BITS linear
 * sub-buckets, so any quantile read from it is within 1/8 (12.5%) of the
 * true value. 64 groups x 8 = 512 buckets cover 0 ns .. 2^64 ns. */
#define LW_HIST_SUB_BITS 3
#define LW_HIST_SUB	 (1 << LW_HIST_SUB_BITS)
#define LW_HIST_BUCKETS	 (64 * LW_HIST_SUB)

/* Slow threshold value meaning "not known yet: emit nothing". */
#define LW_THRESH_UNKNOWN (~0ULL)

enum lw_rec_type {
	LW_REC_REQUEST = 1, /* one slow request, from the ring buffer */
	LW_REC_IRQ,	    /* cumulative hard-IRQ time while a target ran */
	LW_REC_SOFTIRQ,	    /* cumulative softirq time while a target ran */
	LW_REC_PREEMPT,	    /* cumulative time a task ran while a target waited */
	LW_REC_THP,	    /* cumulative THP activity against the target */
	LW_REC_CPU,	    /* per-CPU clock state */
	LW_REC_TICK,	    /* one second of request statistics */
	LW_REC_META,	    /* run configuration and end state */
	LW_REC_HIST,	    /* latency histogram of all requests so far */
	LW_REC_MEMORY,	    /* cumulative memory management of the targets (ABI 3) */
	LW_REC_POD,	    /* a preemptor's or the target's Kubernetes pod (ABI 4) */
	LW_REC_TIER,	    /* one interval's attached time by tier (ABI 4) */
};

/* Where a slow request's time went. Order is part of the ABI. */
enum lw_bucket {
	LW_B_RUN,     /* on CPU, interrupts excluded */
	LW_B_FREQ,    /* part of RUN lost to a clock below the reference */
	LW_B_IRQ,     /* hard-IRQ handlers while the thread was current */
	LW_B_SOFTIRQ, /* softirqs while the thread was current, and its
		       * request's wait in a receive backlog */
	LW_B_THP,     /* khugepaged/compaction instead of or inside the thread */
	LW_B_SCHED,   /* runnable, another task on the CPU */
	LW_B_IDLE,    /* woken onto an idle CPU: its idle exit and the wake-up */
	LW_B_BLOCKED, /* asleep for reasons other than THP */
	/* part of IDLE: woken onto an idle CPU that only polled (no C-state
	 * to leave, power:cpu_idle), so no cause latwhy can name: the wake-up
	 * itself, or a vCPU its host did not run */
	LW_B_IDLE_POLL,
	/* part of IRQ: the entry and exit of the interrupts that hit the
	 * thread while it ran, or its CPU while it waited behind them (device
	 * interrupts only there), beyond their handlers: their count times the
	 * cost of one measured at start (lw_meta_rec::irq_entry_ns). It came
	 * off RUN (or off the wait). */
	LW_B_IRQ_ENTRY,
	/* runnable while its cgroup, or an ancestor, was throttled by CFS
	 * bandwidth control (cpu.max, cpu.cfs_quota_us): it could have run,
	 * its quota for the period was spent. An addend, never sched or
	 * idle, and no task took the CPU from it. ABI 2. */
	LW_B_QUOTA,
	/* Memory management in the thread's own context, on its own behalf
	 * (memory.bpf.h), ABI 3; all four addends, the cause LW_CAUSE_MEMORY:
	 * on CPU handling its page faults (user and kernel mode, minor and
	 * major; interrupts in them stay IRQ, direct compaction and a
	 * huge-page fault's allocation and zeroing stay THP) */
	LW_B_FAULT,
	/* direct reclaim, global or its memory cgroup's, on CPU or asleep in
	 * it (throttled, waiting on writeback) */
	LW_B_RECLAIM,
	/* asleep in a memory stall (PSI) outside a fault and reclaim: the
	 * penalty sleep of a cgroup over memory.high, a thrashing refault's
	 * wait */
	LW_B_MEMORY_HIGH,
	/* asleep inside a page fault: a major fault's wait for its page (a
	 * file read, a swap-in), a lock of the page or the mm */
	LW_B_FAULT_WAIT,
	/* part of FAULT: each fault's entry and exit outside the span its
	 * tracepoint and perf event bracket (the exception's entry and
	 * return, the retried access's TLB refill, latwhy's own programs):
	 * their count times the cost of one measured at start
	 * (lw_meta_rec::fault_entry_ns), taken off the run just before each
	 * fault. Appended after ABI 3 */
	LW_B_FAULT_ENTRY,
	/* part of RUN: time the hypervisor took while the thread ran (its
	 * vCPU preempted by the host), from the guest's paravirtual steal
	 * clock read at each slice's ends. Appended after ABI 3 */
	LW_B_STEAL,
	LW_B_MAX,
};

/* The bucket b is a part of, or LW_B_MAX for an addend: the addends sum to
 * the latency, a part never exceeds its whole. Shared by BPF and userspace. */
static inline int lw_bucket_whole(int b)
{
	switch (b) {
	case LW_B_FREQ:
		return LW_B_RUN;
	case LW_B_IDLE_POLL:
		return LW_B_IDLE;
	case LW_B_IRQ_ENTRY:
		return LW_B_IRQ;
	case LW_B_FAULT_ENTRY:
		return LW_B_FAULT;
	case LW_B_STEAL:
		return LW_B_RUN;
	}
	return LW_B_MAX;
}

/* What of the kernel's memory management a thread is in (memory.bpf.h's
 * thread state; not in a record). */
#define LW_MEM_FAULT   1 /* in a page fault (its entry seen, its end not yet) */
#define LW_MEM_HUGE    2 /* that fault allocated a huge page: THP's */
#define LW_MEM_RECLAIM 4 /* in direct reclaim */
#define LW_MEM_MEMCG   8 /* that reclaim is its memory cgroup's */

/* Where a running slice of a thread goes, by what it is in (precedence,
 * docs/model.md): direct compaction is THP's, inside a fault or reclaim
 * too; reclaim, even inside a fault, reclaim's; a fault that allocated a
 * huge page THP's (its zeroing); a fault's the fault's; else RUN. The
 * slice's interrupts are taken off before (charge_run()). Shared by BPF and
 * the unit tests. */
static inline __u32 lw_mem_run_bucket(__u32 in_compact, __u32 mem_state)
{
	if (in_compact)
		return LW_B_THP;
	if (mem_state & LW_MEM_RECLAIM)
		return LW_B_RECLAIM;
	if (mem_state & LW_MEM_HUGE)
		return LW_B_THP;
	if (mem_state & LW_MEM_FAULT)
		return LW_B_FAULT;
	return LW_B_RUN;
}

/* And a busy thread's sleep: in compaction THP's; in reclaim (throttled,
 * on writeback) reclaim's; in a fault (a major fault's read or swap-in, a
 * page or mm lock) the fault's wait; a memory stall outside both (PSI's
 * in_memstall: memory.high's penalty sleep, a thrashing refault)
 * memory_high's; anything else blocked. */
static inline __u32 lw_mem_sleep_bucket(__u32 in_compact, __u32 mem_state, __u32 stall)
{
	if (in_compact)
		return LW_B_THP;
	if (mem_state & LW_MEM_RECLAIM)
		return LW_B_RECLAIM;
	if (mem_state & LW_MEM_FAULT)
		return LW_B_FAULT_WAIT;
	if (stall)
		return LW_B_MEMORY_HIGH;
	return LW_B_BLOCKED;
}

/* What held a slow request's time: the index of the slow-request counters
 * (cause_counts) and the engine's. Order is part of the ABI. */
enum lw_cause {
	LW_CAUSE_NONE = 0,
	LW_CAUSE_FREQ,
	LW_CAUSE_IRQ, /* hard IRQ + softirq */
	LW_CAUSE_THP,
	LW_CAUSE_SCHED,
	LW_CAUSE_IDLE,	 /* wake-up of an idle CPU: C-state exit latency, PM QoS */
	LW_CAUSE_QUOTA,	 /* CFS bandwidth throttling of its cgroup (cpu.max) */
	LW_CAUSE_MEMORY, /* page faults, direct reclaim, memory.high (ABI 3) */
	LW_CAUSE_MAX,
};

/* The causes a trace attributes requests to: LW_CAUSE_FREQ up to this one. */
#define LW_CAUSE_TRACED_LAST LW_CAUSE_MEMORY

/* A request's cause must hold at least this share of its latency (percent):
 * below it the request was slow for its own run or sleep, and a 3 us wake-up
 * in a 750 us request is not why it was slow. It is lower than a summary's
 * 10%: one request's traced delay is a share of its excess over a typical
 * request, not of its whole time (a halted vCPU's 30 us in 350 us). */
#define LW_REQ_CAUSE_MIN_PCT 5

/* A request's ns per traced cause from its buckets, the others 0. Shared
 * by BPF (cause_counts) and the engine, so that both decide alike. */
static inline void lw_cause_ns(const __u64 *ns, __u64 *v)
{
	__u64 polled = ns[LW_B_IDLE_POLL];

	if (polled > ns[LW_B_IDLE])
		polled = ns[LW_B_IDLE];
	for (int c = 0; c < LW_CAUSE_MAX; c++)
		v[c] = 0;
	v[LW_CAUSE_FREQ] = ns[LW_B_FREQ];
	v[LW_CAUSE_IRQ] = ns[LW_B_IRQ] + ns[LW_B_SOFTIRQ];
	v[LW_CAUSE_THP] = ns[LW_B_THP];
	v[LW_CAUSE_SCHED] = ns[LW_B_SCHED];
	/* a polling CPU had no exit to pay: no cause latwhy can name */
	v[LW_CAUSE_IDLE] = ns[LW_B_IDLE] - polled;
	v[LW_CAUSE_QUOTA] = ns[LW_B_QUOTA];
	v[LW_CAUSE_MEMORY] =
		ns[LW_B_FAULT] + ns[LW_B_RECLAIM] + ns[LW_B_MEMORY_HIGH] + ns[LW_B_FAULT_WAIT];
}

/* The cause of a request of latency with ns v per cause (lw_cause_ns()):
 * the largest, the first of equals, if it holds LW_REQ_CAUSE_MIN_PCT of
 * the latency; else LW_CAUSE_NONE. */
static inline __u32 lw_cause_of(const __u64 *v, __u64 latency)
{
	__u32 best = LW_CAUSE_NONE;
	__u64 max = 0;

	for (__u32 c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++) {
		if (v[c] > max) {
			max = v[c];
			best = c;
		}
	}
	if (max * 100 < (__u64)LW_REQ_CAUSE_MIN_PCT * latency)
		return LW_CAUSE_NONE;
	return best;
}

/*
 * One target's slow requests, counted in the kernel as each ends: a value
 * of cause_counts (per CPU, indexed by the target's slot), cumulative since
 * load. What `serve` exports; it needs no record per slow request for them.
 */
struct lw_cause_counts {
	__u64 slow[LW_CAUSE_MAX]; /* by lw_cause_of(); handed-off ones apart */
	__u64 ns[LW_CAUSE_MAX];	  /* their time by traced cause; [NONE] is 0 */
	__u64 latency_ns;	  /* their latency */
	/* slow and answered by another thread (LW_REQ_HANDOFF): no split */
	__u64 handoff;
	__u64 handoff_ns;
};

struct lw_request {
	__u32 type; /* LW_REC_REQUEST */
	__u32 pid;
	__u32 tid;
	__u32 cpu; /* CPU the request ended on */
	char comm[LW_COMM_LEN];
	__u64 start_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 latency_ns;
	__u64 ns[LW_B_MAX];
	/* The task that ran instead of this thread for longest in one wait. */
	__u32 preempt_pid;
	__u32 flags; /* enum lw_req_flags */
	char preempt_comm[LW_COMM_LEN];
	__u64 preempt_ns;
	/* page faults that ended in the request (ABI 3) */
	__u32 faults_min;
	__u32 faults_maj;
};

enum lw_req_flags {
	/* A clock and a reference were known for some of the run time: the
	 * FREQ bucket is a measurement. Without it, FREQ is "no data", not 0. */
	LW_REQ_FREQ_KNOWN = 1 << 0,
	/* A scheduler transition was missed: the gap was charged to the
	 * last known state, so the buckets add up but their split is a guess. */
	LW_REQ_INCOMPLETE = 1 << 1,
	/* Read by one thread, answered by another (a thread pool, a goroutine
	 * that moved): the latency is measured, ns[] is all zero, since the
	 * time went to threads whose other work cannot be told apart. */
	LW_REQ_HANDOFF = 1 << 2,
	/* power:cpu_idle was attached: IDLE_POLL is a measurement, not "no
	 * data" */
	LW_REQ_IDLE_KNOWN = 1 << 3,
	/* an interrupt's entry cost was measured: IRQ_ENTRY is a
	 * measurement, not "no data" */
	LW_REQ_IRQ_ENTRY_KNOWN = 1 << 4,
	/* its cgroups' throttling could be read (CFS bandwidth control in
	 * the kernel, ABI 2 and later): QUOTA is a measurement, not "no
	 * data" */
	LW_REQ_QUOTA_KNOWN = 1 << 5,
	/* its page faults, reclaim and memory stalls were traced (ABI 3 and
	 * later): FAULT .. FAULT_WAIT and the fault counts are a
	 * measurement, not "no data" */
	LW_REQ_MEMORY_KNOWN = 1 << 6,
	/* a fault's entry cost was measured: FAULT_ENTRY is a measurement,
	 * not "no data" (after ABI 3) */
	LW_REQ_FAULT_ENTRY_KNOWN = 1 << 7,
	/* the guest's steal clock was read: STEAL is a measurement, not "no
	 * data" (after ABI 3) */
	LW_REQ_STEAL_KNOWN = 1 << 8,
};

/* Map key of the per-IRQ evidence map. */
struct lw_irq_key {
	__u32 irq;
	__u32 cpu;
};

struct lw_count {
	__u64 ns;
	__u64 count;
};

struct lw_irq_rec {
	__u32 type; /* LW_REC_IRQ */
	__u32 irq;
	__u32 cpu;
	__u32 pad;
	char name[LW_IRQ_NAME_LEN];
	__u64 ns;
	__u64 count;
};

struct lw_softirq_rec {
	__u32 type; /* LW_REC_SOFTIRQ */
	__u32 vec;
	__u32 cpu;
	__u32 pad;
	__u64 ns;
	__u64 count;
};

/* Value of the preemptor evidence map, keyed by pid. */
struct lw_preempt_val {
	char comm[LW_COMM_LEN];
	__u64 ns;
	__u64 count;
	__u32 tgid; /* its process: the target's own threads compete too */
	__u32 pad;
	/* its cgroup v2 id when it last ran instead (issue 31): userspace
	 * names its pod from it (LW_REC_POD), also once it has exited */
	__u64 cgid;
};

struct lw_preempt_rec {
	__u32 type; /* LW_REC_PREEMPT */
	__u32 pid;
	char comm[LW_COMM_LEN];
	__u64 ns;
	__u64 count;
	__u32 tgid;
	__u32 pad;
};

/*
 * Whose CPU time a target thread's wait for the CPU was (issue 31): the
 * class of the task that ran instead, as the kernel decides it at the wait
 * (preempt.bpf.h's lw_by_of()), against the target's slot. Order is part
 * of the ABI (the index of lw_preempt_by::ns).
 */
enum lw_by {
	/* a thread of the target's own pod (a pod target's container), else
	 * of its own process or target; and a wait out of its own cgroup's
	 * CPU quota (LW_B_QUOTA), which its own threads spent */
	LW_BY_OWN,
	LW_BY_POD,    /* a thread of another Kubernetes pod (below kubepods) */
	LW_BY_HOST,   /* a process in no pod */
	LW_BY_KERNEL, /* a kernel thread (PF_KTHREAD): kworkers, ksoftirqd, khugepaged */
	LW_BY_MAX,
};

/* A value of preempt_by (per CPU, by the target's slot), cumulative since
 * load: the time of its threads' waits for the CPU while busy that a task
 * ran instead (what the preemptor evidence sums, wait_credit()) and that
 * its quota held them (LW_B_QUOTA), by lw_by. A wait for an idle CPU's
 * wake-up (LW_B_IDLE) and the interrupts within a wait are no task's. */
struct lw_preempt_by {
	__u64 ns[LW_BY_MAX];
};

/* The class of a task that ran instead of a target thread: a kernel thread
 * (kthread: PF_KTHREAD in its flags); else the target's own (own: for a
 * pod target, the task's cgroup has the target's pod as an ancestor; for
 * others, it is of the target's process or slot); else another pod's
 * (in_pod: its cgroup is below the kubelet's kubepods); else the host's.
 * Shared by BPF and the unit tests. */
static inline __u32 lw_by_class(__u32 kthread, __u32 own, __u32 in_pod)
{
	if (kthread)
		return LW_BY_KERNEL;
	if (own)
		return LW_BY_OWN;
	return in_pod ? LW_BY_POD : LW_BY_HOST;
}

/* Kubernetes names, the bounds of their API (bytes, the NUL included): a
 * namespace and a container are DNS labels, a pod a DNS subdomain. */
#define LW_K8S_NS_LEN	64
#define LW_K8S_NAME_LEN 256
#define LW_K8S_CTR_LEN	64
#define LW_K8S_QOS_LEN	16

/*
 * The Kubernetes pod of a task (issue 31): made by userspace (the kernel
 * has the task's cgroup id, lw_preempt_val::cgid), with each preemptor
 * record of a task whose cgroup is a pod container's, keyed by its pid
 * as LW_REC_PREEMPT is, and for the run's process (lw_meta_rec::pid)
 * before its META. Names from the kubelet's log tree (user/node/pods.h):
 * a pod not found there has ns "" and its uid as name (named 0); a
 * container not named there has "". A capture without them (record ABI 3
 * and older) names no pod.
 */
struct lw_pod_rec {
	__u32 type; /* LW_REC_POD */
	__u32 pid;
	__u32 named; /* its log directory was found: ns and name are its */
	__u32 pad;
	char ns[LW_K8S_NS_LEN];
	char name[LW_K8S_NAME_LEN];
	char container[LW_K8S_CTR_LEN];
	char qos[LW_K8S_QOS_LEN]; /* "Guaranteed", "Burstable", "BestEffort" */
};

/* THP counters for the target's mm, kept in BPF .bss. */
struct lw_thp_stats {
	__u64 scans;		  /* mm_khugepaged_scan_pmd on the target's mm */
	__u64 collapses;	  /* mm_collapse_huge_page, succeeded */
	__u64 collapse_fail;	  /* mm_collapse_huge_page, failed */
	__u64 compactions;	  /* mm_compaction_begin in a target thread */
	__u64 compact_ns;	  /* time in those compactions */
	__u64 khugepaged_wake_ns; /* target sleep ended by khugepaged/kcompactd */
	__u64 khugepaged_run_ns;  /* khugepaged/kcompactd ran while target waited */
};

/* Memory management in the targets' threads, kept in BPF .bss
 * (memory.bpf.h), cumulative since load. ABI 3. */
struct lw_mem_stats {
	__u64 faults_min;  /* page faults that ended, minor */
	__u64 faults_maj;  /* and major */
	__u64 fault_ns;	   /* their time, entry to end, whatever it was */
	__u64 faults_huge; /* of them, with a huge page's allocation (THP's) */
	__u64 reclaims;	   /* direct reclaim runs, global and memcg */
	__u64 reclaim_ns;
	__u64 reclaim_memcg;	 /* of them, a memory cgroup's (its limit) */
	__u64 reclaim_scanned;	 /* pages scanned (lru_shrink_inactive) */
	__u64 reclaim_reclaimed; /* pages reclaimed (reclaim_end) */
	__u64 stalls;		 /* sleeps in a memory stall outside both */
	__u64 stall_ns;
	__u64 fault_sleeps; /* sleeps inside a fault */
	__u64 fault_sleep_ns;
};

/* The node's memory while the targets were traced, read by userspace at
 * each snapshot (user/node/memory.c), not by BPF. After ABI 3. */
struct lw_mem_node {
	__u64 snapshots;  /* snapshots that read /proc/zoneinfo; 0: none */
	__u64 below_low;  /* of them, free pages below the low watermark */
	__u64 below_min;  /* and below min: allocations reclaim directly */
	__u64 free_pages; /* the last snapshot's, summed over the zones */
	__u64 wmark_min;  /* the zones' watermarks, summed, in pages */
	__u64 wmark_low;
	__u64 wmark_high;
	__u64 free_least; /* the fewest free pages a snapshot saw */
	/* kswapd threads' CPU time since the trace began (/proc/PID/stat,
	 * in USER_HZ ticks as ns), and how many there are (0: none found) */
	__u64 kswapd_ns;
	__u64 kswapds;
};

struct lw_mem_rec {
	__u32 type; /* LW_REC_MEMORY */
	__u32 pad;
	struct lw_mem_stats s;
	struct lw_mem_node node; /* after ABI 3: zero in older records */
};

struct lw_thp_rec {
	__u32 type; /* LW_REC_THP */
	__u32 pad;
	struct lw_thp_stats s;
};

enum lw_freq_source {
	LW_FREQ_NONE = 0,    /* nothing measured: "no frequency data" */
	LW_FREQ_TRACEPOINT,  /* power:cpu_frequency */
	LW_FREQ_APERF_MPERF, /* effective clock from the msr PMU */
	LW_FREQ_SYSFS_POLL,  /* polling scaling_cur_freq */
};

struct lw_cpu_rec {
	__u32 type; /* LW_REC_CPU */
	__u32 cpu;
	__u32 khz;     /* last known clock, 0 = unknown */
	__u32 ref_khz; /* reference clock, 0 = unknown */
	__u64 events;  /* clock changes seen */
};

struct lw_tick_rec {
	__u32 type; /* LW_REC_TICK */
	__u32 pad;
	__u64 ts_ns;	/* end of the interval */
	__u64 requests; /* requests completed in the interval */
	__u64 slow;	/* slow-request records received in the interval */
	__u64 p50_ns;	/* over all requests so far */
	__u64 p99_ns;
	__u64 threshold_ns; /* threshold in force, LW_THRESH_UNKNOWN if none */
};

/*
 * What was attached in one interval (ABI 4), after its tick: serve's
 * always-attached tier (bpf/watch.bpf.h: every TCP request counted, a
 * sample timed, the slow ones estimated from it, no cause) and full tracing
 * (every cause), each for how long. A tick's requests (every one) and
 * histogram (the timed ones, each as 2^shift) are the watch tier's when it
 * has any time, else full tracing's; its slow records and evidence only ever full
 * tracing's. Rates are over the attached time of what counted them.
 */
struct lw_tier_rec {
	__u32 type;	   /* LW_REC_TIER */
	__u32 escalations; /* full tracing attached on a rise, in the interval */
	__u64 ts_ns;	   /* end of the interval, as its tick's */
	__u64 watch_ns;	   /* the always-attached tier's time in it; 0: none */
	__u64 full_ns;	   /* full tracing's */
	__u64 watch_slow;  /* slow requests by the watch tier in it (estimated) */
};

/* Every request's latency so far, in lw_hist_bucket()s summed over CPUs: a
 * cumulative snapshot, so the quantiles of a run are its last one's. */
struct lw_hist_rec {
	__u32 type; /* LW_REC_HIST */
	__u32 pad;
	__u64 b[LW_HIST_BUCKETS];
};

enum lw_meta_flags {
	LW_META_TARGET_EXITED = 1 << 0,
	LW_META_NO_IRQ = 1 << 1, /* irq tracepoints missing */
	LW_META_NO_SOFTIRQ = 1 << 2,
	LW_META_NO_THP = 1 << 3, /* khugepaged tracepoints missing */
	LW_META_NO_COMPACT = 1 << 4,
	LW_META_NO_FREQ = 1 << 5, /* cpu_frequency tracepoint missing */
	/* requests keyed by connection without sk_data_ready (syscall mode,
	 * before 6.3, or skipped): they start at the wake-up, the last reply
	 * or the read, not when their data arrived */
	LW_META_NO_ARRIVAL = 1 << 6,
	/* arrival times without the receive backlog's wait (netif_rx or
	 * netif_receive_skb missing or skipped) */
	LW_META_NO_BACKLOG = 1 << 7,
	/* no power:cpu_idle (skipped): a wait for an idle CPU is counted as
	 * its exit from idle also where that CPU only polled */
	LW_META_NO_IDLE_STATE = 1 << 8,
	/* no CFS bandwidth control to read (CONFIG_CFS_BANDWIDTH off), or a
	 * capture of ABI 1: throttled time was not told apart (quota "no
	 * data", the wait counted as sched or idle) */
	LW_META_NO_QUOTA = 1 << 9,
	/* page faults not traced (no fault tracepoint on this architecture,
	 * no perf software events, skipped), or a capture of ABI 1 or 2:
	 * memory "no data", its time in run and blocked */
	LW_META_NO_MEMORY = 1 << 10,
	/* no paravirtual steal clock (bare metal, a hypervisor latwhy cannot
	 * read, a capture of ABI 3 or before): time the host took while the
	 * thread ran is in RUN, unseen (after ABI 3) */
	LW_META_NO_STEAL = 1 << 11,
	/* traced in a virtual machine (CPUID's hypervisor bit): with
	 * LW_META_NO_STEAL, a host took time that cannot be seen from here
	 * (after ABI 3) */
	LW_META_GUEST = 1 << 12,
};

/* What a request is (lw_meta_rec::req_mode, --request). */
enum lw_req_mode {
	LW_REQ_AUTO = 0, /* option only: socket if the kernel can, else syscall */
	LW_REQ_SYSCALL,	 /* read on a socket fd .. next write to it (raw_syscalls) */
	LW_REQ_SOCKET,	 /* the same, from the socket layer's tracepoints */
	LW_REQ_UPROBE,	 /* one call of BINARY:SYMBOL */
};

struct lw_meta_rec {
	__u32 type; /* LW_REC_META */
	__u32 pid;
	char comm[LW_COMM_LEN];
	__u32 flags;	   /* enum lw_meta_flags */
	__u32 freq_source; /* enum lw_freq_source */
	__u32 nr_cpus;
	__u32 tracer_tgid; /* latwhy's own pid: named, never blamed, in evidence */
	__u64 start_ns;
	__u64 duration_ns;
	__u64 threshold_ns; /* fixed --slow, or LW_THRESH_UNKNOWN for p99 */
	__u64 dropped;	    /* ring-buffer records lost */
	__u64 incomplete;   /* scheduler transitions missed inside requests */
	__u64 requests;	    /* all requests seen */
	__u32 req_mode;	    /* enum lw_req_mode, never AUTO */
	/* one interrupt's cost beyond its handler, measured at start (see
	 * LW_B_IRQ_ENTRY); 0: not measured */
	__u32 irq_entry_ns;
	__u64 untracked; /* requests given up: a thread had LW_REQ_SLOTS open */
	__u64 handoffs;	 /* requests answered by another thread (LW_REQ_HANDOFF) */
	/* one page fault's cost outside its traced span, measured after
	 * attaching (see LW_B_FAULT_ENTRY); 0: not measured. After ABI 3 */
	__u32 fault_entry_ns;
	__u32 pad2;
};

/*
 * Per-CPU state, an ARRAY map indexed by CPU. Userspace seeds khz, ref_khz
 * and freq_ts before attaching and reads it for the clock evidence; the BPF
 * side keeps the counters. 64-byte aligned in an mmapable (page-aligned)
 * array: each CPU's state starts its own cache line.
 */
struct lw_cpu_state {
	/* First cache line: all that the interrupt handlers touch. */
	__u32 target_cur;    /* LW_CUR_* flags of the task now on this CPU */
	__u32 waiters;	     /* busy target threads queued on this CPU */
	__u64 irq_ns;	     /* cumulative hard-IRQ handler time */
	__u64 softirq_ns;    /* cumulative softirq time, nested hard IRQs excluded */
	__u64 irq_start;     /* 0 = not in a handler */
	__u64 softirq_start; /* LW_SOFTIRQ_UNTIMED: one runs, not timed */
	/* irq_ns's low 32 bits when the timed softirq began: its nested
	 * handlers' time, modulo 2^32 ns (4.3 s; a softirq run is far less) */
	__u32 softirq_irq_snap;
	/* device interrupts timed here, for their entry and exit cost
	 * (LW_B_IRQ_ENTRY), in 32 bits (read as differences): the handlers
	 * touch this line anyway */
	__u32 nirq;
	/* khugepaged/kcompactd on this CPU: cumulative time, and when the
	 * one running now started (0: none) */
	__u64 thp_ns;
	__u64 thp_start;
	/* Second line: the clock. */
	__u64 freq_ts __attribute__((aligned(64))); /* when khz took effect */
	__u64 flost; /* integral of (1 - khz/ref_khz) dt up to freq_ts, in ns */
	__u64 freq_events;
	__u32 khz;     /* current clock, 0 = unknown */
	__u32 ref_khz; /* reference clock, 0 = unknown */
	/* call-function IPIs that hit a target while it ran (nirq's
	 * companion): their own program, so the line matters less */
	__u32 nipi;
	/* the idle state it last entered polls (power:cpu_idle): leaving it
	 * takes no C-state exit */
	__u32 idle_polling;
	/* this CPU's ksoftirqd (its pid, written by userspace; 0: unknown):
	 * cumulative run time, and when the run now going on began (0: none) */
	__u64 ksd_ns;
	__u64 ksd_start;
	__u32 ksd_pid;
	/* packets NET_RX took here (netif_receive_skb), in 32 bits (compared
	 * for equality): a segment NET_RX takes on the CPU that queued it,
	 * with none taken there in between, had nothing ahead of it */
	__u32 rx_taken;
} __attribute__((aligned(64)));

/* the interrupt handlers' fields fill the first cache line exactly */
_Static_assert(__builtin_offsetof(struct lw_cpu_state, freq_ts) == 64,
	       "lw_cpu_state's first line holds more than the handlers' fields");
_Static_assert(sizeof(struct lw_cpu_state) == 128, "lw_cpu_state is two cache lines");

#define LW_SOFTIRQ_UNTIMED 1 /* lw_cpu_state::softirq_start */

/* preempt_ev key of the wake-ups onto an idle CPU whose idle state polled
 * (pid 0, the idle task, holds those that left a C-state, or all of them
 * where the idle state is not known) */
#define LW_PID_IDLE_POLL 0xffffffffu

#define LW_CUR_TARGET	   1
#define LW_CUR_IN_REQ	   2 /* and busy: a request open, or woken for one */
#define LW_CUR_SENDING	   4 /* it began a send: the next NET_RX here is its own */
#define LW_CUR_OWN_SOFTIRQ 8 /* the NET_RX running now is that one */

/* Histogram bucket of a latency; shared by BPF and userspace. */
static inline __u32 lw_hist_bucket(__u64 v)
{
	__u32 msb = 0;
	__u64 x = v;

	if (v < LW_HIST_SUB)
		return (__u32)v;
	/* Branch-free enough for the verifier: binary search on the MSB. */
	if (x >> 32) {
		x >>= 32;
		msb += 32;
	}
	if (x >> 16) {
		x >>= 16;
		msb += 16;
	}
	if (x >> 8) {
		x >>= 8;
		msb += 8;
	}
	if (x >> 4) {
		x >>= 4;
		msb += 4;
	}
	if (x >> 2) {
		x >>= 2;
		msb += 2;
	}
	if (x >> 1)
		msb += 1;
	/* group = msb - SUB_BITS + 1, sub = next SUB_BITS bits below the MSB */
	return ((msb - LW_HIST_SUB_BITS + 1) << LW_HIST_SUB_BITS) +
	       (__u32)((v >> (msb - LW_HIST_SUB_BITS)) & (LW_HIST_SUB - 1));
}

#endif /* LATWHY_H */
