/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * memory.bpf.h - a target thread's time in the kernel's memory management
 * on its own behalf: its page faults, its direct reclaim (global and its
 * memory cgroup's), and its sleeps in a memory stall (memory.high's
 * penalty, a thrashing refault).
 *
 * A page fault starts at its entry tracepoint (arch.bpf.h: x86's
 * exceptions:page_fault_user and page_fault_kernel, the latter for a
 * copy_to_user() into memory not yet touched). It has no exit tracepoint;
 * it ends where the kernel accounts it, mm_account_fault() at the end of
 * handle_mm_fault(), which raises perf's PAGE_FAULTS_MIN or _MAJ software
 * event: userspace opens both on every CPU with a sample period of 1 and
 * attaches lw_fault_min / lw_fault_maj to them. A fault the kernel does not
 * account (a bad address: SIGSEGV, EFAULT) has no end; the next request
 * boundary of its thread drops it (mem_abandon()). kprobes are not in this
 * kernel's build and fentry/fexit on handle_mm_fault did not load on the
 * development VM (EPERM), so neither is used.
 *
 * Precedence (docs/model.md): direct compaction inside a fault or reclaim
 * is THP (in_compact, charge_run()), as is a fault that allocated a huge
 * page, from the allocation on (its zeroing); reclaim inside a fault is
 * reclaim; interrupts inside any of them stay IRQ (charge_run() takes them
 * off the slice first); a runnable wait inside them stays sched.
 */

#ifndef LW_MEMORY_BPF_H
#define LW_MEMORY_BPF_H

#include "account.bpf.h"
#include "compat.bpf.h"

/* Read by userspace. */
struct lw_mem_stats mem = {};

/*
 * A fault costs more than the span from its tracepoint to its perf event:
 * the exception's entry before the tracepoint, its return and the
 * instruction's retry after the event (a TLB refill, a two-level page walk
 * in a VM), and latwhy's own two programs. Userspace measures that once,
 * after attaching (faultcost.h): one of its threads, calib_tid, touches
 * fresh pages timed from user space while these programs keep each of its
 * faults' spans in calib_span[]. The difference is fault_entry_ns (0: not
 * measured), charged to each fault of a target from the run just before it
 * (fault_begin()).
 */
__u32 calib_tid = 0;
__u32 calib_n = 0;
__u64 calib_start = 0;
__u64 calib_span[LW_FAULT_CALIB];
__u32 fault_entry_ns = 0;

/* The calibrating thread's fault begins (end false) or ends: true if it
 * is that thread's. One load of a zero for every other fault. */
static __always_inline bool fault_calib(bool end)
{
	__u64 now;
	__u32 n;

	if (!calib_tid || calib_tid != (__u32)bpf_get_current_pid_tgid())
		return false;
	now = bpf_ktime_get_ns();
	if (!end) {
		calib_start = now;
		return true;
	}
	n = calib_n;
	if (n < LW_FAULT_CALIB && calib_start && now > calib_start)
		calib_span[n] = now - calib_start;
	calib_start = 0;
	calib_n = n + 1;
	return true;
}

/* The current thread, a target's, inside a stretch of memory work: its
 * mem_state under mask is want. It, running, its run charged up to *now;
 * NULL otherwise. A thread never seen has no stretch: not made here. */
static __always_inline struct thread_state *charge_in(__u32 mask, __u32 want,
						      struct lw_cpu_state **csp, __u64 *now)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct thread_state *ts;

	if (!is_target_cur(t))
		return NULL;
	ts = thread_find(t);
	if (!ts || (ts->mem_state & mask) != want)
		return NULL;
	*now = bpf_ktime_get_ns();
	if (!make_running(ts, csp, *now))
		return NULL;
	charge_run(ts, *csp, *now);
	return ts;
}

/* A fault of the current thread begins. */
static __always_inline int fault_begin(void)
{
	struct lw_cpu_state *cs;
	struct thread_state *ts;
	__u64 now, ent, run;

	if (fault_calib(false) || !is_target_cur(bpf_get_current_task_btf()))
		return 0;
	now = bpf_ktime_get_ns();
	ts = current_running(&cs, now);
	if (!ts)
		return 0;
	/* The fault's entry and exit outside its span: the run just before
	 * it held them (this fault's entry, the last one's exit, for faults
	 * in a row), so they are taken from there and charged as the
	 * fault's, never more than that run. Not from THP's or memory's own
	 * time: only a plain running slice. */
	ent = fault_entry_ns;
	if (!ts->busy || ts->in_compact || ts->mem_state || now < ts->last_ts) {
		ent = 0;
	} else {
		/* that run: the slice less its interrupts (charge_run()) */
		__u64 slice = now - ts->last_ts;
		__u64 intr = (cs->irq_ns - ts->snap_irq) + (cs->softirq_ns - ts->snap_softirq);

		run = intr < slice ? slice - intr : 0;
		if (run < ent)
			ent = run;
	}
	charge_run(ts, cs, now - ent);
	ts->cum[LW_B_FAULT_ENTRY] += ent;
	/* an earlier fault without an end (not accounted) is over */
	ts->mem_state = (ts->mem_state & ~LW_MEM_HUGE) | LW_MEM_FAULT;
	ts->fault_start = now;
	return 0;
}

/* The current thread's fault was accounted by the kernel: it ends. */
static __always_inline int fault_end(bool major)
{
	struct lw_cpu_state *cs;
	struct thread_state *ts;
	__u64 now;

	if (fault_calib(true))
		return 0;
	ts = charge_in(LW_MEM_FAULT, LW_MEM_FAULT, &cs, &now);
	if (!ts)
		return 0;
	ts->mem_state &= ~(LW_MEM_FAULT | LW_MEM_HUGE);
	ts->nfaults += major ? 1ULL << 32 : 1;
	__sync_fetch_and_add(major ? &mem.faults_maj : &mem.faults_min, 1);
	if (now > ts->fault_start)
		__sync_fetch_and_add(&mem.fault_ns, now - ts->fault_start);
	return 0;
}

