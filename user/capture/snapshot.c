// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * snapshot.c - a node's switches as files: the sysfs/procfs files the node
 * reader (node/node.c) reads, collected under a root into a NODE chunk, and
 * written back under a directory for the same reader to run on. The list
 * below follows node.c's reads; test_capture checks that every fixture
 * reads back the same through a capture.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/reader.h"

/* /proc/interrupts of a large host is a few MiB */
#define MAX_FILE (LW_CAPTURE_MAX_RAW / 2)

enum spec_how {
	S_DIR,	 /* a directory the reader lists or stats */
	S_FILE,	 /* a file, whole */
	S_ANY,	 /* whichever it is (msi_irqs/N) */
	S_SMAPS, /* only the lines node.c reads: VmFlags, AnonHugePages */
	S_COMM,	 /* a /proc/N/comm, kept for irqbalance only */
};

struct spec {
	const char *pat; /* glob(3) with GLOB_BRACE, below root */
	enum spec_how how;
};

#define CPU "/sys/devices/system/cpu"
#define THP "/sys/kernel/mm/transparent_hugepage"
#define NET "/sys/class/net/*"

static const struct spec node_specs[] = {
	{CPU "/cpu[0-9]*", S_DIR},
	{CPU "/{online,isolated,nohz_full}", S_FILE},
	{CPU "/cpu[0-9]*/cpufreq/{scaling_governor,scaling_driver,scaling_cur_freq,"
	     "scaling_min_freq,scaling_max_freq,cpuinfo_min_freq,cpuinfo_max_freq,"
	     "base_frequency,energy_performance_preference}",
	 S_FILE},
	{CPU "/{intel_pstate/no_turbo,intel_pstate/status,amd_pstate/status,cpufreq/boost}",
	 S_FILE},
	{CPU "/cpu[0-9]*/cpuidle/state[0-9]*/{name,latency,usage,time,disable}", S_FILE},
	{CPU "/cpu[0-9]*/power/pm_qos_resume_latency_us", S_FILE},
	{CPU "/cpuidle/{current_driver,current_governor_ro,current_governor}", S_FILE},
	{"/sys/devices/system/node/node[0-9]*", S_DIR},
	{"/sys/devices/system/node/node[0-9]*/cpulist", S_FILE},
	{THP "/{enabled,defrag}", S_FILE},
	{THP "/khugepaged/{defrag,pages_to_scan,scan_sleep_millisecs,alloc_sleep_millisecs}",
	 S_FILE},
	{"/sys/module/haltpoll/parameters/guest_halt_poll_ns", S_FILE},
	{"/proc/{interrupts,softirqs,cpuinfo}", S_FILE},
	{"/proc/irq/[0-9]*/{smp_affinity_list,effective_affinity_list,node}", S_FILE},
	{"/etc/{default,sysconfig}/irqbalance", S_FILE},
	{NET, S_DIR},
	{NET "/device", S_DIR},
	/* device/.. is the PCI function behind virtio-net; stored lexically
	 * (class/net/X/...), which is where device/.. leads once device is a
	 * plain directory again */
	{NET "/{device,device/..}/numa_node", S_FILE},
	{NET "/{device,device/..}/msi_irqs", S_DIR},
	{NET "/{device,device/..}/msi_irqs/*", S_ANY},
	{NET "/queues/*/rps_cpus", S_FILE},
	{"/proc/[0-9]*/comm", S_COMM},
};

struct snap {
	struct lw_capture_file *f;
	size_t n, cap;
	const char *root; /* "" for "/" */
};

static void snap_free(struct snap *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free((char *)s->f[i].path);
		free((char *)s->f[i].data);
	}
	free(s->f);
}

/* "/a/b/../c" -> "/a/c", in place: the path as the reader will meet it
 * once no component is a symlink. */
