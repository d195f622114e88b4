/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * capture.h - latwhy's capture file (.lwy): every record a source produced,
 * with the host, target, options and node facts needed to analyse them on
 * another machine, without root or BPF. docs/capture.md has the format.
 *
 * The writer appends zlib-compressed chunks and never rewrites a byte, so a
 * file cut at any point (a kill -9, a full disk) keeps every whole chunk
 * readable. The reader never trusts a length it has not bounded, reports
 * damage (cuts, bad checksums, missing chunks) as one-line warnings and goes
 * on at the next good chunk.
 */
#ifndef LW_CAPTURE_H
#define LW_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* The format this code writes, and the oldest it reads. */
#define LW_CAPTURE_FORMAT_VERSION 1
#define LW_CAPTURE_FORMAT_OLDEST  1

/* Largest uncompressed chunk payload: bigger ones are refused, by the
 * writer (-E2BIG) and by the reader (damaged chunk). */
#define LW_CAPTURE_MAX_RAW (16u << 20)
/* Largest single record. */
#define LW_CAPTURE_MAX_RECORD	 (64u << 10)
#define LW_CAPTURE_DEFAULT_MAX	 (256ull << 20)
#define LW_CAPTURE_DEFAULT_FLUSH (1u << 20)

enum lw_capture_kind {
	LW_CHUNK_HOST = 1, /* key/value facts about the machine */
	LW_CHUNK_TARGET,   /* key/value facts about the traced process */
	LW_CHUNK_OPTIONS,  /* key/value: the options in force */
	LW_CHUNK_NODE,	   /* a labelled set of sysfs/procfs files */
	LW_CHUNK_RECORDS,  /* (length, bytes) pairs of bpf/latwhy.h records */
	LW_CHUNK_END,	   /* totals, written by a clean close */
};

/* lw_capture_info::end_flags */
enum lw_capture_end_flags {
	LW_CAPTURE_END_CLEAN = 1 << 0,	/* closed with no write error */
	LW_CAPTURE_END_CAPPED = 1 << 1, /* the size cap stopped the capture */
};

struct lw_capture_kv {
	const char *key;
	const char *value;
};

/* A file of a node snapshot. mode is st_mode: S_IFDIR entries have no data
 * and stand for a directory that exists (a CPU without cpufreq, a NIC's
 * device link). Paths are absolute as on the node ("/sys/..."). */
struct lw_capture_file {
	const char *path;
	const char *data;
	__u32 len;
	__u32 mode;
};

/* ---- writer ---- */

struct lw_capture_opts {
	const char *latwhy_version; /* NULL: "" */
	__u32 abi_version;	    /* the record ABI the records follow */
	bool overwrite;		    /* false: O_EXCL (-EEXIST); true: O_TRUNC */
	__u64 max_size;		    /* whole-file cap, END included; 0: default */
	__u32 flush_bytes;	    /* records buffered per chunk; 0: default */
	int level;		    /* zlib level 1..9; 0: 6 */
	/* Replaces write(2), for tests that make the disk fail. */
	ssize_t (*write)(int fd, const void *buf, size_t len, void *ctx);
	void *write_ctx;
};

struct lw_capture_writer;

/* Create path and write the file header. NULL and errno on failure
 * (EEXIST without opts->overwrite; EISDIR or EINVAL for a path that is
 * not a regular file). */
struct lw_capture_writer *lw_capture_writer_open(const char *path, const struct lw_capture_opts *o);
/* The same on an open descriptor, which the writer then owns. */
struct lw_capture_writer *lw_capture_writer_open_fd(int fd, const struct lw_capture_opts *o);

/*
 * Every call below returns 0 or -errno. A write error (-ENOSPC, -EIO) is
 * sticky: the file keeps every chunk written before it (a partly written
 * chunk is cut off again where the filesystem allows), and each later call
 * returns the same error. -EFBIG: the next chunk would pass the size cap;
 * the chunk is dropped, its records counted in the END trailer, and the file
 * stays readable; later appends return -EFBIG, close still writes END.
 */
/* One HOST, TARGET or OPTIONS chunk of n facts; pending records go first. */
int lw_capture_writer_add_facts(struct lw_capture_writer *w, enum lw_capture_kind kind,
				const struct lw_capture_kv *kv, size_t n);
/* One NODE chunk of n files, labelled ("start", "end"). */
int lw_capture_writer_add_files(struct lw_capture_writer *w, const char *label,
				const struct lw_capture_file *files, size_t n);
/* One NODE chunk of the files the node reader (node/node.h) reads under
 * root ("/" on the live node), the target pid's too when pid is not 0. */
int lw_capture_writer_add_node(struct lw_capture_writer *w, const char *label, const char *root,
			       int pid);
/* HOST facts of the node under root: hostname, kernel release, CPU model,
 * online CPUs, NUMA layout, boot id, clock id. */
int lw_capture_writer_add_host(struct lw_capture_writer *w, const char *root);
/* TARGET facts of pid under root: pid, comm, cmdline, threads, allowed
 * CPUs, cgroup. */
int lw_capture_writer_add_target(struct lw_capture_writer *w, const char *root, int pid);
/* Buffer one record (its first __u32 is its type); a full buffer is
 * written as a RECORDS chunk. -E2BIG above LW_CAPTURE_MAX_RECORD. */
