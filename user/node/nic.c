// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nic.c - network devices: what they are, their NUMA node, the driver's
 * ethtool facts, their IRQs, and every device's RPS masks.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---- what kind of device ---- */

/* The last component of the symlink ROOT/sys/class/net/DEV/rel into out. */
static void link_base(const struct lw_node *n, const char *dev, const char *rel, char *out,
		      size_t len)
{
	char p[PATH_MAX], l[PATH_MAX];
	const char *base;
	ssize_t r;

	out[0] = '\0';
	if (lw_sysfs_path(p, sizeof(p), n->root, "/sys/class/net/%s/%s", dev, rel))
		return;
	r = readlink(p, l, sizeof(l) - 1);
	if (r <= 0)
		return;
	l[r] = '\0';
	base = strrchr(l, '/') ? strrchr(l, '/') + 1 : l;
	r = (ssize_t)strlen(base);
	if ((size_t)r >= len)
		return; /* no name of a device or driver is this long */
	memcpy(out, base, (size_t)r + 1);
}

/* The PCI function a virtio device sits on: the parent of DEV/device. */
static void parent_base(const struct lw_node *n, const char *dev, char *out, size_t len)
{
	char p[PATH_MAX], *r, *base;

	out[0] = '\0';
	if (lw_sysfs_path(p, sizeof(p), n->root, "/sys/class/net/%s/device/..", dev))
		return;
	r = realpath(p, NULL);
	if (!r)
		return;
	base = strrchr(r, '/');
	if (base && strlen(base + 1) < len)
		memcpy(out, base + 1, strlen(base + 1) + 1);
	free(r);
}

/* Software devices say what they are through their driver's name. */
static enum lw_nic_kind kind_of_driver(const char *drv)
{
	static const struct {
		const char *drv;
		enum lw_nic_kind kind;
	} map[] = {
		{"virtio_net", LW_NIC_VIRTIO}, {"veth", LW_NIC_VETH}, {"bridge", LW_NIC_BRIDGE},
		{"bonding", LW_NIC_BOND},      {"ifb", LW_NIC_IFB},   {"tun", LW_NIC_TUN},
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(drv, map[i].drv))
			return map[i].kind;
	return LW_NIC_VIRTUAL;
}

static void nic_read_kind(const struct lw_node *n, struct lw_nic *nic)
{
	const char *d = nic->name;
	char base[64];

	link_base(n, d, "device/driver", nic->driver, sizeof(nic->driver));
	if (!nic->driver[0] && !nic->et_drvinfo)
		snprintf(nic->driver, sizeof(nic->driver), "%s", nic->drvinfo.driver);
	link_base(n, d, "device", base, sizeof(base));
	if (base[0] && (!strcmp(nic->driver, "virtio_net") || !strncmp(base, "virtio", 6))) {
		nic->kind = LW_NIC_VIRTIO;
		snprintf(nic->virtio, sizeof(nic->virtio), "%.15s", base);
		parent_base(n, d, nic->bus, sizeof(nic->bus));
	} else if (base[0]) {
		nic->kind = LW_NIC_PHYS;
		snprintf(nic->bus, sizeof(nic->bus), "%.31s", base);
	} else if (lw_sysfs_exists(n->root, "/sys/class/net/%s/bridge", d)) {
		nic->kind = LW_NIC_BRIDGE;
	} else if (lw_sysfs_exists(n->root, "/sys/class/net/%s/bonding", d)) {
		nic->kind = LW_NIC_BOND;
	} else if (lw_sysfs_exists(n->root, "/sys/class/net/%s/tun_flags", d)) {
		nic->kind = LW_NIC_TUN;
	} else {
		nic->kind = kind_of_driver(nic->driver);
	}
	if (!nic->bus[0] && nic->drvinfo.bus_info[0] && nic->kind <= LW_NIC_VIRTIO)
		snprintf(nic->bus, sizeof(nic->bus), "%s", nic->drvinfo.bus_info);
}

