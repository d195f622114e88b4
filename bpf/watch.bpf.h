/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * watch.bpf.h - the always-attached tier of serve: two programs that count
 * every TCP request of the targets, time a sample of them and count the
 * slow ones, and nothing else, so that they can stay attached while the
 * rest is detached.
 *
 * A request is one socket's span from its data's arrival to the next send
 * on it: right for event loops with many connections on one thread and for
 * a request answered by another thread. Both ends are on the target's own
 * CPU: its start is read as the read copies the request's data
 * (lw_watch_ready), its end as the reply's send begins. Nothing runs where
 * the packet arrives: a write there (sk_data_ready, on loopback the
 * client's CPU) was most of this tier's cost on redis once. Nor on
 * sock_recv_length, which fires at every read of every socket on the node.
 *
 * Every request is counted (watch_req) at its start, where the socket's
 * storage says whether it is a new one: its write_seq moved since the last
 * (a reply was sent in between). Only 1 in 2^watch_shift[slot] of them is
 * timed, the shift chosen by userspace from the target's rate
 * (user/source/duty.c) so that about 1000 a second are: a timed one waits
 * in watch_open[], a small table keyed by its connection, with a byte in
 * watch_busy[], so that the send programs, which run at every send on the
 * node, find it with no helper call and most sends return at that byte.
 * Timing every request cost nginx's ~32 us requests 1.9% of their
 * throughput here, the lookups, clocks and counters a few tenths each;
 * counting them all and timing a sample keeps only the read's storage
 * lookup on every request.
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

/* A timed request whose end was never seen (its connection reset) holds
 * its entry this long at most. */
#define LW_WATCH_STALE_NS (10ULL * 1000000000ULL)

struct watch_sock {
	/* its reader's target slot + 1 (0: a socket of no target's after
	 * all): a socket stays its process's, so found once per connection */
	__u32 slot1;
	__u32 seq; /* write_seq at its last request's start */
	__u8 started;
	__u8 timed; /* its last request was timed: watch_open[] may hold it */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct watch_sock);
} watch_socks SEC(".maps");

/* A number, not the socket: its address is no scalar to the verifier. */
struct lw_watch_open watch_open[LW_WATCH_OPEN] = {};
/* Which of them may be held, a byte each (a store, no atomic): 1 KiB that
 * every send of a target's socket reads, not the 24 KiB table, in which a
 * send's line was a cache miss. */
__u8 watch_busy[LW_WATCH_OPEN] = {};

/* Per target slot: every request; the timed ones, their latency, the slow
 * ones among them and theirs; the slow ones weighted (an estimate of all
 * slow requests); the time of the first slow one since userspace last
 * zeroed it; and the shift userspace sets, 1 in 2^shift timed. */
__u64 watch_req[LW_MAX_TARGETS] = {};
__u64 watch_timed[LW_MAX_TARGETS] = {};
__u64 watch_lat_ns[LW_MAX_TARGETS] = {};
__u64 watch_slow[LW_MAX_TARGETS] = {};
__u64 watch_slow_ns[LW_MAX_TARGETS] = {};
__u64 watch_est_slow[LW_MAX_TARGETS] = {};
__u64 watch_est_slow_ns[LW_MAX_TARGETS] = {};
__u64 watch_first_ns[LW_MAX_TARGETS] = {};
volatile __u32 watch_shift[LW_MAX_TARGETS] = {};

/* The connection: its peer's address (IPv4, or an IPv6 one's last word)
 * and both ports; never 0 once connected. */
static __always_inline __u64 watch_conn(const struct sock *sk)
{
	__u32 addr = sk->__sk_common.skc_daddr ^ sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32[3];

	return (__u64)addr << 32 | sk->__sk_common.skc_portpair;
}

static __always_inline __u32 watch_open_at(__u64 conn)
{
	__u32 h = (__u32)((conn * 0x9E3779B97F4A7C15ULL) >> (64 - LW_WATCH_OPEN_BITS));

	return h & (LW_WATCH_OPEN - 1);
}

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

