/* SPDX-License-Identifier: Apache-2.0 */
/* Images: list, inspect, pull, remove (docker.h). */
#include "libdocker/docker.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

int docker_image_list(struct docker_client *d, struct docker_image **out, size_t *n,
                      ck_error_t *err)
{
        *out = NULL;
        *n = 0;
        json_t *j = NULL;
        if (docker_do_json(d, "GET", "/images/json", NULL, "list images", &j, err) < 0)
                return -1;
        int rc = docker_decode_image_list(j, out, n, err);
        json_decref(j);
        return rc < 0 ? ck_error_wrap(err, "list images") : 0;
}

int docker_image_inspect(struct docker_client *d, const char *ref, struct docker_image *out,
                         ck_error_t *err)
{
        *out = (struct docker_image){0};
        cleanup_free char *q = http_escape(ref);
        cleanup_free char *path = xasprintf("/images/%s/json", q);
        cleanup_free char *what = xasprintf("inspect image `%s`", ref);
        json_t *j = NULL;
        if (docker_do_json(d, "GET", path, NULL, what, &j, err) < 0)
                return -1;
        int rc = docker_decode_image(j, out, err);
        json_decref(j);
        return rc < 0 ? ck_error_wrap(err, "%s", what) : 0;
}

/* The progress stream: one JSON object per line; a line that reports an
 * error fails the pull. */
struct pull_stream {
        char *line;
        size_t len, cap;
};

static int pull_chunk(void *ctx, const char *data, size_t len, ck_error_t *err)
{
        struct pull_stream *p = ctx;
        for (size_t i = 0; i < len; i++) {
                if (data[i] != '\n') {
                        if (p->len == p->cap) {
                                if (p->cap >= 1024 * 1024)
                                        return ck_error_make_code(err, DOCKER_ERR_PROTOCOL,
                                                                  "a progress line over 1 MiB");
                                p->cap = p->cap ? p->cap * 2 : 1024;
                                p->line = xrealloc(p->line, p->cap);
                        }
                        p->line[p->len++] = data[i];
                        continue;
                }
                int rc = docker_decode_pull_progress(p->line, p->len, err);
                p->len = 0;
                if (rc < 0)
                        return -1;
        }
        return 0;
}

/* Splits ref into the fromImage and tag query values: "name@sha256:..."
 * keeps the digest in fromImage; "name:tag" splits at the last ':' after
 * the last '/'; no tag: "latest", as the CLI pulls. */
static void split_ref(const char *ref, char **from, char **tag)
{
        if (strchr(ref, '@')) {
                *from = xstrdup(ref);
                *tag = NULL;
                return;
        }
        const char *slash = strrchr(ref, '/');
        const char *colon = strrchr(slash ? slash : ref, ':');
        if (colon) {
                *from = xstrndup(ref, (size_t)(colon - ref));
                *tag = xstrdup(colon + 1);
        } else {
                *from = xstrdup(ref);
                *tag = xstrdup("latest");
        }
}

int docker_image_pull(struct docker_client *d, const char *ref, const char *registry_auth,
                      int64_t timeout_ms, ck_error_t *err)
{
        cleanup_free char *from = NULL, *tag = NULL;
        split_ref(ref, &from, &tag);
        cleanup_free char *qf = http_escape(from);
        cleanup_free char *qt = tag ? http_escape(tag) : NULL;
        cleanup_free char *path =
            xasprintf("/images/create?fromImage=%s%s%s", qf, qt ? "&tag=" : "", qt ? qt : "");
        cleanup_free char *what = xasprintf("pull image `%s`", ref);
        struct http_field auth = {"X-Registry-Auth", registry_auth};
        struct docker_request r = {
            .method = "POST",
            .path = path,
            .headers = registry_auth ? &auth : NULL,
            .n_headers = registry_auth ? 1 : 0,
            .timeout_ms = timeout_ms > 0 ? timeout_ms : -1,
        };
        struct pull_stream p = {0};
        int rc = docker_do(d, &r, what, pull_chunk, &p, NULL, NULL, err);
        if (rc == 0 && p.len > 0 && docker_decode_pull_progress(p.line, p.len, err) < 0)
                rc = ck_error_wrap(err, "%s", what);
        free(p.line);
        return rc;
}

int docker_image_remove(struct docker_client *d, const char *ref, bool force, ck_error_t *err)
{
        cleanup_free char *q = http_escape(ref);
        cleanup_free char *path = xasprintf("/images/%s?noprune=0%s", q, force ? "&force=1" : "");
        cleanup_free char *what = xasprintf("remove image `%s`", ref);
        return docker_do_json(d, "DELETE", path, NULL, what, NULL, err);
}
