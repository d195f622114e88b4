// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* trace_opts.c - the options of `latwhy [trace] TARGET...`, which record and
 * serve take too. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/parse.h"
#include "cli/trace_opts.h"
#include "node/cgroup.h"

void lw_trace_usage(FILE *f)
{
	fprintf(f,
		"Usage: latwhy [trace] TARGET... [-d DURATION] [--slow DURATION] [--ref-mhz MHZ]\n"
		"              [--request socket|syscall|uprobe:BINARY:SYMBOL] [--skip TP,...]\n"
		"              [--irq-cost DUR|off] [--capture FILE] [-j] [-q] [-i INTERVAL] [-v]\n"
		"\n"
		"Explain where slow requests of a live process spend their time: CPU clock,\n"
		"interrupts, transparent huge pages, other tasks on its CPU, an idle CPU's\n"
		"wake-up, or its cgroup's CPU quota.\n"
		"\n"
		"TARGET, one or more of (a target not there yet is waited for):\n"
		"  -p, --pid PID          process to trace (all its threads)\n"
		"      --comm NAME        every process named NAME\n"
		"      --cgroup PATH      every process of a cgroup v2 and of the cgroups below\n"
		"                         it, PATH below its root (/system.slice/nginx.service,\n"
		"                         a pod's slice); one removed and made again is followed\n"
		"      --unit NAME        a systemd unit's cgroup (nginx.service), from systemd\n"
		"                         or, without it, searched in the cgroup v2 tree\n"
		"      --pods             every container of every Kubernetes pod on the node,\n"
		"                         found in the kubelet's cgroups, named from\n"
		"                         /var/log/pods; pods that come and go are followed\n"
		"      --pod NS/NAME      the containers of one pod (namespace/name)\n"
		"\n"
		"  -d, --duration DUR     stop after DUR (e.g. 30s, 2m); default: until Ctrl-C\n"
		"      --slow DUR         a request slower than DUR is slow; default: running p99\n"
		"      --ref-mhz MHZ      reference clock for the frequency penalty;\n"
		"                         default: cpuinfo_max_freq\n"
		"      --request SPEC     what a request is: a receive on a socket to the next\n"
		"                         send on it, seen by the socket layer ('socket', the\n"
		"                         default where the kernel has it: 6.3+) or by\n"
		"                         raw_syscalls ('syscall', costlier: every syscall\n"
		"                         on the host is traced); or uprobe:BINARY:SYMBOL,\n"
		"                         one call of a function\n"
		"      --skip TP[,TP...]  do not attach these tracepoints (e.g. cpu_frequency,\n"
		"                         mm_compaction_begin): less overhead, and the causes\n"
		"                         they feed are reported as not measured\n"
		"      --irq-cost DUR     what one interrupt costs a running thread beyond\n"
		"                         its handler (entry, exit; a VM's host); default:\n"
		"                         measured at start; off: irq holds handlers only\n"
		"      --capture FILE     also write the trace's records into a capture, as\n"
		"                         latwhy record does (read it: latwhy report FILE)\n"
		"  -j, --json             NDJSON: a line per slow request, a summary line\n"
		"  -q, --quiet            no live view, only the summary\n"
		"  -i, --interval DUR     live view refresh (default 1s)\n"
		"  -v, --verbose          libbpf diagnostics on stderr\n"
		"  -h, --help             this help\n");
}

static int parse_request(struct lw_opts *o, const char *spec, char *err, size_t errlen)
{
	const char *bin, *sym;

	if (!strcmp(spec, "syscall")) {
		o->conf.req_mode = LW_REQ_SYSCALL;
		return 0;
	}
	if (!strcmp(spec, "socket")) {
		o->conf.req_mode = LW_REQ_SOCKET;
		return 0;
	}
	if (strncmp(spec, "uprobe:", 7))
		goto bad;
	bin = spec + 7;
	sym = strrchr(bin, ':');
	if (!sym || sym == bin || !sym[1] || (size_t)(sym - bin) >= sizeof(o->conf.uprobe_bin) ||
	    strlen(sym + 1) >= sizeof(o->conf.uprobe_sym))
		goto bad;
	memcpy(o->conf.uprobe_bin, bin, sym - bin);
	o->conf.uprobe_bin[sym - bin] = '\0';
	strcpy(o->conf.uprobe_sym, sym + 1);
	o->conf.req_mode = LW_REQ_UPROBE;
	return 0;
bad:
	snprintf(err, errlen,
		 "invalid --request '%s': expected socket, syscall or uprobe:BINARY:SYMBOL", spec);
	return -EINVAL;
}

