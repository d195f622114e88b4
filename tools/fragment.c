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
 * Says so on stdout, holds the remaining pages until SECONDS have passed,
 * then exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define LAB_PROG "fragment"
#include "lab.h"

#define PAGE_SZ 4096UL

static void usage(void)
{
	printf("usage: fragment [-m MB] -d SECONDS\n"
	       "  touch MB MiB (default 512) in 4 KiB pages, free every other page,\n"
	       "  hold the rest for SECONDS\n");
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
			mb = lab_opt_long(optarg, 1, 1L << 20, "bad size");
			break;
		default:
			lab_secs_or_other_opt(o, argv, usage, &secs);
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
	/* inject.sh waits for this: touching the memory is the costly part */
	printf("fragment: %ld MiB touched, every other page freed\n", mb);
	fflush(stdout);
	while (now_s() < end)
		usleep(100000);
	return 0;
}
