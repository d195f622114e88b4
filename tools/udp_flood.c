// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udp_flood - loopback UDP flood whose receive side lands on one CPU.
 *
 *   udp_flood -p PORT -C CPU -d SECONDS [-b RATE]
 *
 * The main thread sends 64-byte datagrams to 127.0.0.1:PORT as fast as it
 * can, on whatever CPU the caller pinned it to (taskset). A receiver thread,
 * pinned to CPU, drains a socket bound to PORT so datagrams are delivered
 * rather than answered with ICMP port unreachable. With lo's rps_cpus set to
 * CPU, the NET_RX softirq work of every datagram runs on CPU too.
 *
 * Datagram by datagram, the backlog on CPU runs empty between them, and
 * nearly every datagram costs CPU an RPS interrupt (37k/s on the development
 * VM), each with some 8 us of delivery outside the guest that no tracer in it
 * sees. -b sends RATE bursts a second instead, each 16 UDP GSO packets of 64
 * datagrams that CPU's NET_RX splits in one run per interrupt, as NAPI
 * batches a busy NIC's: 1024 datagrams per interrupt.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LAB_PROG "udp_flood"
#include "lab.h"

#define DGRAM_SIZE 64
#define BATCH	   64
#define BURST_PKTS 16 /* -b: GSO packets per burst */
#define GSO_SEGS   64 /* datagrams per GSO packet: UDP_MAX_SEGMENTS before 6.9 */

static void usage(void)
{
	printf("usage: udp_flood -p PORT -C CPU -d SECONDS [-b RATE]\n"
	       "  flood 127.0.0.1:PORT (0 = any free port) with 64-byte datagrams from\n"
	       "  the current CPU(s); a receiver thread pinned to CPU drains them\n"
	       "  -b RATE  RATE bursts a second of %d UDP GSO packets of %d datagrams,\n"
	       "           one receive softirq run each, instead of datagram by datagram\n",
	       BURST_PKTS, GSO_SEGS);
}

static struct sockaddr_in dst;

static int rx_fd;
static long rx_cpu;

/* Drain in batches, so the receiver costs the target CPU little next to softirq. */
static void *receiver(void *arg)
{
	static char bufs[BATCH][DGRAM_SIZE];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(rx_cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		fprintf(stderr, "udp_flood: cannot pin receiver to CPU %ld\n", rx_cpu);
		exit(1);
	}
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = DGRAM_SIZE;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	for (;;) {
		if (recvmmsg(rx_fd, msgs, BATCH, MSG_WAITFORONE, NULL) < 0 && errno != EINTR)
			die("recvmmsg");
	}
	return NULL;
}

static long burst_rate; /* -b: bursts per second, 0 = datagram by datagram */

static void flood(int fd, double end)
{
	static char payload[DGRAM_SIZE * GSO_SEGS];
	struct mmsghdr msgs[BATCH];
	struct iovec iov = {.iov_base = payload,
			    .iov_len = burst_rate ? sizeof(payload) : DGRAM_SIZE};
	int n = burst_rate ? BURST_PKTS : BATCH;
	double next = now_s();

	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (now_s() < end) {
		if (burst_rate) {
			/* spin, not sleep: a timer's wake-up would add its own
			 * interrupt, and the sender's CPU is not the one measured */
			next += 1.0 / burst_rate;
			while (now_s() < next)
				;
		}
		/* Drops (ENOBUFS etc.) are expected under a flood; keep pushing. */
		if (sendmmsg(fd, msgs, n, 0) < 0 && errno != ENOBUFS && errno != EINTR &&
		    errno != ECONNREFUSED && errno != EAGAIN)
			die("sendmmsg");
	}
}

int main(int argc, char **argv)
{
	long port = -1, secs = -1;
	pthread_t rx;
	socklen_t alen = sizeof(dst);
	int o, tx_fd;

	rx_cpu = -1;
	while ((o = getopt(argc, argv, ":p:C:d:b:h")) != -1) {
		switch (o) {
		case 'p':
			port = lab_opt_long(optarg, 0, 65535, "bad port");
			break;
		case 'C':
			rx_cpu = lab_opt_long(optarg, 0, CPU_SETSIZE - 1, "bad CPU");
			break;
		case 'b':
			burst_rate = lab_opt_long(optarg, 1, 100000, "bad burst rate");
			break;
		default:
			lab_secs_or_other_opt(o, argv, usage, &secs);
		}
	}
	if (port < 0 || rx_cpu < 0 || secs <= 0 || optind < argc) {
		fprintf(stderr, "udp_flood: -p PORT, -C CPU and -d SECONDS are needed (see -h)\n");
		return 2;
	}
	dst = lab_loopback(port);

	rx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx_fd < 0)
		die("socket");
	if (bind(rx_fd, (struct sockaddr *)&dst, sizeof(dst)))
		die("bind");
	if (getsockname(rx_fd, (struct sockaddr *)&dst, &alen))
		die("getsockname");
	tx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (tx_fd < 0)
		die("socket");
	if (connect(tx_fd, (struct sockaddr *)&dst, sizeof(dst)))
		die("connect");
	if (burst_rate) {
		int size = DGRAM_SIZE;

		if (setsockopt(tx_fd, SOL_UDP, UDP_SEGMENT, &size, sizeof(size)))
			die("setsockopt UDP_SEGMENT");
	}
	if (pthread_create(&rx, NULL, receiver, NULL)) {
		fprintf(stderr, "udp_flood: cannot start receiver thread\n");
		return 1;
	}
	flood(tx_fd, now_s() + secs);
	return 0;
}