static void path_normalize(char *p)
{
	char *out = p, *in = p;

	while (*in) {
		char *s;
		size_t l;

		while (*in == '/')
			in++;
		s = in;
		while (*in && *in != '/')
			in++;
		l = (size_t)(in - s);
		if (!l || (l == 1 && s[0] == '.'))
			continue;
		if (l == 2 && s[0] == '.' && s[1] == '.') {
			while (out > p && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		memmove(out, s, l);
		out += l;
	}
	*out = '\0';
	if (!*p)
		strcpy(p, "/");
}

/* The whole file, at most MAX_FILE bytes; NULL when unreadable (the node
 * reader would not have read it either). */
static char *slurp(const char *path, __u32 *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	size_t cap = 0, n = 0;
	char *b = NULL;

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t got;

		if (n + 1 >= cap) {
			char *q = realloc(b, cap = cap ? cap * 2 : 4096);

			if (!q)
				goto fail;
			b = q;
		}
		got = read(fd, b + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto fail;
		n += (size_t)got;
		if (!got || n >= MAX_FILE)
			break;
	}
	close(fd);
	b[n] = '\0';
	*len = (__u32)n;
	return b;
fail:
	close(fd);
	free(b);
	return NULL;
}

/* Keep the lines starting with one of keys. */
static __u32 keep_lines(char *b, __u32 len, const char *const *keys)
{
	char *out = b, *line = b, *end = b + len;

	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t l = nl ? (size_t)(nl - line) + 1 : (size_t)(end - line);

		for (const char *const *k = keys; *k; k++)
			if (!strncmp(line, *k, strlen(*k))) {
				memmove(out, line, l);
				out += l;
				break;
			}
		line += l;
	}
	*out = '\0';
	return (__u32)(out - b);
}

/* Add rel (owning data) to the snapshot. */
static int snap_add(struct snap *s, const char *rel, __u32 mode, char *data, __u32 len)
{
	char *p = strdup(rel);

	if (p && s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct lw_capture_file *f = realloc(s->f, cap * sizeof(*f));

		if (f) {
			s->f = f;
			s->cap = cap;
		}
	}
	if (!p || s->n == s->cap) {
		free(p);
		free(data);
		return -ENOMEM;
	}
	path_normalize(p);
	s->f[s->n++] = (struct lw_capture_file){.path = p, .data = data, .len = len, .mode = mode};
	return 0;
}

/* root + pat as a glob pattern, root's own metacharacters escaped. */
static int pattern(char *out, size_t len, const char *root, const char *pat, bool esc_pat)
{
	size_t o = 0;

	for (int pass = 0; pass < 2; pass++) {
		const char *s = pass ? pat : root;
		bool esc = pass ? esc_pat : true;

		for (; *s; s++) {
			if (o + 3 > len)
				return -ENAMETOOLONG;
			if (esc && strchr("*?[]{}\\", *s))
				out[o++] = '\\';
			out[o++] = *s;
		}
	}
	out[o] = '\0';
	return 0;
}

static bool is_irqbalance(const char *data, __u32 len)
{
	return len >= 10 && !strncmp(data, "irqbalance", 10) && (len == 10 || data[10] == '\n');
}

static int match_add(struct snap *s, const char *path, enum spec_how how)
{
	static const char *const smaps_keys[] = {"VmFlags:", "AnonHugePages:", NULL};
	const char *rel = path + strlen(s->root);
	struct stat st;
	char *data;
	__u32 len = 0;

	if (stat(path, &st))
		return 0;
	if (S_ISDIR(st.st_mode) && (how == S_DIR || how == S_ANY))
		return snap_add(s, rel, S_IFDIR | 0755, NULL, 0);
	if (!S_ISREG(st.st_mode) || how == S_DIR)
		return 0;
	data = slurp(path, &len);
	if (!data)
		return 0;
	if (how == S_SMAPS)
		len = keep_lines(data, len, smaps_keys);
	if (how == S_COMM && !is_irqbalance(data, len)) {
		free(data);
		return 0;
	}
	return snap_add(s, rel, S_IFREG | (st.st_mode & 0777), data, len);
}

static int spec_collect(struct snap *s, const char *pat, enum spec_how how, bool esc_pat)
{
	char p[8192];
	glob_t g;
	int err;

	err = pattern(p, sizeof(p), s->root, pat, esc_pat);
	if (err)
		return err;
	err = glob(p, GLOB_BRACE | GLOB_NOSORT, NULL, &g);
	if (err == GLOB_NOMATCH || err == GLOB_ABORTED)
		return 0;
	if (err)
		return -ENOMEM;
	for (size_t i = 0; !err && i < g.gl_pathc; i++)
		err = match_add(s, g.gl_pathv[i], how);
	globfree(&g);
	return err;
}

/* One line of /proc/PID/cgroup: the files read_cgroup() may open for it,
 * "0::/path" on cgroup v2 (mounted on /sys/fs/cgroup or .../unified), and
 * "N:ctl,...:/path" on v1 (the cpu and the cpuset hierarchies). */
static int cgroup_line(struct snap *s, const char *ctl, const char *path)
{
	char pat[8192];

	if (strpbrk(path, "*?[]{},\\") || strpbrk(ctl, "*?[]{}\\/"))
		return 0; /* no such cgroup names in practice; not worth escaping */
	if (!*ctl) {
		snprintf(pat, sizeof(pat),
			 "/sys/fs/cgroup{,/unified}%s/{cpu.max,cpu.stat,cpuset.cpus.effective}",
			 path);
		return spec_collect(s, pat, S_FILE, false);
	}
	if (strstr(ctl, "cpuset")) {
		snprintf(pat, sizeof(pat), "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus", path);
		return spec_collect(s, pat, S_FILE, false);
	}
	snprintf(pat, sizeof(pat),
		 "/sys/fs/cgroup/%s%s/{cpu.cfs_quota_us,cpu.cfs_period_us,cpu.stat}", ctl, path);
	return spec_collect(s, pat, S_FILE, false);
}

static int cgroup_collect(struct snap *s, const char *lines)
{
	char line[4200];
	int err = 0;

	while (!err && lines && *lines) {
		const char *nl = strchr(lines, '\n');
		size_t ll = nl ? (size_t)(nl - lines) : strlen(lines);
		char *c, *p;

		if (ll < sizeof(line)) {
			memcpy(line, lines, ll);
			line[ll] = '\0';
			c = strchr(line, ':');
			p = c ? strchr(c + 1, ':') : NULL;
			if (p && p[1] == '/') {
				*p++ = '\0';
				/* the root cgroup's files sit at the mount point */
				err = cgroup_line(s, c + 1, strcmp(p, "/") ? p : "");
			}
		}
		lines = nl ? nl + 1 : NULL;
	}
	return err;
}

/* The target's files, and the daemon's environment irqbalance may take its
 * banned CPUs from. */
static int pid_collect(struct snap *s, int pid)
{
	char pat[64];
	int err;

	snprintf(pat, sizeof(pat), "/proc/%d/{status,cgroup,comm}", pid);
	err = spec_collect(s, pat, S_FILE, false);
	if (!err) {
		snprintf(pat, sizeof(pat), "/proc/%d/smaps", pid);
		err = spec_collect(s, pat, S_SMAPS, false);
	}
	if (!err)
		err = spec_collect(s, "/sys/fs/cgroup/cgroup.controllers", S_FILE, false);
	for (size_t i = 0; !err && i < s->n; i++) {
		char want[64];

		snprintf(want, sizeof(want), "/proc/%d/cgroup", pid);
		if (!strcmp(s->f[i].path, want))
			err = cgroup_collect(s, s->f[i].data);
	}
	return err;
}

static int irqbalance_collect(struct snap *s)
{
	size_t n = s->n;
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		char pat[64];
		int pid;

		if (sscanf(s->f[i].path, "/proc/%d/comm", &pid) != 1 || !s->f[i].data ||
		    !is_irqbalance(s->f[i].data, s->f[i].len))
			continue;
		snprintf(pat, sizeof(pat), "/proc/%d/environ", pid);
		err = spec_collect(s, pat, S_FILE, false);
	}
	return err;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct lw_capture_file *)a)->path,
		      ((const struct lw_capture_file *)b)->path);
}

