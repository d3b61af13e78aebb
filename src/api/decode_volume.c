/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One pod volume: decoding, defaults (SetDefaults_Volume and the per-source
 * defaults) and validateVolumeSource for the kinds the kubelet implements.
 */
#include "api/api_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MODE 0644
static const char FILE_MODE_MSG[] = "must be a number between 0 and 0777 (octal), both inclusive";

/* Every source of v1.VolumeSource, in validateVolumeSource's order, with the
 * name its "may not specify more than 1 volume type" error uses. */
static const struct {
        const char *key;
        const char *err_name;
        enum volume_kind kind;
} SOURCES[] = {
    {"emptyDir", "emptyDir", VOLUME_EMPTY_DIR},
    {"hostPath", "hostPath", VOLUME_HOST_PATH},
    {"gitRepo", "gitRepo", VOLUME_OTHER},
    {"gcePersistentDisk", "gcePersistentDisk", VOLUME_OTHER},
    {"awsElasticBlockStore", "awsElasticBlockStore", VOLUME_OTHER},
    {"secret", "secret", VOLUME_SECRET},
    {"nfs", "nfs", VOLUME_OTHER},
    {"iscsi", "iscsi", VOLUME_OTHER},
    {"glusterfs", "glusterfs", VOLUME_OTHER},
    {"flocker", "flocker", VOLUME_OTHER},
    {"persistentVolumeClaim", "persistentVolumeClaim", VOLUME_OTHER},
    {"rbd", "rbd", VOLUME_OTHER},
    {"cinder", "cinder", VOLUME_OTHER},
    {"cephfs", "cephFS", VOLUME_OTHER},
    {"quobyte", "quobyte", VOLUME_OTHER},
    {"downwardAPI", "downwarAPI", VOLUME_DOWNWARD_API}, /* sic, upstream's path */
    {"fc", "fc", VOLUME_OTHER},
    {"flexVolume", "flexVolume", VOLUME_OTHER},
    {"configMap", "configMap", VOLUME_CONFIG_MAP},
    {"azureFile", "azureFile", VOLUME_OTHER},
    {"vsphereVolume", "vsphereVolume", VOLUME_OTHER},
    {"photonPersistentDisk", "photonPersistentDisk", VOLUME_OTHER},
    {"portworxVolume", "portworxVolume", VOLUME_OTHER},
    {"azureDisk", "azureDisk", VOLUME_OTHER},
    {"storageos", "storageos", VOLUME_OTHER},
    {"projected", "projected", VOLUME_PROJECTED},
    {"scaleIO", "scaleIO", VOLUME_OTHER},
    {"csi", "csi", VOLUME_OTHER},
    {"ephemeral", "ephemeral", VOLUME_OTHER},
    {"image", "image", VOLUME_OTHER},
};

static bool has_backstep(const char *p)
{
        for (const char *s = p; s;) {
                const char *slash = strchr(s, '/');
                size_t n = slash ? (size_t)(slash - s) : strlen(s);
                if (n == 2 && s[0] == '.' && s[1] == '.')
                        return true;
                s = slash ? slash + 1 : NULL;
        }
        return false;
}

static void decode_mode(struct dctx *d, json_t *o, const char *path, const char *key, bool *has,
                        int32_t *mode)
{
        *has = get_int32(d, o, path, key, mode);
        if (*has && (*mode < 0 || *mode > 0777)) {
                cleanup_free char *mp = path_child(path, key);
                ferr_invalid_int(d, mp, *mode, FILE_MODE_MSG);
        }
}

