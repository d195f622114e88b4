// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nic.c - print the node's network devices, as text and as JSON.
 *
 * A query the driver did not answer prints "n/a" (text) or null (JSON):
 * absent, not zero.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "advice/nic.h"
#include "output/nic.h"

const char *lw_nic_kind_note(enum lw_nic_kind k)
{
	switch (k) {
	case LW_NIC_PHYS:
		return NULL;
	case LW_NIC_VIRTIO:
		return "a guest's NIC: the guest can set queue pairs up to the host's maximum, "
		       "virtqueue IRQ affinity, RPS/RFS/XPS and ring sizes; more queues, the "
		       "host NIC's RSS, coalescing and IRQs and the vhost threads are the host's";
	case LW_NIC_VETH:
		return "software device: no hardware queues, IRQs or coalescing; what it "
		       "receives is processed on the sender's CPU unless RPS sends it elsewhere";
	default:
		return "software device: no hardware queues or IRQs of its own; tune the NICs "
		       "under it";
	}
}

static const char *cpus(const struct lw_cpuset *s, char *b, size_t len)
{
	lw_cpuset_format(s, b, len);
	return b[0] ? b : "-";
}

/* Interrupts per second over check's sample; -1 when none was taken. */
static double queue_rate(const struct lw_node *n, const struct lw_irq *q)
{
	unsigned long long v = 0;

	if (!q || !q->delta || !n->sample_ms)
		return -1;
	for (int c = 0; c < n->nr_cpus; c++)
		v += q->delta[c];
	return v * 1000.0 / n->sample_ms;
}

static void print_rss(FILE *f, const struct lw_nic *nic)
{
	unsigned w[LW_RSS_MAX];
	unsigned used, top = 0;

	if (nic->et_rss) {
		fprintf(f, "    RSS: n/a (%s)\n", strerror(-nic->et_rss));
		return;
	}
	used = lw_nic_rss_used(nic, w, LW_RSS_MAX);
	if (!nic->rss->size) {
		fprintf(f, "    RSS: no indirection table, %u rx ring%s, hash key %u bytes\n",
			nic->rss->rx_rings, nic->rss->rx_rings == 1 ? "" : "s", nic->rss->key_size);
		return;
	}
	for (unsigned i = 0; i < nic->rss->size; i++)
		if (nic->rss->table[i] + 1U > top)
			top = nic->rss->table[i] + 1U;
	fprintf(f,
		"    RSS: %u entries over %u of %u active queues, hash key %u bytes; entries per "
		"queue:",
		nic->rss->size, used, lw_nic_active_rx(nic), nic->rss->key_size);
	for (unsigned q = 0; q < top && q < LW_RSS_MAX; q++)
		fprintf(f, " %u:%u", q, w[q]);
	fprintf(f, "\n");
}

static void print_ethtool(FILE *f, const struct lw_nic *nic)
{
	const struct lw_et_channels *c = &nic->ch;
	const struct lw_et_coalesce *co = &nic->co;

	if (nic->et_channels)
		fprintf(f, "    channels: n/a (%s)\n", strerror(-nic->et_channels));
	else
		fprintf(f,
			"    channels: combined %u of %u, rx %u of %u, tx %u of %u, other %u of "
			"%u\n",
			c->combined, c->max_combined, c->rx, c->max_rx, c->tx, c->max_tx, c->other,
			c->max_other);
	print_rss(f, nic);
	if (nic->et_coalesce)
		fprintf(f, "    coalescing: n/a (%s)\n", strerror(-nic->et_coalesce));
	else
		fprintf(f,
			"    coalescing: rx %u us / %u frames, tx %u us / %u frames, adaptive rx "
			"%s, "
			"tx %s\n",
			co->rx_usecs, co->rx_frames, co->tx_usecs, co->tx_frames,
			co->adaptive_rx ? "on" : "off", co->adaptive_tx ? "on" : "off");
	if (nic->et_rings)
		fprintf(f, "    rings: n/a (%s)\n", strerror(-nic->et_rings));
	else
		fprintf(f, "    rings: rx %u of %u, tx %u of %u\n", nic->rings.rx,
			nic->rings.rx_max, nic->rings.tx, nic->rings.tx_max);
}

static void print_queue(FILE *f, const struct lw_node *n, const char *dir, size_t i,
			const struct lw_nic_queue *q, bool rx)
{
	const struct lw_irq *irq = q->irq ? lw_node_irq(n, q->irq) : NULL;
	char name[16], a[128], b[128], rate[24] = "-";

	snprintf(name, sizeof(name), "%s-%zu", dir, i);
	fprintf(f, "    %-7s", name);
	if (irq && queue_rate(n, irq) >= 0)
		snprintf(rate, sizeof(rate), "%.0f", queue_rate(n, irq));
	if (irq)
		fprintf(f, " %5u %-9s %-9s %8s", irq->irq, irq->affinity[0] ? irq->affinity : "?",
			cpus(&irq->eff, b, sizeof(b)), rate);
	else
		fprintf(f, " %5s %-9s %-9s %8s", "-", "-", "-", "-");
	if (rx && q->flow_cnt >= 0)
		fprintf(f, " %-9s %ld\n", cpus(&q->cpus, a, sizeof(a)), q->flow_cnt);
	else if (rx)
		fprintf(f, " %-9s -\n", cpus(&q->cpus, a, sizeof(a)));
	else
		fprintf(f, " %s\n", q->mask[0] ? cpus(&q->cpus, a, sizeof(a)) : "n/a");
}

