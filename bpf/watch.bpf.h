/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * watch.bpf.h - the always-attached tier of serve: two programs that count
 * the TCP requests of the targets from a sample of them, time that sample
 * and count its slow ones, and nothing else, so that they can stay
 * attached while the rest is detached.
 *
 * A request is one socket's span from its data's arrival to its reply's
 * going out: right for event loops with many connections on one thread and
 * for a request answered by another thread. One program runs a request, on
 * the target's own CPU, as the read copies the request's data
 * (lw_watch_ready): it starts the request, and ends the one before it,
 * whose reply's transmit time the socket keeps (watch_end()). Nothing runs
 * where the packet arrives: a write there (sk_data_ready, on loopback the
 * client's CPU) was most of this tier's cost on redis once. Nor on
 * sock_recv_length, which fires at every read of every socket on the node,
 * nor at any send: the send programs this tier had ran at every send on the
 * node. The other program (lw_watch_close) runs once a connection, as it
 * closes, for a timed request with no next read.
 *
 * A request is new where the socket's storage says so: its write_seq moved
 * since the last (a reply was sent in between). 1 in 2^watch_shift[slot]
 * requests are sampled, the shift chosen by userspace from the target's
 * rate (user/source/duty.c) so that about 1000 a second are: each is
 * counted 2^shift times (watch_req, an estimate of all) and timed, its
 * start waiting in the socket's storage. Which ones is decided in the
 * kernel from the request alone (lw_watch_sampled(): its socket's hash and
 * write_seq), so that a read of a request out of the sample returns before
 * the socket's storage: two lines the request has not touched, looked up at
 * every request, were most of the tier's cost (nginx's ~32 us requests
 * lost 1.2% of their throughput to it, timing 1 in 2^shift). The socket's
 * bucket (watch_hint) says its shift; a bucket with a timed request
 * waiting (watch_pend) lets every read through, to end it. Below ~2000
 * requests a second the shift is 0: every request counted and timed.
 *
 * Timed requests go into the histogram weighted by 2^shift (hist_count_w()),
 * so that its counts estimate all requests' while its quantiles are the
 * sample's; while the full tier is attached too, its own request ends count
 * none (watch_hist). Per target slot, .bss arrays that userspace reads
 * through the mmap every 250 ms with no syscall hold the raw sample (timed,
 * their latency, the slow ones: the escalation rule's inputs,
 * user/engine/escalate.h) and the weighted slow counts (the exporter's).
 * The slow ones' cause is the full tier's to find.
 */

#ifndef LW_WATCH_BPF_H
#define LW_WATCH_BPF_H

#include "delimit.bpf.h"

_Static_assert(!(LW_MAX_TARGETS & (LW_MAX_TARGETS - 1)), "watch_end() masks by LW_MAX_TARGETS");

/* Buckets of sockets for watch_hint and watch_pend (userspace takes their
 * size from the skeleton): 4 KiB of hints, 16 KiB of counts, few sockets to
 * a bucket at a server's few thousand connections. */
#define LW_WATCH_HINTS 4096
_Static_assert(!(LW_WATCH_HINTS & (LW_WATCH_HINTS - 1)), "watch_bucket() masks by LW_WATCH_HINTS");

struct watch_sock {
	/* its reader's target slot + 1 (0: a socket of no target's after
	 * all): a socket stays its process's, so found once per connection */
	__u32 slot1;
	__u32 seq; /* write_seq at its last request's start */
	__u8 started;
	__u8 timed; /* its last request was timed: start_ns holds its start */
	__u8 shift; /* its weight, 2^shift, as when it was chosen */
	__u64 start_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct watch_sock);
} watch_socks SEC(".maps");

/* Per target slot: its requests (the sampled ones, 2^shift each: an
 * estimate of all); the sampled ones, their latency, the slow ones among
 * them and theirs; the slow ones weighted (an estimate of all slow
 * requests); the time of the first slow one since userspace last zeroed
 * it; and the shift userspace sets, 1 in 2^shift sampled. */
