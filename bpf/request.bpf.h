/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * request.bpf.h - a request's life in its thread: slots, when it starts, its
 * end, and a slow request's record. Where requests start and end is
 * delimit.bpf.h's.
 */

#ifndef LW_REQUEST_BPF_H
#define LW_REQUEST_BPF_H

#include "account.bpf.h"
#include "backlog.bpf.h"
#include "memory.bpf.h"

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

/* Written by userspace every second: slow-request threshold. */
volatile __u64 slow_thresh_ns = LW_THRESH_UNKNOWN;

/* Read by userspace. */
__u64 dropped = 0;
__u64 untracked = 0; /* requests given up: every slot of the thread open */
__u64 handoffs = 0;  /* requests answered by another thread than their reader */

/* No separate count: it would be a second cold cache line per request. */
struct hist {
	__u64 b[LW_HIST_BUCKETS];
};

/* A target's socket: when data became ready on it and nobody read it yet;
 * with handoff_watch, its open request's start and the thread that read it
 * (0: none open). */
struct sock_state {
	__u64 ready_ts;
	__u64 backlog_ns; /* how long that data waited in a receive backlog */
	__u64 start_ts;
	__u32 reader;
	__u32 gen; /* attach_gen when it was last reset */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sock_state);
} socks SEC(".maps");

/* Entry 0: every target's requests. With several targets (targ_split),
 * entry 1 + slot: one target's. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1 + LW_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct hist);
} lat_hist SEC(".maps");

volatile bool targ_split = false; /* written by userspace: several targets */

/* Each target's slow requests by cause (lw_cause_counts), by its slot:
 * serve exports them without a record per slow request. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LW_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct lw_cause_counts);
} cause_counts SEC(".maps");

/* A record per slow request into the ring buffer too: trace, record and
 * serve's hindsight window read them; serve without one needs only the
 * counts. Set by userspace before load. */
const volatile bool emit_requests = true;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LW_RINGBUF_BYTES);
} events SEC(".maps");

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

/* A read socket's state, created at its first read, when anything needs it. */
/* A socket's state from before a detach (serve --sample) holds a read or
 * an arrival that may have happened unseen since: reset, as if new. */
static __always_inline struct sock_state *sock_fresh(struct sock_state *ss)
{
	if (ss && ss->gen != attach_gen) {
		ss->ready_ts = 0;
		ss->backlog_ns = 0;
		ss->start_ts = 0;
		ss->reader = 0;
		ss->gen = attach_gen;
	}
	return ss;
}

static __always_inline struct sock_state *sock_state_get(struct sock *sk)
{
	if (!sk || !(arrival_known || handoff_watch))
		return NULL;
	return sock_fresh(bpf_sk_storage_get(&socks, sk, 0, BPF_SK_STORAGE_GET_F_CREATE));
}

