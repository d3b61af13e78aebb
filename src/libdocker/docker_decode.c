/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The engine's JSON answers decoded into the structs of docker.h.  Pure
 * (fuzzed by test/fuzz/fuzz_docker.c): a field of the wrong type is an
 * error naming it, a missing optional field is its zero value.
 */
#include "libdocker/docker.h"
#include "util/gotime.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A string field: a copy (NULL when absent or null); -1 when of another
 * type. */
static int get_str(const json_t *j, const char *key, bool required, char **out, ck_error_t *err)
{
        *out = NULL;
        const json_t *v = json_object_get(j, key);
        if (v == NULL || json_is_null(v)) {
                if (required)
                        return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "field %s missing",
                                                  key);
                return 0;
        }
        if (!json_is_string(v))
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "field %s: not a string", key);
        *out = xstrndup(json_string_value(v), json_string_length(v));
        return 0;
}

static int need_object(const json_t *j, ck_error_t *err)
{
        if (!json_is_object(j))
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "not a JSON object");
        return 0;
}

int docker_decode_time(const json_t *v, int64_t *ns)
{
        *ns = 0;
        if (v == NULL || json_is_null(v))
                return 0;
        if (!json_is_string(v))
                return -1;
        size_t len = json_string_length(v);
        if (len == 0)
                return 0;
        struct go_time t;
        if (!go_time_parse(json_string_value(v), len, &t))
                return -1;
        if (t.sec <= GO_ZERO_TIME_SEC)
                return 0;
        /* beyond int64 nanoseconds (year 2262): the largest */
        if (t.sec > INT64_MAX / 1000000000 - 1 || t.sec < INT64_MIN / 1000000000 + 1) {
                *ns = t.sec > 0 ? INT64_MAX : INT64_MIN;
                return 0;
        }
        *ns = t.sec * 1000000000 + t.nsec;
        return 0;
}

int docker_decode_version(const json_t *j, struct docker_version *out, ck_error_t *err)
{
        *out = (struct docker_version){0};
        if (need_object(j, err) < 0 || get_str(j, "Version", true, &out->version, err) < 0 ||
            get_str(j, "ApiVersion", true, &out->api_version, err) < 0 ||
            get_str(j, "Os", false, &out->os, err) < 0 ||
            get_str(j, "Arch", false, &out->arch, err) < 0 ||
            get_str(j, "KernelVersion", false, &out->kernel, err) < 0) {
                docker_version_clear(out);
                return -1;
        }
        return 0;
}

int docker_decode_info(const json_t *j, struct docker_info *out, ck_error_t *err)
{
        *out = (struct docker_info){0};
        if (need_object(j, err) < 0 ||
            get_str(j, "CgroupDriver", false, &out->cgroup_driver, err) < 0 ||
            get_str(j, "CgroupVersion", false, &out->cgroup_version, err) < 0 ||
            get_str(j, "DockerRootDir", false, &out->docker_root_dir, err) < 0 ||
            get_str(j, "Driver", false, &out->driver, err) < 0 ||
            get_str(j, "LoggingDriver", false, &out->logging_driver, err) < 0) {
                docker_info_clear(out);
                return -1;
        }
        return 0;
}

/* An object field: borrowed, NULL when absent or null; -1 when of another
 * type. */
static int get_obj(const json_t *j, const char *key, const json_t **out, ck_error_t *err)
{
        *out = NULL;
        const json_t *v = json_object_get(j, key);
        if (v == NULL || json_is_null(v))
                return 0;
        if (!json_is_object(v))
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "field %s: not an object", key);
        *out = v;
        return 0;
}

static int get_bool(const json_t *j, const char *key, bool *out, ck_error_t *err)
{
        *out = false;
        const json_t *v = json_object_get(j, key);
        if (v == NULL || json_is_null(v))
                return 0;
        if (!json_is_boolean(v))
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "field %s: not a boolean", key);
        *out = json_is_true(v);
        return 0;
}

