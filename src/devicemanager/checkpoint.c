/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device manager's checkpoint, /var/lib/kubelet/device-plugins/
 * kubelet_internal_checkpoint, in upstream's format (devicemanager/
 * checkpoint/checkpoint.go), so that either kubelet reads the other's:
 *
 *   {"Data":{"PodDeviceEntries":[{"PodUID":...,"ContainerName":...,
 *     "ResourceName":...,"DeviceIDs":{"<numa>":["id",...]},
 *     "AllocResp":"<base64 of the ContainerAllocateResponse>"}] | null,
 *     "RegisteredDevices":{"<resource>":["healthy id",...]}},
 *    "Checksum":<uint32>}
 *
 * The checksum is upstream's checksum.New(data): FNV-1a-32 over go-spew's
 * %#v of the checkpointData value (sorted map keys, no pointers or
 * capacities), here rendered from the JSON itself, so that what is read
 * is checked exactly as upstream reads it.
 */
#include "devicemanager/devicemanager_internal.h"
#include "util/base64.h"
#include "util/cleanup.h"
#include "util/gohash.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t feed(uint32_t h, const char *s)
{
        return go_fnv32a(h, s, strlen(s));
}

static uint32_t feed_str(uint32_t h, const json_t *v)
{
        const char *s = json_string_value(v);
        return s ? go_fnv32a(h, s, json_string_length(v)) : h;
}

/* []string: <nil> or [a b c] (items verbatim) */
static uint32_t feed_strlist(uint32_t h, const json_t *arr)
{
        if (!json_is_array(arr))
                return feed(h, "<nil>");
        h = feed(h, "[");
        size_t i;
        json_t *v;
        json_array_foreach(arr, i, v)
        {
                if (i > 0)
                        h = feed(h, " ");
                h = feed_str(h, v);
        }
        return feed(h, "]");
}

/* []uint8 from its base64: <nil> or [18 10 ...] */
static uint32_t feed_bytes(uint32_t h, const json_t *v)
{
        const char *s = json_string_value(v);
        if (s == NULL)
                return feed(h, "<nil>");
        cleanup_free char *raw = NULL;
        size_t n = 0;
        if (base64_decode(s, strlen(s), 0, &raw, &n, NULL) < 0)
                return feed(h, "<invalid>"); /* cannot match upstream's: reads as corrupted */
        h = feed(h, "[");
        for (size_t i = 0; i < n; i++) {
                char num[8];
                snprintf(num, sizeof(num), i ? " %u" : "%u", (unsigned)(unsigned char)raw[i]);
                h = feed(h, num);
        }
        return feed(h, "]");
}

static int cmp_numeric_keys(const void *a, const void *b)
{
        long long x = strtoll(*(const char *const *)a, NULL, 10);
        long long y = strtoll(*(const char *const *)b, NULL, 10);
        return x < y ? -1 : x > y;
}

static int cmp_keys(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* map[K][]string: <nil> or map[k1:[..] k2:[..]], keys sorted as go-spew
 * sorts them (numerically for int64 keys, bytewise for strings) */
static uint32_t feed_map(uint32_t h, const json_t *obj, bool numeric)
{
        if (!json_is_object(obj))
                return feed(h, "<nil>");
        size_t n = json_object_size(obj), k = 0;
        const char **keys = xcalloc(n + 1, sizeof(*keys));
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)obj, key, v) keys[k++] = key;
        qsort(keys, n, sizeof(*keys), numeric ? cmp_numeric_keys : cmp_keys);
        h = feed(h, "map[");
        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        h = feed(h, " ");
                if (numeric) {
                        char num[32];
                        snprintf(num, sizeof(num), "%lld", strtoll(keys[i], NULL, 10));
                        h = feed(h, num);
                } else {
                        h = feed(h, keys[i]);
                }
                h = feed(h, ":");
                h = feed_strlist(h, json_object_get(obj, keys[i]));
        }
        free(keys);
        return feed(h, "]");
}

