/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the runtime has: GetPodStatus and GetPods (upstream
 * kuberuntime_manager.go, kuberuntime_sandbox.go, kuberuntime_container.go
 * getPodContainerStatuses / toKubeContainerStatus / getTerminationMessage).
 */
#include "kuberuntime/builders.h"
#include "kuberuntime/runtime_internal.h"
#include "logs/logs.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every protobuf-c map entry has this layout. */
struct map_entry {
        ProtobufCMessage base;
        char *key;
        char *value;
};

static const char *map_get(void *const *entries, size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++) {
                const struct map_entry *e = entries[i];
                if (e->key != NULL && strcmp(e->key, key) == 0)
                        return e->value;
        }
        return NULL;
}
#define MAP_GET(msg, field, key) map_get((void *const *)(msg)->field, (msg)->n_##field, (key))

static char *dup_nonempty(const char *s)
{
        return s != NULL && s[0] != '\0' ? xstrdup(s) : NULL;
}

static bool is_not_found(ck_error_t err)
{
        return err != NULL && err->code == CRI_CODE_NOT_FOUND;
}

/* ---- termination messages ---- */

/* The last `max` bytes of a regular file (never following a symlink, never
 * blocking on a FIFO).  NULL with errno set on failure. */
static char *read_file_tail(const char *path, size_t max, size_t *len)
{
        cleanup_close int fd = TEMP_FAILURE_RETRY_INT(
            open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
        if (fd < 0)
                return NULL;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return NULL;
        if (!S_ISREG(st.st_mode)) {
                errno = EINVAL;
                return NULL;
        }
        off_t off = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
        size_t want = (size_t)(st.st_size - off);
        char *buf = xmalloc(want + 1);
        size_t got = 0;
        while (got < want) {
                ssize_t r =
                    TEMP_FAILURE_RETRY_INT(pread(fd, buf + got, want - got, off + (off_t)got));
                if (r < 0) {
                        int saved = errno;
                        free(buf);
                        errno = saved;
                        return NULL;
                }
                if (r == 0)
                        break;
                got += (size_t)r;
        }
        buf[got] = '\0';
        *len = got;
        return buf;
}

/* The last KR_TERMINATION_LOG_MAX bytes written to it (upstream's
 * circbuf). */
struct log_tail {
        char buf[KR_TERMINATION_LOG_MAX];
        size_t len;
};

static int log_tail_write(void *ctx, const char *data, size_t n)
{
        struct log_tail *t = ctx;
        if (n >= sizeof(t->buf)) {
                memcpy(t->buf, data + n - sizeof(t->buf), sizeof(t->buf));
                t->len = sizeof(t->buf);
                return 0;
        }
        if (t->len + n > sizeof(t->buf)) {
                size_t drop = t->len + n - sizeof(t->buf);
                memmove(t->buf, t->buf + drop, t->len - drop);
                t->len -= drop;
        }
        memcpy(t->buf + t->len, data, n);
        t->len += n;
        return 0;
}

char *kr_termination_log_tail(const char *path)
{
        struct logs_options o;
        logs_options_init(&o);
        o.tail_lines = KR_TERMINATION_LOG_LINES;
        struct log_tail t = {.len = 0};
        struct logs_sink sink = {.write = log_tail_write, .ctx = &t};
        cleanup_error ck_error_t err = NULL;
        if (logs_read(path, &o, 0, &sink, &err) < 0)
                return xasprintf("Error on reading termination message from logs: %s",
                                 ck_error_msg(err));
        return xstrndup(t.buf, t.len);
}

/* upstream getTerminationMessage: the file mounted at the container's
 * terminationMessagePath.  Returns a new string (maybe empty) and whether
 * the logs should be read instead. */
static char *termination_message(const Runtime__V1__ContainerStatus *cs, const char *path,
                                 bool fallback, bool *check_logs)
{
        *check_logs = fallback;
        if (path == NULL || path[0] == '\0')
                return xstrdup("");
        for (size_t i = 0; i < cs->n_mounts; i++) {
                const Runtime__V1__Mount *m = cs->mounts[i];
                if (m->container_path == NULL || strcmp(m->container_path, path) != 0)
                        continue;
                if (m->host_path == NULL || m->host_path[0] == '\0')
                        break;
                size_t len;
                char *data = read_file_tail(m->host_path, KR_TERMINATION_MESSAGE_MAX, &len);
                if (data == NULL) {
                        if (errno == ENOENT)
                                return xstrdup("");
                        *check_logs = false;
                        return xasprintf("Error on reading termination log %s: %s", m->host_path,
                                         strerror(errno));
                }
                *check_logs = fallback && len == 0;
                return data;
        }
        return xstrdup("");
}

/* Status message enriched with the termination message (exited only). */
static char *exited_message(const Runtime__V1__ContainerStatus *cs)
{
        const char *path = MAP_GET(cs, annotations, ANNOTATION_TERMINATION_MESSAGE_PATH);
        const char *policy = MAP_GET(cs, annotations, ANNOTATION_TERMINATION_MESSAGE_POLICY);
        /* a container that could not even start has no logs */
        bool fallback = policy != NULL && strcmp(policy, "FallbackToLogsOnError") == 0 &&
                        cs->exit_code != 0 &&
                        (cs->reason == NULL || strcmp(cs->reason, "ContainerCannotRun") != 0);
        bool check_logs;
        cleanup_free char *msg = termination_message(cs, path, fallback, &check_logs);
        if (check_logs && cs->log_path != NULL && cs->log_path[0] != '\0') {
                free(msg);
                msg = kr_termination_log_tail(cs->log_path);
        }
        if (strlen(msg) > KR_TERMINATION_MESSAGE_MAX)
                msg[KR_TERMINATION_MESSAGE_MAX] = '\0';
        const char *status_msg = cs->message ? cs->message : "";
        if (msg[0] == '\0')
                return dup_nonempty(status_msg);
        if (status_msg[0] == '\0') {
                char *r = msg;
                msg = NULL;
                return r;
        }
        return xasprintf("%s: %s", status_msg, msg);
}

/* ---- conversion ---- */

static enum container_state container_state(Runtime__V1__ContainerState s)
{
        switch (s) {
        case RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED:
                return CONTAINER_STATE_CREATED;
        case RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING:
                return CONTAINER_STATE_RUNNING;
        case RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED:
                return CONTAINER_STATE_EXITED;
        default:
                return CONTAINER_STATE_UNKNOWN;
        }
}

static void convert_container(const Runtime__V1__ContainerStatus *cs,
                              struct runtime_container_status *out)
{
        memset(out, 0, sizeof(*out));
        out->id = xstrdup(cs->id);
        const char *name = MAP_GET(cs, labels, LABEL_CONTAINER_NAME);
        if (name == NULL && cs->metadata != NULL)
                name = cs->metadata->name;
        out->name = xstrdup(name ? name : "");
        out->state = container_state(cs->state);
        out->created_at = cs->created_at;
        if (out->state != CONTAINER_STATE_CREATED)
                out->started_at = cs->started_at;
        if (out->state == CONTAINER_STATE_EXITED) {
                out->finished_at = cs->finished_at;
                out->exit_code = cs->exit_code;
                out->reason = dup_nonempty(cs->reason);
                out->message = exited_message(cs);
        }
        out->image = xstrdup(cs->image && cs->image->image ? cs->image->image : "");
        /* status imageID: image_id since CRI v1.30, image_ref before */
        out->image_ref = xstrdup(
            cs->image_id && cs->image_id[0] ? cs->image_id : (cs->image_ref ? cs->image_ref : ""));
        out->hash = kuberuntime_label_hash(MAP_GET(cs, annotations, ANNOTATION_CONTAINER_HASH));
        out->restart_count = kuberuntime_label_restart_count(
            MAP_GET(cs, annotations, ANNOTATION_CONTAINER_RESTART_COUNT));
        out->log_path = dup_nonempty(cs->log_path);
        const Runtime__V1__LinuxContainerResources *lr =
            cs->resources ? cs->resources->linux : NULL;
        if (lr != NULL)
                out->resources = (struct runtime_container_resources){
                    .reported = true,
                    .cpu_period = lr->cpu_period,
                    .cpu_quota = lr->cpu_quota,
                    .cpu_shares = lr->cpu_shares,
                    .memory_limit = lr->memory_limit_in_bytes,
                };
}

static void convert_sandbox(const Runtime__V1__PodSandboxStatus *ss,
                            struct runtime_sandbox_status *out)
{
        memset(out, 0, sizeof(*out));
        out->id = xstrdup(ss->id);
        out->state = ss->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY
                         ? SANDBOX_STATE_READY
                         : SANDBOX_STATE_NOTREADY;
        out->created_at = ss->created_at;
        out->attempt = ss->metadata ? ss->metadata->attempt : 0;
        if (ss->linux && ss->linux->namespaces && ss->linux->namespaces->options)
                out->host_network =
                    ss->linux->namespaces->options->network == RUNTIME__V1__NAMESPACE_MODE__NODE;
        if (ss->network != NULL) {
                out->ip = dup_nonempty(ss->network->ip);
                for (size_t i = 0; i < ss->network->n_additional_ips; i++) {
                        const char *ip = ss->network->additional_ips[i]->ip;
                        if (ip == NULL || ip[0] == '\0')
                                continue;
                        out->additional_ips = xrealloc(
                            out->additional_ips, (out->n_additional_ips + 1) * sizeof(char *));
                        out->additional_ips[out->n_additional_ips++] = xstrdup(ip);
                }
        }
}

static int cmp_sandbox_newest(const void *a, const void *b)
{
        int64_t x = ((const struct runtime_sandbox_status *)a)->created_at;
        int64_t y = ((const struct runtime_sandbox_status *)b)->created_at;
        return (x < y) - (x > y);
}

static int cmp_container_newest(const void *a, const void *b)
{
        int64_t x = ((const struct runtime_container_status *)a)->created_at;
        int64_t y = ((const struct runtime_container_status *)b)->created_at;
        return (x < y) - (x > y);
}

static int pod_sandboxes(struct cri_client *cri, const char *uid, struct runtime_pod_status *s,
                         ck_error_t *err)
{
        Runtime__V1__PodSandboxFilter__LabelSelectorEntry sel =
            RUNTIME__V1__POD_SANDBOX_FILTER__LABEL_SELECTOR_ENTRY__INIT;
        sel.key = (char *)LABEL_POD_UID;
        sel.value = (char *)uid;
        Runtime__V1__PodSandboxFilter__LabelSelectorEntry *selp = &sel;
        Runtime__V1__PodSandboxFilter filter = RUNTIME__V1__POD_SANDBOX_FILTER__INIT;
        filter.n_label_selector = 1;
        filter.label_selector = &selp;

        Runtime__V1__ListPodSandboxResponse *list = NULL;
        if (cri_list_pod_sandbox(cri, &filter, &list, err) < 0)
                return -1;
        int ret = 0;
        s->sandboxes = xcalloc(list->n_items ? list->n_items : 1, sizeof(*s->sandboxes));
        for (size_t i = 0; i < list->n_items; i++) {
                Runtime__V1__PodSandboxStatusResponse *st = NULL;
                if (cri_pod_sandbox_status(cri, list->items[i]->id, &st, err) < 0) {
                        /* removed between the list and the status: normal */
                        if (is_not_found(*err)) {
                                ck_error_release(err);
                                continue;
                        }
                        ret = -1;
                        break;
                }
                if (st->status != NULL)
                        convert_sandbox(st->status, &s->sandboxes[s->n_sandboxes++]);
                runtime__v1__pod_sandbox_status_response__free_unpacked(st, NULL);
        }
        runtime__v1__list_pod_sandbox_response__free_unpacked(list, NULL);
        qsort(s->sandboxes, s->n_sandboxes, sizeof(*s->sandboxes), cmp_sandbox_newest);
        return ret;
}

static int pod_containers(struct cri_client *cri, const char *uid, struct runtime_pod_status *s,
                          ck_error_t *err)
{
        Runtime__V1__ContainerFilter__LabelSelectorEntry sel =
            RUNTIME__V1__CONTAINER_FILTER__LABEL_SELECTOR_ENTRY__INIT;
        sel.key = (char *)LABEL_POD_UID;
        sel.value = (char *)uid;
        Runtime__V1__ContainerFilter__LabelSelectorEntry *selp = &sel;
        Runtime__V1__ContainerFilter filter = RUNTIME__V1__CONTAINER_FILTER__INIT;
        filter.n_label_selector = 1;
        filter.label_selector = &selp;

        Runtime__V1__ListContainersResponse *list = NULL;
        if (cri_list_containers(cri, &filter, &list, err) < 0)
                return -1;
        int ret = 0;
        s->containers =
            xcalloc(list->n_containers ? list->n_containers : 1, sizeof(*s->containers));
        for (size_t i = 0; i < list->n_containers; i++) {
                const Runtime__V1__Container *c = list->containers[i];
                Runtime__V1__ContainerStatusResponse *st = NULL;
                if (cri_container_status(cri, c->id, &st, err) < 0) {
                        if (is_not_found(*err)) {
                                ck_error_release(err);
                                continue;
                        }
                        ret = -1;
                        break;
                }
                if (st->status != NULL) {
                        struct runtime_container_status *out = &s->containers[s->n_containers++];
                        convert_container(st->status, out);
                        out->sandbox_id = xstrdup(c->pod_sandbox_id);
                }
                runtime__v1__container_status_response__free_unpacked(st, NULL);
        }
        runtime__v1__list_containers_response__free_unpacked(list, NULL);
        qsort(s->containers, s->n_containers, sizeof(*s->containers), cmp_container_newest);
        return ret;
}

int kuberuntime_get_pod_status(struct kuberuntime *rt, struct cri_client *cri, const char *uid,
                               const char *name, const char *ns, struct runtime_pod_status **out,
                               ck_error_t *err)
{
        (void)rt;
        struct runtime_pod_status *s = xcalloc(1, sizeof(*s));
        s->uid = xstrdup(uid);
        s->name = xstrdup(name);
        s->namespace = xstrdup(ns);
        if (pod_sandboxes(cri, uid, s, err) < 0 || pod_containers(cri, uid, s, err) < 0) {
                runtime_pod_status_free(s);
                return ck_error_wrap(err, "pod %s/%s: get status", ns ? ns : "", name ? name : "");
        }
        /* the pod IP comes only from the latest sandbox, when ready */
        if (s->n_sandboxes > 0 && s->sandboxes[0].state == SANDBOX_STATE_READY &&
            s->sandboxes[0].ip != NULL)
                s->ip = xstrdup(s->sandboxes[0].ip);
        LOG_INFO(5, "Got pod status", "pod=\"%s/%s\" podUID=\"%s\" sandboxes=%zu containers=%zu",
                 ns ? ns : "", name ? name : "", uid, s->n_sandboxes, s->n_containers);
        *out = s;
        return 0;
}

/* ---- GetPods ---- */

static struct runtime_pod_entry *pod_entry(struct runtime_pod_list *l, const char *uid,
                                           const char *name, const char *ns)
{
        for (size_t i = 0; i < l->n_pods; i++)
                if (strcmp(l->pods[i].uid, uid) == 0)
                        return &l->pods[i];
        l->pods = xrealloc(l->pods, (l->n_pods + 1) * sizeof(*l->pods));
        struct runtime_pod_entry *p = &l->pods[l->n_pods++];
        memset(p, 0, sizeof(*p));
        p->uid = xstrdup(uid);
        p->name = xstrdup(name ? name : "");
        p->namespace = xstrdup(ns ? ns : "");
        return p;
}

int kuberuntime_get_pods(struct kuberuntime *rt, struct cri_client *cri, bool all,
                         struct runtime_pod_list **out, ck_error_t *err)
{
        (void)rt;
        Runtime__V1__PodSandboxStateValue sb_state = RUNTIME__V1__POD_SANDBOX_STATE_VALUE__INIT;
        sb_state.state = RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY;
        Runtime__V1__PodSandboxFilter sb_filter = RUNTIME__V1__POD_SANDBOX_FILTER__INIT;
        sb_filter.state = &sb_state;
        Runtime__V1__ContainerStateValue c_state = RUNTIME__V1__CONTAINER_STATE_VALUE__INIT;
        c_state.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
        Runtime__V1__ContainerFilter c_filter = RUNTIME__V1__CONTAINER_FILTER__INIT;
        c_filter.state = &c_state;

        Runtime__V1__ListPodSandboxResponse *sbs = NULL;
        if (cri_list_pod_sandbox(cri, all ? NULL : &sb_filter, &sbs, err) < 0)
                return ck_error_wrap(err, "list pods");
        Runtime__V1__ListContainersResponse *cs = NULL;
        if (cri_list_containers(cri, all ? NULL : &c_filter, &cs, err) < 0) {
                runtime__v1__list_pod_sandbox_response__free_unpacked(sbs, NULL);
                return ck_error_wrap(err, "list pods");
        }

        struct runtime_pod_list *l = xcalloc(1, sizeof(*l));
        for (size_t i = 0; i < sbs->n_items; i++) {
                const Runtime__V1__PodSandbox *s = sbs->items[i];
                const char *uid = MAP_GET(s, labels, LABEL_POD_UID);
                if (uid == NULL)
                        continue; /* not made by a kubelet */
                const char *name = MAP_GET(s, labels, LABEL_POD_NAME);
                const char *ns = MAP_GET(s, labels, LABEL_POD_NAMESPACE);
                if (s->metadata != NULL) {
                        name = name ? name : s->metadata->name;
                        ns = ns ? ns : s->metadata->namespace_;
                }
                struct runtime_pod_entry *p = pod_entry(l, uid, name, ns);
                p->sandboxes = xrealloc(p->sandboxes, (p->n_sandboxes + 1) * sizeof(*p->sandboxes));
                p->sandboxes[p->n_sandboxes++] = (struct runtime_pod_entry_sandbox){
                    .id = xstrdup(s->id),
                    .state = s->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY
                                 ? SANDBOX_STATE_READY
                                 : SANDBOX_STATE_NOTREADY,
                };
        }
        for (size_t i = 0; i < cs->n_containers; i++) {
                const Runtime__V1__Container *c = cs->containers[i];
                const char *uid = MAP_GET(c, labels, LABEL_POD_UID);
                if (uid == NULL)
                        continue;
                struct runtime_pod_entry *p = pod_entry(l, uid, MAP_GET(c, labels, LABEL_POD_NAME),
                                                        MAP_GET(c, labels, LABEL_POD_NAMESPACE));
                const char *name = MAP_GET(c, labels, LABEL_CONTAINER_NAME);
                if (name == NULL && c->metadata != NULL)
                        name = c->metadata->name;
                p->containers =
                    xrealloc(p->containers, (p->n_containers + 1) * sizeof(*p->containers));
                p->containers[p->n_containers++] = (struct runtime_pod_entry_container){
                    .id = xstrdup(c->id),
                    .name = xstrdup(name ? name : ""),
                    .image = xstrdup(c->image && c->image->image ? c->image->image : ""),
                    .state = container_state(c->state),
                    .sandbox_id = xstrdup(c->pod_sandbox_id),
                };
        }
        runtime__v1__list_pod_sandbox_response__free_unpacked(sbs, NULL);
        runtime__v1__list_containers_response__free_unpacked(cs, NULL);
        *out = l;
        return 0;
}
