// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * snapshot.c - record the paths the node readers build (lw_sysfs_path() is
 * the one place they are built), then read what they hold. Entries are
 * kept at their physical paths, with every symlink crossed on the way, so
 * the tree written out resolves "a/link/.." as the node did. A directory's
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

#include "node/ethtool.h"
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

/* An ethtool answer on the live node: kept as the file a fixture has. */
static void on_ethtool(void *ctx, const char *path, const char *text, size_t len)
{
	struct lw_snapshot *s = ctx;

	if (!lw_snapshot_add(s, path, LW_SNAP_FILE, text, len))
		s->v[s->n - 1].synthetic = true;
}

void lw_snapshot_begin(struct lw_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	lw_sysfs_set_recorder(on_path, s);
	lw_ethtool_set_recorder(on_ethtool, s);
}

/* by path, a recorded entry before a listed one of the same path */
static int cmp_path(const void *a, const void *b)
{
	const struct lw_snap_file *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (int)x->listed - (int)y->listed;
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

static int join(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s/%s", a, b);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
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

/* The physical path of root-relative path (realpath, made root-relative
 * again) into out; -EXDEV when it leads out of root. */
static int physical(const char *rroot, const char *root, const char *path, char *out, size_t len)
{
	char full[PATH_MAX], rp[PATH_MAX];
	size_t l = strlen(rroot);

	if (join(full, sizeof(full), root, path) || !realpath(full, rp))
		return -ENOENT;
	if (!strcmp(rroot, "/"))
		l = 0;
	else if (strncmp(rp, rroot, l) || (rp[l] && rp[l] != '/'))
		return -EXDEV;
	snprintf(out, len, "%s", rp[l] ? rp + l : "/");
	return 0;
}

/* A symlink at root-relative phys, added with its target when relative. */
static int add_link(struct lw_snapshot *s, const char *root, const char *phys, bool listed)
{
	char full[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	if (join(full, sizeof(full), root, phys))
		return 0;
	n = readlink(full, target, sizeof(target) - 1);
	if (n <= 0 || target[0] == '/')
		return 0; /* an absolute link (rare in sysfs) is left out */
	target[n] = '\0';
	if (lw_snapshot_add(s, phys, LW_SNAP_LINK, target, n))
		return -ENOMEM;
	s->v[s->n - 1].listed = listed;
	return 0;
}

/* The physical place of path's last component: its parent resolved, the
 * name itself not (it may be the link). */
static int place_of(const char *rroot, const char *root, const char *path, size_t l, char *out,
		    size_t len)
{
	char dir[PATH_MAX], parent[PATH_MAX];
	const char *name;
	size_t d;

	snprintf(dir, sizeof(dir), "%.*s", (int)l, path);
	name = strrchr(dir, '/');
	d = name - dir;
	dir[d] = '\0';
	if (physical(rroot, root, d ? dir : "/", parent, sizeof(parent)))
		return -ENOENT;
	return join(out, len, strcmp(parent, "/") ? parent : "", dir + d + 1);
}

/* Every symlink on path's way, at its physical place. */
static int add_links_on(struct lw_snapshot *s, const char *rroot, const char *root,
			const char *path)
{
	char at[PATH_MAX], full[PATH_MAX];
	size_t len = strlen(path);
	int err = 0;

	for (size_t l = 1; !err && l <= len; l++) {
		struct stat st;

		if (l < len && path[l] != '/')
			continue;
		if (place_of(rroot, root, path, l, at, sizeof(at)) ||
		    join(full, sizeof(full), root, at))
			continue;
		if (!lstat(full, &st) && S_ISLNK(st.st_mode))
			err = add_link(s, root, at, false);
	}
	return err;
}

/* Every entry of directory phys (root-relative), as a directory, a link or
 * an empty file: a reader may list a directory (msi_irqs, /proc) without
 * building a path into each entry. An entry it did read is recorded with
 * its data, which snap_unique() keeps over the listing's. */
static int add_entries(struct lw_snapshot *s, const char *root, const char *phys)
{
	char full[PATH_MAX], p[PATH_MAX], e_full[PATH_MAX];
	struct dirent *e;
	int err = 0;
	DIR *d;

	if (join(full, sizeof(full), root, phys) || !(d = opendir(full)))
		return 0;
	while (!err && (e = readdir(d))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (join(e_full, sizeof(e_full), full, e->d_name) || lstat(e_full, &st) ||
		    join(p, sizeof(p), strcmp(phys, "/") ? phys : "", e->d_name))
			continue;
		if (S_ISLNK(st.st_mode)) {
			err = add_link(s, root, p, true);
			continue;
		}
		err = lw_snapshot_add(s, p, S_ISDIR(st.st_mode) ? LW_SNAP_DIR : LW_SNAP_FILE, NULL,
				      0);
		if (!err)
			s->v[s->n - 1].listed = true;
	}
	closedir(d);
	return err;
}

/* Entry i as it is below root, moved to its physical path: data for a
 * file, the entries of a directory, the links crossed to reach it. An
 * absent or unreadable one loses its path (dropped after). */
static int snap_read(struct lw_snapshot *s, size_t i, const char *rroot, const char *root)
{
	char phys[PATH_MAX], full[PATH_MAX];
	struct lw_snap_file *f = &s->v[i];
	struct stat st;
	char *path;
	int err;

	if (physical(rroot, root, f->path, phys, sizeof(phys)) ||
	    join(full, sizeof(full), root, phys) || stat(full, &st))
		goto drop;
	path = strdup(phys);
	if (!path)
		return -ENOMEM;
	err = add_links_on(s, rroot, root, f->path); /* may move s->v */
	f = &s->v[i];
	free(f->path);
	f->path = path;
	if (err)
		return err;
	/* the mode too: a read-only smp_affinity is how a managed IRQ shows */
	f->mode = st.st_mode & 07777;
	if (S_ISDIR(st.st_mode)) {
		f->kind = LW_SNAP_DIR;
		return add_entries(s, root, phys);
	}
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
	char rroot[PATH_MAX];
	size_t recorded, w = 0;
	int err = 0;

	lw_sysfs_set_recorder(NULL, NULL);
	lw_ethtool_set_recorder(NULL, NULL);
	if (!realpath(root, rroot))
		return -errno;
	snap_unique(s);
	recorded = s->n;
	for (size_t i = 0; i < recorded && !err; i++)
		if (!s->v[i].synthetic)
			err = snap_read(s, i, rroot, root);
	for (size_t r = 0; r < s->n; r++)
		if (s->v[r].path)
			s->v[w++] = s->v[r];
	s->n = w;
	snap_unique(s);
	return err;
}

int lw_snapshot_add(struct lw_snapshot *s, const char *path, enum lw_snap_kind kind,
		    const void *data, size_t len)
{
	struct lw_snap_file *f;
	int err = snap_push(s, path);

	if (err)
		return err;
	f = &s->v[s->n - 1];
	f->kind = kind;
	if (kind == LW_SNAP_DIR || !len)
		return 0;
	/* one byte more: a link's target is a string */
	f->data = calloc(1, len + 1);
	if (!f->data)
		return -ENOMEM;
	memcpy(f->data, data, len);
	f->len = len;
	return 0;
}

/* path is absolute, without "." or ".." components; a link's target climbs
 * no higher than the root. Both come from an untrusted capture. */
static bool path_ok(const char *path)
{
	return path[0] == '/' && !strstr(path, "/../") && !strstr(path, "/./") &&
	       strcmp(path + strlen(path) - (strlen(path) >= 3 ? 3 : 0), "/..") &&
	       strcmp(path + strlen(path) - (strlen(path) >= 2 ? 2 : 0), "/.");
}

static bool link_ok(const char *path, const char *target)
{
	int depth = -1; /* the link's own name is not a level */
	char t[PATH_MAX];

	for (const char *c = path; *c; c++)
		depth += *c == '/';
	if (target[0] == '/' || snprintf(t, sizeof(t), "%s", target) >= (int)sizeof(t))
		return false;
	for (char *save, *part = strtok_r(t, "/", &save); part; part = strtok_r(NULL, "/", &save))
		if (!strcmp(part, ".."))
			depth--;
		else if (strcmp(part, "."))
			depth++;
		else
			continue;
	return depth >= 0;
}

/* mkdir -p of path's directories below dir, and of path itself when it is
 * one. */
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
	if (f->kind == LW_SNAP_LINK)
		return symlink(f->data, p) && errno != EEXIST ? -errno : 0;
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

/* Directories and files first, links last: no write goes through a link. */
int lw_snapshot_write(const struct lw_snapshot *s, const char *dir)
{
	int err = 0;

	for (size_t i = 0; i < s->n && !err; i++) {
		const struct lw_snap_file *f = &s->v[i];

		if (!path_ok(f->path) || (f->kind == LW_SNAP_LINK && !link_ok(f->path, f->data)))
			return -EINVAL;
		err = make_dirs(dir, f->path, f->kind == LW_SNAP_DIR);
		if (!err && f->kind == LW_SNAP_FILE)
			err = write_file(dir, f);
	}
	for (size_t i = 0; i < s->n && !err; i++)
		if (s->v[i].kind == LW_SNAP_LINK)
			err = write_file(dir, &s->v[i]);
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