uint32_t dm_checkpoint_checksum(const json_t *data)
{
        uint32_t h = GO_FNV32A_INIT;
        h = feed(h, "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)");
        const json_t *entries = json_object_get(data, "PodDeviceEntries");
        if (!json_is_array(entries)) {
                h = feed(h, "<nil>");
        } else {
                h = feed(h, "[");
                size_t i;
                json_t *e;
                json_array_foreach(entries, i, e)
                {
                        if (i > 0)
                                h = feed(h, " ");
                        h = feed(h, "{PodUID:(string)");
                        h = feed_str(h, json_object_get(e, "PodUID"));
                        h = feed(h, " ContainerName:(string)");
                        h = feed_str(h, json_object_get(e, "ContainerName"));
                        h = feed(h, " ResourceName:(string)");
                        h = feed_str(h, json_object_get(e, "ResourceName"));
                        h = feed(h, " DeviceIDs:(checkpoint.DevicesPerNUMA)");
                        h = feed_map(h, json_object_get(e, "DeviceIDs"), true);
                        h = feed(h, " AllocResp:([]uint8)");
                        h = feed_bytes(h, json_object_get(e, "AllocResp"));
                        h = feed(h, "}");
                }
                h = feed(h, "]");
        }
        h = feed(h, " RegisteredDevices:(map[string][]string)");
        h = feed_map(h, json_object_get(data, "RegisteredDevices"), false);
        return feed(h, "}");
}

/* ---- building ---- */

static char *base64_std(const uint8_t *p, size_t n)
{
        static const char tbl[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;
        size_t i = 0;
        for (; i + 2 < n; i += 3) {
                uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
                *o++ = tbl[v >> 18];
                *o++ = tbl[(v >> 12) & 63];
                *o++ = tbl[(v >> 6) & 63];
                *o++ = tbl[v & 63];
        }
        if (i < n) {
                uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
                *o++ = tbl[v >> 18];
                *o++ = tbl[(v >> 12) & 63];
                *o++ = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
                *o++ = '=';
        }
        *o = '\0';
        return out;
}

static int cmp_numa(const void *a, const void *b)
{
        const struct dm_numa_ids *x = a, *y = b;
        return x->numa < y->numa ? -1 : x->numa > y->numa;
}

static json_t *strings(char *const *s, size_t n)
{
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_string(s[i]));
        return a;
}

json_t *dm_checkpoint_build(const struct dm_alloc *allocs, size_t n_allocs,
                            const struct dm_resource *res, size_t n_res)
{
        /* upstream writes a nil slice when there is no entry: null */
        json_t *entries = n_allocs ? json_array() : json_null();
        for (size_t i = 0; i < n_allocs; i++) {
                const struct dm_alloc *a = &allocs[i];
                if (a->resp == NULL)
                        continue; /* no answer cached: upstream skips it (an empty
                                     answer is a non-NULL resp of 0 bytes) */
                /* Go's encoding/json sorts the map's keys as strings */
                struct dm_numa_ids *numa = xcalloc(a->n_numa + 1, sizeof(*numa));
                memcpy(numa, a->numa, a->n_numa * sizeof(*numa));
                qsort(numa, a->n_numa, sizeof(*numa), cmp_numa);
                json_t *ids = json_object();
                for (size_t k = 0; k < a->n_numa; k++) {
                        char key[32];
                        snprintf(key, sizeof(key), "%" PRId64, numa[k].numa);
                        json_object_set_new(ids, key, strings(numa[k].ids, numa[k].n_ids));
                }
                free(numa);
                cleanup_free char *b64 = base64_std(a->resp, a->resp_len);
                json_array_append_new(entries,
                                      json_pack("{s:s, s:s, s:s, s:o, s:s}", "PodUID", a->pod_uid,
                                                "ContainerName", a->container, "ResourceName",
                                                a->resource, "DeviceIDs", ids, "AllocResp", b64));
        }
        json_t *reg = json_object();
        for (size_t i = 0; i < n_res; i++)
                if (res[i].has_healthy)
                        json_object_set_new(reg, res[i].name,
                                            strings(res[i].healthy, res[i].n_healthy));
        json_t *data =
            json_pack("{s:o, s:o}", "PodDeviceEntries", entries, "RegisteredDevices", reg);
        uint32_t sum = dm_checkpoint_checksum(data);
        return json_pack("{s:o, s:I}", "Data", data, "Checksum", (json_int_t)sum);
}

