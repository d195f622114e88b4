// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_export.c - the Prometheus exporter on synthetic records: the families
 * and values it renders, its histogram, its counters across a re-attach, the
 * node's gauges on a fixture, the HTTP endpoint on loopback, serve's
 * options. No BPF, no root.
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

#include "latwhy.h"
#include "cli/parse.h"
#include "cli/serve_opts.h"
#include "export/export.h"
#include "export/http.h"
#include "scrape.h"

#define FIXTURE "tests/fixtures/acpi-powersave"
#define MS	1000000ULL

static void feed(struct lw_export *x, const void *rec, size_t len)
{
	struct lw_sink s = lw_export_sink(x);

	assert_int_equal(lw_sink_record(&s, rec, len), 0);
}

static void feed_tick(struct lw_export *x, __u64 requests)
{
	struct lw_tick_rec t = {.type = LW_REC_TICK, .requests = requests};

	feed(x, &t, sizeof(t));
}

/* A slow request of latency_ns, ns[bucket] of it in bucket, the rest run,
 * counted into c as the kernel counts it (causes_count(), request.bpf.h). */
static void count_request(struct lw_cause_counts *c, __u64 latency_ns, int bucket, __u64 ns,
			  __u32 flags)
{
	__u64 b[LW_B_MAX] = {0}, v[LW_CAUSE_MAX];

	if (flags & LW_REQ_HANDOFF) {
		c->handoff++;
		c->handoff_ns += latency_ns;
		return;
	}
	b[bucket] = ns;
	b[LW_B_RUN] += latency_ns - ns;
	lw_cause_ns(b, v);
	c->slow[lw_cause_of(v, latency_ns)]++;
	for (int k = LW_CAUSE_FREQ; k <= LW_CAUSE_TRACED_LAST; k++)
		c->ns[k] += v[k];
	c->latency_ns += latency_ns;
}

static void feed_hist(struct lw_export *x, const __u64 *lat, const __u64 *count, int n)
{
	struct lw_hist_rec *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	h->type = LW_REC_HIST;
	for (int i = 0; i < n; i++)
		h->b[lw_hist_bucket(lat[i])] += count[i];
	feed(x, h, sizeof(*h));
	free(h);
}

static void feed_meta(struct lw_export *x, __u64 dropped)
{
	struct lw_meta_rec m = {.type = LW_REC_META, .dropped = dropped};

	feed(x, &m, sizeof(m));
}

static void test_series(void **state)
{
	struct lw_export *x = lw_export_new("/a", FIXTURE);
	struct lw_sink s = lw_export_sink(x);
	__u64 *b = calloc(LW_HIST_BUCKETS, sizeof(*b));
	struct lw_cause_counts c = {0};
	char *t;

	assert_non_null(b);
	assert_int_equal(lw_export_add_series(x, "nginx.service"), 1);
	assert_int_equal(lw_export_add_series(x, "/a"), 0); /* the same label: one series */
	count_request(&c, 10 * MS, LW_B_SCHED, 9 * MS, 0);
	lw_export_series_causes(x, 1, &c);
	lw_export_series_causes(x, 2, &c); /* no such series: not counted */
	/* several series: the ticks' total is no series' count; each series
	 * counts its own histogram */
	feed_tick(x, 1000);
	b[lw_hist_bucket(200000)] = 30;
	lw_export_series_hist(x, 0, b);
	b[lw_hist_bucket(200000)] = 0;
	b[lw_hist_bucket(10 * MS)] = 5;
	lw_export_series_hist(x, 1, b);
	assert_int_equal(lw_sink_tick(&s, 1), 0);
	t = render(x);
	assert_true(sample(t, "latwhy_requests_total{target=\"/a\"}") == 30);
	assert_true(sample(t, "latwhy_requests_total{target=\"nginx.service\"}") == 5);
	assert_true(
		sample(t, "latwhy_slow_requests_total{target=\"nginx.service\",cause=\"sched\"}") ==
		1);
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"/a\",cause=\"sched\"}") == 0);
	assert_true(sample(t, "latwhy_request_duration_seconds_count{target=\"nginx.service\"}") ==
		    5);
	assert_true(
		sample(t, "latwhy_request_duration_seconds_bucket{target=\"/a\",le=\"+Inf\"}") ==
		30);
	/* one HELP and TYPE a family, the samples of both series under it */
	assert_int_equal(count_lines(t, "# TYPE latwhy_requests_total "), 1);
	assert_int_equal(count_lines(t, "# TYPE latwhy_request_duration_seconds "), 1);
	assert_int_equal(count_lines(t, "latwhy_requests_total{"), 2);
	free(t);
	free(b);
	lw_export_free(x);
}

