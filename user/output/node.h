/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * node.h - the node `latwhy check` read, as text or JSON.
 *
 * The findings judged from it go through output/findings.h, the printers the
 * trace summary uses too, so a finding reads the same in both.
 */
#ifndef LW_OUTPUT_NODE_H
#define LW_OUTPUT_NODE_H

#include <stdio.h>

#include "output/json.h"
#include "node/node.h"

/* What was read, one short section per area. */
void lw_node_print(FILE *f, const struct lw_node *n);
/* What was read as a JSON object (value position). */
void lw_node_json(struct lw_json *j, const struct lw_node *n);

#endif /* LW_OUTPUT_NODE_H */
