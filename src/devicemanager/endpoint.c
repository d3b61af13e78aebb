/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A device plugin as the manager calls it (upstream devicemanager/
 * endpoint.go and plugin/v1beta1/client.go): two connections to its
 * socket, one for the unary calls, one for ListAndWatch, whose thread
 * reads the device lists for as long as the stream lasts.  When it ends,
 * for whatever reason, the resource's devices turn unhealthy; the stream is
 * never opened again (the plugin registers again to come back).
 */
#include "devicemanager/devicemanager_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_OPTIONS "/v1beta1.DevicePlugin/GetDevicePluginOptions"
#define PATH_LIST_AND_WATCH "/v1beta1.DevicePlugin/ListAndWatch"
#define PATH_ALLOCATE "/v1beta1.DevicePlugin/Allocate"
#define PATH_PRE_START "/v1beta1.DevicePlugin/PreStartContainer"
#define PATH_PREFERRED "/v1beta1.DevicePlugin/GetPreferredAllocation"
/* how often the stream's thread looks whether it is to stop */
#define STREAM_POLL_MS 500

char *dm_rpc_error_text(const ck_error_t e)
{
        if (e == NULL)
                return xstrdup("unknown error");
        /* ours: "rpc error <code>: <message>"; grpc-go's: "rpc error: code
         * = <Name> desc = <message>" */
        const char *msg = ck_error_msg(e);
        const char *p = msg;
        if (strncmp(p, "rpc error ", 10) == 0) {
                const char *colon = strstr(p, ": ");
                if (colon != NULL)
                        p = colon + 2;
        }
        return xasprintf("rpc error: code = %s desc = %s", grpc_code_name(e->code), p);
}

static struct dm_endpoint *endpoint_new(struct devicemanager *m, const char *resource,
                                        const char *socket)
{
        struct dm_endpoint *ep = xcalloc(1, sizeof(*ep));
        ep->m = m;
        ep->resource = xstrdup(resource);
        ep->socket = socket ? xstrdup(socket) : NULL;
        pthread_mutex_init(&ep->calls_lock, NULL);
        if (socket != NULL) {
                ep->calls = grpc_conn_new(socket);
                ep->stream = grpc_conn_new(socket);
        }
        return ep;
}

static void endpoint_destroy(struct dm_endpoint *ep)
{
        grpc_conn_free(ep->calls);
        grpc_conn_free(ep->stream);
        pthread_mutex_destroy(&ep->calls_lock);
        free(ep->resource);
        free(ep->socket);
        free(ep);
}

/* A unary call; the error in grpc-go's words ("rpc error: code = ..."). */
static int call(struct dm_endpoint *ep, const char *path, const ProtobufCMessage *req,
                int64_t timeout_ms, uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        if (ep->calls == NULL)
                return ck_error_make(err, 0, "endpoint %s has been stopped", ep->resource);
        size_t n = protobuf_c_message_get_packed_size(req);
        cleanup_free uint8_t *buf = xmalloc(n ? n : 1);
        protobuf_c_message_pack(req, buf);
        pthread_mutex_lock(&ep->calls_lock);
        cleanup_error ck_error_t e = NULL;
        int rc = grpc_unary(ep->calls, path, buf, n, timeout_ms, resp, resp_len, &e);
        pthread_mutex_unlock(&ep->calls_lock);
        if (rc < 0) {
                cleanup_free char *text = dm_rpc_error_text(e);
                return ck_error_make_code(err, e ? e->code : GRPC_UNKNOWN, "%s", text);
        }
        return 0;
}

static void *stream_main(void *arg);