/* KeyToPath items of a secret or configMap volume. */
static void decode_items(struct dctx *d, json_t *o, const char *path, struct volume *out)
{
        json_t *items = get_array(d, o, path, "items");
        if (items == NULL)
                return;
        cleanup_free char *ip = path_child(path, "items");
        out->items = xcalloc(json_array_size(items) + 1, sizeof(*out->items));
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
                cleanup_free char *p = path_index(ip, i);
                if (!json_is_object(it)) {
                        ferr_type(d, p, it, "an object");
                        continue;
                }
                struct key_to_path *k = &out->items[out->n_items++];
                get_string(d, it, p, "key", &k->key);
                get_string(d, it, p, "path", &k->path);
                if (k->key == NULL)
                        k->key = xstrdup("");
                if (k->path == NULL)
                        k->path = xstrdup("");
                cleanup_free char *kp = path_child(p, "key");
                cleanup_free char *pp = path_child(p, "path");
                if (k->key[0] == '\0')
                        ferr_required(d, kp, "");
                if (k->path[0] == '\0')
                        ferr_required(d, pp, "");
                /* ValidateLocalNonReservedPath */
                if (k->path[0] == '/')
                        ferr_invalid(d, pp, k->path, "must be a relative path");
                if (has_backstep(k->path))
                        ferr_invalid(d, pp, k->path, "must not contain '..'");
                if (strncmp(k->path, "..", 2) == 0 && strncmp(k->path, "../", 3) != 0)
                        ferr_invalid(d, pp, k->path, "must not start with '..'");
                decode_mode(d, it, p, "mode", &k->has_mode, &k->mode);
        }
}

static void decode_empty_dir(struct dctx *d, json_t *o, const char *path, struct volume *out)
{
        get_string(d, o, path, "medium", &out->medium);
        if (out->medium == NULL)
                out->medium = xstrdup("");
        json_t *sl = jget(o, "sizeLimit");
        if (sl == NULL)
                return;
        cleanup_free char *sp = path_child(path, "sizeLimit");
        cleanup_free char *text = json_is_string(sl)   ? xstrdup(json_string_value(sl))
                                  : json_is_number(sl) ? yamljson_number_text(sl)
                                                       : NULL;
        struct quantity q;
        cleanup_error ck_error_t e = NULL;
        if (text == NULL || quantity_parse(text, &q, &e) < 0) {
                ferr_decode(d, sp, sl,
                            e ? ck_error_msg(e)
                              : "quantities must match the regular expression "
                                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
                return;
        }
        if (!quantity_value(&q, false, &out->size_limit)) {
                ferr_decode(d, sp, sl, "quantity is too large");
                return;
        }
        out->has_size_limit = true;
        cleanup_free char *canon = quantity_string(&q);
        json_object_set_new(o, "sizeLimit", json_string(canon));
        if (q.negative)
                ferr_forbidden(d, sp, "SizeLimit field must be a valid resource quantity");
}

static void decode_host_path(struct dctx *d, json_t *o, const char *path, struct volume *out)
{
        if (jget(o, "type") == NULL) /* SetDefaults_HostPathVolumeSource: HostPathUnset */
                json_object_set_new(o, "type", json_string(""));
        get_string(d, o, path, "path", &out->host_path);
        get_string(d, o, path, "type", &out->host_path_type);
        cleanup_free char *pp = path_child(path, "path");
        if (out->host_path == NULL || out->host_path[0] == '\0') {
                ferr_required(d, pp, "");
                return;
        }
        if (has_backstep(out->host_path))
                ferr_invalid(d, pp, out->host_path, "must not contain '..'");
        static const char *const types[] = {
            "",     "BlockDevice",  "CharDevice", "Directory", "DirectoryOrCreate",
            "File", "FileOrCreate", "Socket",     NULL};
        bool ok = false;
        for (const char *const *t = types; *t; t++)
                ok |= out->host_path_type && strcmp(*t, out->host_path_type) == 0;
        if (!ok && out->host_path_type) {
                cleanup_free char *tp = path_child(path, "type");
                ferr_not_supported(d, tp, out->host_path_type, types);
        }
}

static void decode_object_ref(struct dctx *d, json_t *o, const char *path, const char *name_key,
                              struct volume *out)
{
        if (jget(o, "defaultMode") == NULL)
                json_object_set_new(o, "defaultMode", json_integer(DEFAULT_MODE));
        get_string(d, o, path, name_key, &out->source_name);
        get_bool(d, o, path, "optional", &out->optional);
        cleanup_free char *np = path_child(path, name_key);
        if (out->source_name == NULL || out->source_name[0] == '\0')
                ferr_required(d, np, "");
        decode_mode(d, o, path, "defaultMode", &out->has_default_mode, &out->default_mode);
        decode_items(d, o, path, out);
}

/* fieldRef.apiVersion defaults to v1 in downward API items. */
static void default_downward_items(json_t *o)
{
        json_t *items = json_object_get(o, "items");
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
                json_t *fr = json_object_get(it, "fieldRef");
                if (json_is_object(fr))
                        set_default_string(fr, "apiVersion", "v1");
        }
}

