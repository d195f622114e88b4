/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lab.h - helpers shared by the lab tools (lat_server, lat_client, lw_hog, udp_flood, fragment).
 *
 * Header-only, all static inline, so every tool still builds from its one .c file and the
 * Makefile needs no library or extra object. Define LAB_PROG to the tool's name before the
 * include: each message printed from here starts with it, word for word as the tools printed
 * them when each carried its own copy of these helpers.
 */
#ifndef LATWHY_TOOLS_LAB_H
#define LATWHY_TOOLS_LAB_H

#ifndef LAB_PROG
#error "define LAB_PROG to the tool's name before including lab.h"
#endif

#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A failed call the tool cannot run without: name it and errno's reason, exit 1. */
static inline __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, LAB_PROG ": %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Every command line mistake is one line naming the offending word, then exit 2. */
static inline __attribute__((noreturn)) void bad_opt(const char *msg, const char *arg)
{
	fprintf(stderr, LAB_PROG ": %s: '%s' (see -h)\n", msg, arg);
	exit(2);
}

/* One line for an unknown option or a missing value, not getopt's plus usage. */
static inline __attribute__((noreturn)) void bad_option(int o, char **argv)
{
	char opt[3] = {'-', (char)optopt, 0};

	bad_opt(o == ':' ? "option needs a value" : "unknown option",
		optopt ? opt : argv[optind - 1]);
}

/*
 * The getopt() cases every tool handles alike, for its "default:" label: -h prints the
 * help and exits 0, anything else (unknown option, missing value) is bad_option().
 */
static inline __attribute__((noreturn)) void lab_other_opt(int o, char **argv, void (*usage)(void))
{
	if (o == 'h') {
		usage();
		exit(0);
	}
	bad_option(o, argv);
}

/* After the options: the tools take no operands, so a leftover word is a mistake. */
static inline void lab_no_operands(int argc, char **argv)
{
	if (optind < argc)
		bad_opt("unexpected argument", argv[optind]);
}

/* "1", "0-1", "0,2-3" into a cpu_set_t; -1 on syntax errors. */
static inline int parse_cpulist(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s) {
		char *end;
		long lo = strtol(s, &end, 10), hi;

		if (end == s || lo < 0)
			return -1;
		hi = lo;
		if (*end == '-') {
			s = end + 1;
			hi = strtol(s, &end, 10);
			if (end == s || hi < lo)
				return -1;
		}
		if (hi >= CPU_SETSIZE)
			return -1;
		for (long c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return CPU_COUNT(set) ? 0 : -1;
}

/* A -c/-C CPU list option into *set, else bad_opt() exits. */
static inline void lab_opt_cpulist(const char *arg, cpu_set_t *set)
{
	if (parse_cpulist(arg, set))
		bad_opt("bad CPU list", arg);
}

/* A whole decimal number in 0..max, else -1: strtol() alone takes "12abc", "" and overflow. */
static inline long parse_long(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return (errno || end == s || *end || v < 0 || v > max) ? -1 : v;
}

/* An option's value by parse_long() in min..max (min >= 0), else bad_opt(msg) exits. */
static inline long lab_opt_long(const char *arg, long min, long max, const char *msg)
{
	long v = parse_long(arg, max);

	if (v < min)
		bad_opt(msg, arg);
	return v;
}

/*
 * For the "default:" label of lw_hog, udp_flood and fragment, which all run for -d SECONDS
 * (1..86400, into *secs); any other option goes on to lab_other_opt().
 */
static inline void lab_secs_or_other_opt(int o, char **argv, void (*usage)(void), long *secs)
{
	if (o != 'd')
		lab_other_opt(o, argv, usage);
	*secs = lab_opt_long(optarg, 1, 86400, "bad duration");
}

/*
 * The whole command line of lw_hog and lw_noise, "-C CPU -d SECONDS" (both required, no
 * operands), then the caller pinned to CPU. Returns CPU; exits 2 on a usage error, 1 when
 * the pin is refused.
 */
static inline long lab_cpu_secs_pinned(int argc, char **argv, void (*usage)(void), long *secs)
{
	long cpu = -1;
	cpu_set_t set;
	int o;

	*secs = -1;
	while ((o = getopt(argc, argv, ":C:d:h")) != -1) {
		if (o == 'C')
			cpu = lab_opt_long(optarg, 0, CPU_SETSIZE - 1, "bad CPU");
		else
			lab_secs_or_other_opt(o, argv, usage, secs);
	}
	if (cpu < 0 || *secs <= 0 || optind < argc) {
		fprintf(stderr, LAB_PROG ": -C CPU and -d SECONDS are required (see -h)\n");
		exit(2);
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, LAB_PROG ": cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
		exit(1);
	}
	return cpu;
}

/* Nanoseconds on CLOCK_MONOTONIC (vDSO, no syscall), the clock latwhy's BPF side reads too. */
static inline unsigned long long lab_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Seconds on CLOCK_MONOTONIC, for run-until deadlines that a wall clock step cannot move. */
static inline double now_s(void)
{
	return lab_now_ns() / 1e9;
}

/*
 * The address the lab tools serve, dial or flood: 127.0.0.1:port, or
 * $LAB_ADDR (an IPv4 address) for a test that puts the client across a
 * veth pair in another network namespace. A bad $LAB_ADDR is an error.
 */
static inline struct sockaddr_in lab_loopback(int port)
{
	const char *addr = getenv("LAB_ADDR");
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};

	if (addr && *addr && inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "%s: LAB_ADDR '%s' is not an IPv4 address\n", LAB_PROG, addr);
		exit(2);
	}
	return sa;
}

#endif /* LATWHY_TOOLS_LAB_H */