/* A unit name: no '/', a known unit type after its last '.'. */
static bool unit_name_ok(const char *s)
{
	static const char *const types[] = {".service", ".scope", ".slice"};
	const char *dot = strrchr(s, '.');

	if (!dot || dot == s || strchr(s, '/'))
		return false;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(dot, types[i]))
			return true;
	return false;
}

/* --pod's NAMESPACE/NAME: two DNS names (lowercase letters, digits, '-'
 * and, in a pod's name, '.'), one '/'. */
static bool pod_name_ok(const char *s)
{
	const char *slash = strchr(s, '/');

	if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/') || slash - s > 63 ||
	    strlen(slash + 1) > 253)
		return false;
	for (const char *p = s; *p; p++)
		if (p != slash && !((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
				    *p == '-' || (*p == '.' && p > slash)))
			return false;
	return true;
}

/* -p, --comm, --cgroup, --unit, --pods, --pod: one more target. */
static int parse_target(struct lw_opts *o, int c, const char *arg, char *err, size_t errlen)
{
	struct lw_target_opt *t = &o->conf.targets[o->conf.ntargets];

	if (o->conf.ntargets == LW_MAX_TARGET_OPTS) {
		snprintf(err, errlen, "too many targets (at most %d)", LW_MAX_TARGET_OPTS);
		return -EINVAL;
	}
	memset(t, 0, sizeof(*t));
	switch (c) {
	case LW_OPT_PODS:
		t->kind = LW_TARGET_PODS;
		arg = "";
		break;
	case LW_OPT_POD:
		if (!pod_name_ok(arg)) {
			snprintf(err, errlen,
				 "invalid --pod '%s': NAMESPACE/NAME, such as shop/checkout-7d9f4",
				 arg);
			return -EINVAL;
		}
		t->kind = LW_TARGET_POD;
		break;
	case 'p':
		if (lw_parse_pid(arg, &t->pid)) {
			snprintf(err, errlen, "invalid pid '%s'", arg);
			return -EINVAL;
		}
		t->kind = LW_TARGET_PID;
		break;
	case LW_OPT_COMM:
		if (!*arg || strlen(arg) >= LW_COMM_LEN) {
			snprintf(err, errlen, "--comm needs a process name of 1 to %d characters",
				 LW_COMM_LEN - 1);
			return -EINVAL;
		}
		t->kind = LW_TARGET_COMM;
		break;
	case LW_OPT_CGROUP:
		if (strlen(arg) >= sizeof(t->name) || !lw_cgroup_path_ok(arg)) {
			snprintf(err, errlen,
				 "invalid --cgroup '%s': a path below the cgroup v2 root, such as "
				 "/system.slice/nginx.service",
				 arg);
			return -EINVAL;
		}
		t->kind = LW_TARGET_CGROUP;
		break;
	default:
		if (strlen(arg) >= sizeof(t->name) || !unit_name_ok(arg)) {
			snprintf(err, errlen,
				 "invalid --unit '%s': a unit name such as nginx.service", arg);
			return -EINVAL;
		}
		t->kind = LW_TARGET_UNIT;
	}
	if (c != 'p')
		snprintf(t->name, sizeof(t->name), "%s", arg);
	for (int i = 0; i < o->conf.ntargets; i++)
		if (o->conf.targets[i].kind == t->kind && o->conf.targets[i].pid == t->pid &&
		    !strcmp(o->conf.targets[i].name, t->name)) {
			snprintf(err, errlen, "target '%s' given twice", *arg ? arg : "--pods");
			return -EINVAL;
		}
	o->conf.ntargets++;
	return 0;
}

