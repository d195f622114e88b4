// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lat_server - TCP request/response server for latency experiments.
 *
 * One accept thread, one worker thread per connection (or with -e one event
 * loop for all connections), every thread pinned to the -c CPUs. A request is 64 bytes in, a fixed
 * amount of CPU work plus writes to N random pages of a shared heap, 64 bytes out.
 * As a gateway (-U) a worker first sends the request to an upstream server
 * and waits for its answer; with -H the worker that read a request hands it
 * to another thread, which answers it, as a thread pool or Go's goroutines do.
 *
 * latwhy sees a request as "a read() on a socket returned >0 bytes" up to
 * "the same thread enters write() on that socket", so a worker does nothing
 * but read() and write() on its socket, and no syscall at all in between.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LAB_PROG "lat_server"
#include "lab.h"

#define MSG_SIZE 64
#define PAGE_SZ	 4096UL
#define HPAGE_SZ (2UL << 20)

/* ~200 us of spin() on the 2-CPU Xeon (Sapphire Rapids, KVM) dev VM. */
#define DEFAULT_ITERS 125000UL

struct config {
	int port;
	cpu_set_t cpus;
	int have_cpus;
	unsigned long iters;
	unsigned long heap_mb;
	unsigned long pages;
	int thp;
	unsigned long release_rate;
	int release_idle; /* -I */
	int event_loop;
	int upstream_port; /* -U: 0 = none */
	int handoff;	   /* -H */
	/* --fresh-every N: every Nth request (over all connections) also maps
	 * --fresh-kb KiB of fresh anonymous memory, writes a byte of each page
	 * and unmaps it: its extra time is page faults (with --thp, a
	 * 2 MiB-aligned MADV_HUGEPAGE mapping: huge-page faults) */
	unsigned long fresh_every;
	unsigned long fresh_kb;
	/* --fresh-file PATH: the chunks are a file's pages, mapped shared and
	 * read a byte a page, dropped from the page cache once read: the
	 * next touch of a chunk reads it back from the disk (major faults
	 * and their wait for the read) */
	const char *fresh_file;
	int fresh_fd;
	/* --fresh-no-thp: the chunks are plain pages, under THP "always" too
	 * and with --thp (whose heap stays huge), so that their faults are
	 * memory's, not THP's */
	int fresh_no_thp;
	/* --spin-every N: every Nth request spins --spin-x times as long: its
	 * extra time is its own code */
	unsigned long spin_every;
	unsigned long spin_x;
};

static struct config cfg = {
	.port = 7077,
	.iters = DEFAULT_ITERS,
	.heap_mb = 64,
	.pages = 64,
	.fresh_kb = 4096,
	.fresh_fd = -1,
	.spin_x = 10,
};

static unsigned long nserved; /* requests so far, for --fresh-every / --spin-every */

static char *heap;
static size_t heap_pages;
static int epfd = -1; /* -e */

