// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * listen.c - the local ports of the TCP listeners in a process's network
 * namespace: which sockets carry requests (control.c).
 *
 * From sock_diag where the process shares latwhy's namespace: a dump of
 * the listening state alone walks only the listening hash. /proc/net/tcp
 * walks every bucket of the established hash to print its listeners (the
 * table is sized by RAM): 11 ms of kernel time for tcp and tcp6 on a
 * 24 GiB guest, every 10 s, a third of serve's 0.3% budget. A process in
 * another namespace (a pod's) is read from its /proc tables: a netlink
 * socket of its namespace would take setns(), CAP_SYS_ADMIN, which serve
 * does not hold.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "source/probe.h"

int lw_parse_listen_ports(FILE *f, __u64 *bits)
{
	char line[512];
	int n = 0;

	while (fgets(line, sizeof(line), f)) {
		unsigned int port, st;

		/* "sl: local_address:port rem_address:port st ...", in hex; the
		 * header line does not match */
		if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", &port, &st) != 2)
			continue;
		if (st != 0x0a || port > 65535) /* TCP_LISTEN */
			continue;
		bits[port / 64] |= 1ULL << (port % 64);
		n++;
	}
	return n;
}

static int listen_proc(int pid, __u64 *bits)
{
	static const char *const tables[] = {"tcp", "tcp6"};
	int n = 0, err = -ENOENT;
	bool read = false;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, tables[i]);
		f = fopen(path, "re");
		if (!f) {
			err = -errno;
			continue;
		}
		n += lw_parse_listen_ports(f, bits);
		fclose(f);
		read = true;
	}
	return read ? n : err;
}

/* One family's listeners by sock_diag on fd; their number or -errno. */
static int listen_diag_family(int fd, __u8 family, __u64 *bits)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = {.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
		.req = {.sdiag_family = family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_states = 1U << TCP_LISTEN},
	};
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
	long buf[8192 / sizeof(long)];
	int n = 0;

	if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (len < 0 && errno == EINTR)
			continue; /* the dump goes on: a signal is no end of it */
		if (len < 0)
			return -errno;
		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			struct inet_diag_msg *m = NLMSG_DATA(h);
			unsigned int port;

			if (h->nlmsg_type == NLMSG_DONE)
				return n;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error ? e->error : -EPROTO;
			}
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) || m->idiag_state != TCP_LISTEN)
				continue;
			port = ntohs(m->id.idiag_sport);
			bits[port / 64] |= 1ULL << (port % 64);
			n++;
		}
	}
}

static int listen_diag(__u64 *bits)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	int n4, n6;

	if (fd < 0)
		return -errno;
	n4 = listen_diag_family(fd, AF_INET, bits);
	n6 = n4 < 0 ? n4 : listen_diag_family(fd, AF_INET6, bits);
	close(fd);
	if (n4 < 0)
		return n4;
	return n6 < 0 ? (n6 == -EAFNOSUPPORT || n6 == -ENOENT ? n4 : n6) : n4 + n6;
}

/* The identity of pid's network namespace: the inode of its tcp table, one
 * proc entry a namespace. Not /proc/PID/ns/net, whose stat takes a ptrace
 * check that serve, holding no CAP_SYS_PTRACE, fails. */
static int listen_netns(int pid, struct stat *st)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/net/tcp", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/net/tcp");
	return stat(path, st) ? -errno : 0;
}

static bool listen_same(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

int lw_probe_listen_ports_pids(const int *pids, int npids, __u64 *bits)
{
	struct stat self, seen[LW_LISTEN_NETNS];
	int nseen = 0, n = 0, err = -ENOENT;
	bool own = !listen_netns(0, &self), read = false;

	for (int i = 0; i < npids && nseen < LW_LISTEN_NETNS; i++) {
		struct stat st;
		int k, r = -1;

		if (listen_netns(pids[i], &st)) {
			err = -errno;
			continue; /* gone, or not ours to see */
		}
		for (k = 0; k < nseen && !listen_same(&seen[k], &st); k++)
			;
		if (k < nseen)
			continue; /* its namespace is read already */
		seen[nseen++] = st;
		if (own && listen_same(&st, &self))
			r = listen_diag(bits);
		if (r < 0) /* another namespace, or sock_diag refused */
			r = listen_proc(pids[i], bits);
		if (r < 0) {
			err = r;
			continue;
		}
		n += r;
		read = true;
	}
	return read ? n : err;
}

int lw_probe_listen_ports(int pid, __u64 *bits)
{
	return lw_probe_listen_ports_pids(&pid, 1, bits);
}

int lw_probe_listen_ports_proc(int pid, __u64 *bits)
{
	return listen_proc(pid, bits);
}
