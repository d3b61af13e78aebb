/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI calls behind kubectl exec / attach / port-forward (Exec, Attach,
 * PortForward: the runtime answers with the URL of a session on its own
 * streaming server) and behind log rotation (ReopenContainerLog).
 *
 * As the upstream client (k8s.io/cri-client remote_runtime.go): each call has
 * the client's timeout, and a response without a URL is an error.
 */
#include "cri/cri.h"
#include "cri/cri_internal.h"
#include "grpc/grpc.h"
#include "util/xalloc.h"

static const char runtime_service[] = "RuntimeService";

/* Takes the URL out of a streaming response: upstream's "URL is not set". */
static int take_url(const char *resp_url, const char *method, const char *what, const char *id,
                    char **url, ck_error_t *err)
{
        if (resp_url == NULL || resp_url[0] == '\0')
                return ck_error_make_code(err, GRPC_INTERNAL, "CRI %s: URL of %s `%s` is not set",
                                          method, what, id);
        *url = xstrdup(resp_url);
        return 0;
}

int cri_exec(struct cri_client *c, const char *container_id, char *const *cmd, bool tty, bool in,
             bool out, bool errs, char **url, ck_error_t *err)
{
        Runtime__V1__ExecRequest req = RUNTIME__V1__EXEC_REQUEST__INIT;
        req.container_id = (char *)container_id;
        size_t n = 0;
        while (cmd && cmd[n])
                n++;
        req.n_cmd = n;
        req.cmd = (char **)cmd;
        req.tty = tty;
        req.stdin = in;
        req.stdout = out;
        req.stderr = errs;
        Runtime__V1__ExecResponse *resp = NULL;
        if (CALL(c, runtime_service, "Exec", req, exec_response, 0, &resp, err) < 0)
                return -1;
        int ret = take_url(resp->url, "Exec", "container", container_id, url, err);
        FREE_MSG(resp);
        return ret;
}

int cri_attach(struct cri_client *c, const char *container_id, bool tty, bool in, bool out,
               bool errs, char **url, ck_error_t *err)
{
        Runtime__V1__AttachRequest req = RUNTIME__V1__ATTACH_REQUEST__INIT;
        req.container_id = (char *)container_id;
        req.tty = tty;
        req.stdin = in;
        req.stdout = out;
        req.stderr = errs;
        Runtime__V1__AttachResponse *resp = NULL;
        if (CALL(c, runtime_service, "Attach", req, attach_response, 0, &resp, err) < 0)
                return -1;
        int ret = take_url(resp->url, "Attach", "container", container_id, url, err);
        FREE_MSG(resp);
        return ret;
}

int cri_port_forward(struct cri_client *c, const char *sandbox_id, const int32_t *ports,
                     size_t n_ports, char **url, ck_error_t *err)
{
        Runtime__V1__PortForwardRequest req = RUNTIME__V1__PORT_FORWARD_REQUEST__INIT;
        req.pod_sandbox_id = (char *)sandbox_id;
        req.n_port = ports ? n_ports : 0;
        req.port = (int32_t *)ports;
        Runtime__V1__PortForwardResponse *resp = NULL;
        if (CALL(c, runtime_service, "PortForward", req, port_forward_response, 0, &resp, err) < 0)
                return -1;
        int ret = take_url(resp->url, "PortForward", "sandbox", sandbox_id, url, err);
        FREE_MSG(resp);
        return ret;
}

int cri_reopen_container_log(struct cri_client *c, const char *container_id, ck_error_t *err)
{
        Runtime__V1__ReopenContainerLogRequest req =
            RUNTIME__V1__REOPEN_CONTAINER_LOG_REQUEST__INIT;
        req.container_id = (char *)container_id;
        Runtime__V1__ReopenContainerLogResponse *resp = NULL;
        if (CALL(c, runtime_service, "ReopenContainerLog", req, reopen_container_log_response, 0,
                 &resp, err) < 0)
                return -1;
        FREE_MSG(resp);
        return 0;
}
