/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * backlog.bpf.h - the receive backlog: how long a target's TCP segment
 * waited in a CPU's backlog, netif_rx to netif_receive_skb, for NET_RX.
 */

#ifndef LW_BACKLOG_BPF_H
#define LW_BACKLOG_BPF_H

#include <bpf/bpf_endian.h>

#include "irq.bpf.h"

/* lw_netif_rx and lw_netif_recv are loaded: a request's wait in a receive
 * backlog is known. Set by userspace before load. */
const volatile bool backlog_known = false;

/* lw_netif_rx stamped a segment since userspace last cleared this: only then
 * is lw_netif_recv, which runs for every packet the host receives, kept
 * attached (tracer_backlog()). Set only when clear: a line every handler
 * reads is written once a second at most. */
__u32 backlog_seen = 0;

/*
 * A segment sent over loopback, a veth pair or a tun device is queued in a
 * CPU's receive backlog (netif_rx()), and waits there for that CPU's NET_RX
 * softirq, behind every packet queued before it: with RPS steering a flood
 * to the server's CPU, a request waited 34 us on average and up to 1.2 ms
 * before sk_data_ready, where its window starts (README, Accuracy). So
 * netif_rx stamps each data segment for a target's listening port, keyed
 * by its skb, and netif_receive_skb, where NET_RX takes it, leaves the wait
 * for the sk_data_ready that follows on that CPU. Only the wait is timed,
 * enqueue to dequeue: the segment's own protocol work after it is no
 * interference. Segments a NIC delivers never enter a backlog through
 * netif_rx (RPS from a driver's NAPI poll enqueues directly): not covered.
 *
 * The stamps sit in slots (seg_slot()) that hold the skb's address: the
 * dequeue side turns every other packet of the host away with two loads and
 * a compare, once it has counted the packet for its CPU (rx_taken in its
 * lw_cpu_state, a line the CPU's softirq programs touch anyway). A stamp
 * overwritten before its segment was taken is a wait not timed: less blame,
 * never more (the sequence check catches a slot both CPUs wrote at once).
 */
struct rx_seg {
	__u64 skb;
	__u64 ts;
	__u32 seq;
	__u32 cpu;   /* the CPU that queued it */
	__u32 taken; /* that CPU's lw_cpu_state::rx_taken then */
	__u32 pad;
};

static struct rx_seg backlog_segs[LW_BACKLOG_SLOTS]; /* no userspace reader */

/* The last stamped segment NET_RX took on this CPU, for the sk_data_ready
 * after it. */
struct rx_last {
	__u64 wait_ns; /* 0: none pending */
	__u32 end_seq; /* the receiver's rcv_nxt once the segment is queued */
	__u16 lport;   /* host order, as skc_num */
	__u16 rport;   /* network order, as skc_dport */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rx_last);
} rx_last SEC(".maps");

/*
 * The slot of an skb's stamp, from two of its fields that do not change
 * between the enqueue and the dequeue: its flow hash (a TCP sender sets it,
 * skb_set_hash_from_sk()) and its length. Not from its address: the verifier
 * shifts no pointer, and turning one into a number costs a map round trip on
 * every packet of the host. Segments of one flow and size share a slot: the
 * later stamp wins, the earlier segment's wait is not timed.
 */
static __always_inline struct rx_seg *seg_slot(const struct sk_buff *skb)
{
	return &backlog_segs[(skb->hash ^ (skb->len * 0x9e3779b1u)) & (LW_BACKLOG_SLOTS - 1)];
}

#define LW_ETH_P_IP   0x0800
#define LW_ETH_P_IPV6 0x86DD
#define LW_IP_FRAG    0x3fff /* more fragments, fragment offset */

struct tcp_seg {
	__u32 seq, end_seq;
	__u16 dport; /* host order */
	__u16 sport; /* network order */
};

/* A TCP segment with data for a listening port of the target's, its IP
 * header at skb->data (eth_type_trans() pulled the link header before
 * netif_rx(); __netif_receive_skb_core() resets it there). One read for
 * both headers, when IPv4 has no options. */
