// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lat_client - closed-loop load client for lat_server.
 *
 * Each connection has its own thread that writes a 64-byte request, reads the
 * 64-byte response and records the time between the two with CLOCK_MONOTONIC.
 * At the end all latencies are sorted and exact quantiles printed as
 *   requests=N rps=X p50_us=A p99_us=B p999_us=C max_us=D mean_us=E
 * SIGINT/SIGTERM end the run early and still print the summary.
 *
 * The client opts out of transparent huge pages (PR_SET_THP_DISABLE): the
 * lab's thp injector switches THP to "always" for the whole machine, and
 * khugepaged collapsing the client's own memory would stall the client,
 * which is ground truth no server-side tracer can see.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LAB_PROG "lat_client"
#include "lab.h"

#define MSG_SIZE	64
#define DEFAULT_SECONDS 10
#define NSEC_PER_SEC	1000000000ULL

struct config {
	int port;
	unsigned long conns;
	double seconds;
	unsigned long long total; /* -n; 0 = bounded by time only */
	cpu_set_t cpus;
	int have_cpus;
	const char *cpu_arg;
	double rate;
	unsigned long per_conn; /* -k; 0 = one connection for the run */
	const char *out;
	const char *timed;
	int quiet;
};

static struct config cfg = {
	.port = 7077,
	.conns = 1,
};

struct conn {
	pthread_t thread;
	uint64_t *lat;	/* ns, one per completed request */
	uint64_t *sent; /* CLOCK_MONOTONIC when each was written */
	size_t n, cap;
	int err; /* errno of the failure that ended this connection */
};

static volatile sig_atomic_t stop;
static unsigned long long issued; /* requests claimed so far, for -n */
static uint64_t deadline_ns;

static void usage(void)
{
	printf("usage: lat_client [-p PORT] [-c CONNS] [-d SECONDS | -n N] [-C CPULIST]\n"
	       "                  [-r RATE] [-k N] [-o FILE] [-t FILE] [-q] [-h]\n"
	       "  -p PORT     server port on 127.0.0.1, or $LAB_ADDR (default 7077)\n"
	       "  -c CONNS    connections, one thread each (default 1)\n"
	       "  -d SECONDS  run time (default %d unless -n is given)\n"
	       "  -n N        stop after N requests in total\n"
	       "  -C CPULIST  pin client threads to these CPUs, e.g. 0 or 0-1\n"
	       "  -r RATE     requests/s per connection, 0 = closed loop flat out (default 0)\n"
	       "  -k N        a new connection after every N requests (default 0: one\n"
	       "              connection for the whole run); -k 1 is HTTP/1.0-like\n"
	       "  -o FILE     write every request's latency in ns, one per line\n"
	       "  -t FILE     write every request's send time (CLOCK_MONOTONIC, the\n"
	       "              clock of bpf_ktime_get_ns) and latency, ns, one per line\n"
	       "  -q          quiet: no start line on stderr, only the summary\n"
	       "  -h          this help\n"
	       "SIGINT/SIGTERM stop early; the summary is still printed.\n",
	       DEFAULT_SECONDS);
}

static int parse_num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return (errno || end == s || *end || !isfinite(*out) || *out < 0) ? -1 : 0;
}

static void parse_args(int argc, char **argv)
{
	double v;
	int o;

	while ((o = getopt(argc, argv, ":p:c:d:n:C:r:k:o:t:qh")) != -1) {
		switch (o) {
		case 'p':
			if (parse_num(optarg, &v) || v < 1 || v > 65535 || v != (int)v)
				bad_opt("bad port", optarg);
			cfg.port = (int)v;
			break;
		case 'c':
			if (parse_num(optarg, &v) || v < 1 || v > 4096 || v != (unsigned long)v)
				bad_opt("bad connection count", optarg);
			cfg.conns = (unsigned long)v;
			break;
		case 'd':
			if (parse_num(optarg, &cfg.seconds) || cfg.seconds <= 0)
				bad_opt("bad duration", optarg);
			break;
		case 'n':
			if (parse_num(optarg, &v) || v < 1 || v > 1e12 || v != (long long)v)
				bad_opt("bad request count", optarg);
			cfg.total = (unsigned long long)v;
			break;
		case 'C':
			lab_opt_cpulist(optarg, &cfg.cpus);
			cfg.have_cpus = 1;
			cfg.cpu_arg = optarg;
			break;
		case 'r':
			if (parse_num(optarg, &cfg.rate))
				bad_opt("bad rate", optarg);
			break;
		case 'k':
			if (parse_num(optarg, &v) || v > 1e9 || v != (unsigned long)v)
				bad_opt("bad requests per connection", optarg);
			cfg.per_conn = (unsigned long)v;
			break;
		case 'o':
			cfg.out = optarg;
			break;
		case 't':
			cfg.timed = optarg;
			break;
		case 'q':
			cfg.quiet = 1;
			break;
		default:
			lab_other_opt(o, argv, usage);
		}
	}
	lab_no_operands(argc, argv);
	if (!cfg.seconds && !cfg.total)
		cfg.seconds = DEFAULT_SECONDS;
}

