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

#define DGRAM_SIZE 64
#define BATCH	   64

static void usage(void)
{
	printf("usage: udp_flood -p PORT -C CPU -d SECONDS\n"
	       "  flood 127.0.0.1:PORT (0 = any free port) with 64-byte datagrams from\n"
	       "  the current CPU(s); a receiver thread pinned to CPU drains them\n");
}

static void bad_opt(const char *msg, const char *arg)
{
	fprintf(stderr, "udp_flood: %s: '%s' (see -h)\n", msg, arg);
	exit(2);
}

/* One line for an unknown option or a missing value, not getopt's plus usage. */
static void bad_option(int o, char **argv)
{
	char opt[3] = {'-', (char)optopt, 0};

	bad_opt(o == ':' ? "option needs a value" : "unknown option",
		optopt ? opt : argv[optind - 1]);
}

static void die(const char *what)
{
	fprintf(stderr, "udp_flood: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long parse_long(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return (errno || end == s || *end || v < 0 || v > max) ? -1 : v;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sockaddr_in dst = {
	.sin_family = AF_INET,
};

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
			port = parse_long(optarg, 65535);
			if (port < 0)
				bad_opt("bad port", optarg);
			break;
		case 'C':
			rx_cpu = parse_long(optarg, CPU_SETSIZE - 1);
			if (rx_cpu < 0)
				bad_opt("bad CPU", optarg);
			break;
		case 'd':
			secs = parse_long(optarg, 86400);
			if (secs <= 0)
				bad_opt("bad duration", optarg);
			break;
		case 'h':
			usage();
			return 0;
		default:
			bad_option(o, argv);
		}
	}
	if (port < 0 || rx_cpu < 0 || secs <= 0 || optind < argc) {
		fprintf(stderr, "udp_flood: -p PORT, -C CPU and -d SECONDS are needed (see -h)\n");
		return 2;
	}
	dst.sin_port = htons(port);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

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