const char *lw_nic_kind_name(enum lw_nic_kind k)
{
	static const char *const names[] = {
		[LW_NIC_PHYS] = "physical", [LW_NIC_VIRTIO] = "virtio-net", [LW_NIC_VETH] = "veth",
		[LW_NIC_BRIDGE] = "bridge", [LW_NIC_BOND] = "bond",	    [LW_NIC_IFB] = "ifb",
		[LW_NIC_TUN] = "tun/tap",   [LW_NIC_VIRTUAL] = "virtual",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

/* ---- ethtool ---- */

static int nic_read_ethtool(struct lw_nic *nic, const struct lw_ethtool *et)
{
	const char *d = nic->name;

	nic->et_drvinfo = et->drvinfo(et, d, &nic->drvinfo);
	nic->et_channels = et->channels(et, d, &nic->ch);
	nic->rss = malloc(sizeof(*nic->rss));
	if (!nic->rss)
		return -ENOMEM;
	nic->et_rss = et->rss(et, d, nic->rss);
	if (nic->et_rss) {
		free(nic->rss);
		nic->rss = NULL;
	}
	nic->et_coalesce = et->coalesce(et, d, &nic->co);
	nic->et_rings = et->rings(et, d, &nic->rings);
	if (et->speed(et, d, &nic->speed))
		nic->speed = -1;
	if (nic->et_drvinfo)
		memset(&nic->drvinfo, 0, sizeof(nic->drvinfo));
	if (nic->et_channels)
		memset(&nic->ch, 0, sizeof(nic->ch));
	if (nic->et_coalesce)
		memset(&nic->co, 0, sizeof(nic->co));
	if (nic->et_rings)
		memset(&nic->rings, 0, sizeof(nic->rings));
	return 0;
}

unsigned lw_nic_rss_used(const struct lw_nic *nic, unsigned *weight, size_t nr)
{
	unsigned char seen[LW_RSS_MAX] = {0};
	unsigned used = 0;

	if (weight)
		memset(weight, 0, nr * sizeof(*weight));
	for (unsigned i = 0; nic->rss && i < nic->rss->size; i++) {
		unsigned q = nic->rss->table[i];

		if (q < LW_RSS_MAX && !seen[q]) {
			seen[q] = 1;
			used++;
		}
		if (weight && q < nr)
			weight[q]++;
	}
	return used;
}

/* ---- devices ---- */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct lw_nic *)a)->name, ((const struct lw_nic *)b)->name);
}

/* lo carries no NIC's traffic: its type is ARPHRD_LOOPBACK (772). */
static bool is_loopback(const struct lw_node *n, const char *dev)
{
	char b[16];

	if (!strcmp(dev, "lo"))
		return true;
	return !lw_sysfs_read(n->root, b, sizeof(b), "/sys/class/net/%s/type", dev) &&
	       !strcmp(b, "772");
}

static int nic_read_one(struct lw_node *n, struct lw_nic *nic, const struct lw_ethtool *et)
{
	char p[PATH_MAX], b[32];
	int err;

	nic->numa_node = -1;
	nic->speed = -1;
	if (!nic_dir(n, nic->name, "numa_node", p, sizeof(p)) &&
	    !lw_sysfs_read("", b, sizeof(b), "%s", p))
		nic->numa_node = atoi(b);
	err = nic_read_ethtool(nic, et);
	if (err)
		return err;
	nic_read_kind(n, nic);
	err = nic_read_irqs(n, nic);
	return err ? err : lw_nic_read_queues(n, nic);
}

int lw_node_read_nics(struct lw_node *n, const struct lw_ethtool *et)
{
	struct dirent *de;
	int err = 0;
	DIR *d = class_net_open(n);

	READ_NUM(n->root, n->rps_sock_flow_entries, -1, "/proc/sys/net/core/rps_sock_flow_entries");
	if (!d)
		return errno == ENAMETOOLONG ? -ENAMETOOLONG : 0;
	while (!err && (de = readdir(d))) {
		struct lw_nic *v, *nic;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(nic->name) ||
		    is_loopback(n, de->d_name))
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
		err = nic_read_one(n, nic, et);
	}
	closedir(d);
	/* readdir's order is the filesystem's */
	if (n->nr_nics > 1)
		qsort(n->nics, n->nr_nics, sizeof(*n->nics), cmp_name);
	for (size_t i = 0; i < n->nr_nics; i++)
		for (size_t k = 0; k < n->nics[i].nr_irqs; k++) {
			struct lw_irq *q = lw_node_irq_find(n, n->nics[i].irqs[k]);

			if (q)
				q->nic = (int)i;
		}
	return err;
}

void lw_nic_free(struct lw_nic *nic)
{
	free(nic->irqs);
	free(nic->rss);
	free(nic->rxq);
	free(nic->txq);
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
