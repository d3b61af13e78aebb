/* SPDX-License-Identifier: Apache-2.0 */
#include "userns/userns.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* upstream userNsUnitLength */
#define UNIT_LENGTH 65536u
#define KUBELET_USER "kubelet"
#define MAPPINGS_FILE "userns"

struct allocation {
        char *uid;
        uint32_t slot;
};

struct userns_manager {
        pthread_mutex_t lock;
        char *root_dir;
        uint32_t ids_per_pod;
        uint32_t off, len; /* the kubelet's range, in slots of ids_per_pod */
        uint8_t *used;     /* a bit per slot */
        struct allocation *by_pod;
        size_t n_by_pod;
};

static bool kubelet_user_exists(const struct userns_config *cfg)
{
        if (cfg->kubelet_user >= 0)
                return cfg->kubelet_user == 1;
        struct passwd pw, *res = NULL;
        char buf[4096];
        return getpwnam_r(KUBELET_USER, &pw, buf, sizeof(buf), &res) == 0 && res != NULL;
}

/* The kubelet user's one "kubelet:first:count" line of a subordinate ID
 * file (getsubids prints one line; upstream wants exactly one). */
static int sub_ids(const char *path, const char *what, uint32_t *first, uint32_t *count,
                   ck_error_t *err)
{
        cleanup_free char *buf = NULL;
        size_t len = 0;
        if (fs_read_file(path, 1 << 20, &buf, &len, err) < 0)
                return ck_error_wrap(err, "error retrieving additional %s for user \"%s\"", what,
                                     KUBELET_USER);
        int found = 0;
        for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
                char name[64];
                unsigned long long f, c;
                if (sscanf(line, "%63[^:]:%llu:%llu", name, &f, &c) != 3 ||
                    strcmp(name, KUBELET_USER) != 0)
                        continue;
                if (found++ > 0)
                        return ck_error_make(err, 0,
                                             "error parsing %s: more than one range for user "
                                             "\"%s\"",
                                             path, KUBELET_USER);
                if (f > UINT32_MAX || c > UINT32_MAX || f + c > (1ull << 32))
                        return ck_error_make(err, 0, "error parsing %s: range %s out of bounds",
                                             path, line);
                *first = (uint32_t)f;
                *count = (uint32_t)c;
        }
        if (found == 0)
                return ck_error_make(err, 0,
                                     "error retrieving additional %s for user \"%s\": none in %s",
                                     what, KUBELET_USER, path);
        return 0;
}

int userns_kubelet_mappings(const struct userns_config *cfg, uint32_t ids_per_pod, uint32_t *first,
                            uint32_t *len, ck_error_t *err)
{
        if (!kubelet_user_exists(cfg)) {
                *first = ids_per_pod;
                *len = (uint32_t)((1ull << 32) - ids_per_pod);
                return 0;
        }
        uint32_t uf, uc, gf, gc;
        if (sub_ids(cfg->subuid_path ? cfg->subuid_path : "/etc/subuid", "uids", &uf, &uc, err) <
                0 ||
            sub_ids(cfg->subgid_path ? cfg->subgid_path : "/etc/subgid", "gids", &gf, &gc, err) < 0)
                return -1;
        if (uf != gf || uc != gc)
                return ck_error_make(err, 0, "mismatched subuids and subgids for user \"%s\"",
                                     KUBELET_USER);
        *first = uf;
        *len = uc;
        return 0;
}

static bool is_used(const struct userns_manager *m, uint32_t slot)
{
        return m->used[slot / 8] & (1u << (slot % 8));
}

static void set_used(struct userns_manager *m, uint32_t slot, bool on)
{
        if (on)
                m->used[slot / 8] |= (uint8_t)(1u << (slot % 8));
        else
                m->used[slot / 8] &= (uint8_t) ~(1u << (slot % 8));
}

static struct allocation *find(struct userns_manager *m, const char *uid)
{
        for (size_t i = 0; i < m->n_by_pod; i++)
                if (strcmp(m->by_pod[i].uid, uid) == 0)
                        return &m->by_pod[i];
        return NULL;
}

/* upstream record: the range at host_id, of the right length and place,
 * free unless it is the pod's already */
static int record(struct userns_manager *m, const char *uid, uint32_t host_id, uint32_t length,
                  ck_error_t *err)
{
        if (length != m->ids_per_pod)
                return ck_error_make(err, 0, "wrong user namespace length %" PRIu32, length);
        if (host_id % m->ids_per_pod != 0)
                return ck_error_make(err, 0, "wrong user namespace offset specified %" PRIu32,
                                     host_id);
        struct allocation *a = find(m, uid);
        uint32_t index = host_id / m->ids_per_pod;
        if (a != NULL && a->slot + m->off != index)
                return ck_error_make(
                    err, 0, "different user namespace range already used by pod \"%s\"", uid);
        if (index < m->off || index - m->off >= m->len)
                return ck_error_make(err, 0, "id %" PRIu32 " is out of range", host_id);
        uint32_t slot = index - m->off;
        if (a == NULL && is_used(m, slot))
                return ck_error_make(err, 0, "range picked for pod \"%s\" already taken", uid);
        if (a == NULL) {
                m->by_pod = xrealloc(m->by_pod, (m->n_by_pod + 1) * sizeof(*m->by_pod));
                m->by_pod[m->n_by_pod++] = (struct allocation){.uid = xstrdup(uid), .slot = slot};
        }
        set_used(m, slot, true);
        return 0;
}

