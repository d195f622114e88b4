/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * findings.h - the one text and the one JSON printer of findings, used by
 * `latwhy check` and by the trace summary alike.
 *
 * JSON contract: every key is always present; a field that was not set
 * (seen, why, evidence, cost) is null, never "", and the command lists (fix,
 * persist, rollback, verify) are arrays, [] when empty.
 */
#ifndef LW_FINDINGS_H
#define LW_FINDINGS_H

#include <stdio.h>

#include "advice/finding.h"
#include "output/json.h"

/* Where the text goes: the same lines, placed for their surroundings. */
enum lw_findings_style {
	/* `latwhy check`: a count line (also for none), each finding after a
	 * blank line; long command lists are cut, --json and --fix-script
	 * have them all */
	LW_FINDINGS_REPORT,
	/* a section of the trace summary: "Findings:" when there are any,
	 * each finding indented under it, every command */
	LW_FINDINGS_SECTION,
};

/* Findings as text, most severe first, with their commands. fs may be NULL. */
void lw_findings_print(FILE *f, const struct lw_findings *fs, enum lw_findings_style style);

/* Findings as a JSON array, in their order (value position: after a key or
 * in an array). fs may be NULL: []. */
void lw_findings_json(struct lw_json *j, const struct lw_findings *fs);

#endif /* LW_FINDINGS_H */
