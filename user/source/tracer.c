// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tracer.c - the live record source: skeleton lifecycle and the poll loop.
 *
 * open -> configure (.rodata) -> probe the kernel, switch programs off that
 * it cannot attach (programs.c) -> load -> seed CPU clocks -> attach -> poll.
 * Slow-request records arrive on the ring buffer; once per interval the maps
 * are read as cumulative snapshots (snapshot.c) and the programs adjusted
 * (control.c). Every record goes to the sink.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "engine/engine.h" /* lw_hist_quantile() */
#include "source/caps.h"
#include "node/memory.h"
#include "source/faultcost.h"
#include "source/tracer_int.h"
#include "source/probe.h"
#include "source/tracer.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	stop_flag = 1;
}

__u64 lw_now_ns(void)
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

void lw_tracer_emit(struct lw_tracer *t, const void *rec, size_t len)
{
	if (lw_sink_record(&t->sink, rec, len) == -ECANCELED)
		t->cancelled = true;
}

/* A slow request: straight to the sink, which decides what to keep. */
static int on_record(void *ctx, void *data, size_t len)
{
	struct lw_tracer *t = ctx;

	t->slow_in_tick++;
	lw_tracer_emit(t, data, len);
	return 0;
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
			.freq_ts = lw_now_ns(),
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

int lw_tracer_add_tgid(struct lw_tracer *t, __u32 tgid, __u32 slot)
{
	__u32 bit = tgid % LW_TGID_BITS;

	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.targ_tgids), &tgid, &slot, BPF_ANY))
		return -errno;
	/* after the entry: the BPF side looks up only a tgid whose bit is set */
	__atomic_fetch_or(&t->skel->bss->targ_tgid_bits[bit / 64], 1ULL << (bit % 64),
			  __ATOMIC_RELEASE);
	return 0;
}

/* One -p process: its uprobe only; else in every process, which the BPF
 * filter sorts (a target's processes come and go). */
static int uprobe_pid(const struct lw_tracer *t)
{
	return t->o->pid ? t->o->pid : -1;
}

int lw_tracer_attach(struct lw_tracer *t)
{
	int err;

	/* Programs switched off by lw_tracer_probe() are skipped, and the bare
	 * SEC("uprobe") ones are not auto-attachable: they are attached below. */
	err = latwhy_bpf__attach(t->skel);
	if (err) {
		fprintf(stderr, "latwhy: cannot attach BPF programs: %s\n", strerror(-err));
		return err;
	}
	err = lw_memory_attach(t);
	if (err)
		return err;
	if (!t->fault_cost_tried && t->skel->rodata->memory_known) {
		__u64 cost;
		int n;

		/* kswapd's CPU time from here, for the snapshots' evidence */
		t->kswapd_based = !lw_kswapd_ns("/", &t->kswapd_base, &n);
		t->fault_cost_tried = true;
		err = lw_faultcost_measure(t, &cost);
		if (err && t->o->verbose)
			fprintf(stderr, "latwhy: page-fault entry cost not measured: %s\n",
				strerror(-err));
		else if (t->o->verbose)
			fprintf(stderr,
				"latwhy: a page fault costs %llu ns beyond its traced span\n",
				(unsigned long long)cost);
	}
	t->skel->bss->sock_send_on = bpf_program__autoload(t->skel->progs.lw_sock_send) &&
				     bpf_program__autoattach(t->skel->progs.lw_sock_send);
	if (t->mode == LW_REQ_UPROBE) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = t->o->uprobe_sym, .retprobe = true);

		/* Return probe first: a call in flight when the entry probe
		 * lands would otherwise leave its nesting depth at 1 forever. */
		t->skel->links.lw_req_return = bpf_program__attach_uprobe_opts(
			t->skel->progs.lw_req_return, uprobe_pid(t), t->o->uprobe_bin, 0, &uo);
		if (!t->skel->links.lw_req_return)
			goto uprobe_err;
		uo.retprobe = false;
		t->skel->links.lw_req_entry = bpf_program__attach_uprobe_opts(
			t->skel->progs.lw_req_entry, uprobe_pid(t), t->o->uprobe_bin, 0, &uo);
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

/* The always-attached tier, once, for the whole run; with it, full tracing's
 * request ends count no request (watch_hist). */
