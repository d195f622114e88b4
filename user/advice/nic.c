// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nic.c - judge each NIC's queues, RSS table and coalescing (field notes
 * case 3: a 10 GbE NIC whose receive work all landed on one core: RSS not
 * spreading flows, too few queues), and say what a virtual NIC leaves to
 * the host.
 *
 * ethtool settings are persisted as Debian persists NIC settings: a udev
 * rule running ethtool when the device appears (systemd-networkd's .link
 * files take the channel and coalescing values too, but a .link file that
 * matches replaces 99-default.link and its naming policy). RPS masks are
 * kernel settings, persisted by tmpfiles.d as irq.c does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice/adv.h"
#include "advice/nic.h"

#define ETHTOOL	  "/usr/sbin/ethtool"
#define UDEV_RULE "/etc/udev/rules.d/%d-latwhy-%s-%s.rules"

/* The udev rule that re-applies one ethtool setting whenever dev appears,
 * and its removal in the rollback. prio orders rules of one device:
 * channels (70) before the RSS table (71), which names the channels. */
static void persist_udev(struct adv *a, const char *dev, int prio, const char *what,
			 const char *args)
{
	adv_add(a, &a->f->persist,
		"cat > " UDEV_RULE " <<'EOF'\n"
		"# latwhy: %s's %s, set again whenever the device appears\n"
		"ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"%s\", RUN+=\"" ETHTOOL " %s\"\nEOF",
		prio, dev, what, dev, what, dev, args);
	adv_add(a, &a->f->persist, "udevadm control --reload");
	adv_add(a, &a->f->rollback, "rm -f " UDEV_RULE, prio, dev, what);
	adv_add(a, &a->f->rollback, "udevadm control --reload");
}

/* ---- queues ---- */

struct lw_cpuset lw_nic_serving_cpus(const struct lw_node *n, const struct lw_nic *nic)
{
	const struct lw_numa_node *nn = lw_node_numa(n, nic->numa_node);
	struct lw_cpuset s;

	lw_cpuset_andnot(&s, &n->online, &n->isolated);
	if (n->nr_numa > 1 && nn) {
		struct lw_cpuset local;

		lw_cpuset_and(&local, &s, &nn->cpus);
		if (!lw_cpuset_empty(&local))
			s = local;
	}
	return s;
}

unsigned lw_nic_active_rx(const struct lw_nic *nic)
{
	return nic->ch.combined + nic->ch.rx;
}

/* Channels the driver can add: combined ones when it has them, else rx. */
static unsigned max_rx(const struct lw_nic *nic)
{
	return nic->ch.max_combined ? nic->ch.max_combined : nic->ch.max_rx;
}

static const char *channel_kind(const struct lw_nic *nic)
{
	return nic->ch.max_combined ? "combined" : "rx";
}

/* ethtool -X weights giving each queue today's share of the table. */
static void rss_weights(const struct lw_nic *nic, char *buf, size_t len)
{
	unsigned w[LW_RSS_MAX];
	unsigned top = 0;
	size_t off = 0;

	lw_nic_rss_used(nic, w, LW_RSS_MAX);
	for (unsigned i = 0; i < nic->rss->size; i++)
		if (nic->rss->table[i] + 1U > top)
			top = nic->rss->table[i] + 1U;
	buf[0] = '\0';
	for (unsigned q = 0; q < top && off < len; q++)
		off += (size_t)snprintf(buf + off, len - off, " %u", w[q]);
}

/* Whether the table names fewer queues than are active, or gives one queue
 * more than twice its fair share. */
static bool rss_skewed(const struct lw_nic *nic, unsigned active, unsigned *used, unsigned *top_q,
		       unsigned *top_w)
{
	unsigned w[LW_RSS_MAX];

	*used = lw_nic_rss_used(nic, w, LW_RSS_MAX);
	*top_q = *top_w = 0;
	for (unsigned q = 0; q < active && q < LW_RSS_MAX; q++)
		if (w[q] > *top_w) {
			*top_w = w[q];
			*top_q = q;
		}
	return *used < active || (unsigned long)*top_w * active > 2UL * nic->rss->size;
}

