// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_serve.c - `latwhy serve`: the live tracer feeding the exporter, its
 * metrics served over HTTP until stopped.
 *
 *   tracer (source) -> exporter (sink) <- HTTP thread (scrapes)
 *
 * Every target (-p, --comm, --cgroup, --unit) is followed by the one tracer:
 * a --comm process that exits and comes back, a cgroup made again, only
 * change what the BPF filter matches, so the counters go on under the same
 * labels with no re-attach. The duty cycle (--sample) keeps one phase from
 * serve's start; the exporter is told of each attach and detach.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/serve_capture.h"
#include "cli/serve_opts.h"
#include "cli/serve_preempt.h"
#include "export/export.h"
#include "export/health.h"
#include "export/http.h"
#include "source/caps.h"
#include "source/duty.h"
#include "source/probe.h"
#include "source/progstats.h"
#include "source/tracer.h"

/* How often a waited-for target is looked for. */
#define SERVE_POLL_MS 200

static volatile sig_atomic_t serve_stop;

static void on_stop(int sig)
{
	serve_stop = 1;
}

/* Between traces the tracer's handlers are not there: serve's own. */
static void catch_stop(void)
{
	struct sigaction sa = {.sa_handler = on_stop};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void nap_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

struct serve {
	const struct lw_serve_opts *o;
	char target[LW_TARGET_NAME];
	struct lw_export *x;
	struct lw_http *h;
	/* several targets: the tracer, each slot's series, a histogram */
	struct lw_tracer *t;
	struct lw_sink xs; /* the exporter's, and the window's */
	int series_of[LW_MAX_TARGETS];
	/* pod slots: the generation each one's series is of, and whether it
	 * is summed under pod="other" */
	__u32 gen_of[LW_MAX_TARGETS];
	bool other_of[LW_MAX_TARGETS];
	char uid_of[LW_MAX_TARGETS][40];
	__u64 *hist, *sum;
	struct lw_serve_capture cap; /* --capture-dir: the window */
	__u64 epoch;		     /* the duty cycle's: its programs loaded */
};

static __u64 serve_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void serve_on_duty(void *ctx, const struct lw_duty_change *c)
{
	lw_export_attached(ctx, c->attached, c->now_ns);
	if (c->escalated)
		lw_export_escalated(ctx, c->delay_ns);
}

/* The running tracer's programs' kernel counters, for the exporter. */
static void serve_progs(struct serve *s)
{
	struct lw_prog_stat ps[LW_EXPORT_PROGS];
	struct lw_export_prog xp[LW_EXPORT_PROGS];
	int n = lw_tracer_prog_stats(s->t, ps, LW_EXPORT_PROGS);

	for (int i = 0; i < n; i++) {
		memcpy(xp[i].name, ps[i].name, sizeof(xp[i].name));
		xp[i].run_ns = ps[i].run_ns;
		xp[i].run_cnt = ps[i].run_cnt;
	}
	if (n > 0)
		lw_export_progs(s->x, xp, n);
}

static int serve_record(void *ctx, const void *rec, size_t len)
{
	struct serve *s = ctx;

	return lw_sink_record(&s->xs, rec, len);
}

/* Each series' histogram from the kernel's per-slot ones (targets of one
 * label summed). */
static void serve_hists(struct serve *s)
{
	int n = lw_tracer_targets(s->t);

	for (int series = 0; series < LW_MAX_TARGETS; series++) {
		bool any = false;

		memset(s->sum, 0, LW_HIST_BUCKETS * sizeof(*s->sum));
		for (int slot = 0; slot < n; slot++) {
			if (s->series_of[slot] != series ||
			    lw_tracer_target_hist(s->t, slot, s->hist))
				continue;
			for (int b = 0; b < LW_HIST_BUCKETS; b++)
				s->sum[b] += s->hist[b];
			any = true;
		}
		if (any)
			lw_export_series_hist(s->x, series, s->sum);
	}
}

/* Each series' slow requests as the always-attached tier counted them
 * (targets of one label summed); nothing without that tier. */
static void serve_watch(struct serve *s)
{
	int n = lw_tracer_targets(s->t);

	for (int series = 0; series < LW_MAX_TARGETS; series++) {
		struct lw_export_watch sum = {};
		struct lw_watch_counts w;
		bool any = false;

		for (int slot = 0; slot < n; slot++) {
			if (s->series_of[slot] != series || lw_tracer_target_watch(s->t, slot, &w))
				continue;
			sum.slow += w.slow;
			sum.slow_ns += w.slow_ns;
			sum.req += w.req;
			sum.timed += w.timed;
			any = true;
		}
		if (any)
			lw_export_series_watch(s->x, series, &sum);
	}
}

/* Each series' slow requests by cause from the kernel's per-slot counts
 * (targets of one label summed). */
static void serve_causes(struct serve *s)
{
	int n = lw_tracer_targets(s->t);

	for (int series = 0; series < LW_MAX_TARGETS; series++) {
		struct lw_cause_counts sum = {}, c;
		bool any = false;

		for (int slot = 0; slot < n; slot++) {
			if (s->series_of[slot] != series || lw_tracer_target_causes(s->t, slot, &c))
				continue;
			lw_cause_counts_add(&sum, &c);
			any = true;
		}
		if (any)
			lw_export_series_causes(s->x, series, &sum);
	}
	serve_watch(s);
}

/* Each series' first process, whose cgroup's CPU bandwidth counters a
 * scrape reads (targets of one label: the first slot with one). */
static void serve_pids(struct serve *s)
{
	int n = lw_tracer_targets(s->t), pid[LW_MAX_TARGETS] = {};
	bool used[LW_MAX_TARGETS] = {};

	for (int slot = 0; slot < n; slot++) {
		int series = s->series_of[slot];

		if (series < 0 || series >= LW_MAX_TARGETS)
			continue;
		used[series] = true;
		if (!pid[series])
			pid[series] = lw_tracer_target_pid(s->t, slot);
	}
	for (int series = 0; series < LW_MAX_TARGETS; series++)
		if (used[series])
			lw_export_series_pid(s->x, series, pid[series]);
}

/* Whether another pod slot than skip, of series, still uses it. */
static bool series_used(const struct serve *s, int series, int skip)
{
	for (int k = 0; k < lw_tracer_targets(s->t); k++)
		if (k != skip && s->series_of[k] == series)
			return true;
	return false;
}

/* The pods with series of their own now, and those summed under "other". */
static void pods_counted(const struct serve *s, int *own, int *other)
{
	*own = *other = 0;
	for (int i = 0; i < lw_tracer_targets(s->t); i++) {
		bool first = s->series_of[i] >= 0 && s->uid_of[i][0];

		for (int k = 0; k < i && first; k++)
			first = s->series_of[k] < 0 || strcmp(s->uid_of[k], s->uid_of[i]);
		if (first && s->other_of[i])
			(*other)++;
		else if (first)
			(*own)++;
	}
}

/* Whether pod uid has series of its own already. */
static bool pod_owned(const struct serve *s, const char *uid)
{
	for (int i = 0; i < lw_tracer_targets(s->t); i++)
		if (s->series_of[i] >= 0 && !s->other_of[i] && !strcmp(s->uid_of[i], uid))
			return true;
	return false;
}

/* A pod slot's series gone with it (its slot free again): its own series
 * dropped once no slot uses it; what it counted under "other" kept there. */
static void pod_slot_leave(struct serve *s, int slot)
{
	int series = s->series_of[slot];

	if (series < 0)
		return;
	if (s->other_of[slot]) {
		struct lw_cause_counts c;

		if (!lw_tracer_target_hist(s->t, slot, s->hist) &&
		    !lw_tracer_target_causes(s->t, slot, &c))
			lw_export_series_retire(s->x, series, s->hist, &c);
		lw_serve_preempted_retire(s->t, s->x, slot, series);
	} else if (!series_used(s, series, slot)) {
		lw_export_drop_series(s->x, series);
	}
	s->series_of[slot] = -1;
	s->uid_of[slot][0] = '\0';
}

/*
 * The pod slots' series, each tick: a container new in a slot gets the
 * series of its namespace, pod and container, or, its pod being over
 * --max-pods, pod="other"'s; a slot freed (its container gone for
 * LW_POD_HOLD_NS) takes its series with it.
 */
static void serve_pods_sync(struct serve *s)
{
	int n = lw_tracer_targets(s->t), own, other;

	for (int slot = 0; slot < n; slot++) {
		struct lw_target_pod p;
		int state, series;
		__u32 gen;

		if (!lw_tracer_target_pod(s->t, slot, &p, &state, &gen))
			continue;
		if (state == LW_SLOT_FREE || (s->series_of[slot] >= 0 && gen != s->gen_of[slot]))
			pod_slot_leave(s, slot);
		if (state == LW_SLOT_FREE || s->series_of[slot] >= 0)
			continue;
		pods_counted(s, &own, &other);
		s->other_of[slot] = !pod_owned(s, p.uid) && own >= s->o->max_pods;
		series = s->other_of[slot]
				 ? lw_export_add_pod_series(s->x, "", "other", "", "")
				 : lw_export_add_pod_series(s->x, p.ns, p.name, p.container, p.qos);
		if (series < 0)
			continue;
		s->series_of[slot] = series;
		s->gen_of[slot] = gen;
		snprintf(s->uid_of[slot], sizeof(s->uid_of[slot]), "%s", p.uid);
	}
	pods_counted(s, &own, &other);
	lw_export_pods_other(s->x, other);
}

/* The programs' counters, the slow requests by cause, each series'
 * process and, when there are several, histogram; then the exporter's
 * tick. */
static int serve_tick(void *ctx, __u64 now_ns)
{
	struct serve *s = ctx;

	if (s->t) {
		int pid = lw_tracer_first_pid(s->t);

		serve_progs(s);
		if (s->hist)
			serve_pods_sync(s);
		serve_causes(s);
		lw_serve_preempted(s->t, s->x, s->series_of);
		serve_pids(s);
		/* the IRQ spread and a capture's facts: of the process now */
		lw_export_set_pid(s->x, pid);
		lw_serve_capture_set_pid(&s->cap, pid);
	}
	if (s->t && s->hist && s->sum)
		serve_hists(s);
	return lw_sink_tick(&s->xs, now_ns);
}

/* Several targets: a series each (one for those of the same label), the
 * records routed through serve's sink. 0 or -errno. */
static int serve_series(struct serve *s)
{
	char label[LW_TARGET_NAME];

	s->hist = calloc(LW_HIST_BUCKETS, sizeof(*s->hist));
	s->sum = calloc(LW_HIST_BUCKETS, sizeof(*s->sum));
	if (!s->hist || !s->sum)
		return -ENOMEM;
	bool pods = false;

	for (int slot = 0; slot < LW_MAX_TARGETS; slot++)
		s->series_of[slot] = -1;
	for (int slot = 0; slot < lw_tracer_targets(s->t); slot++) {
		if (lw_tracer_target_pod(s->t, slot, NULL, NULL, NULL))
			continue; /* serve_pods_sync()'s */
		lw_tracer_target_label(s->t, slot, label, sizeof(label));
		s->series_of[slot] = lw_export_add_series(s->x, label);
		if (s->series_of[slot] < 0)
			return s->series_of[slot];
	}
	for (int i = 0; i < s->o->trace.conf.ntargets; i++)
		pods |= s->o->trace.conf.targets[i].kind == LW_TARGET_PODS ||
			s->o->trace.conf.targets[i].kind == LW_TARGET_POD;
	/* pods alone: the first series, lw_export_new()'s, is no target's */
	if (pods && s->o->trace.conf.targets[0].kind >= LW_TARGET_PODS && !series_used(s, 0, -1))
		lw_export_drop_series(s->x, 0);
	return 0;
}

/* One trace until stopped: the tracer puts a target's new processes and
 * cgroup ids into its filter and says what it waits for. */
static enum lw_exit serve_targets(struct serve *s)
{
	struct lw_opts o = s->o->trace;
	struct lw_sink sink = {.ctx = s, .record = serve_record, .tick = serve_tick};
	bool split = o.conf.ntargets > 1, exited;

	for (int i = 0; i < o.conf.ntargets; i++)
		split |= o.conf.targets[i].kind == LW_TARGET_PODS ||
			 o.conf.targets[i].kind == LW_TARGET_POD;
	char who[1024];
	int err;

	o.quiet = true;
	/* the exporter, and the hindsight window beside it */
	s->xs = lw_serve_capture_sink(&s->cap, s->x);
	/* a single -p process names the run, as a live trace's does */
	s->t = lw_tracer_open(&o.conf, o.conf.pid ? s->target : "", sink);
	if (!s->t)
		return LW_EXIT_FAIL;
	/* the first stretch whole, not mostly spent loading (2-3 s here): it
	 * gives full tracing's baseline its first windows */
	s->epoch = serve_now_ns();
	lw_tracer_set_duty(s->t, &s->o->sample, s->epoch, serve_on_duty, s->x);
	err = split ? serve_series(s) : 0;
	if (err)
		fprintf(stderr, "latwhy: cannot make a series per target: %s\n", strerror(-err));
	lw_tracer_describe(s->t, who, sizeof(who));
	fprintf(stderr, "latwhy: tracing %s\n", who);
	if (!err && !serve_stop)
		err = lw_tracer_run(s->t);
	if (split && s->hist && s->sum)
		serve_tick(s, 0); /* the last histograms, then published */
	exited = lw_tracer_target_exited(s->t);
	lw_health_stopped(lw_health_of(s->x), err, exited); /* /healthz: 503 from now */
	if (lw_tracer_stopped())
		serve_stop = 1;
	lw_tracer_close(s->t);
	s->t = NULL;
	lw_export_restart(s->x);
	free(s->hist);
	free(s->sum);
	s->hist = s->sum = NULL;
	if (err)
		return LW_EXIT_FAIL;
	/* stopped (the tracer took the signal), or every target, all -p
	 * processes, exited */
	if (exited && !serve_stop) {
		fprintf(stderr, "latwhy: every target exited: serving their last counters until "
				"stopped\n");
		catch_stop();
		while (!serve_stop)
			nap_ms(SERVE_POLL_MS);
	}
	return LW_EXIT_OK;
}

static void *http_start(void *arg)
{
	struct serve *s = arg;

	return lw_http_start(s->x, s->o->host, s->o->port);
}

/* The target label, and the checks that come before anything is served. */
static int serve_prepare(struct serve *s)
{
	const struct lw_serve_opts *o = s->o;

	if (lw_probe_privileges())
		return -EPERM;
	/* the first target's label: a -p process's comm, else its name */
	if (o->trace.conf.targets[0].kind == LW_TARGET_PID) {
		if (lw_probe_target(o->trace.conf.targets[0].pid, s->target, sizeof(s->target)))
			return -ESRCH;
	} else {
		snprintf(s->target, sizeof(s->target), "%s", o->trace.conf.targets[0].name);
	}
	s->x = lw_export_new(s->target, "/");
	if (!s->x) {
		fprintf(stderr, "latwhy: out of memory\n");
		return -ENOMEM;
	}
	lw_health_setup(lw_health_of(s->x), o->trace.conf.interval_ns, o->sample.on_ns,
			o->sample.every_ns);
	/* the duty cycle attaches uprobes again at each cycle, which
	 * perf_event_open() checks */
	if (o->sample.every_ns && o->trace.conf.req_mode == LW_REQ_UPROBE)
		lw_caps_keep_for_retrace();
	s->h = lw_caps_run_bare(http_start, s); /* the HTTP thread holds none */
	if (!s->h) {
		fprintf(stderr,
			strchr(o->host, ':') ? "latwhy: cannot listen on [%s]:%u: %s\n"
					     : "latwhy: cannot listen on %s:%u: %s\n",
			o->host, o->port, strerror(errno));
		return -errno;
	}
	fprintf(stderr,
		strchr(o->host, ':') ? "latwhy: serving http://[%s]:%u/metrics\n"
				     : "latwhy: serving http://%s:%u/metrics\n",
		o->host, o->port);
	return 0;
}

enum lw_exit lw_cmd_serve(int argc, char **argv)
{
	struct lw_serve_opts o;
	struct serve s = {.o = &o};
	enum lw_exit ret = LW_EXIT_FAIL;
	char err[256];
	int r;

	r = lw_cmd_parsed("serve", lw_serve_opts_parse(&o, argc, argv, err, sizeof(err)), err,
			  lw_serve_usage);
	if (r >= 0)
		return r;
	if (lw_tracer_check_skip(o.trace.conf.skip))
		return LW_EXIT_USAGE;
	if (!serve_prepare(&s) &&
	    !lw_serve_capture_start(&s.cap, &o.capture, &o.trace, s.x, s.target, argc, argv))
		ret = serve_targets(&s);
	lw_serve_capture_stop(&s.cap);
	lw_http_stop(s.h);
	lw_export_free(s.x);
	return ret;
}