static void usage(void)
{
	printf("usage: lat_server [-p PORT] [-c CPULIST] [-w ITERS] [-m MB] [-P N] [--thp]\n"
	       "                  [-R RATE [-I]] [-e] [-U PORT] [-H] [-h]\n"
	       "  -p PORT     listen on 127.0.0.1:PORT, or $LAB_ADDR:PORT (default 7077,\n"
	       "              0 = any free port)\n"
	       "  -c CPULIST  pin every thread to these CPUs, e.g. 1 or 0-1 (default: unpinned)\n"
	       "  -w ITERS    spin-loop iterations of CPU work per request (default %lu,\n"
	       "              ~200 us per request on the dev VM)\n"
	       "  -m MB       heap size in MiB touched by requests (default 64)\n"
	       "  -P N        pages of the heap written per request, one byte each (default 64)\n"
	       "  --thp       2 MiB-aligned heap with madvise(MADV_HUGEPAGE)\n"
	       "  --fresh-every N  every Nth request also maps, touches and unmaps\n"
	       "              --fresh-kb KiB of fresh memory (default 4096): page faults\n"
	       "  --fresh-file PATH  those chunks are PATH's pages (written first, 8 chunks),\n"
	       "              read and dropped from the page cache after: major faults\n"
	       "  --fresh-no-thp  those chunks in small pages (THP always, or --thp)\n"
	       "  --spin-every N   every Nth request spins --spin-x times longer (default 10)\n"
	       "  -R RATE     a background thread gives RATE random heap pages/s back to the\n"
	       "              kernel (MADV_DONTNEED), like an allocator purging: this splits\n"
	       "              huge pages that khugepaged then collapses again (default 0 = off)\n"
	       "  -I          the -R thread runs at SCHED_IDLE: only when its CPU is idle\n"
	       "  -e          one epoll thread serves every connection, redis-style: it\n"
	       "              reads a request from each ready connection, then replies to all\n"
	       "  -U PORT     a gateway: each connection's worker has its own connection to\n"
	       "              127.0.0.1:PORT and sends it every request, waiting for the\n"
	       "              answer before its own work and reply\n"
	       "  -H          the thread that reads a request hands it to another thread of\n"
	       "              its connection, which does the work and replies\n"
	       "  -h          this help\n"
	       "Prints 'lat_server pid=<pid> port=<port>' once listening.\n",
	       DEFAULT_ITERS);
}

static int parse_ulong(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return (errno || end == s || *end || *s == '-') ? -1 : 0;
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"thp", no_argument, NULL, 'T'},
		{"fresh-every", required_argument, NULL, 'F'},
		{"fresh-kb", required_argument, NULL, 'K'},
		{"fresh-file", required_argument, NULL, 'D'},
		{"fresh-no-thp", no_argument, NULL, 'N'},
		{"spin-every", required_argument, NULL, 'S'},
		{"spin-x", required_argument, NULL, 'X'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned long v;
	int o;

	while ((o = getopt_long(argc, argv, ":p:c:w:m:P:R:IU:eHh", longopts, NULL)) != -1) {
		switch (o) {
		case 'p':
			if (parse_ulong(optarg, &v) || v > 65535)
				bad_opt("bad port", optarg);
			cfg.port = (int)v;
			break;
		case 'c':
			lab_opt_cpulist(optarg, &cfg.cpus);
			cfg.have_cpus = 1;
			break;
		case 'w':
			if (parse_ulong(optarg, &cfg.iters))
				bad_opt("bad iteration count", optarg);
			break;
		case 'm':
			if (parse_ulong(optarg, &cfg.heap_mb) || !cfg.heap_mb || cfg.heap_mb >> 20)
				bad_opt("bad heap size", optarg);
			break;
		case 'P':
			if (parse_ulong(optarg, &cfg.pages))
				bad_opt("bad page count", optarg);
			break;
		case 'T':
			cfg.thp = 1;
			break;
		case 'F':
			if (parse_ulong(optarg, &cfg.fresh_every))
				bad_opt("bad request count", optarg);
			break;
		case 'K':
			if (parse_ulong(optarg, &cfg.fresh_kb) || !cfg.fresh_kb ||
			    cfg.fresh_kb >> 30)
				bad_opt("bad size", optarg);
			break;
		case 'D':
			cfg.fresh_file = optarg;
			break;
		case 'N':
			cfg.fresh_no_thp = 1;
			break;
		case 'S':
			if (parse_ulong(optarg, &cfg.spin_every))
				bad_opt("bad request count", optarg);
			break;
		case 'X':
			if (parse_ulong(optarg, &cfg.spin_x) || !cfg.spin_x)
				bad_opt("bad factor", optarg);
			break;
		case 'e':
			cfg.event_loop = 1;
			break;
		case 'U':
			if (parse_ulong(optarg, &v) || !v || v > 65535)
				bad_opt("bad upstream port", optarg);
			cfg.upstream_port = (int)v;
			break;
		case 'H':
			cfg.handoff = 1;
			break;
		case 'I':
			cfg.release_idle = 1;
			break;
		case 'R':
			if (parse_ulong(optarg, &cfg.release_rate) || cfg.release_rate > 1000000)
				bad_opt("bad release rate", optarg);
			break;
		default:
			lab_other_opt(o, argv, usage);
		}
	}
	lab_no_operands(argc, argv);
	if (cfg.release_idle && !cfg.release_rate) {
		fprintf(stderr, "lat_server: -I needs -R RATE\n");
		exit(2);
	}
	if (cfg.event_loop && (cfg.upstream_port || cfg.handoff)) {
		fprintf(stderr, "lat_server: -e cannot be combined with -U or -H\n");
		exit(2);
	}
}