static int get_int(const json_t *j, const char *key, int64_t *out, ck_error_t *err)
{
        *out = 0;
        const json_t *v = json_object_get(j, key);
        if (v == NULL || json_is_null(v))
                return 0;
        if (!json_is_integer(v))
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "field %s: not an integer",
                                          key);
        *out = json_integer_value(v);
        return 0;
}

static int get_time(const json_t *j, const char *key, int64_t *ns, ck_error_t *err)
{
        if (docker_decode_time(json_object_get(j, key), ns) < 0)
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL,
                                          "field %s: not an RFC 3339 time", key);
        return 0;
}

/* Labels: a copy of the object (an empty one when absent); values must be
 * strings. */
static int get_labels(const json_t *j, json_t **out, ck_error_t *err)
{
        *out = NULL;
        const json_t *l = NULL;
        if (get_obj(j, "Labels", &l, err) < 0)
                return -1;
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)l, k, v)
        {
                if (!json_is_string(v))
                        return ck_error_make_code(err, DOCKER_ERR_PROTOCOL,
                                                  "label %s: not a string", k);
        }
        *out = l ? json_deep_copy(l) : json_object();
        return 0;
}

static int clamp_int(int64_t v, int *out)
{
        if (v < INT32_MIN || v > INT32_MAX)
                return -1;
        *out = (int)v;
        return 0;
}

void docker_container_clear(struct docker_container *c)
{
        free(c->id);
        free(c->name);
        free(c->image);
        free(c->image_id);
        free(c->status);
        free(c->error);
        json_decref(c->labels);
        free(c->log_path);
        free(c->resolv_conf_path);
        free(c->hostname_path);
        free(c->hosts_path);
        free(c->network_mode);
        free(c->ipc_mode);
        free(c->pid_mode);
        free(c->cgroup_parent);
        free(c->sandbox_key);
        free(c->ip_address);
        for (size_t i = 0; i < c->n_mounts; i++) {
                free(c->mounts[i].type);
                free(c->mounts[i].source);
                free(c->mounts[i].destination);
                free(c->mounts[i].propagation);
        }
        free(c->mounts);
        *c = (struct docker_container){0};
}

static int decode_mounts(const json_t *j, struct docker_container *c, ck_error_t *err)
{
        const json_t *m = json_object_get(j, "Mounts");
        if (m == NULL || json_is_null(m))
                return 0;
        if (!json_is_array(m))
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "field Mounts: not an array");
        size_t n = json_array_size(m);
        c->mounts = xcalloc(n ? n : 1, sizeof(*c->mounts));
        for (size_t i = 0; i < n; i++) {
                const json_t *e = json_array_get(m, i);
                struct docker_mount *dm = &c->mounts[i];
                c->n_mounts = i + 1;
                if (need_object(e, err) < 0 || get_str(e, "Type", false, &dm->type, err) < 0 ||
                    get_str(e, "Source", false, &dm->source, err) < 0 ||
                    get_str(e, "Destination", true, &dm->destination, err) < 0 ||
                    get_bool(e, "RW", &dm->rw, err) < 0 ||
                    get_str(e, "Propagation", false, &dm->propagation, err) < 0)
                        return ck_error_wrap(err, "Mounts[%zu]", i);
        }
        return 0;
}

