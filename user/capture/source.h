/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* source.h - a capture as a record source: opened, its records through an engine,
 * its last node snapshot written out as a root for the node reader. */
#ifndef LW_CAPTURE_SOURCE_H
#define LW_CAPTURE_SOURCE_H

#include <stdbool.h>

#include "capture/capture.h"
#include "engine/engine.h"
#include "node/node.h"

struct lw_node;

struct lw_capture_source {
	const char *path;
	struct lw_capture_reader *r;
	struct lw_engine *e;
	char root[40]; /* the node snapshot's tree, "" when none */
	/* the first snapshot's node, as the recording began, where the
	 * capture has more than one (has_target false otherwise): the
	 * kernel's counters then, for what the recording added */
	struct lw_node start;
};

/* Open path, say its damage on stderr, check its ABI; one-line error and
 * -errno when it cannot be read. fn, when not NULL, sees each request the
 * engine takes in (report --json's lines). The engine knows the target from
 * the TARGET facts until a META record says otherwise. */
int lw_capture_source_open(struct lw_capture_source *l, const char *path, lw_request_fn fn,
			   void *ctx);
/* Feed every record to the engine (and to extra, when not NULL: another
 * sink of the same records) and write the node snapshot out. A file that
 * stops being readable is said, and what was read stays. */
void lw_capture_source_run(struct lw_capture_source *l, const struct lw_sink *extra);
/* The engine's summary and the node of the snapshot (0: read; -errno: no
 * snapshot, said on stderr). n is freed by the caller. */
int lw_capture_source_node(const struct lw_capture_source *l, const struct lw_summary *s,
			   struct lw_node *n);
void lw_capture_source_close(struct lw_capture_source *l);

/* A capture fact, NULL when absent or empty. */
const char *lw_capture_source_fact(const struct lw_capture_source *l, enum lw_capture_kind k,
				   const char *key);

#endif /* LW_CAPTURE_SOURCE_H */
