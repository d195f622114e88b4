/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* record_opts.h - `latwhy record`: the trace's options plus the file's. */
#ifndef LW_RECORD_OPTS_H
#define LW_RECORD_OPTS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "cli/trace_opts.h"

#define LW_RECORD_DEFAULT_NS  (30ULL * 1000000000ULL)
#define LW_RECORD_DEFAULT_MAX (256ULL << 20)

struct lw_record_opts {
	struct lw_opts trace;	/* what to trace: -p, -d (default 30 s), ... */
	char path[LW_PATH_MAX]; /* -o FILE */
	__u64 max_size;		/* --max-size: the file's cap in bytes */
	bool force;		/* --force: replace an existing FILE */
};

/*
 * Parse record's argv: -o/--output FILE, --max-size SIZE, --force, and every
 * option of the live trace but -j (a capture is read with report --json).
 * 0; 1 when help was asked for; -EINVAL with a one-line message in err.
 */
int lw_record_opts_parse(struct lw_record_opts *o, int argc, char **argv, char *err, size_t errlen);
void lw_record_usage(FILE *f);

#endif /* LW_RECORD_OPTS_H */