/*
 * Map the heap. For --thp the mapping is over-allocated and trimmed to a
 * 2 MiB boundary, since only PMD-aligned ranges can be backed by huge pages.
 * The heap is touched up front so requests measure steady state, not the
 * first fault on each page.
 */
static void heap_init(void)
{
	size_t len = cfg.heap_mb << 20;
	size_t map_len = cfg.thp ? len + HPAGE_SZ : len;
	char *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap heap");
	if (cfg.thp) {
		uintptr_t a = ((uintptr_t)p + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1);
		size_t head = a - (uintptr_t)p;

		if (head)
			munmap(p, head);
		if (HPAGE_SZ - head)
			munmap((char *)a + len, HPAGE_SZ - head);
		p = (char *)a;
		if (madvise(p, len, MADV_HUGEPAGE))
			die("madvise(MADV_HUGEPAGE)");
	}
	memset(p, 1, len);
	heap = p;
	heap_pages = len / PAGE_SZ;
}

static inline uint64_t xorshift64(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* Fixed CPU work: the empty asm makes every iteration observable. */
static uint64_t spin(unsigned long iters, uint64_t x)
{
	for (unsigned long i = 0; i < iters; i++) {
		x = xorshift64(x);
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Write one byte in each of cfg.pages pseudo-random heap pages. */
static uint64_t touch_pages(uint64_t x)
{
	for (unsigned long i = 0; i < cfg.pages; i++) {
		x = xorshift64(x);
		/* Workers share the heap; relaxed atomics keep the races defined. */
		__atomic_store_n(&heap[(x % heap_pages) * PAGE_SZ], (char)x, __ATOMIC_RELAXED);
	}
	return x;
}

/* Read exactly len bytes; 0 on success, -1 on EOF or error. */
static int read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n > 0)
			got += n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
			return -1;
	}
	return 0;
}

static int write_full(int fd, const char *buf, size_t len)
{
	size_t put = 0;

	while (put < len) {
		ssize_t n = write(fd, buf + put, len - put);

		if (n > 0)
			put += n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
			return -1;
	}
	return 0;
}

/*
 * Allocator-style purging: madvise(MADV_DONTNEED) one random 4 KiB heap page
 * RATE times a second. Inside a huge page this splits the PMD mapping; the
 * next touch faults in a 4 KiB page and khugepaged later copies the range
 * back into a huge page, stalling any worker that touches it meanwhile.
 *
 * With -I the thread is SCHED_IDLE: it runs when the workers' CPU has
 * nothing else to do. At the default policy its timer wake-ups preempt a
 * worker, so that the lab's own thread, not the cause a scenario injects, is
 * what some slow requests wait for (the accuracy lab's idle shift row: 51 of
 * 410, which latwhy named "sched", rightly). make bench keeps the default:
 * under its CPU hog an idle-policy thread would hardly purge at all.
 */
