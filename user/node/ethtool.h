/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ethtool.h - what a NIC's driver reports through the kernel's ethtool
 * interface, behind one small table of queries so tests replace it.
 *
 * The live implementation asks the kernel (SIOCETHTOOL ioctls, the same
 * requests the ethtool program sends for -i, -l, -x, -c, -g and the link
 * speed); the fixture implementation reads values recorded from real NICs
 * under ROOT/ethtool/DEV/ (see lw_ethtool_fixture()). Every query returns 0
 * or a negative errno: -EOPNOTSUPP when the driver does not implement it
 * (virtio-net has no coalescing before 5.19, veth no rings of its own).
 */
#ifndef LW_ETHTOOL_H
#define LW_ETHTOOL_H

#include <stdbool.h>
#include <stddef.h>

#define LW_RSS_MAX 2048 /* indirection table entries kept */

struct lw_et_drvinfo {
	char driver[32];
	char version[32];
	char fw_version[32];
	char bus_info[32]; /* "0000:81:00.0", "" for virtual devices */
};

/* ethtool -l: what the device could have (max_*) and what it has. */
struct lw_et_channels {
	unsigned max_rx, max_tx, max_other, max_combined;
	unsigned rx, tx, other, combined;
};

/* ethtool -x: the RSS indirection table maps a flow hash to a queue. */
struct lw_et_rss {
	unsigned rx_rings; /* receive queues the table may name */
	unsigned size;	   /* entries in the table, 0 = no table */
	unsigned key_size; /* hash key bytes */
	unsigned short table[LW_RSS_MAX];
};

/* ethtool -c: how long (usecs) or how many frames the NIC waits before it
 * raises an interrupt; adaptive lets the driver pick from the load. */
struct lw_et_coalesce {
	unsigned rx_usecs, rx_frames, tx_usecs, tx_frames;
	bool adaptive_rx, adaptive_tx;
};

/* ethtool -g */
struct lw_et_rings {
	unsigned rx_max, rx, tx_max, tx;
};

struct lw_ethtool {
	const char *root; /* the fixture root for the recorded implementation */
	int (*drvinfo)(const struct lw_ethtool *et, const char *dev, struct lw_et_drvinfo *out);
	int (*channels)(const struct lw_ethtool *et, const char *dev, struct lw_et_channels *out);
	int (*rss)(const struct lw_ethtool *et, const char *dev, struct lw_et_rss *out);
	int (*coalesce)(const struct lw_ethtool *et, const char *dev, struct lw_et_coalesce *out);
	int (*rings)(const struct lw_ethtool *et, const char *dev, struct lw_et_rings *out);
	/* link speed in Mb/s; -1 when the link is down or the speed unknown */
	int (*speed)(const struct lw_ethtool *et, const char *dev, int *mbps);
};

/* The kernel's answers, for the live node. */
const struct lw_ethtool *lw_ethtool_kernel(void);

/* Call fn(ctx, "/ethtool/DEV/WHAT", text, len) with each answer the kernel
 * gives from now on, in the form lw_ethtool_fixture() reads back (for
 * lw_snapshot); fn NULL stops. */
void lw_ethtool_set_recorder(void (*fn)(void *ctx, const char *path, const char *text, size_t len),
			     void *ctx);

/*
 * Values recorded under root: ROOT/ethtool/DEV/{drvinfo,channels,rss,
 * coalesce,rings,link}, one "key value" per line, keys as in struct
 * lw_et_* ("table" holds the RSS entries, space separated). A missing file
 * is a query the driver does not support (-EOPNOTSUPP). et->root is set to
 * root; et must outlive its use.
 */
void lw_ethtool_fixture(struct lw_ethtool *et, const char *root);

#endif /* LW_ETHTOOL_H */
