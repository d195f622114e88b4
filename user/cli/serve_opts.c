// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* serve_opts.c - serve takes its own options out, the trace parser the rest. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/serve_opts.h"
#include "engine/cause.h"
#include "source/causes.h"

#define NO_TARGET LW_NO_TARGET

int lw_parse_listen(const char *s, char *host, size_t len, unsigned *port)
{
	const char *colon = strrchr(s, ':'), *h = s;
	size_t hl;
	char *end;
	unsigned long v;

	if (!colon || !colon[1])
		return -EINVAL;
	hl = colon - s;
	if (*s == '[') { /* [v6]:port */
		if (hl < 2 || s[hl - 1] != ']')
			return -EINVAL;
		h = s + 1;
		hl -= 2;
	}
	if (!hl) {
		h = LW_SERVE_HOST;
		hl = strlen(h);
	}
	if (hl >= len)
		return -EINVAL;
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	if (errno || *end || !v || v > 65535 || colon[1] == '-' || colon[1] == '+')
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (unsigned)v;
	return 0;
}

int lw_parse_sample(const char *s, struct lw_duty *d, char *err, size_t errlen)
{
	char x[32];
	const char *slash = strchr(s, '/');
	__u64 on, every;

	if (!strcmp(s, "off")) {
		*d = (struct lw_duty){0};
		return 0;
	}
	if (!slash || (size_t)(slash - s) >= sizeof(x))
		goto bad;
	memcpy(x, s, slash - s);
	x[slash - s] = '\0';
	if (lw_parse_duration(x, &on) || lw_parse_duration(slash + 1, &every))
		goto bad;
	/* the tracer looks at its schedule every 100 ms */
	if (on < 1000000000ULL) {
		snprintf(err, errlen, "--sample: X must be at least 1s");
		return -EINVAL;
	}
	if (on > every) {
		snprintf(err, errlen, "--sample: X must not exceed Y");
		return -EINVAL;
	}
	d->on_ns = on;
	d->every_ns = every;
	return 0;
bad:
	snprintf(err, errlen, "--sample needs X/Y, two durations (e.g. 3s/60s), or off");
	return -EINVAL;
}

/* One of serve's own options at argv[*i]: 1 taken, 0 not ours, -EINVAL. */
static int take_own(void *ctx, int argc, char **argv, int *i, char *err, size_t errlen)
{
	struct lw_serve_opts *o = ctx;
	const char *a = argv[*i], *v;
	int r = lw_serve_capture_take(&o->capture, argc, argv, i, err, errlen);

	if (r)
		return r;
	if (!strncmp(a, "--comm", 6) && (!a[6] || a[6] == '=')) {
		v = lw_opt_value(argc, argv, i, "--comm");
		if (!v || !*v || strlen(v) >= sizeof(o->comm)) {
			snprintf(err, errlen, "--comm needs a process name of 1 to %d characters",
				 LW_COMM_LEN - 1);
			return -EINVAL;
		}
		snprintf(o->comm, sizeof(o->comm), "%s", v);
		return 1;
	}
	if (!strncmp(a, "--sample", 8) && (!a[8] || a[8] == '=')) {
		v = lw_opt_value(argc, argv, i, "--sample");
		return lw_parse_sample(v ? v : "", &o->sample, err, errlen) ? -EINVAL : 1;
	}
	if (!strncmp(a, "--causes", 8) && (!a[8] || a[8] == '=')) {
		v = lw_opt_value(argc, argv, i, "--causes");
		if (!v || !*v || strlen(v) >= sizeof(o->causes)) {
			snprintf(err, errlen, "--causes needs a list of causes (%s)",
				 LW_CAUSES_ALL);
			return -EINVAL;
		}
		snprintf(o->causes, sizeof(o->causes), "%s", v);
		return 1;
	}
	if (!strncmp(a, "--listen", 8) && (!a[8] || a[8] == '=')) {
		v = lw_opt_value(argc, argv, i, "--listen");
		if (!v || lw_parse_listen(v, o->host, sizeof(o->host), &o->port)) {
			snprintf(err, errlen,
				 "invalid --listen '%s' (examples: 127.0.0.1:9462, [::1]:9462)",
				 v ? v : "");
			return -EINVAL;
		}
		return 1;
	}
	return 0;
}

/* The trace's options. --comm is a target the tracer follows itself (its
 * processes into the BPF filter as they come): alone, the parser gets a
 * stand-in target once it said that one was missing, which gives way. */
