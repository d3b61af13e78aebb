/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Docker container names and labels of the shim's sandboxes and
 * containers, as dockershim and cri-dockerd make them, so that a node moved
 * between them finds its containers (dockershim_internal.h):
 *
 *   sandbox    k8s_POD_<pod>_<namespace>_<uid>_<attempt>
 *   container  k8s_<container>_<pod>_<namespace>_<uid>_<attempt>
 *
 * (a 7th field, a random suffix, is accepted when parsing).  The CRI
 * metadata lives in labels: the CRI labels as they are, each annotation as
 * "annotation.<key>", and the shim's own (the type, the sandbox of a
 * container, its CRI log path), hidden again when read back.
 */
#include "dockershim/dockershim_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

char *shim_sandbox_name(const char *pod, const char *ns, const char *uid, uint32_t attempt)
{
        return xasprintf("k8s_POD_%s_%s_%s_%u", pod, ns, uid, attempt);
}

char *shim_container_name(const char *container, const char *pod, const char *ns, const char *uid,
                          uint32_t attempt)
{
        return xasprintf("k8s_%s_%s_%s_%s_%u", container, pod, ns, uid, attempt);
}

char *shim_name_randomized(const char *name)
{
        uint32_t r = 0;
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
                r = (uint32_t)fs_now_real_ns(); /* (never short for 4 bytes) */
        return xasprintf("%s_%08x", name, r);
}

char *shim_conflicting_id(const char *message)
{
        /* the engine's words: Conflict. The container name "/k8s_..." is
         * already in use by container "<id>". You have to remove ... */
        const char *c = message ? strstr(message, "Conflict.") : NULL;
        const char *p = c ? strstr(c, " is already in use by container ") : NULL;
        if (p == NULL)
                return NULL;
        p += strlen(" is already in use by container ");
        if (*p == '"')
                p++;
        size_t n = strspn(p, "0123456789abcdefghijklmnopqrstuvwxyz");
        return n > 0 ? xstrndup(p, n) : NULL;
}

void shim_name_clear(struct shim_name *n)
{
        free(n->container);
        free(n->pod);
        free(n->ns);
        free(n->uid);
        *n = (struct shim_name){0};
}

int shim_parse_name(const char *name, struct shim_name *out)
{
        *out = (struct shim_name){0};
        if (name == NULL) /* the engine's answer may lack it */
                return -1;
        if (name[0] == '/')
                name++;
        char *parts[8];
        size_t n = 0;
        cleanup_free char *copy = xstrdup(name);
        for (char *p = copy, *save = NULL, *tok; n < 8 && (tok = strtok_r(p, "_", &save)); p = NULL)
                parts[n++] = tok;
        /* strtok_r folds empty fields: count the separators too */
        size_t seps = 0;
        for (const char *p = name; *p; p++)
                seps += *p == '_';
        if ((n != 6 && n != 7) || seps + 1 != n || strcmp(parts[0], "k8s") != 0)
                return -1;
        char *end = NULL;
        unsigned long long a = strtoull(parts[5], &end, 10);
        if (*parts[5] == '\0' || *end != '\0' || a > UINT32_MAX || parts[5][0] == '-' ||
            parts[5][0] == '+')
                return -1;
        out->container = xstrdup(parts[1]);
        out->pod = xstrdup(parts[2]);
        out->ns = xstrdup(parts[3]);
        out->uid = xstrdup(parts[4]);
        out->attempt = (uint32_t)a;
        return 0;
}

json_t *shim_make_labels(const struct shim_kv *labels, size_t n_labels,
                         const struct shim_kv *annotations, size_t n_annotations)
{
        json_t *j = json_object();
        for (size_t i = 0; i < n_labels; i++)
                json_object_set_new(j, labels[i].key, json_string(labels[i].value));
        for (size_t i = 0; i < n_annotations; i++) {
                cleanup_free char *k = xasprintf(SHIM_ANNOTATION_PREFIX "%s", annotations[i].key);
                json_object_set_new(j, k, json_string(annotations[i].value));
        }
        return j;
}

static bool is_internal(const char *key, bool sandbox)
{
        return strcmp(key, SHIM_LABEL_TYPE) == 0 || strcmp(key, SHIM_LABEL_LOGPATH) == 0 ||
               strcmp(key, SHIM_LABEL_SANDBOX_ID) == 0 ||
               (sandbox && strcmp(key, SHIM_LABEL_CONTAINER_NAME) == 0);
}

void shim_split_labels(const json_t *docker_labels, const ProtobufCMessageDescriptor *label_desc,
                       const ProtobufCMessageDescriptor *annotation_desc, struct shim_map *labels,
                       struct shim_map *annotations)
{
        *labels = (struct shim_map){0};
        *annotations = (struct shim_map){0};
        const char *type = json_string_value(json_object_get(docker_labels, SHIM_LABEL_TYPE));
        bool sandbox = type && strcmp(type, SHIM_TYPE_SANDBOX) == 0;
        size_t cap = json_object_size(docker_labels);
        labels->entries = xcalloc(cap ? cap : 1, sizeof(*labels->entries));
        annotations->entries = xcalloc(cap ? cap : 1, sizeof(*annotations->entries));
        labels->storage = xcalloc(cap ? cap : 1, sizeof(struct shim_map_entry));
        annotations->storage = xcalloc(cap ? cap : 1, sizeof(struct shim_map_entry));
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)docker_labels, k, v)
        {
                const char *val = json_string_value(v);
                if (val == NULL || is_internal(k, sandbox))
                        continue;
                struct shim_map *m = labels;
                const ProtobufCMessageDescriptor *d = label_desc;
                const char *key = k; /* k itself drives the iteration */
                size_t plen = strlen(SHIM_ANNOTATION_PREFIX);
                if (strncmp(k, SHIM_ANNOTATION_PREFIX, plen) == 0) {
                        m = annotations;
                        d = annotation_desc;
                        key += plen;
                }
                struct shim_map_entry *e = &m->storage[m->n];
                protobuf_c_message_init(d, e);
                e->key = (char *)key;
                e->value = (char *)val;
                m->entries[m->n++] = e;
        }
}

void shim_map_clear(struct shim_map *m)
{
        free(m->entries);
        free(m->storage);
        *m = (struct shim_map){0};
}
