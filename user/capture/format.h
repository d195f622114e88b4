/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * format.h - the capture file's on-disk layout, shared by the writer and the
 * reader. All integers are little-endian; docs/capture.md has the tables.
 */
#ifndef LW_CAPTURE_FORMAT_H
#define LW_CAPTURE_FORMAT_H

#include <stdint.h>
#include <string.h>

/* PNG-style: a high byte and CR LF catch transfers that mangle text. */
#define LWC_FILE_MAGIC	   "\x89LWY\r\n\x1a\n"
#define LWC_FILE_MAGIC_LEN 8
#define LWC_FILE_HDR	   64
#define LWC_VERSION_LEN	   32

#define LWC_CHUNK_MAGIC "LWCK"
#define LWC_CHUNK_HDR	48

/* END payload: records, dropped, chunks, bytes, t_first, t_last (u64),
 * flags, reserved (u32). */
#define LWC_END_LEN 56
/* room the writer keeps below the cap for END: header + deflate of 56 bytes */
#define LWC_END_RESERVE 192

/* zlib's worst expansion ratio is about 1032:1; anything claiming more
 * cannot be a real stream, and the bound keeps allocations proportional to
 * the bytes actually in the file. */
#define LWC_MAX_RATIO 1100
/* a chunk's compressed size can exceed its raw size by deflate's framing */
#define LWC_MAX_COMP(raw) ((raw) + (raw) / 1000 + 64)

/* File header offsets */
enum {
	LWC_FH_MAGIC = 0,
	LWC_FH_FORMAT = 8,   /* u16 */
	LWC_FH_HDRSIZE = 10, /* u16 */
	LWC_FH_ABI = 12,     /* u32 */
	LWC_FH_CREATED = 16, /* u64 */
	LWC_FH_VERSION = 24, /* char[32] */
	LWC_FH_FLAGS = 56,   /* u32 */
	LWC_FH_CRC = 60,     /* u32 over bytes 0..59 */
};

/* Chunk header offsets */
enum {
	LWC_CH_MAGIC = 0,
	LWC_CH_KIND = 4,    /* u16 */
	LWC_CH_HDRSIZE = 6, /* u16 */
	LWC_CH_SEQ = 8,	    /* u32 */
	LWC_CH_COMP = 12,   /* u32 */
	LWC_CH_RAW = 16,    /* u32 */
	LWC_CH_PCRC = 20,   /* u32, CRC32 of the compressed payload */
	LWC_CH_TFIRST = 24, /* u64 */
	LWC_CH_TLAST = 32,  /* u64 */
	LWC_CH_COUNT = 40,  /* u32 */
	LWC_CH_CRC = 44,    /* u32 over bytes 0..43 */
};

static inline void lwc_put16(unsigned char *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void lwc_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static inline void lwc_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static inline uint16_t lwc_get16(const unsigned char *p)
{
	return p[0] | (uint16_t)p[1] << 8;
}

static inline uint32_t lwc_get32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t lwc_get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#endif /* LW_CAPTURE_FORMAT_H */
