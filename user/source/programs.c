// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * programs.c - which of latwhy's BPF programs this kernel and these options
 * load, and the .rodata that follows from it.
 *
 * A tracepoint missing from BTF would fail the whole load, so its program is
 * switched off and the cause it feeds is reported as unavailable (a meta
 * flag); one latwhy cannot do without fails the start instead.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "lib/list.h"
#include "node/node.h" /* lw_idle_poll_states() */
#include "source/caps.h"
#include "source/irqcost.h"
#include "source/tracer_int.h"
#include "source/probe.h"
#include "source/tracer.h"

struct tp_prog {
	size_t prog; /* offset of its struct bpf_program * in the skeleton */
	const char *tp;
	__u32 flag;	       /* cause lost without it; 0: required */
	enum lw_req_mode mode; /* only for this request mode; AUTO: all */
	bool optional;	       /* a better source of what another gives */
};

#define PROG(name) offsetof(struct latwhy_bpf, progs.name)

/* The tracepoints latwhy uses, by name: what --skip may name. */
static const struct tp_prog tp_progs[] = {
	{PROG(lw_sched_switch), "sched_switch"},
	{PROG(lw_sched_wakeup), "sched_wakeup"},
	/* a wait starts where the wake-up began, before the CPU left idle */
	{PROG(lw_sched_waking), "sched_waking", 0, LW_REQ_AUTO, true},
	/* whether a CPU that was idle had a C-state to leave */
	{PROG(lw_cpu_idle), "cpu_idle", 0, LW_REQ_AUTO, true},
	{PROG(lw_irq_entry), "irq_handler_entry", LW_META_NO_IRQ},
	{PROG(lw_irq_exit), "irq_handler_exit", LW_META_NO_IRQ},
	/* IPIs that hit it while it ran, for their entry cost (x86) */
	{PROG(lw_ipi_call), "call_function_entry", 0, LW_REQ_AUTO, true},
	{PROG(lw_ipi_call_single), "call_function_single_entry", 0, LW_REQ_AUTO, true},
	{PROG(lw_softirq_entry), "softirq_entry", LW_META_NO_SOFTIRQ},
	{PROG(lw_softirq_exit), "softirq_exit", LW_META_NO_SOFTIRQ},
	{PROG(lw_cpu_freq), "cpu_frequency", LW_META_NO_FREQ},
	{PROG(lw_khugepaged_scan), "mm_khugepaged_scan_pmd", LW_META_NO_THP},
	{PROG(lw_collapse), "mm_collapse_huge_page", LW_META_NO_THP},
	{PROG(lw_compact_begin), "mm_compaction_begin", LW_META_NO_COMPACT},
	{PROG(lw_compact_end), "mm_compaction_end", LW_META_NO_COMPACT},
	/* a page fault's entry (x86); its end is a perf event (memory.c) */
	{PROG(lw_fault_user), "page_fault_user", LW_META_NO_MEMORY},
	{PROG(lw_fault_kernel), "page_fault_kernel", LW_META_NO_MEMORY},
	{PROG(lw_reclaim_begin), "mm_vmscan_direct_reclaim_begin", 0, LW_REQ_AUTO, true},
	{PROG(lw_reclaim_end), "mm_vmscan_direct_reclaim_end", 0, LW_REQ_AUTO, true},
	{PROG(lw_memcg_reclaim_begin), "mm_vmscan_memcg_reclaim_begin", 0, LW_REQ_AUTO, true},
	{PROG(lw_memcg_reclaim_end), "mm_vmscan_memcg_reclaim_end", 0, LW_REQ_AUTO, true},
	{PROG(lw_reclaim_scan), "mm_vmscan_lru_shrink_inactive", 0, LW_REQ_AUTO, true},
	/* a huge page allocated in a fault: the rest of it is THP's */
	{PROG(lw_page_alloc), "mm_page_alloc", 0, LW_REQ_AUTO, true},
	{PROG(lw_sys_enter), "sys_enter", 0, LW_REQ_SYSCALL},
	{PROG(lw_sys_exit), "sys_exit", 0, LW_REQ_SYSCALL},
	{PROG(lw_sock_recv), "sock_recv_length", 0, LW_REQ_SOCKET},
	{PROG(lw_sock_send), "sock_send_length", 0, LW_REQ_SOCKET},
	/* a TCP request ends before its reply is queued, not after */
	{PROG(lw_tcp_send), "tcp_sendmsg_locked", 0, LW_REQ_SOCKET, true},
	/* a request starts when its data arrived, not when it is read */
	{PROG(lw_sk_ready), "sk_data_ready", 0, LW_REQ_SOCKET, true},
	/* and includes its data's wait in a receive backlog */
	{PROG(lw_netif_rx), "netif_rx", 0, LW_REQ_SOCKET, true},
	{PROG(lw_netif_recv), "netif_receive_skb", 0, LW_REQ_SOCKET, true},
};

