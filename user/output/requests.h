/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests.h - one NDJSON line per slow request the engine takes in.
 *
 * The lines are an output of the engine (lw_engine_on_request()), not of a
 * source: a live trace and a capture replayed through the engine print the
 * same ones, and a record the engine refuses prints none.
 */
#ifndef LW_REQUESTS_H
#define LW_REQUESTS_H

#include <stdio.h>

#include "engine/engine.h"

/* The request's line on f, flushed: a reader of a live trace sees it at once. */
void lw_request_write(FILE *f, const struct lw_request *req);

/* An lw_request_fn writing each line on ctx, a FILE *:
 * lw_engine_on_request(e, lw_requests_on_request, stdout). */
void lw_requests_on_request(void *ctx, const struct lw_request *req);

#endif /* LW_REQUESTS_H */
