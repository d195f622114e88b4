/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nic.h - findings about the NICs themselves: queues, RSS spread,
 * coalescing, and what a guest's virtual NIC leaves to the host.
 *
 * Each needs what the driver reports (ethtool.h): on a NIC whose driver
 * did not answer nothing is judged. Queue IRQs on the wrong NUMA node or
 * on the target's CPUs are irq.c's findings, which read the same
 * NICs.
 */
#ifndef LW_ADVICE_NIC_H
#define LW_ADVICE_NIC_H

#include "advice/finding.h"
#include "node/node.h"

/* Coalescing a packet waits for, without adaptive moderation, worth a finding. */
#define LW_NIC_COALESCE_US 50

/* A NIC's receive interrupts per second over a sample worth judging their
 * spread, and the share of one queue that is a concentration. */
#define LW_NIC_SKEW_RATE  1000
#define LW_NIC_SKEW_SHARE 0.6

/* The CPUs that could serve n's queues: its NUMA node's (when known, on a
 * NUMA machine), online, not isolated. */
struct lw_cpuset lw_nic_serving_cpus(const struct lw_node *n, const struct lw_nic *nic);
/* Receive queues in use: combined channels plus rx-only ones. */
unsigned lw_nic_active_rx(const struct lw_nic *nic);

/* Append the NIC findings for n to out. 0 or -ENOMEM. */
int lw_advise_nic(const struct lw_node *n, struct lw_findings *out);

#endif /* LW_ADVICE_NIC_H */