int dm_endpoint_connect(struct devicemanager *m, const char *resource, const char *socket,
                        int64_t timeout_ms, ck_error_t *err)
{
        struct dm_endpoint *ep = endpoint_new(m, resource, socket);
        cleanup_error ck_error_t e = NULL;
        if (grpc_conn_dial(ep->calls, DM_DIAL_TIMEOUT_MS, &e) < 0) {
                endpoint_destroy(ep);
                return ck_error_make(err, 0, "failed to dial device plugin: %s", ck_error_msg(e));
        }
        /* upstream PluginConnected: the options, once */
        V1beta1__Empty empty = V1BETA1__EMPTY__INIT;
        uint8_t *resp = NULL;
        size_t len = 0;
        if (call(ep, PATH_OPTIONS, &empty.base, timeout_ms, &resp, &len, &e) < 0) {
                endpoint_destroy(ep);
                return ck_error_make(err, 0, "failed to get device plugin options: %s",
                                     ck_error_msg(e));
        }
        V1beta1__DevicePluginOptions *opts =
            v1beta1__device_plugin_options__unpack(NULL, len, resp);
        free(resp);
        if (opts == NULL) {
                endpoint_destroy(ep);
                return ck_error_make(err, 0,
                                     "failed to get device plugin options: the answer does not "
                                     "parse");
        }
        ep->has_options = true;
        ep->pre_start_required = opts->pre_start_required;
        ep->preferred_available = opts->get_preferred_allocation_available;
        v1beta1__device_plugin_options__free_unpacked(opts, NULL);

        pthread_mutex_lock(&m->lock);
        struct dm_resource *r = dm_resource_get(m, resource, true);
        r->ep = ep; /* replaces the one before, stopped or not */
        ep->next = m->endpoints;
        m->endpoints = ep;
        if (pthread_create(&ep->thread, NULL, stream_main, ep) == 0) {
                ep->thread_started = true;
        } else {
                atomic_store(&ep->done, true);
                ep->stop_ms = fs_now_mono_ms();
                LOG_ERROR("Cannot start the ListAndWatch thread", "resource=\"%s\"", resource);
        }
        pthread_mutex_unlock(&m->lock);
        LOG_INFO(2, "Device plugin connected",
                 "resource=\"%s\" endpoint=\"%s\" preStartRequired=%s "
                 "getPreferredAllocationAvailable=%s",
                 resource, socket, ep->pre_start_required ? "true" : "false",
                 ep->preferred_available ? "true" : "false");
        return 0;
}

struct dm_endpoint *dm_endpoint_restored(struct devicemanager *m, const char *resource)
{
        struct dm_endpoint *ep = endpoint_new(m, resource, NULL);
        ep->stop_ms = fs_now_mono_ms();
        atomic_store(&ep->done, true);
        ep->next = m->endpoints;
        m->endpoints = ep;
        return ep;
}

/* The ListAndWatch stream (upstream client.Run): each message replaces the
 * devices; any end marks them unhealthy.  No retry, ever. */
static void *stream_main(void *arg)
{
        struct dm_endpoint *ep = arg;
        struct devicemanager *m = ep->m;
        V1beta1__Empty empty = V1BETA1__EMPTY__INIT;
        uint8_t buf[8];
        size_t n = protobuf_c_message_pack(&empty.base, buf);
        cleanup_error ck_error_t err = NULL;
        if (grpc_stream_start(ep->stream, PATH_LIST_AND_WATCH, buf, n, &err) == 0) {
                for (;;) {
                        if (atomic_load(&m->stopping) || atomic_load(&ep->done))
                                break;
                        uint8_t *msg = NULL;
                        size_t len = 0;
                        int r = grpc_stream_recv(ep->stream, STREAM_POLL_MS, &msg, &len, &err);
                        if (r == 0)
                                continue;
                        if (r < 0)
                                break;
                        V1beta1__ListAndWatchResponse *resp =
                            v1beta1__list_and_watch_response__unpack(NULL, len, msg);
                        free(msg);
                        if (resp == NULL) {
                                ck_error_make(&err, 0, "a ListAndWatch message does not parse");
                                break;
                        }
                        dm_endpoint_devices(m, ep, resp);
                        v1beta1__list_and_watch_response__free_unpacked(resp, NULL);
                }
        }
        grpc_stream_cancel(ep->stream);
        if (!atomic_load(&m->stopping) && !atomic_load(&ep->done)) {
                cleanup_free char *why = err ? dm_rpc_error_text(err) : xstrdup("stopped");
                LOG_ERROR("ListAndWatch ended unexpectedly for device plugin",
                          "resource=\"%s\" err=\"%s\"", ep->resource, why);
                dm_mark_unhealthy(m, ep);
        }
        atomic_store(&ep->done, true);
        return NULL;
}