/* The receive channels nic should have, 0 when it has enough already: as
 * many as CPUs could serve them, up to the driver's maximum. */
static unsigned channels_want(const struct lw_node *n, const struct lw_nic *nic)
{
	struct lw_cpuset serve = lw_nic_serving_cpus(n, nic);
	unsigned cur = lw_nic_active_rx(nic), want = (unsigned)lw_cpuset_count(&serve);

	if (want > max_rx(nic))
		want = max_rx(nic);
	return cur && cur < want ? want : 0;
}

static void advise_channels(struct adv *a, const struct lw_nic *nic)
{
	struct lw_cpuset serve = lw_nic_serving_cpus(a->n, nic);
	unsigned cur = lw_nic_active_rx(nic), want = channels_want(a->n, nic);
	const char *k = channel_kind(nic);
	char args[64], wt[LW_RSS_MAX * 4];
	bool table = nic->rss && nic->rss->size;
	unsigned used, top_q, top_w;

	if (!want || !adv_begin(a, LW_CAUSE_IRQ, LW_SEV_WARN))
		return;
	adv_put(a, &a->f->seen,
		"%s (%s) receives on %u of the %u %s channels it could have; %d CPUs could serve "
		"them%s",
		nic->name, nic->driver[0] ? nic->driver : "?", cur, max_rx(nic), k,
		lw_cpuset_count(&serve),
		a->n->nr_numa > 1 && nic->numa_node >= 0 ? " on its NUMA node" : "");
	if (table && rss_skewed(nic, cur, &used, &top_q, &top_w))
		adv_put(a, &a->f->seen, "%s; its RSS table sends %.0f%% of the flows to queue %u",
			a->f->seen, 100.0 * top_w / nic->rss->size, top_q);
	adv_put(a, &a->f->why,
		"RSS spreads flows only over active queues: all receive interrupts and softirq "
		"work land on %u CPU%s (field case 3: one core over 90%%, 16 streams at 6.1-6.8 "
		"Gbps instead of 9.4)",
		cur, cur == 1 ? "" : "s");
	snprintf(args, sizeof(args), "-L %s %s %u", nic->name, k, want);
	adv_add(a, &a->f->fix, "ethtool %s", args);
	if (table)
		adv_add(a, &a->f->fix, "ethtool -X %s equal %u", nic->name, want);
	persist_udev(a, nic->name, 70, "channels", args);
	if (table) {
		snprintf(args, sizeof(args), "-X %s equal %u", nic->name, want);
		persist_udev(a, nic->name, 71, "rss", args);
		rss_weights(nic, wt, sizeof(wt));
		/* the old table first: fewer channels are refused while it names more */
		adv_add(a, &a->f->rollback, "ethtool -X %s weight%s", nic->name, wt);
	}
	adv_add(a, &a->f->rollback, "ethtool -L %s %s %u", nic->name, k, cur);
	adv_add(a, &a->f->verify, "ethtool -l %s  # Current %s: %u", nic->name, k, want);
	adv_add(a, &a->f->verify, "grep %s /proc/interrupts  # one IRQ per queue, each busy",
		nic->name);
	adv_put(a, &a->f->cost,
		"%u more queue IRQs and rings (memory); the new queues' IRQs need CPUs away from "
		"the latency-critical ones (see the irq findings); a driver may drop the link for "
		"a moment while it reconfigures",
		want - cur);
}

/* ---- RSS ---- */

