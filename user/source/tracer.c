// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tracer.c - the live tracer: skeleton lifecycle and the once-a-second loop.
 *
 * open -> configure (.rodata) -> probe the kernel, switch programs off that
 * it cannot attach -> load -> seed CPU clocks -> attach -> poll. Slow-request
 * records arrive on the ring buffer; the evidence maps are read once per
 * interval and fed to the engine as cumulative snapshots.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "engine/engine.h"
#include "advice/explain.h"
#include "source/freq.h"
#include "source/irqcost.h"
#include "node/node.h"
#include "cli/opts.h"
#include "source/place.h"
#include "source/probe.h"
#include "output/render.h"
#include "source/tracer.h"

struct lw_tracer {
	const struct lw_opts *o;
	struct latwhy_bpf *skel;
	struct ring_buffer *rb;
	struct lw_engine *eng;
	struct lw_freq freq;
	struct lw_render *out;
	int nr_cpus;
	__u32 flags;
	enum lw_req_mode mode; /* resolved: never LW_REQ_AUTO */
	__u64 start_ns;
	__u64 last_tick_ns;
	__u64 ticks;
	bool sock_send_tried;  /* see tracer_sock_send() */
	__u64 backlog_seen_ns; /* lw_netif_rx last stamped (tracer_backlog()) */
	bool backlog_lost;     /* lw_netif_recv could not be attached again */
	__u64 hist_count;      /* requests counted at the previous tick */
	__u64 slow_in_tick;
	__u64 clock_events;	    /* cpu_frequency events, summed at the last snapshot */
	__u64 *hist_buf;	    /* per-CPU values of lat_hist */
	struct lw_count *count_buf; /* per-CPU values of irq_ev, softirq_ev */
	bool target_exited;
	char comm[LW_COMM_LEN];
	struct lw_place place; /* where latwhy runs, and at which nice value */
	__u64 dropped_seen;    /* records dropped at the previous tick */
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	stop_flag = 1;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct lw_tracer *t = ctx;
	const struct lw_request *r = data;

	if (lw_engine_feed(t->eng, data, len))
		return 0; /* short or unknown record: skip it, keep reading */
	t->slow_in_tick++;
	if (t->o->json)
		lw_render_request_json(t->out, r);
	return 0;
}

struct tp_prog {
	struct bpf_program *prog;
	const char *tp;
	__u32 flag;	       /* cause lost without it; 0: required */
	enum lw_req_mode mode; /* only for this request mode; AUTO: all */
	bool optional;	       /* a better source of what another gives */
};

/* Every --skip name must be a tracepoint latwhy uses: a typo must not
 * silently keep a tracepoint attached. */
static int check_skip_list(const char *list, const struct tp_prog *progs, size_t n)
{
	char buf[sizeof(((struct lw_opts *)0)->skip)], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < n; i++)
			if (!strcmp(progs[i].tp, name))
				break;
		if (i == n) {
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
	if (mode != LW_REQ_AUTO)
		return mode;
	return lw_probe_tracepoint(vmlinux, "sock_recv_length") &&
			       lw_probe_tracepoint(vmlinux, "sock_send_length")
		       ? LW_REQ_SOCKET
		       : LW_REQ_SYSCALL;
}

/* Off the target's CPUs once the options are known good and before
 * any thread starts: the interrupt-cost probe's thread and every wake-up of
 * the poller stay there. */
static void tracer_place(struct lw_tracer *t)
{
	struct lw_place *p = &t->place;
	char tc[256], sc[256];
	int err;

	err = lw_place_self(t->o->pid, p);
	if (err) {
		fprintf(stderr, "latwhy: cannot keep off the target's CPUs: %s\n", strerror(-err));
		return;
	}
	lw_cpuset_format(&p->target, tc, sizeof(tc));
	lw_cpuset_format(&p->self, sc, sizeof(sc));
	if (p->shared)
		fprintf(stderr,
			"latwhy: no CPU outside the target's (%s): tracing from them at nice %d\n",
			tc, LW_PLACE_NICE);
	else if (t->o->verbose)
		fprintf(stderr, "latwhy: running on CPU %s, off the target's %s\n", sc, tc);
}

