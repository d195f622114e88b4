// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_capture.c - libFuzzer target for the capture reader: any buffer is
 * read as a capture, through every accessor. Beyond the sanitizers it
 * checks what report relies on: errors and warnings are one line, and the
 * records the iterator hands out are exactly the ones open() counted.
 *
 * An input that does not start with the file magic is a recipe instead:
 * chunks whose payloads the fuzzer chooses, given valid checksums and
 * compressed here, so the payload parsers behind the CRCs get fuzzed too
 * (a mutated real capture almost never gets past its checksums).
 *
 *   make fuzz        (5 minutes)    make fuzz-short   (20 s)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <linux/types.h>
#include <zlib.h>

#include "capture/capture.h"
#include "capture/format.h"

#define check(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "fuzz_capture: %s:%d: %s\n", __FILE__, __LINE__, #c);      \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

static void one_line(const char *s)
{
	check(s && *s && !strchr(s, '\n'));
}

static void walk_facts(const struct lw_capture_reader *r)
{
	for (int k = LW_CHUNK_HOST; k <= LW_CHUNK_OPTIONS; k++) {
		const struct lw_capture_kv *kv;
		size_t n = lw_capture_reader_facts(r, k, &kv);

		for (size_t i = 0; i < n; i++)
			check(lw_capture_reader_fact(r, k, kv[i].key) && kv[i].value);
	}
	for (size_t i = 0; i < lw_capture_reader_nr_nodes(r); i++) {
		const struct lw_capture_file *f;
		size_t n = lw_capture_reader_node_files(r, i, &f);

		check(lw_capture_reader_node_label(r, i));
		for (size_t j = 0; j < n; j++)
			check(f[j].path[0] == '/' && !strstr(f[j].path, "/../") &&
			      strlen(f[j].data) <= f[j].len);
	}
}

/* Recipe: (u8 kind, u8 count, u8 seq delta, u16 length, payload)...; a
 * last odd byte cuts the file short by that many bytes. */
static unsigned char *cook(const uint8_t *d, size_t n, size_t *out_len)
{
	size_t cap = LWC_FILE_HDR + 16 * n + 4096, len = LWC_FILE_HDR, pos = 0;
	unsigned char *b = calloc(1, cap);
	__u32 seq = 0;

	if (!b)
		return NULL;
	memcpy(b, LWC_FILE_MAGIC, LWC_FILE_MAGIC_LEN);
	lwc_put16(b + LWC_FH_FORMAT, LW_CAPTURE_FORMAT_VERSION);
	lwc_put16(b + LWC_FH_HDRSIZE, LWC_FILE_HDR);
	lwc_put32(b + LWC_FH_CRC, (__u32)crc32(0, b, LWC_FH_CRC));
	while (n - pos >= 5) {
		size_t pl = d[pos + 3] | (size_t)d[pos + 4] << 8;
		unsigned char *h = b + len;
		uLongf dl;

		if (pl > n - pos - 5)
			pl = n - pos - 5;
		dl = compressBound(pl);
		if (len + LWC_CHUNK_HDR + dl > cap)
			break;
		compress2(h + LWC_CHUNK_HDR, &dl, d + pos + 5, pl, 1);
		memcpy(h, LWC_CHUNK_MAGIC, 4);
		lwc_put16(h + LWC_CH_KIND, d[pos] % 8);
		lwc_put16(h + LWC_CH_HDRSIZE, LWC_CHUNK_HDR);
		lwc_put32(h + LWC_CH_SEQ, seq += d[pos + 2] % 3);
		lwc_put32(h + LWC_CH_COMP, (__u32)dl);
		lwc_put32(h + LWC_CH_RAW, (__u32)pl);
		lwc_put32(h + LWC_CH_PCRC, (__u32)crc32(0, h + LWC_CHUNK_HDR, dl));
		lwc_put32(h + LWC_CH_COUNT, d[pos + 1]);
		lwc_put32(h + LWC_CH_CRC, (__u32)crc32(0, h, LWC_CH_CRC));
		len += LWC_CHUNK_HDR + dl;
		pos += 5 + pl;
		seq++;
	}
	if (n - pos >= 1 && d[n - 1] < len - LWC_FILE_HDR)
		len -= d[n - 1];
	*out_len = len;
	return b;
}

static void read_one(const uint8_t *data, size_t size)
{
	const struct lw_capture_info *in;
	struct lw_capture_reader *r;
	__u64 records = 0, span = 0;
	const void *rec;
	char err[256];
	size_t len;
	int e;

	r = lw_capture_reader_open_mem(data, size, err, sizeof(err));
	if (!r) {
		one_line(err);
		return;
	}
	in = lw_capture_reader_info(r);
	for (size_t i = 0; i < lw_capture_reader_nr_warnings(r); i++)
		one_line(lw_capture_reader_warning(r, i));
	check(in->chunks == lw_capture_reader_nr_chunks(r));
	for (size_t i = 0; i < in->chunks; i++)
		span += lw_capture_reader_chunk(r, i)->comp_len;
	check(span <= size);
	walk_facts(r);
	while (!(e = lw_capture_reader_next_record(r, &rec, &len))) {
		check(len >= 4 && len <= LW_CAPTURE_MAX_RECORD);
		records++;
	}
	check(e == 1 && records == in->records);
	lw_capture_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *b;
	size_t len;

	if (size >= LWC_FILE_MAGIC_LEN && !memcmp(data, LWC_FILE_MAGIC, LWC_FILE_MAGIC_LEN)) {
		read_one(data, size);
		return 0;
	}
	b = cook(data, size, &len);
	if (b)
		read_one(b, len);
	free(b);
	return 0;
}
