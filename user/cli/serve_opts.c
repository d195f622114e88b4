// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* serve_opts.c - the options of `latwhy serve`: its own, its captures', the
 * trace's. */
#include <errno.h>
#include <string.h>

#include "cli/parse.h"
#include "cli/serve_opts.h"
#include "engine/cause.h"
#include "source/causes.h"

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

enum {
	OPT_LISTEN = LW_OPT_OWN,
	OPT_SAMPLE,
	OPT_CAUSES,
	OPT_MAX_PODS,
	OPT_ESCALATE,
};

/* serve's own options, its --capture-* ones, then the trace's */
static int serve_opt(void *ctx, int c, const char *arg, char *err, size_t errlen)
{
	struct lw_serve_opts *o = ctx;
	int ret = lw_serve_capture_opt(&o->capture, c, arg, err, errlen);

	if (ret != -ENOENT)
		return ret;
	switch (c) {
	case OPT_SAMPLE:
		return lw_parse_sample(arg, &o->sample, err, errlen);
	case OPT_ESCALATE:
		if (strcmp(arg, "on") && strcmp(arg, "off")) {
			snprintf(err, errlen, "--escalate takes on or off, not '%s'", arg);
			return -EINVAL;
		}
		o->sample.escalate = !strcmp(arg, "on");
		return 0;
	case OPT_CAUSES:
		if (!*arg || strlen(arg) >= sizeof(o->causes)) {
			snprintf(err, errlen, "--causes needs a list of causes (%s)",
				 LW_CAUSES_ALL);
			return -EINVAL;
		}
		snprintf(o->causes, sizeof(o->causes), "%s", arg);
		return 0;
	case OPT_MAX_PODS: {
		unsigned long n;

		if (lw_parse_uint(arg, 1, LW_MAX_TARGETS - 1, &n)) {
			snprintf(err, errlen, "invalid --max-pods '%s' (1..%d)", arg,
				 LW_MAX_TARGETS - 1);
			return -EINVAL;
		}
		o->max_pods = (int)n;
		return 0;
	}
	case OPT_LISTEN:
		if (lw_parse_listen(arg, LW_SERVE_HOST, o->host, sizeof(o->host), &o->port)) {
			snprintf(err, errlen,
				 "invalid --listen '%s' (examples: 127.0.0.1:9462, [::1]:9462)",
				 arg);
			return -EINVAL;
		}
		return 0;
	}
	return lw_trace_opt(&o->trace, c, arg, err, errlen);
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

/* A trigger counts slow requests by cause, which only full tracing sees:
 * without escalation, only in the duty cycle's stretches, and one that must
 * hold longer than X could never fire. */
static int check_sample(const struct lw_serve_opts *o, char *err, size_t errlen)
{
	const struct lw_hindsight_opts *hs = &o->capture.hs;

	if (!o->sample.every_ns || o->sample.on_ns >= o->sample.every_ns || o->sample.escalate)
		return 0;
	for (size_t i = 0; i < hs->ntriggers; i++) {
		if (hs->triggers[i].for_ns <= o->sample.on_ns)
			continue;
		snprintf(err, errlen,
			 "--capture-on %s: its FOR is longer than --sample's X (%.0f s): it could "
			 "never fire; give --sample off, a longer X or --escalate on",
			 hs->triggers[i].text, o->sample.on_ns / 1e9);
		return -EINVAL;
	}
	return 0;
}

int lw_serve_opts_parse(struct lw_serve_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"sample", required_argument, NULL, OPT_SAMPLE},
		{"causes", required_argument, NULL, OPT_CAUSES},
		{"max-pods", required_argument, NULL, OPT_MAX_PODS},
		{"escalate", required_argument, NULL, OPT_ESCALATE},
		LW_SERVE_CAPTURE_LONGOPTS,
		LW_TRACE_LONGOPTS,
		{},
	};
	const struct lw_cmdline cl = {
		.shortopts = LW_TRACE_SHORTOPTS,
		.longopts = longopts,
		.take = serve_opt,
		.ctx = o,
	};
	int first, ret;

	memset(o, 0, sizeof(*o));
	lw_trace_opts_init(&o->trace);
	snprintf(o->host, sizeof(o->host), "%s", LW_SERVE_HOST);
	o->port = LW_SERVE_PORT;
	o->sample.on_ns = LW_SERVE_SAMPLE_ON_NS;
	o->sample.every_ns = LW_SERVE_SAMPLE_EVERY_NS;
	o->sample.escalate = true;
	o->max_pods = LW_SERVE_MAX_PODS;
	ret = lw_getopt(&cl, argc, argv, &first, err, errlen);
	if (!ret)
		ret = lw_trace_opts_done(&o->trace, err, errlen);
	if (!ret)
		ret = check_trace(o, err, errlen);
	if (!ret)
		ret = check_sample(o, err, errlen);
	if (!ret && o->causes[0])
		ret = lw_causes_skip(o->causes, o->trace.conf.skip, sizeof(o->trace.conf.skip), err,
				     errlen);
	if (ret)
		return ret == 1 ? 1 : -EINVAL;
	/* the metrics are the kernel's counts: records only for the window */
	o->trace.conf.counts_only = !o->capture.hs.dir;
	/* full tracing part of the time: the always-attached tier beside it */
	o->trace.conf.watch =
		o->sample.escalate && o->sample.every_ns && o->sample.on_ns < o->sample.every_ns;
	return 0;
}

void lw_serve_usage(FILE *f)
{
	fprintf(f,
		"Usage: latwhy serve TARGET... [--listen ADDR:PORT] [--sample X/Y|off]\n"
		"                    [--escalate on|off] [--causes CAUSE,...] [--capture-dir DIR]\n"
		"                    [trace options]\n"
		"\n"
		"Trace a process until stopped and serve its metrics for Prometheus at\n"
		"http://ADDR:PORT/metrics (see docs/serve.md).\n"
		"\n"
		"  -p, --pid PID         the process to trace; serve waits on when it exits\n"
		"      --comm NAME       every process named NAME, followed as they come and\n"
		"                        go: target=NAME\n"
		"      --cgroup PATH     every process of a cgroup v2 (PATH below its root),\n"
		"                        waited for, followed when it is made again:\n"
		"                        target=PATH\n"
		"      --unit NAME       a systemd unit's cgroup, the same way: target=NAME\n"
		"      --pods            every container of every Kubernetes pod, followed as\n"
		"                        pods come and go: namespace=, pod=, container=\n"
		"      --pod NS/NAME     one pod's containers, the same labels\n"
		"      --max-pods N      pods with series of their own (default 110, a\n"
		"                        node's pod limit); the rest summed under pod=\"other\"\n"
		"      --listen ADDR:PORT where to serve (default 127.0.0.1:9462)\n");
	lw_serve_capture_usage(f);
	fprintf(f,
		"      --sample X/Y      attached X of every Y, detached (costing the target\n"
		"                        nothing) in between; off: always (default 3s/90s)\n"
		"      --escalate on|off with a duty cycle, count TCP requests from a sample\n"
		"                        of them, timed, all the time, and attach full\n"
		"                        tracing within a second of a rise in slow requests,\n"
		"                        until 3-10 s after it ends (default on)\n"
		"      --causes LIST     trace only these of frequency,irq,thp,sched,idle,quota\n"
		"                        (default all; sched always)\n"
		"\n"
		"Every option of latwhy trace but -j and -d applies (see latwhy trace --help).\n");
}