/* A request boundary: no fault of the thread can be going on there, so one
 * still open was never accounted (a bad address). Its time so far stays
 * the fault's. */
static __always_inline void mem_abandon(struct thread_state *ts)
{
	if (ts->mem_state & LW_MEM_FAULT)
		ts->mem_state &= ~(LW_MEM_FAULT | LW_MEM_HUGE);
}

/* A busy thread slept delta ns, ended now: in the bucket sleep_bucket()
 * says, counted in the evidence if it was memory's. */
static __always_inline void mem_sleep(struct thread_state *ts, __u64 delta)
{
	__u32 b = sleep_bucket(ts);

	ts->cum[b] += delta;
	if (b == LW_B_FAULT_WAIT) {
		__sync_fetch_and_add(&mem.fault_sleeps, 1);
		__sync_fetch_and_add(&mem.fault_sleep_ns, delta);
	} else if (b == LW_B_MEMORY_HIGH) {
		__sync_fetch_and_add(&mem.stalls, 1);
		__sync_fetch_and_add(&mem.stall_ns, delta);
	}
}

/* x86's fault entries (arch.bpf.h); other architectures have neither
 * tracepoint in BTF and userspace does not load them. */
SEC("tp_btf/page_fault_user")
int BPF_PROG(lw_fault_user)
{
	return fault_begin();
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(lw_fault_kernel)
{
	return fault_begin();
}

SEC("perf_event")
int lw_fault_min(struct bpf_perf_event_data *ctx)
{
	return fault_end(false);
}

SEC("perf_event")
int lw_fault_maj(struct bpf_perf_event_data *ctx)
{
	return fault_end(true);
}

/*
 * A huge page allocated inside a target's fault: the rest of that fault
 * (the page's zeroing, 2 MiB of it) is THP's. A THP folio is movable and
 * compound, of order 2 (mTHP) and up; slab pages of that order are not
 * movable. Its mask is GFP_TRANSHUGE(_LIGHT), anonymous and shmem alike,
 * which has __GFP_NOMEMALLOC; the page cache's large folios (readahead)
 * have the mapping's mask, which has not: without that test, a file read
 * back in a fault counted 768 huge-page faults and thp 7.5% of its slow
 * requests' time. Every page allocation on the host runs this: three
 * compares turn away the rest before anything is read.
 */
SEC("tp_btf/mm_page_alloc")
int BPF_PROG(lw_page_alloc, struct page *page, unsigned int order, gfp_t gfp_flags, int migratetype)
{
	struct thread_state *ts;
	struct lw_cpu_state *cs;
	__u64 now;

	if (order < 2 || migratetype != MIGRATE_MOVABLE || !(gfp_flags & LW_GFP_NOMEMALLOC))
		return 0;
	/* in a fault, not yet a huge page's */
	ts = charge_in(LW_MEM_FAULT | LW_MEM_HUGE, LW_MEM_FAULT, &cs, &now);
	if (!ts)
		return 0;
	ts->mem_state |= LW_MEM_HUGE;
	__sync_fetch_and_add(&mem.faults_huge, 1);
	return 0;
}

static __always_inline int reclaim_begin(bool memcg)
{
	struct lw_cpu_state *cs;
	struct thread_state *ts;
	__u64 now;

	ts = charge_current(&cs, &now);
	if (!ts)
		return 0;
	ts->mem_state |= LW_MEM_RECLAIM | (memcg ? LW_MEM_MEMCG : 0);
	ts->reclaim_start = now;
	__sync_fetch_and_add(&mem.reclaims, 1);
	if (memcg)
		__sync_fetch_and_add(&mem.reclaim_memcg, 1);
	return 0;
}

static __always_inline int reclaim_end(unsigned long reclaimed)
{
	struct lw_cpu_state *cs;
	struct thread_state *ts;
	__u64 now;

	ts = charge_in(LW_MEM_RECLAIM, LW_MEM_RECLAIM, &cs, &now);
	if (!ts)
		return 0;
	ts->mem_state &= ~(LW_MEM_RECLAIM | LW_MEM_MEMCG);
	if (now > ts->reclaim_start)
		__sync_fetch_and_add(&mem.reclaim_ns, now - ts->reclaim_start);
	__sync_fetch_and_add(&mem.reclaim_reclaimed, reclaimed);
	return 0;
}

/* Only the leading arguments: see compat.bpf.h. */
SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(lw_reclaim_begin)
{
	return reclaim_begin(false);
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(lw_reclaim_end, unsigned long nr_reclaimed)
{
	return reclaim_end(nr_reclaimed);
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(lw_memcg_reclaim_begin)
{
	return reclaim_begin(true);
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(lw_memcg_reclaim_end, unsigned long nr_reclaimed)
{
	return reclaim_end(nr_reclaimed);
}

/* Pages a target's reclaim scanned: this runs only while some reclaim does. */
SEC("tp_btf/mm_vmscan_lru_shrink_inactive")
int BPF_PROG(lw_reclaim_scan, int nid, unsigned long nr_scanned)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct thread_state *ts;

	if (!is_target_cur(t))
		return 0;
	ts = thread_find(t);
	if (ts && (ts->mem_state & LW_MEM_RECLAIM))
		__sync_fetch_and_add(&mem.reclaim_scanned, nr_scanned);
	return 0;
}

#endif /* LW_MEMORY_BPF_H */
