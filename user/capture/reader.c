// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * reader.c - capture reader. open() walks the whole file once, checking
 * every chunk (header CRC, payload CRC, decompression, content), keeps the
 * facts and node snapshots and an index of the RECORDS chunks; records are
 * then read chunk by chunk. No length from the file is used before it is
 * bounded: by LW_CAPTURE_MAX_RAW, by the file's size and by zlib's largest
 * ratio, so memory stays proportional to what the file really holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "latwhy.h"
#include "capture/capture.h"
#include "capture/format.h"
#include "capture/reader.h"

const char *lw_capture_kind_name(__u32 kind)
{
	static const char *const names[] = {
		[LW_CHUNK_HOST] = "HOST",	[LW_CHUNK_TARGET] = "TARGET",
		[LW_CHUNK_OPTIONS] = "OPTIONS", [LW_CHUNK_NODE] = "NODE",
		[LW_CHUNK_RECORDS] = "RECORDS", [LW_CHUNK_END] = "END",
	};

	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "unknown";
}

void lwc_warn(struct lw_capture_reader *r, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (r->nwarn >= LWC_MAX_WARNINGS) {
		r->warn_over++;
		snprintf(r->over_msg, sizeof(r->over_msg), "%llu more warnings not shown",
			 (unsigned long long)r->warn_over);
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		r->warn[r->nwarn++] = s;
}

/* Bytes read at off: len, fewer at the end of the file, or -errno. */
ssize_t lwc_read_at(const struct lw_capture_reader *r, __u64 off, void *buf, size_t len)
{
	size_t got = 0;

	if (off >= r->info.file_size)
		return 0;
	if (len > r->info.file_size - off)
		len = (size_t)(r->info.file_size - off);
	if (r->mem) {
		memcpy(buf, r->mem + off, len);
		return (ssize_t)len;
	}
	while (got < len) {
		ssize_t n = pread(r->fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

int lwc_buf_reserve(unsigned char **p, size_t *cap, size_t need)
{
	return grow((void **)p, cap, need ? need : 1, 1);
}

/* Read the chunk's payload, check its CRC and inflate it to exactly raw_len
 * bytes into r->raw. 0, -EBADMSG (bad CRC), -EILSEQ (bad deflate stream),
 * -ENOMEM, or a read error. */
int lwc_load_payload(struct lw_capture_reader *r, const struct lw_capture_chunk *c, __u32 hdr_size,
		     __u32 pcrc)
{
	uLongf dl = c->raw_len;
	uLong sl = c->comp_len;
	ssize_t n;
	int err;

	err = lwc_buf_reserve(&r->comp, &r->comp_cap, c->comp_len);
	if (!err)
		err = lwc_buf_reserve(&r->raw, &r->raw_cap, c->raw_len);
	if (err)
		return err;
	n = lwc_read_at(r, c->offset + hdr_size, r->comp, c->comp_len);
	if (n < 0)
		return (int)n;
	if ((size_t)n != c->comp_len)
		return -EIO; /* the file shrank since it was scanned */
	if ((__u32)crc32(0, r->comp, c->comp_len) != pcrc)
		return -EBADMSG;
	if (uncompress2(r->raw, &dl, r->comp, &sl) != Z_OK || dl != c->raw_len || sl != c->comp_len)
		return -EILSEQ;
	r->raw_len = c->raw_len;
	return 0;
}

/* ---- the file header ---- */

static int header_check(struct lw_capture_reader *r, const unsigned char *h, size_t n, char *err,
			size_t errlen)
{
	__u32 ver, hs;

	if (memcmp(h, LWC_FILE_MAGIC, n < LWC_FILE_MAGIC_LEN ? n : LWC_FILE_MAGIC_LEN)) {
		snprintf(err, errlen, "not a latwhy capture (bad magic)");
		return -EINVAL;
	}
	if (n < LWC_FH_FORMAT + 2) {
		snprintf(err, errlen, "truncated file header (%zu of %d bytes)", n, LWC_FILE_HDR);
		return -EBADMSG;
	}
	ver = lwc_get16(h + LWC_FH_FORMAT);
	if (ver > LW_CAPTURE_FORMAT_VERSION) {
		snprintf(err, errlen,
			 "capture format version %u is newer than this latwhy reads (%u): "
			 "read it with a newer latwhy",
			 ver, LW_CAPTURE_FORMAT_VERSION);
		return -ENOTSUP;
	}
	if (ver < LW_CAPTURE_FORMAT_OLDEST) {
		snprintf(err, errlen,
			 "capture format version %u is older than the oldest this latwhy reads "
			 "(%u): "
			 "no released latwhy wrote it",
			 ver, LW_CAPTURE_FORMAT_OLDEST);
		return -ENOTSUP;
	}
	if (n < LWC_FILE_HDR) {
		snprintf(err, errlen, "truncated file header (%zu of %d bytes)", n, LWC_FILE_HDR);
		return -EBADMSG;
	}
	hs = lwc_get16(h + LWC_FH_HDRSIZE);
	if (hs < LWC_FILE_HDR || (__u32)crc32(0, h, LWC_FH_CRC) != lwc_get32(h + LWC_FH_CRC)) {
		snprintf(err, errlen, "damaged file header (bad checksum)");
		return -EBADMSG;
	}
	r->info.format_version = ver;
	r->info.abi_version = lwc_get32(h + LWC_FH_ABI);
	r->info.created_ns = lwc_get64(h + LWC_FH_CREATED);
	memcpy(r->info.latwhy_version, h + LWC_FH_VERSION, LWC_VERSION_LEN);
	r->info.latwhy_version[LWC_VERSION_LEN] = '\0';
	r->data_off = hs;
	return 0;
}

static int read_header(struct lw_capture_reader *r, char *err, size_t errlen)
{
	unsigned char h[LWC_FILE_HDR];
	ssize_t n = lwc_read_at(r, 0, h, sizeof(h));

	if (n < 0) {
		snprintf(err, errlen, "cannot read: %s", strerror((int)-n));
		return (int)n;
	}
	if (n == 0) {
		snprintf(err, errlen, "empty file (0 bytes): not a latwhy capture");
		return -EINVAL;
	}
	return header_check(r, h, (size_t)n, err, errlen);
}

/* ---- open, close ---- */

static struct lw_capture_reader *reader_finish(struct lw_capture_reader *r, char *err,
					       size_t errlen)
{
	int e = read_header(r, err, errlen);

	if (!e)
		e = lwc_scan(r, err, errlen);
	if (e) {
		lw_capture_reader_close(r);
		errno = -e;
		return NULL;
	}
	return r;
}

struct lw_capture_reader *lw_capture_reader_open_mem(const void *buf, size_t len, char *err,
						     size_t errlen)
{
	struct lw_capture_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	r->fd = -1;
	r->mem = buf ? buf : (const void *)"";
	r->info.file_size = len;
	return reader_finish(r, err, errlen);
}

static int open_check(int fd, __u64 *size, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "cannot stat: %s", strerror(errno));
		return -errno;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "a directory, not a capture file");
		return -EISDIR;
	}
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode)) {
		snprintf(err, errlen, "a %s, not a capture file (captures are regular files)",
			 S_ISFIFO(st.st_mode)	? "FIFO"
			 : S_ISSOCK(st.st_mode) ? "socket"
						: "character device");
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		return -EINVAL;
	}
	*size = (__u64)st.st_size;
	return 0;
}