/* ---- reading ---- */

void dm_alloc_clear(struct dm_alloc *a)
{
        free(a->pod_uid);
        free(a->container);
        free(a->resource);
        for (size_t i = 0; i < a->n_numa; i++) {
                for (size_t k = 0; k < a->numa[i].n_ids; k++)
                        free(a->numa[i].ids[k]);
                free(a->numa[i].ids);
        }
        free(a->numa);
        free(a->resp);
        memset(a, 0, sizeof(*a));
}

static char **strings_of(const json_t *arr, size_t *n)
{
        *n = 0;
        char **out = xcalloc(json_array_size(arr) + 1, sizeof(*out));
        size_t i;
        json_t *v;
        json_array_foreach(arr, i, v)
        {
                if (json_is_string(v))
                        out[(*n)++] = xstrdup(json_string_value(v));
        }
        return out;
}

int dm_checkpoint_parse(const char *text, struct dm_alloc **allocs, size_t *n_allocs,
                        char ***registered, size_t *n_registered, ck_error_t *err)
{
        *allocs = NULL;
        *n_allocs = 0;
        *registered = NULL;
        *n_registered = 0;
        json_error_t jerr;
        cleanup_json json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
        if (root == NULL)
                return ck_error_make(err, 0, "checkpoint: %s (line %d)", jerr.text, jerr.line);
        json_t *data = json_object_get(root, "Data");
        json_t *sum = json_object_get(root, "Checksum");
        if (!json_is_object(data) || !json_is_integer(sum))
                return ck_error_make(err, 0, "checkpoint: no Data or Checksum");
        if ((json_int_t)dm_checkpoint_checksum(data) != json_integer_value(sum))
                return ck_error_make(err, 0, "checkpoint is corrupted");
        json_t *entries = json_object_get(data, "PodDeviceEntries");
        size_t i;
        json_t *e;
        struct dm_alloc *out = xcalloc(json_array_size(entries) + 1, sizeof(*out));
        size_t n = 0;
        json_array_foreach(entries, i, e)
        {
                const char *uid = json_string_value(json_object_get(e, "PodUID"));
                const char *ctr = json_string_value(json_object_get(e, "ContainerName"));
                const char *resn = json_string_value(json_object_get(e, "ResourceName"));
                const char *resp = json_string_value(json_object_get(e, "AllocResp"));
                if (uid == NULL || ctr == NULL || resn == NULL || resp == NULL)
                        continue;
                struct dm_alloc a = {0};
                char *raw = NULL;
                if (base64_decode(resp, strlen(resp), 0, &raw, &a.resp_len, NULL) < 0)
                        continue; /* upstream skips what it cannot unmarshal */
                a.resp = (uint8_t *)raw;
                a.pod_uid = xstrdup(uid);
                a.container = xstrdup(ctr);
                a.resource = xstrdup(resn);
                json_t *ids = json_object_get(e, "DeviceIDs");
                a.numa = xcalloc(json_object_size(ids) + 1, sizeof(*a.numa));
                const char *key;
                json_t *v;
                json_object_foreach(ids, key, v)
                {
                        struct dm_numa_ids *ni = &a.numa[a.n_numa++];
                        ni->numa = strtoll(key, NULL, 10);
                        ni->ids = strings_of(v, &ni->n_ids);
                }
                out[n++] = a;
        }
        json_t *reg = json_object_get(data, "RegisteredDevices");
        char **names = xcalloc(json_object_size(reg) + 1, sizeof(*names));
        size_t nn = 0;
        const char *key;
        json_t *v;
        json_object_foreach(reg, key, v) names[nn++] = xstrdup(key);
        *allocs = out;
        *n_allocs = n;
        *registered = names;
        *n_registered = nn;
        return 0;
}
