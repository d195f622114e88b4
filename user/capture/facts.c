// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * facts.c - the HOST and TARGET facts a capture's reader shows in its
 * header, read from procfs and sysfs below a root (fixtures in tests).
 * A fact that cannot be read is left out, not invented.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "capture/capture.h"

#define MAX_FACTS 24
#define MAX_TIDS  (64u << 10) /* bytes of the tid:comm list */

struct facts {
	struct lw_capture_kv kv[MAX_FACTS];
	char *own[MAX_FACTS];
	size_t n;
	const char *root; /* "" for "/" */
};

static void facts_free(struct facts *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->own[i]);
}

/* Take v (malloc'd, may be NULL: the fact is left out). */
static void fact_put(struct facts *f, const char *key, char *v)
{
	if (!v || f->n == MAX_FACTS) {
		free(v);
		return;
	}
	f->kv[f->n].key = key;
	f->kv[f->n].value = v;
	f->own[f->n++] = v;
}

static char *fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* The file under root, NULs turned into spaces and trailing whitespace cut
 * (cmdline, comm); NULL when unreadable. */
static char *read_text(const struct facts *f, const char *path, size_t max)
{
	char *p = fmt("%s%s", f->root, path), *b;
	size_t n;
	FILE *fp;

	if (!p)
		return NULL;
	fp = fopen(p, "re");
	free(p);
	b = fp ? malloc(max + 1) : NULL;
	if (!b) {
		if (fp)
			fclose(fp);
		return NULL;
	}
	n = fread(b, 1, max, fp);
	fclose(fp);
	for (size_t i = 0; i < n; i++)
		if (!b[i])
			b[i] = ' ';
	while (n && isspace((unsigned char)b[n - 1]))
		n--;
	b[n] = '\0';
	return b;
}

/* The value of "key<sep>" in a "key: value" file (cpuinfo, status). */
static char *read_field(const struct facts *f, const char *path, const char *key)
{
	char *p = fmt("%s%s", f->root, path), *line = NULL, *v = NULL;
	size_t cap = 0, kl = strlen(key);
	FILE *fp;

	fp = p ? fopen(p, "re") : NULL;
	free(p);
	while (fp && !v && getline(&line, &cap, fp) > 0) {
		char *s = line + kl;

		if (strncmp(line, key, kl) || (*s != ':' && !isspace((unsigned char)*s)))
			continue;
		s += strspn(s, " \t");
		if (*s++ != ':')
			continue;
		s += strspn(s, " \t");
		s[strcspn(s, "\n")] = '\0';
		v = strdup(s);
	}
	free(line);
	if (fp)
		fclose(fp);
	return v;
}

/* "node0:0-3 node1:4-7" */
static char *numa_layout(const struct facts *f)
{
	char *dir = fmt("%s/sys/devices/system/node", f->root), *out = NULL;
	struct dirent *de;
	DIR *d = dir ? opendir(dir) : NULL;

	free(dir);
	while (d && (de = readdir(d))) {
		char *path, *cpus, *o;

		if (strncmp(de->d_name, "node", 4) || !isdigit((unsigned char)de->d_name[4]))
			continue;
		path = fmt("/sys/devices/system/node/%s/cpulist", de->d_name);
		cpus = path ? read_text(f, path, 4096) : NULL;
		o = cpus ? fmt("%s%s%s:%s", out ? out : "", out ? " " : "", de->d_name, cpus)
			 : NULL;
		free(path);
		free(cpus);
		if (o) {
			free(out);
			out = o;
		}
	}
	if (d)
		closedir(d);
	return out;
}

int lw_capture_writer_add_host(struct lw_capture_writer *w, const char *root)
{
	struct facts f = {.root = root && strcmp(root, "/") ? root : ""};
	struct timespec mono, real;
	struct utsname u;
	char *model;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	fact_put(&f, "hostname", read_text(&f, "/proc/sys/kernel/hostname", 256));
	fact_put(&f, "kernel_release", read_text(&f, "/proc/sys/kernel/osrelease", 256));
	fact_put(&f, "kernel_version", read_text(&f, "/proc/sys/kernel/version", 512));
	fact_put(&f, "machine", uname(&u) ? NULL : strdup(u.machine));
	model = read_field(&f, "/proc/cpuinfo", "model name");
	fact_put(&f, "cpu_model", model ? model : read_field(&f, "/proc/cpuinfo", "Model"));
	fact_put(&f, "cpus_online", read_text(&f, "/sys/devices/system/cpu/online", 4096));
	fact_put(&f, "cpus_possible", read_text(&f, "/sys/devices/system/cpu/possible", 4096));
	fact_put(&f, "numa", numa_layout(&f));
	fact_put(&f, "boot_id", read_text(&f, "/proc/sys/kernel/random/boot_id", 64));
	/* the records' timestamps, and one pair of readings to put them on the
	 * wall clock */
	fact_put(&f, "clock_id", strdup("CLOCK_MONOTONIC"));
	fact_put(&f, "clock_monotonic_ns",
		 fmt("%llu", (unsigned long long)mono.tv_sec * 1000000000ull + mono.tv_nsec));
	fact_put(&f, "clock_realtime_ns",
		 fmt("%llu", (unsigned long long)real.tv_sec * 1000000000ull + real.tv_nsec));
	err = lw_capture_writer_add_facts(w, LW_CHUNK_HOST, f.kv, f.n);
	facts_free(&f);
	return err;
}

/* "tid:comm tid:comm ..." of /proc/PID/task, and how many. */
static void threads(struct facts *f, int pid)
{
	char *dir = fmt("%s/proc/%d/task", f->root, pid), *list = NULL;
	size_t len = 0, n = 0;
	struct dirent *de;
	FILE *m = open_memstream(&list, &len);
	DIR *d = dir && m ? opendir(dir) : NULL;

	free(dir);
	while (d && (de = readdir(d))) {
		char *path, *comm;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		n++;
		if (ftell(m) > (long)MAX_TIDS)
			continue;
		path = fmt("/proc/%d/task/%s/comm", pid, de->d_name);
		comm = path ? read_text(f, path, 64) : NULL;
		fprintf(m, "%s%s:%s", n > 1 ? " " : "", de->d_name, comm ? comm : "?");
		free(path);
		free(comm);
	}
	if (d)
		closedir(d);
	if (m)
		fclose(m);
	fact_put(f, "threads", d ? fmt("%zu", n) : NULL);
	fact_put(f, "thread_names", d ? list : NULL);
	if (!d)
		free(list);
}

int lw_capture_writer_add_target(struct lw_capture_writer *w, const char *root, int pid)
{
	struct facts f = {.root = root && strcmp(root, "/") ? root : ""};
	char path[64];
	int err;

	/* no single process (a cgroup, several targets): the chunk is there,
	 * empty, and the options name the targets */
	if (pid <= 0)
		return lw_capture_writer_add_facts(w, LW_CHUNK_TARGET, f.kv, 0);
	fact_put(&f, "pid", fmt("%d", pid));
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fact_put(&f, "comm", read_text(&f, path, 64));
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fact_put(&f, "cmdline", read_text(&f, path, 64 << 10));
	threads(&f, pid);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fact_put(&f, "cpus_allowed", read_field(&f, path, "Cpus_allowed_list"));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	fact_put(&f, "cgroup", read_text(&f, path, 64 << 10));
	err = lw_capture_writer_add_facts(w, LW_CHUNK_TARGET, f.kv, f.n);
	facts_free(&f);
	return err;
}
