// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* live.c - the live view as a sink (see live.h). */
#include <string.h>

#include "output/live.h"

static int live_record(void *ctx, const void *rec, size_t len)
{
	struct lw_live_view *v = ctx;
	struct lw_meta_rec m;
	__u32 type;

	if (len < sizeof(type))
		return 0; /* the engine counts it */
	memcpy(&type, rec, sizeof(type));
	if (type == LW_REC_TICK && len >= sizeof(v->tick)) {
		v->prev_ts = v->tick.ts_ns;
		memcpy(&v->tick, rec, sizeof(v->tick));
	} else if (type == LW_REC_META && len >= sizeof(m)) {
		memcpy(&m, rec, sizeof(m));
		v->start_ns = m.start_ns;
	}
	return 0;
}

static int live_tick(void *ctx, __u64 now_ns)
{
	struct lw_live_view *v = ctx;
	struct lw_summary s;

	lw_engine_summarize(v->eng, &s);
	lw_render_live(v->out, &s, &v->tick,
		       v->tick.ts_ns - (v->prev_ts ? v->prev_ts : v->start_ns));
	return 0;
}

struct lw_sink lw_live_view_sink(struct lw_live_view *v, struct lw_engine *eng,
				 struct lw_render *out)
{
	memset(v, 0, sizeof(*v));
	v->eng = eng;
	v->out = out;
	return (struct lw_sink){.ctx = v, .record = live_record, .tick = live_tick};
}