static int tracer_watch_attach(struct lw_tracer *t)
{
	struct bpf_program *progs[LW_WATCH_LINKS] = {t->skel->progs.lw_watch_ready,
						     t->skel->progs.lw_watch_close};

	if (!t->watch)
		return 0;
	/* which requests are sampled (watch_sampled()) differs run to run */
	if (getrandom((void *)&t->skel->bss->watch_seed, sizeof(t->skel->bss->watch_seed), 0) < 0)
		t->skel->bss->watch_seed = (__u32)lw_now_ns();
	for (int i = 0; i < LW_WATCH_LINKS; i++) {
		t->watch_links[i] = bpf_program__attach(progs[i]);
		if (!t->watch_links[i]) {
			int err = -errno;

			fprintf(stderr, "latwhy: cannot attach %s: %s\n",
				bpf_program__name(progs[i]), strerror(-err));
			return err;
		}
	}
	t->skel->bss->watch_hist = true;
	return 0;
}

/* Off the target's CPUs before any thread starts: the interrupt-cost
 * probe's thread and every wake-up of the poller stay there. */
static void tracer_place(struct lw_tracer *t)
{
	struct lw_place *p = &t->place;
	char tc[256], sc[256];
	int err;

	if (!t->npids)
		return; /* waited for: nothing to keep off yet */
	err = lw_place_self(t->pids, t->npids, p);
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
static void tracer_keep_up(struct lw_tracer *t, __u64 now)
{
	__u64 dropped = t->skel->bss->dropped;
	__u64 last = t->last_tick_ns ? t->last_tick_ns : t->start_ns;
	bool behind = dropped > t->dropped_seen || now - last > 2 * t->o->interval_ns;

	t->dropped_seen = dropped;
	t->last_tick_ns = now;
	if (lw_place_keep_up(&t->place, behind))
		fprintf(stderr, "latwhy: falling behind on the target's CPUs: now at nice %d\n",
			t->place.nice);
}

/* What was attached over the interval that ends at now, per tier. */
static void tracer_tier(struct lw_tracer *t, __u64 now)
{
	struct lw_tier_rec r = {.type = LW_REC_TIER, .ts_ns = now};
	__u64 since = t->tier_ns ? t->tier_ns : t->start_ns, slow = 0;

	t->tier_ns = now;
	r.full_ns = t->duty ? lw_duty_take_full_ns(t, now) : now - since;
	if (t->watch) {
		r.watch_ns = now - since;
		for (int i = 0; i < LW_MAX_TARGETS; i++)
			slow += t->skel->bss->watch_est_slow[i];
		r.watch_slow = slow - t->watch_slow_seen;
		t->watch_slow_seen = slow;
	}
	r.escalations = t->escalations;
	t->escalations = 0;
	lw_tracer_emit(t, &r, sizeof(r));
}

/* One interval: the programs adjusted, then the histogram, the interval's
 * statistics, what was attached, and every snapshot to the sink (the
 * evidence only while full tracing is attached: it stands still else); a
 * tick to it when live. */
static void tracer_tick(struct lw_tracer *t, bool live)
{
	__u64 count = lw_snapshot_hist(t), req = lw_snapshot_requests(t, count);
	struct lw_tick_rec tick = {.type = LW_REC_TICK, .ts_ns = lw_now_ns()};

	tracer_keep_up(t, tick.ts_ns);
	lw_control_tick(t, tick.ts_ns);
	tick.requests = req - t->req_count;
	t->req_count = req;
	tick.slow = t->slow_in_tick;
	t->slow_in_tick = 0;
	tick.p50_ns = lw_hist_quantile(t->hist->b, count, 0.50);
	tick.p99_ns = lw_hist_quantile(t->hist->b, count, 0.99);
	tick.threshold_ns = lw_control_threshold(t, count, tick.p99_ns);
	lw_tracer_emit(t, t->hist, sizeof(*t->hist));
	lw_tracer_emit(t, &tick, sizeof(tick));
	tracer_tier(t, tick.ts_ns);
	if (lw_duty_attached(t) || !live)
		lw_snapshot_evidence(t);
	lw_snapshot_meta(t); /* a cumulative snapshot like the others */
	if (live && lw_sink_tick(&t->sink, tick.ts_ns) == -ECANCELED)
		t->cancelled = true;
}

void lw_tracer_tick_now(struct lw_tracer *t)
{
	tracer_tick(t, true);
}

/* How long the loop may sleep, in ms: 100 while attached (records are
 * drained on the timeout, the clock sampled); detached, nothing can come
 * until the next tick, the duty cycle's next attach or its escalation
 * rule's next step, so it sleeps until then: a detached serve wakes once a
 * second, or four times with the always-attached tier, not ten. */
static int loop_wait_ms(const struct lw_tracer *t, __u64 now, __u64 next_tick)
{
	__u64 until = next_tick, next = lw_duty_next(t);

	if (lw_duty_attached(t) || !next)
		return 100;
	if (next < until)
		until = next;
	if (until <= now)
		return 0;
	return (until - now) / 1000000 + 1;
}

static int tracer_loop(struct lw_tracer *t)
{
	__u64 next_tick = t->start_ns + t->o->interval_ns;
	__u64 end = t->o->duration_ns ? t->start_ns + t->o->duration_ns : 0;
	__u64 next_freq = t->start_ns;

	while (!stop_flag && !t->cancelled) {
		__u64 now = lw_now_ns();
		int err = ring_buffer__poll(t->rb, loop_wait_ms(t, now, next_tick));

		/* records are submitted without a wake-up: drain on the timeout */
		if (err >= 0)
			err = ring_buffer__consume(t->rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "latwhy: ring buffer: %s\n", strerror(-err));
			return err;
		}
		now = lw_now_ns();
		if (t->duty && (err = lw_duty_poll(t, now)))
			return err;
		if (now >= next_freq && lw_duty_attached(t)) { /* no program to feed else */
			lw_freq_sample(&t->freq, inject_freq, t);
			next_freq = now + 100000000ULL;
		}
		if (now >= next_tick) {
			if (lw_duty_attached(t) || t->watch)
				tracer_tick(t, true);
			else
				lw_duty_idle_tick(t, now);
			next_tick += t->o->interval_ns;
			if (t->target_exited) /* seen by lw_control_tick() */
				break;
		}
		if (end && now >= end)
			break;
	}
	return 0;
}