static char *mappings_path(const struct userns_manager *m, const char *uid)
{
        return xasprintf("%s/pods/%s/" MAPPINGS_FILE, m->root_dir, uid);
}

/* upstream releaseWithLock: the slot free, the pod's file gone */
static void release(struct userns_manager *m, const char *uid)
{
        for (size_t i = 0; i < m->n_by_pod; i++) {
                if (strcmp(m->by_pod[i].uid, uid) != 0)
                        continue;
                set_used(m, m->by_pod[i].slot, false);
                free(m->by_pod[i].uid);
                m->by_pod[i] = m->by_pod[--m->n_by_pod];
                break;
        }
        cleanup_free char *path = mappings_path(m, uid);
        if (unlink(path) < 0 && errno != ENOENT)
                LOG_WARN("Failed to remove a pod's user namespace file", "path=\"%s\" err=\"%s\"",
                         path, strerror(errno));
}

int userns_parse_mappings(const char *text, size_t len, uint32_t *host_id, uint32_t *length,
                          ck_error_t *err)
{
        json_error_t je;
        cleanup_json json_t *o = json_loadb(text, len, 0, &je);
        if (o == NULL)
                return ck_error_make(err, 0, "invalid user namespace mappings file: %s", je.text);
        const json_t *u = json_object_get(o, "uidMappings");
        const json_t *g = json_object_get(o, "gidMappings");
        if (json_array_size(u) != 1 || json_array_size(g) != 1)
                return ck_error_make(err, 0,
                                     "invalid user namespace configuration: exactly one "
                                     "uid and one gid mapping are supported");
        if (!json_equal(json_array_get(u, 0), json_array_get(g, 0)))
                return ck_error_make(err, 0,
                                     "invalid user namespace configuration: uid and gid "
                                     "mappings differ");
        const json_t *e = json_array_get(u, 0);
        const json_t *jh = json_object_get(e, "hostId"), *jc = json_object_get(e, "containerId"),
                     *jl = json_object_get(e, "length");
        if (!json_is_integer(jh) || !json_is_integer(jc) || !json_is_integer(jl))
                return ck_error_make(err, 0, "invalid user namespace mapping");
        json_int_t host = json_integer_value(jh), cont = json_integer_value(jc),
                   n = json_integer_value(jl);
        if (cont != 0)
                return ck_error_make(err, 0, "container id must be 0, got %lld", (long long)cont);
        if (host < 0 || host > UINT32_MAX || n < 0 || n > UINT32_MAX)
                return ck_error_make(err, 0, "invalid user namespace mapping");
        *host_id = (uint32_t)host;
        *length = (uint32_t)n;
        return 0;
}

char *userns_format_mappings(uint32_t host_id, uint32_t length)
{
        return xasprintf("{\"uidMappings\":[{\"hostId\":%" PRIu32
                         ",\"containerId\":0,\"length\":%" PRIu32
                         "}],\"gidMappings\":[{\"hostId\":%" PRIu32
                         ",\"containerId\":0,\"length\":%" PRIu32 "}]}",
                         host_id, length, host_id, length);
}

/* upstream parseUserNsFileAndRecord */
static int parse_and_record(struct userns_manager *m, const char *uid, const char *text, size_t len,
                            uint32_t *host_id, ck_error_t *err)
{
        uint32_t n;
        if (userns_parse_mappings(text, len, host_id, &n, err) < 0)
                return -1;
        return record(m, uid, *host_id, n, err);
}

