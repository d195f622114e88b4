// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* check_opts.c - option parsing for `latwhy check ...`. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/check_opts.h"

void lw_check_opts_usage(FILE *f)
{
	fprintf(f,
		"usage: latwhy check [-p PID] [--json] [--root DIR] [--sample MS] "
		"[--fix-script FILE]\n"
		"  -p, --pid PID        also check this process: CPUs, cgroup quota, THP use\n"
		"  -j, --json           one JSON object on stdout\n"
		"  -r, --root DIR       read sysfs/procfs under DIR (default /)\n"
		"  -s, --sample MS      IRQ rate sample length (default %d, 0 = none)\n"
		"  -f, --fix-script F   write F, F.undo and F.verify (never run by latwhy)\n",
		LW_CHECK_SAMPLE_MS);
}

static int parse_uint(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || !*s || *end || v < 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* What getopt refused, named as given: "-x", or the long option's word. */
static int getopt_error(int c, char **argv, char *err, size_t errlen)
{
	const char *what = c == ':' ? "option '%s' needs a value" : "unknown option '%s'";
	char opt[3] = {'-', (char)optopt, 0};

	snprintf(err, errlen, what, optopt ? opt : argv[optind - 1]);
	return -EINVAL;
}

/* One option getopt returned: 0, 1 for --help, or -EINVAL with err set. */
static int parse_one(struct lw_check_opts *o, int c, char **argv, char *err, size_t errlen)
{
	long v;

	switch (c) {
	case 'p':
		if (parse_uint(optarg, INT_MAX, &v) || !v) {
			snprintf(err, errlen, "invalid pid '%s'", optarg);
			return -EINVAL;
		}
		o->pid = (int)v;
		return 0;
	case 'j':
		o->json = true;
		return 0;
	case 'r':
		o->root = optarg;
		return 0;
	case 's':
		if (parse_uint(optarg, 60000, &v)) {
			snprintf(err, errlen, "invalid sample length '%s' (0-60000 ms)", optarg);
			return -EINVAL;
		}
		o->sample_ms = (unsigned)v;
		return 0;
	case 'f':
		o->fix_script = optarg;
		return 0;
	case 'h':
		return 1;
	}
	return getopt_error(c, argv, err, errlen);
}

int lw_check_opts_parse(struct lw_check_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"root", required_argument, NULL, 'r'},
		{"sample", required_argument, NULL, 's'},
		{"fix-script", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->sample_ms = LW_CHECK_SAMPLE_MS;
	o->root = "/";
	opterr = 0;
	optind = 0; /* reset getopt: tests parse several argvs */
	/* '+': stop at the first word that is not an option */
	while ((c = getopt_long(argc, argv, "+:p:jr:s:f:h", longopts, NULL)) != -1) {
		ret = parse_one(o, c, argv, err, errlen);
		if (ret)
			return ret;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}