struct lw_capture_reader *lw_capture_reader_open(const char *path, char *err, size_t errlen)
{
	struct lw_capture_reader *r;
	__u64 size = 0;
	int fd, e;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "cannot open: %s", strerror(e));
		errno = e;
		return NULL;
	}
	e = open_check(fd, &size, err, errlen);
	r = e ? NULL : calloc(1, sizeof(*r));
	if (!r) {
		if (!e) {
			snprintf(err, errlen, "out of memory");
			e = -ENOMEM;
		}
		close(fd);
		errno = -e;
		return NULL;
	}
	r->fd = fd;
	r->info.file_size = size;
	return reader_finish(r, err, errlen);
}

static void facts_free(struct lwc_facts *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free((char *)f->kv[i].key);
		free((char *)f->kv[i].value);
	}
	free(f->kv);
}

void lw_capture_reader_close(struct lw_capture_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; i < r->nwarn; i++)
		free(r->warn[i]);
	for (size_t i = 0; i < 3; i++)
		facts_free(&r->facts[i]);
	for (size_t i = 0; i < r->nnodes; i++) {
		free(r->nodes[i].files);
		free(r->nodes[i].blob);
	}
	free(r->nodes);
	free(r->chunks);
	free(r->comp);
	free(r->raw);
	free(r);
}

/* ---- accessors ---- */

const struct lw_capture_info *lw_capture_reader_info(const struct lw_capture_reader *r)
{
	return &r->info;
}

size_t lw_capture_reader_nr_warnings(const struct lw_capture_reader *r)
{
	return r->nwarn + (r->warn_over ? 1 : 0);
}

const char *lw_capture_reader_warning(const struct lw_capture_reader *r, size_t i)
{
	if (i < r->nwarn)
		return r->warn[i];
	if (i == r->nwarn && r->warn_over)
		return r->over_msg;
	return NULL;
}

