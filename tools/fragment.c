// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fragment - fragment physical memory a little, for THP experiments.
 *
 *   fragment [-m MB] -d SECONDS
 *
 * Maps MB (default 512) MiB, touches it in 4 KiB pages (MADV_NOHUGEPAGE, so
 * each 2 MiB range is built from order-0 pages even with THP enabled=always),
 * then frees every other page. The freed pages are scattered order-0 holes:
 * a later huge page allocation must compact memory to find a 2 MiB block.
 * Holds the remaining pages until SECONDS have passed, then exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE_SZ 4096UL

static void usage(void)
{
	printf("usage: fragment [-m MB] -d SECONDS\n"
	       "  touch MB MiB (default 512) in 4 KiB pages, free every other page,\n"
	       "  hold the rest for SECONDS\n");
}

static void bad_opt(const char *msg, const char *arg)
{
	fprintf(stderr, "fragment: %s: '%s' (see -h)\n", msg, arg);
	exit(2);
}

/* One line for an unknown option or a missing value, not getopt's plus usage. */
static void bad_option(int o, char **argv)
{
	char opt[3] = {'-', (char)optopt, 0};

	bad_opt(o == ':' ? "option needs a value" : "unknown option",
		optopt ? opt : argv[optind - 1]);
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

static int fragment(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	if (madvise(p, len, MADV_NOHUGEPAGE))
		return -1;
	for (size_t off = 0; off < len; off += PAGE_SZ)
		p[off] = 1;
	for (size_t off = 0; off < len; off += 2 * PAGE_SZ) {
		if (madvise(p + off, PAGE_SZ, MADV_DONTNEED))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long mb = 512, secs = -1;
	double end;
	int o;

	while ((o = getopt(argc, argv, ":m:d:h")) != -1) {
		switch (o) {
		case 'm':
			mb = parse_long(optarg, 1L << 20);
			if (mb <= 0)
				bad_opt("bad size", optarg);
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
	if (secs <= 0 || optind < argc) {
		fprintf(stderr, "fragment: -d SECONDS is required (see -h)\n");
		return 2;
	}
	end = now_s() + secs;
	if (fragment((size_t)mb << 20)) {
		fprintf(stderr, "fragment: %s\n", strerror(errno));
		return 1;
	}
	while (now_s() < end)
		usleep(100000);
	return 0;
}
