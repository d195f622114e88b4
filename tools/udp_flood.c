// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udp_flood - loopback UDP flood whose receive side lands on one CPU.
 *
 *   udp_flood -p PORT -C CPU -d SECONDS
 *
 * The main thread sends 64-byte datagrams to 127.0.0.1:PORT as fast as it
 * can, on whatever CPU the caller pinned it to (taskset). A receiver thread,
 * pinned to CPU, drains a socket bound to PORT so datagrams are delivered
 * rather than answered with ICMP port unreachable. With lo's rps_cpus set to
 * CPU, the NET_RX softirq work of every datagram runs on CPU too.
 */
#include <errno.h>
#include <netinet/in.h>
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

static void usage(void)
{
	printf("usage: udp_flood -p PORT -C CPU -d SECONDS\n"
	       "  flood 127.0.0.1:PORT (0 = any free port) with 64-byte datagrams from\n"
	       "  the current CPU(s); a receiver thread pinned to CPU drains them\n");
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

static void flood(int fd, double end)
{
	static char payload[DGRAM_SIZE];
	struct mmsghdr msgs[BATCH];
	struct iovec iov = {.iov_base = payload, .iov_len = sizeof(payload)};

	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (now_s() < end) {
		/* Drops (ENOBUFS etc.) are expected under a flood; keep pushing. */
		if (sendmmsg(fd, msgs, BATCH, 0) < 0 && errno != ENOBUFS && errno != EINTR &&
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
	while ((o = getopt(argc, argv, ":p:C:d:h")) != -1) {
		switch (o) {
		case 'p':
			port = lab_opt_long(optarg, 0, 65535, "bad port");
			break;
		case 'C':
			rx_cpu = lab_opt_long(optarg, 0, CPU_SETSIZE - 1, "bad CPU");
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
	if (pthread_create(&rx, NULL, receiver, NULL)) {
		fprintf(stderr, "udp_flood: cannot start receiver thread\n");
		return 1;
	}
	flood(tx_fd, now_s() + secs);
	return 0;
}
