// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record_opts.c - the options of `latwhy record`: its own and the trace's. */
#include <errno.h>
#include <string.h>

#include "cli/parse.h"
#include "cli/record_opts.h"

enum {
	OPT_FORCE = LW_OPT_OWN,
	OPT_MAX_SIZE,
};

/* record's own options, then the trace's */
static int record_opt(void *ctx, int c, const char *arg, char *err, size_t errlen)
{
	struct lw_record_opts *o = ctx;

	switch (c) {
	case OPT_FORCE:
		o->force = true;
		return 0;
	case 'o':
		if (!*arg || strlen(arg) >= sizeof(o->path)) {
			snprintf(err, errlen, "-o needs a file name");
			return -EINVAL;
		}
		snprintf(o->path, sizeof(o->path), "%s", arg);
		return 0;
	case OPT_MAX_SIZE:
		if (lw_parse_size(arg, &o->max_size)) {
			snprintf(err, errlen, "invalid --max-size '%s' (examples: 64M, 1G)", arg);
			return -EINVAL;
		}
		return 0;
	}
	return lw_trace_opt(&o->trace, c, arg, err, errlen);
}

int lw_record_opts_parse(struct lw_record_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"max-size", required_argument, NULL, OPT_MAX_SIZE},
		{"force", no_argument, NULL, OPT_FORCE},
		LW_TRACE_LONGOPTS,
		{},
	};
	const struct lw_cmdline cl = {
		.shortopts = "o:" LW_TRACE_SHORTOPTS,
		.longopts = longopts,
		.take = record_opt,
		.ctx = o,
	};
	int first, ret;

	memset(o, 0, sizeof(*o));
	lw_trace_opts_init(&o->trace);
	o->max_size = LW_RECORD_DEFAULT_MAX;
	ret = lw_getopt(&cl, argc, argv, &first, err, errlen);
	if (!ret)
		ret = lw_trace_opts_done(&o->trace, err, errlen);
	if (ret)
		return ret;
	if (o->trace.json) {
		snprintf(err, errlen,
			 "record writes a capture, not JSON: read it with "
			 "latwhy report FILE --json");
		return -EINVAL;
	}
	if (!o->path[0]) {
		snprintf(err, errlen, "a capture file is needed: -o FILE");
		return -EINVAL;
	}
	if (!o->trace.conf.duration_ns)
		o->trace.conf.duration_ns = LW_RECORD_DEFAULT_NS;
	return 0;
}

void lw_record_usage(FILE *f)
{
	fprintf(f,
		"Usage: latwhy record TARGET... -o FILE [-d DURATION] [--max-size SIZE]\n"
		"                     [--force] [trace options]\n"
		"\n"
		"Capture a live process's records into FILE (.lwy) to report later, on any\n"
		"machine and without root: latwhy report FILE.\n"
		"\n"
		"  -o, --output FILE   the capture file; refused if it exists, unless --force\n"
		"  -d, --duration DUR  how long to record (default 30s; Ctrl-C ends it early)\n"
		"      --max-size SIZE stop at this file size (default 256M)\n"
		"      --force         replace FILE if it exists\n"
		"  -q, --quiet         no progress line\n"
		"\n"
		"TARGET: -p PID, --comm NAME, --cgroup PATH, --unit NAME, --pods, --pod NS/NAME,\n"
		"as for latwhy trace.\n"
		"Every option of latwhy trace but -j applies (see latwhy trace --help).\n");
}
