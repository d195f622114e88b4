// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record_opts.c - record takes its own options out, the trace parser the rest. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/record_opts.h"

int lw_parse_size(const char *s, __u64 *bytes)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || !v || v > (~0ULL >> shift))
		return -EINVAL;
	*bytes = v << shift;
	return 0;
}

/* One of record's own options at argv[*i]: 1 taken, 0 not ours, -EINVAL. */
static int take_own(void *ctx, int argc, char **argv, int *i, char *err, size_t errlen)
{
	struct lw_record_opts *o = ctx;
	const char *a = argv[*i], *v;

	if (!strcmp(a, "--force")) {
		o->force = true;
		return 1;
	}
	if (!strcmp(a, "-o") || !strncmp(a, "--output", 8)) {
		v = a[1] == 'o' ? (*i + 1 < argc ? argv[++*i] : NULL)
				: lw_opt_value(argc, argv, i, "--output");
		if (!v || !*v) {
			snprintf(err, errlen, "-o needs a file name");
			return -EINVAL;
		}
		snprintf(o->path, sizeof(o->path), "%s", v);
		return 1;
	}
	if (!strncmp(a, "-o", 2)) {
		snprintf(o->path, sizeof(o->path), "%s", a + 2);
		return 1;
	}
	if (!strncmp(a, "--max-size", 10)) {
		v = lw_opt_value(argc, argv, i, "--max-size");
		if (!v || lw_parse_size(v, &o->max_size)) {
			snprintf(err, errlen, "invalid --max-size '%s' (examples: 64M, 1G)",
				 v ? v : "");
			return -EINVAL;
		}
		return 1;
	}
	return 0;
}

int lw_record_opts_parse(struct lw_record_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	char **rest;
	int n, ret;

	memset(o, 0, sizeof(*o));
	o->max_size = LW_RECORD_DEFAULT_MAX;
	rest = lw_opts_rest(argc, argv, take_own, o, &n, err, errlen);
	if (!rest)
		return -EINVAL;
	ret = lw_opts_parse(&o->trace, n, rest, err, errlen);
	free(rest);
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
	fprintf(f, "Usage: latwhy record TARGET... -o FILE [-d DURATION] [--max-size SIZE]\n"
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
		   "TARGET: -p PID, --comm NAME, --cgroup PATH, --unit NAME, as for latwhy trace.\n"
		   "Every option of latwhy trace but -j applies (see latwhy trace --help).\n");
}
