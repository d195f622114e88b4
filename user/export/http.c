// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * http.c - /metrics and /healthz over libmicrohttpd.
 *
 * latwhy binds the socket itself, so a port in use is its errno, said in
 * one line by the caller, not a library log; libmicrohttpd then serves it
 * from its own polling thread.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "export/health.h"
#include "export/http.h"

#define CT_TEXT "text/plain; version=0.0.4; charset=utf-8"

static const char page[] = "<html><head><title>latwhy</title></head><body>\n"
			   "<h1>latwhy serve</h1>\n"
			   "<p><a href=\"/metrics\">Metrics</a></p>\n"
			   "<p><a href=\"/healthz\">Health</a></p>\n"
			   "</body></html>\n";

struct lw_http {
	struct MHD_Daemon *d;
	struct lw_export *x;
	int fd;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, struct MHD_Response *r,
			     const char *type)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO; /* out of memory: libmicrohttpd closes it */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static struct MHD_Response *text(const char *s)
{
	return MHD_create_response_from_buffer(strlen(s), (void *)s, MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result serve_metrics(struct lw_http *h, struct MHD_Connection *c)
{
	size_t len;
	char *buf = lw_export_render(h->x, &len);

	if (!buf)
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, text("cannot render metrics\n"),
			     "text/plain");
	return reply(c, MHD_HTTP_OK,
		     MHD_create_response_from_buffer_with_free_callback(len, buf, free), CT_TEXT);
}

/* 200 "ok" while the tracer ticks, 503 and why not: what a liveness probe
 * needs, which an answer from this thread alone would not tell. */
static enum MHD_Result serve_health(struct lw_http *h, struct MHD_Connection *c)
{
	char why[160], *body;
	bool ok = !lw_health_check(lw_health_of(h->x), lw_health_now_ns(), why, sizeof(why));

	if (asprintf(&body, "%s\n", ok ? "ok" : why) < 0)
		return MHD_NO;
	return reply(c, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
		     MHD_create_response_from_buffer_with_free_callback(strlen(body), body, free),
		     "text/plain; charset=utf-8");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **con_cls)
{
	static int first;

	/* the first call has the headers only: a body, if any, is ignored */
	if (!*con_cls) {
		*con_cls = &first;
		return MHD_YES;
	}
	if (*upload_len) {
		*upload_len = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/metrics") && strcmp(url, "/") && strcmp(url, "/healthz"))
		return reply(c, MHD_HTTP_NOT_FOUND, text("not found\n"), "text/plain");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, text("method not allowed\n"),
			     "text/plain");
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, text(page), "text/html; charset=utf-8");
	if (!strcmp(url, "/healthz"))
		return serve_health(cls, c);
	return serve_metrics(cls, c);
}

/* A listening socket on host:port: its fd, or -errno. */
static int listen_on(const char *host, unsigned port)
{
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				 .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai = NULL;
	char svc[16];
	int fd = -1, one = 1, err;

	snprintf(svc, sizeof(svc), "%u", port);
	if (getaddrinfo(host, svc, &hints, &ai))
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, SOMAXCONN)) {
		err = -errno;
		goto cleanup;
	}
	freeaddrinfo(ai);
	return fd;
cleanup:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return err;
}

struct lw_http *lw_http_start(struct lw_export *x, const char *host, unsigned port)
{
	struct lw_http *h = calloc(1, sizeof(*h));
	int err = -ENOMEM;

	if (!h)
		goto cleanup;
	h->x = x;
	h->fd = listen_on(host, port);
	if (h->fd < 0) {
		err = h->fd;
		goto cleanup;
	}
	/* per-address bound: a full one refuses that address's next
	 * connection at once (accepted and closed) while a full total stops
	 * accepting, which would queue everyone's scrapes behind it */
	h->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_CONNECTION_LIMIT,
				(unsigned)LW_HTTP_MAX_CONN, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned)LW_HTTP_MAX_PER_IP, MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned)LW_HTTP_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)LW_HTTP_CONN_MEMORY, MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
				MHD_OPTION_END);
	if (!h->d) {
		err = errno ? -errno : -EIO;
		close(h->fd);
		goto cleanup;
	}
	return h;
cleanup:
	free(h);
	errno = -err;
	return NULL;
}

void lw_http_stop(struct lw_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d); /* closes the listening socket it was given */
	free(h);
}
