// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * snapshot.c - record the paths the node readers build (lw_sysfs_path() is
 * the one place they are built), then read what they hold. A directory's
 * entries are kept too (add_entries()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/snapshot.h"
#include "node/sysfs.h"

static int snap_push(struct lw_snapshot *s, const char *path)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct lw_snap_file *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	s->v[s->n].path = strdup(path);
	if (!s->v[s->n].path)
		return -ENOMEM;
	s->n++;
	return 0;
}

static void on_path(void *ctx, const char *path)
{
	if (path[0] == '/' && path[1])
		snap_push(ctx, path); /* a path lost to ENOMEM reads as absent */
}

void lw_snapshot_begin(struct lw_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	lw_sysfs_set_recorder(on_path, s);
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct lw_snap_file *)a)->path,
		      ((const struct lw_snap_file *)b)->path);
}

static void snap_unique(struct lw_snapshot *s)
{
	size_t w = 0;

	qsort(s->v, s->n, sizeof(s->v[0]), cmp_path);
	for (size_t r = 0; r < s->n; r++) {
		if (w && !strcmp(s->v[w - 1].path, s->v[r].path)) {
			free(s->v[r].path);
			free(s->v[r].data);
			continue;
		}
		s->v[w++] = s->v[r];
	}
	s->n = w;
}

/* Up to LW_SNAP_FILE_MAX bytes of a file; procfs files say size 0, so read
 * to the end rather than trust st_size. */
static int read_all(const char *path, struct lw_snap_file *f)
{
	size_t cap = 4096;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = 0;

	if (fd < 0)
		return -errno;
	f->data = malloc(cap);
	while (f->data) {
		ssize_t r;

		if (f->len == cap) {
			char *d = cap < LW_SNAP_FILE_MAX ? realloc(f->data, cap * 2) : NULL;

			if (!d) {
				f->cut = cap >= LW_SNAP_FILE_MAX;
				err = f->cut ? 0 : -ENOMEM;
				break;
			}
			f->data = d;
			cap *= 2;
		}
		r = read(fd, f->data + f->len, cap - f->len);
		if (r <= 0) {
			err = r < 0 ? -errno : 0;
			break;
		}
		f->len += r;
	}
	if (!f->data)
		err = -ENOMEM;
	close(fd);
	return err;
}

static int join(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s/%s", a, b);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Every entry of directory full (relative path rel), as a directory or an
 * empty file: a reader may list a directory (msi_irqs, /proc) without
 * building a path into each entry. An entry it did read is recorded with its
 * data, which snap_unique() keeps over the listing's. */
static int add_entries(struct lw_snapshot *s, const char *full, const char *rel)
{
	char p[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(full);
	int err = 0;

	if (!d)
		return 0;
	while (!err && (e = readdir(d))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (join(p, sizeof(p), full, e->d_name) || stat(p, &st))
			continue;
		if (join(p, sizeof(p), rel, e->d_name))
			continue;
		err = lw_snapshot_add(s, p, S_ISDIR(st.st_mode), NULL, 0);
		if (!err)
			s->v[s->n - 1].listed = true;
	}
	closedir(d);
	return err;
}

/* Entry i as it is below root: data for a file, its subdirectories for a
 * directory; an absent or unreadable one loses its path (dropped after). */
static int snap_read(struct lw_snapshot *s, size_t i, const char *root)
{
	struct lw_snap_file *f = &s->v[i];
	char full[PATH_MAX];
	struct stat st;

	if (join(full, sizeof(full), root, f->path) || stat(full, &st))
		goto drop;
	if (S_ISDIR(st.st_mode)) {
		f->dir = true;
		return add_entries(s, full, f->path); /* may move s->v */
	}
	/* the mode too: a read-only smp_affinity is how a managed IRQ shows */
	f->mode = st.st_mode & 07777;
	if (S_ISREG(st.st_mode) && !read_all(full, f))
		return 0;
drop:
	free(f->path);
	free(f->data);
	memset(f, 0, sizeof(*f));
	return 0;
}

int lw_snapshot_end(struct lw_snapshot *s, const char *root)
{
	size_t recorded, w = 0;
	int err = 0;

	lw_sysfs_set_recorder(NULL, NULL);
	snap_unique(s);
	recorded = s->n;
	for (size_t i = 0; i < recorded && !err; i++)
		err = snap_read(s, i, root);
	for (size_t r = 0; r < s->n; r++)
		if (s->v[r].path)
			s->v[w++] = s->v[r];
	s->n = w;
	snap_unique(s);
	return err;
}

int lw_snapshot_add(struct lw_snapshot *s, const char *path, bool dir, const void *data, size_t len)
{
	struct lw_snap_file *f;
	int err = snap_push(s, path);

	if (err)
		return err;
	f = &s->v[s->n - 1];
	f->dir = dir;
	if (dir || !len)
		return 0;
	f->data = malloc(len);
	if (!f->data)
		return -ENOMEM;
	memcpy(f->data, data, len);
	f->len = len;
	return 0;
}

/* mkdir -p of path's directories below dir, and of path itself when it is
 * one. path is as on the node ("/sys/..."), with no "..": a capture reader
 * checks that. */
static int make_dirs(const char *dir, const char *path, bool self)
{
	char p[PATH_MAX];

	if (join(p, sizeof(p), dir, path))
		return -ENAMETOOLONG;
	for (char *c = p + strlen(dir) + 2; *c; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		*c = '/';
	}
	if (self && mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int write_file(const char *dir, const struct lw_snap_file *f)
{
	char p[PATH_MAX];
	int fd, err = 0;

	if (join(p, sizeof(p), dir, f->path))
		return -ENAMETOOLONG;
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, f->mode ? f->mode & 0777 : 0644))
		err = -errno;
	for (size_t off = 0; off < f->len && !err;) {
		ssize_t w = write(fd, f->data + off, f->len - off);

		if (w < 0)
			err = -errno;
		else
			off += w;
	}
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int lw_snapshot_write(const struct lw_snapshot *s, const char *dir)
{
	int err = 0;

	for (size_t i = 0; i < s->n && !err; i++) {
		const struct lw_snap_file *f = &s->v[i];

		err = make_dirs(dir, f->path, f->dir);
		if (!err && !f->dir)
			err = write_file(dir, f);
	}
	return err;
}

void lw_snapshot_free(struct lw_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].data);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}
