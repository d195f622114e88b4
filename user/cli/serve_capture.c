// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* serve_capture.c - hindsight captures in serve (serve_capture.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advice/finding.h"
#include "cli/parse.h"
#include "cli/serve_capture.h"
#include "export/export.h"
#include "source/caps.h"

#define TRIGGER_FOR_NS (10ULL * 1000000000ULL)
#define TRIGGER_SYNTAX                                                                             \
	"CAUSE:RATE[/s][:FOR], RATE a count or a time (irq:5/s:10s, sched:20ms/s:5s); CAUSE one "  \
	"of frequency, irq, thp, sched, idle, quota, none, any"

static int cause_parse(const char *s, size_t len, int *cause)
{
	if (len == 3 && !strncmp(s, "any", 3)) {
		*cause = -1;
		return 0;
	}
	*cause = lw_cause_parse(s, len);
	return *cause < 0 ? -EINVAL : 0;
}

/* "5", "5/s", "0.5", "20ms", "20ms/s": a count, or a time, a second. */
static int rate_parse(char *s, struct lw_hindsight_trigger *t)
{
	size_t n = strlen(s);
	__u64 ns;
	char *end;

	if (n > 2 && !strcmp(s + n - 2, "/s"))
		s[n - 2] = '\0';
	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	if (strspn(s, "0123456789.") == strlen(s)) {
		errno = 0;
		t->per_s = strtod(s, &end);
		t->kind = LW_HS_COUNT;
		return errno || *end ? -EINVAL : 0;
	}
	/* a bare number is a count: only a unit makes it a time */
	if (lw_parse_duration(s, &ns))
		return -EINVAL;
	t->kind = LW_HS_TIME;
	t->per_s = (double)ns;
	return 0;
}

int lw_hindsight_trigger_parse(const char *spec, struct lw_hindsight_trigger *t, char *err,
			       size_t errlen)
{
	char buf[64], *rate, *dur;
	const char *colon = spec ? strchr(spec, ':') : NULL;

	memset(t, 0, sizeof(*t));
	t->for_ns = TRIGGER_FOR_NS;
	if (!colon || strlen(spec) >= sizeof(buf) || cause_parse(spec, colon - spec, &t->cause))
		goto bad;
	snprintf(buf, sizeof(buf), "%s", colon + 1);
	rate = buf;
	dur = strchr(buf, ':');
	if (dur) {
		*dur++ = '\0';
		if (lw_parse_duration(dur, &t->for_ns) || !t->for_ns)
			goto bad;
	}
	if (rate_parse(rate, t))
		goto bad;
	snprintf(t->text, sizeof(t->text), "%s", spec);
	snprintf(t->reason, sizeof(t->reason), "%s",
		 t->cause < 0 ? "any" : lw_cause_name(t->cause));
	return 0;
bad:
	snprintf(err, errlen, "invalid --capture-on '%s': " TRIGGER_SYNTAX, spec ? spec : "");
	return -EINVAL;
}

int lw_serve_capture_opt(struct lw_serve_capture_opts *o, int c, const char *arg, char *err,
			 size_t errlen)
{
	struct lw_hindsight_opts *hs = &o->hs;
	unsigned long n;

	if (c < LW_OPT_CAPTURE_DIR || c > LW_OPT_CAPTURE_MAX_BYTES)
		return -ENOENT;
	if (!o->first)
		o->first = c;
	switch (c) {
	case LW_OPT_CAPTURE_DIR:
		if (!*arg) {
			snprintf(err, errlen, "--capture-dir needs a directory");
			return -EINVAL;
		}
		hs->dir = arg;
		return 0;
	case LW_OPT_CAPTURE_ON:
		if (hs->ntriggers == LW_HINDSIGHT_TRIGGERS) {
			snprintf(err, errlen, "at most %d --capture-on", LW_HINDSIGHT_TRIGGERS);
			return -EINVAL;
		}
		if (lw_hindsight_trigger_parse(arg, &hs->triggers[hs->ntriggers], err, errlen))
			return -EINVAL;
		hs->ntriggers++;
		return 0;
	case LW_OPT_CAPTURE_WINDOW:
		if (lw_parse_duration(arg, &hs->window_ns) || hs->window_ns < 1000000000ULL ||
		    hs->window_ns > 3600ULL * 1000000000ULL) {
			snprintf(err, errlen, "invalid --capture-window '%s' (1s to 1h)", arg);
			return -EINVAL;
		}
		return 0;
	case LW_OPT_CAPTURE_MIN_INTERVAL:
		if (lw_parse_duration(arg, &hs->min_gap_ns)) {
			snprintf(err, errlen,
				 "invalid --capture-min-interval '%s' (a duration: 5m)", arg);
			return -EINVAL;
		}
		hs->min_gap_set = true;
		return 0;
	case LW_OPT_CAPTURE_MAX_FILES:
		if (lw_parse_uint(arg, 1, 100000, &n)) {
			snprintf(err, errlen, "invalid --capture-max-files '%s' (1 to 100000)",
				 arg);
			return -EINVAL;
		}
		hs->max_files = (unsigned)n;
		return 0;
	}
	if (lw_parse_size(arg, &hs->max_bytes)) {
		snprintf(err, errlen, "invalid --capture-max-bytes '%s' (a size: 256M)", arg);
		return -EINVAL;
	}
	return 0;
}

