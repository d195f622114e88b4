/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* live.h - the live view of a trace, as a sink. */
#ifndef LW_LIVE_H
#define LW_LIVE_H

#include <linux/types.h>

#include "latwhy.h"
#include "engine/engine.h"
#include "engine/sink.h"
#include "output/render.h"

/* Each interval's TICK kept, the view drawn from the engine's summary when
 * the interval ends. */
struct lw_live_view {
	struct lw_engine *eng;
	struct lw_render *out;
	struct lw_tick_rec tick; /* this interval's */
	__u64 prev_ts;		 /* the previous interval's end; 0: none */
	__u64 start_ns;		 /* the run's start, from META */
};

/* v as a sink drawing on out from eng; valid while v is. */
struct lw_sink lw_live_view_sink(struct lw_live_view *v, struct lw_engine *eng,
				 struct lw_render *out);

#endif /* LW_LIVE_H */