/* Sharing the target's CPUs, latwhy traces at the lowest priority that keeps
 * up: a tick that found records dropped, or came a whole interval late,
 * raises it a step. */
static void tracer_keep_up(struct lw_tracer *t, __u64 elapsed)
{
	__u64 dropped = t->skel->bss->dropped;
	bool behind = dropped > t->dropped_seen || elapsed > 2 * t->o->interval_ns;

	t->dropped_seen = dropped;
	if (lw_place_keep_up(&t->place, behind))
		fprintf(stderr, "latwhy: falling behind on the target's CPUs: now at nice %d\n",
			t->place.nice);
}

/*
 * One interrupt's cost beyond its handler (irqcost.h): given with --irq-cost,
 * else measured now (lw_irqcost_measure_here()). Not without the IRQ
 * tracepoints: irq is not measured then at all. Unmeasured, LW_B_IRQ_ENTRY
 * stays empty and says null, not 0.
 */
static void tracer_irq_entry(struct lw_tracer *t)
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

/* Which programs this kernel can run: a tracepoint missing from BTF would
 * fail the whole load, so its program is switched off and the cause it
 * feeds is reported as unavailable. */
static int tracer_probe(struct lw_tracer *t)
{
	struct latwhy_bpf *s = t->skel;
	const struct tp_prog progs[] = {
		{s->progs.lw_sched_switch, "sched_switch"},
		{s->progs.lw_sched_wakeup, "sched_wakeup"},
		/* a wait starts where the wake-up began, before the CPU left idle */
		{s->progs.lw_sched_waking, "sched_waking", 0, LW_REQ_AUTO, true},
		/* whether a CPU that was idle had a C-state to leave */
		{s->progs.lw_cpu_idle, "cpu_idle", 0, LW_REQ_AUTO, true},
		{s->progs.lw_irq_entry, "irq_handler_entry", LW_META_NO_IRQ},
		{s->progs.lw_irq_exit, "irq_handler_exit", LW_META_NO_IRQ},
		/* IPIs that hit it while it ran, for their entry cost (x86) */
		{s->progs.lw_ipi_call, "call_function_entry", 0, LW_REQ_AUTO, true},
		{s->progs.lw_ipi_call_single, "call_function_single_entry", 0, LW_REQ_AUTO, true},
		{s->progs.lw_softirq_entry, "softirq_entry", LW_META_NO_SOFTIRQ},
		{s->progs.lw_softirq_exit, "softirq_exit", LW_META_NO_SOFTIRQ},
		{s->progs.lw_cpu_freq, "cpu_frequency", LW_META_NO_FREQ},
		{s->progs.lw_khugepaged_scan, "mm_khugepaged_scan_pmd", LW_META_NO_THP},
		{s->progs.lw_collapse, "mm_collapse_huge_page", LW_META_NO_THP},
		{s->progs.lw_compact_begin, "mm_compaction_begin", LW_META_NO_COMPACT},
		{s->progs.lw_compact_end, "mm_compaction_end", LW_META_NO_COMPACT},
		{s->progs.lw_sys_enter, "sys_enter", 0, LW_REQ_SYSCALL},
		{s->progs.lw_sys_exit, "sys_exit", 0, LW_REQ_SYSCALL},
		{s->progs.lw_sock_recv, "sock_recv_length", 0, LW_REQ_SOCKET},
		{s->progs.lw_sock_send, "sock_send_length", 0, LW_REQ_SOCKET},
		/* a TCP request ends before its reply is queued, not after */
		{s->progs.lw_tcp_send, "tcp_sendmsg_locked", 0, LW_REQ_SOCKET, true},
		/* a request starts when its data arrived, not when it is read */
		{s->progs.lw_sk_ready, "sk_data_ready", 0, LW_REQ_SOCKET, true},
		/* and includes its data's wait in a receive backlog */
		{s->progs.lw_netif_rx, "netif_rx", 0, LW_REQ_SOCKET, true},
		{s->progs.lw_netif_recv, "netif_receive_skb", 0, LW_REQ_SOCKET, true},
	};
	struct btf *vmlinux;
	int err = 0;

	err = check_skip_list(t->o->skip, progs, sizeof(progs) / sizeof(progs[0]));
	if (err)
		return err;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		fprintf(stderr, "latwhy: cannot read kernel BTF: %s\n", strerror(errno));
		return -errno;
	}
	t->mode = resolve_mode(vmlinux, t->o->req_mode);
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		const struct tp_prog *p = &progs[i];
		bool skip = lw_list_has(t->o->skip, p->tp);

		if (p->mode != LW_REQ_AUTO && p->mode != t->mode) {
			bpf_program__set_autoload(p->prog, false);
			continue;
		}
		if (!skip && lw_probe_tracepoint(vmlinux, p->tp))
			continue;
		if (!p->flag && !p->optional) {
			if (skip)
				fprintf(stderr, "latwhy: cannot skip %s: latwhy needs it\n", p->tp);
			else if (p->mode == LW_REQ_SOCKET)
				fprintf(stderr,
					"latwhy: this kernel has no %s tracepoint, which --request "
					"socket needs (6.3+); use --request syscall\n",
					p->tp);
			else
				fprintf(stderr,
					"latwhy: this kernel has no %s tracepoint, which latwhy "
					"needs\n",
					p->tp);
			err = -EOPNOTSUPP;
			goto cleanup;
		}
		bpf_program__set_autoload(p->prog, false);
		t->flags |= p->flag;
	}
	if (t->mode != LW_REQ_UPROBE) {
		bpf_program__set_autoload(s->progs.lw_req_entry, false);
		bpf_program__set_autoload(s->progs.lw_req_return, false);
	}
	t->skel->rodata->req_by_conn = t->mode != LW_REQ_UPROBE;
	t->skel->rodata->tcp_send_ends = bpf_program__autoload(s->progs.lw_tcp_send);
	/* then sock_send_length only ends requests on other sockets: attached
	 * when the target reads one (tracer_sock_send()) */
	if (t->skel->rodata->tcp_send_ends)
		bpf_program__set_autoattach(s->progs.lw_sock_send, false);
	t->skel->rodata->idle_state_known = bpf_program__autoload(s->progs.lw_cpu_idle);
	if (t->skel->rodata->idle_state_known)
		t->skel->rodata->idle_poll_states = lw_idle_poll_states("/");
	else
		t->flags |= LW_META_NO_IDLE_STATE;
	t->skel->rodata->arrival_known = bpf_program__autoload(s->progs.lw_sk_ready);
	if (t->mode != LW_REQ_UPROBE && !t->skel->rodata->arrival_known)
		t->flags |= LW_META_NO_ARRIVAL;
	/* the wait is handed to sk_data_ready: without it, or without either
	 * end of the wait, neither end is loaded */
	t->skel->rodata->backlog_known = t->skel->rodata->arrival_known &&
					 bpf_program__autoload(s->progs.lw_netif_rx) &&
					 bpf_program__autoload(s->progs.lw_netif_recv);
	if (!t->skel->rodata->backlog_known) {
		bpf_program__set_autoload(s->progs.lw_netif_rx, false);
		bpf_program__set_autoload(s->progs.lw_netif_recv, false);
		if (t->skel->rodata->arrival_known)
			t->flags |= LW_META_NO_BACKLOG;
	}
	tracer_place(t);
	tracer_irq_entry(t);