static void print_nic(FILE *f, const struct lw_node *n, const struct lw_nic *nic)
{
	const char *note = lw_nic_kind_note(nic->kind);

	fprintf(f, "  %s: %s, driver %s", nic->name, lw_nic_kind_name(nic->kind),
		nic->driver[0] ? nic->driver : "?");
	if (nic->drvinfo.version[0])
		fprintf(f, " %s", nic->drvinfo.version);
	if (nic->bus[0])
		fprintf(f, ", bus %s", nic->bus);
	fprintf(f, ", NUMA node %d, speed ", nic->numa_node);
	if (nic->speed > 0)
		fprintf(f, "%d Mb/s\n", nic->speed);
	else
		fprintf(f, "unknown\n");
	if (note)
		fprintf(f, "    %s\n", note);
	/* a software device's driver answers few queries: only say what it did */
	if (nic->kind <= LW_NIC_VIRTIO || !nic->et_channels)
		print_ethtool(f, nic);
	if (!nic->nr_rxq && !nic->nr_txq)
		return;
	fprintf(f, "    %-7s %5s %-9s %-9s %8s %-9s %s\n", "queue", "IRQ", "affinity", "effective",
		"rate/s", "RPS/XPS", "RFS flows");
	for (size_t i = 0; i < nic->nr_rxq; i++)
		print_queue(f, n, "rx", i, &nic->rxq[i], true);
	for (size_t i = 0; i < nic->nr_txq; i++)
		print_queue(f, n, "tx", i, &nic->txq[i], false);
}

void lw_nics_print(FILE *f, const struct lw_node *n)
{
	if (!n->nr_nics)
		return;
	fprintf(f, "network devices\n");
	if (n->rps_sock_flow_entries >= 0)
		fprintf(f, "  RFS: rps_sock_flow_entries %ld%s\n", n->rps_sock_flow_entries,
			n->rps_sock_flow_entries ? "" : " (off)");
	if (n->net_rx_delta && n->sample_ms) {
		fprintf(f, "  NET_RX softirqs per CPU over the %u ms sample, per second:",
			n->sample_ms);
		for (int c = 0; c < n->nr_cpus; c++)
			fprintf(f, " %d:%.0f", c, n->net_rx_delta[c] * 1000.0 / n->sample_ms);
		fprintf(f, "\n");
	}
	for (size_t i = 0; i < n->nr_nics; i++)
		print_nic(f, n, &n->nics[i]);
}

/* ---- JSON ---- */

static void json_uints(struct lw_json *j, const char *const *keys, const unsigned *v, size_t nr)
{
	lw_json_begin_object(j);
	for (size_t i = 0; i < nr; i++)
		lw_json_ku64(j, keys[i], v[i]);
	lw_json_end_object(j);
}

static void json_channels(struct lw_json *j, const struct lw_nic *nic)
{
	static const char *const k[] = {"max_rx", "max_tx", "max_other", "max_combined",
					"rx",	  "tx",	    "other",	 "combined"};
	const struct lw_et_channels *c = &nic->ch;
	unsigned v[] = {c->max_rx, c->max_tx, c->max_other, c->max_combined,
			c->rx,	   c->tx,     c->other,	    c->combined};

	lw_json_key(j, "channels");
	if (nic->et_channels)
		lw_json_null(j);
	else
		json_uints(j, k, v, 8);
}

static void json_rss(struct lw_json *j, const struct lw_nic *nic)
{
	lw_json_key(j, "rss");
	if (nic->et_rss) {
		lw_json_null(j);
		return;
	}
	lw_json_begin_object(j);
	lw_json_ku64(j, "rx_rings", nic->rss->rx_rings);
	lw_json_ku64(j, "key_size", nic->rss->key_size);
	lw_json_ku64(j, "queues_used", lw_nic_rss_used(nic, NULL, 0));
	lw_json_key(j, "table");
	lw_json_begin_array(j);
	for (unsigned i = 0; i < nic->rss->size; i++)
		lw_json_u64(j, nic->rss->table[i]);
	lw_json_end_array(j);
	lw_json_end_object(j);
}