int lw_tracer_run(struct lw_tracer *t)
{
	int err;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t->start_ns = lw_now_ns();
	t->ctl.backlog_seen_ns = t->start_ns;
	err = tracer_loop(t);
	if (err)
		return err;
	ring_buffer__consume(t->rb);
	tracer_tick(t, false); /* last snapshot, META included */
	lw_duty_end(t, lw_now_ns());
	return t->cancelled ? -ECANCELED : 0;
}

/* The embedded object's records are the ones this binary reads: a skeleton
 * left from a build before an ABI change (a stale build/) is refused. */
static int tracer_check_abi(const struct lw_tracer *t)
{
	__u32 abi = t->skel->rodata->lw_abi_version;

	if (abi == LW_ABI_VERSION)
		return 0;
	fprintf(stderr,
		"latwhy: its BPF object was built against record ABI %u, this latwhy reads %u: "
		"rebuild (make clean all)\n",
		abi, LW_ABI_VERSION);
	return -EPROTO;
}

static int tracer_load(struct lw_tracer *t)
{
	/*
	 * vmlinux's BTF alone: a CO-RE type it lacks (a compat shim's older
	 * layout) would send libbpf through the modules' BTF, and iterating
	 * those needs CAP_SYS_ADMIN, which latwhy does not hold (source/caps.c).
	 * latwhy relocates against no module's types.
	 */
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = "/sys/kernel/btf/vmlinux");
	int err;

	t->nr_cpus = libbpf_num_possible_cpus();
	if (t->nr_cpus <= 0) {
		err = t->nr_cpus ? t->nr_cpus : -EINVAL;
		fprintf(stderr, "latwhy: cannot count the possible CPUs: %s\n", strerror(-err));
		return err;
	}
	t->skel = latwhy_bpf__open_opts(&open_opts);
	if (!t->skel) {
		err = -errno;
		fprintf(stderr, "latwhy: cannot open BPF object: %s\n", strerror(-err));
		return err;
	}
	err = tracer_check_abi(t);
	if (err)
		return err;
	err = lw_tracer_probe(t);
	if (err)
		return err;
	/* the per-target maps as large as this trace's slots: a histogram is
	 * 4 KiB a CPU */
	bpf_map__set_max_entries(t->skel->maps.lat_hist,
				 1 + (t->pods ? LW_MAX_TARGETS : (t->ntg > 1 ? t->ntg : 0)));
	bpf_map__set_max_entries(t->skel->maps.cause_counts,
				 t->pods ? LW_MAX_TARGETS : (t->ntg ? t->ntg : 1));
	bpf_map__set_max_entries(t->skel->maps.preempt_by,
				 t->pods ? LW_MAX_TARGETS : (t->ntg ? t->ntg : 1));
	err = latwhy_bpf__load(t->skel);
	if (err) {
		fprintf(stderr,
			"latwhy: cannot load BPF programs: %s (run with -v for the verifier log)\n",
			strerror(-err));
		return err;
	}
	/* a histogram per target only when there are several to tell apart */
	t->skel->bss->targ_split = t->ntg > 1 || t->pods;
	return lw_targets_refresh(t, true);
}

