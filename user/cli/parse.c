// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/parse.h"

int lw_parse_pid(const char *s, int *pid)
{
	unsigned long v;

	if (lw_parse_uint(s, 1, INT_MAX, &v))
		return -EINVAL;
	*pid = (int)v;
	return 0;
}

int lw_parse_duration(const char *s, __u64 *ns)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9},
	};
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0 || *s == '-' || *s == '+')
		return -EINVAL;
	if (!*end) {
		v *= 1e9;
	} else {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].suffix))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		v *= units[i].mult;
	}
	if (v > 1e18)
		return -EINVAL;
	*ns = (__u64)(v + 0.5);
	return 0;
}

int lw_parse_size(const char *s, __u64 *bytes)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!s || !*s || *s == '-' || *s == '+')
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

int lw_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *v)
{
	unsigned long n;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n < min || n > max)
		return -EINVAL;
	*v = n;
	return 0;
}

int lw_parse_listen(const char *s, const char *def_host, char *host, size_t len, unsigned *port)
{
	const char *colon = strrchr(s, ':'), *h = s;
	unsigned long v;
	size_t hl;

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
		h = def_host;
		hl = strlen(h);
	}
	if (hl >= len || lw_parse_uint(colon + 1, 1, 65535, &v))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (unsigned)v;
	return 0;
}

/* What getopt refused: a missing value or an unknown option, named as
 * given. A long option is the previous word; a short one may sit inside a
 * group (-jp), so it is named by optopt. */
static int getopt_error(int c, char **argv, char *err, size_t errlen)
{
	const char *word = argv[optind - 1];

	if (c == ':') {
		if (!strncmp(word, "--", 2))
			snprintf(err, errlen, "option '%.*s' needs a value",
				 (int)strcspn(word, "="), word);
		else
			snprintf(err, errlen, "option '-%c' needs a value", optopt);
	} else if (optopt) {
		snprintf(err, errlen, "unknown option '-%c'", optopt);
	} else {
		snprintf(err, errlen, "unknown option '%.*s'", (int)strcspn(word, "="), word);
	}
	return -EINVAL;
}

int lw_getopt(const struct lw_cmdline *cl, int argc, char **argv, int *first, char *err,
	      size_t errlen)
{
	char shortopts[64];
	int c, ret, nargs;

	snprintf(shortopts, sizeof(shortopts), ":%sh", cl->shortopts);
	optind = 0; /* reset getopt: tests parse several argvs */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, cl->longopts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == ':' || c == '?')
			return getopt_error(c, argv, err, errlen);
		ret = cl->take(cl->ctx, c, optarg, err, errlen);
		if (ret == -ENOENT) /* in the table, taken by no one: a bug */
			return getopt_error('?', argv, err, errlen);
		if (ret)
			return -EINVAL;
	}
	nargs = argc - optind;
	*first = optind;
	if (nargs > cl->max_args) {
		snprintf(err, errlen, cl->max_args ? "" : "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (nargs < cl->min_args) {
		err[0] = '\0';
		return -EINVAL;
	}
	return 0;
}
