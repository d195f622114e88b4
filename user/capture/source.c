// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* source.c - a capture as a record source (see source.h), for report and diff. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/source.h"
#include "node/node.h"

const char *lw_capture_source_fact(const struct lw_capture_source *l, enum lw_capture_kind k,
				   const char *key)
{
	const char *v = lw_capture_reader_fact(l->r, k, key);

	return v && *v ? v : NULL;
}

/* What the reader had to skip or could not find, one line each; the
 * reader's warnings name the cut chunk and what it held. */
static void load_damage(const struct lw_capture_source *l)
{
	const struct lw_capture_info *in = lw_capture_reader_info(l->r);

	for (size_t i = 0; i < lw_capture_reader_nr_warnings(l->r); i++)
		fprintf(stderr, "latwhy: %s: %s\n", l->path, lw_capture_reader_warning(l->r, i));
	if (in->truncated || !in->has_end)
		fprintf(stderr,
			"latwhy: %s: the capture was cut short (no end record): reporting its %llu "
			"records; at most the last flush interval (1 s) before the cut is lost\n",
			l->path, (unsigned long long)in->records);
}

/* The TARGET facts' pid and comm, for a capture whose records hold no META
 * record (capped before the first periodic snapshot). A pid fact that is
 * not a number is left out, never read as 0 or a part of it. */
static void load_target(struct lw_capture_source *l)
{
	const char *pid = lw_capture_source_fact(l, LW_CHUNK_TARGET, "pid");
	unsigned long v;
	char *end;

	if (!pid)
		return;
	errno = 0;
	v = strtoul(pid, &end, 10);
	if (errno || *end || !v || v > INT_MAX)
		return;
	lw_engine_set_target(l->e, (__u32)v, lw_capture_source_fact(l, LW_CHUNK_TARGET, "comm"));
}

int lw_capture_source_open(struct lw_capture_source *l, const char *path, lw_request_fn fn,
			   void *ctx)
{
	char err[256];
	__u32 abi;

	memset(l, 0, sizeof(*l));
	l->path = path;
	l->r = lw_capture_reader_open(path, err, sizeof(err));
	if (!l->r) {
		fprintf(stderr, "latwhy: %s: %s\n", path, err);
		return -EINVAL;
	}
	load_damage(l);
	abi = lw_capture_reader_info(l->r)->abi_version;
	/* ABI 1's and 2's requests are widened by the reader (no quota
	 * bucket in 1, no memory buckets in either); 3's records are 4's
	 * (which added LW_REC_TIER alone) */
	if (abi < 1 || abi > LW_ABI_VERSION) {
		fprintf(stderr, "latwhy: %s: its records are of ABI %u, this latwhy reads %u\n",
			path, abi, LW_ABI_VERSION);
		return -EPROTO;
	}
	l->e = lw_engine_new();
	if (!l->e) {
		fprintf(stderr, "latwhy: out of memory\n");
		return -ENOMEM;
	}
	load_target(l);
	if (fn)
		lw_engine_on_request(l->e, fn, ctx);
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* The snapshot's tree, removed (it was made here, with mkdtemp). */
static void rm_root(struct lw_capture_source *l)
{
	if (l->root[0])
		nftw(l->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	l->root[0] = '\0';
}

/* The first snapshot, read as a node of the target, then removed: the
 * quota finding counts what the recording added to the cgroups' counters. */
static void load_start(struct lw_capture_source *l)
{
	const char *pid = lw_capture_source_fact(l, LW_CHUNK_TARGET, "pid");
	char dir[40] = "/tmp/latwhy-node0.XXXXXX";

	if (!mkdtemp(dir))
		return;
	if (lw_capture_node_extract_at(l->r, 0, dir) ||
	    lw_node_read(&l->start, dir, pid ? atoi(pid) : 0))
		l->start.has_target = false;
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void lw_capture_source_run(struct lw_capture_source *l, const struct lw_sink *extra)
{
	size_t nodes = lw_capture_reader_nr_nodes(l->r);
	const void *rec;
	size_t len;
	int ret;

	while (!(ret = lw_capture_reader_next_record(l->r, &rec, &len))) {
		lw_engine_feed(l->e, rec, len); /* a bad record is counted there */
		if (extra)
			lw_sink_record(extra, rec, len);
	}
	if (ret < 0)
		fprintf(stderr, "latwhy: %s: read failed: %s; reporting what was read\n", l->path,
			strerror(-ret));
	/* the last snapshot: the end's, which a live summary judges */
	snprintf(l->root, sizeof(l->root), "/tmp/latwhy-node.XXXXXX");
	if (!nodes || !mkdtemp(l->root)) {
		l->root[0] = '\0';
	} else if (lw_capture_node_extract_at(l->r, nodes - 1, l->root)) {
		rm_root(l);
	}
	if (!l->root[0])
		fprintf(stderr, "latwhy: %s: no node snapshot: no findings\n", l->path);
	else if (nodes > 1)
		load_start(l);
}

int lw_capture_source_node(const struct lw_capture_source *l, const struct lw_summary *s,
			   struct lw_node *n)
{
	int pid = (s->flags & LW_META_TARGET_EXITED) ? 0 : s->pid, err;

	memset(n, 0, sizeof(*n));
	if (!l->root[0])
		return -ENOENT;
	err = lw_node_read(n, l->root, pid);
	if (err == -ESRCH && pid) { /* no target in it: node-wide facts stand */
		lw_node_free(n);
		err = lw_node_read(n, l->root, 0);
	}
	return err;
}

void lw_capture_source_close(struct lw_capture_source *l)
{
	rm_root(l);
	lw_node_free(&l->start);
	lw_engine_free(l->e);
	lw_capture_reader_close(l->r);
	memset(l, 0, sizeof(*l));
}
