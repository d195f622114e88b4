// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sink.c - delivering records to one sink or to several (sink.h).
 */
#include <errno.h>

#include "engine/sink.h"

int lw_sink_record(const struct lw_sink *s, const void *rec, size_t len)
{
	return s->record ? s->record(s->ctx, rec, len) : 0;
}

int lw_sink_tick(const struct lw_sink *s, __u64 now_ns)
{
	return s->tick ? s->tick(s->ctx, now_ns) : 0;
}

int lw_fanout_add(struct lw_fanout *f, struct lw_sink s)
{
	if (f->n == LW_FANOUT_MAX)
		return -ENOSPC;
	f->sinks[f->n++] = s;
	return 0;
}

/* A sink's wish to stop outranks another's error on the same record. */
static int fanout_merge(int ret, int err)
{
	if (ret == -ECANCELED || err == -ECANCELED)
		return -ECANCELED;
	return ret ? ret : err;
}

static int fanout_record(void *ctx, const void *rec, size_t len)
{
	struct lw_fanout *f = ctx;
	int ret = 0;

	for (size_t i = 0; i < f->n; i++)
		ret = fanout_merge(ret, lw_sink_record(&f->sinks[i], rec, len));
	return ret;
}

static int fanout_tick(void *ctx, __u64 now_ns)
{
	struct lw_fanout *f = ctx;
	int ret = 0;

	for (size_t i = 0; i < f->n; i++)
		ret = fanout_merge(ret, lw_sink_tick(&f->sinks[i], now_ns));
	return ret;
}

struct lw_sink lw_fanout_sink(struct lw_fanout *f)
{
	return (struct lw_sink){.ctx = f, .record = fanout_record, .tick = fanout_tick};
}
