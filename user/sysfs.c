// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sysfs.c - small-file readers rooted at a directory, for fixture tests. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"

static int vpath(char *path, size_t len, const char *root, const char *fmt, va_list ap)
{
	char rel[1024];
	int n;

	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	n = snprintf(path, len, "%s/%s", root && *root ? root : "", rel);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int lw_sysfs_read(const char *root, char *buf, size_t len, const char *fmt, ...)
{
	char path[1280];
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	if (err)
		return err;
	return read_file(path, buf, len);
}

int lw_sysfs_read_long(const char *root, long *v, const char *fmt, ...)
{
	char path[1280], buf[64], *end;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	if (err)
		return err;
	err = read_file(path, buf, sizeof(buf));
	if (err)
		return err;
	errno = 0;
	*v = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

bool lw_sysfs_exists(const char *root, const char *fmt, ...)
{
	char path[1280];
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	return !err && access(path, F_OK) == 0;
}
