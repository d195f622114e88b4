// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sysfs.c - small-file readers rooted at a directory, for fixture tests. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "node/sysfs.h"

/* The thread taking a snapshot records its own reads only: serve's scrapes
 * read the node on the HTTP thread while the hindsight writer snapshots it. */
static __thread void (*recorder)(void *ctx, const char *path);
static __thread void *recorder_ctx;

void lw_sysfs_set_recorder(void (*fn)(void *ctx, const char *path), void *ctx)
{
	recorder = fn;
	recorder_ctx = ctx;
}

static int vpath(char *buf, size_t len, const char *root, const char *fmt, va_list ap)
{
	int a = snprintf(buf, len, "%s", root);
	int b;

	if (a < 0 || (size_t)a >= len)
		return -ENAMETOOLONG;
	b = vsnprintf(buf + a, len - a, fmt, ap);
	if (b < 0 || (size_t)b >= len - a)
		return -ENAMETOOLONG;
	if (recorder)
		recorder(recorder_ctx, buf + a);
	return 0;
}

int lw_sysfs_path(char *buf, size_t len, const char *root, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(buf, len, root, fmt, ap);
	va_end(ap);
	return err;
}

void lw_rtrim(char *s)
{
	size_t l = strlen(s);

	while (l && isspace((unsigned char)s[l - 1]))
		s[--l] = '\0';
}

static int read_first_line(const char *path, char *buf, size_t len)
{
	int err = 0;
	FILE *f;

	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		err = ferror(f) ? -EIO : -ENODATA;
		buf[0] = '\0';
	}
	fclose(f);
	lw_rtrim(buf);
	return err;
}

int lw_sysfs_read(const char *root, char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int err;

	buf[0] = '\0';
	va_start(ap, fmt);
	err = vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	if (err)
		return err;
	return read_first_line(path, buf, len);
}

int lw_parse_ll(const char *s, long long *v)
{
	char *end;

	if (!*s)
		return -EINVAL;
	errno = 0;
	*v = strtoll(s, &end, 10);
	if (errno || end == s || (*end && !isspace((unsigned char)*end)))
		return -EINVAL;
	return 0;
}

int lw_sysfs_read_ll(const char *root, long long *v, const char *fmt, ...)
{
	char path[PATH_MAX], buf[64];
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	if (!err)
		err = read_first_line(path, buf, sizeof(buf));
	return err ? err : lw_parse_ll(buf, v);
}

bool lw_sysfs_exists(const char *root, const char *fmt, ...)
{
	char path[PATH_MAX];
	struct stat st;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	return !err && stat(path, &st) == 0;
}

bool lw_is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}
