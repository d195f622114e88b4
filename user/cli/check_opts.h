/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* check_opts.h - command-line options of `latwhy check`. */
#ifndef LW_CHECK_OPTS_H
#define LW_CHECK_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define LW_CHECK_SAMPLE_MS 1000 /* default IRQ sample */

struct lw_check_opts {
	int pid; /* 0: no target */
	bool json;
	const char *root; /* points into argv, or "/" */
	unsigned sample_ms;
	const char *fix_script; /* NULL: none */
};

/*
 * Parse check's argv (argv[0] is "check"). 0 on success; 1 when --help was
 * asked for; -EINVAL with a one-line message in err otherwise.
 */
int lw_check_opts_parse(struct lw_check_opts *o, int argc, char **argv, char *err, size_t errlen);

void lw_check_opts_usage(FILE *f);

#endif /* LW_CHECK_OPTS_H */
