/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lifecycle hooks and the termination order of a pod's containers
 * (upstream pkg/kubelet/lifecycle/handlers.go handlerRunner,
 * kuberuntime_container.go startContainer's step 4 and
 * executePreStopHook, kuberuntime_termination_order.go).
 *
 * An exec action runs here through CRI ExecSync (upstream's hook message
 * carries the exit code and the output, which the prober's exec does not
 * report); an httpGet action is run by probe_run() (src/probe); a
 * sleep action is a plain wait here, so that a preStop sleep never outlives
 * its deadline.
 */
#include "api/decode.h"
#include "kuberuntime/builders.h"
#include "kuberuntime/runtime_internal.h"
#include "probe/probe.h"
#include "util/fsutil.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/strquote.h"
#include "util/xalloc.h"
#include "util/sleep.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* exec and httpGet hooks have no timeout upstream; the runtime request
 * timeout bounds them here, as it bounds every other CRI call */
static int64_t hook_timeout_ms(const struct kuberuntime *rt)
{
        return rt->opts.runtime_timeout_ms > 0 ? rt->opts.runtime_timeout_ms : 120000;
}

/* upstream format.Pod: name_namespace(uid); new string */
static char *pod_desc(const struct pod *pod)
{
        return xasprintf("%s_%s(%s)", pod->name ? pod->name : "",
                         pod->namespace ? pod->namespace : "", pod->uid ? pod->uid : "");
}

/* strings.Join(cmd, " "); new string */
static char *command_join(const struct str_list *cmd)
{
        size_t len = 1;
        for (size_t i = 0; i < cmd->n; i++)
                len += strlen(cmd->items[i]) + 1;
        char *s = xmalloc(len);
        char *p = s;
        for (size_t i = 0; i < cmd->n; i++) {
                if (i > 0)
                        *p++ = ' ';
                size_t l = strlen(cmd->items[i]);
                memcpy(p, cmd->items[i], l);
                p += l;
        }
        *p = '\0';
        return s;
}

static const char *handler_kind_name(enum handler_kind k)
{
        switch (k) {
        case HANDLER_EXEC:
                return "exec";
        case HANDLER_HTTP_GET:
                return "httpGet";
        case HANDLER_TCP_SOCKET:
                return "tcpSocket";
        case HANDLER_GRPC:
                return "grpc";
        case HANDLER_SLEEP:
                return "sleep";
        default:
                return "none";
        }
}

/* upstream handlerRunner.Run's exec case over RunInContainer (CRI ExecSync
 * without a timeout of its own: the client's deadline bounds it).  0, or
 * -1 with *message (new string) worded as upstream. */
static int run_exec(struct cri_client *cri, const struct pod *pod, const struct container *c,
                    const char *container_id, const struct handler *h, char **message)
{
        const struct str_list *cmd = &h->exec_command;
        char **argv = xcalloc(cmd->n + 1, sizeof(char *));
        for (size_t i = 0; i < cmd->n; i++)
                argv[i] = cmd->items[i];
        Runtime__V1__ExecSyncResponse *resp = NULL;
        cleanup_error ck_error_t err = NULL;
        int r = cri_exec_sync(cri, container_id, argv, 0, &resp, &err);
        free(argv);
        if (r == 0 && resp->exit_code == 0) {
                runtime__v1__exec_sync_response__free_unpacked(resp, NULL);
                return 0;
        }
        /* the command as Go's %v of a []string: [a b c] */
        cleanup_free char *joined = command_join(cmd);
        cleanup_free char *pd = pod_desc(pod);
        if (r < 0) {
                *message =
                    xasprintf("Exec lifecycle hook ([%s]) for Container \"%s\" in Pod \"%s\" "
                              "failed - error: %s, message: \"\"",
                              joined, c->name, pd, kuberuntime__cri_message(err));
                return -1;
        }
        /* output: stdout then stderr, as upstream RunInContainer */
        size_t n_out = resp->stdout.len + resp->stderr.len;
        uint8_t *out = xmalloc(n_out + 1);
        if (resp->stdout.len > 0)
                memcpy(out, resp->stdout.data, resp->stdout.len);
        if (resp->stderr.len > 0)
                memcpy(out + resp->stdout.len, resp->stderr.data, resp->stderr.len);
        cleanup_free char *quoted = str_go_quote((const char *)out, n_out);
        free(out);
        /* upstream's error: "command '<cmd>' exited with <code>: <stderr>" */
        *message = xasprintf("Exec lifecycle hook ([%s]) for Container \"%s\" in Pod \"%s\" failed "
                             "- error: command '%s' exited with %" PRId32 ": %.*s, message: %s",
                             joined, c->name, pd, joined, resp->exit_code, (int)resp->stderr.len,
                             resp->stderr.data ? (const char *)resp->stderr.data : "", quoted);
        runtime__v1__exec_sync_response__free_unpacked(resp, NULL);
        return -1;
}

