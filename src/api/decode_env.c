/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container environment: env (value, fieldRef, resourceFieldRef,
 * configMapKeyRef, secretKeyRef) and envFrom, with the defaults
 * (fieldRef.apiVersion v1) and ValidateEnv / ValidateEnvFrom.
 */
#include "api/api_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static void validate_field_ref(struct dctx *d, const char *path, const char *api_version,
                               const char *field_path)
{
        static const char *const env_paths[] = {
            "metadata.name",
            "metadata.namespace",
            "metadata.uid",
            "spec.nodeName",
            "spec.serviceAccountName",
            "status.hostIP",
            "status.hostIPs",
            "status.podIP",
            "status.podIPs",
            NULL,
        };
        static const char *const v1_labels[] = {
            "metadata.annotations",
            "metadata.labels",
            "metadata.name",
            "metadata.namespace",
            "metadata.uid",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.serviceAccountName",
            "spec.schedulerName",
            "status.phase",
            "status.hostIP",
            "status.hostIPs",
            "status.podIP",
            "status.podIPs",
            "spec.host",
            NULL,
        };
        cleanup_free char *fp = path_child(path, "fieldPath");
        if (api_version == NULL || api_version[0] == '\0') {
                cleanup_free char *ap = path_child(path, "apiVersion");
                ferr_required(d, ap, "");
                return;
        }
        if (field_path == NULL || field_path[0] == '\0') {
                ferr_required(d, fp, "");
                return;
        }
        cleanup_free char *sub_path = NULL, *subscript = NULL;
        bool subscripted = pod_split_field_path(field_path, &sub_path, &subscript);
        cleanup_free char *conv_err = NULL;
        if (strcmp(api_version, "v1") != 0) {
                conv_err = xasprintf("unsupported pod version: %s", api_version);
        } else if (subscripted) {
                if (!str_eq(sub_path, "metadata.annotations") &&
                    !str_eq(sub_path, "metadata.labels"))
                        conv_err =
                            xasprintf("field label does not support subscript: %s", field_path);
        } else {
                bool known = false;
                for (const char *const *p = v1_labels; *p; p++)
                        known |= strcmp(*p, field_path) == 0;
                if (!known)
                        conv_err = xasprintf("field label not supported: %s", field_path);
        }
        if (conv_err) {
                cleanup_free char *msg = xasprintf("error converting fieldPath: %s", conv_err);
                ferr_invalid(d, fp, field_path, msg);
                return;
        }
        if (subscripted) {
                if (strcmp(sub_path, "metadata.annotations") == 0)
                        for (char *s = subscript; *s; s++)
                                *s = (char)tolower((unsigned char)*s);
                validate_qualified_name(d, path, subscript);
                return;
        }
        const char *internal = strcmp(field_path, "spec.host") == 0 ? "spec.nodeName" : field_path;
        bool ok = false;
        for (const char *const *p = env_paths; *p; p++)
                ok |= strcmp(*p, internal) == 0;
        if (!ok)
                ferr_not_supported(d, fp, internal, env_paths);
}

static void validate_key_selector(struct dctx *d, const char *path, const struct env_var *e)
{
        cleanup_free char *np = path_child(path, "name");
        validate_dns1123_subdomain(d, np, e->ref_name ? e->ref_name : "");
        cleanup_free char *kp = path_child(path, "key");
        if (e->ref_key == NULL || e->ref_key[0] == '\0')
                ferr_required(d, kp, "");
        else
                validate_config_map_key(d, kp, e->ref_key);
}

/* upstream validateFileKeySelector (EnvFiles, beta and on in 1.35) */
static void validate_file_key_selector(struct dctx *d, const char *path, const struct env_var *e)
{
        cleanup_free char *kp = path_child(path, "key");
        if (e->ref_key == NULL || e->ref_key[0] == '\0')
                ferr_required(d, kp, "");
        else
                validate_env_var_name(d, kp, e->ref_key);
        cleanup_free char *vp = path_child(path, "volumeName");
        if (e->ref_name == NULL || e->ref_name[0] == '\0')
                ferr_required(d, vp, "");
        else
                validate_dns1123_label(d, vp, e->ref_name);
        cleanup_free char *pp = path_child(path, "path");
        if (e->file_path == NULL || e->file_path[0] == '\0') {
                ferr_required(d, pp, "");
                return;
        }
        /* validatePathNoBacksteps */
        for (const char *s = e->file_path; *s;) {
                size_t n = strcspn(s, "/");
                if (n == 2 && s[0] == '.' && s[1] == '.') {
                        ferr_invalid(d, pp, e->file_path, "must not contain '..'");
                        break;
                }
                s += n;
                while (*s == '/')
                        s++;
        }
}