static void advise_rss(struct adv *a, const struct lw_nic *nic)
{
	unsigned active = lw_nic_active_rx(nic), used, top_q, top_w;
	char args[64], wt[LW_RSS_MAX * 4];

	/* raising the channels spreads the table too: that finding says it */
	if (!nic->rss || !nic->rss->size || active < 2 || channels_want(a->n, nic) ||
	    !rss_skewed(nic, active, &used, &top_q, &top_w))
		return;
	if (!adv_begin(a, LW_CAUSE_IRQ, LW_SEV_WARN))
		return;
	adv_put(a, &a->f->seen,
		"%s's RSS table (%u entries) sends flows to %u of its %u receive queues; queue %u "
		"holds %u entries (%.0f%% of the flows)",
		nic->name, nic->rss->size, used, active, top_q, top_w,
		100.0 * top_w / nic->rss->size);
	adv_put(a, &a->f->why,
		"a flow's hash picks its queue through this table: queues it names more often take "
		"more flows, and their CPUs saturate while the other queues idle (field case 3)");
	snprintf(args, sizeof(args), "-X %s equal %u", nic->name, active);
	adv_add(a, &a->f->fix, "ethtool %s", args);
	persist_udev(a, nic->name, 71, "rss", args);
	rss_weights(nic, wt, sizeof(wt));
	adv_add(a, &a->f->rollback, "ethtool -X %s weight%s", nic->name, wt);
	adv_add(a, &a->f->rollback,
		"# the weights give each queue today's share; the entries' order may differ");
	adv_add(a, &a->f->verify, "ethtool -x %s  # every queue 0-%u in the table", nic->name,
		active - 1);
	adv_add(a, &a->f->verify, "grep %s /proc/interrupts  # interrupts grow on every queue",
		nic->name);
	adv_put(a, &a->f->cost,
		"none for the NIC; flows move between queues once, and a flow steered on purpose "
		"(ntuple rules, a table set for an application) loses that placement");
}

/* ---- coalescing ---- */

static void advise_coalesce(struct adv *a, const struct lw_nic *nic)
{
	const struct lw_et_coalesce *c = &nic->co;
	char args[64];

	if (c->adaptive_rx || c->rx_usecs < LW_NIC_COALESCE_US)
		return;
	if (!adv_begin(a, LW_CAUSE_IRQ, LW_SEV_INFO))
		return;
	adv_put(a, &a->f->seen,
		"%s holds a received packet up to %u us%s before it interrupts, adaptive "
		"moderation off",
		nic->name, c->rx_usecs, c->rx_frames > 1 ? " (or until enough frames)" : "");
	adv_put(a, &a->f->why,
		"a trade-off, not a fault: each request's first packet may wait the whole %u us "
		"for its interrupt when traffic is light; under load the same setting saves "
		"interrupts",
		c->rx_usecs);
	adv_add(a, &a->f->fix, "ethtool -C %s adaptive-rx on", nic->name);
	adv_add(a, &a->f->fix,
		"# or, where the driver has no adaptive mode: ethtool -C %s rx-usecs 8 (lower "
		"latency, more interrupts)",
		nic->name);
	snprintf(args, sizeof(args), "-C %s adaptive-rx on", nic->name);
	persist_udev(a, nic->name, 72, "coalesce", args);
	/* rx-frames only when set: drivers without it refuse the parameter */
	if (c->rx_frames)
		adv_add(a, &a->f->rollback,
			"ethtool -C %s adaptive-rx off rx-usecs %u rx-frames %u", nic->name,
			c->rx_usecs, c->rx_frames);
	else
		adv_add(a, &a->f->rollback, "ethtool -C %s adaptive-rx off rx-usecs %u", nic->name,
			c->rx_usecs);
	adv_add(a, &a->f->verify, "ethtool -c %s  # Adaptive RX: on", nic->name);
	adv_put(a, &a->f->cost,
		"more interrupts per second at low and medium load (CPU time on the queues' CPUs); "
		"at high packet rates adaptive moderation raises the delay again, to save them");
}

/* Zero coalescing: every frame interrupts. Said, not fixed: for a
 * latency-critical service it may be the right choice. */
