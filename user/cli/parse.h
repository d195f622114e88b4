/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * parse.h - the command line, one way for every command: a parser per kind
 * of value, and one getopt loop with one error path. A command lists its
 * options (its own and, for those that trace, LW_TRACE_OPTIONS) and takes
 * each one getopt returns.
 */
#ifndef LW_PARSE_H
#define LW_PARSE_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Values: 0 and the value stored, or -EINVAL and nothing stored. */

/* A process id: 1 to INT_MAX. */
int lw_parse_pid(const char *s, int *pid);
/* "250ms", "10s", "1.5s", "2m", "800us", "5000ns"; a bare number is seconds. */
int lw_parse_duration(const char *s, __u64 *ns);
/* "64M", "1G", "512k", "4096" (bytes; a trailing B allowed); never 0. */
int lw_parse_size(const char *s, __u64 *bytes);
/* A decimal number from min to max, no sign. */
int lw_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *v);
/* "127.0.0.1:9462", "[::1]:9462", ":9462" (host def_host). */
int lw_parse_listen(const char *s, const char *def_host, char *host, size_t len, unsigned *port);

/* One option getopt returned, with its value (NULL for a flag): 0 taken,
 * -EINVAL with a one-line message in err, -ENOENT when it is none of the
 * taker's (so that a command can hand the trace's options on). */
typedef int (*lw_opt_fn)(void *ctx, int opt, const char *arg, char *err, size_t errlen);

struct lw_cmdline {
	const char *shortopts;	       /* getopt's, without the leading ':' */
	const struct option *longopts; /* "help" (-h) is every command's */
	lw_opt_fn take;
	void *ctx;
	int min_args, max_args; /* the words that are no option */
};

/*
 * Parse argv (argv[0] the command) by cl: every option to take(), in
 * order. 0 with the words that are no option from argv[*first] on; 1 when
 * -h or --help was given; -EINVAL with a one-line message in err (an
 * unknown option, a missing value, a refused value, too many or too few
 * words: "unexpected argument 'x'", or "" for the caller to say which).
 */
int lw_getopt(const struct lw_cmdline *cl, int argc, char **argv, int *first, char *err,
	      size_t errlen);

#endif /* LW_PARSE_H */
