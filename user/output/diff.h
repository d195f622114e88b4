/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* diff.h - latwhy diff's printers: two captures side by side, text or JSON. */
#ifndef LW_OUTPUT_DIFF_H
#define LW_OUTPUT_DIFF_H

#include <stdio.h>

#include "advice/diff.h"
#include "advice/finding.h"

/* One side: its file, host, summary, and the findings of its own node
 * (the fixes diff offers the slower side). */
struct lw_diff_side {
	const char *file;
	const char *host;
	const struct lw_summary *s;
	const struct lw_findings *fs;
};

void lw_diff_print(FILE *f, const struct lw_diff_side side[2], const struct lw_diff *d);
void lw_diff_json(FILE *f, const struct lw_diff_side side[2], const struct lw_diff *d);

#endif /* LW_OUTPUT_DIFF_H */
