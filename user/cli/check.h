/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * check.h - the node `latwhy check` read and the findings judged from it,
 * as text or JSON.
 */
#ifndef LW_CHECK_H
#define LW_CHECK_H

#include <stdio.h>

#include "advice/finding.h"
#include "output/json.h"
#include "node/node.h"

/* Findings, most severe first, with their commands. */
void lw_findings_print(FILE *f, const struct lw_findings *fs);
/* The findings as a JSON array (value position: after a key or in an array). */
void lw_findings_json(struct lw_json *j, const struct lw_findings *fs);

/* What was read, one short section per area. */
void lw_node_print(FILE *f, const struct lw_node *n);
/* What was read as a JSON object (value position). */
void lw_node_json(struct lw_json *j, const struct lw_node *n);

/* Shannon entropy in bits of the per-CPU distribution of device interrupts
 * (over the sample when one was taken): higher = more spread. A drift signal. */
double lw_node_irq_entropy(const struct lw_node *n);

#endif /* LW_CHECK_H */
