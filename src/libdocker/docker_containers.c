/* SPDX-License-Identifier: Apache-2.0 */
/* Containers: create, start, stop, remove, inspect, list, update (docker.h). */
#include "libdocker/docker.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

int docker_container_create(struct docker_client *d, const char *name, json_t *config, char **id,
                            ck_error_t *err)
{
        *id = NULL;
        cleanup_free char *q = http_escape(name);
        cleanup_free char *path = xasprintf("/containers/create?name=%s", q);
        cleanup_free char *what = xasprintf("create container `%s`", name);
        json_t *ans = NULL;
        if (docker_do_json(d, "POST", path, config, what, &ans, err) < 0)
                return -1;
        const char *v = json_string_value(json_object_get(ans, "Id"));
        if (v == NULL || *v == '\0') {
                json_decref(ans);
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "%s: no Id in the answer",
                                          what);
        }
        *id = xstrdup(v);
        json_decref(ans);
        return 0;
}

int docker_container_start(struct docker_client *d, const char *id, ck_error_t *err)
{
        cleanup_free char *q = http_escape(id);
        cleanup_free char *path = xasprintf("/containers/%s/start", q);
        cleanup_free char *what = xasprintf("start container `%s`", id);
        ck_error_t e = NULL;
        if (docker_do_json(d, "POST", path, NULL, what, NULL, &e) == 0)
                return 0;
        if (e->code == DOCKER_ERR_NOT_MODIFIED) { /* already running */
                ck_error_release(&e);
                return 0;
        }
        *err = e;
        return -1;
}

int docker_container_stop(struct docker_client *d, const char *id, int64_t timeout_s,
                          ck_error_t *err)
{
        if (timeout_s < 0)
                timeout_s = 0;
        cleanup_free char *q = http_escape(id);
        cleanup_free char *path = xasprintf("/containers/%s/stop?t=%lld", q, (long long)timeout_s);
        cleanup_free char *what = xasprintf("stop container `%s`", id);
        /* the engine answers once the container is gone: after the grace
         * period at most, then the kill */
        struct docker_request r = {.method = "POST", .path = path};
        r.timeout_ms = (timeout_s + 120) * 1000;
        ck_error_t e = NULL;
        if (docker_do(d, &r, what, NULL, NULL, NULL, NULL, &e) == 0)
                return 0;
        if (e->code == DOCKER_ERR_NOT_MODIFIED) { /* already stopped */
                ck_error_release(&e);
                return 0;
        }
        *err = e;
        return -1;
}

int docker_container_remove(struct docker_client *d, const char *id, bool force, ck_error_t *err)
{
        cleanup_free char *q = http_escape(id);
        cleanup_free char *path = xasprintf("/containers/%s?v=1%s", q, force ? "&force=1" : "");
        cleanup_free char *what = xasprintf("remove container `%s`", id);
        return docker_do_json(d, "DELETE", path, NULL, what, NULL, err);
}

int docker_container_inspect(struct docker_client *d, const char *id, struct docker_container *out,
                             ck_error_t *err)
{
        *out = (struct docker_container){0};
        cleanup_free char *q = http_escape(id);
        cleanup_free char *path = xasprintf("/containers/%s/json", q);
        cleanup_free char *what = xasprintf("inspect container `%s`", id);
        json_t *j = NULL;
        if (docker_do_json(d, "GET", path, NULL, what, &j, err) < 0)
                return -1;
        int rc = docker_decode_container(j, out, err);
        json_decref(j);
        return rc < 0 ? ck_error_wrap(err, "%s", what) : 0;
}

int docker_container_list(struct docker_client *d, bool all, json_t *filters,
                          struct docker_container_summary **out, size_t *n, ck_error_t *err)
{
        *out = NULL;
        *n = 0;
        cleanup_free char *f = filters ? json_dumps(filters, JSON_COMPACT) : NULL;
        cleanup_free char *fq = f ? http_escape(f) : NULL;
        cleanup_free char *path = xasprintf("/containers/json?all=%d%s%s", all ? 1 : 0,
                                            fq ? "&filters=" : "", fq ? fq : "");
        json_t *j = NULL;
        if (docker_do_json(d, "GET", path, NULL, "list containers", &j, err) < 0)
                return -1;
        int rc = docker_decode_container_list(j, out, n, err);
        json_decref(j);
        return rc < 0 ? ck_error_wrap(err, "list containers") : 0;
}

int docker_container_update(struct docker_client *d, const char *id, json_t *resources,
                            ck_error_t *err)
{
        cleanup_free char *q = http_escape(id);
        cleanup_free char *path = xasprintf("/containers/%s/update", q);
        cleanup_free char *what = xasprintf("update container `%s`", id);
        return docker_do_json(d, "POST", path, resources, what, NULL, err);
}

int docker_container_stats(struct docker_client *d, const char *id, struct docker_stats *out,
                           ck_error_t *err)
{
        *out = (struct docker_stats){0};
        cleanup_free char *q = http_escape(id);
        cleanup_free char *path = xasprintf("/containers/%s/stats?stream=false&one-shot=true", q);
        cleanup_free char *what = xasprintf("stats of container `%s`", id);
        json_t *j = NULL;
        if (docker_do_json(d, "GET", path, NULL, what, &j, err) < 0)
                return -1;
        int rc = docker_decode_stats(j, out, err);
        json_decref(j);
        return rc < 0 ? ck_error_wrap(err, "%s", what) : 0;
}
