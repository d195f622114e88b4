// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * writer.c - append-only capture writer: a file header, then one chunk per
 * write(2), each whole or (after a failed write) cut off again, so whatever
 * stops the recorder leaves a file whose whole chunks all read back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/capture.h"
#include "capture/format.h"

struct lw_capture_writer {
	int fd;
	struct lw_capture_opts o;
	__u64 off;   /* bytes in the file */
	__u32 seq;   /* of the next chunk */
	int err;     /* sticky write error */
	bool capped; /* a chunk did not fit under max_size */
	/* the RECORDS chunk being filled */
	unsigned char *buf;
	size_t len, cap;
	__u32 count;
	__u64 t_first, t_last;
	/* whole capture */
	__u64 records, dropped;
	__u64 rt_first, rt_last;
	/* header + compressed payload of the chunk being written */
	unsigned char *out;
	size_t out_cap;
};

static __u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int write_all(struct lw_capture_writer *w, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = w->o.write ? w->o.write(w->fd, p, len, w->o.write_ctx)
				       : write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A failed write may have left part of a chunk: cut it off, so the next
 * reader sees a clean end rather than a truncated chunk (best effort: a
 * pipe or /dev/full cannot be cut). */
static int write_fail(struct lw_capture_writer *w, int err)
{
	if (ftruncate(w->fd, (off_t)w->off) == 0)
		lseek(w->fd, (off_t)w->off, SEEK_SET);
	w->err = err;
	return err;
}

static int out_reserve(struct lw_capture_writer *w, size_t need)
{
	unsigned char *p;

	if (need <= w->out_cap)
		return 0;
	p = realloc(w->out, need);
	if (!p)
		return -ENOMEM;
	w->out = p;
	w->out_cap = need;
	return 0;
}

static void chunk_header(unsigned char *h, __u32 kind, __u32 seq, __u32 comp, __u32 raw,
			 __u32 count, __u64 t0, __u64 t1)
{
	memcpy(h + LWC_CH_MAGIC, LWC_CHUNK_MAGIC, 4);
	lwc_put16(h + LWC_CH_KIND, (uint16_t)kind);
	lwc_put16(h + LWC_CH_HDRSIZE, LWC_CHUNK_HDR);
	lwc_put32(h + LWC_CH_SEQ, seq);
	lwc_put32(h + LWC_CH_COMP, comp);
	lwc_put32(h + LWC_CH_RAW, raw);
	lwc_put32(h + LWC_CH_PCRC, (__u32)crc32(0, h + LWC_CHUNK_HDR, comp));
	lwc_put64(h + LWC_CH_TFIRST, t0);
	lwc_put64(h + LWC_CH_TLAST, t1);
	lwc_put32(h + LWC_CH_COUNT, count);
	lwc_put32(h + LWC_CH_CRC, (__u32)crc32(0, h, LWC_CH_CRC));
}

/* Compress raw and write it as one chunk with one write. */
static int emit_chunk(struct lw_capture_writer *w, __u32 kind, const void *raw, size_t raw_len,
		      __u32 count, __u64 t0, __u64 t1)
{
	uLongf dl;
	__u64 limit = w->o.max_size;
	int err;

	if (w->err)
		return w->err;
	if (raw_len > LW_CAPTURE_MAX_RAW)
		return -E2BIG;
	dl = compressBound(raw_len);
	err = out_reserve(w, LWC_CHUNK_HDR + dl);
	if (err)
		return err;
	if (compress2(w->out + LWC_CHUNK_HDR, &dl, raw, raw_len, w->o.level) != Z_OK)
		return -ENOMEM;
	if (kind != LW_CHUNK_END)
		limit = limit > LWC_END_RESERVE ? limit - LWC_END_RESERVE : 0;
	if (w->capped || w->off + LWC_CHUNK_HDR + dl > limit) {
		w->capped = true;
		return -EFBIG;
	}
	chunk_header(w->out, kind, w->seq, (__u32)dl, (__u32)raw_len, count, t0, t1);
	err = write_all(w, w->out, LWC_CHUNK_HDR + dl);
	if (err)
		return write_fail(w, err);
	w->off += LWC_CHUNK_HDR + dl;
	w->seq++;
	return 0;
}

/* Bytes of the first n buffered records. */
static size_t records_len(const struct lw_capture_writer *w, __u32 n)
{
	size_t off = 0;

	while (n--)
		off += 4 + lwc_get32(w->buf + off);
	return off;
}

/* The buffered records as one chunk; when it would pass the size cap, the
 * largest half, quarter, ... of them that fits, so that a cap met inside a
 * second's records keeps what it can (a busy second is 100 kB). */
static int flush_records(struct lw_capture_writer *w)
{
	bool was_capped = w->capped, full = false;
	__u32 all = w->count, n = all;
	int err;

	if (!w->count)
		return w->err;
	err = emit_chunk(w, LW_CHUNK_RECORDS, w->buf, w->len, n, w->t_first, w->t_last);
	/* a full disk keeps what fits of them too: write_fail() cut the
	 * partial chunk off; once a half is written the error stands */
	while (n > 1 && ((err == -EFBIG && !was_capped) || err == -ENOSPC)) {
		int why = err;

		n /= 2;
		w->capped = false;
		if (why == -ENOSPC)
			w->err = 0;
		err = emit_chunk(w, LW_CHUNK_RECORDS, w->buf, records_len(w, n), n, w->t_first,
				 w->t_last);
		if (!err && why == -EFBIG) {
			w->capped = true; /* what did not fit stays out */
		} else if (!err) {
			w->err = -ENOSPC;
			full = true;
			break;
		}
	}
	if (err)
		n = 0;
	w->dropped += all - n;
	if (n) {
		w->records += n;
		if (!w->rt_first)
			w->rt_first = w->t_first;
		w->rt_last = w->t_last;
	}
	w->len = 0;
	w->count = 0;
	return full ? -ENOSPC : err ? err : n < all ? -EFBIG : 0;
}

static int buf_reserve(struct lw_capture_writer *w, size_t need)
{
	size_t cap = w->cap ? w->cap : 4096;
	unsigned char *p;

	if (need <= w->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(w->buf, cap);
	if (!p)
		return -ENOMEM;
	w->buf = p;
	w->cap = cap;
	return 0;
}

int lw_capture_writer_append(struct lw_capture_writer *w, const void *rec, size_t len)
{
	__u64 now;
	int err;

	if (w->err)
		return w->err;
	if (len < sizeof(__u32))
		return -EINVAL;
	if (len > LW_CAPTURE_MAX_RECORD)
		return -E2BIG;
	if (w->capped) {
		w->dropped++;
		return -EFBIG;
	}
	if (w->len && w->len + 4 + len > w->o.flush_bytes) {
		err = flush_records(w);
		if (err) {
			w->dropped++;
			return err;
		}
	}
	err = buf_reserve(w, w->len + 4 + len);
	if (err)
		return err;
	now = now_ns(CLOCK_MONOTONIC);
	if (!w->count)
		w->t_first = now;
	w->t_last = now;
	lwc_put32(w->buf + w->len, (__u32)len);
	memcpy(w->buf + w->len + 4, rec, len);
	w->len += 4 + len;
	w->count++;
	return 0;
}

int lw_capture_writer_flush(struct lw_capture_writer *w)
{
	int err = flush_records(w);

	if (err)
		return err;
	/* a regular file only: /dev/full and pipes cannot be synced */
	if (fdatasync(w->fd) && errno != EINVAL && errno != EROFS) {
		w->err = -errno;
		return w->err;
	}
	return 0;
}

/* Key/value payload: (u32 key length, u32 value length, key, value)... */
int lw_capture_writer_add_facts(struct lw_capture_writer *w, enum lw_capture_kind kind,
				const struct lw_capture_kv *kv, size_t n)
{
	unsigned char *p = NULL, *q;
	size_t len = 0;
	__u64 now;
	int err;

	if (kind != LW_CHUNK_HOST && kind != LW_CHUNK_TARGET && kind != LW_CHUNK_OPTIONS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		len += 8 + strlen(kv[i].key) + strlen(kv[i].value ? kv[i].value : "");
		if (len > LW_CAPTURE_MAX_RAW)
			return -E2BIG;
	}
	err = flush_records(w);
	if (err && err != -EFBIG)
		return err;
	p = malloc(len ? len : 1);
	if (!p)
		return -ENOMEM;
	q = p;
	for (size_t i = 0; i < n; i++) {
		const char *v = kv[i].value ? kv[i].value : "";
		size_t kl = strlen(kv[i].key), vl = strlen(v);

		lwc_put32(q, (__u32)kl);
		lwc_put32(q + 4, (__u32)vl);
		memcpy(q + 8, kv[i].key, kl);
		memcpy(q + 8 + kl, v, vl);
		q += 8 + kl + vl;
	}
	now = now_ns(CLOCK_MONOTONIC);
	err = emit_chunk(w, kind, p, len, (__u32)n, now, now);
	free(p);
	return err;
}

/* NODE payload: u32 label length, label, then per file (u32 path length,
 * u32 mode, u32 data length, path, data). */
int lw_capture_writer_add_files(struct lw_capture_writer *w, const char *label,
				const struct lw_capture_file *files, size_t n)
{
	size_t len = 4 + strlen(label);
	unsigned char *p, *q;
	__u64 now;
	int err;

	for (size_t i = 0; i < n; i++) {
		len += 12 + strlen(files[i].path) + files[i].len;
		if (len > LW_CAPTURE_MAX_RAW)
			return -E2BIG;
	}
	err = flush_records(w);
	if (err && err != -EFBIG)
		return err;
	p = malloc(len);
	if (!p)
		return -ENOMEM;
	lwc_put32(p, (__u32)strlen(label));
	memcpy(p + 4, label, strlen(label));
	q = p + 4 + strlen(label);
	for (size_t i = 0; i < n; i++) {
		size_t pl = strlen(files[i].path);

		lwc_put32(q, (__u32)pl);
		lwc_put32(q + 4, files[i].mode);
		lwc_put32(q + 8, files[i].len);
		memcpy(q + 12, files[i].path, pl);
		if (files[i].len)
			memcpy(q + 12 + pl, files[i].data, files[i].len);
		q += 12 + pl + files[i].len;
	}
	now = now_ns(CLOCK_MONOTONIC);
	err = emit_chunk(w, LW_CHUNK_NODE, p, len, (__u32)n, now, now);
	free(p);
	return err;
}

static int write_end(struct lw_capture_writer *w)
{
	unsigned char e[LWC_END_LEN];
	__u32 flags = (w->err ? 0 : LW_CAPTURE_END_CLEAN) | (w->capped ? LW_CAPTURE_END_CAPPED : 0);

	lwc_put64(e, w->records);
	lwc_put64(e + 8, w->dropped);
	lwc_put64(e + 16, w->seq);
	lwc_put64(e + 24, w->off);
	lwc_put64(e + 32, w->rt_first);
	lwc_put64(e + 40, w->rt_last);
	lwc_put32(e + 48, flags);
	lwc_put32(e + 52, 0);
	w->capped = false; /* END has its reserve below the cap */
	return emit_chunk(w, LW_CHUNK_END, e, sizeof(e), 0, w->rt_first, w->rt_last);
}

int lw_capture_writer_close(struct lw_capture_writer *w)
{
	bool capped;
	int err;

	if (!w)
		return 0;
	flush_records(w);
	capped = w->capped;
	err = write_end(w);
	w->capped = capped;
	if (!err && fsync(w->fd) && errno != EINVAL && errno != EROFS)
		err = -errno;
	if (close(w->fd) && !err && errno != EINTR)
		err = -errno;
	if (w->err)
		err = w->err;
	free(w->buf);
	free(w->out);
	free(w);
	return err;
}

static int write_file_header(struct lw_capture_writer *w)
{
	unsigned char h[LWC_FILE_HDR] = {0};
	const char *v = w->o.latwhy_version ? w->o.latwhy_version : "";

	memcpy(h + LWC_FH_MAGIC, LWC_FILE_MAGIC, LWC_FILE_MAGIC_LEN);
	lwc_put16(h + LWC_FH_FORMAT, LW_CAPTURE_FORMAT_VERSION);
	lwc_put16(h + LWC_FH_HDRSIZE, LWC_FILE_HDR);
	lwc_put32(h + LWC_FH_ABI, w->o.abi_version);
	lwc_put64(h + LWC_FH_CREATED, now_ns(CLOCK_REALTIME));
	strncpy((char *)h + LWC_FH_VERSION, v, LWC_VERSION_LEN);
	lwc_put32(h + LWC_FH_FLAGS, 0);
	lwc_put32(h + LWC_FH_CRC, (__u32)crc32(0, h, LWC_FH_CRC));
	return write_all(w, h, sizeof(h));
}

struct lw_capture_writer *lw_capture_writer_open_fd(int fd, const struct lw_capture_opts *o)
{
	struct lw_capture_writer *w = calloc(1, sizeof(*w));
	int err;

	if (!w) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	w->fd = fd;
	if (o)
		w->o = *o;
	if (!w->o.max_size)
		w->o.max_size = LW_CAPTURE_DEFAULT_MAX;
	if (!w->o.flush_bytes || w->o.flush_bytes > LW_CAPTURE_MAX_RAW)
		w->o.flush_bytes = LW_CAPTURE_DEFAULT_FLUSH;
	if (w->o.level < 1 || w->o.level > 9)
		w->o.level = 6;
	err = w->o.max_size < LWC_FILE_HDR + LWC_END_RESERVE ? -EFBIG : write_file_header(w);
	if (err) {
		close(fd);
		free(w);
		errno = -err;
		return NULL;
	}
	w->off = LWC_FILE_HDR;
	return w;
}

struct lw_capture_writer *lw_capture_writer_open(const char *path, const struct lw_capture_opts *o)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK;
	struct lw_capture_writer *w;
	struct stat st;
	int fd, err;

	flags |= o && o->overwrite ? O_TRUNC : O_EXCL;
	fd = open(path, flags, 0644);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st))
		err = errno;
	else
		err = S_ISREG(st.st_mode) ? 0 : EINVAL;
	if (err) {
		close(fd);
		errno = err;
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	w = lw_capture_writer_open_fd(fd, o);
	if (!w) {
		err = errno;
		unlink(path);
		errno = err;
	}
	return w;
}

__u64 lw_capture_writer_bytes(const struct lw_capture_writer *w)
{
	return w->off;
}

__u64 lw_capture_writer_records(const struct lw_capture_writer *w)
{
	return w->records;
}

__u64 lw_capture_writer_dropped(const struct lw_capture_writer *w)
{
	return w->dropped;
}