int dm_endpoint_allocate(struct dm_endpoint *ep, char *const *ids, size_t n, uint8_t **resp,
                         size_t *resp_len, ck_error_t *err)
{
        V1beta1__ContainerAllocateRequest creq = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
        creq.devices_ids = (char **)ids;
        creq.n_devices_ids = n;
        V1beta1__ContainerAllocateRequest *list[] = {&creq};
        V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
        req.container_requests = list;
        req.n_container_requests = 1;
        uint8_t *raw = NULL;
        size_t len = 0;
        if (call(ep, PATH_ALLOCATE, &req.base, DM_CALL_TIMEOUT_MS, &raw, &len, err) < 0)
                return -1;
        V1beta1__AllocateResponse *r = v1beta1__allocate_response__unpack(NULL, len, raw);
        free(raw);
        if (r == NULL)
                return ck_error_make(err, 0, "the allocation response does not parse");
        if (r->n_container_responses == 0) {
                v1beta1__allocate_response__free_unpacked(r, NULL);
                /* upstream: "... response <prototext>", empty for an empty one */
                return ck_error_make(err, 0, "no containers return in allocation response ");
        }
        /* the first container's answer, as received (kept in the checkpoint) */
        const ProtobufCMessage *first = &r->container_responses[0]->base;
        *resp_len = protobuf_c_message_get_packed_size(first);
        *resp = xmalloc(*resp_len ? *resp_len : 1);
        protobuf_c_message_pack(first, *resp);
        v1beta1__allocate_response__free_unpacked(r, NULL);
        return 0;
}

int dm_endpoint_pre_start(struct dm_endpoint *ep, char *const *ids, size_t n, ck_error_t *err)
{
        V1beta1__PreStartContainerRequest req = V1BETA1__PRE_START_CONTAINER_REQUEST__INIT;
        req.devices_ids = (char **)ids;
        req.n_devices_ids = n;
        uint8_t *raw = NULL;
        size_t len = 0;
        if (call(ep, PATH_PRE_START, &req.base, DM_PRE_START_TIMEOUT_MS, &raw, &len, err) < 0)
                return -1;
        free(raw);
        return 0;
}

int dm_endpoint_preferred(struct dm_endpoint *ep, char *const *available, size_t n_available,
                          char *const *must, size_t n_must, int32_t size, char ***out,
                          size_t *n_out, ck_error_t *err)
{
        *out = NULL;
        *n_out = 0;
        V1beta1__ContainerPreferredAllocationRequest creq =
            V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
        creq.available_deviceids = (char **)available;
        creq.n_available_deviceids = n_available;
        creq.must_include_deviceids = (char **)must;
        creq.n_must_include_deviceids = n_must;
        creq.allocation_size = size;
        V1beta1__ContainerPreferredAllocationRequest *list[] = {&creq};
        V1beta1__PreferredAllocationRequest req = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
        req.container_requests = list;
        req.n_container_requests = 1;
        uint8_t *raw = NULL;
        size_t len = 0;
        cleanup_error ck_error_t e = NULL;
        if (call(ep, PATH_PREFERRED, &req.base, DM_CALL_TIMEOUT_MS, &raw, &len, &e) < 0)
                return ck_error_make(err, 0,
                                     "device plugin GetPreferredAllocation rpc failed with err: %s",
                                     ck_error_msg(e));
        V1beta1__PreferredAllocationResponse *r =
            v1beta1__preferred_allocation_response__unpack(NULL, len, raw);
        free(raw);
        if (r == NULL)
                return 0;
        if (r->n_container_responses > 0 && r->container_responses[0] != NULL) {
                const V1beta1__ContainerPreferredAllocationResponse *c = r->container_responses[0];
                *out = xcalloc(c->n_deviceids + 1, sizeof(**out));
                for (size_t i = 0; i < c->n_deviceids; i++)
                        (*out)[(*n_out)++] = xstrdup(c->deviceids[i] ? c->deviceids[i] : "");
        }
        v1beta1__preferred_allocation_response__free_unpacked(r, NULL);
        return 0;
}

void dm_endpoint_free(struct dm_endpoint *ep)
{
        atomic_store(&ep->done, true);
        if (ep->thread_started)
                pthread_join(ep->thread, NULL);
        endpoint_destroy(ep);
}