int lw_capture_writer_append(struct lw_capture_writer *w, const void *rec, size_t len);
/* Write the buffered records and fdatasync: call at least once a second. */
int lw_capture_writer_flush(struct lw_capture_writer *w);
/* Flush, write END, fsync, close and free (also after an error). 0 when
 * the file is complete, also when the size cap stopped it (END says so);
 * else the first write error, the file then readable up to it. */
int lw_capture_writer_close(struct lw_capture_writer *w);
/* Bytes in the file so far; records written, and dropped (by the cap or
 * a write error). */
__u64 lw_capture_writer_bytes(const struct lw_capture_writer *w);
__u64 lw_capture_writer_records(const struct lw_capture_writer *w);
__u64 lw_capture_writer_dropped(const struct lw_capture_writer *w);

/* ---- reader ---- */

struct lw_capture_info {
	__u32 format_version;
	__u32 abi_version;
	char latwhy_version[33];
	__u64 created_ns; /* CLOCK_REALTIME when the file was created */
	__u64 file_size;
	__u64 chunks;		     /* whole chunks with a good checksum */
	__u64 records;		     /* in those chunks */
	__u64 t_first_ns, t_last_ns; /* CLOCK_MONOTONIC span of the records */
	/* the END trailer */
	bool has_end;
	__u32 end_flags; /* enum lw_capture_end_flags */
	__u64 end_records, end_dropped, end_chunks, end_bytes;
	/* damage */
	bool truncated;	      /* the file ends inside a chunk (bad_records has it) */
	__u64 lost_bytes;     /* after the last whole chunk, when truncated */
	__u64 bad_chunks;     /* skipped: bad checksum, bad content */
	__u64 bad_records;    /* records those chunks held, by their header */
	__u64 lost_ns;	      /* and the time they spanned, by their header */
	__u64 bad_bytes;      /* bytes skipped in the middle of the file */
	__u64 missing_chunks; /* sequence numbers never seen */
};

struct lw_capture_chunk {
	__u32 kind; /* enum lw_capture_kind, or an unknown one */
	__u32 seq;
	__u64 offset; /* of its header */
	__u32 comp_len, raw_len;
	__u32 count; /* records, facts or files */
	__u64 t_first_ns, t_last_ns;
};

struct lw_capture_reader;

/*
 * Read and check the whole file: every chunk's checksum and content. NULL
 * and errno when it cannot be read at all, with a one-line reason in err
 * (without the path): "not a latwhy capture (bad magic)" and "empty file
 * ..." (EINVAL), a newer or older format version naming both (ENOTSUP), a
 * damaged or cut file header (EBADMSG), "a directory, ..." (EISDIR), "a
 * FIFO, ..." (EINVAL), "cannot open: ..." (open's errno). Damage that
 * leaves something readable is no error: see the warnings and the info.
 */
struct lw_capture_reader *lw_capture_reader_open(const char *path, char *err, size_t errlen);
/* The same on a buffer, which must outlive the reader. */
struct lw_capture_reader *lw_capture_reader_open_mem(const void *buf, size_t len, char *err,
						     size_t errlen);
void lw_capture_reader_close(struct lw_capture_reader *r);

const struct lw_capture_info *lw_capture_reader_info(const struct lw_capture_reader *r);
/* One-line warnings, in file order (at most 64 kept, then a count). */
size_t lw_capture_reader_nr_warnings(const struct lw_capture_reader *r);
const char *lw_capture_reader_warning(const struct lw_capture_reader *r, size_t i);
/* The good chunks, in file order. */
size_t lw_capture_reader_nr_chunks(const struct lw_capture_reader *r);
const struct lw_capture_chunk *lw_capture_reader_chunk(const struct lw_capture_reader *r, size_t i);

/* Facts of a kind (all its chunks, in file order); the first match of key,
 * NULL when absent. */
size_t lw_capture_reader_facts(const struct lw_capture_reader *r, enum lw_capture_kind kind,
			       const struct lw_capture_kv **kv);
const char *lw_capture_reader_fact(const struct lw_capture_reader *r, enum lw_capture_kind kind,
				   const char *key);

/* Node snapshots (NODE chunks), in file order. */
size_t lw_capture_reader_nr_nodes(const struct lw_capture_reader *r);
const char *lw_capture_reader_node_label(const struct lw_capture_reader *r, size_t i);
size_t lw_capture_reader_node_files(const struct lw_capture_reader *r, size_t i,
				    const struct lw_capture_file **files);
/* Write snapshot i's files under dir (created if missing; best a fresh
 * one), so node/node.h reads it as the captured node: lw_node_read(n, dir,
 * pid). lw_capture_node_extract() writes the first snapshot. */
int lw_capture_node_extract_at(const struct lw_capture_reader *r, size_t i, const char *dir);
int lw_capture_node_extract(const struct lw_capture_reader *r, const char *dir);

/* The next record: 0 with *rec and *len set (valid until the next call),
 * 1 at the end, -errno when the file can no longer be read. A chunk that
 * turns bad since open is skipped with a warning. */
int lw_capture_reader_next_record(struct lw_capture_reader *r, const void **rec, size_t *len);
void lw_capture_reader_rewind(struct lw_capture_reader *r);

const char *lw_capture_kind_name(__u32 kind);

#endif /* LW_CAPTURE_H */
