// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * scan.c - the reader's one pass over a capture: each chunk's header and
 * payload checked, its content parsed, damage turned into warnings. A bad
 * payload behind a good header is skipped by its length; a bad header is
 * skipped by searching for the next chunk magic whose header checksum holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/capture.h"
#include "capture/format.h"
#include "capture/reader.h"

#define MAX_CHUNKS (1u << 20)
#define MAX_KEPT   (64ull << 20)
#define MAX_HDR	   1024
#define SCAN_BLOCK 65536
/* data searched for a chunk header after damage: two of the largest chunks */
#define MAX_SCAN     (2ull * (LWC_MAX_COMP(LW_CAPTURE_MAX_RAW) + MAX_HDR))
#define MAX_PATH_LEN 4096

static bool header_ok(const unsigned char *h)
{
	return !memcmp(h, LWC_CHUNK_MAGIC, 4) && lwc_get16(h + LWC_CH_HDRSIZE) >= LWC_CHUNK_HDR &&
	       (__u32)crc32(0, h, LWC_CH_CRC) == lwc_get32(h + LWC_CH_CRC);
}

/* Lengths no writer produces: refused before anything is allocated. */
static bool lengths_ok(const struct lwc_chunk *k)
{
	const struct lw_capture_chunk *c = &k->pub;

	return k->hdr_size <= MAX_HDR && c->raw_len <= LW_CAPTURE_MAX_RAW &&
	       c->comp_len <= LWC_MAX_COMP(LW_CAPTURE_MAX_RAW) &&
	       c->raw_len <= (__u64)c->comp_len * LWC_MAX_RATIO + 64;
}

static void header_parse(struct lwc_chunk *k, const unsigned char *h, __u64 off)
{
	struct lw_capture_chunk *c = &k->pub;

	c->kind = lwc_get16(h + LWC_CH_KIND);
	c->seq = lwc_get32(h + LWC_CH_SEQ);
	c->offset = off;
	c->comp_len = lwc_get32(h + LWC_CH_COMP);
	c->raw_len = lwc_get32(h + LWC_CH_RAW);
	c->t_first_ns = lwc_get64(h + LWC_CH_TFIRST);
	c->t_last_ns = lwc_get64(h + LWC_CH_TLAST);
	c->count = lwc_get32(h + LWC_CH_COUNT);
	k->hdr_size = lwc_get16(h + LWC_CH_HDRSIZE);
	k->pcrc = lwc_get32(h + LWC_CH_PCRC);
}

/* Where data resumes at or after pos: the holes of a sparse file read as
 * zeros, which hold no chunk magic, so they are skipped unread. */
