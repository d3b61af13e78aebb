/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sandbox checkpoints (dockershim_internal.h): <dir>/<sandbox ID>, one
 * JSON file per sandbox, in cri-dockerd's format and with its checksum, so
 * that either shim reads the other's:
 *
 *   {"version":"v1","name":"web","namespace":"default",
 *    "data":{"port_mappings":[{"protocol":"tcp","container_port":80,
 *    "host_port":8080,"host_ip":"10.0.0.1"}],"host_network":true},
 *    "checksum":3712672205}
 *
 * (port_mappings, host_ip and host_network left out when empty or false).
 * The checksum is FNV-1a 32 of what Go's spew prints for the data struct
 * (its %#v with sorted keys): "(core.CheckpointData){PortMappings:
 * ([]*config.PortMapping)<nil> HostNetwork:(bool)false}", each mapping
 * "<*>{Protocol:(*config.Protocol)tcp ContainerPort:(*int32)80
 * HostPort:(*int32)8080 HostIP:(string)10.0.0.1}", one space apart in [].
 */
#include "dockershim/dockershim_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/gohash.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECKPOINT_MAX (1024 * 1024)

void shim_checkpoint_clear(struct shim_checkpoint *c)
{
        free(c->name);
        free(c->ns);
        for (size_t i = 0; i < c->n_ports; i++) {
                free(c->ports[i].protocol);
                free(c->ports[i].host_ip);
        }
        free(c->ports);
        *c = (struct shim_checkpoint){0};
}

uint32_t shim_checkpoint_checksum(const struct shim_checkpoint *c)
{
        size_t cap = 256, len = 0;
        char *s = xmalloc(cap);
#define PUT(...)                                                                                   \
        do {                                                                                       \
                int n_ = snprintf(s + len, cap - len, __VA_ARGS__);                                \
                if ((size_t)n_ >= cap - len) {                                                     \
                        cap = len + (size_t)n_ + 256;                                              \
                        s = xrealloc(s, cap);                                                      \
                        snprintf(s + len, cap - len, __VA_ARGS__);                                 \
                }                                                                                  \
                len += (size_t)n_;                                                                 \
        } while (0)
        PUT("(core.CheckpointData){PortMappings:([]*config.PortMapping)");
        if (!c->ports_present) {
                PUT("<nil>");
        } else {
                PUT("[");
                for (size_t i = 0; i < c->n_ports; i++)
                        PUT("%s<*>{Protocol:(*config.Protocol)%s ContainerPort:(*int32)%d "
                            "HostPort:(*int32)%d HostIP:(string)%s}",
                            i ? " " : "", c->ports[i].protocol, c->ports[i].container_port,
                            c->ports[i].host_port, c->ports[i].host_ip ? c->ports[i].host_ip : "");
                PUT("]");
        }
        PUT(" HostNetwork:(bool)%s}", c->host_network ? "true" : "false");
#undef PUT
        uint32_t h = go_fnv32a(GO_FNV32A_INIT, s, len);
        free(s);
        return h;
}

char *shim_checkpoint_encode(const struct shim_checkpoint *c)
{
        json_t *data = json_object();
        if (c->ports_present) {
                json_t *ports = json_array();
                for (size_t i = 0; i < c->n_ports; i++) {
                        const struct shim_port *p = &c->ports[i];
                        json_t *o =
                            json_pack("{s:s,s:i,s:i}", "protocol", p->protocol, "container_port",
                                      p->container_port, "host_port", p->host_port);
                        if (p->host_ip && *p->host_ip)
                                json_object_set_new(o, "host_ip", json_string(p->host_ip));
                        json_array_append_new(ports, o);
                }
                json_object_set_new(data, "port_mappings", ports);
        }
        if (c->host_network)
                json_object_set_new(data, "host_network", json_true());
        json_t *j =
            json_pack("{s:s,s:s,s:s,s:o,s:I}", "version", "v1", "name", c->name, "namespace", c->ns,
                      "data", data, "checksum", (json_int_t)shim_checkpoint_checksum(c));
        char *out = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(j);
        return out;
}

static int corrupt(ck_error_t *err, const char *why)
{
        return ck_error_make(err, 0, "checkpoint is corrupted: %s", why);
}

