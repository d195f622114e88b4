// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * snapshot.c - a node's switches in a NODE chunk: node/snapshot.c records
 * exactly what the node reader read (files, directories, the symlinks on
 * the way, ethtool's answers), and writes it back as a root the same reader
 * takes. This file only converts between its entries and the chunk's files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "capture/capture.h"
#include "capture/reader.h"
#include "node/node.h"
#include "node/snapshot.h"

static __u32 file_mode(const struct lw_snap_file *f)
{
	switch (f->kind) {
	case LW_SNAP_DIR:
		return S_IFDIR | 0755;
	case LW_SNAP_LINK:
		return S_IFLNK | 0777;
	case LW_SNAP_FILE:
		break;
	}
	return S_IFREG | (f->mode ? f->mode & 0777 : 0644);
}

int lw_capture_writer_add_node(struct lw_capture_writer *w, const char *label, const char *root,
			       int pid)
{
	struct lw_capture_file *files = NULL;
	struct lw_snapshot s;
	struct lw_node n;
	int err;

	lw_snapshot_begin(&s);
	err = lw_node_read(&n, root, pid);
	lw_node_free(&n);
	if (err == -ESRCH && pid) /* it exited: the node-wide facts stand */
		err = 0;
	if (!err)
		err = lw_snapshot_end(&s, root);
	else
		lw_snapshot_end(&s, root);
	if (!err && s.n && !(files = calloc(s.n, sizeof(*files))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < s.n; i++)
		files[i] = (struct lw_capture_file){.path = s.v[i].path,
						    .data = s.v[i].data,
						    .len = (__u32)s.v[i].len,
						    .mode = file_mode(&s.v[i])};
	if (!err)
		err = lw_capture_writer_add_files(w, label, files, s.n);
	free(files);
	lw_snapshot_free(&s);
	return err;
}

static enum lw_snap_kind file_kind(__u32 mode)
{
	if (S_ISDIR(mode))
		return LW_SNAP_DIR;
	return S_ISLNK(mode) ? LW_SNAP_LINK : LW_SNAP_FILE;
}

int lw_capture_node_extract_at(const struct lw_capture_reader *r, size_t i, const char *dir)
{
	struct lw_snapshot s = {};
	int err = 0;

	if (i >= r->nnodes)
		return -ENOENT;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	for (size_t k = 0; !err && k < r->nodes[i].n; k++) {
		const struct lw_capture_file *f = &r->nodes[i].files[k];

		err = lw_snapshot_add(&s, f->path, file_kind(f->mode), f->data, f->len);
		if (!err)
			s.v[s.n - 1].mode = f->mode & 0777;
	}
	if (!err)
		err = lw_snapshot_write(&s, dir);
	lw_snapshot_free(&s);
	return err;
}

int lw_capture_node_extract(const struct lw_capture_reader *r, const char *dir)
{
	return lw_capture_node_extract_at(r, 0, dir);
}
