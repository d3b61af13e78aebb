/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A route table for the HTTP server (server/httpd.h), matched as
 * go-restful matches upstream's kubelet routes: a pattern of literal
 * segments and {parameters} ("/exec/{podNamespace}/{podID}/{containerName}"),
 * or a prefix ("/healthz/...": that path or anything below it).  The first
 * route whose pattern and method match wins; a path some route matches with
 * another method is a 405, else a 404.  Pure: no I/O.
 */
#ifndef CK_SERVER_ROUTER_H
#define CK_SERVER_ROUTER_H

#include <stdbool.h>
#include <stddef.h>

#define ROUTER_MAX_PARAMS 8

struct router_route {
        const char *method;  /* "GET", "POST", "PUT"; NULL: any.  GET also takes HEAD */
        const char *pattern; /* "/a/{x}/b", or "/a/..." for /a and below */
        void *handler;       /* the caller's, returned as is */
        unsigned flags;      /* the caller's */
};

struct router_match {
        const struct router_route *route;
        size_t n_params;
        char *params[ROUTER_MAX_PARAMS + 1]; /* new strings, in pattern order, NULL-terminated */
};

/* Matches path (decoded, clean) and method against routes[0..n).  Returns
 * 200 with *m filled (release it with router_match_release), 405 when only
 * the method differs, 404 when no pattern matches.  A parameter never
 * matches an empty segment. */
int router_match(const struct router_route *routes, size_t n, const char *method, const char *path,
                 struct router_match *m);
void router_match_release(struct router_match *m);

/* The methods the routes serve path with, as an Allow header value
 * ("GET, HEAD, POST": GET brings HEAD; a route for any method: ""), into
 * out[0..size).  Returns out. */
char *router_allowed(const struct router_route *routes, size_t n, const char *path, char *out,
                     size_t size);

#endif