int lw_serve_capture_check(const struct lw_serve_capture_opts *o, char *err, size_t errlen)
{
	static const struct option opts[] = {LW_SERVE_CAPTURE_LONGOPTS};

	if (o->first && !o->hs.dir) {
		for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
			if (opts[i].val == o->first)
				snprintf(err, errlen, "--%s needs --capture-dir DIR", opts[i].name);
		return -EINVAL;
	}
	return 0;
}

void lw_serve_capture_usage(FILE *f)
{
	fprintf(f, "      --capture-dir DIR  keep the last minute of records and write a capture\n"
		   "                        of it into DIR on a trigger or SIGUSR1 (see\n"
		   "                        docs/serve.md, Hindsight captures)\n"
		   "      --capture-on CAUSE:RATE[/s][:FOR]  a trigger: the slow requests of\n"
		   "                        CAUSE (frequency, irq, thp, sched, idle, quota, none, "
		   "any)\n"
		   "                        over RATE a second for FOR (default 10s); RATE a\n"
		   "                        count (irq:5/s:10s) or their time (sched:20ms/s:5s)\n"
		   "      --capture-window DUR  how much is kept (default 60s)\n"
		   "      --capture-min-interval DUR  between two captures (default 5m)\n"
		   "      --capture-max-files N, --capture-max-bytes SIZE  DIR's cap, the\n"
		   "                        oldest latwhy-*.lwy removed (default 20, 256M)\n");
}

/* ---- at run time ---- */

static struct lw_hindsight *signal_target;

static void on_usr1(int sig)
{
	if (signal_target)
		lw_hindsight_request(signal_target);
}

static void on_written(void *ctx, const char *reason, const char *path, __u64 bytes)
{
	lw_export_capture_written(ctx, reason);
}

struct hs_start {
	const struct lw_hindsight_opts *o;
	const char *target;
	int pid;
	const struct lw_capture_kv *kv;
	size_t n;
};

static void *hs_start(void *arg)
{
	struct hs_start *a = arg;

	return lw_hindsight_new(a->o, a->target, a->pid, a->kv, a->n);
}

/* DIR exists (made if not, 0750) and can be written to. */
static int dir_ready(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0750) && errno != EEXIST)
		return -errno;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return access(dir, W_OK | X_OK) ? -errno : 0;
}

int lw_serve_capture_start(struct lw_serve_capture *c, const struct lw_serve_capture_opts *o,
			   const struct lw_opts *trace, struct lw_export *x, const char *target,
			   int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	char cmd[1024] = "", slow[32], targets[1024];
	size_t off = 0;
	int err;

	memset(c, 0, sizeof(*c));
	c->x = x;
	if (!o->hs.dir) {
		signal(SIGUSR1, SIG_IGN); /* nothing to capture: not a way to kill it */
		return 0;
	}
	err = dir_ready(o->hs.dir);
	if (err) {
		fprintf(stderr, "latwhy: --capture-dir %s: %s\n", o->hs.dir, strerror(-err));
		return err;
	}
	for (int i = 0; i < argc && off < sizeof(cmd); i++)
		off += snprintf(cmd + off, sizeof(cmd) - off, "%s%s", i ? " " : "", argv[i]);
	snprintf(slow, sizeof(slow), "%llu", (unsigned long long)trace->conf.slow_ns);
	lw_trace_opts_targets(trace, targets, sizeof(targets));
	const struct lw_capture_kv kv[] = {
		{"command", cmd},
		{"slow_ns", slow},
		{"skip", trace->conf.skip},
		{"targets", targets}, /* last: only without a single -p process, as record's */
	};
	struct hs_start a = {&o->hs, target, trace->conf.pid, kv,
			     sizeof(kv) / sizeof(kv[0]) - (trace->conf.pid ? 1 : 0)};

	/* capabilities are per thread: the writer's starts with none (it
	 * writes DIR as its owner and reads what any process may) */
	c->h = lw_caps_run_bare(hs_start, &a);
	if (!c->h) {
		err = -errno;
		fprintf(stderr, "latwhy: cannot keep a capture window: %s\n", strerror(-err));
		return err;
	}
	lw_hindsight_on_written(c->h, on_written, x);
	lw_export_capture_reason(x, "signal");
	for (size_t i = 0; i < o->hs.ntriggers; i++)
		lw_export_capture_reason(x, o->hs.triggers[i].reason);
	signal_target = c->h;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	return 0;
}

struct lw_sink lw_serve_capture_sink(struct lw_serve_capture *c, struct lw_export *x)
{
	if (!c->h)
		return lw_export_sink(x);
	c->sinks.n = 0;
	lw_fanout_add(&c->sinks, lw_export_sink(x));
	lw_fanout_add(&c->sinks, lw_hindsight_sink(c->h));
	return lw_fanout_sink(&c->sinks);
}

void lw_serve_capture_set_pid(struct lw_serve_capture *c, int pid)
{
	if (c->h)
		lw_hindsight_set_pid(c->h, pid);
}

void lw_serve_capture_stop(struct lw_serve_capture *c)
{
	if (!c->h)
		return;
	signal(SIGUSR1, SIG_IGN);
	signal_target = NULL;
	lw_hindsight_free(c->h);
	c->h = NULL;
}
