/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * http.h - the exporter's HTTP endpoint (libmicrohttpd): GET /metrics,
 * GET /healthz (200 "ok" while the tracer ticks, 503 and why not: health.h)
 * and a page at / linking to them; other paths 404, other methods 405.
 *
 * One internal polling thread (epoll) serves every connection, none of them
 * able to hold it: a bound on connections in all and from one address, a
 * timeout on each idle one, a bound on the memory of each (a request head
 * beyond it is refused with 431) and strict parsing (a malformed request
 * gets 400). Flooding, slow clients and junk from a few addresses thus
 * cost a scrape from another nothing but their share of that one thread;
 * tests/tools/test_http.py measures it.
 */
#ifndef LW_EXPORT_HTTP_H
#define LW_EXPORT_HTTP_H

#include "export/export.h"

#define LW_HTTP_MAX_CONN    256		/* in all */
#define LW_HTTP_MAX_PER_IP  8		/* Prometheus keeps one per target */
#define LW_HTTP_TIMEOUT_S   10		/* of an idle connection */
#define LW_HTTP_CONN_MEMORY (32 * 1024) /* a request's head, per connection */

struct lw_http;

/*
 * Listen on host (a numeric IPv4 or IPv6 address) and port, and serve x,
 * which must outlive the server. NULL with errno set: the bind's error
 * (EADDRINUSE) or the server's.
 */
struct lw_http *lw_http_start(struct lw_export *x, const char *host, unsigned port);
void lw_http_stop(struct lw_http *h);

#endif /* LW_EXPORT_HTTP_H */