/* Its state, if it has one; never made here. */
static __always_inline struct sock_state *sock_find(struct sock *sk)
{
	return sock_fresh(bpf_sk_storage_get(&socks, sk, 0, 0));
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
	/* 64-bit and unsigned, LW_CKPTS for none: with an int, clang compared
	 * a 64-bit copy and indexed with a sign-extended 32-bit one, whose
	 * bound 6.12's verifier does not carry over ("math between map_value
	 * pointer and register with unbounded min value"; 6.18's does) */
	__u64 best = LW_CKPTS;
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
	if (best >= LW_CKPTS)
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
	mem_abandon(ts);
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
		s->nfaults = ts->nfaults;
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
		s->nfaults = ts->nfaults;
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

/* Set by userspace while the always-attached tier (watch.bpf.h) runs: it
 * counts every request and fills the histogram with those it timed, and
 * the full tier's request ends count none. */
volatile bool watch_hist = false;

/* A request into the histogram of all and, with several targets, into its
 * target slot's (slot < 0: none), as w of them: a sampled one stands for
 * its weight (watch.bpf.h). */
static __always_inline void hist_count_w(__u64 latency, int slot, __u64 w)
{
	__u32 key = 0, b = lw_hist_bucket(latency);
	struct hist *h = bpf_map_lookup_elem(&lat_hist, &key);

	if (!h || b >= LW_HIST_BUCKETS)
		return;
	h->b[b] += w;
	if (!targ_split || slot < 0 || slot >= LW_MAX_TARGETS)
		return;
	key = 1 + slot;
	h = bpf_map_lookup_elem(&lat_hist, &key);
	if (h)
		h->b[b] += w;
}

static __always_inline void hist_count_at(__u64 latency, int slot)
{
	hist_count_w(latency, slot, 1);
}

/* The request ends on a thread of its target's (its reader's, or another
 * of that process's when handed off): the slot is the current task's. */
static __always_inline void hist_count(__u64 latency)
{
	hist_count_at(latency, targ_split ? target_slot_cur() : -1);
}

static __always_inline void hist_add(__u64 latency)
{
	if (!watch_hist)
		hist_count(latency);
}

/*
 * The request's buckets: cum[] now less its start state. A start rebuilt at
 * the data's arrival (request_arrival()) put the time from the checkpoint to
 * the arrival in one bucket, which can exceed what that bucket then got (a
 * wait that turned out to be mostly interrupts, or an idle CPU's wake-up): a
 * bucket below zero is zero and its excess comes off the others, so that they
 * still add up to the latency: first off those a wait is split into, which
 * hold the rest of that time (quota among them), run last. A part of another bucket
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
		return LW_B_QUOTA;
	case 6:
		return LW_B_FAULT_WAIT;
	case 7:
		return LW_B_MEMORY_HIGH;
	case 8:
		return LW_B_BLOCKED;
	case 9:
		return LW_B_RECLAIM;
	case 10:
		return LW_B_FAULT;
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

/* A slow request counted by cause under its target's slot (the ending
 * thread's process: its reader's, or the one that answered a handed-off
 * request); ns NULL for a handed-off one, not split. A function of its
 * own, so that its branches do not multiply the states of its callers,
 * request_slow() and sock_reply() inlined into the send programs. */
static __noinline void causes_count(const __u64 *ns, __u64 latency)
{
	int slot = target_slot_cur();
	struct lw_cause_counts *c;
	__u64 v[LW_CAUSE_MAX];
	__u32 key, cause;

	if (slot < 0 || slot >= LW_MAX_TARGETS)
		return;
	key = slot;
	c = bpf_map_lookup_elem(&cause_counts, &key);
	if (!c)
		return;
	if (!ns) {
		c->handoff++;
		c->handoff_ns += latency;
		return;
	}
	lw_cause_ns(ns, v);
	cause = lw_cause_of(v, latency);
	if (cause < LW_CAUSE_MAX)
		c->slow[cause]++;
	for (int k = LW_CAUSE_FREQ; k <= LW_CAUSE_TRACED_LAST; k++)
		c->ns[k] += v[k];
	c->latency_ns += latency;
}

static __always_inline void request_emit(struct thread_state *ts, int i, __u64 latency,
					 const __u64 *ns)
{
	struct req_slot *s = &ts->slots[i];
	struct lw_preempt_val *top;
	struct lw_request *r;
	__u32 top_pid;

	r = request_rec(ts->slot_ts[i], latency);
	if (!r)
		return;
	__builtin_memcpy(r->ns, ns, sizeof(r->ns));
	r->flags = (ts->nfreq != s->nfreq ? LW_REQ_FREQ_KNOWN : 0) |
		   (ts->nincomplete != s->nincomplete ? LW_REQ_INCOMPLETE : 0) |
		   (idle_state_known ? LW_REQ_IDLE_KNOWN : 0) |
		   (irq_entry_ns ? LW_REQ_IRQ_ENTRY_KNOWN : 0) |
		   (quota_known ? LW_REQ_QUOTA_KNOWN : 0) |
		   (memory_known ? LW_REQ_MEMORY_KNOWN : 0) |
		   (fault_entry_ns ? LW_REQ_FAULT_ENTRY_KNOWN : 0) |
		   (steal_known ? LW_REQ_STEAL_KNOWN : 0);
	r->faults_min = (__u32)ts->nfaults - (__u32)s->nfaults;
	r->faults_maj = (__u32)(ts->nfaults >> 32) - (__u32)(s->nfaults >> 32);
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

_Static_assert(!(LW_REQ_SLOTS & (LW_REQ_SLOTS - 1)), "request_slow() masks by LW_REQ_SLOTS");

/* A slow request: counted, and its record when records are read. A function
 * of its own, not inlined: inlined, it took the send programs from 295k to
 * 362k instructions verified, of the 1M the verifier allows. Static, not
 * global: a global function with a pointer argument needs 5.12 (commit
 * e5069b9c23b3), and static it is verified in its callers' context, 279k
 * for the send programs on 6.18 against 238k global, so that 5.11 loads
 * (compat.bpf.h). 0 always. */
static __noinline int request_slow(struct thread_state *ts, __u32 slot, __u64 latency)
{
	/* masked, not compared: the callers' bound is not known here, and a
	 * compare clang made on a 32-bit copy left the index unbounded */
	__u32 i = slot & (LW_REQ_SLOTS - 1);

	if (!ts)
		return 0;
	request_buckets(ts, &ts->slots[i], ts->end_ns);
	causes_count(ts->end_ns, latency);
	if (emit_requests)
		request_emit(ts, i, latency, ts->end_ns);
	return 0;
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
	mem_abandon(ts);
	latency = now - ts->slot_ts[i];
	hist_add(latency);
	if (latency > slow_thresh_ns)
		request_slow(ts, i, latency);
	/* closed: keeps when it ended, for the next request on conn */
	ts->open_mask &= ~(1U << i);
	ts->slot_ts[i] = now;
	__builtin_memcpy(s->snap, ts->cum, sizeof(s->snap));
	s->nincomplete = ts->nincomplete;
	s->nfreq = ts->nfreq;
	s->nfaults = ts->nfaults;
	ts->slot_top_ns[i] = 0;
	ts->slot_top_pid[i] = 0;
	ts->cycle_ended = 1;
}

#endif /* LW_REQUEST_BPF_H */