cleanup:
	btf__free(vmlinux);
	return err;
}

static void inject_freq(void *ctx, int cpu, __u32 khz)
{
	struct lw_tracer *t = ctx;
	__u64 args[2] = {khz, (__u64)cpu};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

	bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.lw_cpu_freq), &opts);
}

/* Seed every CPU's clock and reference before attaching: the BPF side only
 * hears about changes. */
static int tracer_seed_cpus(struct lw_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.cpus);
	__u32 ksd[LW_MAX_CPUS] = {}, ksd_max = 0;

	/* ksoftirqd threads are made once per CPU (smpboot: parked, not
	 * ended, when a CPU goes offline), so once is enough */
	lw_probe_ksoftirqd(ksd, t->nr_cpus < LW_MAX_CPUS ? t->nr_cpus : LW_MAX_CPUS);
	for (int c = 0; c < t->nr_cpus && c < LW_MAX_CPUS; c++) {
		struct lw_cpu_state cs = {
			.khz = t->freq.cur_khz[c],
			.ref_khz = t->freq.ref_khz[c],
			.freq_ts = now_ns(),
			.ksd_pid = ksd[c],
		};
		__u32 key = c;

		if (bpf_map_update_elem(fd, &key, &cs, BPF_ANY))
			return -errno;
		ksd_max = ksd[c] > ksd_max ? ksd[c] : ksd_max;
	}
	t->skel->bss->ksd_pid_max = ksd_max;
	return 0;
}

