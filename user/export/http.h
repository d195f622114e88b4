/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * http.h - the exporter's HTTP endpoint (libmicrohttpd): GET /metrics and a
 * page at / linking to it; other paths 404, other methods 405.
 *
 * One internal polling thread serves every connection, with a bound on
 * connections and a timeout on each, so slow or many clients cost neither
 * the tracing loop nor each other more than those bounds.
 */
#ifndef LW_EXPORT_HTTP_H
#define LW_EXPORT_HTTP_H

#include "export/export.h"

#define LW_HTTP_MAX_CONN  64
#define LW_HTTP_TIMEOUT_S 10

struct lw_http;

/*
 * Listen on host (a numeric IPv4 or IPv6 address) and port, and serve x,
 * which must outlive the server. NULL with errno set: the bind's error
 * (EADDRINUSE) or the server's.
 */
struct lw_http *lw_http_start(struct lw_export *x, const char *host, unsigned port);
void lw_http_stop(struct lw_http *h);

#endif /* LW_EXPORT_HTTP_H */