#define NR_TP_PROGS (sizeof(tp_progs) / sizeof(tp_progs[0]))

static struct bpf_program *tp_program(struct latwhy_bpf *s, const struct tp_prog *p)
{
	return *(struct bpf_program **)((char *)s + p->prog);
}

/* Every --skip name must be a tracepoint latwhy uses: a typo must not
 * silently keep a tracepoint attached. */
int lw_tracer_check_skip(const char *list)
{
	char buf[sizeof(((struct lw_trace_conf *)0)->skip)], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < NR_TP_PROGS; i++)
			if (!strcmp(tp_progs[i].tp, name))
				break;
		if (i == NR_TP_PROGS) {
			fprintf(stderr, "latwhy: --skip: '%s' is not a tracepoint latwhy uses\n",
				name);
			return -EINVAL;
		}
	}
	return 0;
}

/* --request auto: the socket layer's tracepoints where the kernel has them,
 * since raw_syscalls puts every syscall of every task on the slow path. */
static enum lw_req_mode resolve_mode(const struct btf *vmlinux, enum lw_req_mode mode)
{
	if (mode == LW_REQ_UPROBE && !lw_caps_uprobes())
		mode = LW_REQ_AUTO;
	if (mode != LW_REQ_AUTO)
		return mode;
	if (lw_probe_tracepoint(vmlinux, "sock_recv_length") &&
	    lw_probe_tracepoint(vmlinux, "sock_send_length"))
		return LW_REQ_SOCKET;
	/* the fallback costs every syscall of every task a program run */
	fprintf(stderr, "latwhy: no sock_recv_length/sock_send_length tracepoints (6.3+): "
			"requests delimited by raw_syscalls (--request syscall)\n");
	return LW_REQ_SYSCALL;
}

/* A program latwhy cannot do without is missing or skipped: why, on stderr. */
static void say_required(const struct tp_prog *p, bool skipped)
{
	if (skipped)
		fprintf(stderr, "latwhy: cannot skip %s: latwhy needs it\n", p->tp);
	else if (p->mode == LW_REQ_SOCKET)
		fprintf(stderr,
			"latwhy: this kernel has no %s tracepoint, which --request "
			"socket needs (6.3+); use --request syscall\n",
			p->tp);
	else
		fprintf(stderr, "latwhy: this kernel has no %s tracepoint, which latwhy needs\n",
			p->tp);
}

/* Switch off the programs of other request modes, of tracepoints this kernel
 * lacks and of those skipped; -EOPNOTSUPP for one latwhy needs. */
static int probe_programs(struct lw_tracer *t, const struct btf *vmlinux)
{
	char missing[256] = "";

	for (size_t i = 0; i < NR_TP_PROGS; i++) {
		const struct tp_prog *p = &tp_progs[i];
		struct bpf_program *prog = tp_program(t->skel, p);
		bool skip = lw_list_has(t->o->skip, p->tp);

		if (p->mode != LW_REQ_AUTO && p->mode != t->mode) {
			bpf_program__set_autoload(prog, false);
			continue;
		}
		if (!skip && lw_probe_tracepoint(vmlinux, p->tp))
			continue;
		if (!p->flag && !p->optional) {
			say_required(p, skip);
			return -EOPNOTSUPP;
		}
		bpf_program__set_autoload(prog, false);
		t->flags |= p->flag;
		if (!skip) /* --skip's are asked for: no news */
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 "%s%s", *missing ? ", " : "", p->tp);
	}
	/* why not_attached lists them: the kernel, not an option (on 6.1:
	 * sk_data_ready; PREEMPT_RT: the THP ones) */
	if (*missing)
		fprintf(stderr, "latwhy: not in this kernel, so not attached: %s\n", missing);
	return 0;
}

