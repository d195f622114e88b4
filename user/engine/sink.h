/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sink.h - where a record source delivers its records.
 *
 * A source (the live tracer, a capture file) produces the records of
 * bpf/latwhy.h and knows nothing of what is done with them; every record
 * leaves it through one struct lw_sink. The engine is a sink; so are the
 * live view, a capture writer and an exporter. Several sinks are fed from
 * one source through a struct lw_fanout.
 *
 * Contract:
 * - record(): one record, rec[0..len) valid only for the call (copy what is
 *   kept). Returns 0 or a negative errno. A sink counts and reports its own
 *   failures (the engine puts them in its summary), so the source carries on
 *   with the next record after an error, except -ECANCELED: the sink can take
 *   no more (a capture file that cannot be written) and the source stops as
 *   it does on Ctrl-C, then fails.
 * - tick(): the source's interval ended at now_ns (CLOCK_MONOTONIC) and
 *   every snapshot of it (HIST, TICK, the evidence, META) was delivered: a
 *   consistent point to refresh a view or publish metrics. Not called after
 *   the last snapshots of a run: the source's return is the end. May be
 *   NULL; returns like record().
 */
#ifndef LW_SINK_H
#define LW_SINK_H

#include <stddef.h>
#include <linux/types.h>

struct lw_sink {
	void *ctx;
	int (*record)(void *ctx, const void *rec, size_t len);
	int (*tick)(void *ctx, __u64 now_ns);
};

/* Deliver one record; a sink without record() takes nothing. */
int lw_sink_record(const struct lw_sink *s, const void *rec, size_t len);
/* End an interval; a sink without tick() ignores it. */
int lw_sink_tick(const struct lw_sink *s, __u64 now_ns);

/* Enough for the engine, the live view, a capture writer and an exporter. */
#define LW_FANOUT_MAX 8

/* Several sinks behind one: each record and tick goes to every sink, in the
 * order they were added, even after one of them failed. */
struct lw_fanout {
	struct lw_sink sinks[LW_FANOUT_MAX];
	size_t n;
};

/* 0, or -ENOSPC when LW_FANOUT_MAX sinks are there already. */
int lw_fanout_add(struct lw_fanout *f, struct lw_sink s);

/*
 * The fan-out as one sink, valid while f is. Its record() and tick() return
 * -ECANCELED if any sink did, else the first sink's error, else 0.
 */
struct lw_sink lw_fanout_sink(struct lw_fanout *f);

#endif /* LW_SINK_H */