static void note_no_coalesce(struct adv *a, const struct lw_nic *nic)
{
	const struct lw_et_coalesce *c = &nic->co;

	if (c->adaptive_rx || c->rx_usecs || c->rx_frames > 1)
		return;
	if (!adv_begin(a, LW_CAUSE_IRQ, LW_SEV_INFO))
		return;
	adv_put(a, &a->f->seen, "%s interrupts on every received frame (rx-usecs 0, rx-frames %u)",
		nic->name, c->rx_frames);
	adv_put(a, &a->f->why,
		"the lowest receive latency, paid in interrupts: at high packet rates their entry "
		"and exit cost (see the interrupts section) takes the queues' CPUs from the "
		"application");
	adv_add(a, &a->f->fix,
		"# keep it if the target is latency-critical and the queues' CPUs have room; "
		"otherwise: ethtool -C %s adaptive-rx on",
		nic->name);
	adv_add(a, &a->f->verify, "grep %s /proc/interrupts  # the queues' interrupt rates",
		nic->name);
}

/* ---- one receive queue: RPS ---- */

/* CPUs RPS may hand a single queue's work to: serving CPUs, not the target's. */
static struct lw_cpuset rps_dest(const struct lw_node *n, const struct lw_nic *nic)
{
	struct lw_cpuset d = lw_nic_serving_cpus(n, nic);

	if (n->has_target)
		lw_cpuset_andnot(&d, &d, &n->target.cpus);
	return d;
}

static void advise_one_queue(struct adv *a, const struct lw_nic *nic)
{
	const struct lw_nic_queue *q = &nic->rxq[0];
	const struct lw_irq *irq = q->irq ? lw_node_irq(a->n, q->irq) : NULL;
	struct lw_cpuset dest = rps_dest(a->n, nic);
	char m[96], c[96];

	if (nic->nr_rxq != 1 || max_rx(nic) > 1 || !lw_cpuset_empty(&q->cpus) ||
	    lw_cpuset_count(&dest) < 2)
		return;
	if (!adv_begin(a, LW_CAUSE_IRQ, LW_SEV_INFO))
		return;
	lw_cpuset_format(irq ? &irq->eff : &a->n->online, c, sizeof(c));
	adv_put(a, &a->f->seen,
		"%s has one receive queue and can have no more (maximum 1): its interrupts%s and "
		"their NET_RX work run on CPU %s; RPS is off",
		nic->name, irq ? "" : " (IRQ not found)", c);
	adv_put(a, &a->f->why,
		"with one queue, every flow's protocol processing runs on the CPU that takes the "
		"interrupt; RPS hands it to other CPUs by flow hash, the way RSS would");
	lw_cpuset_format_mask(&dest, m, sizeof(m));
	adv_add(a, &a->f->fix, "echo %s > /sys/class/net/%s/queues/rx-0/rps_cpus", m, nic->name);
	if (a->n->rps_sock_flow_entries == 0)
		adv_add(a, &a->f->fix,
			"# RFS also steers each flow to the CPU its reader runs on: "
			"echo 32768 > /proc/sys/net/core/rps_sock_flow_entries and "
			"echo 32768 > /sys/class/net/%s/queues/rx-0/rps_flow_cnt",
			nic->name);
	adv_add(a, &a->f->persist,
		"cat > /etc/tmpfiles.d/latwhy-rps-%s.conf <<'EOF'\n"
		"w /sys/class/net/%s/queues/rx-0/rps_cpus - - - - %s\nEOF",
		nic->name, nic->name, m);
	adv_add(a, &a->f->rollback, "echo %s > /sys/class/net/%s/queues/rx-0/rps_cpus",
		q->mask[0] ? q->mask : "0", nic->name);
	adv_add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-rps-%s.conf", nic->name);
	adv_add(a, &a->f->verify, "cat /sys/class/net/%s/queues/rx-0/rps_cpus", nic->name);
	adv_add(a, &a->f->verify, "grep NET_RX /proc/softirqs  # grows on CPUs %s under load",
		lw_cpuset_format(&dest, c, sizeof(c)));
	adv_put(a, &a->f->cost,
		"an inter-processor interrupt per packet batch and the packet's cache lines on "
		"another CPU: worth it when the interrupt's CPU saturates, a loss at light load");
}

