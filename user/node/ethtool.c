// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ethtool.c - the NIC queries of ethtool.h: the kernel's SIOCETHTOOL ioctl
 * on the live node, files recorded from real NICs on fixture trees.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "node/ethtool.h"
#include "node/sysfs.h"

/* ---- kernel ---- */

/* One ethtool request on dev; any socket carries it (ethtool uses UDP). */
static int et_ioctl(const char *dev, void *data)
{
	struct ifreq ifr;
	int fd, err = 0;

	if (strlen(dev) >= sizeof(ifr.ifr_name))
		return -ENAMETOOLONG;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = data;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	return err;
}

static int k_drvinfo(const struct lw_ethtool *et, const char *dev, struct lw_et_drvinfo *out)
{
	struct ethtool_drvinfo d = {.cmd = ETHTOOL_GDRVINFO};
	int err = et_ioctl(dev, &d);

	if (err)
		return err;
	snprintf(out->driver, sizeof(out->driver), "%.31s", d.driver);
	snprintf(out->version, sizeof(out->version), "%.31s", d.version);
	snprintf(out->fw_version, sizeof(out->fw_version), "%.31s", d.fw_version);
	snprintf(out->bus_info, sizeof(out->bus_info), "%.31s", d.bus_info);
	return 0;
}

static int k_channels(const struct lw_ethtool *et, const char *dev, struct lw_et_channels *out)
{
	struct ethtool_channels c = {.cmd = ETHTOOL_GCHANNELS};
	int err = et_ioctl(dev, &c);

	if (err)
		return err;
	*out = (struct lw_et_channels){
		.max_rx = c.max_rx,
		.max_tx = c.max_tx,
		.max_other = c.max_other,
		.max_combined = c.max_combined,
		.rx = c.rx_count,
		.tx = c.tx_count,
		.other = c.other_count,
		.combined = c.combined_count,
	};
	return 0;
}

/* The old interface for drivers without get_rxfh key support. */
static int k_rss_indir(const char *dev, struct lw_et_rss *out)
{
	struct ethtool_rxfh_indir probe = {.cmd = ETHTOOL_GRXFHINDIR};
	struct ethtool_rxfh_indir *t;
	int err = et_ioctl(dev, &probe);

	if (err)
		return err;
	if (!probe.size)
		return 0;
	t = calloc(1, sizeof(*t) + probe.size * sizeof(t->ring_index[0]));
	if (!t)
		return -ENOMEM;
	t->cmd = ETHTOOL_GRXFHINDIR;
	t->size = probe.size;
	err = et_ioctl(dev, t);
	if (!err) {
		out->size = t->size < LW_RSS_MAX ? t->size : LW_RSS_MAX;
		for (unsigned i = 0; i < out->size; i++)
			out->table[i] = (unsigned short)t->ring_index[i];
	}
	free(t);
	return err;
}

static int k_rss(const struct lw_ethtool *et, const char *dev, struct lw_et_rss *out)
{
	struct ethtool_rxnfc rings = {.cmd = ETHTOOL_GRXRINGS};
	struct ethtool_rxfh probe = {.cmd = ETHTOOL_GRSSH};
	struct ethtool_rxfh *h;
	int err;

	memset(out, 0, sizeof(*out));
	if (!et_ioctl(dev, &rings))
		out->rx_rings = (unsigned)rings.data;
	err = et_ioctl(dev, &probe);
	if (err == -EOPNOTSUPP)
		return k_rss_indir(dev, out);
	if (err)
		return err;
	out->key_size = probe.key_size;
	if (!probe.indir_size)
		return 0;
	/* the table, then the key, in one buffer after the header */
	h = calloc(1, sizeof(*h) + probe.indir_size * sizeof(__u32) + probe.key_size);
	if (!h)
		return -ENOMEM;
	h->cmd = ETHTOOL_GRSSH;
	h->indir_size = probe.indir_size;
	h->key_size = probe.key_size;
	err = et_ioctl(dev, h);
	if (!err) {
		out->size = h->indir_size < LW_RSS_MAX ? h->indir_size : LW_RSS_MAX;
		for (unsigned i = 0; i < out->size; i++)
			out->table[i] = (unsigned short)h->rss_config[i];
	}
	free(h);
	return err;
}