static void test_slow_by_cause(void **state)
{
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	struct lw_sink s = lw_export_sink(x);
	struct lw_cause_counts c = {0};
	char *t;

	feed_tick(x, 1000);
	count_request(&c, 10 * MS, LW_B_SCHED, 6 * MS, 0);
	count_request(&c, 4 * MS, LW_B_SCHED, 1 * MS, 0);
	count_request(&c, 2 * MS, LW_B_IRQ, 1 * MS, 0);
	count_request(&c, 2 * MS, LW_B_SOFTIRQ, 500000, 0);
	count_request(&c, 5 * MS, LW_B_THP, 4 * MS, 0);
	count_request(&c, 100 * MS, LW_B_FREQ, 1 * MS, 0); /* 1%: below 5%, none */
	count_request(&c, 3 * MS, 0, 0, LW_REQ_HANDOFF);   /* not split: none */
	lw_export_series_causes(x, 0, &c);
	/* nothing is seen before the tick publishes it */
	t = render(x);
	assert_true(sample(t, "latwhy_requests_total{target=\"srv\"}") == 0);
	free(t);
	assert_int_equal(lw_sink_tick(&s, 1), 0);
	t = render(x);
	assert_true(sample(t, "latwhy_requests_total{target=\"srv\"}") == 1000);
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"srv\",cause=\"sched\"}") == 2);
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"srv\",cause=\"irq\"}") == 2);
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"srv\",cause=\"thp\"}") == 1);
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"srv\",cause=\"frequency\"}") ==
		    0);
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"srv\",cause=\"idle\"}") == 0);
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"srv\",cause=\"none\"}") == 2);
	assert_true(
		sample(t, "latwhy_slow_request_seconds_total{target=\"srv\",cause=\"sched\"}") ==
		0.007);
	assert_true(sample(t, "latwhy_slow_request_seconds_total{target=\"srv\",cause=\"irq\"}") ==
		    0.0015);
	assert_true(sample(t, "latwhy_slow_request_seconds_total{target=\"srv\",cause=\"thp\"}") ==
		    0.004);
	assert_true(sample(t, "latwhy_slow_request_seconds_total{target=\"srv\",cause="
			      "\"frequency\"}") == 0.001);
	/* the rest of all slow time: 126 ms of latency, 13.5 ms of causes */
	assert_true(sample(t, "latwhy_slow_request_seconds_total{target=\"srv\",cause=\"none\"}") ==
		    0.1125);
	/* one HELP and one TYPE a family */
	assert_int_equal(count_lines(t, "# TYPE latwhy_slow_requests_total counter"), 1);
	assert_int_equal(count_lines(t, "# HELP latwhy_slow_requests_total "), 1);
	/* a series per cause: none, the five of before, quota, memory */
	assert_int_equal(count_lines(t, "latwhy_slow_requests_total{"), 8);
	assert_int_equal(count_lines(t, "latwhy_slow_request_seconds_total{"), 8);
	free(t);
	lw_export_free(x);
}

