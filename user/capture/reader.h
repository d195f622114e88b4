/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * reader.h - the reader's state, shared by its files (reader.c: open and
 * accessors, scan.c: checking chunks, snapshot.c: node files).
 */
#ifndef LW_CAPTURE_READER_H
#define LW_CAPTURE_READER_H

#include <sys/types.h>

#include "capture/capture.h"

#define LWC_MAX_WARNINGS 64

struct lwc_facts {
	struct lw_capture_kv *kv;
	size_t n, cap;
};

struct lwc_node {
	char *label;
	struct lw_capture_file *files;
	size_t n;
	char *blob; /* label, paths and data, each NUL-terminated */
};

struct lwc_chunk {
	struct lw_capture_chunk pub;
	__u32 hdr_size, pcrc;
};

struct lw_capture_reader {
	int fd;			  /* -1 for a buffer */
	const unsigned char *mem; /* the buffer, NULL for a file */
	struct lw_capture_info info;
	__u64 data_off; /* first chunk: after the file header */
	char *warn[LWC_MAX_WARNINGS];
	size_t nwarn;
	__u64 warn_over;
	char over_msg[64]; /* "N more warnings not shown" */
	struct lwc_chunk *chunks;
	size_t nchunks, chunks_cap;
	struct lwc_facts facts[3]; /* HOST, TARGET, OPTIONS */
	struct lwc_node *nodes;
	size_t nnodes, nodes_cap;
	__u64 kept; /* bytes of facts and node files held */
	/* scan state */
	bool seen;
	__u32 last_seq;
	/* payload buffers */
	unsigned char *comp, *raw;
	size_t comp_cap, raw_cap, raw_len;
	/* record iteration */
	size_t it_chunk, it_pos;
	bool it_loaded;
	/* the record returned, copied out of raw: records sit at 4-byte
	 * offsets there, their structs need 8 */
	__u64 rec[LW_CAPTURE_MAX_RECORD / sizeof(__u64)];
};

void lwc_warn(struct lw_capture_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
ssize_t lwc_read_at(const struct lw_capture_reader *r, __u64 off, void *buf, size_t len);
int lwc_buf_reserve(unsigned char **p, size_t *cap, size_t need);
int lwc_load_payload(struct lw_capture_reader *r, const struct lw_capture_chunk *c, __u32 hdr_size,
		     __u32 pcrc);
/* Walk every chunk after the file header; 0, or -errno with err set when
 * the file cannot be read on (a read error, no memory). */
int lwc_scan(struct lw_capture_reader *r, char *err, size_t errlen);

#endif /* LW_CAPTURE_READER_H */