static int tracer_attach(struct lw_tracer *t)
{
	int err;

	/* Programs switched off by tracer_probe() are skipped, and the bare
	 * SEC("uprobe") ones are not auto-attachable: they are attached below. */
	err = latwhy_bpf__attach(t->skel);
	if (err) {
		fprintf(stderr, "latwhy: cannot attach BPF programs: %s\n", strerror(-err));
		return err;
	}
	t->skel->bss->sock_send_on = bpf_program__autoload(t->skel->progs.lw_sock_send) &&
				     bpf_program__autoattach(t->skel->progs.lw_sock_send);
	if (t->o->req_mode == LW_REQ_UPROBE) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = t->o->uprobe_sym, .retprobe = true);

		/* Return probe first: a call in flight when the entry probe
		 * lands would otherwise leave its nesting depth at 1 forever. */
		t->skel->links.lw_req_return = bpf_program__attach_uprobe_opts(
			t->skel->progs.lw_req_return, t->o->pid, t->o->uprobe_bin, 0, &uo);
		if (!t->skel->links.lw_req_return)
			goto uprobe_err;
		uo.retprobe = false;
		t->skel->links.lw_req_entry = bpf_program__attach_uprobe_opts(
			t->skel->progs.lw_req_entry, t->o->pid, t->o->uprobe_bin, 0, &uo);
		if (!t->skel->links.lw_req_entry)
			goto uprobe_err;
	}
	return 0;
uprobe_err:
	err = -errno;
	fprintf(stderr, "latwhy: cannot attach uprobe %s:%s: %s\n", t->o->uprobe_bin,
		t->o->uprobe_sym, strerror(-err));
	return err;
}

/* Sum the per-CPU histograms; returns the request count. */
static __u64 read_hist(struct lw_tracer *t, __u64 *b)
{
	size_t per = bpf_map__value_size(t->skel->maps.lat_hist);
	int ncpu = libbpf_num_possible_cpus();
	__u32 zero = 0;
	__u64 count = 0;

	memset(b, 0, LW_HIST_BUCKETS * sizeof(*b));
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.lat_hist), &zero, t->hist_buf))
		return 0;
	for (int c = 0; c < ncpu; c++) {
		const __u64 *h = (const __u64 *)((const char *)t->hist_buf + c * per);

		for (int i = 0; i < LW_HIST_BUCKETS; i++) {
			b[i] += h[i];
			count += h[i];
		}
	}
	return count;
}

static void feed_irq(struct lw_tracer *t, __u32 irq, __u32 cpu, const struct lw_count *c)
{
	struct lw_irq_rec r = {.type = LW_REC_IRQ, .irq = irq, .cpu = cpu, .ns = c->ns};

	r.count = c->count;
	bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.irq_names), &irq, r.name);
	r.name[sizeof(r.name) - 1] = '\0';
	lw_engine_feed(t->eng, &r, sizeof(r));
}

/* IRQs below LW_IRQ_FAST: every IRQ seen has a name, so the names map lists
 * the rows worth reading. The rest are keyed by (irq, cpu) in irq_ev_hi. */