int docker_decode_container(const json_t *j, struct docker_container *out, ck_error_t *err)
{
        *out = (struct docker_container){0};
        struct docker_container *c = out;
        const json_t *state = NULL, *config = NULL, *host = NULL, *net = NULL;
        int64_t pid = 0, exit_code = 0;
        if (need_object(j, err) < 0 || get_str(j, "Id", true, &c->id, err) < 0 ||
            get_str(j, "Name", false, &c->name, err) < 0 ||
            get_str(j, "Image", false, &c->image_id, err) < 0 ||
            get_time(j, "Created", &c->created_ns, err) < 0 ||
            get_str(j, "LogPath", false, &c->log_path, err) < 0 ||
            get_str(j, "ResolvConfPath", false, &c->resolv_conf_path, err) < 0 ||
            get_str(j, "HostnamePath", false, &c->hostname_path, err) < 0 ||
            get_str(j, "HostsPath", false, &c->hosts_path, err) < 0 ||
            get_obj(j, "State", &state, err) < 0 || get_obj(j, "Config", &config, err) < 0 ||
            get_obj(j, "HostConfig", &host, err) < 0 ||
            get_obj(j, "NetworkSettings", &net, err) < 0)
                goto fail;
        if (state && (get_str(state, "Status", false, &c->status, err) < 0 ||
                      get_bool(state, "Running", &c->running, err) < 0 ||
                      get_bool(state, "OOMKilled", &c->oom_killed, err) < 0 ||
                      get_int(state, "Pid", &pid, err) < 0 ||
                      get_int(state, "ExitCode", &exit_code, err) < 0 ||
                      get_str(state, "Error", false, &c->error, err) < 0 ||
                      get_time(state, "StartedAt", &c->started_ns, err) < 0 ||
                      get_time(state, "FinishedAt", &c->finished_ns, err) < 0)) {
                ck_error_wrap(err, "State");
                goto fail;
        }
        if (clamp_int(pid, &c->pid) < 0 || clamp_int(exit_code, &c->exit_code) < 0) {
                ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "State: Pid or ExitCode out of range");
                goto fail;
        }
        if (config) {
                if (get_str(config, "Image", false, &c->image, err) < 0 ||
                    get_bool(config, "Tty", &c->tty, err) < 0 ||
                    get_labels(config, &c->labels, err) < 0) {
                        ck_error_wrap(err, "Config");
                        goto fail;
                }
        }
        if (c->labels == NULL)
                c->labels = json_object();
        if (host && (get_str(host, "NetworkMode", false, &c->network_mode, err) < 0 ||
                     get_str(host, "IpcMode", false, &c->ipc_mode, err) < 0 ||
                     get_str(host, "PidMode", false, &c->pid_mode, err) < 0 ||
                     get_str(host, "CgroupParent", false, &c->cgroup_parent, err) < 0)) {
                ck_error_wrap(err, "HostConfig");
                goto fail;
        }
        if (net && (get_str(net, "SandboxKey", false, &c->sandbox_key, err) < 0 ||
                    get_str(net, "IPAddress", false, &c->ip_address, err) < 0)) {
                ck_error_wrap(err, "NetworkSettings");
                goto fail;
        }
        if (decode_mounts(j, c, err) < 0)
                goto fail;
        if (c->name && c->name[0] == '/')
                memmove(c->name, c->name + 1, strlen(c->name));
        return 0;
fail:
        docker_container_clear(c);
        return -1;
}

void docker_container_summaries_free(struct docker_container_summary *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].id);
                free(v[i].name);
                free(v[i].image);
                free(v[i].image_id);
                free(v[i].state);
                json_decref(v[i].labels);
        }
        free(v);
}

static int decode_summary(const json_t *e, struct docker_container_summary *s, ck_error_t *err)
{
        if (need_object(e, err) < 0 || get_str(e, "Id", true, &s->id, err) < 0 ||
            get_str(e, "Image", false, &s->image, err) < 0 ||
            get_str(e, "ImageID", false, &s->image_id, err) < 0 ||
            get_int(e, "Created", &s->created_s, err) < 0 ||
            get_str(e, "State", false, &s->state, err) < 0 || get_labels(e, &s->labels, err) < 0)
                return -1;
        const json_t *names = json_object_get(e, "Names");
        if (names && !json_is_null(names)) {
                if (!json_is_array(names))
                        return ck_error_make_code(err, DOCKER_ERR_PROTOCOL,
                                                  "field Names: not an array");
                const char *first = json_string_value(json_array_get(names, 0));
                if (first)
                        s->name = xstrdup(first[0] == '/' ? first + 1 : first);
        }
        return 0;
}

