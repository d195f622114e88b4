// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hindsight_write.c - a hindsight capture on disk: written under a hidden
 * temporary name in the capture directory and renamed, so a reader never
 * sees half a file, then the directory cut back to its cap.
 *
 * It runs on a thread of its own: the node snapshot reads a few hundred
 * sysfs and procfs files (the target's smaps among them, which takes long
 * for a large process) and close() fsyncs, neither of which the tracing
 * thread may wait for. The tracing thread only copies the window.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "latwhy.h"
#include "capture/hindsight_int.h"

#ifndef LW_VERSION
#define LW_VERSION "dev"
#endif

/* The caller's facts, then the capture's own. */
static int write_options(struct lw_hindsight *h, struct lw_capture_writer *w,
			 const struct hs_job *job)
{
	char span[32], win[32], gap[32], lost[32];
	struct lw_capture_kv *kv = calloc(h->nkv + 8, sizeof(*kv));
	size_t n = h->nkv;
	int err;

	if (!kv)
		return -ENOMEM;
	memcpy(kv, h->kv, h->nkv * sizeof(*kv));
	snprintf(span, sizeof(span), "%llu", (unsigned long long)job->span_ns);
	snprintf(win, sizeof(win), "%llu", (unsigned long long)h->o.window_ns);
	snprintf(gap, sizeof(gap), "%llu", (unsigned long long)h->o.min_gap_ns);
	kv[n++] = (struct lw_capture_kv){"capture_reason", job->reason};
	if (job->trigger[0])
		kv[n++] = (struct lw_capture_kv){"capture_trigger", job->trigger};
	kv[n++] = (struct lw_capture_kv){"capture_time", job->utc};
	kv[n++] = (struct lw_capture_kv){"capture_span_ns", span};
	kv[n++] = (struct lw_capture_kv){"capture_window_ns", win};
	kv[n++] = (struct lw_capture_kv){"capture_min_interval_ns", gap};
	kv[n++] = (struct lw_capture_kv){"capture_target", h->target};
	if (job->not_kept) {
		snprintf(lost, sizeof(lost), "%llu", (unsigned long long)job->not_kept);
		kv[n++] = (struct lw_capture_kv){"capture_requests_not_kept", lost};
	}
	err = lw_capture_writer_add_facts(w, LW_CHUNK_OPTIONS, kv, n);
	free(kv);
	return err;
}

static int write_records(struct lw_capture_writer *w, const struct hs_job *job)
{
	size_t off = 0;
	int err = 0;

	while (!err && off + 4 <= job->len) {
		__u32 len;

		memcpy(&len, job->buf + off, 4);
		err = lw_capture_writer_append(w, job->buf + off + 4, len);
		off += 4 + len;
	}
	return err ? err : lw_capture_writer_flush(w);
}

/* The file as `latwhy record` writes it: host, target, options, records,
 * the node now. */
static int write_file(struct lw_hindsight *h, const struct hs_job *job, const char *path)
{
	const struct lw_capture_opts co = {
		.latwhy_version = LW_VERSION,
		.abi_version = LW_ABI_VERSION,
		.overwrite = true, /* a temporary left by a crash */
	};
	struct lw_capture_writer *w = lw_capture_writer_open(path, &co);
	char proc[32];
	int err, cerr;

	if (!w)
		return -errno;
	err = lw_capture_writer_add_host(w, "/");
	/* a target that has exited has no facts left: the capture stands */
	snprintf(proc, sizeof(proc), "/proc/%d", job->pid);
	if (!err && job->pid > 0 && !access(proc, F_OK))
		err = lw_capture_writer_add_target(w, "/", job->pid);
	if (!err)
		err = write_options(h, w, job);
	if (!err)
		err = write_records(w, job);
	if (!err)
		err = lw_capture_writer_add_node(w, "end", "/", job->pid);
	cerr = lw_capture_writer_close(w);
	return err ? err : cerr;
}

/* tmp to dir/name, never over an existing file: name-2.lwy and so on. */
static int publish(struct lw_hindsight *h, struct hs_job *job, const char *tmp, char *path,
		   size_t len)
{
	char base[sizeof(job->name)];
	size_t bl = strlen(job->name) - 4; /* without .lwy */

	memcpy(base, job->name, bl);
	base[bl] = '\0';
	for (int k = 1; k < 100; k++) {
		if (k > 1)
			snprintf(job->name, sizeof(job->name), "%.200s-%d.lwy", base, k);
		snprintf(path, len, "%s/%s", h->dir, job->name);
		if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE))
			return 0;
		if (errno == EINVAL) /* a filesystem without it */
			return rename(tmp, path) ? -errno : 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