/*
 * A timed request's start is tcp_mstamp as the read copies its data, the
 * last refresh before the read: the arrival of the request's latest segment
 * (tcp_rcv_established()), on the same clock as bpf_ktime_get_ns()
 * (tcp_clock_us()), in microseconds; so its wait to be read, where a CPU
 * hog's time goes, is in it. A delayed-ACK timer that fired before the read
 * refreshes it too: a wait over its 40 ms is timed from then. Not
 * tcp_mstamp once the read has returned: its ACK refreshes it, and a hog
 * that doubled a lab server's requests (2.6 to 4.7 ms) moved the mean timed
 * from there only 1.17x.
 */
static __always_inline void watch_time(const struct tcp_sock *tp, __u32 h, __u64 conn, __u32 i,
				       __u32 shift)
{
	struct lw_watch_open *o = &watch_open[h & (LW_WATCH_OPEN - 1)];
	__u64 now = bpf_ktime_get_ns(), start = tp->tcp_mstamp * 1000;

	if (o->conn && o->conn != conn && now - o->start_ns < LW_WATCH_STALE_NS)
		return; /* another's: this one is counted, not timed */
	o->start_ns = start && start <= now ? start : now;
	o->slot = i;
	o->shift = shift;
	o->conn = conn;
	watch_busy[h & (LW_WATCH_OPEN - 1)] = 1;
}

/*
 * A read copies data out (tcp_recvmsg_locked() calls tcp_rcv_space_adjust()
 * after each segment it copies), on the reader's CPU, before the read's own
 * ACK: a request starts at the first after a reply.
 */
SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(lw_watch_ready, struct sock *sk)
{
	struct watch_sock *ws = watch_sock_of(sk);
	/* a direct load, not a probe read: a BTF pointer to the tcp_sock */
	struct tcp_sock *tp = ws ? bpf_skc_to_tcp_sock(sk) : NULL;
	struct lw_watch_open *o;
	__u64 conn, shift;
	__u32 i, h, seq;
	bool timed;

	if (!tp || !ws->slot1)
		return 0;
	seq = tp->write_seq;
	if (ws->started && seq == ws->seq)
		return 0; /* more of the same request: no reply since */
	ws->started = 1;
	ws->seq = seq;
	/* masked, not compared: a compare clang made on a copy left the index
	 * unbounded for the verifier */
	i = (ws->slot1 - 1) & (LW_MAX_TARGETS - 1);
	__sync_fetch_and_add(&watch_req[i], 1);
	shift = watch_shift[i] % (LW_WATCH_SHIFT_MAX + 1);
	timed = !(watch_req[i] & ((1ULL << shift) - 1));
	/* the table only for a timed request, or after one: the rest touch
	 * the socket's storage alone */
	if (!timed && !ws->timed)
		return 0;
	conn = watch_conn(sk);
	h = watch_open_at(conn);
	o = &watch_open[h];
	if (ws->timed && o->conn == conn) {
		o->conn = 0; /* its last timed request's reply went unseen */
		watch_busy[h] = 0;
	}
	ws->timed = timed;
	if (timed)
		watch_time(tp, h, conn, i, shift);
	return 0;
}

/* A timed request's reply starts: its latency, weighted by 2^shift where
 * it estimates all requests'. */
static __always_inline void watch_end(struct sock *sk)
{
	struct lw_watch_open *o;
	__u64 conn, now, latency, w;
	__u32 i, h;

	/* a target's socket has storage: most have none, and stop here */
	if (!sk->sk_bpf_storage)
		return;
	conn = watch_conn(sk);
	h = watch_open_at(conn);
	if (!watch_busy[h])
		return;
	o = &watch_open[h];
	if (o->conn != conn)
		return;
	now = bpf_ktime_get_ns();
	o->conn = 0;
	watch_busy[h] = 0;
	latency = now - o->start_ns;
	i = o->slot & (LW_MAX_TARGETS - 1);
	w = 1ULL << (o->shift % (LW_WATCH_SHIFT_MAX + 1));
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
		watch_first_ns[i] = now;
}

/* A TCP reply starts (6.13+: Debian's 6.12.118 lacks it), before its
 * data is queued: as lw_tcp_send. */
SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(lw_watch_tcp_send, struct sock *sk)
{
	watch_end(sk);
	return 0;
}

/* Before 6.13: the end of the send, late by the reply's transmit. */
SEC("tp_btf/sock_send_length")
int BPF_PROG(lw_watch_send, struct sock *sk, int ret, int flags)
{
	if (sk->sk_protocol == IPPROTO_TCP)
		watch_end(sk);
	return 0;
}

#endif /* LW_WATCH_BPF_H */