static __always_inline bool tcp_seg_parse(const struct sk_buff *skb, struct tcp_seg *g)
{
	__u8 h[sizeof(struct ipv6hdr) + sizeof(struct tcphdr)];
	__u16 proto = skb->protocol;
	__u32 hlen, len, thlen;
	struct tcphdr th;

	if (bpf_probe_read_kernel(h, sizeof(h), skb->data))
		return false;
	if (proto == bpf_htons(LW_ETH_P_IP)) {
		struct iphdr *iph = (struct iphdr *)h;

		if (iph->protocol != IPPROTO_TCP || (iph->frag_off & bpf_htons(LW_IP_FRAG)))
			return false;
		hlen = iph->ihl * 4;
		len = bpf_ntohs(iph->tot_len);
	} else if (proto == bpf_htons(LW_ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)h;

		if (ip6->nexthdr != IPPROTO_TCP)
			return false;
		hlen = sizeof(*ip6);
		len = hlen + bpf_ntohs(ip6->payload_len);
	} else {
		return false;
	}
	if (hlen == sizeof(struct iphdr))
		__builtin_memcpy(&th, h + sizeof(struct iphdr), sizeof(th));
	else if (hlen == sizeof(struct ipv6hdr))
		__builtin_memcpy(&th, h + sizeof(struct ipv6hdr), sizeof(th));
	else if (bpf_probe_read_kernel(&th, sizeof(th), skb->data + hlen))
		return false;
	g->dport = bpf_ntohs(th.dest);
	if (!((listen_ports[g->dport / 64] >> (g->dport % 64)) & 1))
		return false;
	thlen = th.doff * 4;
	if (len <= hlen + thlen) /* no data: no sk_data_ready (or a BIG TCP length of 0) */
		return false;
	g->seq = bpf_ntohl(th.seq);
	g->end_seq = g->seq + (len - hlen - thlen);
	g->sport = th.source;
	return true;
}

/* Queued to a backlog: loopback_xmit(), veth, tun; since 2.6.35. */
SEC("tp_btf/netif_rx")
int BPF_PROG(lw_netif_rx, struct sk_buff *skb)
{
	struct lw_cpu_state *cs;
	struct rx_seg *v;
	struct tcp_seg g;

	if (!listen_known || !tcp_seg_parse(skb, &g))
		return 0;
	v = seg_slot(skb);
	v->ts = bpf_ktime_get_ns();
	v->seq = g.seq;
	v->cpu = bpf_get_smp_processor_id();
	cs = cpu_state_get(v->cpu);
	v->taken = cs ? cs->rx_taken : 0;
	v->skb = (__u64)skb;
	if (!backlog_seen)
		backlog_seen = 1;
	return 0;
}

/* Taken by NET_RX (every received packet passes here). */
SEC("tp_btf/netif_receive_skb")
int BPF_PROG(lw_netif_recv, struct sk_buff *skb)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0, taken = 0;
	struct lw_cpu_state *cs = cpu_state_get(cpu);
	struct rx_seg *v = seg_slot(skb);
	struct rx_last *last;
	struct tcp_seg g;
	__u64 ts, now;

	if (cs)
		taken = cs->rx_taken++;
	if (v->skb != (__u64)skb)
		return 0;
	v->skb = 0;
	ts = v->ts;
	now = bpf_ktime_get_ns();
	/* a dropped segment's stamp, its skb since reused for another */
	if (!tcp_seg_parse(skb, &g) || g.seq != v->seq || now < ts)
		return 0;
	/*
	 * Taken on the CPU that queued it, and nothing taken there before it:
	 * it waited behind no packet, only for its sender's path to unwind to
	 * the NET_RX that the sender's own local_bh_enable() runs (0.6-0.8 us
	 * a loopback or veth segment on the development VM). That is the hop's
	 * own cost, not a wait: timed, it was softirq in every request, and the
	 * cause of 103 of an idle nginx's 160 slow requests (13-20 us each).
	 */
	if (cs && v->cpu == cpu && v->taken == taken)
		return 0;
	last = bpf_map_lookup_elem(&rx_last, &zero);
	if (!last)
		return 0;
	last->wait_ns = now - ts;
	last->end_seq = g.end_seq;
	last->lport = g.dport;
	last->rport = g.sport;
	return 0;
}

/* The backlog wait of the segment that made sk ready, if NET_RX took it on
 * this CPU just before: its ports match and it is what sk's receive queue
 * ends with. Counted as evidence once per segment. */
static __always_inline __u64 backlog_take(const struct sock *sk)
{
	__u32 zero = 0, key = LW_SOFTIRQ_BACKLOG;
	struct rx_last *last;
	struct lw_count *c;
	__u64 w;

	last = bpf_map_lookup_elem(&rx_last, &zero);
	if (!last || !last->wait_ns || sk->__sk_common.skc_num != last->lport ||
	    sk->__sk_common.skc_dport != last->rport ||
	    BPF_CORE_READ((struct tcp_sock *)sk, rcv_nxt) != last->end_seq)
		return 0;
	w = last->wait_ns;
	last->wait_ns = 0;
	c = bpf_map_lookup_elem(&softirq_ev, &key);
	if (c) {
		c->ns += w;
		c->count++;
	}
	return w;
}

#endif /* LW_BACKLOG_BPF_H */