static void test_histogram(void **state)
{
	static const __u64 lat[] = {1500, 3000, 3000, 250000, 40000000000ULL};
	static const __u64 cnt[] = {1, 2, 3, 4, 5};
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	const char *b = "latwhy_request_duration_seconds_bucket{target=\"srv\",le=";
	char key[128], *t;
	double prev = 0;

	feed_hist(x, lat, cnt, 5);
	lw_export_publish(x);
	t = render(x);
	assert_int_equal(count_lines(t, "# TYPE latwhy_request_duration_seconds histogram"), 1);
	/* 1500 ns is above 1.024 us, at most 2.048 us; 3000 below 4.096 us */
	snprintf(key, sizeof(key), "%s\"1.024e-06\"}", b);
	assert_true(sample(t, key) == 0);
	snprintf(key, sizeof(key), "%s\"2.048e-06\"}", b);
	assert_true(sample(t, key) == 1);
	snprintf(key, sizeof(key), "%s\"4.096e-06\"}", b);
	assert_true(sample(t, key) == 6);
	snprintf(key, sizeof(key), "%s\"0.000262144\"}", b);
	assert_true(sample(t, key) == 10);
	/* 40 s is beyond the last bound: only +Inf counts it */
	snprintf(key, sizeof(key), "%s\"34.359738368\"}", b);
	assert_true(sample(t, key) == 10);
	snprintf(key, sizeof(key), "%s\"+Inf\"}", b);
	assert_true(sample(t, key) == 15);
	assert_true(sample(t, "latwhy_request_duration_seconds_count{target=\"srv\"}") == 15);
	/* about 200 s: 5 x 40 s within the bucket's 1/16 */
	assert_in_range(sample(t, "latwhy_request_duration_seconds_sum{target=\"srv\"}"), 190, 215);
	/* cumulative: never falls from one bound to the next */
	for (int k = LW_EXPORT_LE_MIN; k <= LW_EXPORT_LE_MAX; k++) {
		double v;

		snprintf(key, sizeof(key), "%s\"%.12g\"}", b, (double)(1ULL << k) / 1e9);
		v = sample(t, key);
		assert_true(v >= prev);
		prev = v;
	}
	assert_int_equal(count_lines(t, b), LW_EXPORT_LE_MAX - LW_EXPORT_LE_MIN + 2);
	free(t);
	lw_export_free(x);
}

/* The tracer restarts on a new process: its HIST and META start from zero,
 * the exporter's counters go on from where they were. */
static void test_reattach(void **state)
{
	static const __u64 lat[] = {100000};
	__u64 first = 7, second = 3;
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	struct lw_cpu_rec cpu = {.type = LW_REC_CPU, .cpu = 1, .khz = 2000000};
	struct lw_meta_rec m = {.type = LW_REC_META, .freq_source = LW_FREQ_TRACEPOINT};
	const char *freq = "latwhy_cpu_frequency_hertz{cpu=\"1\",source=\"cpu_frequency\"}";
	struct lw_cause_counts c = {0};
	char *t;

	feed(x, &cpu, sizeof(cpu));
	feed_hist(x, lat, &first, 1);
	feed_tick(x, first);
	m.dropped = 5;
	feed(x, &m, sizeof(m));
	count_request(&c, 10 * MS, LW_B_IDLE, 5 * MS, 0);
	lw_export_series_causes(x, 0, &c);
	lw_export_publish(x);
	t = render(x);
	assert_true(sample(t, freq) == 2e9);
	assert_true(sample(t, "latwhy_sampling_active") == 1);
	free(t);
	lw_export_restart(x);
	t = render(x);
	assert_true(sample(t, "latwhy_sampling_active") == 0);
	assert_true(sample(t, "latwhy_requests_total{target=\"srv\"}") == 7);
	assert_true(sample(t, "latwhy_events_dropped_total") == 5);
	assert_true(sample(t, freq) == -1); /* the last process's clocks: gone */
	free(t);
	feed_hist(x, lat, &second, 1);
	feed_tick(x, second);
	feed_meta(x, 1);
	/* the new tracer's counts start from zero, as its maps do */
	memset(&c, 0, sizeof(c));
	count_request(&c, 10 * MS, LW_B_IDLE, 5 * MS, 0);
	lw_export_series_causes(x, 0, &c);
	lw_export_publish(x);
	t = render(x);
	assert_true(sample(t, "latwhy_requests_total{target=\"srv\"}") == 10);
	assert_true(sample(t, "latwhy_request_duration_seconds_count{target=\"srv\"}") == 10);
	assert_true(sample(t, "latwhy_events_dropped_total") == 6);
	assert_true(sample(t, "latwhy_sampling_active") == 1);
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"srv\",cause=\"idle\"}") == 2);
	assert_true(sample(t, "latwhy_slow_request_seconds_total{target=\"srv\",cause=\"idle\"}") ==
		    0.01);
	free(t);
	lw_export_free(x);
}