/* What the loaded programs do, from which of them load. */
static void probe_rodata(struct lw_tracer *t)
{
	struct latwhy_bpf *s = t->skel;

	if (t->mode != LW_REQ_UPROBE) {
		bpf_program__set_autoload(s->progs.lw_req_entry, false);
		bpf_program__set_autoload(s->progs.lw_req_return, false);
	}
	s->rodata->req_by_conn = t->mode != LW_REQ_UPROBE;
	s->rodata->emit_requests = !t->o->counts_only;
	s->rodata->tcp_send_ends = bpf_program__autoload(s->progs.lw_tcp_send);
	/* then sock_send_length only ends requests on other sockets: attached
	 * when the target reads one (control.c) */
	if (s->rodata->tcp_send_ends)
		bpf_program__set_autoattach(s->progs.lw_sock_send, false);
	s->rodata->idle_state_known = bpf_program__autoload(s->progs.lw_cpu_idle);
	if (s->rodata->idle_state_known)
		s->rodata->idle_poll_states = lw_idle_poll_states("/");
	else
		t->flags |= LW_META_NO_IDLE_STATE;
	s->rodata->arrival_known = bpf_program__autoload(s->progs.lw_sk_ready);
	if (t->mode != LW_REQ_UPROBE && !s->rodata->arrival_known)
		t->flags |= LW_META_NO_ARRIVAL;
	/* the wait is handed to sk_data_ready: without it, or without either
	 * end of the wait, neither end is loaded */
	s->rodata->backlog_known = s->rodata->arrival_known &&
				   bpf_program__autoload(s->progs.lw_netif_rx) &&
				   bpf_program__autoload(s->progs.lw_netif_recv);
	if (!s->rodata->backlog_known) {
		bpf_program__set_autoload(s->progs.lw_netif_rx, false);
		bpf_program__set_autoload(s->progs.lw_netif_recv, false);
		if (s->rodata->arrival_known)
			t->flags |= LW_META_NO_BACKLOG;
	}
}

/*
 * One interrupt's cost beyond its handler (irqcost.h): given with --irq-cost,
 * else measured now (lw_irqcost_measure_here()). Not without the IRQ
 * tracepoints: irq is not measured then at all. Unmeasured, LW_B_IRQ_ENTRY
 * stays empty and says null, not 0.
 */
static void probe_irq_entry(struct lw_tracer *t)
{
	__u64 cost = t->o->irq_cost_ns;
	int err;

	if (t->flags & LW_META_NO_IRQ)
		cost = 0;
	else if (!t->o->irq_cost_set) {
		err = lw_irqcost_measure_here("/", &cost);
		if (err && t->o->verbose)
			fprintf(stderr, "latwhy: interrupt entry cost not measured: %s\n",
				strerror(-err));
	}
	t->skel->rodata->irq_entry_ns = cost;
	if (!cost) { /* nothing to count the IPIs for */
		bpf_program__set_autoload(t->skel->progs.lw_ipi_call, false);
		bpf_program__set_autoload(t->skel->progs.lw_ipi_call_single, false);
	}
}

/*
 * Throttled waits are told apart where the kernel's CFS bandwidth state can
 * be read: the fields bpf/compat.bpf.h's lw_quota_readable() checks, the
 * same CO-RE test, made here so that the META record says so.
 */
static void probe_quota(struct lw_tracer *t, const struct btf *vmlinux)
{
	t->skel->rodata->quota_known = lw_probe_member(vmlinux, "cfs_rq", "throttle_count") &&
				       lw_probe_member(vmlinux, "sched_entity", "parent") &&
				       lw_probe_member(vmlinux, "task_group", "cfs_bandwidth");
	if (!t->skel->rodata->quota_known)
		t->flags |= LW_META_NO_QUOTA;
}

/*
 * Memory management (bpf/memory.bpf.h) is traced where a fault's entry has a
 * tracepoint and its end's perf events open; else none of its programs
 * load. A huge page's allocation is watched only where THP can give one.
 */
static void probe_memory(struct lw_tracer *t)
{
	struct latwhy_bpf *s = t->skel;
	struct bpf_program *progs[] = {
		s->progs.lw_fault_user,		 s->progs.lw_fault_kernel,
		s->progs.lw_fault_min,		 s->progs.lw_fault_maj,
		s->progs.lw_reclaim_begin,	 s->progs.lw_reclaim_end,
		s->progs.lw_memcg_reclaim_begin, s->progs.lw_memcg_reclaim_end,
		s->progs.lw_reclaim_scan,	 s->progs.lw_page_alloc,
	};
	char thp[64] = "";
	FILE *f;

	s->rodata->memory_known = bpf_program__autoload(s->progs.lw_fault_user) &&
				  bpf_program__autoload(s->progs.lw_fault_kernel) &&
				  lw_memory_probe();
	if (!s->rodata->memory_known) {
		for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
			bpf_program__set_autoload(progs[i], false);
		t->flags |= LW_META_NO_MEMORY;
		return;
	}
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f) {
		if (!fgets(thp, sizeof(thp), f))
			thp[0] = 0;
		fclose(f);
	}
	if (!f || strstr(thp, "[never]"))
		bpf_program__set_autoload(s->progs.lw_page_alloc, false);
}

