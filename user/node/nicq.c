// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nicq.c - a network device's queues: RPS, RFS and XPS per queue from
 * /sys/class/net/DEV/queues, and the interrupt of each queue, told by the
 * vector names drivers give them.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node.h"
#include "node/read.h"
#include "node/sysfs.h"

/* Highest N + 1 of the "rx-N" (or "tx-N") directories under DEV/queues. */
static size_t queue_count(const struct lw_node *n, const char *dev, const char *pfx)
{
	char p[PATH_MAX];
	struct dirent *de;
	size_t nr = 0;
	DIR *d;

	if (lw_sysfs_path(p, sizeof(p), n->root, "/sys/class/net/%s/queues", dev))
		return 0;
	d = opendir(p);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, pfx, 3) && lw_is_number(de->d_name + 3) &&
		    (size_t)atoi(de->d_name + 3) + 1 > nr)
			nr = (size_t)atoi(de->d_name + 3) + 1;
	closedir(d);
	return nr;
}

static void queue_read(const struct lw_node *n, const char *dev, bool rx, size_t i,
		       struct lw_nic_queue *q)
{
	const char *file = rx ? "rps_cpus" : "xps_cpus";

	q->flow_cnt = -1;
	/* xps_cpus reads fail (ENOENT) on a single-queue device: absent */
	if (!lw_sysfs_read(n->root, q->mask, sizeof(q->mask), "/sys/class/net/%s/queues/%s-%zu/%s",
			   dev, rx ? "rx" : "tx", i, file))
		lw_cpuset_parse_mask(&q->cpus, q->mask);
	if (rx)
		READ_NUM(n->root, q->flow_cnt, -1, "/sys/class/net/%s/queues/rx-%zu/rps_flow_cnt",
			 dev, i);
}

/* The queue number at the end of s ("3" of "TxRx-3"), -1 if none. */
static int trailing_queue(const char *s)
{
	if (!lw_is_number(s))
		return -1;
	return atoi(s);
}

/*
 * Queue of an IRQ name of nic's: its number, with *dir 'r' (receive), 't'
 * (transmit) or 'b' (a combined channel: both). -1 when the name is not a
 * queue's ("virtio2-config", "eth0" alone, "mlx5_async"). The names are the
 * drivers' own: virtio-net "virtioN-input.Q"/"-output.Q"; mlx5
 * "mlx5_compQ@pci:BUS"; most others "[drv-]DEV-TxRx-Q", "DEV-rx-Q",
 * "DEV-tx-Q", "DEV-fp-Q" (bnx2x) or "DEV-Q".
 */
static int queue_of(const struct lw_nic *nic, const char *name, char *dir)
{
	static const struct {
		const char *pfx;
		char dir;
	} kinds[] = {{"TxRx-", 'b'}, {"txrx-", 'b'}, {"rx-", 'r'},
		     {"tx-", 't'},   {"fp-", 'b'},   {"", 'b'}};
	size_t l = strlen(nic->name), vl = strlen(nic->virtio);
	const char *hit;

	if (vl && !strncmp(name, nic->virtio, vl) && name[vl] == '-') {
		*dir = !strncmp(name + vl + 1, "input.", 6) ? 'r' : 't';
		if (strncmp(name + vl + 1, "input.", 6) && strncmp(name + vl + 1, "output.", 7))
			return -1;
		return trailing_queue(strchr(name + vl, '.') + 1);
	}
	if (!strncmp(name, "mlx5_comp", 9) && nic->bus[0] && strstr(name, nic->bus)) {
		char num[16];

		*dir = 'b';
		snprintf(num, sizeof(num), "%.*s", (int)strcspn(name + 9, "@"), name + 9);
		return trailing_queue(num);
	}
	hit = strstr(name, nic->name);
	if (!hit || (hit != name && hit[-1] != '-') || hit[l] != '-')
		return -1;
	hit += l + 1;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t pl = strlen(kinds[i].pfx);

		if (!strncmp(hit, kinds[i].pfx, pl) && trailing_queue(hit + pl) >= 0) {
			*dir = kinds[i].dir;
			return trailing_queue(hit + pl);
		}
	}
	return -1;
}

/* Each queue's IRQ among the device's vectors (or, without MSI, the IRQs
 * named after it: nic->irqs holds those already). */
static void queue_irqs(struct lw_node *n, struct lw_nic *nic)
{
	for (size_t k = 0; k < nic->nr_irqs; k++) {
		const struct lw_irq *q = lw_node_irq(n, nic->irqs[k]);
		char dir = 0;
		int qn;

		if (!q)
			continue;
		qn = queue_of(nic, q->name, &dir);
		if (qn < 0)
			continue;
		if (dir != 't' && (size_t)qn < nic->nr_rxq && !nic->rxq[qn].irq)
			nic->rxq[qn].irq = q->irq;
		if (dir != 'r' && (size_t)qn < nic->nr_txq && !nic->txq[qn].irq)
			nic->txq[qn].irq = q->irq;
	}
}

int lw_nic_read_queues(struct lw_node *n, struct lw_nic *nic)
{
	nic->nr_rxq = queue_count(n, nic->name, "rx-");
	nic->nr_txq = queue_count(n, nic->name, "tx-");
	nic->rxq = calloc(nic->nr_rxq ? nic->nr_rxq : 1, sizeof(*nic->rxq));
	nic->txq = calloc(nic->nr_txq ? nic->nr_txq : 1, sizeof(*nic->txq));
	if (!nic->rxq || !nic->txq)
		return -ENOMEM;
	for (size_t i = 0; i < nic->nr_rxq; i++)
		queue_read(n, nic->name, true, i, &nic->rxq[i]);
	for (size_t i = 0; i < nic->nr_txq; i++)
		queue_read(n, nic->name, false, i, &nic->txq[i]);
	queue_irqs(n, nic);
	return 0;
}
