// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lw_http_serve.c - serve's exporter and HTTP endpoint without a tracer, for
 * tests/tools/test_http.py: `lw_http_serve PORT [INTERVAL_MS]` listens on
 * 127.0.0.1:PORT, says "serving PORT" on stdout once it does, and serves
 * until SIGTERM. The exporter renders what serve's does before its first
 * record: every family, the node's gauges read from /. Needs no root and
 * no BPF.
 *
 * With INTERVAL_MS a thread stands in for the tracing loop: it publishes
 * every INTERVAL_MS, as serve's ticks do, so /healthz is judged as serve's
 * is; SIGUSR1 stops its ticks (a hung loop), SIGUSR2 says the tracer
 * ended (every target exited). Without it /healthz has no tracer.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/export.h"
#include "export/health.h"
#include "export/http.h"

static atomic_bool hung;

struct ticker {
	struct lw_export *x;
	long ms;
};

static void *tick(void *arg)
{
	struct ticker *t = arg;
	struct timespec ts = {.tv_sec = t->ms / 1000, .tv_nsec = t->ms % 1000 * 1000000L};

	for (;;) {
		nanosleep(&ts, NULL);
		if (!atomic_load(&hung))
			lw_export_publish(t->x);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct ticker t = {};
	struct lw_export *x;
	struct lw_http *h;
	pthread_t th;
	sigset_t set;
	int sig;

	if (argc < 2 || argc > 3 || atoi(argv[1]) <= 0 || atoi(argv[1]) > 65535 ||
	    (argc == 3 && atol(argv[2]) <= 0)) {
		fprintf(stderr, "usage: lw_http_serve PORT [INTERVAL_MS]\n");
		return 2;
	}
	/* blocked before the server's thread starts, so that it inherits it
	 * and sigwait() below takes them */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	x = lw_export_new("lw_http_serve", "/");
	if (!x) {
		fprintf(stderr, "lw_http_serve: out of memory\n");
		return 1;
	}
	if (argc == 3) {
		t.x = x;
		t.ms = atol(argv[2]);
		lw_health_setup(lw_health_of(x), t.ms * 1000000ULL, 0, 0);
		if (pthread_create(&th, NULL, tick, &t)) {
			fprintf(stderr, "lw_http_serve: cannot start the ticking thread\n");
			return 1;
		}
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
	for (;;) {
		sigwait(&set, &sig);
		if (sig == SIGUSR1)
			atomic_store(&hung, true);
		else if (sig == SIGUSR2)
			lw_health_stopped(lw_health_of(x), 0, true);
		else
			break;
	}
	/* the ticking thread, if any, dies with the process: exit() below
	 * does not wait for it */
	lw_http_stop(h);
	if (argc == 3)
		return 0; /* x is the ticker's until the process ends */
	lw_export_free(x);
	return 0;
}