static int k_coalesce(const struct lw_ethtool *et, const char *dev, struct lw_et_coalesce *out)
{
	struct ethtool_coalesce c = {.cmd = ETHTOOL_GCOALESCE};
	int err = et_ioctl(dev, &c);

	if (err)
		return err;
	*out = (struct lw_et_coalesce){
		.rx_usecs = c.rx_coalesce_usecs,
		.rx_frames = c.rx_max_coalesced_frames,
		.tx_usecs = c.tx_coalesce_usecs,
		.tx_frames = c.tx_max_coalesced_frames,
		.adaptive_rx = c.use_adaptive_rx_coalesce,
		.adaptive_tx = c.use_adaptive_tx_coalesce,
	};
	return 0;
}

static int k_rings(const struct lw_ethtool *et, const char *dev, struct lw_et_rings *out)
{
	struct ethtool_ringparam r = {.cmd = ETHTOOL_GRINGPARAM};
	int err = et_ioctl(dev, &r);

	if (err)
		return err;
	*out = (struct lw_et_rings){
		.rx_max = r.rx_max_pending,
		.rx = r.rx_pending,
		.tx_max = r.tx_max_pending,
		.tx = r.tx_pending,
	};
	return 0;
}

/*
 * ETHTOOL_GLINKSETTINGS takes a handshake: asked with no room for the link
 * mode masks, the kernel answers with minus the words it needs; the second
 * request carries them (three masks of that many words).
 */
static int k_speed(const struct lw_ethtool *et, const char *dev, int *mbps)
{
	struct {
		struct ethtool_link_settings s;
		__u32 masks[3 * 127];
	} req;
	int err;

	memset(&req, 0, sizeof(req));
	req.s.cmd = ETHTOOL_GLINKSETTINGS;
	err = et_ioctl(dev, &req);
	if (err)
		return err;
	if (req.s.link_mode_masks_nwords >= 0 || req.s.cmd != ETHTOOL_GLINKSETTINGS)
		return -EPROTO;
	req.s.link_mode_masks_nwords = (__s8)-req.s.link_mode_masks_nwords;
	err = et_ioctl(dev, &req);
	if (err)
		return err;
	*mbps = req.s.speed == (__u32)SPEED_UNKNOWN || req.s.speed > INT_MAX ? -1
									     : (int)req.s.speed;
	return 0;
}

/* ---- the kernel's answers, recorded for a node snapshot ---- */

/* per thread, as sysfs.c's */
static __thread void (*recorder)(void *ctx, const char *path, const char *text, size_t len);
static __thread void *recorder_ctx;

void lw_ethtool_set_recorder(void (*fn)(void *ctx, const char *path, const char *text, size_t len),
			     void *ctx)
{
	recorder = fn;
	recorder_ctx = ctx;
}