static int parse_trace(struct lw_serve_opts *o, int n, char **rest, char *err, size_t errlen)
{
	struct lw_opts *t = &o->trace;
	int ret = lw_opts_parse(t, n, rest, err, errlen);

	if (!o->comm[0])
		return ret;
	if (ret < 0 && !strcmp(err, NO_TARGET)) {
		rest[n] = "--pid=1";
		ret = lw_opts_parse(t, n + 1, rest, err, errlen);
		t->conf.ntargets = 0;
	}
	if (ret)
		return ret;
	if (t->conf.ntargets == LW_MAX_TARGETS) {
		snprintf(err, errlen, "too many targets (at most %d)", LW_MAX_TARGETS);
		return -EINVAL;
	}
	t->conf.targets[t->conf.ntargets].kind = LW_TARGET_COMM;
	t->conf.targets[t->conf.ntargets].pid = 0;
	snprintf(t->conf.targets[t->conf.ntargets].name, sizeof(t->conf.targets[0].name), "%s", o->comm);
	t->conf.ntargets++;
	t->conf.pid = 0;
	o->comm[0] = '\0';
	return 0;
}

static int check_trace(const struct lw_serve_opts *o, char *err, size_t errlen)
{
	if (o->trace.json) {
		snprintf(err, errlen, "serve exports metrics, not JSON: drop -j");
		return -EINVAL;
	}
	if (o->trace.conf.duration_ns) {
		snprintf(err, errlen, "serve runs until stopped: drop -d");
		return -EINVAL;
	}
	return lw_serve_capture_check(&o->capture, err, errlen);
}

/* A trigger counts the intervals of a stretch the programs are attached
 * in: one that must hold longer than X could never fire. */
static int check_sample(const struct lw_serve_opts *o, char *err, size_t errlen)
{
	const struct lw_hindsight_opts *hs = &o->capture.hs;

	if (!o->sample.every_ns || o->sample.on_ns >= o->sample.every_ns)
		return 0;
	for (size_t i = 0; i < hs->ntriggers; i++) {
		if (hs->triggers[i].for_ns <= o->sample.on_ns)
			continue;
		snprintf(err, errlen,
			 "--capture-on %s: its FOR is longer than --sample's X (%.0f s): it could "
			 "never fire; give --sample off or a longer X",
			 hs->triggers[i].text, o->sample.on_ns / 1e9);
		return -EINVAL;
	}
	return 0;
}

int lw_serve_opts_parse(struct lw_serve_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	char **rest;
	int n, ret;

	memset(o, 0, sizeof(*o));
	snprintf(o->host, sizeof(o->host), "%s", LW_SERVE_HOST);
	o->port = LW_SERVE_PORT;
	o->sample.on_ns = LW_SERVE_SAMPLE_ON_NS;
	o->sample.every_ns = LW_SERVE_SAMPLE_EVERY_NS;
	/* room for one more: parse_trace() may add --pid=1 for --comm */
	rest = lw_opts_rest(argc, argv, take_own, o, &n, err, errlen);
	if (!rest)
		return -EINVAL;
	ret = parse_trace(o, n, rest, err, errlen);
	free(rest);
	if (ret)
		return ret;
	ret = check_trace(o, err, errlen);
	if (!ret)
		ret = check_sample(o, err, errlen);
	if (!ret && o->causes[0])
		ret = lw_causes_skip(o->causes, o->trace.conf.skip, sizeof(o->trace.conf.skip), err, errlen);
	/* the metrics are the kernel's counts: records only for the window */
	o->trace.conf.counts_only = !o->capture.hs.dir;
	return ret ? -EINVAL : 0;
}

void lw_serve_usage(FILE *f)
{
	fprintf(f,
		"Usage: latwhy serve (-p PID | --comm NAME | --cgroup PATH | --unit NAME)\n"
		"                    [--listen ADDR:PORT] [--sample X/Y|off] [--causes CAUSE,...]\n"
		"                    [trace options]\n"
		"\n"
		"Trace a process until stopped and serve its metrics for Prometheus at\n"
		"http://ADDR:PORT/metrics (see docs/serve.md).\n"
		"\n"
		"  -p, --pid PID         the process to trace; serve waits on when it exits\n"
		"      --comm NAME       the first process named NAME, and after it exits the\n"
		"                        next one: its series go on under target=NAME\n"
		"      --cgroup PATH     every process of a cgroup v2 (PATH below its root),\n"
		"                        waited for, followed when it is made again:\n"
		"                        target=PATH\n"
		"      --unit NAME       a systemd unit's cgroup, the same way: target=NAME\n"
		"      --listen ADDR:PORT where to serve (default 127.0.0.1:9462)\n");
	lw_serve_capture_usage(f);
	fprintf(f,
		"      --sample X/Y      attached X of every Y, detached (costing the target\n"
		"                        nothing) in between; off: always (default 3s/90s)\n"
		"      --causes LIST     trace only these of frequency,irq,thp,sched,idle,quota\n"
		"                        (default all; sched always)\n"
		"\n"
		"Every option of latwhy trace but -j and -d applies (see latwhy trace --help).\n");
}