static __u64 next_data(const struct lw_capture_reader *r, __u64 pos)
{
	off_t d;

	if (r->fd < 0)
		return pos;
	d = lseek(r->fd, (off_t)pos, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? r->info.file_size : pos;
	return (__u64)d > pos ? (__u64)d : pos;
}

/*
 * The next offset at or after from holding a good chunk header, or a whole
 * chunk magic too close to the end for a whole header; the file size when there
 * is none. A damaged header hides at most one chunk, so the next one starts
 * within a chunk's largest size: past MAX_SCAN bytes of data the search
 * gives up (*gave_up) rather than read a huge file of junk to its end.
 * -errno on a read error.
 */
static long long find_header(struct lw_capture_reader *r, __u64 from, bool *gave_up)
{
	__u64 size = r->info.file_size, pos, scanned = 0;
	unsigned char *b = malloc(SCAN_BLOCK + LWC_CHUNK_HDR);
	long long found = (long long)size;

	if (!b)
		return -ENOMEM;
	for (pos = next_data(r, from); pos < size; pos = next_data(r, pos + SCAN_BLOCK)) {
		ssize_t n = lwc_read_at(r, pos, b, SCAN_BLOCK + LWC_CHUNK_HDR);
		size_t lim = n > SCAN_BLOCK ? SCAN_BLOCK : (size_t)(n > 0 ? n : 0);
		unsigned char *p = b;

		if (n < 0 || (scanned += lim) > MAX_SCAN) {
			*gave_up = n >= 0;
			found = n < 0 ? n : found;
			break;
		}
		while ((p = memchr(p, 'L', lim - (size_t)(p - b)))) {
			size_t i = (size_t)(p - b);

			/* a whole magic the file ends behind is a cut header */
			if (i + LWC_CHUNK_HDR <= (size_t)n
				    ? header_ok(p)
				    : (size_t)n - i >= 4 && !memcmp(p, LWC_CHUNK_MAGIC, 4)) {
				found = (long long)(pos + i);
				goto out;
			}
			p++;
		}
	}
out:
	free(b);
	return found;
}

static void seq_check(struct lw_capture_reader *r, __u32 seq)
{
	__u64 want = r->seen ? (__u64)r->last_seq + 1 : 0;

	if (seq > want) {
		r->info.missing_chunks += seq - want;
		lwc_warn(r, "%llu chunk(s) missing before chunk %u (sequence %llu..%u)",
			 (unsigned long long)(seq - want), seq, (unsigned long long)want, seq - 1);
	} else if (seq < want) {
		lwc_warn(r, "chunk %u comes after chunk %u: out of order", seq, r->last_seq);
	}
	r->seen = true;
	if (seq >= want)
		r->last_seq = seq;
}

static bool keep_ok(struct lw_capture_reader *r, const struct lw_capture_chunk *c)
{
	if (r->kept + c->raw_len <= MAX_KEPT) {
		r->kept += c->raw_len;
		return true;
	}
	lwc_warn(r, "chunk %u (%s): over %llu MiB of facts in the file, ignored", c->seq,
		 lw_capture_kind_name(c->kind), MAX_KEPT >> 20);
	return false;
}

static int parse_facts(struct lw_capture_reader *r, const struct lw_capture_chunk *c)
{
	struct lwc_facts *f = &r->facts[c->kind - LW_CHUNK_HOST];
	const unsigned char *p = r->raw;
	size_t pos = 0, n = 0, len = r->raw_len;

	while (pos < len) {
		__u32 kl, vl;

		if (len - pos < 8)
			return -EBADMSG;
		kl = lwc_get32(p + pos);
		vl = lwc_get32(p + pos + 4);
		if (kl > len - pos - 8 || vl > len - pos - 8 - kl)
			return -EBADMSG;
		pos += 8 + (size_t)kl + vl;
		n++;
	}
	if (n != c->count)
		return -EBADMSG;
	if (!keep_ok(r, c))
		return 0;
	if (f->n + n > f->cap) {
		struct lw_capture_kv *kv = realloc(f->kv, (f->n + n) * sizeof(*kv));

		if (!kv)
			return -ENOMEM;
		f->kv = kv;
		f->cap = f->n + n;
	}
	for (pos = 0; pos < len; f->n++) {
		__u32 kl = lwc_get32(p + pos), vl = lwc_get32(p + pos + 4);
		char *k = strndup((const char *)p + pos + 8, kl);
		char *v = strndup((const char *)p + pos + 8 + kl, vl);

		if (!k || !v) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		f->kv[f->n].key = k;
		f->kv[f->n].value = v;
		pos += 8 + (size_t)kl + vl;
	}
	return 0;
}

/* Absolute, no empty, "." or ".." component, no NUL: extraction cannot
 * leave its directory. */
static bool path_safe(const unsigned char *p, size_t len)
{
	size_t i = 0;

	if (len < 2 || len > MAX_PATH_LEN || p[0] != '/' || memchr(p, '\0', len))
		return false;
	while (i < len) {
		size_t s = ++i;

		while (i < len && p[i] != '/')
			i++;
		if (i == s || (i - s == 1 && p[s] == '.') ||
		    (i - s == 2 && p[s] == '.' && p[s + 1] == '.'))
			return false;
	}
	return true;
}

/* Validate a NODE payload; the number of files, or -EBADMSG. */
static long node_validate(const unsigned char *p, size_t len, size_t *label_len)
{
	size_t pos, n = 0;

	if (len < 4 || lwc_get32(p) > len - 4)
		return -EBADMSG;
	*label_len = lwc_get32(p);
	for (pos = 4 + *label_len; pos < len; n++) {
		__u32 pl, mode, dl;

		if (len - pos < 12)
			return -EBADMSG;
		pl = lwc_get32(p + pos);
		mode = lwc_get32(p + pos + 4);
		dl = lwc_get32(p + pos + 8);
		if (pl > len - pos - 12 || dl > len - pos - 12 - pl ||
		    !path_safe(p + pos + 12, pl) ||
		    (!S_ISREG(mode) && !S_ISDIR(mode) && !S_ISLNK(mode)) || (S_ISDIR(mode) && dl) ||
		    (S_ISLNK(mode) && (!dl || memchr(p + pos + 12 + pl, '\0', dl))))
			return -EBADMSG;
		pos += 12 + (size_t)pl + dl;
	}
	return (long)n;
}

static char *blob_put(char **q, const unsigned char *s, size_t len)
{
	char *start = *q;

	memcpy(start, s, len);
	start[len] = '\0';
	*q += len + 1;
	return start;
}

static int parse_node(struct lw_capture_reader *r, const struct lw_capture_chunk *c)
{
	const unsigned char *p = r->raw;
	size_t ll, pos, len = r->raw_len;
	long n = node_validate(p, len, &ll);
	struct lwc_node *nd;
	char *q;

	if (n < 0 || (size_t)n != c->count)
		return -EBADMSG;
	if (!keep_ok(r, c))
		return 0;
	if (r->nnodes == r->nodes_cap) {
		size_t cap = r->nodes_cap ? r->nodes_cap * 2 : 4;
		struct lwc_node *v = realloc(r->nodes, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->nodes = v;
		r->nodes_cap = cap;
	}
	nd = &r->nodes[r->nnodes];
	memset(nd, 0, sizeof(*nd));
	nd->blob = malloc(len + 2 * (size_t)n + 1);
	nd->files = calloc(n ? (size_t)n : 1, sizeof(*nd->files));
	if (!nd->blob || !nd->files) {
		free(nd->blob);
		free(nd->files);
		return -ENOMEM;
	}
	q = nd->blob;
	nd->label = blob_put(&q, p + 4, ll);
	for (pos = 4 + ll; pos < len; nd->n++) {
		struct lw_capture_file *f = &nd->files[nd->n];
		__u32 pl = lwc_get32(p + pos), dl = lwc_get32(p + pos + 8);

		f->mode = lwc_get32(p + pos + 4);
		f->len = dl;
		f->path = blob_put(&q, p + pos + 12, pl);
		f->data = blob_put(&q, p + pos + 12 + pl, dl);
		pos += 12 + (size_t)pl + dl;
	}
	r->nnodes++;
	return 0;
}

static int parse_records(struct lw_capture_reader *r, const struct lw_capture_chunk *c)
{
	size_t pos = 0, n = 0, len = r->raw_len;

	while (pos < len) {
		__u32 l;

		if (len - pos < 4)
			return -EBADMSG;
		l = lwc_get32(r->raw + pos);
		if (l < 4 || l > LW_CAPTURE_MAX_RECORD || l > len - pos - 4)
			return -EBADMSG;
		pos += 4 + (size_t)l;
		n++;
	}
	if (n != c->count)
		return -EBADMSG;
	r->info.records += n;
	if (c->t_first_ns && (!r->info.t_first_ns || c->t_first_ns < r->info.t_first_ns))
		r->info.t_first_ns = c->t_first_ns;
	if (c->t_last_ns > r->info.t_last_ns)
		r->info.t_last_ns = c->t_last_ns;
	return 0;
}

static int parse_end(struct lw_capture_reader *r, const struct lw_capture_chunk *c)
{
	const unsigned char *e = r->raw;
	struct lw_capture_info *i = &r->info;

	if (r->raw_len < LWC_END_LEN)
		return -EBADMSG;
	if (i->has_end)
		lwc_warn(r, "chunk %u: a second END trailer", c->seq);
	i->has_end = true;
	i->end_records = lwc_get64(e);
	i->end_dropped = lwc_get64(e + 8);
	i->end_chunks = lwc_get64(e + 16);
	i->end_bytes = lwc_get64(e + 24);
	i->end_flags = lwc_get32(e + 48);
	return 0;
}

static int parse_chunk(struct lw_capture_reader *r, const struct lw_capture_chunk *c)
{
	if (r->info.has_end)
		lwc_warn(r, "chunk %u (%s) at offset %llu follows the END trailer", c->seq,
			 lw_capture_kind_name(c->kind), (unsigned long long)c->offset);
	switch (c->kind) {
	case LW_CHUNK_HOST:
	case LW_CHUNK_TARGET:
	case LW_CHUNK_OPTIONS:
		return parse_facts(r, c);
	case LW_CHUNK_NODE:
		return parse_node(r, c);
	case LW_CHUNK_RECORDS:
		return parse_records(r, c);
	case LW_CHUNK_END:
		return parse_end(r, c);
	}
	lwc_warn(r, "chunk %u at offset %llu: unknown kind %u (a newer latwhy wrote it), skipped",
		 c->seq, (unsigned long long)c->offset, c->kind);
	return 0;
}

static int chunk_add(struct lw_capture_reader *r, const struct lwc_chunk *k)
{
	if (r->nchunks == r->chunks_cap) {
		size_t cap = r->chunks_cap ? r->chunks_cap * 2 : 64;
		struct lwc_chunk *v = realloc(r->chunks, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->chunks = v;
		r->chunks_cap = cap;
	}
	r->chunks[r->nchunks++] = *k;
	r->info.chunks++;
	return 0;
}

/* What a lost chunk held, by its header: ", 2000 records over 0.981 s"
 * for RECORDS, counted in the info; "" for the rest. */
static const char *lost_what(struct lw_capture_reader *r, const struct lw_capture_chunk *c,
			     char *buf, size_t len)
{
	__u64 span = c->t_last_ns > c->t_first_ns ? c->t_last_ns - c->t_first_ns : 0;

	buf[0] = '\0';
	if (c->kind != LW_CHUNK_RECORDS)
		return buf;
	r->info.bad_records += c->count;
	r->info.lost_ns += span;
	snprintf(buf, len, ", %u records over %.3f s", c->count, span / 1e9);
	return buf;
}

static void warn_truncated(struct lw_capture_reader *r, const struct lwc_chunk *k, __u64 off)
{
	__u64 lost = r->info.file_size - off;
	char what[64];

	r->info.truncated = true;
	r->info.lost_bytes = lost;
	if (!k) {
		lwc_warn(r,
			 "file truncated at byte %llu, inside a chunk header: %llu bytes lost; "
			 "the END trailer is missing",
			 (unsigned long long)r->info.file_size, (unsigned long long)lost);
		return;
	}
	lwc_warn(r,
		 "file truncated at byte %llu, inside chunk %u (%s%s) at offset %llu: "
		 "%llu bytes lost; the END trailer is missing",
		 (unsigned long long)r->info.file_size, k->pub.seq,
		 lw_capture_kind_name(k->pub.kind), lost_what(r, &k->pub, what, sizeof(what)),
		 (unsigned long long)off, (unsigned long long)lost);
}

static void warn_bad(struct lw_capture_reader *r, const struct lwc_chunk *k, const char *why)
{
	const struct lw_capture_chunk *c = &k->pub;
	char what[64];

	r->info.bad_chunks++;
	lwc_warn(r, "chunk %u (%s%s) at offset %llu: %s, skipped", c->seq,
		 lw_capture_kind_name(c->kind), lost_what(r, c, what, sizeof(what)),
		 (unsigned long long)c->offset, why);
}

/* Skip damaged bytes from off to the next good chunk header. */
static int resync(struct lw_capture_reader *r, __u64 *off, const char *why)
{
	bool gave_up = false;
	long long next = find_header(r, *off + 1, &gave_up);

	if (next < 0)
		return (int)next;
	r->info.bad_bytes += (__u64)next - *off;
	if (gave_up)
		lwc_warn(r,
			 "bytes %llu..%llu (%llu) damaged: %s; no chunk in the %llu MiB after "
			 "them, the rest of the file is not read",
			 (unsigned long long)*off, (unsigned long long)next - 1,
			 (unsigned long long)next - *off, why, MAX_SCAN >> 20);
	else
		lwc_warn(r, "bytes %llu..%llu (%llu) damaged: %s; %s", (unsigned long long)*off,
			 (unsigned long long)next - 1, (unsigned long long)next - *off, why,
			 (__u64)next < r->info.file_size ? "reading on at the next chunk"
							 : "no chunk after them");
	*off = (__u64)next;
	return 0;
}

/* One chunk at *off: 0 and *off moved on, 1 at a cut end, or -errno. */
static int scan_one(struct lw_capture_reader *r, __u64 *off)
{
	unsigned char h[LWC_CHUNK_HDR];
	ssize_t n = lwc_read_at(r, *off, h, sizeof(h));
	struct lwc_chunk k;
	__u64 end;
	int err;

	if (n < 0)
		return (int)n;
	if ((size_t)n < sizeof(h)) {
		if (memcmp(h, LWC_CHUNK_MAGIC, n < 4 ? (size_t)n : 4))
			return resync(r, off, "not a chunk header");
		warn_truncated(r, NULL, *off);
		return 1;
	}
	if (!header_ok(h))
		return resync(r, off, "bad chunk header");
	header_parse(&k, h, *off);
	if (!lengths_ok(&k))
		return resync(r, off, "chunk header with impossible lengths");
	end = *off + k.hdr_size + k.pub.comp_len;
	if (end > r->info.file_size) {
		warn_truncated(r, &k, *off);
		return 1;
	}
	seq_check(r, k.pub.seq);
	*off = end;
	err = lwc_load_payload(r, &k.pub, k.hdr_size, k.pcrc);
	if (err == -EBADMSG || err == -EILSEQ) {
		warn_bad(r, &k, err == -EBADMSG ? "bad checksum" : "does not decompress");
		return 0;
	}
	if (!err)
		err = parse_chunk(r, &k.pub);
	if (err == -EBADMSG) {
		warn_bad(r, &k, "malformed content");
		return 0;
	}
	return err ?: chunk_add(r, &k);
}

static void scan_finish(struct lw_capture_reader *r)
{
	struct lw_capture_info *i = &r->info;

	if (!i->has_end && !i->truncated)
		lwc_warn(r, "the END trailer is missing: the recorder did not close the file "
			    "(killed, or its host went down)");
	if (!i->has_end)
		return;
	if (i->end_records > i->records)
		lwc_warn(r, "%llu of the %llu records written are lost",
			 (unsigned long long)(i->end_records - i->records),
			 (unsigned long long)i->end_records);
	if (!(i->end_flags & LW_CAPTURE_END_CLEAN))
		lwc_warn(r, "the recorder met a write error before it closed the file");
	if (i->end_flags & LW_CAPTURE_END_CAPPED)
		lwc_warn(r, "the size cap stopped the capture: %llu records were not written",
			 (unsigned long long)i->end_dropped);
}

int lwc_scan(struct lw_capture_reader *r, char *err, size_t errlen)
{
	__u64 off = r->data_off;
	int e = 0;

	while (off < r->info.file_size) {
		if (r->nchunks >= MAX_CHUNKS) {
			lwc_warn(r, "more than %u chunks: the rest of the file is not read",
				 MAX_CHUNKS);
			break;
		}
		e = scan_one(r, &off);
		if (e)
			break;
	}
	if (e < 0) {
		snprintf(err, errlen, "%s", e == -ENOMEM ? "out of memory" : strerror(-e));
		return e;
	}
	scan_finish(r);
	return 0;
}
