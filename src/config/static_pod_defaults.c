/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The defaults every static pod gets (upstream pkg/kubelet/config/common.go
 * applyDefaults, plus the config.seen / config.source annotations that
 * upstream's pod config merge adds).  Works on the raw JSON object, before
 * api_pod_decode(), so that pod->raw carries them.
 *
 * The UID differs from upstream's bytes (upstream hashes its Go struct with
 * FNV-128a, which cannot be reproduced from C); it keeps upstream's
 * properties: 32 hex digits, stable for the same manifest, node and path,
 * and different when any of them changes.
 */
#include "config/file_source.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define ANNOTATION_CONFIG_HASH "kubernetes.io/config.hash"
#define ANNOTATION_CONFIG_SEEN "kubernetes.io/config.seen"
#define ANNOTATION_CONFIG_SOURCE "kubernetes.io/config.source"

/* md5(canonical JSON of obj, then the source parts) as 32 hex digits. */
static int static_pod_uid(json_t *obj, const char *node_name, const char *path, bool is_file,
                          char out[33], ck_error_t *err)
{
        cleanup_free char *canon = json_dumps(obj, JSON_SORT_KEYS | JSON_COMPACT);
        if (canon == NULL)
                return ck_error_make(err, 0, "invalid pod: cannot serialize the manifest");
        cleanup_free char *tail =
            is_file ? xasprintf("host:%sfile:%s", node_name, path) : xasprintf("url:%s", path);
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int md_len = 0;
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        int ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_md5(), NULL) == 1 &&
                 EVP_DigestUpdate(ctx, canon, strlen(canon)) == 1 &&
                 EVP_DigestUpdate(ctx, tail, strlen(tail)) == 1 &&
                 EVP_DigestFinal_ex(ctx, md, &md_len) == 1 && md_len == 16;
        EVP_MD_CTX_free(ctx);
        if (!ok)
                return ck_error_make(err, 0, "compute the pod UID: md5 unavailable");
        for (unsigned int i = 0; i < 16; i++)
                snprintf(out + 2 * i, 3, "%02x", md[i]);
        return 0;
}

/* Go's time.Now().Format(time.RFC3339Nano) in UTC: trailing zeros of the
 * fraction dropped, no fraction at all when it is zero. */
static void rfc3339_nano_now(char *buf, size_t len)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        char base[32];
        strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
        if (ts.tv_nsec == 0) {
                snprintf(buf, len, "%sZ", base);
                return;
        }
        char frac[16];
        snprintf(frac, sizeof(frac), "%09ld", ts.tv_nsec);
        for (int i = 8; i > 0 && frac[i] == '0'; i--)
                frac[i] = '\0';
        snprintf(buf, len, "%s.%sZ", base, frac);
}

/* A member that must be an object: created when absent, an error when it
 * is something else. */
static json_t *object_member(json_t *obj, const char *key, const char *what, ck_error_t *err)
{
        json_t *m = json_object_get(obj, key);
        if (m == NULL || json_is_null(m)) {
                m = json_object();
                json_object_set_new(obj, key, m);
        }
        if (!json_is_object(m)) {
                ck_error_make(err, 0, "invalid pod: %s: must be an object", what);
                return NULL;
        }
        return m;
}

static bool str_field_is(json_t *obj, const char *key, const char *want)
{
        const char *v = json_string_value(json_object_get(obj, key));
        return strcmp(v ? v : "", want) == 0;
}

/* upstream helper.AddOrUpdateTolerationInPod with
 * {operator: Exists, effect: NoExecute}: replaces a matching toleration
 * (same key, operator, value, effect) in place, else appends. */
static int add_noexecute_toleration(json_t *spec, ck_error_t *err)
{
        json_t *tols = json_object_get(spec, "tolerations");
        if (tols == NULL || json_is_null(tols)) {
                tols = json_array();
                json_object_set_new(spec, "tolerations", tols);
        }
        if (!json_is_array(tols))
                return ck_error_make(err, 0, "invalid pod: spec.tolerations: must be a list");
        json_t *t = json_pack("{s:s, s:s}", "operator", "Exists", "effect", "NoExecute");
        size_t i;
        json_t *old;
        json_array_foreach(tols, i, old)
        {
                if (json_is_object(old) && str_field_is(old, "key", "") &&
                    str_field_is(old, "operator", "Exists") && str_field_is(old, "value", "") &&
                    str_field_is(old, "effect", "NoExecute")) {
                        json_array_set_new(tols, i, t);
                        return 0;
                }
        }
        json_array_append_new(tols, t);
        return 0;
}

int file_source_apply_defaults(json_t *obj, const char *node_name, const char *path,
                               const char *source_name, ck_error_t *err)
{
        if (!json_is_object(obj))
                return ck_error_make(err, 0, "invalid pod: the manifest is not an object");
        json_t *meta = json_object_get(obj, "metadata");
        const char *name = json_string_value(json_object_get(meta, "name"));
        if (!json_is_object(meta) || name == NULL || name[0] == '\0')
                return ck_error_make(err, 0, "invalid pod: name is needed for the pod");
        bool is_file = source_name == NULL || strcmp(source_name, "file") == 0;

        /* The UID hashes the manifest as written, before any default. */
        const char *uid = json_string_value(json_object_get(meta, "uid"));
        char hex[33];
        if (uid == NULL || uid[0] == '\0') {
                if (static_pod_uid(obj, node_name, path, is_file, hex, err) < 0)
                        return -1;
                json_object_set_new(meta, "uid", json_string(hex));
                uid = hex;
        }
        cleanup_free char *uid_copy = xstrdup(uid);

        cleanup_free char *lower = xstrdup(node_name);
        for (char *p = lower; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        json_object_set_new(meta, "name", json_sprintf("%s-%s", name, lower));

        const char *ns = json_string_value(json_object_get(meta, "namespace"));
        if (ns == NULL || ns[0] == '\0')
                json_object_set_new(meta, "namespace", json_string("default"));

        json_t *spec = object_member(obj, "spec", "spec", err);
        if (spec == NULL)
                return -1;
        json_object_set_new(spec, "nodeName", json_string(node_name));

        json_t *ann = object_member(meta, "annotations", "metadata.annotations", err);
        if (ann == NULL)
                return -1;
        char seen[64];
        rfc3339_nano_now(seen, sizeof(seen));
        json_object_set_new(ann, ANNOTATION_CONFIG_HASH, json_string(uid_copy));
        json_object_set_new(ann, ANNOTATION_CONFIG_SEEN, json_string(seen));
        json_object_set_new(ann, ANNOTATION_CONFIG_SOURCE,
                            json_string(source_name ? source_name : "file"));

        /* static pods tolerate every NoExecute taint: node problems do not
         * evict them */
        if (is_file && add_noexecute_toleration(spec, err) < 0)
                return -1;

        json_t *status = object_member(obj, "status", "status", err);
        if (status == NULL)
                return -1;
        json_object_set_new(status, "phase", json_string("Pending"));
        return 0;
}