static void test_node_gauges(void **state)
{
	struct lw_export *x = lw_export_new("a\"b\\c", FIXTURE);
	char *t;

	lw_export_publish(x);
	t = render(x);
	assert_true(sample(t, "latwhy_requests_total{target=\"a\\\"b\\\\c\"}") == 0);
	for (int cpu = 0; cpu < 4; cpu++) {
		char key[128];

		snprintf(key, sizeof(key),
			 "latwhy_cpufreq_governor_info{cpu=\"%d\",governor=\"powersave\"}", cpu);
		assert_true(sample(t, key) == 1);
		snprintf(key, sizeof(key),
			 "latwhy_cpu_frequency_hertz{cpu=\"%d\",source=\"cpufreq\"}", cpu);
		assert_true(sample(t, key) == 8e8);
		snprintf(key, sizeof(key), "latwhy_cpu_frequency_max_hertz{cpu=\"%d\"}", cpu);
		assert_true(sample(t, key) == 3.7e9);
	}
	assert_true(sample(t, "latwhy_thp_enabled_info{mode=\"always\"}") == 1);
	assert_true(sample(t, "latwhy_thp_defrag_info{mode=\"madvise\"}") == 1);
	assert_true(sample(t, "latwhy_khugepaged_defrag") == 1);
	assert_true(sample(t, "latwhy_irqbalance_running") == 1);
	assert_true(sample(t, "latwhy_process_cpu_seconds_total") >= 0);
	assert_true(sample(t, "latwhy_process_resident_memory_bytes") > 0);
	assert_true(sample(t, "latwhy_build_info{version=\"" LW_VERSION "\",abi=\"4\"}") == 1);
	free(t);
	lw_export_free(x);
}

/* Without frequency data (a VM: no cpufreq, no tracer clocks) the family is
 * absent, never 0. */
static void test_no_frequency(void **state)
{
	struct lw_export *x = lw_export_new("srv", "tests/fixtures/vm-nocpufreq");
	char *t;

	lw_export_publish(x);
	t = render(x);
	assert_int_equal(count_lines(t, "latwhy_cpu_frequency_hertz"), 0);
	assert_int_equal(count_lines(t, "# HELP latwhy_cpu_frequency_hertz"), 0);
	assert_int_equal(count_lines(t, "latwhy_cpufreq_governor_info"), 0);
	assert_int_equal(count_lines(t, "latwhy_cpu_frequency_max_hertz"), 0);
	free(t);
	lw_export_free(x);
}

/* promtool's own linter on the rendered text, when promtool is there. */
static void test_promtool(void **state)
{
	static const __u64 lat[] = {2000, 90000};
	static const __u64 cnt[] = {10, 20};
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	char path[] = "/tmp/latwhy-export.XXXXXX", cmd[128], *t;
	struct lw_cause_counts c = {0};
	int fd;

	if (system("command -v promtool >/dev/null 2>&1")) {
		print_message("promtool not installed: not linted\n");
		lw_export_free(x);
		skip();
	}
	feed_hist(x, lat, cnt, 2);
	feed_tick(x, 30);
	count_request(&c, 10 * MS, LW_B_SCHED, 6 * MS, 0);
	lw_export_series_causes(x, 0, &c);
	lw_export_publish(x);
	t = render(x);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, t, strlen(t)), (ssize_t)strlen(t));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	assert_int_equal(system(cmd), 0);
	unlink(path);
	free(t);
	lw_export_free(x);
}

/* A port free on loopback now (the kernel's pick). */
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

/* One HTTP/1.0 exchange: the whole reply, malloc'd. */
static char *http(unsigned port, const char *request)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	size_t n = 0, cap = 1 << 16;
	char *buf = calloc(1, cap);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t r;

	assert_non_null(buf);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	/* a server that stops reading (an oversized header) is no SIGPIPE */
	send(fd, request, strlen(request), MSG_NOSIGNAL);
	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += r;
	close(fd);
	return buf;
}

