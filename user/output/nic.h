/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nic.h - the node's network devices as `latwhy check` shows them: what
 * each is, the driver's channels, RSS table, coalescing and rings, and per
 * queue its IRQ, RPS/RFS and XPS masks.
 */
#ifndef LW_OUTPUT_NIC_H
#define LW_OUTPUT_NIC_H

#include <stdio.h>

#include "node/node.h"
#include "output/json.h"

/* The "network devices" section of the text report. */
void lw_nics_print(FILE *f, const struct lw_node *n);
/* The "network" member of the node's JSON object (a key and its value). */
void lw_nics_json(struct lw_json *j, const struct lw_node *n);

/* What can be changed on this side of a kind of device; NULL: everything. */
const char *lw_nic_kind_note(enum lw_nic_kind k);

#endif /* LW_OUTPUT_NIC_H */
