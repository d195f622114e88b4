// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nic.c - network devices: their NUMA node, queue IRQs and RPS masks.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "node/node.h"
#include "node/read.h"
#include "node/sysfs.h"

/* The PCI function behind DEV: device/ itself, or its parent for virtio-net. */
static int nic_dir(struct lw_node *n, const char *dev, const char *what, char *out, size_t len)
{
	static const char *const rel[] = {"device", "device/.."};
	struct stat st;

	for (size_t i = 0; i < 2; i++) {
		if (lw_sysfs_path(out, len, n->root, "/sys/class/net/%s/%s/%s", dev, rel[i], what))
			return -ENAMETOOLONG;
		if (!stat(out, &st))
			return 0;
	}
	return -ENOENT;
}

static int nic_add_irq(struct lw_nic *nic, unsigned irq)
{
	unsigned *v = realloc(nic->irqs, (nic->nr_irqs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	nic->irqs = v;
	nic->irqs[nic->nr_irqs++] = irq;
	return 0;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

static int nic_read_irqs(struct lw_node *n, struct lw_nic *nic)
{
	char p[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *d;

	if (!nic_dir(n, nic->name, "msi_irqs", p, sizeof(p)) && (d = opendir(p))) {
		while (!err && (de = readdir(d)))
			if (lw_is_number(de->d_name))
				err = nic_add_irq(nic, (unsigned)atoi(de->d_name));
		closedir(d);
	} else {
		/* No MSI directory: fall back on the "DEV-..." IRQ name convention. */
		size_t l = strlen(nic->name);

		for (size_t i = 0; !err && i < n->nr_irqs; i++) {
			const char *nm = n->irqs[i].name;
			const char *hit = strstr(nm, nic->name);

			if (hit && (hit == nm || hit[-1] == '-') && (hit[l] == '-' || !hit[l]))
				err = nic_add_irq(nic, n->irqs[i].irq);
		}
	}
	if (nic->nr_irqs)
		qsort(nic->irqs, nic->nr_irqs, sizeof(*nic->irqs), cmp_uint);
	return err;
}

/* /sys/class/net under the node's root; NULL and errno when it cannot be
 * opened (ENAMETOOLONG: the root's path is too long). */
static DIR *class_net_open(const struct lw_node *n)
{
	char p[PATH_MAX];

	if (lw_sysfs_path(p, sizeof(p), n->root, "/sys/class/net")) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return opendir(p);
}

int lw_node_read_nics(struct lw_node *n)
{
	char b[32];
	struct dirent *de;
	int err = 0;
	DIR *d = class_net_open(n);

	if (!d)
		return errno == ENAMETOOLONG ? -ENAMETOOLONG : 0;
	while (!err && (de = readdir(d))) {
		struct lw_nic *v, *nic;
		char dev[PATH_MAX];
		struct stat st;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(nic->name))
			continue;
		/* Virtual devices (lo, bridges, ifb) have no device link. */
		if (lw_sysfs_path(dev, sizeof(dev), n->root, "/sys/class/net/%s/device",
				  de->d_name) ||
		    stat(dev, &st))
			continue;
		v = realloc(n->nics, (n->nr_nics + 1) * sizeof(*v));
		if (!v) {
			err = -ENOMEM;
			break;
		}
		n->nics = v;
		nic = &n->nics[n->nr_nics++];
		memset(nic, 0, sizeof(*nic));
		snprintf(nic->name, sizeof(nic->name), "%.31s", de->d_name);
		nic->numa_node = -1;
		if (!nic_dir(n, nic->name, "numa_node", dev, sizeof(dev)) &&
		    !lw_sysfs_read("", b, sizeof(b), "%s", dev))
			nic->numa_node = atoi(b);
		err = nic_read_irqs(n, nic);
	}
	closedir(d);
	for (size_t i = 0; i < n->nr_nics; i++)
		for (size_t k = 0; k < n->nics[i].nr_irqs; k++) {
			struct lw_irq *q = lw_node_irq_find(n, n->nics[i].irqs[k]);

			if (q)
				q->nic = (int)i;
		}
	return err;
}

static int rps_add(struct lw_node *n, const char *dev, const char *queue, const char *mask)
{
	struct lw_rps *v, *r;
	struct lw_cpuset set = {0};

	if (lw_cpuset_parse_mask(&set, mask) || lw_cpuset_empty(&set))
		return 0;
	v = realloc(n->rps, (n->nr_rps + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	n->rps = v;
	r = &n->rps[n->nr_rps++];
	memset(r, 0, sizeof(*r));
	snprintf(r->dev, sizeof(r->dev), "%s", dev);
	snprintf(r->queue, sizeof(r->queue), "%s", queue);
	snprintf(r->mask, sizeof(r->mask), "%s", mask);
	r->cpus = set;
	return 0;
}

/* By device, then queue number: readdir's order is the filesystem's. */
static int cmp_rps(const void *a, const void *b)
{
	const struct lw_rps *x = a, *y = b;
	int d = strcmp(x->dev, y->dev);

	return d ? d : atoi(x->queue + 3) - atoi(y->queue + 3);
}

/* Every device's receive queues, loopback and virtual ones included: RPS on
 * lo is how a local peer's traffic lands on another CPU's NET_RX. */
int lw_node_read_rps(struct lw_node *n)
{
	char p[PATH_MAX], mask[80];
	struct dirent *de, *qe;
	int err = 0;
	DIR *d = class_net_open(n), *q;

	if (!d)
		return errno == ENAMETOOLONG ? -ENAMETOOLONG : 0;
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(n->rps->dev) ||
		    lw_sysfs_path(p, sizeof(p), n->root, "/sys/class/net/%s/queues", de->d_name))
			continue;
		q = opendir(p);
		if (!q)
			continue;
		while (!err && (qe = readdir(q))) {
			if (strncmp(qe->d_name, "rx-", 3) ||
			    strlen(qe->d_name) >= sizeof(n->rps->queue) ||
			    lw_sysfs_read(n->root, mask, sizeof(mask),
					  "/sys/class/net/%s/queues/%s/rps_cpus", de->d_name,
					  qe->d_name))
				continue;
			err = rps_add(n, de->d_name, qe->d_name, mask);
		}
		closedir(q);
	}
	closedir(d);
	if (n->nr_rps > 1)
		qsort(n->rps, n->nr_rps, sizeof(*n->rps), cmp_rps);
	return err;
}