static void assert_status(unsigned port, const char *request, const char *status)
{
	char *r = http(port, request);

	if (strncmp(r, "HTTP/1.", 7) || strncmp(r + 9, status, strlen(status)))
		fail_msg("%s -> %.40s, not %s", request, r, status);
	free(r);
}

static void test_http(void **state)
{
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	unsigned port = free_port();
	struct lw_http *h, *again;
	char *r;

	lw_export_publish(x);
	h = lw_http_start(x, "127.0.0.1", port);
	assert_non_null(h);
	r = http(port, "GET /metrics HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 200 "));
	assert_non_null(strstr(r, "text/plain; version=0.0.4"));
	assert_non_null(strstr(r, "\nlatwhy_requests_total{target=\"srv\"} 0\n"));
	free(r);
	r = http(port, "GET / HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, "<a href=\"/metrics\">"));
	free(r);
	assert_status(port, "GET /other HTTP/1.0\r\n\r\n", "404");
	assert_status(port, "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", "405");
	assert_status(port, "DELETE / HTTP/1.0\r\n\r\n", "405");
	assert_status(port, "PUT /nothing HTTP/1.0\r\n\r\n", "404");
	/* the port is taken: the bind's own error */
	again = lw_http_start(x, "127.0.0.1", port);
	assert_null(again);
	assert_int_equal(errno, EADDRINUSE);
	lw_http_stop(h);
	lw_export_free(x);
}

/* Many connections held open, a malformed request, an oversized header:
 * refused or closed, never a crash, and a scrape works once they are gone. */
static void test_http_abuse(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	unsigned port = free_port();
	struct lw_http *h = lw_http_start(x, "127.0.0.1", port);
	size_t big = 256 << 10;
	char *hdr = malloc(big), *r;
	int fds[200];

	assert_non_null(h);
	assert_non_null(hdr);
	a.sin_port = htons(port);
	for (int i = 0; i < 200; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		assert_true(fds[i] >= 0);
		/* past 64 they are closed at once; never waited for */
		connect(fds[i], (struct sockaddr *)&a, sizeof(a));
	}
	for (int i = 0; i < 200; i++)
		close(fds[i]);
	r = http(port, "NONSENSE\r\n\r\n");
	assert_true(!*r || !strncmp(r, "HTTP/1.", 7));
	free(r);
	memcpy(hdr, "GET /metrics HTTP/1.0\r\nX: ", 26);
	memset(hdr + 26, 'a', big - 31);
	memcpy(hdr + big - 5, "\r\n\r\n", 5);
	hdr[big - 1] = '\0';
	r = http(port, hdr);
	assert_true(!*r || !strncmp(r, "HTTP/1.", 7));
	assert_null(strstr(r, " 200 "));
	free(r);
	free(hdr);
	/* the polling thread closes what the clients closed on its next pass */
	usleep(200000);
	assert_status(port, "GET /metrics HTTP/1.0\r\n\r\n", "200");
	lw_http_stop(h);
	lw_export_free(x);
}

static void test_listen(void **state)
{
	char host[64];
	unsigned port;

	assert_int_equal(
		lw_parse_listen("127.0.0.1:9462", LW_SERVE_HOST, host, sizeof(host), &port), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 9462);
	assert_int_equal(lw_parse_listen("[::1]:80", LW_SERVE_HOST, host, sizeof(host), &port), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 80);
	assert_int_equal(lw_parse_listen(":9000", LW_SERVE_HOST, host, sizeof(host), &port), 0);
	assert_string_equal(host, LW_SERVE_HOST);
	assert_int_equal(lw_parse_listen("1.2.3.4", LW_SERVE_HOST, host, sizeof(host), &port),
			 -EINVAL);
	assert_int_equal(lw_parse_listen("1.2.3.4:", LW_SERVE_HOST, host, sizeof(host), &port),
			 -EINVAL);
	assert_int_equal(lw_parse_listen("1.2.3.4:0", LW_SERVE_HOST, host, sizeof(host), &port),
			 -EINVAL);
	assert_int_equal(lw_parse_listen("1.2.3.4:65536", LW_SERVE_HOST, host, sizeof(host), &port),
			 -EINVAL);
	assert_int_equal(lw_parse_listen("1.2.3.4:-1", LW_SERVE_HOST, host, sizeof(host), &port),
			 -EINVAL);
	assert_int_equal(lw_parse_listen("[::1:80", LW_SERVE_HOST, host, sizeof(host), &port),
			 -EINVAL);
}