static void snapshot_irqs(struct lw_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.irq_ev), nfd = bpf_map__fd(t->skel->maps.irq_names);
	struct lw_irq_key key, *kprev = NULL;
	__u32 irq, *prev = NULL;
	struct lw_count c;

	while (!bpf_map_get_next_key(nfd, prev, &irq)) {
		prev = &irq;
		if (irq >= LW_IRQ_FAST || bpf_map_lookup_elem(fd, &irq, t->count_buf))
			continue;
		for (int cpu = 0; cpu < t->nr_cpus; cpu++)
			if (t->count_buf[cpu].count || t->count_buf[cpu].ns)
				feed_irq(t, irq, cpu, &t->count_buf[cpu]);
	}
	fd = bpf_map__fd(t->skel->maps.irq_ev_hi);
	while (!bpf_map_get_next_key(fd, kprev, &key)) {
		kprev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &c))
			feed_irq(t, key.irq, key.cpu, &c);
	}
	fd = bpf_map__fd(t->skel->maps.softirq_ev);
	for (__u32 vec = 0; vec < LW_SOFTIRQ_ROWS; vec++) {
		if (bpf_map_lookup_elem(fd, &vec, t->count_buf))
			continue;
		for (int cpu = 0; cpu < t->nr_cpus; cpu++) {
			struct lw_softirq_rec r = {.type = LW_REC_SOFTIRQ, .vec = vec, .cpu = cpu};

			if (!t->count_buf[cpu].count)
				continue;
			r.ns = t->count_buf[cpu].ns;
			r.count = t->count_buf[cpu].count;
			lw_engine_feed(t->eng, &r, sizeof(r));
		}
	}
}

static void snapshot_preempt(struct lw_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.preempt_ev);
	__u32 key, *prev = NULL;
	struct lw_preempt_val v;

	while (!bpf_map_get_next_key(fd, prev, &key)) {
		struct lw_preempt_rec r = {.type = LW_REC_PREEMPT, .pid = key};

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		memcpy(r.comm, v.comm, sizeof(r.comm));
		r.comm[sizeof(r.comm) - 1] = '\0';
		r.ns = v.ns;
		r.count = v.count;
		r.tgid = v.tgid;
		lw_engine_feed(t->eng, &r, sizeof(r));
	}
}

static void snapshot_cpus(struct lw_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.cpus);

	t->clock_events = 0;
	for (int c = 0; c < t->nr_cpus && c < LW_MAX_CPUS; c++) {
		struct lw_cpu_rec r = {.type = LW_REC_CPU, .cpu = c};
		struct lw_cpu_state cs;
		__u32 key = c;

		if (bpf_map_lookup_elem(fd, &key, &cs))
			continue;
		r.khz = cs.khz;
		r.ref_khz = cs.ref_khz;
		r.events = cs.freq_events;
		t->clock_events += cs.freq_events;
		lw_engine_feed(t->eng, &r, sizeof(r));
	}
}

static void snapshot(struct lw_tracer *t)
{
	struct lw_thp_rec thp = {.type = LW_REC_THP};

	snapshot_irqs(t);
	snapshot_preempt(t);
	snapshot_cpus(t);
	thp.s = t->skel->bss->thp;
	lw_engine_feed(t->eng, &thp, sizeof(thp));
}

/* Uses the clock-event count of the last snapshot_cpus(). */
static enum lw_freq_source freq_source(struct lw_tracer *t)
{
	if (t->freq.source != LW_FREQ_NONE)
		return t->freq.source;
	/* No driver, but clock events arrived (the lab injects them). */
	return t->clock_events ? LW_FREQ_TRACEPOINT : LW_FREQ_NONE;
}

static void tracer_meta(struct lw_tracer *t, struct lw_meta_rec *m)
{
	memset(m, 0, sizeof(*m));
	m->type = LW_REC_META;
	m->pid = t->o->pid;
	memcpy(m->comm, t->comm, sizeof(m->comm));
	m->flags = t->flags | (t->target_exited ? LW_META_TARGET_EXITED : 0);
	m->freq_source = freq_source(t);
	m->nr_cpus = t->nr_cpus;
	m->start_ns = t->start_ns;
	m->duration_ns = now_ns() - t->start_ns;
	m->threshold_ns = t->o->slow_ns ? t->o->slow_ns : LW_THRESH_UNKNOWN;
	m->dropped = t->skel->bss->dropped;
	m->incomplete = t->skel->bss->incomplete;
	m->requests = t->hist_count;
	m->req_mode = t->mode;
	m->irq_entry_ns = t->skel->rodata->irq_entry_ns;
	m->untracked = t->skel->bss->untracked;
	m->handoffs = t->skel->bss->handoffs;
	m->tracer_tgid = getpid();
}