int shim_checkpoint_decode(const char *buf, size_t len, struct shim_checkpoint *out,
                           ck_error_t *err)
{
        *out = (struct shim_checkpoint){0};
        json_t *j = json_loadb(buf, len, 0, NULL);
        if (!json_is_object(j)) {
                json_decref(j);
                return corrupt(err, "not a JSON object");
        }
        const char *version = json_string_value(json_object_get(j, "version"));
        const char *name = json_string_value(json_object_get(j, "name"));
        const char *ns = json_string_value(json_object_get(j, "namespace"));
        json_t *data = json_object_get(j, "data");
        json_t *sum = json_object_get(j, "checksum");
        int rc = -1;
        if (version == NULL || strcmp(version, "v1") != 0) {
                corrupt(err, "version is not v1");
                goto out;
        }
        if (name == NULL || ns == NULL || !json_is_integer(sum) ||
            (data && !json_is_object(data))) {
                corrupt(err, "name, namespace, data or checksum missing or mistyped");
                goto out;
        }
        out->name = xstrdup(name);
        out->ns = xstrdup(ns);
        json_t *hn = json_object_get(data, "host_network");
        if (hn && !json_is_boolean(hn)) {
                corrupt(err, "host_network is not a boolean");
                goto out;
        }
        out->host_network = json_is_true(hn);
        json_t *ports = json_object_get(data, "port_mappings");
        if (ports && !json_is_null(ports)) {
                if (!json_is_array(ports)) {
                        corrupt(err, "port_mappings is not an array");
                        goto out;
                }
                out->ports_present = true;
                size_t n = json_array_size(ports);
                out->ports = xcalloc(n ? n : 1, sizeof(*out->ports));
                for (size_t i = 0; i < n; i++) {
                        json_t *p = json_array_get(ports, i);
                        const char *proto = json_string_value(json_object_get(p, "protocol"));
                        json_t *cp = json_object_get(p, "container_port");
                        json_t *hp = json_object_get(p, "host_port");
                        const char *ip = json_string_value(json_object_get(p, "host_ip"));
                        if (proto == NULL || !json_is_integer(cp) || !json_is_integer(hp) ||
                            json_integer_value(cp) < INT32_MIN ||
                            json_integer_value(cp) > INT32_MAX ||
                            json_integer_value(hp) < INT32_MIN ||
                            json_integer_value(hp) > INT32_MAX) {
                                corrupt(err, "a port mapping is mistyped");
                                goto out;
                        }
                        out->ports[i].protocol = xstrdup(proto);
                        out->ports[i].container_port = (int32_t)json_integer_value(cp);
                        out->ports[i].host_port = (int32_t)json_integer_value(hp);
                        out->ports[i].host_ip = xstrdup(ip ? ip : "");
                        out->n_ports = i + 1;
                }
        }
        if ((json_int_t)shim_checkpoint_checksum(out) != json_integer_value(sum)) {
                corrupt(err, "checksum mismatch");
                goto out;
        }
        rc = 0;
out:
        json_decref(j);
        if (rc < 0)
                shim_checkpoint_clear(out);
        return rc;
}

/* <dir>/<id>, the id checked to be a plain name. */
static char *checkpoint_path(const char *dir, const char *id, ck_error_t *err)
{
        if (*id == '\0' || id[0] == '.' || strchr(id, '/') != NULL)
                return ck_error_make(err, EINVAL, "sandbox checkpoint `%s`", id), NULL;
        return xasprintf("%s/%s", dir, id);
}

int shim_checkpoint_write(const char *dir, const char *id, const struct shim_checkpoint *c,
                          ck_error_t *err)
{
        cleanup_free char *path = checkpoint_path(dir, id, err);
        if (path == NULL)
                return -1;
        if (fs_mkdir_p(dir, 0755, err) < 0)
                return ck_error_wrap(err, "sandbox checkpoint directory `%s`", dir);
        cleanup_free char *text = shim_checkpoint_encode(c);
        if (fs_write_file_atomic(path, text, strlen(text), 0600, err) < 0)
                return ck_error_wrap(err, "write sandbox checkpoint `%s`", path);
        return 0;
}

int shim_checkpoint_read(const char *dir, const char *id, struct shim_checkpoint *out,
                         ck_error_t *err)
{
        *out = (struct shim_checkpoint){0};
        cleanup_free char *path = checkpoint_path(dir, id, err);
        if (path == NULL)
                return -1;
        cleanup_free char *buf = NULL;
        size_t len = 0;
        if (fs_read_file(path, CHECKPOINT_MAX, &buf, &len, err) < 0)
                return ck_error_wrap(err, "read sandbox checkpoint `%s`", path);
        if (shim_checkpoint_decode(buf, len, out, err) < 0)
                return ck_error_wrap(err, "sandbox checkpoint `%s`", path);
        return 0;
}

int shim_checkpoint_remove(const char *dir, const char *id, ck_error_t *err)
{
        cleanup_free char *path = checkpoint_path(dir, id, err);
        if (path == NULL)
                return -1;
        if (unlink(path) < 0 && errno != ENOENT)
                return ck_error_make(err, errno, "remove sandbox checkpoint `%s`", path);
        return 0;
}

int shim_checkpoint_list(const char *dir, char ***ids, size_t *n, ck_error_t *err)
{
        *ids = NULL;
        *n = 0;
        DIR *d = NULL;
        if (fs_opendir_if_exists(dir, &d, err) < 0)
                return -1;
        if (d == NULL)
                return 0;
        size_t cap = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.')
                        continue;
                if (*n == cap) {
                        cap = cap ? cap * 2 : 16;
                        *ids = xrealloc(*ids, cap * sizeof(char *));
                }
                (*ids)[(*n)++] = xstrdup(e->d_name);
        }
        closedir(d);
        return 0;
}