/*
 * serve's always-attached tier (bpf/watch.bpf.h): where requests are
 * delimited at the socket layer, two programs, at tcp_rcv_space_adjust
 * (4.16+, so every kernel with the socket tracepoints) and at
 * inet_sock_set_state (4.16+). Attached apart (lw_tracer_watch_attach()),
 * never by the skeleton, so that the duty cycle's detach leaves it.
 */
static void probe_watch(struct lw_tracer *t, const struct btf *vmlinux)
{
	struct latwhy_bpf *s = t->skel;
	bool ready = lw_probe_tracepoint(vmlinux, "tcp_rcv_space_adjust") &&
		     lw_probe_tracepoint(vmlinux, "inet_sock_set_state");
	struct bpf_program *progs[] = {s->progs.lw_watch_ready, s->progs.lw_watch_close};

	t->watch = t->o->watch && t->mode == LW_REQ_SOCKET && ready;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		bpf_program__set_autoload(progs[i], t->watch);
		bpf_program__set_autoattach(progs[i], false);
	}
	if (t->o->watch && t->mode != LW_REQ_SOCKET)
		fprintf(stderr,
			"latwhy: requests are delimited by %s, not the socket layer: no "
			"always-attached tier, full tracing only on the duty cycle\n",
			t->mode == LW_REQ_UPROBE ? "a uprobe" : "raw_syscalls");
	else if (t->o->watch && !t->watch)
		fputs("latwhy: no tcp_rcv_space_adjust tracepoint: no always-attached tier, "
		      "full tracing only on the duty cycle\n",
		      stderr);
}

/* The steal time the kernel accounted so far over all CPUs: /proc/stat's
 * eighth column, in USER_HZ ticks; -1 when unreadable. */
static long long proc_stat_steal(void)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	return n == 8 ? (long long)v[7] : -1;
}

/*
 * Steal time is read where the guest has a steal clock the scheduler takes
 * off its runqueues' clocks (compat.bpf.h's lw_steal_ns()): the fields are
 * in BTF, and either the host offers KVM's steal clock (CPUID 0x40000001's
 * KVM_FEATURE_STEAL_TIME, bit 5, behind the "KVMKVMKVM" signature) or the
 * kernel has accounted steal already (/proc/stat). Elsewhere in a VM the
 * host's time stays in run, unseen, and META says so.
 */
static void probe_steal(struct lw_tracer *t, const struct btf *vmlinux)
{
	bool guest = false, clock = false;
#if defined(__x86_64__)
	unsigned int a, b, c, d;

	if (__get_cpuid(1, &a, &b, &c, &d))
		guest = c & (1u << 31);
	if (guest) {
		__cpuid(0x40000000, a, b, c, d);
		if (b == 0x4b4d564b && c == 0x564b4d56 && d == 0x4d && a >= 0x40000001) {
			__cpuid(0x40000001, a, b, c, d);
			clock = a & (1u << 5);
		}
	}
#endif
	if (!clock)
		clock = proc_stat_steal() > 0;
	t->skel->rodata->steal_known = clock &&
				       lw_probe_member(vmlinux, "rq", "prev_steal_time_rq") &&
				       lw_probe_member(vmlinux, "cfs_rq", "rq") &&
				       lw_probe_member(vmlinux, "sched_entity", "cfs_rq");
	if (!t->skel->rodata->steal_known)
		t->flags |= LW_META_NO_STEAL;
	if (guest)
		t->flags |= LW_META_GUEST;
}

int lw_tracer_probe(struct lw_tracer *t)
{
	struct btf *vmlinux;
	int err;

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		err = -errno;
		fprintf(stderr, "latwhy: cannot read kernel BTF: %s\n", strerror(-err));
		return err;
	}
	err = lw_probe_kernel_floor(vmlinux);
	if (err) {
		btf__free(vmlinux);
		return err;
	}
	t->mode = resolve_mode(vmlinux, t->o->req_mode);
	err = probe_programs(t, vmlinux);
	if (!err) {
		probe_quota(t, vmlinux);
		probe_watch(t, vmlinux);
		probe_steal(t, vmlinux);
	}
	btf__free(vmlinux);
	if (err)
		return err;
	probe_rodata(t);
	probe_irq_entry(t);
	probe_memory(t);
	return 0;
}