/* Sorted, each path once (device/.. and device can name the same file). */
static void snap_dedup(struct snap *s)
{
	size_t o = 0;

	qsort(s->f, s->n, sizeof(*s->f), cmp_file);
	for (size_t i = 0; i < s->n; i++) {
		if (o && !strcmp(s->f[o - 1].path, s->f[i].path)) {
			free((char *)s->f[i].path);
			free((char *)s->f[i].data);
			continue;
		}
		s->f[o++] = s->f[i];
	}
	s->n = o;
}

int lw_capture_writer_add_node(struct lw_capture_writer *w, const char *label, const char *root,
			       int pid)
{
	struct snap s = {.root = root && strcmp(root, "/") ? root : ""};
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(node_specs) / sizeof(node_specs[0]); i++)
		err = spec_collect(&s, node_specs[i].pat, node_specs[i].how, false);
	if (!err)
		err = irqbalance_collect(&s);
	if (!err && pid > 0)
		err = pid_collect(&s, pid);
	if (!err) {
		snap_dedup(&s);
		err = lw_capture_writer_add_files(w, label, s.f, s.n);
	}
	snap_free(&s);
	return err;
}

/* ---- extraction ---- */

static int mkdirs(char *path, size_t from)
{
	for (char *p = path + from + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			int err = -errno;

			*p = '/';
			return err;
		}
		*p = '/';
	}
	return 0;
}

static int file_write(const char *path, const struct lw_capture_file *f)
{
	int fd, err = 0;

	if (S_ISDIR(f->mode))
		return mkdir(path, 0755) && errno != EEXIST ? -errno : 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	for (__u32 off = 0; off < f->len;) {
		ssize_t n = write(fd, f->data + off, f->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		off += (__u32)n;
	}
	/* the node reader tells pinned IRQs by their read-only smp_affinity */
	if (!err && fchmod(fd, (f->mode & 0777) | S_IRUSR))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int lw_capture_node_extract_at(const struct lw_capture_reader *r, size_t i, const char *dir)
{
	size_t dl = strlen(dir);
	char path[8192];
	int err = 0;

	if (i >= r->nnodes)
		return -ENOENT;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	for (size_t k = 0; !err && k < r->nodes[i].n; k++) {
		const struct lw_capture_file *f = &r->nodes[i].files[k];

		/* paths were checked on reading: absolute, no "..", no "." */
		if (snprintf(path, sizeof(path), "%s%s", dir, f->path) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		err = mkdirs(path, dl);
		if (!err)
			err = file_write(path, f);
	}
	return err;
}

int lw_capture_node_extract(const struct lw_capture_reader *r, const char *dir)
{
	return lw_capture_node_extract_at(r, 0, dir);
}