/* -d, -i and --slow: the durations, each with its own floor. */
static int parse_timing(struct lw_opts *o, int c, const char *arg, char *err, size_t errlen)
{
	switch (c) {
	case 'd':
		if (lw_parse_duration(arg, &o->conf.duration_ns) || !o->conf.duration_ns) {
			snprintf(err, errlen, "invalid duration '%s' (examples: 500ms, 10s, 2m)",
				 arg);
			return -EINVAL;
		}
		return 0;
	case 'i':
		if (lw_parse_duration(arg, &o->conf.interval_ns) ||
		    o->conf.interval_ns < 100000000ULL) {
			snprintf(err, errlen, "invalid interval '%s' (at least 100ms)", arg);
			return -EINVAL;
		}
		return 0;
	}
	if (lw_parse_duration(arg, &o->conf.slow_ns) || !o->conf.slow_ns) {
		snprintf(err, errlen, "invalid --slow '%s' (examples: 2ms, 500us)", arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_ref_mhz(struct lw_opts *o, const char *arg, char *err, size_t errlen)
{
	unsigned long mhz;

	if (lw_parse_uint(arg, 1, 100000, &mhz)) {
		snprintf(err, errlen, "invalid --ref-mhz '%s' (1..100000)", arg);
		return -EINVAL;
	}
	o->conf.ref_khz = (__u32)mhz * 1000;
	return 0;
}

static int parse_irq_cost(struct lw_opts *o, const char *arg, char *err, size_t errlen)
{
	o->conf.irq_cost_set = true;
	if (!strcmp(arg, "off")) {
		o->conf.irq_cost_ns = 0;
		return 0;
	}
	if (lw_parse_duration(arg, &o->conf.irq_cost_ns) || o->conf.irq_cost_ns > 1000000ULL) {
		snprintf(err, errlen, "invalid --irq-cost '%s' (off, or up to 1ms: 2us, 800ns)",
			 arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_skip(struct lw_opts *o, const char *arg, char *err, size_t errlen)
{
	if (strlen(arg) >= sizeof(o->conf.skip)) {
		snprintf(err, errlen, "--skip list too long");
		return -EINVAL;
	}
	strcpy(o->conf.skip, arg);
	return 0;
}

int lw_trace_opt(void *ctx, int c, const char *arg, char *err, size_t errlen)
{
	struct lw_opts *o = ctx;

	switch (c) {
	case 'p':
	case LW_OPT_COMM:
	case LW_OPT_CGROUP:
	case LW_OPT_UNIT:
	case LW_OPT_PODS:
	case LW_OPT_POD:
		return parse_target(o, c, arg, err, errlen);
	case 'd':
	case 'i':
	case LW_OPT_SLOW:
		return parse_timing(o, c, arg, err, errlen);
	case LW_OPT_REF:
		return parse_ref_mhz(o, arg, err, errlen);
	case LW_OPT_REQUEST:
		return parse_request(o, arg, err, errlen);
	case LW_OPT_SKIP:
		return parse_skip(o, arg, err, errlen);
	case LW_OPT_IRQ_COST:
		return parse_irq_cost(o, arg, err, errlen);
	case LW_OPT_CAPTURE:
		if (!*arg || strlen(arg) >= sizeof(o->capture)) {
			snprintf(err, errlen, "invalid --capture file '%s'", arg);
			return -EINVAL;
		}
		snprintf(o->capture, sizeof(o->capture), "%s", arg);
		return 0;
	case 'j':
		o->json = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'v':
		o->conf.verbose = true;
		return 0;
	}
	return -ENOENT;
}

void lw_trace_opts_init(struct lw_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->conf.interval_ns = 1000000000ULL;
}

int lw_trace_opts_done(struct lw_opts *o, char *err, size_t errlen)
{
	if (!o->conf.ntargets) {
		snprintf(err, errlen, LW_NO_TARGET);
		return -EINVAL;
	}
	if (o->conf.ntargets == 1 && o->conf.targets[0].kind == LW_TARGET_PID)
		o->conf.pid = o->conf.targets[0].pid;
	return 0;
}

int lw_trace_opts_parse(struct lw_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	static const struct option longopts[] = {LW_TRACE_LONGOPTS, {}};
	const struct lw_cmdline cl = {
		.shortopts = LW_TRACE_SHORTOPTS,
		.longopts = longopts,
		.take = lw_trace_opt,
		.ctx = o,
	};
	int first, ret;

	lw_trace_opts_init(o);
	ret = lw_getopt(&cl, argc, argv, &first, err, errlen);
	if (ret)
		return ret;
	return lw_trace_opts_done(o, err, errlen);
}

void lw_trace_opts_targets(const struct lw_opts *o, char *buf, size_t len)
{
	static const char *const kinds[] = {
		[LW_TARGET_PID] = "pid",   [LW_TARGET_COMM] = "comm", [LW_TARGET_CGROUP] = "cgroup",
		[LW_TARGET_UNIT] = "unit", [LW_TARGET_PODS] = "pods", [LW_TARGET_POD] = "pod",
	};
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < o->conf.ntargets && n < len; i++) {
		const struct lw_target_opt *t = &o->conf.targets[i];

		if (t->kind == LW_TARGET_PID)
			n += snprintf(buf + n, len - n, "%spid %d", i ? ", " : "", t->pid);
		else if (t->kind == LW_TARGET_PODS)
			n += snprintf(buf + n, len - n, "%spods", i ? ", " : "");
		else
			n += snprintf(buf + n, len - n, "%s%s %s", i ? ", " : "", kinds[t->kind],
				      t->name);
	}
}