size_t lw_capture_reader_nr_chunks(const struct lw_capture_reader *r)
{
	return r->nchunks;
}

const struct lw_capture_chunk *lw_capture_reader_chunk(const struct lw_capture_reader *r, size_t i)
{
	return i < r->nchunks ? &r->chunks[i].pub : NULL;
}

static const struct lwc_facts *facts_of(const struct lw_capture_reader *r,
					enum lw_capture_kind kind)
{
	if (kind < LW_CHUNK_HOST || kind > LW_CHUNK_OPTIONS)
		return NULL;
	return &r->facts[kind - LW_CHUNK_HOST];
}

size_t lw_capture_reader_facts(const struct lw_capture_reader *r, enum lw_capture_kind kind,
			       const struct lw_capture_kv **kv)
{
	const struct lwc_facts *f = facts_of(r, kind);

	*kv = f ? f->kv : NULL;
	return f ? f->n : 0;
}

const char *lw_capture_reader_fact(const struct lw_capture_reader *r, enum lw_capture_kind kind,
				   const char *key)
{
	const struct lwc_facts *f = facts_of(r, kind);

	for (size_t i = 0; f && i < f->n; i++)
		if (!strcmp(f->kv[i].key, key))
			return f->kv[i].value;
	return NULL;
}

size_t lw_capture_reader_nr_nodes(const struct lw_capture_reader *r)
{
	return r->nnodes;
}

const char *lw_capture_reader_node_label(const struct lw_capture_reader *r, size_t i)
{
	return i < r->nnodes ? r->nodes[i].label : NULL;
}

size_t lw_capture_reader_node_files(const struct lw_capture_reader *r, size_t i,
				    const struct lw_capture_file **files)
{
	*files = i < r->nnodes ? r->nodes[i].files : NULL;
	return i < r->nnodes ? r->nodes[i].n : 0;
}

/* ---- records ---- */

void lw_capture_reader_rewind(struct lw_capture_reader *r)
{
	r->it_chunk = 0;
	r->it_loaded = false;
	r->it_pos = 0;
}

/* Load the next RECORDS chunk at or after it_chunk: 0, 1 at the end. */
static int next_chunk(struct lw_capture_reader *r)
{
	for (; r->it_chunk < r->nchunks; r->it_chunk++) {
		const struct lwc_chunk *k = &r->chunks[r->it_chunk];
		const struct lw_capture_chunk *c = &k->pub;
		int err;

		if (c->kind != LW_CHUNK_RECORDS)
			continue;
		err = lwc_load_payload(r, c, k->hdr_size, k->pcrc);
		if (err == -ENOMEM || (err && err != -EBADMSG && err != -EILSEQ && err != -EIO))
			return err;
		if (err) {
			lwc_warn(r,
				 "chunk %u (RECORDS) at offset %llu: changed since it was opened, "
				 "skipped",
				 c->seq, (unsigned long long)c->offset);
			continue;
		}
		r->it_loaded = true;
		r->it_pos = 0;
		return 0;
	}
	return 1;
}

/*
 * Older records (bpf/latwhy.h) widened in place, in r->rec, to today's:
 *  - ABI 1 had no LW_B_QUOTA bucket (ns[] one bucket shorter): quota 0,
 *    without LW_REQ_QUOTA_KNOWN, and META says nothing measured it
 *    (LW_META_NO_QUOTA);
 *  - ABI 1 and 2 had no memory buckets (LW_B_FAULT .. LW_B_FAULT_WAIT,
 *    after quota) and no fault counts at the record's end: 0, without
 *    LW_REQ_MEMORY_KNOWN, and META says LW_META_NO_MEMORY;
 *  - ABI 3 had no LW_B_FAULT_ENTRY and LW_B_STEAL (the last buckets) and
 *    no lw_meta_rec::fault_entry_ns: 0, without their flags, and META
 *    says LW_META_NO_STEAL; LW_REC_MEMORY had no node part (lw_mem_node):
 *    0, "not read". Told by the record's length (4 added them, and
 *    LW_REC_TIER).
 * The other record types did not change (LW_REC_MEMORY is new in 3,
 * LW_REC_TIER in 4: a capture without it says nothing of tiers).
 * Returns the record's length now.
 */
