// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_capture.c - the capture file: round trips, node snapshots of every
 * fixture read back identically, and every kind of damage: a cut at each
 * byte, a flipped bit in each chunk, bad headers, foreign files, full disks
 * and the size cap. Run from the repository root.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <zlib.h>

#include <cmocka.h>

#include "latwhy.h"

#include "capture/capture.h"
#include "capture/format.h"
#include "node/node.h"

#define LW_FIXTURES "tests/fixtures"

/* ---- helpers ---- */

static char tmpdir[64];

static int setup_dir(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/latwhy-capture-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static struct lw_capture_opts opts(void)
{
	return (struct lw_capture_opts){.latwhy_version = "0.9-test", .abi_version = 7};
}

/* A slow-request record whose contents follow from i. */
static void make_request(struct lw_request *q, unsigned i)
{
	memset(q, 0, sizeof(*q));
	q->type = LW_REC_REQUEST;
	q->pid = 4242;
	q->tid = 4242 + i % 8;
	q->cpu = i % 4;
	snprintf(q->comm, sizeof(q->comm), "worker-%u", i % 8);
	q->start_ns = 1000000000ull + i * 997ull;
	q->latency_ns = 2000000 + (i * 7919u) % 500000;
	for (int b = 0; b < LW_B_MAX; b++)
		q->ns[b] = q->latency_ns / LW_B_MAX + b * (i % 13);
	q->flags = LW_REQ_FREQ_KNOWN;
}

/* Record i of the synthetic stream: mostly requests, a tick every 100. */
static size_t make_record(unsigned i, void *buf)
{
	if (i % 100 == 99) {
		struct lw_tick_rec t = {.type = LW_REC_TICK, .ts_ns = i * 1000ull, .requests = i};

		memcpy(buf, &t, sizeof(t));
		return sizeof(t);
	}
	make_request(buf, i);
	return sizeof(struct lw_request);
}

static const struct lw_capture_kv host_kv[] = {
	{"hostname", "node-a"}, {"kernel_release", "6.1.0-test"}, {"clock_id", "CLOCK_MONOTONIC"}};
static const struct lw_capture_kv target_kv[] = {{"pid", "4242"}, {"comm", "gateway"}};
static const struct lw_capture_kv opt_kv[] = {{"slow", "auto"}, {"request", "socket"}};
static const struct lw_capture_file node_files[] = {
	{"/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n", 23,
	 S_IFREG | 0644},
	{"/proc/irq/36/smp_affinity_list", "0-3\n", 4, S_IFREG | 0444},
	{"/sys/devices/system/cpu/cpu1", NULL, 0, S_IFDIR | 0755},
};

/* A capture of nrec records in chunks of about flush bytes, at path. */
static void write_capture(const char *path, unsigned nrec, __u32 flush)
{
	struct lw_capture_opts o = opts();
	struct lw_capture_writer *w;
	unsigned char rec[256];

	o.flush_bytes = flush;
	o.overwrite = true;
	w = lw_capture_writer_open(path, &o);
	assert_non_null(w);
	assert_int_equal(lw_capture_writer_add_facts(w, LW_CHUNK_HOST, host_kv, 3), 0);
	assert_int_equal(lw_capture_writer_add_facts(w, LW_CHUNK_TARGET, target_kv, 2), 0);
	assert_int_equal(lw_capture_writer_add_facts(w, LW_CHUNK_OPTIONS, opt_kv, 2), 0);
	assert_int_equal(lw_capture_writer_add_files(w, "start", node_files, 3), 0);
	for (unsigned i = 0; i < nrec; i++)
		assert_int_equal(lw_capture_writer_append(w, rec, make_record(i, rec)), 0);
	assert_int_equal(lw_capture_writer_add_files(w, "end", node_files, 2), 0);
	assert_int_equal(lw_capture_writer_close(w), 0);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *b;
	FILE *f = fopen(path, "re");

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	b = malloc(st.st_size + 1);
	assert_non_null(b);
	*len = fread(b, 1, st.st_size, f);
	assert_int_equal(*len, (size_t)st.st_size);
	fclose(f);
	return b;
}

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static bool has_warning(const struct lw_capture_reader *r, const char *needle)
{
	for (size_t i = 0; i < lw_capture_reader_nr_warnings(r); i++)
		if (strstr(lw_capture_reader_warning(r, i), needle))
			return true;
	return false;
}

/* Read every record; check each against the synthetic stream from first.
 * Returns how many. */
static unsigned read_records(struct lw_capture_reader *r, unsigned first, bool check)
{
	unsigned char want[256];
	const void *rec;
	unsigned n = 0;
	size_t len;
	int err;

	while (!(err = lw_capture_reader_next_record(r, &rec, &len))) {
		if (check) {
			size_t wl = make_record(first + n, want);

			assert_int_equal(len, wl);
			assert_memory_equal(rec, want, wl);
		}
		n++;
	}
	assert_int_equal(err, 1);
	return n;
}

/* ---- round trip ---- */

static void test_roundtrip(void **state)
{
	const struct lw_capture_info *in;
	const struct lw_capture_file *f;
	const struct lw_capture_kv *kv;
	struct lw_capture_reader *r;
	char path[128], err[256];

	tmp_path(path, sizeof(path), "rt.lwy");
	write_capture(path, 5000, 64 << 10);
	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	in = lw_capture_reader_info(r);
	assert_int_equal(lw_capture_reader_nr_warnings(r), 0);
	assert_int_equal(in->format_version, LW_CAPTURE_FORMAT_VERSION);
	assert_int_equal(in->abi_version, 7);
	assert_string_equal(in->latwhy_version, "0.9-test");
	assert_true(in->has_end);
	assert_int_equal(in->end_flags, LW_CAPTURE_END_CLEAN);
	assert_int_equal(in->records, 5000);
	assert_int_equal(in->end_records, 5000);
	assert_false(in->truncated);
	assert_true(in->t_first_ns && in->t_last_ns >= in->t_first_ns);
	/* 5000 x ~164 bytes in 64 KiB chunks */
	assert_true(in->chunks >= 4 + 10 + 2);
	assert_int_equal(in->end_bytes + 0, lw_capture_reader_chunk(r, in->chunks - 1)->offset);
	assert_string_equal(lw_capture_reader_fact(r, LW_CHUNK_HOST, "hostname"), "node-a");
	assert_string_equal(lw_capture_reader_fact(r, LW_CHUNK_TARGET, "comm"), "gateway");
	assert_string_equal(lw_capture_reader_fact(r, LW_CHUNK_OPTIONS, "request"), "socket");
	assert_null(lw_capture_reader_fact(r, LW_CHUNK_HOST, "nope"));
	assert_int_equal(lw_capture_reader_facts(r, LW_CHUNK_HOST, &kv), 3);
	assert_int_equal(lw_capture_reader_nr_nodes(r), 2);
	assert_string_equal(lw_capture_reader_node_label(r, 1), "end");
	assert_int_equal(lw_capture_reader_node_files(r, 0, &f), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(f[i].path, node_files[i].path);
		assert_int_equal(f[i].len, node_files[i].len);
		assert_int_equal(f[i].mode, node_files[i].mode);
		if (f[i].len)
			assert_memory_equal(f[i].data, node_files[i].data, f[i].len);
	}
	assert_int_equal(read_records(r, 0, true), 5000);
	lw_capture_reader_rewind(r);
	assert_int_equal(read_records(r, 0, false), 5000);
	lw_capture_reader_close(r);
}

static void test_extract(void **state)
{
	struct lw_capture_reader *r;
	char path[128], dir[160], file[256], err[256];
	unsigned char *t;
	struct stat st;
	size_t tl;

	tmp_path(path, sizeof(path), "x.lwy");
	write_capture(path, 10, 0);
	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	snprintf(dir, sizeof(dir), "%s/root", tmpdir);
	assert_int_equal(lw_capture_node_extract(r, dir), 0);
	snprintf(file, sizeof(file), "%s/proc/irq/36/smp_affinity_list", dir);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0444);
	snprintf(file, sizeof(file), "%s/sys/devices/system/cpu/cpu1", dir);
	assert_int_equal(stat(file, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	snprintf(file, sizeof(file), "%s/sys/kernel/mm/transparent_hugepage/enabled", dir);
	t = slurp(file, &tl);
	assert_int_equal(tl, 23);
	assert_memory_equal(t, "always [madvise] never\n", 23);
	free(t);
	assert_int_equal(lw_capture_node_extract_at(r, 5, dir), -ENOENT);
	lw_capture_reader_close(r);
}

/* ---- node snapshots of the fixtures ---- */

static void irq_equal(const struct lw_irq *a, const struct lw_irq *b, int nr_cpus)
{
	assert_int_equal(a->irq, b->irq);
	assert_string_equal(a->chip, b->chip);
	assert_string_equal(a->name, b->name);
	assert_int_equal(a->total, b->total);
	for (int c = 0; c < nr_cpus; c++)
		assert_int_equal(a->count[c], b->count[c]);
	assert_string_equal(a->affinity, b->affinity);
	assert_string_equal(a->effective, b->effective);
	assert_memory_equal(&a->aff, &b->aff, sizeof(a->aff));
	assert_memory_equal(&a->eff, &b->eff, sizeof(a->eff));
	assert_int_equal(a->node, b->node);
	assert_int_equal(a->pin, b->pin);
	assert_int_equal(a->nic, b->nic);
}

static void node_equal(const struct lw_node *a, const struct lw_node *b)
{
	assert_int_equal(a->nr_cpus, b->nr_cpus);
	assert_memory_equal(&a->online, &b->online, sizeof(a->online));
	assert_memory_equal(&a->isolated, &b->isolated, sizeof(a->isolated));
	if (a->nr_cpus)
		assert_memory_equal(a->cpus, b->cpus, a->nr_cpus * sizeof(*a->cpus));
	assert_memory_equal(&a->freq, &b->freq, sizeof(a->freq));
	assert_memory_equal(&a->idle, &b->idle, sizeof(a->idle));
	assert_memory_equal(&a->thp, &b->thp, sizeof(a->thp));
	assert_int_equal(a->nr_irqs, b->nr_irqs);
	for (size_t i = 0; i < a->nr_irqs; i++)
		irq_equal(&a->irqs[i], &b->irqs[i], a->nr_cpus);
	assert_memory_equal(&a->irqbalance, &b->irqbalance, sizeof(a->irqbalance));
	assert_int_equal(a->nr_nics, b->nr_nics);
	for (size_t i = 0; i < a->nr_nics; i++) {
		assert_string_equal(a->nics[i].name, b->nics[i].name);
		assert_int_equal(a->nics[i].numa_node, b->nics[i].numa_node);
		assert_int_equal(a->nics[i].nr_irqs, b->nics[i].nr_irqs);
		if (a->nics[i].nr_irqs)
			assert_memory_equal(a->nics[i].irqs, b->nics[i].irqs,
					    a->nics[i].nr_irqs * sizeof(unsigned));
	}
	assert_int_equal(a->nr_rps, b->nr_rps);
	if (a->nr_rps)
		assert_memory_equal(a->rps, b->rps, a->nr_rps * sizeof(*a->rps));
	assert_int_equal(a->nr_numa, b->nr_numa);
	if (a->nr_numa)
		assert_memory_equal(a->numa, b->numa, a->nr_numa * sizeof(*a->numa));
	assert_int_equal(!!a->net_rx, !!b->net_rx);
	if (a->net_rx)
		assert_memory_equal(a->net_rx, b->net_rx, a->nr_cpus * sizeof(*a->net_rx));
	assert_int_equal(a->vm, b->vm);
	assert_int_equal(a->has_target, b->has_target);
	assert_memory_equal(&a->target, &b->target, sizeof(a->target));
}

static void fixture_roundtrip(const char *name)
{
	char root[128], path[128], dir[160], err[256], proc[192];
	struct lw_capture_opts o = opts();
	struct lw_node a, b;
	struct lw_capture_writer *w;
	struct lw_capture_reader *r;
	int pid;

	snprintf(root, sizeof(root), LW_FIXTURES "/%s", name);
	snprintf(proc, sizeof(proc), "%s/proc/4242", root);
	pid = access(proc, F_OK) ? 0 : 4242;
	snprintf(path, sizeof(path), "%s/%s.lwy", tmpdir, name);
	w = lw_capture_writer_open(path, &o);
	assert_non_null(w);
	assert_int_equal(lw_capture_writer_add_host(w, root), 0);
	if (pid)
		assert_int_equal(lw_capture_writer_add_target(w, root, pid), 0);
	assert_int_equal(lw_capture_writer_add_node(w, "start", root, pid), 0);
	assert_int_equal(lw_capture_writer_close(w), 0);

	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(lw_capture_reader_nr_warnings(r), 0);
	assert_non_null(lw_capture_reader_fact(r, LW_CHUNK_HOST, "cpus_online"));
	if (pid)
		assert_string_equal(lw_capture_reader_fact(r, LW_CHUNK_TARGET, "pid"), "4242");
	snprintf(dir, sizeof(dir), "%s/%s-root", tmpdir, name);
	assert_int_equal(lw_capture_node_extract(r, dir), 0);
	lw_capture_reader_close(r);

	assert_int_equal(lw_node_read(&a, root, pid), 0);
	assert_int_equal(lw_node_read(&b, dir, pid), 0);
	node_equal(&a, &b);
	lw_node_free(&a);
	lw_node_free(&b);
}

static void test_node_fixtures(void **state)
{
	static const char *const names[] = {"acpi-powersave", "amd-pstate", "intel-hwp", "numa-nic",
					    "vm-nocpufreq"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fixture_roundtrip(names[i]);
}

/* This machine's own node: collected without error or hang, as any user,
 * and read back as the same CPUs. (Its counters move: no field compare.) */
static void test_node_live(void **state)
{
	struct lw_capture_opts o = opts();
	const struct lw_capture_file *f;
	struct lw_capture_writer *w;
	struct lw_capture_reader *r;
	char path[128], dir[160], err[256];
	struct lw_node a, b;
	size_t n;

	tmp_path(path, sizeof(path), "live.lwy");
	w = lw_capture_writer_open(path, &o);
	assert_non_null(w);
	assert_int_equal(lw_capture_writer_add_host(w, "/"), 0);
	assert_int_equal(lw_capture_writer_add_target(w, "/", getpid()), 0);
	assert_int_equal(lw_capture_writer_add_node(w, "start", "/", getpid()), 0);
	assert_int_equal(lw_capture_writer_close(w), 0);
	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	n = lw_capture_reader_node_files(r, 0, &f);
	assert_true(n > 10);
	assert_non_null(lw_capture_reader_fact(r, LW_CHUNK_HOST, "kernel_release"));
	assert_string_equal(lw_capture_reader_fact(r, LW_CHUNK_TARGET, "threads"), "1");
	snprintf(dir, sizeof(dir), "%s/live-root", tmpdir);
	assert_int_equal(lw_capture_node_extract(r, dir), 0);
	lw_capture_reader_close(r);
	assert_int_equal(lw_node_read(&a, "/", getpid()), 0);
	assert_int_equal(lw_node_read(&b, dir, getpid()), 0);
	assert_int_equal(a.nr_cpus, b.nr_cpus);
	assert_memory_equal(&a.online, &b.online, sizeof(a.online));
	assert_string_equal(a.target.cpus_allowed, b.target.cpus_allowed);
	lw_node_free(&a);
	lw_node_free(&b);
}

/* ---- damage ---- */

/* The small capture the damage tests cut and flip, in memory. */
static unsigned char *small_capture(size_t *len, struct lw_capture_reader **full)
{
	char path[128], err[256];
	unsigned char *b;

	tmp_path(path, sizeof(path), "small.lwy");
	write_capture(path, 200, 4096);
	b = slurp(path, len);
	*full = lw_capture_reader_open_mem(b, *len, err, sizeof(err));
	assert_non_null(*full);
	assert_int_equal(lw_capture_reader_nr_warnings(*full), 0);
	return b;
}

static __u64 chunk_end(const struct lw_capture_chunk *c)
{
	return c->offset + LWC_CHUNK_HDR + c->comp_len;
}

/* A capture cut at cut bytes: every whole chunk before the cut reads. */
static void check_cut(const unsigned char *b, size_t cut, const struct lw_capture_reader *full)
{
	size_t whole = 0, nrec = 0, nchunks = lw_capture_reader_nr_chunks(full);
	__u64 last_end = LWC_FILE_HDR;
	const struct lw_capture_info *in;
	struct lw_capture_reader *r;
	char err[256] = "";

	r = lw_capture_reader_open_mem(b, cut, err, sizeof(err));
	if (cut < LWC_FILE_HDR) {
		assert_null(r);
		assert_non_null(strstr(err, cut ? "truncated file header" : "empty file"));
		return;
	}
	assert_non_null(r);
	for (size_t i = 0; i < nchunks; i++) {
		const struct lw_capture_chunk *c = lw_capture_reader_chunk(full, i);

		if (chunk_end(c) > cut)
			break;
		whole++;
		last_end = chunk_end(c);
		nrec += c->kind == LW_CHUNK_RECORDS ? c->count : 0;
	}
	in = lw_capture_reader_info(r);
	assert_int_equal(in->chunks, whole);
	assert_int_equal(in->records, nrec);
	assert_false(in->has_end);
	assert_int_equal(in->truncated, cut != last_end);
	assert_int_equal(in->lost_bytes, cut - last_end);
	assert_true(has_warning(r, "END trailer is missing"));
	if (cut != last_end)
		assert_true(has_warning(r, "bytes lost"));
	assert_int_equal(read_records(r, 0, true), nrec);
	lw_capture_reader_close(r);
}

/* Every cut in memory; every 61st also through the file reader. */
static void test_truncate_every_byte(void **state)
{
	struct lw_capture_reader *full, *r;
	char path[128], err[256];
	size_t len;
	unsigned char *b = small_capture(&len, &full);

	tmp_path(path, sizeof(path), "cut.lwy");
	for (size_t cut = 0; cut < len; cut++) {
		check_cut(b, cut, full);
		if (cut < LWC_FILE_HDR || cut % 61)
			continue;
		spit(path, b, cut);
		r = lw_capture_reader_open(path, err, sizeof(err));
		assert_non_null(r);
		assert_true(has_warning(r, "END trailer is missing"));
		lw_capture_reader_close(r);
	}
	lw_capture_reader_close(full);
	free(b);
}

static void check_flip(unsigned char *b, size_t len, const struct lw_capture_reader *full, size_t i,
		       bool in_header)
{
	const struct lw_capture_chunk *c = lw_capture_reader_chunk(full, i);
	const struct lw_capture_info *fi = lw_capture_reader_info(full), *in;
	size_t at = in_header ? c->offset + LWC_CH_COMP : chunk_end(c) - 1 - c->comp_len / 2;
	bool records = c->kind == LW_CHUNK_RECORDS, last = i + 1 == fi->chunks;
	struct lw_capture_reader *r;
	char err[256];

	b[at] ^= 0x10;
	r = lw_capture_reader_open_mem(b, len, err, sizeof(err));
	assert_non_null(r);
	in = lw_capture_reader_info(r);
	assert_int_equal(in->chunks, fi->chunks - 1);
	assert_int_equal(in->records, fi->records - (records ? c->count : 0));
	assert_int_equal(in->has_end, c->kind != LW_CHUNK_END);
	if (in_header) {
		assert_int_equal(in->bad_bytes, LWC_CHUNK_HDR + c->comp_len);
		assert_int_equal(in->missing_chunks, last ? 0 : 1);
		assert_true(has_warning(r, "damaged"));
	} else {
		assert_int_equal(in->bad_chunks, 1);
		assert_int_equal(in->bad_records, records ? c->count : 0);
		assert_true(has_warning(r, "bad checksum"));
		if (records)
			assert_true(in->lost_ns > 0 && has_warning(r, " records over "));
	}
	if (records && !last)
		assert_true(has_warning(r, "records written are lost"));
	assert_int_equal(read_records(r, 0, false), in->records);
	lw_capture_reader_close(r);
	b[at] ^= 0x10;
}

static void test_flip_each_chunk(void **state)
{
	struct lw_capture_reader *full;
	size_t len;
	unsigned char *b = small_capture(&len, &full);

	for (size_t i = 0; i < lw_capture_reader_nr_chunks(full); i++) {
		check_flip(b, len, full, i, false);
		check_flip(b, len, full, i, true);
	}
	lw_capture_reader_close(full);
	free(b);
}

/* Junk between two chunks (a "LWCK" in it too) is skipped, all else read. */
static void test_resync_garbage(void **state)
{
	struct lw_capture_reader *full, *r;
	size_t len, at, junk = 1000;
	unsigned char *b = small_capture(&len, &full), *g = malloc(len + junk);
	char err[256];

	assert_non_null(g);
	at = chunk_end(lw_capture_reader_chunk(full, 5));
	memcpy(g, b, at);
	memset(g + at, 'L', junk);
	memcpy(g + at + 100, LWC_CHUNK_MAGIC, 4);
	memcpy(g + at + junk, b + at, len - at);
	r = lw_capture_reader_open_mem(g, len + junk, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(lw_capture_reader_info(r)->bad_bytes, junk);
	assert_int_equal(lw_capture_reader_info(r)->chunks, lw_capture_reader_info(full)->chunks);
	assert_true(lw_capture_reader_info(r)->has_end);
	assert_int_equal(read_records(r, 0, true), 200);
	lw_capture_reader_close(r);
	lw_capture_reader_close(full);
	free(g);
	free(b);
}

/* Damage running to the end of a file whose last byte happens to be 'L' is
 * damage, not a chunk header cut after its first byte. */
static void test_damage_to_end(void **state)
{
	struct lw_capture_reader *full, *r;
	size_t len;
	unsigned char *b = small_capture(&len, &full);
	__u64 end = lw_capture_reader_chunk(full, lw_capture_reader_nr_chunks(full) - 1)->offset;
	char err[256];

	b[end + LWC_CH_SEQ] ^= 1;
	b[len - 1] = 'L';
	r = lw_capture_reader_open_mem(b, len, err, sizeof(err));
	assert_non_null(r);
	assert_false(lw_capture_reader_info(r)->truncated);
	assert_int_equal(lw_capture_reader_info(r)->bad_bytes, len - end);
	lw_capture_reader_close(r);
	lw_capture_reader_close(full);
	free(b);
}

/* A chunk of a kind this reader does not know is skipped, with a warning. */
static void test_unknown_kind(void **state)
{
	struct lw_capture_reader *full, *r;
	size_t len, at, cl;
	unsigned char *b = small_capture(&len, &full), *g, h[LWC_CHUNK_HDR + 64];
	uLongf dl = 64;
	char err[256];

	assert_int_equal(compress2(h + LWC_CHUNK_HDR, &dl, (const Bytef *)"future", 6, 6), Z_OK);
	memset(h, 0, LWC_CHUNK_HDR);
	memcpy(h, LWC_CHUNK_MAGIC, 4);
	lwc_put16(h + LWC_CH_KIND, 99);
	lwc_put16(h + LWC_CH_HDRSIZE, LWC_CHUNK_HDR);
	lwc_put32(h + LWC_CH_SEQ, 1000);
	lwc_put32(h + LWC_CH_COMP, dl);
	lwc_put32(h + LWC_CH_RAW, 6);
	lwc_put32(h + LWC_CH_PCRC, crc32(0, h + LWC_CHUNK_HDR, dl));
	lwc_put32(h + LWC_CH_CRC, crc32(0, h, LWC_CH_CRC));
	cl = LWC_CHUNK_HDR + dl;
	g = malloc(len + cl);
	assert_non_null(g);
	at = lw_capture_reader_chunk(full, lw_capture_reader_nr_chunks(full) - 1)->offset;
	memcpy(g, b, at);
	memcpy(g + at, h, cl);
	memcpy(g + at + cl, b + at, len - at);
	r = lw_capture_reader_open_mem(g, len + cl, err, sizeof(err));
	assert_non_null(r);
	assert_true(has_warning(r, "unknown kind 99"));
	assert_true(lw_capture_reader_info(r)->has_end);
	assert_int_equal(read_records(r, 0, true), 200);
	lw_capture_reader_close(r);
	lw_capture_reader_close(full);
	free(g);
	free(b);
}

static void expect_refused(const void *buf, size_t len, const char *msg)
{
	char err[256] = "";

	assert_null(lw_capture_reader_open_mem(buf, len, err, sizeof(err)));
	if (!strstr(err, msg))
		fail_msg("error \"%s\" lacks \"%s\"", err, msg);
}

static void test_versions(void **state)
{
	struct lw_capture_reader *full;
	size_t len;
	unsigned char *b = small_capture(&len, &full);

	b[LWC_FH_FORMAT] = 2;
	expect_refused(b, len, "capture format version 2 is newer than this latwhy reads (1)");
	b[LWC_FH_FORMAT] = 0;
	expect_refused(b, len, "capture format version 0 is older than the oldest");
	b[LWC_FH_FORMAT] = 1;
	b[LWC_FH_ABI] ^= 1;
	expect_refused(b, len, "damaged file header");
	lw_capture_reader_close(full);
	free(b);
}

static void test_bad_magic(void **state)
{
	static const char text[] = "#!/bin/sh\necho this is not a capture\n";
	char zeros[4096] = {0};

	expect_refused(text, sizeof(text) - 1, "not a latwhy capture (bad magic)");
	expect_refused(zeros, sizeof(zeros), "not a latwhy capture (bad magic)");
	expect_refused("\x89LW", 3, "truncated file header");
	expect_refused("", 0, "empty file");
}

static void expect_open_refused(const char *path, const char *msg, int err_no)
{
	char err[256] = "";

	assert_null(lw_capture_reader_open(path, err, sizeof(err)));
	assert_int_equal(errno, err_no);
	if (!strstr(err, msg))
		fail_msg("%s: error \"%s\" lacks \"%s\"", path, err, msg);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_foreign_files(void **state)
{
	char path[128];
	double t0;

	tmp_path(path, sizeof(path), "empty.lwy");
	spit(path, "", 0);
	expect_open_refused(path, "empty file (0 bytes)", EINVAL);
	expect_open_refused(tmpdir, "a directory", EISDIR);
	tmp_path(path, sizeof(path), "missing.lwy");
	expect_open_refused(path, "No such file", ENOENT);
	tmp_path(path, sizeof(path), "fifo");
	assert_int_equal(mkfifo(path, 0600), 0);
	t0 = now_s();
	expect_open_refused(path, "a FIFO", EINVAL);
	assert_true(now_s() - t0 < 1.0);
}

/* 10 GB of zeros (sparse) is refused at once; behind a good file header,
 * the holes are skipped unread and the zeros reported as damage. */
static void test_sparse_zeros(void **state)
{
	struct lw_capture_reader *full, *r;
	char path[128], err[256];
	size_t len;
	unsigned char *b = small_capture(&len, &full);
	double t0;
	int fd;

	tmp_path(path, sizeof(path), "zeros.lwy");
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 10ll << 30), 0);
	t0 = now_s();
	expect_open_refused(path, "not a latwhy capture (bad magic)", EINVAL);
	assert_true(now_s() - t0 < 1.0);
	assert_int_equal(pwrite(fd, b, LWC_FILE_HDR, 0), LWC_FILE_HDR);
	close(fd);
	t0 = now_s();
	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(lw_capture_reader_info(r)->chunks, 0);
	assert_int_equal(lw_capture_reader_info(r)->bad_bytes, (10ll << 30) - LWC_FILE_HDR);
	assert_true(has_warning(r, "damaged"));
	assert_true(now_s() - t0 < 1.0);
	lw_capture_reader_close(r);
	unlink(path);
	lw_capture_reader_close(full);
	free(b);
}

/* Junk with no chunk header is searched for one only so far: a damaged
 * header hides one chunk, not 80 MiB. */
static void test_scan_gives_up(void **state)
{
	struct lw_capture_reader *full, *r;
	size_t len, big = 80 << 20;
	unsigned char *b = small_capture(&len, &full), *g = calloc(1, big + len);
	char err[256];

	assert_non_null(g);
	memcpy(g, b, LWC_FILE_HDR);
	memset(g + LWC_FILE_HDR, 0x55, 16);
	memcpy(g + big, b + LWC_FILE_HDR, len - LWC_FILE_HDR);
	r = lw_capture_reader_open_mem(g, big + len - LWC_FILE_HDR, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(lw_capture_reader_info(r)->chunks, 0);
	assert_true(has_warning(r, "the rest of the file is not read"));
	lw_capture_reader_close(r);
	lw_capture_reader_close(full);
	free(g);
	free(b);
}

/* ---- the writer's limits and errors ---- */

static void test_size_cap(void **state)
{
	struct lw_capture_opts o = opts();
	const struct lw_capture_info *in;
	struct lw_capture_writer *w;
	struct lw_capture_reader *r;
	unsigned char rec[200];
	char path[128], err[256];
	unsigned seed = 1, n;
	__u64 written, dropped;
	struct stat st;
	int e = 0;

	tmp_path(path, sizeof(path), "cap.lwy");
	o.max_size = 16 << 10;
	o.flush_bytes = 2048;
	w = lw_capture_writer_open(path, &o);
	assert_non_null(w);
	assert_int_equal(lw_capture_writer_add_facts(w, LW_CHUNK_HOST, host_kv, 3), 0);
	for (n = 0; n < 10000 && !e; n++) {
		for (size_t i = 0; i < sizeof(rec); i++)
			rec[i] = (unsigned char)rand_r(&seed);
		lwc_put32(rec, LW_REC_REQUEST);
		e = lw_capture_writer_append(w, rec, sizeof(rec));
	}
	assert_int_equal(e, -EFBIG);
	assert_int_equal(lw_capture_writer_append(w, rec, sizeof(rec)), -EFBIG);
	assert_int_equal(lw_capture_writer_flush(w), 0);
	written = lw_capture_writer_records(w);
	dropped = lw_capture_writer_dropped(w);
	assert_true(written > 0 && dropped > 1);
	assert_int_equal(lw_capture_writer_close(w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= 16 << 10);
	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	in = lw_capture_reader_info(r);
	assert_true(in->has_end);
	assert_int_equal(in->end_flags, LW_CAPTURE_END_CLEAN | LW_CAPTURE_END_CAPPED);
	assert_int_equal(in->records, written);
	assert_int_equal(in->end_dropped, dropped);
	assert_true(has_warning(r, "size cap"));
	lw_capture_reader_close(r);
}

/* One chunk's worth of records that passes the cap whole: the writer keeps
 * the largest half, quarter, ... of them that fits, not none. */
static void test_cap_inside_chunk(void **state)
{
	struct lw_capture_opts o = opts();
	struct lw_capture_writer *w;
	struct lw_capture_reader *r;
	unsigned char rec[200];
	char path[128], err[256];
	unsigned seed = 7;
	__u64 written;

	tmp_path(path, sizeof(path), "cap-inside.lwy");
	o.max_size = 16 << 10;
	o.flush_bytes = 1 << 20; /* one chunk for everything below */
	w = lw_capture_writer_open(path, &o);
	assert_non_null(w);
	for (int n = 0; n < 400; n++) {
		for (size_t i = 0; i < sizeof(rec); i++)
			rec[i] = (unsigned char)rand_r(&seed);
		lwc_put32(rec, LW_REC_REQUEST);
		assert_int_equal(lw_capture_writer_append(w, rec, sizeof(rec)), 0);
	}
	/* 80 kB of incompressible records: a part of them fits in 16 kB */
	assert_int_equal(lw_capture_writer_flush(w), -EFBIG);
	written = lw_capture_writer_records(w);
	assert_true(written >= 25 && written < 400);
	assert_int_equal(lw_capture_writer_dropped(w), 400 - written);
	assert_int_equal(lw_capture_writer_close(w), 0);
	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(lw_capture_reader_info(r)->records, written);
	lw_capture_reader_close(r);
}

/* A disk that fills up: the hook writes what is left of its budget, then
 * fails with ENOSPC, leaving part of a chunk behind. */
struct disk {
	size_t left;
};

static ssize_t disk_write(int fd, const void *buf, size_t len, void *ctx)
{
	struct disk *d = ctx;

	if (!d->left) {
		errno = ENOSPC;
		return -1;
	}
	if (len > d->left)
		len = d->left;
	d->left -= len;
	return write(fd, buf, len);
}

static void test_enospc(void **state)
{
	struct disk d = {.left = 6000};
	struct lw_capture_opts o = opts();
	struct lw_capture_writer *w;
	struct lw_capture_reader *r;
	unsigned char rec[256];
	char path[128], err[256];
	unsigned n;
	__u64 written;
	int e = 0;

	o.flush_bytes = 1024;
	o.write = disk_write;
	o.write_ctx = &d;
	tmp_path(path, sizeof(path), "full.lwy");
	w = lw_capture_writer_open(path, &o);
	assert_non_null(w);
	for (n = 0; n < 100000 && !e; n++)
		e = lw_capture_writer_append(w, rec, make_record(n, rec));
	assert_int_equal(e, -ENOSPC);
	assert_int_equal(lw_capture_writer_append(w, rec, make_record(n, rec)), -ENOSPC);
	assert_int_equal(lw_capture_writer_flush(w), -ENOSPC);
	written = lw_capture_writer_records(w);
	assert_true(written > 0);
	assert_int_equal(lw_capture_writer_close(w), -ENOSPC);

	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	/* the partial chunk was cut off again */
	assert_false(lw_capture_reader_info(r)->truncated);
	assert_false(lw_capture_reader_info(r)->has_end);
	assert_true(has_warning(r, "END trailer is missing"));
	assert_int_equal(read_records(r, 0, true), written);
	lw_capture_reader_close(r);
}

static void test_writer_args(void **state)
{
	struct lw_capture_opts o = opts();
	static unsigned char big[LW_CAPTURE_MAX_RECORD + 1];
	struct lw_capture_writer *w;
	char path[128];

	tmp_path(path, sizeof(path), "excl.lwy");
	spit(path, "x", 1);
	assert_null(lw_capture_writer_open(path, &o));
	assert_int_equal(errno, EEXIST);
	o.overwrite = true;
	w = lw_capture_writer_open(path, &o);
	assert_non_null(w);
	assert_int_equal(lw_capture_writer_append(w, big, sizeof(big)), -E2BIG);
	assert_int_equal(lw_capture_writer_append(w, big, 3), -EINVAL);
	assert_int_equal(lw_capture_writer_add_facts(w, LW_CHUNK_RECORDS, host_kv, 1), -EINVAL);
	assert_int_equal(lw_capture_writer_close(w), 0);
	assert_null(lw_capture_writer_open(tmpdir, &o));
	assert_int_equal(errno, EISDIR);
	assert_null(lw_capture_writer_open_fd(open("/dev/full", O_WRONLY | O_CLOEXEC), &o));
	assert_int_equal(errno, ENOSPC); /* the file header already */
}

/* An ABI 2 capture's request (no memory buckets, no fault counts) and META
 * are read widened: the buckets before kept, memory 0 and not measured. */
static void test_upgrade_abi2(void **state)
{
	enum {
		V2_LEN = offsetof(struct lw_request, faults_min) -
			 (LW_B_MAX - LW_B_FAULT) * sizeof(__u64),
	};
	struct lw_capture_opts o = opts();
	struct lw_capture_writer *w;
	struct lw_capture_reader *r;
	struct lw_meta_rec m = {.type = LW_REC_META};
	unsigned char v2[sizeof(struct lw_request)];
	struct lw_request q;
	const struct lw_request *got;
	const void *rec;
	char path[256], err[256];
	size_t len, tail = sizeof(q.preempt_pid) + sizeof(q.flags) + sizeof(q.preempt_comm) +
			   sizeof(q.preempt_ns);
	int n = 0;

	(void)state;
	make_request(&q, 3);
	for (int b = LW_B_FAULT; b < LW_B_MAX; b++)
		q.ns[b] = 0;
	q.preempt_ns = 777;
	/* ABI 2's layout: ns[] up to quota, then the tail, no counts */
	memcpy(v2, &q, offsetof(struct lw_request, ns[LW_B_FAULT]));
	memcpy(v2 + offsetof(struct lw_request, ns[LW_B_FAULT]), &q.preempt_pid, tail);
	tmp_path(path, sizeof(path), "abi2.lwy");
	o.abi_version = 2;
	o.overwrite = true;
	w = lw_capture_writer_open(path, &o);
	assert_non_null(w);
	assert_int_equal(lw_capture_writer_append(w, &m, sizeof(m)), 0);
	assert_int_equal(lw_capture_writer_append(w, v2, V2_LEN), 0);
	assert_int_equal(lw_capture_writer_close(w), 0);
	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	while (!lw_capture_reader_next_record(r, &rec, &len)) {
		if (n++ == 0) {
			assert_int_equal(len, sizeof(m));
			assert_true(((const struct lw_meta_rec *)rec)->flags & LW_META_NO_MEMORY);
			assert_false(((const struct lw_meta_rec *)rec)->flags & LW_META_NO_QUOTA);
			continue;
		}
		assert_int_equal(len, sizeof(struct lw_request));
		got = rec;
		assert_memory_equal(got, &q, offsetof(struct lw_request, ns[LW_B_FAULT]));
		for (int b = LW_B_FAULT; b < LW_B_MAX; b++)
			assert_int_equal(got->ns[b], 0);
		assert_int_equal(got->preempt_ns, 777);
		assert_int_equal(got->faults_min, 0);
		assert_int_equal(got->faults_maj, 0);
		assert_false(got->flags & LW_REQ_MEMORY_KNOWN);
	}
	assert_int_equal(n, 2);
	lw_capture_reader_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_inside_chunk), cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_extract),		 cmocka_unit_test(test_node_fixtures),
		cmocka_unit_test(test_node_live),	 cmocka_unit_test(test_truncate_every_byte),
		cmocka_unit_test(test_flip_each_chunk),	 cmocka_unit_test(test_resync_garbage),
		cmocka_unit_test(test_unknown_kind),	 cmocka_unit_test(test_damage_to_end),
		cmocka_unit_test(test_versions),	 cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_foreign_files),	 cmocka_unit_test(test_sparse_zeros),
		cmocka_unit_test(test_scan_gives_up),	 cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_enospc),		 cmocka_unit_test(test_writer_args),
		cmocka_unit_test(test_upgrade_abi2),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
