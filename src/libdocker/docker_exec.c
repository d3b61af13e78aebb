/* SPDX-License-Identifier: Apache-2.0 */
/* Execs: create, run attached, inspect; the stream demultiplexer (docker.h). */
#include "libdocker/docker.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

int docker_exec_create(struct docker_client *d, const char *id,
                       const struct docker_exec_config *cfg, char **exec_id, ck_error_t *err)
{
        *exec_id = NULL;
        json_t *cmd = json_array();
        for (const char *const *a = cfg->cmd; a && *a; a++)
                json_array_append_new(cmd, json_string(*a));
        json_t *body = json_pack("{s:b,s:b,s:b,s:b,s:o}", "AttachStdin", cfg->attach_stdin,
                                 "AttachStdout", cfg->attach_stdout, "AttachStderr",
                                 cfg->attach_stderr, "Tty", cfg->tty, "Cmd", cmd);
        cleanup_free char *q = http_escape(id);
        cleanup_free char *path = xasprintf("/containers/%s/exec", q);
        cleanup_free char *what = xasprintf("create exec in container `%s`", id);
        json_t *ans = NULL;
        int rc = docker_do_json(d, "POST", path, body, what, &ans, err);
        json_decref(body);
        if (rc < 0)
                return -1;
        const char *v = json_string_value(json_object_get(ans, "Id"));
        if (v == NULL || *v == '\0') {
                json_decref(ans);
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "%s: no Id in the answer",
                                          what);
        }
        *exec_id = xstrdup(v);
        json_decref(ans);
        return 0;
}

void docker_exec_output_clear(struct docker_exec_output *o)
{
        free(o->out);
        free(o->err);
        size_t cap = o->cap;
        *o = (struct docker_exec_output){.cap = cap};
}

int docker_demux_feed(struct docker_demux *m, const char *buf, size_t n, docker_demux_fn fn,
                      void *ctx)
{
        while (n > 0) {
                if (m->left == 0 && m->head_len < sizeof(m->head)) {
                        size_t take = sizeof(m->head) - m->head_len;
                        if (take > n)
                                take = n;
                        memcpy(m->head + m->head_len, buf, take);
                        m->head_len += take;
                        buf += take;
                        n -= take;
                        if (m->head_len < sizeof(m->head))
                                return 0;
                        if (m->head[0] > 3)
                                return -1;
                        m->stream = m->head[0];
                        m->left = (uint32_t)m->head[4] << 24 | (uint32_t)m->head[5] << 16 |
                                  (uint32_t)m->head[6] << 8 | (uint32_t)m->head[7];
                        if (m->left == 0)
                                m->head_len = 0;
                        continue;
                }
                size_t take = n < m->left ? n : m->left;
                fn(ctx, m->stream, buf, take);
                buf += take;
                n -= take;
                m->left -= (uint32_t)take;
                if (m->left == 0)
                        m->head_len = 0;
        }
        return 0;
}

struct exec_collect {
        struct docker_demux demux;
        struct docker_exec_output *o;
        char sys[512]; /* the engine's own error (stream 3), cut */
        size_t sys_len;
};

static void keep(struct docker_exec_output *o, char **dst, size_t *dlen, const char *data,
                 size_t len)
{
        size_t room = o->cap > *dlen ? o->cap - *dlen : 0;
        if (len > room) {
                o->truncated = true;
                len = room;
        }
        if (len == 0)
                return;
        *dst = xrealloc(*dst, *dlen + len + 1);
        memcpy(*dst + *dlen, data, len);
        *dlen += len;
        (*dst)[*dlen] = '\0';
}

static void collect_piece(void *ctx, int stream, const char *data, size_t len)
{
        struct exec_collect *c = ctx;
        struct docker_exec_output *o = c->o;
        if (stream == 3) {
                size_t room = sizeof(c->sys) - 1 - c->sys_len;
                if (len > room)
                        len = room;
                memcpy(c->sys + c->sys_len, data, len);
                c->sys_len += len;
                c->sys[c->sys_len] = '\0';
        } else if (stream == 2)
                keep(o, &o->err, &o->err_len, data, len);
        else
                keep(o, &o->out, &o->out_len, data, len);
}

static int collect_chunk(void *ctx, const char *data, size_t len, ck_error_t *err)
{
        struct exec_collect *c = ctx;
        if (docker_demux_feed(&c->demux, data, len, collect_piece, c) < 0)
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL,
                                          "the output stream is not multiplexed");
        return 0;
}

int docker_exec_run(struct docker_client *d, const char *exec_id, int64_t timeout_ms,
                    struct docker_exec_output *o, ck_error_t *err)
{
        cleanup_free char *q = http_escape(exec_id);
        cleanup_free char *path = xasprintf("/exec/%s/start", q);
        cleanup_free char *what = xasprintf("start exec `%s`", exec_id);
        static const char body[] = "{\"Detach\":false,\"Tty\":false}";
        struct docker_request r = {
            .method = "POST",
            .path = path,
            .body = body,
            .body_len = sizeof(body) - 1,
            .timeout_ms = timeout_ms,
        };
        struct exec_collect c = {.o = o};
        if (docker_do(d, &r, what, collect_chunk, &c, NULL, NULL, err) < 0)
                return -1;
        while (c.sys_len > 0 && c.sys[c.sys_len - 1] == '\n')
                c.sys[--c.sys_len] = '\0';
        if (c.sys_len > 0)
                return ck_error_make_code(err, DOCKER_ERR_SERVER, "%s: %s", what, c.sys);
        return 0;
}

int docker_exec_inspect(struct docker_client *d, const char *exec_id, struct docker_exec_state *out,
                        ck_error_t *err)
{
        cleanup_free char *q = http_escape(exec_id);
        cleanup_free char *path = xasprintf("/exec/%s/json", q);
        cleanup_free char *what = xasprintf("inspect exec `%s`", exec_id);
        json_t *j = NULL;
        if (docker_do_json(d, "GET", path, NULL, what, &j, err) < 0)
                return -1;
        int rc = docker_decode_exec(j, out, err);
        json_decref(j);
        return rc < 0 ? ck_error_wrap(err, "%s", what) : 0;
}

static int resize(struct docker_client *d, const char *kind, const char *id, unsigned width,
                  unsigned height, ck_error_t *err)
{
        cleanup_free char *q = http_escape(id);
        cleanup_free char *path = xasprintf("/%s/%s/resize?h=%u&w=%u", kind, q, height, width);
        cleanup_free char *what =
            xasprintf("resize the TTY of %s `%s`", kind[0] == 'e' ? "exec" : "container", id);
        struct docker_request r = {.method = "POST", .path = path};
        return docker_do(d, &r, what, NULL, NULL, NULL, NULL, err);
}

int docker_exec_resize(struct docker_client *d, const char *exec_id, unsigned width,
                       unsigned height, ck_error_t *err)
{
        return resize(d, "exec", exec_id, width, height, err);
}

int docker_container_resize(struct docker_client *d, const char *id, unsigned width,
                            unsigned height, ck_error_t *err)
{
        return resize(d, "containers", id, width, height, err);
}