static void json_coalesce_rings(struct lw_json *j, const struct lw_nic *nic)
{
	static const char *const rk[] = {"rx_max", "rx", "tx_max", "tx"};
	const struct lw_et_coalesce *c = &nic->co;
	unsigned rv[] = {nic->rings.rx_max, nic->rings.rx, nic->rings.tx_max, nic->rings.tx};

	lw_json_key(j, "coalesce");
	if (nic->et_coalesce) {
		lw_json_null(j);
	} else {
		lw_json_begin_object(j);
		lw_json_ku64(j, "rx_usecs", c->rx_usecs);
		lw_json_ku64(j, "rx_frames", c->rx_frames);
		lw_json_ku64(j, "tx_usecs", c->tx_usecs);
		lw_json_ku64(j, "tx_frames", c->tx_frames);
		lw_json_kbool(j, "adaptive_rx", c->adaptive_rx);
		lw_json_kbool(j, "adaptive_tx", c->adaptive_tx);
		lw_json_end_object(j);
	}
	lw_json_key(j, "rings");
	if (nic->et_rings)
		lw_json_null(j);
	else
		json_uints(j, rk, rv, 4);
}

static void json_queues(struct lw_json *j, const struct lw_node *n, const char *key,
			const struct lw_nic_queue *v, size_t nr, bool rx)
{
	char b[1024];

	lw_json_key(j, key);
	lw_json_begin_array(j);
	for (size_t i = 0; i < nr; i++) {
		const struct lw_irq *irq = v[i].irq ? lw_node_irq(n, v[i].irq) : NULL;

		lw_json_begin_object(j);
		lw_json_ku64(j, "queue", i);
		lw_json_key(j, "irq");
		if (irq)
			lw_json_u64(j, irq->irq);
		else
			lw_json_null(j);
		lw_json_kstr(j, "affinity", irq && irq->affinity[0] ? irq->affinity : NULL);
		lw_json_key(j, "irq_rate_per_s");
		if (queue_rate(n, irq) >= 0)
			lw_json_double(j, queue_rate(n, irq));
		else
			lw_json_null(j);
		lw_json_kstr(j, "effective",
			     irq ? lw_cpuset_format(&irq->eff, b, sizeof(b)) : NULL);
		lw_json_kstr(j, rx ? "rps_cpus" : "xps_cpus",
			     v[i].mask[0] ? lw_cpuset_format(&v[i].cpus, b, sizeof(b)) : NULL);
		if (rx) {
			lw_json_key(j, "rps_flow_cnt");
			if (v[i].flow_cnt >= 0)
				lw_json_i64(j, v[i].flow_cnt);
			else
				lw_json_null(j);
		}
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
}

static void json_nic(struct lw_json *j, const struct lw_node *n, const struct lw_nic *nic)
{
	lw_json_begin_object(j);
	lw_json_kstr(j, "name", nic->name);
	lw_json_kstr(j, "kind", lw_nic_kind_name(nic->kind));
	lw_json_kstr(j, "note", lw_nic_kind_note(nic->kind));
	lw_json_kstr(j, "driver", nic->driver[0] ? nic->driver : NULL);
	lw_json_kstr(j, "driver_version", nic->drvinfo.version[0] ? nic->drvinfo.version : NULL);
	lw_json_kstr(j, "firmware", nic->drvinfo.fw_version[0] ? nic->drvinfo.fw_version : NULL);
	lw_json_kstr(j, "bus", nic->bus[0] ? nic->bus : NULL);
	lw_json_ki64(j, "numa_node", nic->numa_node);
	lw_json_key(j, "speed_mbps");
	if (nic->speed > 0)
		lw_json_i64(j, nic->speed);
	else
		lw_json_null(j);
	json_channels(j, nic);
	json_rss(j, nic);
	json_coalesce_rings(j, nic);
	json_queues(j, n, "rx_queues", nic->rxq, nic->nr_rxq, true);
	json_queues(j, n, "tx_queues", nic->txq, nic->nr_txq, false);
	lw_json_end_object(j);
}

void lw_nics_json(struct lw_json *j, const struct lw_node *n)
{
	lw_json_key(j, "network");
	lw_json_begin_object(j);
	lw_json_key(j, "rps_sock_flow_entries");
	if (n->rps_sock_flow_entries >= 0)
		lw_json_i64(j, n->rps_sock_flow_entries);
	else
		lw_json_null(j);
	lw_json_key(j, "net_rx_per_s");
	if (n->net_rx_delta && n->sample_ms) {
		lw_json_begin_array(j);
		for (int c = 0; c < n->nr_cpus; c++)
			lw_json_double(j, n->net_rx_delta[c] * 1000.0 / n->sample_ms);
		lw_json_end_array(j);
	} else {
		lw_json_null(j);
	}
	lw_json_key(j, "devices");
	lw_json_begin_array(j);
	for (size_t i = 0; i < n->nr_nics; i++)
		json_nic(j, n, &n->nics[i]);
	lw_json_end_array(j);
	lw_json_end_object(j);
}
