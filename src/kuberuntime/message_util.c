/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers for building and releasing CRI message trees. */
#include "kuberuntime/builders_internal.h"

#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

void kuberuntime__message_free(ProtobufCMessage *m)
{
        /* protobuf-c's walker frees each string that differs from the
         * field's default (our defaults are the static empty string) and
         * every element of repeated fields, then the sub-messages and the
         * message itself, all with the system allocator: exactly what the
         * builders allocate (xmalloc/xstrdup). */
        if (m != NULL)
                protobuf_c_message_free_unpacked(m, NULL);
}

void kuberuntime__strv_push(size_t *n, char ***arr, const char *s)
{
        *arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
        (*arr)[(*n)++] = xstrdup(s ? s : "");
}

/* A map entry message is { base; char *key; char *value; }: reach the two
 * strings through the descriptor's field offsets. */
static char **entry_field(const ProtobufCMessageDescriptor *d, void *msg, unsigned i)
{
        return (char **)((char *)msg + d->fields[i].offset);
}

void kuberuntime__map_set(const ProtobufCMessageDescriptor *d, size_t *n, void ***arr,
                          const char *key, const char *value)
{
        for (size_t i = 0; i < *n; i++) {
                char **k = entry_field(d, (*arr)[i], 0);
                if (strcmp(*k, key) == 0) {
                        char **v = entry_field(d, (*arr)[i], 1);
                        if (*v != (char *)protobuf_c_empty_string)
                                free(*v);
                        *v = xstrdup(value ? value : "");
                        return;
                }
        }
        void *e = xmalloc(d->sizeof_message);
        d->message_init(e);
        *entry_field(d, e, 0) = xstrdup(key);
        *entry_field(d, e, 1) = xstrdup(value ? value : "");
        *arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
        (*arr)[(*n)++] = e;
}

Runtime__V1__Int64Value *kuberuntime__int64_value(int64_t v)
{
        Runtime__V1__Int64Value *m = xmalloc(sizeof(*m));
        runtime__v1__int64_value__init(m);
        m->value = v;
        return m;
}

Runtime__V1__SecurityProfile *
kuberuntime__security_profile(Runtime__V1__SecurityProfile__ProfileType type,
                              const char *localhost_ref)
{
        Runtime__V1__SecurityProfile *p = xmalloc(sizeof(*p));
        runtime__v1__security_profile__init(p);
        p->profile_type = type;
        if (localhost_ref != NULL)
                p->localhost_ref = xstrdup(localhost_ref);
        return p;
}

json_t *kuberuntime__raw_spec(const struct pod *pod, const char *key)
{
        if (pod->raw == NULL)
                return NULL;
        return json_object_get(json_object_get(pod->raw, "spec"), key);
}

static json_t *find_named(json_t *list, const char *name)
{
        size_t i;
        json_t *item;
        json_array_foreach(list, i, item)
        {
                const char *n = json_string_value(json_object_get(item, "name"));
                if (n != NULL && strcmp(n, name) == 0)
                        return item;
        }
        return NULL;
}

json_t *kuberuntime__raw_container(const struct pod *pod, const char *name)
{
        json_t *c = find_named(kuberuntime__raw_spec(pod, "containers"), name);
        if (c == NULL)
                c = find_named(kuberuntime__raw_spec(pod, "initContainers"), name);
        if (c == NULL)
                c = find_named(kuberuntime__raw_spec(pod, "ephemeralContainers"), name);
        return c;
}

char *kuberuntime__format_pod(const struct pod *pod)
{
        return xasprintf("%s_%s(%s)", pod->name ? pod->name : "",
                         pod->namespace ? pod->namespace : "", pod->uid ? pod->uid : "");
}