/* The answer to what for dev, as the fixture reader reads it back. */
static void emit(const char *dev, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void emit(const char *dev, const char *what, const char *fmt, ...)
{
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	va_list ap;
	FILE *f;

	if (!recorder)
		return;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	snprintf(path, sizeof(path), "/ethtool/%s/%s", dev, what);
	recorder(recorder_ctx, path, text, len);
	free(text);
}

static int r_k_drvinfo(const struct lw_ethtool *et, const char *dev, struct lw_et_drvinfo *o)
{
	int err = k_drvinfo(et, dev, o);

	if (!err)
		emit(dev, "drvinfo", "driver %s\nversion %s\nfw_version %s\nbus_info %s\n",
		     o->driver, o->version, o->fw_version, o->bus_info);
	return err;
}

static int r_k_channels(const struct lw_ethtool *et, const char *dev, struct lw_et_channels *o)
{
	int err = k_channels(et, dev, o);

	if (!err)
		emit(dev, "channels",
		     "max_rx %u\nmax_tx %u\nmax_other %u\nmax_combined %u\nrx %u\ntx %u\n"
		     "other %u\ncombined %u\n",
		     o->max_rx, o->max_tx, o->max_other, o->max_combined, o->rx, o->tx, o->other,
		     o->combined);
	return err;
}

static int r_k_rss(const struct lw_ethtool *et, const char *dev, struct lw_et_rss *o)
{
	char *table = NULL;
	size_t len = 0;
	int err = k_rss(et, dev, o);
	FILE *f;

	if (err || !recorder || !(f = open_memstream(&table, &len)))
		return err;
	for (unsigned i = 0; i < o->size; i++)
		fprintf(f, "%s%u", i ? " " : "", o->table[i]);
	fclose(f);
	emit(dev, "rss", "rx_rings %u\nkey_size %u\n%s%s%s", o->rx_rings, o->key_size,
	     o->size ? "table " : "", table, o->size ? "\n" : "");
	free(table);
	return err;
}

static int r_k_coalesce(const struct lw_ethtool *et, const char *dev, struct lw_et_coalesce *o)
{
	int err = k_coalesce(et, dev, o);

	if (!err)
		emit(dev, "coalesce",
		     "rx_usecs %u\nrx_frames %u\ntx_usecs %u\ntx_frames %u\nadaptive_rx %d\n"
		     "adaptive_tx %d\n",
		     o->rx_usecs, o->rx_frames, o->tx_usecs, o->tx_frames, o->adaptive_rx,
		     o->adaptive_tx);
	return err;
}

static int r_k_rings(const struct lw_ethtool *et, const char *dev, struct lw_et_rings *o)
{
	int err = k_rings(et, dev, o);

	if (!err)
		emit(dev, "rings", "rx_max %u\nrx %u\ntx_max %u\ntx %u\n", o->rx_max, o->rx,
		     o->tx_max, o->tx);
	return err;
}

static int r_k_speed(const struct lw_ethtool *et, const char *dev, int *mbps)
{
	int err = k_speed(et, dev, mbps);

	if (!err)
		emit(dev, "link", "speed %d\n", *mbps);
	return err;
}

static const struct lw_ethtool kernel_ops = {
	.drvinfo = r_k_drvinfo,
	.channels = r_k_channels,
	.rss = r_k_rss,
	.coalesce = r_k_coalesce,
	.rings = r_k_rings,
	.speed = r_k_speed,
};

const struct lw_ethtool *lw_ethtool_kernel(void)
{
	return &kernel_ops;
}

/* ---- recorded ---- */

/* The value of key in ROOT/ethtool/DEV/what into buf; -EOPNOTSUPP when the
 * file is missing (a query the driver lacks), -ENOENT when the key is. */
static int rec_get(const struct lw_ethtool *et, const char *dev, const char *what, const char *key,
		   char *buf, size_t len)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0, kl = strlen(key);
	int err = -ENOENT;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), et->root, "/ethtool/%s/%s", dev, what))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -EOPNOTSUPP;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, key, kl) || (line[kl] != ' ' && line[kl] != '\t'))
			continue;
		lw_rtrim(line);
		snprintf(buf, len, "%s", line + kl + strspn(line + kl, " \t"));
		err = 0;
		break;
	}
	free(line);
	fclose(f);
	return err;
}

static int rec_uint(const struct lw_ethtool *et, const char *dev, const char *what, const char *key,
		    unsigned *out)
{
	char b[64];
	long long v;
	int err = rec_get(et, dev, what, key, b, sizeof(b));

	if (!err)
		err = lw_parse_ll(b, &v);
	if (!err)
		*out = (unsigned)v;
	return err;
}