int docker_decode_container_list(const json_t *j, struct docker_container_summary **out, size_t *n,
                                 ck_error_t *err)
{
        *out = NULL;
        *n = 0;
        if (json_is_null(j))
                return 0;
        if (!json_is_array(j))
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "not a JSON array");
        size_t len = json_array_size(j);
        struct docker_container_summary *v = xcalloc(len ? len : 1, sizeof(*v));
        for (size_t i = 0; i < len; i++) {
                if (decode_summary(json_array_get(j, i), &v[i], err) < 0) {
                        docker_container_summaries_free(v, len);
                        return ck_error_wrap(err, "container %zu", i);
                }
        }
        *out = v;
        *n = len;
        return 0;
}

static int get_strv(const json_t *j, const char *key, char ***out, size_t *n, ck_error_t *err)
{
        *out = NULL;
        *n = 0;
        const json_t *a = json_object_get(j, key);
        if (a == NULL || json_is_null(a))
                return 0;
        if (!json_is_array(a))
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "field %s: not an array", key);
        size_t len = json_array_size(a);
        char **v = xcalloc(len + 1, sizeof(*v));
        for (size_t i = 0; i < len; i++) {
                const json_t *e = json_array_get(a, i);
                if (!json_is_string(e)) {
                        for (size_t k = 0; k < i; k++)
                                free(v[k]);
                        free(v);
                        return ck_error_make_code(err, DOCKER_ERR_PROTOCOL,
                                                  "field %s[%zu]: not a string", key, i);
                }
                v[i] = xstrndup(json_string_value(e), json_string_length(e));
        }
        *out = v;
        *n = len;
        return 0;
}

void docker_image_clear(struct docker_image *i)
{
        free(i->id);
        for (size_t k = 0; k < i->n_repo_tags; k++)
                free(i->repo_tags[k]);
        free(i->repo_tags);
        for (size_t k = 0; k < i->n_repo_digests; k++)
                free(i->repo_digests[k]);
        free(i->repo_digests);
        free(i->user);
        *i = (struct docker_image){0};
}

void docker_images_free(struct docker_image *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                docker_image_clear(&v[i]);
        free(v);
}

int docker_decode_image(const json_t *j, struct docker_image *out, ck_error_t *err)
{
        *out = (struct docker_image){0};
        const json_t *config = NULL;
        if (need_object(j, err) < 0 || get_str(j, "Id", true, &out->id, err) < 0 ||
            get_strv(j, "RepoTags", &out->repo_tags, &out->n_repo_tags, err) < 0 ||
            get_strv(j, "RepoDigests", &out->repo_digests, &out->n_repo_digests, err) < 0 ||
            get_int(j, "Size", &out->size, err) < 0 || get_obj(j, "Config", &config, err) < 0 ||
            (config && get_str(config, "User", false, &out->user, err) < 0)) {
                docker_image_clear(out);
                return -1;
        }
        /* an untagged image lists "<none>:<none>" (and "<none>@<none>") */
        for (size_t i = 0; i < out->n_repo_tags; i++)
                if (strcmp(out->repo_tags[i], "<none>:<none>") == 0) {
                        free(out->repo_tags[i]);
                        memmove(&out->repo_tags[i], &out->repo_tags[i + 1],
                                (out->n_repo_tags - i) * sizeof(char *));
                        out->n_repo_tags--;
                        i--;
                }
        for (size_t i = 0; i < out->n_repo_digests; i++)
                if (strcmp(out->repo_digests[i], "<none>@<none>") == 0) {
                        free(out->repo_digests[i]);
                        memmove(&out->repo_digests[i], &out->repo_digests[i + 1],
                                (out->n_repo_digests - i) * sizeof(char *));
                        out->n_repo_digests--;
                        i--;
                }
        return 0;
}