static int connect_server(void)
{
	struct sockaddr_in sa = lab_loopback(cfg.port);
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Transfer exactly len bytes; a signal that sets stop abandons the request. */
static int xfer_full(int fd, char *buf, size_t len, int is_write)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = is_write ? write(fd, buf + done, len - done)
				     : read(fd, buf + done, len - done);

		if (n > 0) {
			done += n;
		} else if (n < 0 && errno == EINTR) {
			if (stop)
				return -1;
		} else {
			if (n == 0)
				errno = ECONNRESET;
			return -1;
		}
	}
	return 0;
}

static int record(struct conn *c, uint64_t sent, uint64_t ns)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 65536;
		uint64_t *p = realloc(c->lat, cap * sizeof(*p));

		if (!p)
			return -1;
		c->lat = p;
		p = realloc(c->sent, cap * sizeof(*p));
		if (!p)
			return -1;
		c->sent = p;
		c->cap = cap;
	}
	c->sent[c->n] = sent;
	c->lat[c->n++] = ns;
	return 0;
}

/* Claim the next request under -n / -d; 0 when the run is over. */
static int may_send(void)
{
	if (stop)
		return 0;
	if (cfg.total && __atomic_fetch_add(&issued, 1, __ATOMIC_RELAXED) >= cfg.total)
		return 0;
	return !deadline_ns || lab_now_ns() < deadline_ns;
}

/* Sleep until the next paced send time; a late request goes out at once. */
static void pace(uint64_t *next)
{
	struct timespec ts;

	if (cfg.rate <= 0)
		return;
	ts.tv_sec = *next / NSEC_PER_SEC;
	ts.tv_nsec = *next % NSEC_PER_SEC;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop)
		;
	*next += (uint64_t)(NSEC_PER_SEC / cfg.rate);
}

/* A connection for c; a failure ends the run, its errno c's. */
static int conn_open(struct conn *c)
{
	int fd = connect_server();

	if (fd < 0) {
		c->err = errno;
		stop = 1;
	}
	return fd;
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	char buf[MSG_SIZE] = {0};
	uint64_t next = lab_now_ns();
	int fd = conn_open(c);

	if (fd < 0)
		return NULL;
	for (unsigned long on_conn = 0; may_send(); on_conn++) {
		uint64_t t0;

		if (cfg.per_conn && on_conn == cfg.per_conn) {
			/* the client closes first: the server's end goes to
			 * CLOSE_WAIT, its reply acknowledged */
			close(fd);
			fd = conn_open(c);
			if (fd < 0)
				return NULL;
			on_conn = 0;
		}
		pace(&next);
		t0 = lab_now_ns();
		if (xfer_full(fd, buf, sizeof(buf), 1) || xfer_full(fd, buf, sizeof(buf), 0)) {
			if (!stop)
				c->err = errno;
			break;
		}
		if (record(c, t0, lab_now_ns() - t0)) {
			c->err = ENOMEM;
			break;
		}
	}
	close(fd);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank quantile of a sorted array: the smallest value >= q of all. */
static double quantile_us(const uint64_t *v, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n);

	if (!n)
		return 0;
	if (rank < 1)
		rank = 1;
	return v[rank - 1] / 1e3;
}