__u64 watch_req[LW_MAX_TARGETS] = {};
__u64 watch_timed[LW_MAX_TARGETS] = {};
__u64 watch_lat_ns[LW_MAX_TARGETS] = {};
__u64 watch_slow[LW_MAX_TARGETS] = {};
__u64 watch_slow_ns[LW_MAX_TARGETS] = {};
__u64 watch_est_slow[LW_MAX_TARGETS] = {};
__u64 watch_est_slow_ns[LW_MAX_TARGETS] = {};
__u64 watch_first_ns[LW_MAX_TARGETS] = {};
volatile __u32 watch_shift[LW_MAX_TARGETS] = {};

/* Per bucket of sockets (their skc_hash's low bits, LW_WATCH_HINTS): the
 * least shift + 1 of the target sockets seen in it (0: none seen, or
 * userspace has cleared it since a shift changed), so that a read of a
 * sampled-out request skips the socket's storage; and its timed requests
 * waiting for their end, whose sockets' next reads must look. */
volatile __u8 watch_hint[LW_WATCH_HINTS] = {};
__u32 watch_pend[LW_WATCH_HINTS] = {};
/* set once by userspace: which requests are sampled is not the same on
 * every run */
volatile __u32 watch_seed = 0;

/* The socket's storage, made at a target's first read on a listening
 * port; NULL for every other socket. */
static __always_inline struct watch_sock *watch_sock_of(struct sock *sk)
{
	struct watch_sock *ws = NULL;
	int slot;

	/* most sockets have no BPF storage at all: no helper call for them */
	if (sk->sk_bpf_storage)
		ws = bpf_sk_storage_get(&watch_socks, sk, 0, 0);
	if (ws)
		return ws;
	if (!tcp_inbound(sk) || !is_target_cur(bpf_get_current_task_btf()))
		return NULL;
	ws = bpf_sk_storage_get(&watch_socks, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!ws)
		return NULL;
	slot = target_slot_cur();
	ws->slot1 = slot >= 0 && slot < LW_MAX_TARGETS ? slot + 1 : 0;
	return ws;
}

/* lw_watch_sampled() under this run's seed */
static __always_inline bool watch_sampled(__u32 skc_hash, __u32 seq, __u32 shift)
{
	return lw_watch_sampled(skc_hash, seq, watch_seed, shift);
}

static __always_inline __u32 watch_bucket(const struct sock *sk)
{
	return sk->__sk_common.skc_hash & (LW_WATCH_HINTS - 1);
}

/* The socket's timed request is no longer waiting, timed or not: its
 * bucket's reads need not look for it (watch_start()'s count back). */
static __always_inline void watch_unpend(struct watch_sock *ws, __u32 b)
{
	ws->timed = 0;
	__sync_fetch_and_add(&watch_pend[b & (LW_WATCH_HINTS - 1)], -1);
}

/*
 * A timed request ends as its reply goes out, and that is read back from
 * the socket when it is next looked at (its next request's read, or its
 * close): first_tx_mstamp, the rate sampler's (tcp_rate.c, 4.9+), is the
 * transmit time of the first segment sent with nothing in flight, and
 * then of the latest segment acknowledged, on tcp_clock_us(): a reply's
 * first segment, or its last once acknowledged, data only (no pure ACK
 * moves it). No program runs at any send: a send program ran at every
 * send on the node, two a request on nginx, and cost the target as much
 * as the read's own. Earlier than the request's start, it is an older
 * reply's (a reply sent while another was in flight): the request is
 * counted, not timed.
 */
static __always_inline void watch_end(const struct tcp_sock *tp, struct watch_sock *ws, __u32 b)
{
	__u64 end = tp->first_tx_mstamp * 1000, latency, w;
	__u32 i;

	watch_unpend(ws, b);
	if (end < ws->start_ns)
		return;
	latency = end - ws->start_ns;
	i = (ws->slot1 - 1) & (LW_MAX_TARGETS - 1);
	w = 1ULL << (ws->shift % (LW_WATCH_SHIFT_MAX + 1));
	hist_count_w(latency, (int)i, w);
	__sync_fetch_and_add(&watch_timed[i], 1);
	__sync_fetch_and_add(&watch_lat_ns[i], latency);
	if (latency <= slow_thresh_ns)
		return;
	__sync_fetch_and_add(&watch_slow[i], 1);
	__sync_fetch_and_add(&watch_slow_ns[i], latency);
	__sync_fetch_and_add(&watch_est_slow[i], w);
	__sync_fetch_and_add(&watch_est_slow_ns[i], latency * w);
	if (!watch_first_ns[i])
		watch_first_ns[i] = end;
}

