/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * snapshot.h - the node's switches as the node reader saw them: every file
 * and directory it looked at, with its content, and the symlinks on the way
 * (sysfs is made of them, and a reader's "device/.." means what the link
 * means), so that a capture can carry them and the same reader can run on
 * them anywhere (lw_snapshot_write).
 */
#ifndef LW_SNAPSHOT_H
#define LW_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

/* A file bigger than this is cut there (a huge process's smaps) and marked. */
#define LW_SNAP_FILE_MAX (8u << 20)

enum lw_snap_kind {
	LW_SNAP_FILE,
	LW_SNAP_DIR,  /* a directory that existed (no data) */
	LW_SNAP_LINK, /* a symlink: data is its (relative) target */
};

struct lw_snap_file {
	char *path; /* physical, as on the node below the root: "/sys/..." */
	enum lw_snap_kind kind;
	bool cut;	/* data stops at LW_SNAP_FILE_MAX */
	bool listed;	/* only seen in its directory's listing: no data kept */
	bool synthetic; /* not a file of the node: an ethtool answer, as a file */
	unsigned mode;	/* permission bits of a file; 0: not known (0644) */
	char *data;
	size_t len;
};

struct lw_snapshot {
	struct lw_snap_file *v;
	size_t n, cap;
};

/* Record the paths every node reader builds from now until lw_snapshot_end()
 * (one recording at a time; not thread-safe). */
void lw_snapshot_begin(struct lw_snapshot *s);
/* Stop recording and read what each recorded path holds below root: files
 * with their data, directories with their entries, the symlinks crossed;
 * absent ones are dropped. */
int lw_snapshot_end(struct lw_snapshot *s, const char *root);
/* Add one entry (a capture reader rebuilding a snapshot, which then sets
 * the entry's mode); takes copies. */
int lw_snapshot_add(struct lw_snapshot *s, const char *path, enum lw_snap_kind kind,
		    const void *data, size_t len);
/* Materialise s as a tree below dir (which must exist): a root the node
 * readers can take. Paths with "..", and links that are absolute or climb
 * above dir, are refused (-EINVAL): a capture is untrusted input. */
int lw_snapshot_write(const struct lw_snapshot *s, const char *dir);
void lw_snapshot_free(struct lw_snapshot *s);

#endif /* LW_SNAPSHOT_H */
