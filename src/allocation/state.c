/* SPDX-License-Identifier: Apache-2.0 */
#include "allocation/state.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/gohash.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CHECKPOINT_MAX_BYTES (64u << 20)

struct alloc_state {
        pthread_mutex_t lock;
        char *path; /* NULL: memory only */
        /* {"<uid>": {"<container>": resources}} */
        json_t *pods;
        uint32_t last_checksum; /* of the file as last read or written */
        bool have_checksum;
};

/* The checkpoint's data string: PodResourceCheckpointInfo as Go marshals
 * it (entries omitted when empty, keys sorted). */
static char *checkpoint_data(const json_t *pods)
{
        json_t *info = json_object();
        if (json_object_size(pods) > 0) {
                json_t *entries = json_object();
                const char *uid;
                json_t *containers;
                json_object_foreach((json_t *)pods, uid, containers)
                {
                        json_object_set_new(entries, uid,
                                            json_pack("{s:O, s:n}", "ContainerResources",
                                                      containers, "PodLevelResources"));
                }
                json_object_set_new(info, "entries", entries);
        }
        char *data = json_dumps(info, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(info);
        return data;
}

/* Parses a checkpoint file's bytes into *pods (a new reference). */
static int parse_checkpoint(const char *path, const char *buf, json_t **pods, uint32_t *sum,
                            ck_error_t *err)
{
        json_error_t jerr;
        cleanup_json json_t *cp = json_loads(buf, 0, &jerr);
        if (cp == NULL)
                return ck_error_make(err, 0, "checkpoint `%s`: line %d: %s", path, jerr.line,
                                     jerr.text);
        const char *data = json_string_value(json_object_get(cp, "data"));
        json_t *checksum = json_object_get(cp, "checksum");
        if (data == NULL || !json_is_integer(checksum))
                return ck_error_make(err, 0, "checkpoint `%s`: no \"data\" string and \"checksum\"",
                                     path);
        uint32_t actual = go_deep_hash_string(data);
        if ((json_int_t)actual != json_integer_value(checksum))
                return ck_error_make(err, 0,
                                     "checkpoint `%s` is corrupted: checksum %" JSON_INTEGER_FORMAT
                                     " expected, %u computed; drain the node and delete the "
                                     "file before restarting",
                                     path, json_integer_value(checksum), actual);
        cleanup_json json_t *info = json_loads(data, 0, &jerr);
        if (!json_is_object(info))
                return ck_error_make(err, 0, "checkpoint `%s`: data: %s", path,
                                     info == NULL ? jerr.text : "not an object");
        json_t *out = json_object();
        const char *uid;
        json_t *entry;
        json_object_foreach(json_object_get(info, "entries"), uid, entry)
        {
                json_t *containers = json_object_get(entry, "ContainerResources");
                if (!json_is_object(containers))
                        continue;
                json_object_set_new(out, uid, json_deep_copy(containers));
        }
        *pods = out;
        *sum = actual;
        return 0;
}

int alloc_state_open(const char *dir, const char *name, struct alloc_state **out, ck_error_t *err)
{
        struct alloc_state *s = xcalloc(1, sizeof(*s));
        pthread_mutex_init(&s->lock, NULL);
        s->pods = json_object();
        if (dir != NULL) {
                s->path = xasprintf("%s/%s", dir, name);
                cleanup_free char *buf = NULL;
                size_t len;
                if (fs_read_file(s->path, CHECKPOINT_MAX_BYTES, &buf, &len, err) < 0) {
                        if ((*err)->status != ENOENT) {
                                ck_error_wrap(err, "read checkpoint");
                                alloc_state_free(s);
                                return -1;
                        }
                        ck_error_release(err);
                } else {
                        json_t *pods;
                        if (parse_checkpoint(s->path, buf, &pods, &s->last_checksum, err) < 0) {
                                alloc_state_free(s);
                                return -1;
                        }
                        json_decref(s->pods);
                        s->pods = pods;
                        s->have_checksum = true;
                        LOG_INFO(2, "State checkpoint: restored pod resource state from checkpoint",
                                 "path=\"%s\" pods=%zu", s->path, json_object_size(pods));
                }
        }
        *out = s;
        return 0;
}

void alloc_state_free(struct alloc_state *s)
{
        if (s == NULL)
                return;
        json_decref(s->pods);
        free(s->path);
        pthread_mutex_destroy(&s->lock);
        free(s);
}

/* Writes the checkpoint when it changed.  Lock held. */
static int store(struct alloc_state *s, ck_error_t *err)
{
        if (s->path == NULL)
                return 0;
        cleanup_free char *data = checkpoint_data(s->pods);
        uint32_t sum = go_deep_hash_string(data);
        if (s->have_checksum && sum == s->last_checksum)
                return 0;
        json_t *cp = json_pack("{s:s, s:I}", "data", data, "checksum", (json_int_t)sum);
        cleanup_free char *text = json_dumps(cp, JSON_COMPACT);
        json_decref(cp);
        if (fs_write_file_atomic(s->path, text, strlen(text), 0644, err) < 0)
                return ck_error_wrap(err, "write checkpoint");
        s->last_checksum = sum;
        s->have_checksum = true;
        return 0;
}

json_t *alloc_state_get(struct alloc_state *s, const char *uid, const char *container)
{
        pthread_mutex_lock(&s->lock);
        json_t *r = json_object_get(json_object_get(s->pods, uid), container);
        json_t *out = r ? json_deep_copy(r) : NULL;
        pthread_mutex_unlock(&s->lock);
        return out;
}

json_t *alloc_state_get_pod(struct alloc_state *s, const char *uid)
{
        pthread_mutex_lock(&s->lock);
        json_t *p = json_object_get(s->pods, uid);
        json_t *out = p ? json_deep_copy(p) : NULL;
        pthread_mutex_unlock(&s->lock);
        return out;
}

/* Replaces uid's entry with pod (stolen) and writes the checkpoint; when
 * the write fails, the entry is as it was: what is in memory is what is on
 * disk.  Lock held. */
static int replace_pod(struct alloc_state *s, const char *uid, json_t *pod, ck_error_t *err)
{
        json_t *old = json_incref(json_object_get(s->pods, uid));
        json_object_set_new(s->pods, uid, pod);
        int r = store(s, err);
        if (r < 0) {
                if (old != NULL)
                        json_object_set(s->pods, uid, old);
                else
                        json_object_del(s->pods, uid);
        }
        json_decref(old);
        return r;
}

int alloc_state_set(struct alloc_state *s, const char *uid, const char *container,
                    const json_t *resources, ck_error_t *err)
{
        pthread_mutex_lock(&s->lock);
        json_t *pod = json_object_get(s->pods, uid);
        pod = pod ? json_deep_copy(pod) : json_object();
        json_object_set_new(pod, container, resources ? json_deep_copy(resources) : json_object());
        int r = replace_pod(s, uid, pod, err);
        pthread_mutex_unlock(&s->lock);
        return r;
}

int alloc_state_set_pod(struct alloc_state *s, const char *uid, const json_t *containers,
                        ck_error_t *err)
{
        pthread_mutex_lock(&s->lock);
        int r = replace_pod(s, uid, json_deep_copy(containers), err);
        pthread_mutex_unlock(&s->lock);
        return r;
}

void alloc_state_remove_pod(struct alloc_state *s, const char *uid)
{
        pthread_mutex_lock(&s->lock);
        json_object_del(s->pods, uid);
        pthread_mutex_unlock(&s->lock);
}

void alloc_state_retain(struct alloc_state *s, const char *const *uids, size_t n)
{
        pthread_mutex_lock(&s->lock);
        const char *uid;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(s->pods, tmp, uid, v)
        {
                bool keep = false;
                for (size_t i = 0; i < n && !keep; i++)
                        keep = strcmp(uids[i], uid) == 0;
                if (!keep)
                        json_object_del(s->pods, uid);
        }
        pthread_mutex_unlock(&s->lock);
}
