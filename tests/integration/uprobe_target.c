// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uprobe_target - a process whose "request" is one call of handle_request(),
 * for testing `latwhy --request uprobe:BINARY:SYMBOL`. Each call spins for
 * about SPIN_US microseconds, then sleeps 1 ms between calls.
 *
 *   uprobe_target SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SPIN_US 300

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* noinline + used: the symbol must exist and be called for the uprobe */
__attribute__((noinline, used)) int handle_request(int n)
{
	unsigned long long end = now_ns() + SPIN_US * 1000ULL;
	volatile int x = n;

	while (now_ns() < end)
		x++;
	return x;
}

int main(int argc, char **argv)
{
	unsigned long long end;
	int n = 0;

	if (argc != 2 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: uprobe_target SECONDS\n");
		return 2;
	}
	end = now_ns() + atoi(argv[1]) * 1000000000ULL;
	printf("uprobe_target pid=%d\n", getpid());
	fflush(stdout);
	while (now_ns() < end) {
		handle_request(n++);
		usleep(1000);
	}
	return 0;
}