static void decode_value_from(struct dctx *d, json_t *vf, const char *path, struct env_var *e)
{
        int sources = 0;
        json_t *o;
        if ((o = get_object(d, vf, path, "fieldRef"))) {
                cleanup_free char *sp = path_child(path, "fieldRef");
                set_default_string(o, "apiVersion", "v1"); /* SetDefaults_ObjectFieldSelector */
                cleanup_free char *api_version = NULL;
                get_string(d, o, sp, "apiVersion", &api_version);
                get_string(d, o, sp, "fieldPath", &e->field_path);
                e->kind = ENV_FIELD_REF;
                sources++;
                validate_field_ref(d, sp, api_version, e->field_path);
        }
        if ((o = get_object(d, vf, path, "resourceFieldRef"))) {
                static const char *const resources[] = {
                    "limits.cpu",   "limits.ephemeral-storage",   "limits.memory",
                    "requests.cpu", "requests.ephemeral-storage", "requests.memory",
                    NULL,
                };
                cleanup_free char *sp = path_child(path, "resourceFieldRef");
                get_string(d, o, sp, "containerName", &e->container_name);
                get_string(d, o, sp, "resource", &e->resource);
                json_t *div = jget(o, "divisor");
                if (div) { /* a Quantity: canonical text, as the apiserver stores it */
                        cleanup_free char *dp = path_child(sp, "divisor");
                        cleanup_free char *text = json_is_string(div)
                                                      ? xstrdup(json_string_value(div))
                                                  : json_is_number(div) ? yamljson_number_text(div)
                                                                        : NULL;
                        struct quantity q;
                        cleanup_error ck_error_t qe = NULL;
                        if (text == NULL || quantity_parse(text, &q, &qe) < 0) {
                                ferr_decode(d, dp, div,
                                            qe ? ck_error_msg(qe)
                                               : "quantities must match the regular expression "
                                                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
                        } else {
                                e->divisor = quantity_string(&q);
                                json_object_set_new(o, "divisor", json_string(e->divisor));
                        }
                }
                e->kind = ENV_RESOURCE_REF;
                sources++;
                cleanup_free char *rp = path_child(sp, "resource");
                if (e->resource == NULL || e->resource[0] == '\0') {
                        ferr_required(d, rp, "");
                } else {
                        bool ok = strncmp(e->resource, "limits.hugepages-", 17) == 0 ||
                                  strncmp(e->resource, "requests.hugepages-", 19) == 0;
                        for (const char *const *p = resources; *p; p++)
                                ok |= strcmp(*p, e->resource) == 0;
                        if (!ok)
                                ferr_not_supported(d, rp, e->resource, resources);
                }
        }
        static const struct {
                const char *key;
                enum env_source_kind kind;
        } refs[] = {{"configMapKeyRef", ENV_CONFIG_MAP_KEY}, {"secretKeyRef", ENV_SECRET_KEY}};
        for (size_t i = 0; i < ARRAY_SIZE(refs); i++) {
                if ((o = get_object(d, vf, path, refs[i].key)) == NULL)
                        continue;
                cleanup_free char *sp = path_child(path, refs[i].key);
                free(e->ref_name);
                free(e->ref_key);
                e->ref_name = e->ref_key = NULL;
                get_string(d, o, sp, "name", &e->ref_name);
                get_string(d, o, sp, "key", &e->ref_key);
                get_bool(d, o, sp, "optional", &e->optional);
                e->kind = refs[i].kind;
                sources++;
                validate_key_selector(d, sp, e);
        }
        if ((o = get_object(d, vf, path, "fileKeyRef"))) {
                cleanup_free char *sp = path_child(path, "fileKeyRef");
                get_string(d, o, sp, "volumeName", &e->ref_name);
                get_string(d, o, sp, "path", &e->file_path);
                get_string(d, o, sp, "key", &e->ref_key);
                get_bool(d, o, sp, "optional", &e->optional);
                e->kind = ENV_FILE_KEY;
                sources++;
                validate_file_key_selector(d, sp, e);
        }
        if (sources == 0)
                ferr_invalid(d, path, "",
                             "must specify one of: `fieldRef`, `resourceFieldRef`, "
                             "`configMapKeyRef`, `secretKeyRef` or `fileKeyRef`");
        else if (e->value && e->value[0])
                ferr_invalid(d, path, "", "may not be specified when `value` is not empty");
        else if (sources > 1)
                ferr_invalid(d, path, "", "may not have more than one field specified at a time");
}

void decode_env(struct dctx *d, json_t *c, const char *path, struct container *out)
{
        json_t *env = get_array(d, c, path, "env");
        if (env == NULL)
                return;
        cleanup_free char *ep = path_child(path, "env");
        out->env = xcalloc(json_array_size(env) + 1, sizeof(*out->env));
        size_t i;
        json_t *eo;
        json_array_foreach(env, i, eo)
        {
                cleanup_free char *ip = path_index(ep, i);
                if (!json_is_object(eo)) {
                        ferr_type(d, ip, eo, "an object");
                        continue;
                }
                struct env_var *e = &out->env[out->n_env++];
                get_string(d, eo, ip, "name", &e->name);
                get_string(d, eo, ip, "value", &e->value);
                if (e->name == NULL)
                        e->name = xstrdup("");
                cleanup_free char *np = path_child(ip, "name");
                if (e->name[0] == '\0')
                        ferr_required(d, np, "");
                else
                        validate_env_var_name(d, np, e->name);
                json_t *vf = get_object(d, eo, ip, "valueFrom");
                if (vf) {
                        cleanup_free char *vp = path_child(ip, "valueFrom");
                        decode_value_from(d, vf, vp, e);
                }
                if (e->kind == ENV_VALUE && e->value == NULL)
                        e->value = xstrdup("");
        }
}

void decode_env_from(struct dctx *d, json_t *c, const char *path, struct container *out)
{
        json_t *arr = get_array(d, c, path, "envFrom");
        if (arr == NULL)
                return;
        cleanup_free char *ep = path_child(path, "envFrom");
        out->env_from = xcalloc(json_array_size(arr) + 1, sizeof(*out->env_from));
        size_t i;
        json_t *eo;
        json_array_foreach(arr, i, eo)
        {
                cleanup_free char *ip = path_index(ep, i);
                if (!json_is_object(eo)) {
                        ferr_type(d, ip, eo, "an object");
                        continue;
                }
                struct env_from_source *e = &out->env_from[out->n_env_from++];
                get_string(d, eo, ip, "prefix", &e->prefix);
                if (e->prefix && e->prefix[0]) {
                        cleanup_free char *pp = path_child(ip, "prefix");
                        validate_env_var_name(d, pp, e->prefix);
                }
                int sources = 0;
                static const char *const keys[] = {"configMapRef", "secretRef"};
                for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
                        json_t *ref = get_object(d, eo, ip, keys[k]);
                        if (ref == NULL)
                                continue;
                        cleanup_free char *rp = path_child(ip, keys[k]);
                        free(e->name);
                        e->name = NULL;
                        get_string(d, ref, rp, "name", &e->name);
                        get_bool(d, ref, rp, "optional", &e->optional);
                        e->is_secret = k == 1;
                        sources++;
                        cleanup_free char *np = path_child(rp, "name");
                        if (e->name == NULL || e->name[0] == '\0')
                                ferr_required(d, np, "");
                        else
                                validate_dns1123_subdomain(d, np, e->name);
                }
                if (sources == 0)
                        ferr_invalid(d, ep, "",
                                     "must specify one of: `configMapRef` or `secretRef`");
                else if (sources > 1)
                        ferr_invalid(d, ep, "",
                                     "may not have more than one field specified at a time");
        }
}
