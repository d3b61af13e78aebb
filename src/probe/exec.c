/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The exec action: the command runs in the container through CRI ExecSync
 * (upstream pkg/probe/exec and kuberuntime RunInContainer).  Exit code 0 is
 * success, any other a failure; the output (stdout then stderr, at most
 * 10 KiB) is the message.  A runtime timeout is a failure ("command timed
 * out"); any other CRI error means the probe could not run.
 */
#include "probe/probe_internal.h"

#include "expansion/expansion.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <string.h>

/* Appends at most what fits of data to buf (len of cap PROBE_MAX_OUTPUT). */
static void append_capped(char *buf, size_t *len, const ProtobufCBinaryData *data)
{
        size_t n = data->len;
        if (n > PROBE_MAX_OUTPUT - *len)
                n = PROBE_MAX_OUTPUT - *len;
        if (n > 0)
                memcpy(buf + *len, data->data, n);
        *len += n;
}

/* upstream ExpandContainerCommandOnlyStatic: $(VAR) from the container's
 * env values (references to other sources expand to ""). */
static char **expand_command(const struct container *c, const struct str_list *cmd)
{
        struct kv_list vars = {0};
        for (size_t i = 0; c != NULL && i < c->n_env; i++) {
                const struct env_var *e = &c->env[i];
                kv_list_add(&vars, e->name, e->kind == ENV_VALUE && e->value ? e->value : "");
        }
        char **argv = xcalloc(cmd->n + 1, sizeof(*argv));
        for (size_t i = 0; i < cmd->n; i++)
                argv[i] = expansion_expand(cmd->items[i], &vars);
        kv_list_release(&vars);
        return argv;
}

enum probe_outcome probe__exec(struct cri_client *cri, const struct container *c,
                               const char *container_id, const struct handler *h,
                               int64_t timeout_ms, char **message)
{
        if (cri == NULL) {
                *message = xstrdup("no container runtime to run the command");
                return PROBE_OUTCOME_ERROR;
        }
        if (container_id == NULL || container_id[0] == '\0') {
                *message = xstrdup("no container to run the command in");
                return PROBE_OUTCOME_ERROR;
        }
        char **argv = expand_command(c, &h->exec_command);
        int64_t timeout_s = timeout_ms > 0 ? (timeout_ms + 999) / 1000 : 0;
        Runtime__V1__ExecSyncResponse *resp = NULL;
        cleanup_error ck_error_t err = NULL;
        int r = cri_exec_sync(cri, container_id, argv, timeout_s, &resp, &err);
        for (size_t i = 0; argv[i] != NULL; i++)
                free(argv[i]);
        free(argv);

        if (r < 0) {
                if (err != NULL && err->code == CRI_CODE_DEADLINE_EXCEEDED) {
                        *message = xstrdup("command timed out");
                        return PROBE_OUTCOME_FAILURE;
                }
                *message = xstrdup(ck_error_msg(err));
                return PROBE_OUTCOME_ERROR;
        }
        char *out = xmalloc(PROBE_MAX_OUTPUT + 1);
        size_t len = 0;
        append_capped(out, &len, &resp->stdout);
        append_capped(out, &len, &resp->stderr);
        out[len] = '\0';
        *message = out;
        int32_t code = resp->exit_code;
        runtime__v1__exec_sync_response__free_unpacked(resp, NULL);
        return code == 0 ? PROBE_OUTCOME_SUCCESS : PROBE_OUTCOME_FAILURE;
}