static int parse(struct lw_serve_opts *o, char *err, ...)
{
	char *argv[16] = {"serve"};
	int argc = 1;
	va_list ap;

	va_start(ap, err);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	return lw_serve_opts_parse(o, argc, argv, err, 256);
}

static void test_serve_opts(void **state)
{
	struct lw_serve_opts o;
	char err[256];

	/* --comm alone: a target the tracer follows, the stand-in gone */
	assert_int_equal(parse(&o, err, "--comm", "lat_server", NULL), 0);
	assert_int_equal(o.trace.conf.ntargets, 1);
	assert_int_equal(o.trace.conf.targets[0].kind, LW_TARGET_COMM);
	assert_string_equal(o.trace.conf.targets[0].name, "lat_server");
	assert_int_equal(o.trace.conf.pid, 0);
	assert_string_equal(o.host, "127.0.0.1");
	assert_int_equal(o.port, 9462);
	assert_int_equal(parse(&o, err, "-p", "42", "--listen=[::1]:9000", "--slow", "1ms", NULL),
			 0);
	assert_int_equal(o.trace.conf.pid, 42);
	assert_string_equal(o.host, "::1");
	assert_int_equal(o.port, 9000);
	assert_true(o.trace.conf.slow_ns == 1000000);
	assert_int_equal(parse(&o, err, "--comm=srv", "--listen", "127.0.0.1:1", NULL), 0);
	assert_string_equal(o.trace.conf.targets[0].name, "srv");
	assert_int_equal(o.port, 1);
	assert_int_equal(parse(&o, err, NULL), -EINVAL);
	assert_string_equal(err, "a target is needed: -p PID, --comm NAME, --cgroup PATH, --unit "
				 "NAME, --pods or --pod NS/NAME");
	/* --comm with another target: one target more, the tracer follows it */
	assert_int_equal(parse(&o, err, "-p", "1", "--comm", "x", NULL), 0);
	assert_int_equal(o.trace.conf.ntargets, 2);
	assert_int_equal(o.trace.conf.targets[1].kind, LW_TARGET_COMM);
	assert_string_equal(o.trace.conf.targets[1].name, "x");
	assert_int_equal(o.trace.conf.pid, 0);
	assert_int_equal(parse(&o, err, "--comm", "x", "-j", NULL), -EINVAL);
	assert_string_equal(err, "serve exports metrics, not JSON: drop -j");
	assert_int_equal(parse(&o, err, "--comm", "x", "-d", "5s", NULL), -EINVAL);
	assert_string_equal(err, "serve runs until stopped: drop -d");
	assert_int_equal(parse(&o, err, "--comm", "a_name_too_long_for_comm", NULL), -EINVAL);
	assert_int_equal(parse(&o, err, "--comm", "x", "--bogus", NULL), -EINVAL);
	assert_string_equal(err, "unknown option '--bogus'");
	assert_int_equal(parse(&o, err, "--comm", "x", "--listen", "nowhere", NULL), -EINVAL);
	assert_int_equal(parse(&o, err, "-h", NULL), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_by_cause), cmocka_unit_test(test_series),
		cmocka_unit_test(test_histogram),     cmocka_unit_test(test_reattach),
		cmocka_unit_test(test_node_gauges),   cmocka_unit_test(test_no_frequency),
		cmocka_unit_test(test_promtool),      cmocka_unit_test(test_http),
		cmocka_unit_test(test_http_abuse),    cmocka_unit_test(test_listen),
		cmocka_unit_test(test_serve_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