/* Several keys of one file; the first error (a missing file) wins. */
#define REC_UINTS(et, dev, what, ...)                                                              \
	({                                                                                         \
		struct {                                                                           \
			const char *k;                                                             \
			unsigned *v;                                                               \
		} _kv[] = {__VA_ARGS__};                                                           \
		int _e = 0;                                                                        \
		for (size_t _i = 0; !_e && _i < sizeof(_kv) / sizeof(_kv[0]); _i++)                \
			_e = rec_uint(et, dev, what, _kv[_i].k, _kv[_i].v);                        \
		_e;                                                                                \
	})

static int r_drvinfo(const struct lw_ethtool *et, const char *dev, struct lw_et_drvinfo *out)
{
	int err = rec_get(et, dev, "drvinfo", "driver", out->driver, sizeof(out->driver));

	if (err)
		return err;
	rec_get(et, dev, "drvinfo", "version", out->version, sizeof(out->version));
	rec_get(et, dev, "drvinfo", "fw_version", out->fw_version, sizeof(out->fw_version));
	rec_get(et, dev, "drvinfo", "bus_info", out->bus_info, sizeof(out->bus_info));
	return 0;
}

static int r_channels(const struct lw_ethtool *et, const char *dev, struct lw_et_channels *o)
{
	return REC_UINTS(et, dev, "channels", {"max_rx", &o->max_rx}, {"max_tx", &o->max_tx},
			 {"max_other", &o->max_other}, {"max_combined", &o->max_combined},
			 {"rx", &o->rx}, {"tx", &o->tx}, {"other", &o->other},
			 {"combined", &o->combined});
}

static int r_rss(const struct lw_ethtool *et, const char *dev, struct lw_et_rss *out)
{
	char b[LW_RSS_MAX * 6];
	char *p, *end;
	int err;

	memset(out, 0, sizeof(*out));
	err = REC_UINTS(et, dev, "rss", {"rx_rings", &out->rx_rings}, {"key_size", &out->key_size});
	if (err)
		return err;
	if (rec_get(et, dev, "rss", "table", b, sizeof(b)))
		return 0;
	for (p = b; out->size < LW_RSS_MAX; p = end) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		out->table[out->size++] = (unsigned short)v;
	}
	return 0;
}

static int r_coalesce(const struct lw_ethtool *et, const char *dev, struct lw_et_coalesce *o)
{
	unsigned arx = 0, atx = 0;
	int err = REC_UINTS(et, dev, "coalesce", {"rx_usecs", &o->rx_usecs},
			    {"rx_frames", &o->rx_frames}, {"tx_usecs", &o->tx_usecs},
			    {"tx_frames", &o->tx_frames}, {"adaptive_rx", &arx},
			    {"adaptive_tx", &atx});

	o->adaptive_rx = arx;
	o->adaptive_tx = atx;
	return err;
}

static int r_rings(const struct lw_ethtool *et, const char *dev, struct lw_et_rings *o)
{
	return REC_UINTS(et, dev, "rings", {"rx_max", &o->rx_max}, {"rx", &o->rx},
			 {"tx_max", &o->tx_max}, {"tx", &o->tx});
}

static int r_speed(const struct lw_ethtool *et, const char *dev, int *mbps)
{
	char b[32];
	long long v;
	int err = rec_get(et, dev, "link", "speed", b, sizeof(b));

	if (!err)
		err = lw_parse_ll(b, &v);
	if (!err)
		*mbps = v < 0 || v > INT_MAX ? -1 : (int)v;
	return err;
}

void lw_ethtool_fixture(struct lw_ethtool *et, const char *root)
{
	*et = (struct lw_ethtool){
		.root = root,
		.drvinfo = r_drvinfo,
		.channels = r_channels,
		.rss = r_rss,
		.coalesce = r_coalesce,
		.rings = r_rings,
		.speed = r_speed,
	};
}