/* The message of a failed httpGet hook or an unusable handler, worded as
 * upstream handlerRunner.Run; new string. */
static char *failure_message(const struct pod *pod, const struct container *c,
                             const struct handler *h, const char *why)
{
        cleanup_free char *pd = pod_desc(pod);
        why = why && why[0] ? why : "unknown error";
        if (h->kind == HANDLER_HTTP_GET)
                return xasprintf("HTTP lifecycle hook (%s) for Container \"%s\" in Pod \"%s\" "
                                 "failed - error: %s",
                                 h->http_path ? h->http_path : "", c->name, pd, why);
        return xasprintf("Cannot run handler: invalid handler: %s", why);
}

/* Runs h once; 0 or -1 with *message (new string). */
static int run_handler(const struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                       const struct container *c, const char *container_id, const char *pod_ip,
                       const struct handler *h, char **message)
{
        *message = NULL;
        switch (h->kind) {
        case HANDLER_SLEEP:
                if (h->sleep_seconds > 0)
                        sleep_ms(kuberuntime__s_to_ms(h->sleep_seconds));
                return 0;
        case HANDLER_EXEC:
                return run_exec(cri, pod, c, container_id, h, message);
        case HANDLER_HTTP_GET: {
                cleanup_free char *why = NULL;
                if (probe_outcome_ok(
                        probe_run(cri, c, container_id, pod_ip, h, hook_timeout_ms(rt), &why)))
                        return 0;
                *message = failure_message(pod, c, h, why);
                return -1;
        }
        default: {
                /* tcpSocket is accepted by the API for compatibility and
                 * fails at run time, as upstream */
                cleanup_free char *why = xasprintf("%s is not supported as a lifecycle handler",
                                                   handler_kind_name(h->kind));
                *message = failure_message(pod, c, h, why);
                return -1;
        }
        }
}

int kuberuntime__run_post_start(const struct kuberuntime *rt, struct cri_client *cri,
                                const struct pod *pod, const struct container *c,
                                const char *container_id, const char *pod_ip, char **message)
{
        *message = NULL;
        if (c->post_start == NULL)
                return 0;
        char who[320];
        kuberuntime__pod_ref(pod, who, sizeof(who));
        LOG_INFO(3, "Running postStart hook",
                 "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" containerID=\"%s\" handler=\"%s\"",
                 who, pod->uid, c->name, container_id, handler_kind_name(c->post_start->kind));
        if (run_handler(rt, cri, pod, c, container_id, pod_ip, c->post_start, message) < 0) {
                LOG_ERROR("Failed to execute PostStartHook",
                          "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" containerID=\"%s\" "
                          "err=\"%s\"",
                          who, pod->uid, c->name, container_id, *message);
                /* upstream: not the message, which may hold secrets */
                event_emit_pod(rt->opts.recorder, pod, c->name, EVENT_WARNING,
                               "FailedPostStartHook", "PostStartHook failed");
                return -1;
        }
        return 0;
}