/* khugepaged is stopped and started again when THP is switched off and on:
 * its pid is looked up at start and again every LW_THP_REFRESH ticks. */
#define LW_THP_REFRESH 10

static void tracer_thp_pids(struct lw_tracer *t)
{
	__u32 pids[LW_THP_PIDS] = {}, max = 0;

	lw_probe_thp_kthreads(pids, LW_THP_PIDS);
	memcpy(t->skel->bss->thp_pids, pids, sizeof(pids));
	for (int i = 0; i < LW_THP_PIDS; i++)
		max = pids[i] > max ? pids[i] : max;
	t->skel->bss->thp_pid_max = max;
}

/*
 * Which TCP sockets carry requests, and whether one thread's request may be
 * answered by another: the listening ports of the target's network
 * namespace (every LW_THP_REFRESH ticks: a table walk, not per second on a
 * host with many connections) and its thread count (every tick).
 */
static void tracer_conns(struct lw_tracer *t, bool ports)
{
	struct latwhy_bpf *s = t->skel;
	char state;
	int n;

	if (ports) {
		__u64 bits[sizeof(s->bss->listen_ports) / sizeof(__u64)] = {};

		n = lw_probe_listen_ports(t->o->pid, bits);
		/* no listener seen: every TCP read may be a request, as before */
		if (n > 0)
			memcpy(s->bss->listen_ports, bits, sizeof(bits));
		s->bss->listen_known = n > 0;
	}
	/* one read of /proc/PID/stat a tick: the thread count, and whether
	 * the target is still there (tracer_loop() stops when it is not) */
	if (lw_probe_stat(t->o->pid, NULL, 0, &state, &n) || state == 'Z' || state == 'X') {
		t->target_exited = true;
		return;
	}
	if (n > 0)
		s->bss->handoff_watch = n > 1;
}

/* A program attached after the start; NULL, and said on stderr with what is
 * lost, when it cannot be. */
static struct bpf_link *attach_late(struct bpf_program *p, const char *tp, const char *lost)
{
	struct bpf_link *l = bpf_program__attach(p);

	if (!l)
		fprintf(stderr, "latwhy: cannot attach %s (%s): %s\n", tp, strerror(errno), lost);
	return l;
}

/* The target read a non-TCP socket: from now on its requests end at
 * sock_send_length too. Tried once; without it such reads stay untraced. */
static void tracer_sock_send(struct lw_tracer *t)
{
	struct latwhy_bpf *s = t->skel;

	if (s->bss->sock_send_on || !s->bss->non_tcp_seen || t->sock_send_tried ||
	    !bpf_program__autoload(s->progs.lw_sock_send))
		return;
	t->sock_send_tried = true;
	s->links.lw_sock_send = attach_late(s->progs.lw_sock_send, "sock_send_length",
					    "requests on non-TCP sockets are not traced");
	if (s->links.lw_sock_send)
		s->bss->sock_send_on = true;
}

/*
 * lw_netif_recv runs for every packet the host receives, a NIC's included,
 * but times only segments lw_netif_rx stamped: those a local peer (loopback,
 * veth, tun) sent to a listening port of the target's. A target without such
 * peers for LW_BACKLOG_IDLE_NS has it detached, and attached again at the
 * first tick after a stamp: the waits of that tick's segments are not timed.
 */
#define LW_BACKLOG_IDLE_NS (10ULL * 1000000000ULL)

