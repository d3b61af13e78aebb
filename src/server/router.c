/* SPDX-License-Identifier: Apache-2.0 */
#include "server/router.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool method_ok(const char *want, const char *method)
{
        if (want == NULL || strcmp(want, method) == 0)
                return true;
        return strcmp(want, "GET") == 0 && strcmp(method, "HEAD") == 0;
}

/* The pattern's segments against the path's; params filled on a match. */
static bool pattern_match(const char *pat, const char *path, struct router_match *m)
{
        size_t plen = strlen(pat);
        if (plen >= 4 && strcmp(pat + plen - 4, "/...") == 0) {
                size_t n = plen - 4;
                return strncmp(path, pat, n) == 0 && (path[n] == '\0' || path[n] == '/');
        }
        m->n_params = 0;
        const char *p = pat, *q = path;
        for (;;) {
                if (*p != '/' || *q != '/')
                        return *p == '\0' && *q == '\0';
                p++;
                q++;
                const char *pe = strchrnul(p, '/');
                const char *qe = strchrnul(q, '/');
                size_t pn = (size_t)(pe - p), qn = (size_t)(qe - q);
                if (pn >= 2 && p[0] == '{' && p[pn - 1] == '}') {
                        if (qn == 0 || m->n_params == ROUTER_MAX_PARAMS)
                                return false;
                        m->params[m->n_params++] = xstrndup(q, qn);
                } else if (pn != qn || memcmp(p, q, pn) != 0) {
                        return false;
                }
                p = pe;
                q = qe;
        }
}

int router_match(const struct router_route *routes, size_t n, const char *method, const char *path,
                 struct router_match *m)
{
        memset(m, 0, sizeof(*m));
        bool path_known = false;
        for (size_t i = 0; i < n; i++) {
                struct router_match t = {0};
                bool ok = pattern_match(routes[i].pattern, path, &t);
                if (ok && method_ok(routes[i].method, method)) {
                        *m = t;
                        m->route = &routes[i];
                        return 200;
                }
                router_match_release(&t);
                path_known = path_known || ok;
        }
        return path_known ? 405 : 404;
}

void router_match_release(struct router_match *m)
{
        for (size_t i = 0; i < m->n_params; i++) {
                free(m->params[i]);
                m->params[i] = NULL;
        }
        m->n_params = 0;
}

char *router_allowed(const struct router_route *routes, size_t n, const char *path, char *out,
                     size_t size)
{
        static const char *const order[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};
        bool seen[sizeof(order) / sizeof(order[0])] = {false};
        for (size_t i = 0; i < n; i++) {
                struct router_match t = {0};
                bool ok = pattern_match(routes[i].pattern, path, &t);
                router_match_release(&t);
                if (!ok || routes[i].method == NULL)
                        continue;
                for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
                        if (strcmp(routes[i].method, order[k]) == 0 ||
                            (k == 1 && strcmp(routes[i].method, "GET") == 0))
                                seen[k] = true;
        }
        size_t o = 0;
        out[0] = '\0';
        for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
                if (seen[k] && o + strlen(order[k]) + 3 < size)
                        o += (size_t)snprintf(out + o, size - o, "%s%s", o ? ", " : "", order[k]);
        return out;
}