int userns_manager_new(const struct userns_config *cfg, struct userns_manager **out,
                       ck_error_t *err)
{
        *out = NULL;
        uint32_t ids = cfg->ids_per_pod ? cfg->ids_per_pod : USERNS_DEFAULT_IDS_PER_POD;
        uint32_t first, len;
        if (userns_kubelet_mappings(cfg, ids, &first, &len, err) < 0)
                return ck_error_wrap(err, "kubelet mappings");
        if (ids % UNIT_LENGTH != 0)
                return ck_error_make(
                    err, 0, "kubelet user namespace length %" PRIu32 " is not a multiple of %u",
                    ids, UNIT_LENGTH);
        if (first % ids != 0)
                return ck_error_make(
                    err, 0, "kubelet user assigned ID %" PRIu32 " is not a multiple of %" PRIu32,
                    first, ids);
        if (first < ids)
                return ck_error_make(err, 0,
                                     "kubelet user assigned ID %" PRIu32
                                     " must be greater or equal to %" PRIu32,
                                     first, ids);
        if (len % ids != 0)
                return ck_error_make(err, 0,
                                     "kubelet user assigned IDs length %" PRIu32
                                     " is not a multiple of %" PRIu32,
                                     len, ids);
        if (len / ids < (uint32_t)(cfg->max_pods > 0 ? cfg->max_pods : 0))
                return ck_error_make(err, 0,
                                     "kubelet user assigned IDs are not enough to support %d pods",
                                     (int)cfg->max_pods);
        struct userns_manager *m = xcalloc(1, sizeof(*m));
        pthread_mutex_init(&m->lock, NULL);
        m->root_dir = xstrdup(cfg->root_dir);
        m->ids_per_pod = ids;
        m->off = first / ids;
        m->len = len / ids;
        m->used = xcalloc(m->len / 8 + 1, 1);
        /* the pods' files: their ranges are taken */
        cleanup_free char *pods = xasprintf("%s/pods", cfg->root_dir);
        DIR *d = opendir(pods);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.')
                        continue;
                cleanup_free char *p = mappings_path(m, e->d_name);
                cleanup_free char *text = NULL;
                size_t n = 0;
                cleanup_error ck_error_t re = NULL;
                if (fs_read_file(p, 1 << 16, &text, &n, &re) < 0)
                        continue; /* no user namespace */
                uint32_t host;
                if (n > 0 && parse_and_record(m, e->d_name, text, n, &host, err) < 0) {
                        ck_error_wrap(err, "record pod mappings for existing pod \"%s\"",
                                      e->d_name);
                        closedir(d);
                        userns_manager_free(m);
                        return -1;
                }
        }
        if (d != NULL)
                closedir(d);
        LOG_INFO(5, "User namespace manager mapping",
                 "offset=%" PRIu32 " length=%" PRIu32 " idsPerPod=%" PRIu32, m->off, m->len, ids);
        *out = m;
        return 0;
}

void userns_manager_free(struct userns_manager *m)
{
        if (m == NULL)
                return;
        for (size_t i = 0; i < m->n_by_pod; i++)
                free(m->by_pod[i].uid);
        free(m->by_pod);
        free(m->used);
        free(m->root_dir);
        pthread_mutex_destroy(&m->lock);
        free(m);
}

/* upstream createUserNs: the first free slot (upstream's bitmap picks at
 * random), taken, then its file written; a failed write gives it back */
static int create(struct userns_manager *m, const char *uid, uint32_t *host_id, ck_error_t *err)
{
        uint32_t slot = 0;
        while (slot < m->len && is_used(m, slot))
                slot++;
        if (slot == m->len)
                return ck_error_make(err, 0,
                                     "could not find an empty slot to allocate a user namespace");
        uint32_t host = (slot + m->off) * m->ids_per_pod;
        if (record(m, uid, host, m->ids_per_pod, err) < 0)
                return -1;
        cleanup_free char *text = userns_format_mappings(host, m->ids_per_pod);
        cleanup_free char *dir = xasprintf("%s/pods/%s", m->root_dir, uid);
        cleanup_free char *path = mappings_path(m, uid);
        if (fs_mkdir_p(dir, 0750, err) < 0 ||
            fs_write_file_atomic(path, text, strlen(text), 0644, err) < 0) {
                release(m, uid);
                return ck_error_wrap(err, "create user namespace");
        }
        LOG_INFO(5, "New pod user namespace allocation", "podUID=\"%s\"", uid);
        *host_id = host;
        return 0;
}

int userns_pod_mappings(struct userns_manager *m, const char *pod_uid, uint32_t *host_id,
                        uint32_t *length, ck_error_t *err)
{
        if (strchr(pod_uid, '/') != NULL || strcmp(pod_uid, "..") == 0 ||
            strcmp(pod_uid, ".") == 0 || *pod_uid == '\0')
                return ck_error_make(err, 0, "invalid pod UID \"%s\"", pod_uid);
        pthread_mutex_lock(&m->lock);
        cleanup_free char *path = mappings_path(m, pod_uid);
        cleanup_free char *text = NULL;
        size_t n = 0;
        cleanup_error ck_error_t re = NULL;
        int ret;
        if (fs_read_file(path, 1 << 16, &text, &n, &re) < 0 && re->status != ENOENT) {
                /* not a missing file: never a second range for the pod */
                ret = ck_error_make(err, 0, "user namespace: %s", ck_error_msg(re));
        } else if (n > 0) {
                ret = parse_and_record(m, pod_uid, text, n, host_id, err);
                if (ret < 0)
                        ck_error_wrap(err, "user namespace");
        } else {
                ret = create(m, pod_uid, host_id, err);
        }
        pthread_mutex_unlock(&m->lock);
        *length = m->ids_per_pod;
        return ret;
}

void userns_retain(struct userns_manager *m, const char *const *keep, size_t n)
{
        pthread_mutex_lock(&m->lock);
        for (size_t i = 0; i < m->n_by_pod;) {
                bool wanted = false;
                for (size_t k = 0; k < n && !wanted; k++)
                        wanted = strcmp(m->by_pod[i].uid, keep[k]) == 0;
                if (wanted) {
                        i++;
                        continue;
                }
                cleanup_free char *uid = xstrdup(m->by_pod[i].uid);
                LOG_INFO(5, "Releasing pod user namespace allocation", "podUID=\"%s\"", uid);
                release(m, uid); /* moves the last entry to i */
        }
        pthread_mutex_unlock(&m->lock);
}