static void tracer_backlog(struct lw_tracer *t, __u64 now)
{
	struct latwhy_bpf *s = t->skel;

	if (!s->rodata->backlog_known || t->backlog_lost)
		return;
	if (s->bss->backlog_seen) {
		s->bss->backlog_seen = 0;
		t->backlog_seen_ns = now;
		if (s->links.lw_netif_recv)
			return;
		s->links.lw_netif_recv =
			attach_late(s->progs.lw_netif_recv, "netif_receive_skb again",
				    "receive backlog waits are not timed from now on");
		if (!s->links.lw_netif_recv) {
			t->backlog_lost = true;
			t->flags |= LW_META_NO_BACKLOG; /* the summary says so */
		}
		return;
	}
	if (s->links.lw_netif_recv && now - t->backlog_seen_ns >= LW_BACKLOG_IDLE_NS) {
		bpf_link__destroy(s->links.lw_netif_recv);
		s->links.lw_netif_recv = NULL;
	}
}

/* One interval: histogram, threshold, snapshots; the live view if live. */
static void tracer_tick(struct lw_tracer *t, bool live)
{
	struct lw_meta_rec m;
	__u64 b[LW_HIST_BUCKETS];
	__u64 count = read_hist(t, b);
	struct lw_tick_rec tick = {.type = LW_REC_TICK, .ts_ns = now_ns()};
	__u64 elapsed = tick.ts_ns - (t->last_tick_ns ? t->last_tick_ns : t->start_ns);

	t->last_tick_ns = tick.ts_ns;
	tracer_keep_up(t, elapsed);
	if (++t->ticks % LW_THP_REFRESH == 0)
		tracer_thp_pids(t);
	tracer_conns(t, t->ticks % LW_THP_REFRESH == 0);
	tracer_sock_send(t);
	tracer_backlog(t, tick.ts_ns);
	tick.requests = count - t->hist_count;
	t->hist_count = count;
	tick.slow = t->slow_in_tick;
	t->slow_in_tick = 0;
	tick.p50_ns = lw_hist_quantile(b, count, 0.50);
	tick.p99_ns = lw_hist_quantile(b, count, 0.99);
	/* Running p99 needs a few requests before it means anything. */
	if (!t->o->slow_ns && count >= 20)
		t->skel->data->slow_thresh_ns = tick.p99_ns;
	tick.threshold_ns = t->skel->data->slow_thresh_ns;
	lw_engine_feed(t->eng, &tick, sizeof(tick));
	snapshot(t);
	tracer_meta(t, &m); /* a cumulative snapshot like the others */
	lw_engine_feed(t->eng, &m, sizeof(m));
	if (live && !t->o->json && !t->o->quiet) {
		struct lw_summary s;

		lw_engine_summarize(t->eng, &s);
		lw_render_live(t->out, &s, &tick, elapsed);
	}
}

static void tracer_finish(struct lw_tracer *t)
{
	ring_buffer__consume(t->rb);
	tracer_tick(t, false); /* last snapshot, META included */
}

static int tracer_loop(struct lw_tracer *t)
{
	__u64 next_tick = t->start_ns + t->o->interval_ns;
	__u64 end = t->o->duration_ns ? t->start_ns + t->o->duration_ns : 0;
	__u64 next_freq = t->start_ns;

	while (!stop_flag) {
		__u64 now;
		int err = ring_buffer__poll(t->rb, 100);

		/* records are submitted without a wake-up: drain on the timeout */
		if (err >= 0)
			err = ring_buffer__consume(t->rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "latwhy: ring buffer: %s\n", strerror(-err));
			return err;
		}
		now = now_ns();
		if (now >= next_freq) {
			lw_freq_sample(&t->freq, inject_freq, t);
			next_freq = now + 100000000ULL;
		}
		if (now >= next_tick) {
			tracer_tick(t, true);
			next_tick += t->o->interval_ns;
			if (t->target_exited) /* seen by tracer_conns() */
				break;
		}
		if (end && now >= end)
			break;
	}
	return 0;
}

/* Records and maps are read with latwhy.h's layouts: an object built against
 * another version of them is refused before load. */
static int tracer_check_abi(const struct latwhy_bpf *skel)
{
	__u32 abi = skel->rodata->lw_abi_version;

	if (abi == LW_ABI_VERSION)
		return 0;
	fprintf(stderr, "latwhy: BPF object ABI %u, latwhy expects %u\n", abi, LW_ABI_VERSION);
	return -EPROTO;
}

