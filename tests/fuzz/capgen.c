// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * capgen.c - synthetic captures.
 *
 *   capgen seeds DIR      the fuzzer's seed corpus: small real captures,
 *                         whole, cut, flipped, and one in recipe form
 *   capgen busy FILE N    N slow requests with realistic spread, then the
 *                         sizes docs/capture.md quotes (zlib's ratio)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/types.h>
#include <zlib.h>

#include "latwhy.h"

#include "capture/capture.h"
#include "capture/format.h"

static int die(const char *what, int err)
{
	fprintf(stderr, "capgen: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static struct lw_capture_writer *open_w(const char *path, __u32 flush)
{
	struct lw_capture_opts o = {.latwhy_version = "capgen",
				    .abi_version = 1,
				    .overwrite = true,
				    .flush_bytes = flush};
	struct lw_capture_writer *w = lw_capture_writer_open(path, &o);

	if (!w)
		die(path, errno);
	return w;
}

/* A slow request as a busy server's would look: 16 threads on 4 CPUs, a
 * latency of 1-11 ms split over a few causes, a preemptor now and then. */
static void busy_request(struct lw_request *q, unsigned *seed, __u64 *t)
{
	unsigned th = rand_r(seed) % 16;
	__u64 left;

	memset(q, 0, sizeof(*q));
	q->type = LW_REC_REQUEST;
	q->pid = 31337;
	q->tid = 31337 + th;
	q->cpu = rand_r(seed) % 4;
	snprintf(q->comm, sizeof(q->comm), "worker-%u", th);
	*t += 20000 + rand_r(seed) % 200000;
	q->start_ns = *t;
	q->latency_ns = 1000000 + rand_r(seed) % 10000000;
	left = q->latency_ns;
	for (int b = LW_B_RUN; b <= LW_B_BLOCKED && left; b++) {
		__u64 v = b == LW_B_BLOCKED ? left : rand_r(seed) % (left + 1) / 2;

		if (b == LW_B_FREQ || (b != LW_B_RUN && rand_r(seed) % 3))
			continue;
		q->ns[b] = v;
		left -= v;
	}
	q->ns[LW_B_RUN] += left;
	q->flags = LW_REQ_FREQ_KNOWN;
	if (q->ns[LW_B_SCHED]) {
		q->preempt_pid = 900 + rand_r(seed) % 8;
		snprintf(q->preempt_comm, sizeof(q->preempt_comm), "batch-%u", q->preempt_pid);
		q->preempt_ns = q->ns[LW_B_SCHED];
	}
}

static int busy(const char *path, unsigned n)
{
	struct lw_capture_writer *w = open_w(path, 0);
	unsigned seed = 42;
	__u64 raw = 0, t = 1000000000ull;
	struct stat st;
	int err;

	for (unsigned i = 0; i < n; i++) {
		struct lw_request q;

		busy_request(&q, &seed, &t);
		err = lw_capture_writer_append(w, &q, sizeof(q));
		if (err)
			die("append", err);
		raw += sizeof(q);
	}
	err = lw_capture_writer_close(w);
	if (err || stat(path, &st))
		die(path, err ? err : errno);
	printf("%u requests of %zu bytes: %llu bytes of records, %lld bytes on disk, "
	       "%.2f bytes per request, ratio %.2f\n",
	       n, sizeof(struct lw_request), (unsigned long long)raw, (long long)st.st_size,
	       (double)st.st_size / n, (double)raw / st.st_size);
	return 0;
}

static void spit(const char *dir, const char *name, const void *b, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f || fwrite(b, 1, len, f) != len || fclose(f))
		die(path, errno);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *b = malloc(1 << 20);
	FILE *f = fopen(path, "re");

	if (!b || !f)
		die(path, errno);
	*len = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

static void small(const char *path, unsigned nrec)
{
	static const struct lw_capture_kv host[] = {{"hostname", "seed"},
						    {"kernel_release", "6.1.0"}};
	static const struct lw_capture_file files[] = {
		{"/proc/irq/36/smp_affinity_list", "0-3\n", 4, S_IFREG | 0444},
		{"/sys/devices/system/cpu/cpu1", NULL, 0, S_IFDIR | 0755},
	};
	struct lw_capture_writer *w = open_w(path, 1024);
	unsigned seed = 7;
	__u64 t = 0;
	int err = lw_capture_writer_add_facts(w, LW_CHUNK_HOST, host, 2);

	if (!err)
		err = lw_capture_writer_add_files(w, "start", files, 2);
	for (unsigned i = 0; !err && i < nrec; i++) {
		struct lw_request q;
		struct lw_tick_rec k = {.type = LW_REC_TICK, .ts_ns = i};

		busy_request(&q, &seed, &t);
		err = i % 10 == 9 ? lw_capture_writer_append(w, &k, sizeof(k))
				  : lw_capture_writer_append(w, &q, sizeof(q));
	}
	if (err || (err = lw_capture_writer_close(w)))
		die(path, err);
}

/* The recipe form (tests/fuzz/fuzz_capture.c): each chunk as (kind, count,
 * 0, u16 length, uncompressed payload). */
static void recipe(const char *dir, const char *name, const unsigned char *b, size_t len)
{
	unsigned char *out = malloc(len * 16 + 16), *o = out;
	struct lw_capture_reader *r;
	char err[256];

	r = lw_capture_reader_open_mem(b, len, err, sizeof(err));
	if (!r || !out)
		die(err, EINVAL);
	for (size_t i = 0; i < lw_capture_reader_nr_chunks(r); i++) {
		const struct lw_capture_chunk *c = lw_capture_reader_chunk(r, i);
		uLongf dl = c->raw_len;

		if (c->raw_len > 0xffff ||
		    uncompress(o + 5, &dl, b + c->offset + LWC_CHUNK_HDR, c->comp_len) != Z_OK)
			continue;
		o[0] = (unsigned char)c->kind;
		o[1] = (unsigned char)c->count;
		o[2] = 0;
		lwc_put16(o + 3, (uint16_t)dl);
		o += 5 + dl;
	}
	spit(dir, name, out, (size_t)(o - out));
	lw_capture_reader_close(r);
	free(out);
}

static int seeds(const char *dir)
{
	char path[4096];
	unsigned char *b;
	size_t len;

	snprintf(path, sizeof(path), "%s/.capgen.tmp", dir);
	small(path, 30);
	b = slurp(path, &len);
	spit(dir, "whole.lwy", b, len);
	recipe(dir, "whole.recipe", b, len);
	spit(dir, "cut.lwy", b, len * 2 / 3);
	b[len / 2] ^= 4;
	spit(dir, "flipped.lwy", b, len);
	free(b);
	small(path, 0);
	b = slurp(path, &len);
	spit(dir, "no-records.lwy", b, len);
	free(b);
	remove(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "seeds"))
		return seeds(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "busy"))
		return busy(argv[2], (unsigned)strtoul(argv[3], NULL, 10));
	fprintf(stderr, "usage: capgen seeds DIR | capgen busy FILE N\n");
	return 2;
}