static void *releaser(void *arg)
{
	uint64_t x = 0x2545f4914f6cdd1dULL;
	long step = 1000000000L / cfg.release_rate;
	struct sched_param sp = {.sched_priority = 0};
	struct timespec next;

	if (cfg.release_idle && pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp))
		fprintf(stderr, "lat_server: release thread: cannot switch to SCHED_IDLE\n");
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		next.tv_nsec += step;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		x = xorshift64(x);
		madvise(heap + (x % heap_pages) * PAGE_SZ, PAGE_SZ, MADV_DONTNEED);
	}
	return NULL;
}

/* -U: this connection's own connection to the upstream, or -1. */
static int upstream_connect(void)
{
	struct sockaddr_in sa = lab_loopback(cfg.upstream_port);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "lat_server: cannot connect to upstream port %d: %s\n",
			cfg.upstream_port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* A request read into buf: the upstream's answer to it (-U), then the work;
 * buf holds the reply. 0, or -1 when the upstream is gone. */
/*
 * --fresh-every: fault in fresh memory, a byte a page. The memory is a ring
 * of FRESH_CHUNKS chunks mapped once; a chunk touched is given back to the
 * kernel (MADV_DONTNEED) by a SCHED_IDLE thread, when the worker's CPU is
 * idle, so that the request pays its faults and not the freeing (munmap in
 * the request took a third of its extra time). One connection at a time:
 * two workers touching at once could take the same chunk.
 */
#define FRESH_CHUNKS 8
static char *fresh[FRESH_CHUNKS];
static unsigned long fresh_next, fresh_freed; /* chunks touched, given back */
static pthread_mutex_t fresh_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fresh_cv = PTHREAD_COND_INITIALIZER;

static void *fresh_releaser(void *arg)
{
	struct sched_param sp = {0};

	cpu_set_t off;

	(void)arg;
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	/* off the workers' CPUs where there are others: madvise's zap runs in
	 * the kernel, where a woken worker would wait for it to yield */
	CPU_ZERO(&off);
	for (int c = 0; c < CPU_SETSIZE && cfg.have_cpus; c++)
		if (!CPU_ISSET(c, &cfg.cpus) && c < (int)sysconf(_SC_NPROCESSORS_ONLN))
			CPU_SET(c, &off);
	if (CPU_COUNT(&off))
		pthread_setaffinity_np(pthread_self(), sizeof(off), &off);
	pthread_mutex_lock(&fresh_mu);
	for (;;) {
		while (fresh_freed == fresh_next)
			pthread_cond_wait(&fresh_cv, &fresh_mu);
		char *c = fresh[fresh_freed % FRESH_CHUNKS];

		pthread_mutex_unlock(&fresh_mu);
		madvise(c, cfg.fresh_kb << 10, MADV_DONTNEED);
		/* unmapped now, so the page cache lets its pages go */
		if (cfg.fresh_fd >= 0)
			posix_fadvise(cfg.fresh_fd, (off_t)(c - fresh[0]),
				      (off_t)(cfg.fresh_kb << 10), POSIX_FADV_DONTNEED);
		pthread_mutex_lock(&fresh_mu);
		fresh_freed++;
		pthread_cond_broadcast(&fresh_cv);
	}
	return NULL;
}

/* The file of --fresh-file: FRESH_CHUNKS chunks of data (not holes, whose
 * faults read nothing), on the disk and out of the page cache, mapped
 * shared in one piece: chunk i at fresh[0] + i * len. */
static void fresh_file_init(size_t len)
{
	char buf[PAGE_SZ];
	char *p;
	int fd = open(cfg.fresh_file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		die("open --fresh-file");
	memset(buf, 0x5a, sizeof(buf));
	for (size_t off = 0; off < FRESH_CHUNKS * len; off += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			die("write --fresh-file");
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("fsync --fresh-file");
	p = mmap(NULL, FRESH_CHUNKS * len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap --fresh-file");
	for (int i = 0; i < FRESH_CHUNKS; i++)
		fresh[i] = p + i * len;
	cfg.fresh_fd = fd;
}

static void fresh_init(void)
{
	int thp = cfg.thp && !cfg.fresh_no_thp;
	size_t len = cfg.fresh_kb << 10, map_len = thp ? len + HPAGE_SZ : len;
	pthread_t t;

	if (cfg.fresh_file)
		fresh_file_init(len);
	for (int i = 0; i < FRESH_CHUNKS && !cfg.fresh_file; i++) {
		char *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED)
			die("mmap fresh memory");
		/* and khugepaged leaves them small too */
		if (!thp && (cfg.thp || cfg.fresh_no_thp))
			madvise(p, len, MADV_NOHUGEPAGE);
		if (thp) {
			p = (char *)(((uintptr_t)p + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
			if (madvise(p, len, MADV_HUGEPAGE))
				die("madvise(MADV_HUGEPAGE)");
		}
		fresh[i] = p;
	}
	if (pthread_create(&t, NULL, fresh_releaser, NULL))
		die("pthread_create");
	pthread_detach(t);
}

static void touch_fresh(void)
{
	size_t len = cfg.fresh_kb << 10;
	char *a;

	pthread_mutex_lock(&fresh_mu);
	/* every chunk touched and not given back yet: wait for one */
	while (fresh_next - fresh_freed >= FRESH_CHUNKS)
		pthread_cond_wait(&fresh_cv, &fresh_mu);
	a = fresh[fresh_next % FRESH_CHUNKS];
	pthread_mutex_unlock(&fresh_mu);
	for (size_t off = 0; off < len; off += PAGE_SZ) {
		if (cfg.fresh_file) /* mapped read-only: a read fault */
			(void)((volatile char *)a)[off];
		else
			((volatile char *)a)[off] = 1;
	}
	pthread_mutex_lock(&fresh_mu);
	fresh_next++;
	pthread_cond_signal(&fresh_cv);
	pthread_mutex_unlock(&fresh_mu);
}

static int serve(int up, char *buf, uint64_t *x)
{
	unsigned long n;

	if (up >= 0 && (write_full(up, buf, MSG_SIZE) || read_full(up, buf, MSG_SIZE)))
		return -1;
	n = __atomic_add_fetch(&nserved, 1, __ATOMIC_RELAXED);
	if (cfg.fresh_every && n % cfg.fresh_every == 0)
		touch_fresh();
	if (cfg.spin_every && n % cfg.spin_every == 0)
		*x = spin(cfg.iters * (cfg.spin_x - 1), *x);
	*x = spin(cfg.iters, *x);
	*x = touch_pages(*x);
	memcpy(buf, x, sizeof(*x));
	return 0;
}

struct conn {
	int fd, up;
	int pipe[2]; /* -H: requests from the reader to the replier */
};

/* -H: answers the requests its connection's reader passes on. */
static void *replier(void *arg)
{
	struct conn *c = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)c->fd << 32) ^ (uintptr_t)&x;
	char buf[MSG_SIZE];

	while (read_full(c->pipe[0], buf, sizeof(buf)) == 0)
		if (serve(c->up, buf, &x) || write_full(c->fd, buf, sizeof(buf)))
			break;
	shutdown(c->fd, SHUT_RDWR); /* wakes the reader if it is the one left */
	return NULL;
}

static void *worker(void *arg)
{
	struct conn c = {.fd = (int)(intptr_t)arg, .up = -1, .pipe = {-1, -1}};
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)c.fd << 32) ^ (uintptr_t)&x;
	char buf[MSG_SIZE];
	pthread_t rep;

	if (cfg.upstream_port && (c.up = upstream_connect()) < 0)
		goto out;
	if (cfg.handoff) {
		if (pipe2(c.pipe, O_CLOEXEC) || pthread_create(&rep, NULL, replier, &c)) {
			fprintf(stderr,
				"lat_server: cannot start a replier, dropping connection\n");
			goto out;
		}
	}
	while (read_full(c.fd, buf, sizeof(buf)) == 0) {
		if (cfg.handoff) {
			if (write_full(c.pipe[1], buf, sizeof(buf)))
				break;
		} else if (serve(c.up, buf, &x) || write_full(c.fd, buf, sizeof(buf))) {
			break;
		}
	}
	if (cfg.handoff) {
		close(c.pipe[1]);
		c.pipe[1] = -1;
		pthread_join(rep, NULL);
	}
out:
	for (int i = 0; i < 2; i++)
		if (c.pipe[i] >= 0)
			close(c.pipe[i]);
	if (c.up >= 0)
		close(c.up);
	close(c.fd);
	return NULL;
}

/* -e: many requests open at once in one thread, as in redis or nginx. */
static void *event_loop(void *arg)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	struct epoll_event ev[64];
	char buf[MSG_SIZE];
	int fds[64];

	for (;;) {
		int n = epoll_wait(epfd, ev, 64, -1), k = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait");
		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			if (read_full(fd, buf, sizeof(buf))) {
				close(fd); /* also leaves the epoll set */
				continue;
			}
			x = spin(cfg.iters, x);
			x = touch_pages(x);
			fds[k++] = fd;
		}
		/* replies after every read of the batch, like redis */
		for (int i = 0; i < k; i++) {
			memcpy(buf, &x, sizeof(x));
			if (write_full(fds[i], buf, sizeof(buf)))
				close(fds[i]);
		}
	}
	return NULL;
}