/* ---- measured: receive interrupts over the sample ---- */

static double irq_rate(const struct lw_node *n, unsigned irq)
{
	const struct lw_irq *q = irq ? lw_node_irq(n, irq) : NULL;
	unsigned long long v = 0;

	if (!q || !q->delta || !n->sample_ms)
		return -1;
	for (int c = 0; c < n->nr_cpus; c++)
		v += q->delta[c];
	return v * 1000.0 / n->sample_ms;
}

/*
 * One receive queue taking most of a busy NIC's interrupts over check's
 * sample: the measured form of field case 3's hot core. What it points at
 * depends on the table: uneven, the RSS (or channels) finding spreads it;
 * even, the load is a few heavy flows, which no table or RPS mask splits.
 */
static void advise_rx_skew(struct adv *a, const struct lw_nic *nic)
{
	double sum = 0, top = -1, r;
	unsigned with_irq = 0, top_q = 0, used, tq, tw;
	bool uneven;
	char b[96];

	for (size_t q = 0; q < nic->nr_rxq; q++) {
		r = irq_rate(a->n, nic->rxq[q].irq);
		if (r < 0)
			continue;
		with_irq++;
		sum += r;
		if (r > top) {
			top = r;
			top_q = (unsigned)q;
		}
	}
	if (with_irq < 2 || sum < LW_NIC_SKEW_RATE || top < LW_NIC_SKEW_SHARE * sum ||
	    top * with_irq < 2 * sum || !adv_begin(a, LW_CAUSE_IRQ, LW_SEV_WARN))
		return;
	lw_cpuset_format(&lw_node_irq(a->n, nic->rxq[top_q].irq)->eff, b, sizeof(b));
	adv_put(a, &a->f->seen,
		"over the %u ms sample %s's rx-%u took %.0f%% of its receive interrupts (%.0f of "
		"%.0f/s) on CPU %s; %u other queues shared the rest",
		a->n->sample_ms, nic->name, top_q, 100 * top / sum, top, sum, b, with_irq - 1);
	adv_put(a, &a->f->why,
		"that CPU does that share of the NIC's receive work, interrupts and NET_RX, while "
		"the other queues' CPUs idle (field case 3: one core over 90%%)");
	uneven = nic->rss && nic->rss->size &&
		 rss_skewed(nic, lw_nic_active_rx(nic), &used, &tq, &tw);
	if (uneven)
		adv_add(a, &a->f->fix,
			"# the RSS table is uneven: the RSS or channels finding spreads it");
	else
		adv_add(a, &a->f->fix,
			"# the RSS table is even (or unknown): the load is a few heavy flows, and "
			"a "
			"flow always hashes to one queue; more connections spread it, RPS does not "
			"split a flow either (see them: ss -tin)");
	adv_add(a, &a->f->verify, "latwhy check --sample 1000  # %s's queue rates even out",
		nic->name);
}

/* ---- virtual NICs ---- */