static void decode_downward_api(struct dctx *d, json_t *o, const char *path, struct volume *out)
{
        if (jget(o, "defaultMode") == NULL)
                json_object_set_new(o, "defaultMode", json_integer(DEFAULT_MODE));
        decode_mode(d, o, path, "defaultMode", &out->has_default_mode, &out->default_mode);
        if (get_array(d, o, path, "items"))
                default_downward_items(o);
}

static void decode_projected(struct dctx *d, json_t *o, const char *path, struct volume *out)
{
        if (jget(o, "defaultMode") == NULL)
                json_object_set_new(o, "defaultMode", json_integer(DEFAULT_MODE));
        decode_mode(d, o, path, "defaultMode", &out->has_default_mode, &out->default_mode);
        json_t *sources = get_array(d, o, path, "sources");
        size_t i;
        json_t *s;
        json_array_foreach(sources, i, s)
        {
                if (!json_is_object(s))
                        continue;
                json_t *dapi = json_object_get(s, "downwardAPI");
                if (json_is_object(dapi) && json_is_array(json_object_get(dapi, "items")))
                        default_downward_items(dapi);
                json_t *sat = json_object_get(s, "serviceAccountToken");
                if (json_is_object(sat) && jget(sat, "expirationSeconds") == NULL)
                        json_object_set_new(sat, "expirationSeconds", json_integer(3600));
        }
}

void decode_volume(struct dctx *d, json_t *v, const char *path, struct volume *out)
{
        get_string(d, v, path, "name", &out->name);
        if (out->name == NULL)
                out->name = xstrdup("");

        bool any = false;
        for (size_t i = 0; i < ARRAY_SIZE(SOURCES) && !any; i++)
                any = jget(v, SOURCES[i].key) != NULL;
        if (!any) /* SetDefaults_Volume: no source is an emptyDir */
                json_object_set_new(v, "emptyDir", json_object());

        int count = 0;
        for (size_t i = 0; i < ARRAY_SIZE(SOURCES); i++) {
                json_t *src = jget(v, SOURCES[i].key);
                if (src == NULL)
                        continue;
                if (count++ > 0) {
                        cleanup_free char *fp = path_child(path, SOURCES[i].err_name);
                        ferr_forbidden(d, fp, "may not specify more than 1 volume type");
                        continue;
                }
                cleanup_free char *sp = path_child(path, SOURCES[i].key);
                out->kind = SOURCES[i].kind;
                if (!json_is_object(src)) {
                        ferr_type(d, sp, src, "an object");
                        continue;
                }
                out->source = src;
                switch (SOURCES[i].kind) {
                case VOLUME_EMPTY_DIR:
                        decode_empty_dir(d, src, sp, out);
                        break;
                case VOLUME_HOST_PATH:
                        decode_host_path(d, src, sp, out);
                        break;
                case VOLUME_SECRET:
                        decode_object_ref(d, src, sp, "secretName", out);
                        break;
                case VOLUME_CONFIG_MAP:
                        decode_object_ref(d, src, sp, "name", out);
                        break;
                case VOLUME_DOWNWARD_API:
                        decode_downward_api(d, src, sp, out);
                        break;
                case VOLUME_PROJECTED:
                        decode_projected(d, src, sp, out);
                        break;
                default:
                        break;
                }
        }
}