/* ---- preStop ---- */

struct kuberuntime_hook {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool done; /* under lock */
        /* inputs, borrowed until kuberuntime__hook_finish */
        const struct kuberuntime *rt;
        const struct pod *pod;
        const struct container *c;
        const char *container_id, *pod_ip;
        /* outputs, read after the join */
        int ret;
        char *message;
};

static void *hook_thread(void *p)
{
        struct kuberuntime_hook *h = p;
        const char *endpoint = h->rt->opts.runtime_endpoint;
        cleanup_cri_client struct cri_client *cri =
            cri_client_new(endpoint ? endpoint : "", hook_timeout_ms(h->rt));
        h->ret = run_handler(h->rt, cri, h->pod, h->c, h->container_id, h->pod_ip, h->c->pre_stop,
                             &h->message);
        /* upstream records it as soon as the hook fails, without the
         * message (it may hold secrets) */
        if (h->ret < 0)
                event_emit_pod(h->rt->opts.recorder, h->pod, h->c->name, EVENT_WARNING,
                               "FailedPreStopHook", "PreStopHook failed");
        pthread_mutex_lock(&h->lock);
        h->done = true;
        pthread_cond_broadcast(&h->cond);
        pthread_mutex_unlock(&h->lock);
        return NULL;
}

static void log_pre_stop_outcome(const struct kuberuntime_hook *h)
{
        char who[320];
        kuberuntime__pod_ref(h->pod, who, sizeof(who));
        if (h->ret < 0)
                LOG_ERROR("PreStop hook failed",
                          "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" containerID=\"%s\" "
                          "err=\"%s\"",
                          who, h->pod->uid, h->c->name, h->container_id,
                          h->message ? h->message : "");
        else
                LOG_INFO(3, "PreStop hook completed",
                         "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" containerID=\"%s\"", who,
                         h->pod->uid, h->c->name, h->container_id);
}

void kuberuntime__hook_finish(struct kuberuntime_hook *h)
{
        if (h == NULL)
                return;
        pthread_join(h->thread, NULL);
        log_pre_stop_outcome(h);
        pthread_cond_destroy(&h->cond);
        pthread_mutex_destroy(&h->lock);
        free(h->message);
        free(h);
}

int64_t kuberuntime__run_pre_stop(const struct kuberuntime *rt, const struct pod *pod,
                                  const struct container *c, const char *container_id,
                                  const char *pod_ip, int64_t grace_s,
                                  struct kuberuntime_hook **pending)
{
        *pending = NULL;
        if (c->pre_stop == NULL || grace_s <= 0)
                return 0;
        char who[320];
        kuberuntime__pod_ref(pod, who, sizeof(who));
        LOG_INFO(3, "Running preStop hook",
                 "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" containerID=\"%s\" handler=\"%s\"",
                 who, pod->uid, c->name, container_id, handler_kind_name(c->pre_stop->kind));
        int64_t start = fs_now_mono_ms();
        int64_t deadline = start + kuberuntime__s_to_ms(grace_s);

        if (c->pre_stop->kind == HANDLER_SLEEP) {
                /* the hook is the wait itself: never longer than the grace */
                int64_t ms = kuberuntime__s_to_ms(c->pre_stop->sleep_seconds);
                if (ms > kuberuntime__s_to_ms(grace_s)) {
                        sleep_ms(kuberuntime__s_to_ms(grace_s));
                        LOG_INFO(2, "PreStop hook not completed in grace period",
                                 "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" "
                                 "containerID=\"%s\" gracePeriod=%" PRId64,
                                 who, pod->uid, c->name, container_id, grace_s);
                } else {
                        if (ms > 0)
                                sleep_ms(ms);
                        LOG_INFO(3, "PreStop hook completed",
                                 "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" "
                                 "containerID=\"%s\"",
                                 who, pod->uid, c->name, container_id);
                }
                return fs_now_mono_ms() - start;
        }