static int tracer_open(struct lw_tracer *t)
{
	int err;

	err = lw_targets_init(t);
	if (err)
		return err;
	lw_targets_refresh(t, false);
	tracer_place(t);
	err = tracer_load(t);
	if (err)
		return err;
	err = lw_freq_init(&t->freq, "/", t->nr_cpus, t->o->ref_khz);
	if (err)
		return err;
	err = tracer_seed_cpus(t);
	if (err) {
		fprintf(stderr, "latwhy: cannot seed CPU clocks: %s\n", strerror(-err));
		return err;
	}
	t->skel->data->slow_thresh_ns = t->o->slow_ns ? t->o->slow_ns : LW_THRESH_UNKNOWN;
	lw_control_start(t);
	err = lw_tracer_attach(t);
	if (!err)
		err = tracer_watch_attach(t);
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
	lw_caps_drop(t->o->pid, t->mode == LW_REQ_UPROBE, t->place.shared);
	t->hist_buf = calloc(t->nr_cpus, bpf_map__value_size(t->skel->maps.lat_hist));
	t->count_buf = calloc(t->nr_cpus, sizeof(*t->count_buf));
	t->hist = calloc(1, sizeof(*t->hist));
	if (!t->hist_buf || !t->count_buf || !t->hist) {
		fprintf(stderr, "latwhy: out of memory\n");
		return -ENOMEM;
	}
	t->hist->type = LW_REC_HIST;
	return 0;
}

struct lw_tracer *lw_tracer_open(const struct lw_trace_conf *o, const char *comm,
				 struct lw_sink sink)
{
	struct lw_tracer *t = calloc(1, sizeof(*t));
	int err;

	if (!t) {
		fprintf(stderr, "latwhy: out of memory\n");
		errno = ENOMEM;
		return NULL;
	}
	t->o = o;
	t->sink = sink;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	/* closed by lw_tracer_close() also when lw_freq_init() never ran */
	for (int c = 0; c < LW_MAX_CPUS; c++)
		t->freq.fd_aperf[c] = t->freq.fd_mperf[c] = t->freq.fd_tsc[c] = -1;
	verbose_libbpf = o->verbose;
	libbpf_set_print(libbpf_print);
	err = tracer_open(t);
	if (err) {
		lw_tracer_close(t);
		errno = -err;
		return NULL;
	}
	return t;
}

__u32 lw_tracer_flags(const struct lw_tracer *t)
{
	return t->flags;
}

void lw_tracer_describe(const struct lw_tracer *t, char *buf, size_t len)
{
	lw_targets_describe(t, buf, len);
}

int lw_tracer_pids(const struct lw_tracer *t, int *pids, int max)
{
	int n = t->npids < max ? t->npids : max;

	memcpy(pids, t->pids, n * sizeof(*pids));
	return n;
}

int lw_tracer_first_pid(const struct lw_tracer *t)
{
	return t && t->npids ? t->pids[0] : 0;
}

bool lw_tracer_target_exited(const struct lw_tracer *t)
{
	return t->target_exited;
}

bool lw_tracer_stopped(void)
{
	return stop_flag;
}

void lw_tracer_close(struct lw_tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	for (int i = 0; i < LW_WATCH_LINKS; i++)
		bpf_link__destroy(t->watch_links[i]);
	lw_memory_close(t);
	latwhy_bpf__destroy(t->skel);
	lw_freq_close(&t->freq);
	free(t->duty);
	free(t->hist_buf);
	free(t->count_buf);
	free(t->hist);
	lw_podnames_free(t->podnames);
	free(t);
}