int docker_decode_image_list(const json_t *j, struct docker_image **out, size_t *n, ck_error_t *err)
{
        *out = NULL;
        *n = 0;
        if (json_is_null(j))
                return 0;
        if (!json_is_array(j))
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "not a JSON array");
        size_t len = json_array_size(j);
        struct docker_image *v = xcalloc(len ? len : 1, sizeof(*v));
        for (size_t i = 0; i < len; i++) {
                if (docker_decode_image(json_array_get(j, i), &v[i], err) < 0) {
                        docker_images_free(v, len);
                        return ck_error_wrap(err, "image %zu", i);
                }
        }
        *out = v;
        *n = len;
        return 0;
}

int docker_decode_exec(const json_t *j, struct docker_exec_state *out, ck_error_t *err)
{
        *out = (struct docker_exec_state){0};
        int64_t code = 0, pid = 0;
        if (need_object(j, err) < 0 || get_bool(j, "Running", &out->running, err) < 0 ||
            get_int(j, "ExitCode", &code, err) < 0 || get_int(j, "Pid", &pid, err) < 0)
                return -1;
        if (clamp_int(code, &out->exit_code) < 0 || clamp_int(pid, &out->pid) < 0)
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "ExitCode or Pid out of range");
        return 0;
}

int docker_decode_pull_progress(const char *line, size_t len, ck_error_t *err)
{
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
                len--;
        if (len == 0)
                return 0;
        json_error_t jerr;
        json_t *j = json_loadb(line, len, 0, &jerr);
        if (j == NULL)
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "pull progress: %s", jerr.text);
        const json_t *detail = json_object_get(j, "errorDetail");
        const char *msg = json_string_value(json_object_get(detail, "message"));
        if (msg == NULL || *msg == '\0')
                msg = json_string_value(json_object_get(j, "error"));
        if ((msg == NULL || *msg == '\0') &&
            (json_object_get(j, "error") || json_object_get(j, "errorDetail")))
                msg = "the engine reported an error";
        int rc = msg ? ck_error_make_code(err, DOCKER_ERR_SERVER, "%s", msg) : 0;
        json_decref(j);
        return rc;
}

/* An unsigned counter at key of j (absent: 0). */
static int get_u64(const json_t *j, const char *key, uint64_t *out, ck_error_t *err)
{
        int64_t v = 0;
        if (get_int(j, key, &v, err) < 0)
                return -1;
        if (v < 0)
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "field %s: negative", key);
        *out = (uint64_t)v;
        return 0;
}

int docker_decode_stats(const json_t *j, struct docker_stats *out, ck_error_t *err)
{
        *out = (struct docker_stats){0};
        const json_t *cpu = NULL, *usage = NULL, *mem = NULL, *mstats = NULL, *pids = NULL;
        if (need_object(j, err) < 0 || get_time(j, "read", &out->read_ns, err) < 0 ||
            get_obj(j, "cpu_stats", &cpu, err) < 0 ||
            (cpu && get_obj(cpu, "cpu_usage", &usage, err) < 0) ||
            (usage && get_u64(usage, "total_usage", &out->cpu_total_ns, err) < 0) ||
            get_obj(j, "memory_stats", &mem, err) < 0 ||
            (mem && get_u64(mem, "usage", &out->mem_usage, err) < 0) ||
            (mem && get_obj(mem, "stats", &mstats, err) < 0) ||
            get_obj(j, "pids_stats", &pids, err) < 0 ||
            (pids && get_u64(pids, "current", &out->pids_current, err) < 0))
                return -1;
        out->has_memory = mem && json_object_get(mem, "usage") != NULL;
        out->has_pids = pids && json_object_get(pids, "current") != NULL &&
                        !json_is_null(json_object_get(pids, "current"));
        if (mstats) {
                const char *key = json_object_get(mstats, "total_inactive_file")
                                      ? "total_inactive_file"
                                      : "inactive_file";
                if (get_u64(mstats, key, &out->mem_inactive_file, err) < 0)
                        return ck_error_wrap(err, "memory_stats.stats");
        }
        return 0;
}