        struct kuberuntime_hook *h = xcalloc(1, sizeof(*h));
        h->rt = rt;
        h->pod = pod;
        h->c = c;
        h->container_id = container_id;
        h->pod_ip = pod_ip;
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&h->cond, &ca);
        pthread_condattr_destroy(&ca);
        pthread_mutex_init(&h->lock, NULL);
        if (pthread_create(&h->thread, NULL, hook_thread, h) != 0) {
                /* no thread: run it here, without a deadline */
                hook_thread(h);
                log_pre_stop_outcome(h);
                pthread_cond_destroy(&h->cond);
                pthread_mutex_destroy(&h->lock);
                free(h->message);
                free(h);
                return fs_now_mono_ms() - start;
        }

        struct timespec ts = {.tv_sec = (time_t)(deadline / 1000),
                              .tv_nsec = (long)(deadline % 1000) * 1000000};
        pthread_mutex_lock(&h->lock);
        int rc = 0;
        while (!h->done && rc != ETIMEDOUT)
                rc = pthread_cond_timedwait(&h->cond, &h->lock, &ts);
        bool done = h->done;
        pthread_mutex_unlock(&h->lock);
        int64_t spent = fs_now_mono_ms() - start;
        if (done) {
                kuberuntime__hook_finish(h);
        } else {
                LOG_INFO(2, "PreStop hook not completed in grace period",
                         "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" containerID=\"%s\" "
                         "gracePeriod=%" PRId64,
                         who, pod->uid, c->name, container_id, grace_s);
                *pending = h;
        }
        return spent;
}

/* ---- an orphan's spec ---- */

static const char *label_of(const Runtime__V1__ContainerStatus *st, const char *key)
{
        for (size_t i = 0; i < st->n_labels; i++)
                if (strcmp(st->labels[i]->key, key) == 0)
                        return st->labels[i]->value;
        return NULL;
}

static const char *annotation_of(const Runtime__V1__ContainerStatus *st, const char *key)
{
        for (size_t i = 0; i < st->n_annotations; i++)
                if (strcmp(st->annotations[i]->key, key) == 0)
                        return st->annotations[i]->value;
        return NULL;
}

static bool parse_int64(const char *s, int64_t *out)
{
        if (s == NULL || *s == '\0')
                return false;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno != 0 || *end != '\0')
                return false;
        *out = v;
        return true;
}

/* A pod with one container that carries the preStop hook (and the ports a
 * named httpGet port refers to), decoded as any pod; NULL if it does not
 * decode. */
static struct pod *restored_pod(const Runtime__V1__ContainerStatus *st, const char *pre_stop,
                                const char *ports)
{
        const char *pname = label_of(st, LABEL_POD_NAME);
        const char *pns = label_of(st, LABEL_POD_NAMESPACE);
        const char *puid = label_of(st, LABEL_POD_UID);
        const char *cname = label_of(st, LABEL_CONTAINER_NAME);
        json_t *hook = json_loads(pre_stop, 0, NULL);
        if (pname == NULL || pns == NULL || puid == NULL || cname == NULL || hook == NULL) {
                json_decref(hook);
                return NULL;
        }
        json_t *c = json_pack("{s:s, s:s, s:{s:o}}", "name", cname, "image", "restored",
                              "lifecycle", "preStop", hook);
        json_t *pj = ports ? json_loads(ports, 0, NULL) : NULL;
        if (json_is_array(pj))
                json_object_set(c, "ports", pj);
        json_decref(pj);
        /* a grace period long enough for any sleep hook to validate: the
         * one that applies is computed by the caller */
        cleanup_json json_t *obj =
            json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:I, s:[o]}}", "apiVersion", "v1", "kind",
                      "Pod", "metadata", "name", pname, "namespace", pns, "uid", puid, "spec",
                      "terminationGracePeriodSeconds", (json_int_t)INT32_MAX, "containers", c);
        struct pod *pod = NULL;
        cleanup_error ck_error_t err = NULL;
        if (obj == NULL || api_pod_decode(obj, &pod, &err) < 0) {
                LOG_WARN("Failed to restore the preStop hook of a container",
                         "containerID=\"%s\" err=\"%s\"", st->id,
                         err ? ck_error_msg(err) : "invalid labels");
                return NULL;
        }
        return pod;
}