static size_t lwc_upgrade(struct lw_capture_reader *r, size_t len)
{
	enum {
		QUOTA_OFF = offsetof(struct lw_request, ns[LW_B_QUOTA]),
		MEM_OFF = offsetof(struct lw_request, ns[LW_B_FAULT]),
		MEM_LEN = (LW_B_FAULT_ENTRY - LW_B_FAULT) * sizeof(__u64),
		NEW_OFF = offsetof(struct lw_request, ns[LW_B_FAULT_ENTRY]),
		NEW_LEN = (LW_B_MAX - LW_B_FAULT_ENTRY) * sizeof(__u64),
		FAULTS_LEN = sizeof(struct lw_request) - offsetof(struct lw_request, faults_min),
		V3_LEN = sizeof(struct lw_request) - NEW_LEN,
		V2_LEN = V3_LEN - MEM_LEN - FAULTS_LEN,
		V1_LEN = V2_LEN - sizeof(__u64),
		META_V3_LEN = offsetof(struct lw_meta_rec, fault_entry_ns),
		MEM_V3_LEN = offsetof(struct lw_mem_rec, node),
	};
	unsigned char *p = (unsigned char *)r->rec;
	__u32 abi = r->info.abi_version;

	_Static_assert(LW_B_QUOTA + 1 == LW_B_FAULT && LW_B_FAULT_WAIT + 1 == LW_B_FAULT_ENTRY,
		       "ABI 2 added quota, ABI 3 four buckets after it");
	_Static_assert(LW_B_STEAL == LW_B_MAX - 1, "fault_entry and steal came after, the last");
	_Static_assert(FAULTS_LEN == 2 * sizeof(__u32), "ABI 3 added the fault counts, last");
	_Static_assert(sizeof(struct lw_meta_rec) == META_V3_LEN + 2 * sizeof(__u32),
		       "fault_entry_ns and its pad end the META record");
	_Static_assert(sizeof(struct lw_mem_rec) == MEM_V3_LEN + sizeof(struct lw_mem_node),
		       "the node part ends the MEMORY record");
	if (abi < 1 || abi > 3)
		return len;
	if (lwc_get32(p) == LW_REC_META &&
	    (len == META_V3_LEN || len == sizeof(struct lw_meta_rec))) {
		struct lw_meta_rec *m = (struct lw_meta_rec *)r->rec;

		if (len == META_V3_LEN) {
			memset(p + META_V3_LEN, 0, sizeof(*m) - META_V3_LEN);
			m->flags |= LW_META_NO_STEAL; /* no steal clock was read */
		}
		if (abi == 1)
			m->flags |= LW_META_NO_QUOTA; /* nothing told throttling apart */
		if (abi <= 2)
			m->flags |= LW_META_NO_MEMORY; /* nor page faults and reclaim */
		return sizeof(*m);
	}
	if (lwc_get32(p) == LW_REC_MEMORY && abi == 3 && len == MEM_V3_LEN) {
		memset(p + MEM_V3_LEN, 0, sizeof(struct lw_mem_rec) - MEM_V3_LEN);
		return sizeof(struct lw_mem_rec);
	}
	if (lwc_get32(p) != LW_REC_REQUEST)
		return len;
	if (abi == 1 && len == V1_LEN) {
		memmove(p + QUOTA_OFF + sizeof(__u64), p + QUOTA_OFF, V1_LEN - QUOTA_OFF);
		memset(p + QUOTA_OFF, 0, sizeof(__u64));
		len = V2_LEN;
	}
	if (abi <= 2 && len == V2_LEN) {
		memmove(p + MEM_OFF + MEM_LEN, p + MEM_OFF, V2_LEN - MEM_OFF);
		memset(p + MEM_OFF, 0, MEM_LEN);
		memset(p + V2_LEN + MEM_LEN, 0, FAULTS_LEN);
		len = V3_LEN;
	}
	if (len == V3_LEN) {
		memmove(p + NEW_OFF + NEW_LEN, p + NEW_OFF, V3_LEN - NEW_OFF);
		memset(p + NEW_OFF, 0, NEW_LEN);
		len = sizeof(struct lw_request);
	}
	return len;
}

int lw_capture_reader_next_record(struct lw_capture_reader *r, const void **rec, size_t *len)
{
	for (;;) {
		__u32 l;
		int err;

		if (r->it_loaded && r->it_pos + 4 <= r->raw_len) {
			l = lwc_get32(r->raw + r->it_pos);
			if (l >= 4 && l <= LW_CAPTURE_MAX_RECORD &&
			    l <= r->raw_len - r->it_pos - 4) {
				memcpy(r->rec, r->raw + r->it_pos + 4, l);
				*rec = r->rec;
				*len = lwc_upgrade(r, l);
				r->it_pos += 4 + l;
				return 0;
			}
		}
		if (r->it_loaded) {
			r->it_loaded = false;
			r->it_chunk++;
		}
		err = next_chunk(r);
		if (err)
			return err;
	}
}