static uint64_t *merge(struct conn *conns, size_t *np)
{
	size_t n = 0, k = 0;
	uint64_t *all;

	for (unsigned long i = 0; i < cfg.conns; i++)
		n += conns[i].n;
	all = malloc((n ? n : 1) * sizeof(*all));
	if (!all) {
		fprintf(stderr, "lat_client: out of memory\n");
		exit(1);
	}
	for (unsigned long i = 0; i < cfg.conns; i++) {
		memcpy(all + k, conns[i].lat, conns[i].n * sizeof(*all));
		k += conns[i].n;
	}
	*np = n;
	return all;
}

static int write_latencies(const uint64_t *v, size_t n)
{
	FILE *f = fopen(cfg.out, "w");

	if (!f) {
		fprintf(stderr, "lat_client: %s: %s\n", cfg.out, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%llu\n", (unsigned long long)v[i]);
	if (fclose(f)) {
		fprintf(stderr, "lat_client: %s: %s\n", cfg.out, strerror(errno));
		return -1;
	}
	return 0;
}

/* -t: a scorer matches each request to the server-side tracer's window by
 * time; per connection, in the order sent. */
static int write_timed(const struct conn *conns)
{
	FILE *f = fopen(cfg.timed, "w");

	if (!f) {
		fprintf(stderr, "lat_client: %s: %s\n", cfg.timed, strerror(errno));
		return -1;
	}
	for (unsigned long i = 0; i < cfg.conns; i++)
		for (size_t k = 0; k < conns[i].n; k++)
			fprintf(f, "%llu %llu\n", (unsigned long long)conns[i].sent[k],
				(unsigned long long)conns[i].lat[k]);
	if (fclose(f)) {
		fprintf(stderr, "lat_client: %s: %s\n", cfg.timed, strerror(errno));
		return -1;
	}
	return 0;
}

static void summary(uint64_t *v, size_t n, double secs)
{
	long double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i];
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("requests=%zu rps=%.1f p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f "
	       "mean_us=%.1f\n",
	       n, secs > 0 ? n / secs : 0.0, quantile_us(v, n, 0.50), quantile_us(v, n, 0.99),
	       quantile_us(v, n, 0.999), n ? v[n - 1] / 1e3 : 0.0,
	       n ? (double)(sum / n) / 1e3 : 0.0);
	fflush(stdout);
}

static void on_signal(int sig)
{
	stop = 1;
}

/* Handlers, not SIG_IGN inherited from a shell, so a background run can be stopped. */
static void setup_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
	struct conn *conns;
	uint64_t start, end, *all;
	size_t n;
	int rc = 0;

	parse_args(argc, argv);
	setup_signals();
	/* best effort: a kernel without THP has nothing to opt out of */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	if (cfg.have_cpus && sched_setaffinity(0, sizeof(cfg.cpus), &cfg.cpus)) {
		fprintf(stderr, "lat_client: cannot pin to CPUs %s: %s\n", cfg.cpu_arg,
			strerror(errno));
		return 1;
	}
	conns = calloc(cfg.conns, sizeof(*conns));
	if (!conns) {
		fprintf(stderr, "lat_client: out of memory\n");
		return 1;
	}
	if (!cfg.quiet)
		fprintf(stderr, "lat_client: %lu connection(s) to 127.0.0.1:%d\n", cfg.conns,
			cfg.port);

	start = lab_now_ns();
	if (cfg.seconds)
		deadline_ns = start + (uint64_t)(cfg.seconds * NSEC_PER_SEC);
	for (unsigned long i = 0; i < cfg.conns; i++) {
		if (pthread_create(&conns[i].thread, NULL, conn_thread, &conns[i])) {
			fprintf(stderr, "lat_client: cannot start thread %lu\n", i);
			return 1;
		}
	}
	for (unsigned long i = 0; i < cfg.conns; i++)
		pthread_join(conns[i].thread, NULL);
	end = lab_now_ns();

	for (unsigned long i = 0; i < cfg.conns; i++) {
		if (conns[i].err) {
			fprintf(stderr, "lat_client: connection %lu: %s\n", i,
				strerror(conns[i].err));
			rc = 1;
		}
	}
	all = merge(conns, &n);
	/* Arrival order in the file: per connection, in the order completed. */
	if (cfg.out && write_latencies(all, n))
		rc = 1;
	if (cfg.timed && write_timed(conns))
		rc = 1;
	/* A run that failed before any answer has nothing to summarise. */
	if (n || !rc)
		summary(all, n, (end - start) / 1e9);
	return rc;
}
