/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * read.h - the readers lw_node_read() runs, one per concern, private to node/.
 *
 * Each fills its part of struct lw_node from n->root. A missing file leaves
 * the documented "absent" value; only allocation and path-length failures
 * are errors (negative errno).
 */
#ifndef LW_NODE_READ_H
#define LW_NODE_READ_H

#include <stdbool.h>

#include "node/node.h"
#include "node/sysfs.h"

/* A number file into out, or absent when it is missing or not a number;
 * evaluates to lw_sysfs_read()'s or lw_parse_ll()'s result. */
#define READ_NUM(root, out, absent, ...)                                                           \
	({                                                                                         \
		char _b[64];                                                                       \
		long long _v;                                                                      \
		int _e = lw_sysfs_read(root, _b, sizeof(_b), __VA_ARGS__);                         \
		if (!_e)                                                                           \
			_e = lw_parse_ll(_b, &_v);                                                 \
		(out) = _e ? (absent) : (__typeof__(out))_v;                                       \
		_e;                                                                                \
	})

/* cpu.c: CPUs first (everything per CPU is sized by them), then NUMA. */
int lw_node_read_cpus(struct lw_node *n);
int lw_node_read_numa(struct lw_node *n);
void lw_node_read_vm(struct lw_node *n);
void lw_node_read_freq(struct lw_node *n);
void lw_node_read_idle(struct lw_node *n);
/* thp.c */
void lw_node_read_thp(struct lw_node *n);
/* irq.c: sample re-reads the counts into each IRQ's (and NET_RX's) delta. */
int lw_node_read_irqs(struct lw_node *n);
int lw_node_read_interrupts(struct lw_node *n, bool sample);
int lw_node_read_net_rx(struct lw_node *n, bool sample);
struct lw_irq *lw_node_irq_find(struct lw_node *n, unsigned irq);
/* irqbalance.c */
void lw_node_read_irqbalance(struct lw_node *n);
/* nic.c: after the IRQs, which it tags with their NIC; nicq.c: a NIC's
 * queues, after its IRQs. */
int lw_node_read_nics(struct lw_node *n, const struct lw_ethtool *et);
int lw_nic_read_queues(struct lw_node *n, struct lw_nic *nic);
void lw_nic_free(struct lw_nic *nic);
int lw_node_read_rps(struct lw_node *n);
/* target.c */
int lw_node_read_target(struct lw_node *n, int pid);
/* cglimit.c: t->cgroup's levels below base (the hierarchy's mount: v2, or
 * v1's cpu one), each one's limit, owner, and the one that binds. */
int lw_node_read_cg_limits(struct lw_node *n, struct lw_target *t, const char *base, bool v1);
/* tasks.c: the threads' CPU time, the JVM's processor count, and the
 * runtime told by one smaps mapping line. */
void lw_node_read_tasks(struct lw_node *n, struct lw_target *t);
void lw_node_read_cmdline(struct lw_node *n, struct lw_target *t);
void lw_node_runtime_of_mapping(struct lw_target *t, const char *line);

#endif /* LW_NODE_READ_H */