/*
 * A timed request's start is tcp_mstamp as the read copies its data, the
 * last refresh before the read: the arrival of the request's latest segment
 * (tcp_rcv_established()), on the same clock (tcp_clock_us()), in
 * microseconds; so its wait to be read, where a CPU hog's time goes, is in
 * it. A delayed-ACK timer that fired before the read refreshes it too: a
 * wait over its 40 ms is timed from then. Not tcp_mstamp once the read has
 * returned: its ACK refreshes it, and a hog that doubled a lab server's
 * requests (2.6 to 4.7 ms) moved the mean timed from there only 1.17x.
 */
static __always_inline void watch_start(const struct tcp_sock *tp, struct watch_sock *ws,
					__u32 shift, __u32 b)
{
	__u64 now = bpf_ktime_get_ns(), start = tp->tcp_mstamp * 1000;

	ws->start_ns = start && start <= now ? start : now;
	ws->shift = shift;
	ws->timed = 1;
	__sync_fetch_and_add(&watch_pend[b & (LW_WATCH_HINTS - 1)], 1);
}

/* The bucket's hint lowered to the socket's shift (only lowered: another
 * socket of the bucket may have a smaller one). */
static __always_inline void watch_hint_set(__u32 b, __u32 shift)
{
	__u8 h = watch_hint[b & (LW_WATCH_HINTS - 1)];

	if (!h || h > shift + 1)
		watch_hint[b & (LW_WATCH_HINTS - 1)] = shift + 1;
}

/*
 * A read copies data out (tcp_recvmsg_locked() calls tcp_rcv_space_adjust()
 * after each segment it copies), on the reader's CPU, before the read's own
 * ACK: a request starts at the first after a reply, and the one before it
 * ends there if it was timed. Only a sample of requests is looked at
 * beyond the socket's bucket (watch_sampled()): the socket's storage, two
 * lines the request has not touched, was most of this program's cost.
 */
SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(lw_watch_ready, struct sock *sk)
{
	__u32 b = watch_bucket(sk), hint = watch_hint[b], i, seq, shift;
	struct watch_sock *ws;
	struct tcp_sock *tp;

	if (hint > 1 && !watch_pend[b]) {
		tp = bpf_skc_to_tcp_sock(sk);
		if (!tp || !watch_sampled(sk->__sk_common.skc_hash, tp->write_seq, hint - 1))
			return 0;
	}
	ws = watch_sock_of(sk);
	/* a direct load, not a probe read: a BTF pointer to the tcp_sock */
	tp = ws ? bpf_skc_to_tcp_sock(sk) : NULL;
	if (!tp || !ws->slot1)
		return 0;
	/* masked, not compared: a compare clang made on a copy left the index
	 * unbounded for the verifier */
	i = (ws->slot1 - 1) & (LW_MAX_TARGETS - 1);
	shift = watch_shift[i] % (LW_WATCH_SHIFT_MAX + 1);
	watch_hint_set(b, shift);
	seq = tp->write_seq;
	if (ws->started && seq == ws->seq)
		return 0; /* more of the same request: no reply since */
	if (ws->timed)
		watch_end(tp, ws, b);
	ws->started = 1;
	ws->seq = seq;
	if (!watch_sampled(sk->__sk_common.skc_hash, seq, shift))
		return 0;
	__sync_fetch_and_add(&watch_req[i], 1ULL << shift);
	watch_start(tp, ws, shift, b);
	return 0;
}

/* A target's connection leaves ESTABLISHED (closed by either end, or
 * reset): a timed request whose reply went out ends, as at a next read;
 * once a connection, not at every send. */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(lw_watch_close, struct sock *sk, int oldstate, int newstate)
{
	struct watch_sock *ws;
	struct tcp_sock *tp;

	if (oldstate != TCP_ESTABLISHED || !sk->sk_bpf_storage)
		return 0;
	ws = bpf_sk_storage_get(&watch_socks, sk, 0, 0);
	if (!ws || !ws->timed || !ws->slot1)
		return 0;
	tp = bpf_skc_to_tcp_sock(sk);
	if (tp && tp->write_seq != ws->seq)
		watch_end(tp, ws, watch_bucket(sk));
	else
		watch_unpend(ws, watch_bucket(sk));
	return 0;
}

#endif /* LW_WATCH_BPF_H */