struct pod *kuberuntime__orphan_spec(struct cri_client *cri, const char *container_id,
                                     int64_t *grace_s)
{
        *grace_s = KR_MIN_GRACE_S;
        Runtime__V1__ContainerStatusResponse *resp = NULL;
        cleanup_error ck_error_t err = NULL;
        if (cri_container_status(cri, container_id, &resp, &err) < 0)
                return NULL;
        struct pod *pod = NULL;
        const Runtime__V1__ContainerStatus *st = resp->status;
        if (st != NULL) {
                const char *del = annotation_of(st, ANNOTATION_POD_DELETION_GRACE);
                const char *term = annotation_of(st, ANNOTATION_POD_TERMINATION_GRACE);
                if (!parse_int64(del, grace_s) && !parse_int64(term, grace_s))
                        *grace_s = KR_MIN_GRACE_S;
                const char *pre_stop = annotation_of(st, ANNOTATION_PRESTOP_HANDLER);
                if (pre_stop != NULL)
                        pod = restored_pod(st, pre_stop,
                                           annotation_of(st, ANNOTATION_CONTAINER_PORTS));
        }
        runtime__v1__container_status_response__free_unpacked(resp, NULL);
        return pod;
}

/* ---- grace accounting ---- */

int64_t kuberuntime__grace_left(int64_t grace_s, int64_t spent_ms)
{
        return grace_s - (spent_ms > 0 ? spent_ms / 1000 : 0);
}

int64_t kuberuntime__stop_grace(int64_t grace_s)
{
        /* always a minimal shutdown window, to avoid needless SIGKILLs */
        return grace_s < KR_MIN_GRACE_S ? KR_MIN_GRACE_S : grace_s;
}

/* ---- termination order ---- */

static bool is_app_container(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_containers; i++)
                if (strcmp(pod->containers[i].name, name) == 0)
                        return true;
        return false;
}

bool *kuberuntime__termination_order(const struct pod *pod, const char *const *names, size_t n)
{
        if (pod == NULL || n == 0)
                return NULL;
        bool any_sidecar = false;
        for (size_t k = 0; k < pod->n_init_containers && !any_sidecar; k++)
                any_sidecar = container_is_sidecar(&pod->init_containers[k]);
        if (!any_sidecar)
                return NULL;

        bool *waits = xcalloc(n * n, sizeof(bool));
        for (size_t i = 0; i < n; i++) {
                /* the sidecar's place in the spec */
                size_t k;
                for (k = 0; k < pod->n_init_containers; k++)
                        if (strcmp(pod->init_containers[k].name, names[i]) == 0)
                                break;
                if (k == pod->n_init_containers || !container_is_sidecar(&pod->init_containers[k]))
                        continue;
                /* the next sidecar declared after it, running or not (upstream
                 * waits on its channel, closed when it is not running) */
                const char *next = NULL;
                for (size_t l = k + 1; l < pod->n_init_containers && next == NULL; l++)
                        if (container_is_sidecar(&pod->init_containers[l]))
                                next = pod->init_containers[l].name;
                for (size_t j = 0; j < n; j++) {
                        if (j == i)
                                continue;
                        waits[i * n + j] = is_app_container(pod, names[j]) ||
                                           (next != NULL && strcmp(names[j], next) == 0);
                }
        }
        return waits;
}
