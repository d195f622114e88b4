// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lw_http_serve.c - serve's exporter and HTTP endpoint without a tracer, for
 * tests/tools/test_http.py: `lw_http_serve PORT` listens on 127.0.0.1:PORT,
 * says "serving PORT" on stdout once it does, and serves until SIGTERM.
 * The exporter renders what serve's does before its first record: every
 * family, the node's gauges read from /. Needs no root and no BPF.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "export/http.h"

int main(int argc, char **argv)
{
	struct lw_export *x;
	struct lw_http *h;
	sigset_t set;
	int sig;

	if (argc != 2 || atoi(argv[1]) <= 0 || atoi(argv[1]) > 65535) {
		fprintf(stderr, "usage: lw_http_serve PORT\n");
		return 2;
	}
	/* blocked before the server's thread starts, so that it inherits it
	 * and sigwait() below takes them */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	x = lw_export_new("lw_http_serve", "/");
	if (!x) {
		fprintf(stderr, "lw_http_serve: out of memory\n");
		return 1;
	}
	h = lw_http_start(x, "127.0.0.1", atoi(argv[1]));
	if (!h) {
		fprintf(stderr, "lw_http_serve: cannot listen on 127.0.0.1:%s: %s\n", argv[1],
			strerror(errno));
		lw_export_free(x);
		return 1;
	}
	printf("serving %s\n", argv[1]);
	fflush(stdout);
	sigwait(&set, &sig);
	lw_http_stop(h);
	lw_export_free(x);
	return 0;
}
