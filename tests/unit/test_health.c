// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_health.c - serve's liveness (user/export/health.c) on fake clocks,
 * every state and every bound to the nanosecond, and GET /healthz through
 * the exporter's publish and the real endpoint: 200 "ok" while ticking,
 * 503 with the reason once stale or stopped.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/types.h>

#include <cmocka.h>

#include "export/export.h"
#include "export/health.h"
#include "export/http.h"

#define S	1000000000ULL
#define FIXTURE "tests/fixtures/acpi-powersave"

static char why[160];

static int check(struct lw_health *h, __u64 now)
{
	return lw_health_check(h, now, why, sizeof(why));
}

/* No tracer, then starting: 30 s to load before the first tick. */
static void test_start(void **state)
{
	struct lw_health h = {};

	assert_int_equal(check(&h, 5 * S), -1);
	assert_string_equal(why, "no tracer: serve has not started one");
	lw_health_setup(&h, 1 * S, 3 * S, 90 * S);
	assert_int_equal(h.gap_ns, 87 * S);
	h.start_ns = 100 * S;
	assert_int_equal(check(&h, 100 * S + LW_HEALTH_START_NS), 0);
	assert_string_equal(why, "starting");
	assert_int_equal(check(&h, 100 * S + LW_HEALTH_START_NS + 1), -1);
	assert_string_equal(why, "no tick in the 30.0 s since serve started");
}

/* Attached: 3 intervals since the last tick; detached: the gap more. */
static void test_ticks(void **state)
{
	struct lw_health h = {};

	lw_health_setup(&h, 1 * S, 3 * S, 90 * S);
	lw_health_beat(&h, 200 * S, false);
	assert_int_equal(check(&h, 203 * S), 0);
	assert_string_equal(why, "ticking");
	assert_int_equal(check(&h, 203 * S + 1), -1);
	assert_string_equal(why, "ticks stale: the last one 3.0 s ago, the interval 1.0 s");
	/* a clock read before the beat (the HTTP thread's) is no age */
	assert_int_equal(check(&h, 199 * S), 0);
	lw_health_beat(&h, 203 * S, true); /* the duty cycle's detach */
	assert_int_equal(check(&h, 203 * S + 90 * S), 0);
	assert_string_equal(why, "detached by the duty cycle");
	assert_int_equal(check(&h, 203 * S + 90 * S + 1), -1);
	assert_string_equal(
		why, "not attached again: detached 90.0 s ago by the duty cycle, for 87.0 s");
	lw_health_beat(&h, 290 * S, false); /* attached again */
	assert_int_equal(check(&h, 293 * S), 0);
	assert_int_equal(check(&h, 294 * S), -1);
	/* --sample off, a 250 ms interval: no gap */
	lw_health_setup(&h, S / 4, 0, 0);
	assert_int_equal(h.gap_ns, 0);
	lw_health_beat(&h, 10 * S, true);
	assert_int_equal(check(&h, 10 * S + 3 * S / 4), 0);
	assert_int_equal(check(&h, 10 * S + 3 * S / 4 + 1), -1);
}

/* A stopped tracer is unhealthy whatever its last tick. */
static void test_stopped(void **state)
{
	struct lw_health h = {};

	lw_health_setup(&h, 1 * S, 0, 0);
	lw_health_beat(&h, 10 * S, false);
	lw_health_stopped(&h, 0, true);
	assert_int_equal(check(&h, 10 * S), -1);
	assert_string_equal(why, "tracer stopped: every target exited");
	lw_health_stopped(&h, -EIO, false);
	assert_int_equal(check(&h, 10 * S), -1);
	assert_string_equal(why, "tracer failed: Input/output error");
	lw_health_stopped(&h, 0, false);
	assert_int_equal(check(&h, 10 * S), -1);
	assert_string_equal(why, "tracer stopped: serve is stopping");
}

static unsigned free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* GET path: the status line's code and the body, in code and body. */
static void get(unsigned port, const char *path, int *code, char *body, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	char buf[4096] = "", req[128];
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t n = 0;
	ssize_t r;
	char *b;

	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", path);
	send(fd, req, strlen(req), MSG_NOSIGNAL);
	while (n + 1 < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += r;
	close(fd);
	assert_int_equal(sscanf(buf, "HTTP/1.%*d %d", code), 1);
	b = strstr(buf, "\r\n\r\n");
	assert_non_null(b);
	snprintf(body, len, "%s", b + 4);
}

static void test_healthz(void **state)
{
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	struct lw_health *h = lw_health_of(x);
	unsigned port = free_port();
	struct lw_http *srv = lw_http_start(x, "127.0.0.1", port);
	char body[256];
	int code;

	assert_non_null(srv);
	get(port, "/healthz", &code, body, sizeof(body));
	assert_int_equal(code, 503);
	assert_string_equal(body, "no tracer: serve has not started one\n");
	lw_health_setup(h, 1 * S, 0, 0);
	get(port, "/healthz", &code, body, sizeof(body));
	assert_int_equal(code, 200); /* starting */
	assert_string_equal(body, "ok\n");
	lw_export_publish(x); /* a tick */
	get(port, "/healthz", &code, body, sizeof(body));
	assert_int_equal(code, 200);
	assert_string_equal(body, "ok\n");
	/* the last tick 5 s ago */
	lw_health_beat(h, lw_health_now_ns() - 5 * S, false);
	get(port, "/healthz", &code, body, sizeof(body));
	assert_int_equal(code, 503);
	assert_string_equal(body, "ticks stale: the last one 5.0 s ago, the interval 1.0 s\n");
	lw_export_publish(x);
	get(port, "/healthz", &code, body, sizeof(body));
	assert_int_equal(code, 200);
	lw_health_stopped(h, 0, true);
	get(port, "/healthz", &code, body, sizeof(body));
	assert_int_equal(code, 503);
	assert_string_equal(body, "tracer stopped: every target exited\n");
	/* /metrics is served on, whatever the health */
	get(port, "/metrics", &code, body, sizeof(body));
	assert_int_equal(code, 200);
	get(port, "/healthz/x", &code, body, sizeof(body));
	assert_int_equal(code, 404);
	lw_http_stop(srv);
	lw_export_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_stopped),
		cmocka_unit_test(test_healthz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
