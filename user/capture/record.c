// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record.c - a capture written from a live source (see record.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "latwhy.h"
#include "capture/record.h"

static int rec_record(void *ctx, const void *rec, size_t len)
{
	struct lw_capture_rec *c = ctx;
	__u32 type;
	int err;

	if (len < sizeof(type))
		return 0; /* not a record: nothing to keep */
	memcpy(&type, rec, sizeof(type));
	if (type == LW_REC_REQUEST)
		c->slow++;
	else if (type == LW_REC_TICK && len >= sizeof(struct lw_tick_rec))
		c->requests += ((const struct lw_tick_rec *)rec)->requests;
	else if (type == LW_REC_META && len >= sizeof(struct lw_meta_rec))
		c->elapsed_ns = ((const struct lw_meta_rec *)rec)->duration_ns;
	err = lw_capture_writer_append(c->w, rec, len);
	if (err && !c->err)
		c->err = err;
	return err ? -ECANCELED : 0;
}

static int rec_tick(void *ctx, __u64 now_ns)
{
	struct lw_capture_rec *c = ctx;
	int err = lw_capture_writer_flush(c->w);

	if (err && !c->err)
		c->err = err;
	return err ? -ECANCELED : 0;
}

struct lw_sink lw_capture_rec_sink(struct lw_capture_rec *c)
{
	return (struct lw_sink){.ctx = c, .record = rec_record, .tick = rec_tick};
}

int lw_capture_rec_open(struct lw_capture_rec *c, const char *path, bool force, __u64 max_size,
			int pid, const struct lw_capture_kv *opts, size_t n)
{
	const struct lw_capture_opts co = {
		.latwhy_version = LW_VERSION,
		.abi_version = LW_ABI_VERSION,
		.overwrite = force,
		.max_size = max_size,
	};
	int err;

	memset(c, 0, sizeof(*c));
	c->w = lw_capture_writer_open(path, &co);
	if (!c->w) {
		err = -errno;
		if (err == -EEXIST)
			fprintf(stderr, "latwhy: %s exists (--force replaces it)\n", path);
		else
			fprintf(stderr, "latwhy: cannot create %s: %s\n", path, strerror(-err));
		return err;
	}
	err = lw_capture_writer_add_host(c->w, "/");
	if (!err)
		err = lw_capture_writer_add_target(c->w, "/", pid);
	if (!err)
		err = lw_capture_writer_add_facts(c->w, LW_CHUNK_OPTIONS, opts, n);
	if (!err)
		err = lw_capture_writer_add_node(c->w, "start", "/", pid);
	if (!err)
		err = lw_capture_writer_flush(c->w);
	if (err) {
		fprintf(stderr, "latwhy: cannot write %s: %s\n", path, strerror(-err));
		lw_capture_writer_close(c->w);
		c->w = NULL;
	}
	return err;
}

int lw_capture_rec_close(struct lw_capture_rec *c, int pid)
{
	int err;

	if (!c->w)
		return c->err;
	/* the node the summary is judged on, as a live trace's end reads it */
	if (!c->err)
		c->err = lw_capture_writer_add_node(c->w, "end", "/", pid);
	err = lw_capture_writer_close(c->w);
	c->w = NULL;
	return c->err ? c->err : err;
}