void lw_hs_write(struct lw_hindsight *h, struct hs_job *job)
{
	char tmp[PATH_MAX + 272], path[PATH_MAX + 272];
	struct stat st;
	int err;

	/* hidden, and not latwhy-*.lwy: no reader or cap ever takes it */
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", h->dir, job->name);
	err = lw_hs_job_fill(h, job);
	if (!err)
		err = write_file(h, job, tmp);
	if (!err)
		err = publish(h, job, tmp, path, sizeof(path));
	if (err) {
		unlink(tmp);
		fprintf(stderr, "latwhy: cannot write %s/%s: %s\n", h->dir, job->name,
			strerror(-err));
		goto cleanup;
	}
	sync_dir(h->dir);
	if (stat(path, &st))
		st.st_size = 0;
	lw_hindsight_prune(h->dir, h->o.max_files, h->o.max_bytes, job->name);
	fprintf(stderr, "latwhy: wrote %s (%llu bytes, reason %s)\n", path,
		(unsigned long long)st.st_size, job->reason);
	pthread_mutex_lock(&h->lock);
	h->written++;
	pthread_mutex_unlock(&h->lock);
	if (h->on_written)
		h->on_written(h->on_written_ctx, job->reason, path, (__u64)st.st_size);
cleanup:
	free(job->buf);
	free(job);
}

/* ---- the thread ---- */

static void *writer_main(void *arg)
{
	struct lw_hindsight *h = arg;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->job && !h->stopping)
			pthread_cond_wait(&h->cond, &h->lock);
		if (!h->job)
			break;
		pthread_mutex_unlock(&h->lock);
		lw_hs_write(h, h->job);
		pthread_mutex_lock(&h->lock);
		h->job = NULL;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* The thread takes no signal: SIGUSR1 and SIGINT are the tracing loop's. */
int lw_hs_thread_start(struct lw_hindsight *h)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&h->thread, NULL, writer_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	h->thread_started = true;
	return 0;
}

void lw_hs_submit(struct lw_hindsight *h, struct hs_job *job)
{
	if (h->o.sync) {
		lw_hs_write(h, job);
		return;
	}
	pthread_mutex_lock(&h->lock);
	h->job = job;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/* A capture being written is finished first: it is the incident's. */
void lw_hs_thread_stop(struct lw_hindsight *h)
{
	if (!h->thread_started)
		return;
	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	h->thread_started = false;
}

/* ---- the directory's cap ---- */

struct hs_file {
	char name[256];
	__u64 size;
	struct timespec mtime;
};

static int cmp_age(const void *a, const void *b)
{
	const struct hs_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The captures in dir: latwhy-*.lwy, regular files only. */
static int list_captures(const char *dir, struct hs_file **out, size_t *n)
{
	DIR *d = opendir(dir);
	struct hs_file *v = NULL, *p;
	struct dirent *de;
	size_t cap = 0;
	struct stat st;

	*n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (fnmatch("latwhy-*.lwy", de->d_name, FNM_PERIOD) ||
		    strlen(de->d_name) >= sizeof(v->name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			p = realloc(v, cap * sizeof(*v));
			if (!p) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = p;
		}
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", de->d_name);
		v[*n].size = (__u64)st.st_size;
		v[*n].mtime = st.st_mtim;
		(*n)++;
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), cmp_age);
	*out = v;
	return 0;
}

int lw_hindsight_prune(const char *dir, unsigned max_files, __u64 max_bytes, const char *keep)
{
	struct hs_file *v = NULL;
	__u64 bytes = 0;
	size_t n, left;
	int err, removed = 0;
	char path[PATH_MAX];

	err = list_captures(dir, &v, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		bytes += v[i].size;
	left = n;
	for (size_t i = 0; i < n && (left > max_files || bytes > max_bytes); i++) {
		if (keep && !strcmp(v[i].name, keep))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
		if (unlink(path))
			continue;
		fprintf(stderr, "latwhy: removed %s (the capture directory's cap)\n", path);
		left--;
		bytes -= v[i].size;
		removed++;
	}
	free(v);
	return removed;
}