static void note_virtio(struct adv *a, const struct lw_nic *nic)
{
	if (!adv_begin(a, LW_CAUSE_IRQ, LW_SEV_INFO))
		return;
	adv_put(a, &a->f->seen,
		"%s is a virtio-net NIC of this guest: %u of %u queue pairs%s, rings %u of %u, "
		"link "
		"speed %s",
		nic->name, lw_nic_active_rx(nic), max_rx(nic),
		max_rx(nic) <= 1 ? " (the host offers one)" : "", nic->rings.rx, nic->rings.rx_max,
		nic->speed > 0 ? "as the host reports it" : "unknown (virtio reports none)");
	adv_put(a, &a->f->why,
		"its queues, the host threads that serve them (vhost) and the physical NIC under "
		"them are the host's: from inside the guest only the guest's side can be tuned");
	adv_add(a, &a->f->fix,
		"# a guest can: use queue pairs up to the host's maximum (ethtool -L %s combined "
		"N), move its virtqueue IRQs (not kernel-managed), set RPS/RFS/XPS masks, size "
		"the rings up to their maximum",
		nic->name);
	adv_add(a, &a->f->fix,
		"# a guest cannot: get more queues than the host offers (QEMU -netdev ...,queues=N "
		"with -device virtio-net-pci,mq=on; libvirt <driver queues='N'/>), nor change the "
		"host NIC's RSS, coalescing or IRQ placement or the vhost threads' CPUs: ask the "
		"host's operator");
	adv_add(a, &a->f->verify, "ethtool -l %s", nic->name);
}

/* ---- public ---- */

static void advise_one(struct adv *a, const struct lw_nic *nic)
{
	bool hw = nic->kind == LW_NIC_PHYS || nic->kind == LW_NIC_VIRTIO;

	/* without the driver's answers nothing here can be judged */
	if (!hw || nic->et_channels)
		return;
	if (nic->kind == LW_NIC_VIRTIO)
		note_virtio(a, nic);
	advise_channels(a, nic);
	advise_rss(a, nic);
	advise_rx_skew(a, nic);
	advise_one_queue(a, nic);
	/* a guest's virtio coalescing only batches notifications to the host */
	if (nic->kind == LW_NIC_PHYS && !nic->et_coalesce) {
		advise_coalesce(a, nic);
		note_no_coalesce(a, nic);
	}
}

void adv_nic_findings(struct adv *a, const struct lw_nic *nic)
{
	advise_one(a, nic);
	a->f = NULL; /* advise_one() may have moved the findings */
}

const char *adv_nic_irq_role(const struct lw_nic *nic, unsigned irq, char *buf, size_t len)
{
	int rx = -1, tx = -1;
	char q[48], ch[64] = "";

	for (size_t k = 0; k < nic->nr_rxq && rx < 0; k++)
		if (nic->rxq[k].irq == irq)
			rx = (int)k;
	for (size_t k = 0; k < nic->nr_txq && tx < 0; k++)
		if (nic->txq[k].irq == irq)
			tx = (int)k;
	if (rx >= 0 && rx == tx)
		snprintf(q, sizeof(q), "queue %d", rx);
	else if (rx >= 0)
		snprintf(q, sizeof(q), "receive queue %d", rx);
	else if (tx >= 0)
		snprintf(q, sizeof(q), "transmit queue %d", tx);
	else
		snprintf(q, sizeof(q), "interrupt");
	if (!nic->et_channels)
		snprintf(ch, sizeof(ch), ", %u of %u %s channels", lw_nic_active_rx(nic),
			 max_rx(nic), channel_kind(nic));
	snprintf(buf, len, "%s's %s (%s%s)", nic->name, q,
		 nic->driver[0] ? nic->driver : lw_nic_kind_name(nic->kind), ch);
	return buf;
}

int lw_advise_nic(const struct lw_node *n, struct lw_findings *out)
{
	struct adv a = {.n = n, .out = out};

	for (size_t i = 0; i < n->nr_nics && !a.err; i++)
		advise_one(&a, &n->nics[i]);
	return a.err;
}

/* Its findings build on their own (struct adv): the table only runs them,
 * after the other IRQ findings. */
static void nic_check(struct adv *a)
{
	if (!a->err)
		a->err = lw_advise_nic(a->n, a->out);
	a->f = NULL; /* lw_advise_nic() may have moved the findings */
}

const struct lw_advisor lw_advisor_nic = {
	.cause = LW_CAUSE_IRQ,
	.check = nic_check,
};