static int listen_socket(void)
{
	struct sockaddr_in sa = lab_loopback(cfg.port);
	socklen_t slen = sizeof(sa);
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	if (listen(fd, 128))
		die("listen");
	if (getsockname(fd, (struct sockaddr *)&sa, &slen))
		die("getsockname");
	cfg.port = ntohs(sa.sin_port);
	return fd;
}

static void *acceptor(void *arg)
{
	int lfd = (int)(intptr_t)arg;

	for (;;) {
		int one = 1, fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pthread_attr_t attr;
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
				continue;
			die("accept");
		}
		/* Set once here, so the request path stays read()/write() only. */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (epfd >= 0) {
			struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

			if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
				die("epoll_ctl");
			continue;
		}
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, worker, (void *)(intptr_t)fd)) {
			fprintf(stderr, "lat_server: cannot start worker, dropping connection\n");
			close(fd);
		}
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

static void on_signal(int sig)
{
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	pthread_t acc, rel, loop;
	sigset_t set;
	int lfd, sig;

	parse_args(argc, argv);
	/* Pin the process before any thread exists: every thread inherits it. */
	if (cfg.have_cpus && sched_setaffinity(0, sizeof(cfg.cpus), &cfg.cpus))
		die("cannot pin to the -c CPUs");
	heap_init();
	if (cfg.fresh_every)
		fresh_init();
	lfd = listen_socket();

	/*
	 * Only the main thread takes SIGINT/SIGTERM, via sigwait(). Block them
	 * before any thread starts; the no-op handler replaces SIG_IGN inherited
	 * from a shell's background job, which would otherwise drop them.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (cfg.event_loop) {
		epfd = epoll_create1(EPOLL_CLOEXEC);
		if (epfd < 0 || pthread_create(&loop, NULL, event_loop, NULL))
			die("cannot start the event loop");
	}
	if (pthread_create(&acc, NULL, acceptor, (void *)(intptr_t)lfd)) {
		fprintf(stderr, "lat_server: cannot start accept thread\n");
		return 1;
	}
	if (cfg.release_rate && pthread_create(&rel, NULL, releaser, NULL)) {
		fprintf(stderr, "lat_server: cannot start release thread\n");
		return 1;
	}
	printf("lat_server pid=%d port=%d\n", getpid(), cfg.port);
	fflush(stdout);

	if (sigwait(&set, &sig))
		die("sigwait");
	close(lfd);
	return 0;
}