static int tracer_open(struct lw_tracer *t)
{
	int err;

	t->nr_cpus = libbpf_num_possible_cpus();
	if (t->nr_cpus <= 0)
		return t->nr_cpus ? t->nr_cpus : -EINVAL;
	t->skel = latwhy_bpf__open();
	if (!t->skel) {
		err = -errno;
		fprintf(stderr, "latwhy: cannot open BPF object: %s\n", strerror(-err));
		return err;
	}
	err = tracer_check_abi(t->skel);
	if (err)
		return err;
	t->skel->rodata->targ_tgid = t->o->pid;
	err = tracer_probe(t);
	if (err)
		return err;
	err = latwhy_bpf__load(t->skel);
	if (err) {
		fprintf(stderr,
			"latwhy: cannot load BPF programs: %s (run with -v for the verifier log)\n",
			strerror(-err));
		return err;
	}
	err = lw_freq_init(&t->freq, "/", t->nr_cpus, t->o->ref_khz);
	if (err)
		return err;
	err = tracer_seed_cpus(t);
	if (err) {
		fprintf(stderr, "latwhy: cannot seed CPU clocks: %s\n", strerror(-err));
		return err;
	}
	t->skel->data->slow_thresh_ns = t->o->slow_ns ? t->o->slow_ns : LW_THRESH_UNKNOWN;
	tracer_thp_pids(t);
	tracer_conns(t, true);
	err = tracer_attach(t);
	if (err)
		return err;
	t->skel->bss->armed = true;
	err = lw_place_yield(&t->place);
	if (err)
		fprintf(stderr, "latwhy: cannot lower its priority: %s\n", strerror(-err));
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_record, t, NULL);
	if (!t->rb) {
		err = -errno;
		fprintf(stderr, "latwhy: cannot open ring buffer: %s\n", strerror(-err));
		return err;
	}
	t->hist_buf = calloc(t->nr_cpus, bpf_map__value_size(t->skel->maps.lat_hist));
	t->count_buf = calloc(t->nr_cpus, sizeof(*t->count_buf));
	if (!t->hist_buf || !t->count_buf)
		return -ENOMEM;
	return 0;
}

int lw_trace_run(const struct lw_opts *o)
{
	struct lw_tracer t = {.o = o};
	struct lw_findings fs = {};
	struct lw_summary s;
	int err, ret = 1;

	verbose_libbpf = o->verbose;
	libbpf_set_print(libbpf_print);
	err = lw_probe_target(o->pid, t.comm, sizeof(t.comm));
	if (err)
		return 1;
	err = lw_probe_privileges();
	if (err)
		return 1;
	t.eng = lw_engine_new();
	t.out = lw_render_new(stdout, o->json);
	if (!t.eng || !t.out) {
		fprintf(stderr, "latwhy: out of memory\n");
		goto cleanup;
	}
	err = tracer_open(&t);
	if (err) {
		if (err == -EINVAL)
			ret = 2; /* a bad --skip list is a usage error */
		goto cleanup;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t.start_ns = now_ns();
	t.backlog_seen_ns = t.start_ns;
	lw_render_start(t.out, o->pid, t.comm, t.flags, o->slow_ns);
	err = tracer_loop(&t);
	if (err)
		goto cleanup;
	tracer_finish(&t);
	lw_engine_summarize(t.eng, &s);
	err = lw_explain(&s, "/", t.target_exited ? 0 : o->pid, &fs);
	if (err)
		fprintf(stderr, "latwhy: cannot read the node's settings (%s): no findings\n",
			strerror(-err));
	lw_render_summary(t.out, &s, &fs);
	lw_findings_free(&fs);
	ret = 0;
cleanup:
	ring_buffer__free(t.rb);
	latwhy_bpf__destroy(t.skel);
	lw_freq_close(&t.freq);
	lw_render_free(t.out);
	lw_engine_free(t.eng);
	free(t.hist_buf);
	free(t.count_buf);
	return ret;
}
