/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The grpc action (upstream pkg/probe/grpc): the standard health protocol,
 * grpc.health.v1.Health/Check over h2c to podIP:port, on the project's gRPC
 * transport.  Success only when the server answers SERVING.
 *
 *   message HealthCheckRequest  { string service = 1; }
 *   message HealthCheckResponse { ServingStatus status = 1; }
 *   enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; }
 *
 * Two fields: encoded and decoded by hand rather than generated.
 */
#include "probe/probe_internal.h"

#include "grpc/grpc.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <string.h>

#define HEALTH_CHECK_PATH "/grpc.health.v1.Health/Check"
#define SERVING 1

/* HealthCheckRequest{service}: field 1, wire type 2.  *len set; new buffer. */
static uint8_t *encode_request(const char *service, size_t *len)
{
        size_t n = strlen(service);
        uint8_t *buf = xmalloc(n + 11);
        size_t off = 0;
        if (n > 0) {
                buf[off++] = 0x0a;
                for (size_t v = n;; v >>= 7) {
                        if (v < 0x80) {
                                buf[off++] = (uint8_t)v;
                                break;
                        }
                        buf[off++] = (uint8_t)(v | 0x80);
                }
                memcpy(buf + off, service, n);
                off += n;
        }
        *len = off;
        return buf;
}

static int read_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *v)
{
        *v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
                if (*off >= len)
                        return -1;
                uint8_t b = p[(*off)++];
                *v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80))
                        return 0;
        }
        return -1;
}

/* HealthCheckResponse.status (0 when absent), or < 0 when malformed. */
static int decode_status(const uint8_t *p, size_t len, uint64_t *status)
{
        size_t off = 0;
        *status = 0;
        while (off < len) {
                uint64_t key, v;
                if (read_varint(p, len, &off, &key) < 0)
                        return -1;
                switch (key & 7) {
                case 0: /* varint */
                        if (read_varint(p, len, &off, &v) < 0)
                                return -1;
                        if (key >> 3 == 1)
                                *status = v;
                        break;
                case 1: /* 64-bit */
                        if (len - off < 8)
                                return -1;
                        off += 8;
                        break;
                case 2: /* length-delimited */
                        if (read_varint(p, len, &off, &v) < 0 || v > len - off)
                                return -1;
                        off += (size_t)v;
                        break;
                case 5: /* 32-bit */
                        if (len - off < 4)
                                return -1;
                        off += 4;
                        break;
                default:
                        return -1;
                }
        }
        return 0;
}

static const char *status_name(uint64_t s)
{
        static const char *const names[] = {"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"};
        return s < ARRAY_SIZE(names) ? names[s] : "UNKNOWN";
}

/* The failure message for a call that did not return a response, worded as
 * upstream's. */
static char *call_error_message(const char *addr, int64_t timeout_ms, ck_error_t err)
{
        const char *msg = ck_error_msg(err);
        int code = err ? err->code : GRPC_UNKNOWN;
        double timeout_s = (double)timeout_ms / 1000.0;
        if (code == GRPC_UNAVAILABLE && err && err->status == ETIMEDOUT)
                return xasprintf("timeout: failed to connect service \"%s\" within %gs: %s", addr,
                                 timeout_s, msg);
        if (code == GRPC_UNAVAILABLE && err && err->status != 0)
                return xasprintf("error: failed to connect service at \"%s\": %s", addr, msg);
        if (code == GRPC_UNIMPLEMENTED)
                return xasprintf("error: this server does not implement the grpc health protocol "
                                 "(grpc.health.v1.Health): %s",
                                 msg);
        if (code == GRPC_DEADLINE_EXCEEDED)
                return xasprintf("timeout: health rpc did not complete within %gs", timeout_s);
        return xasprintf("error: health rpc probe failed: %s", msg);
}

enum probe_outcome probe__grpc(const char *host, int port, const char *service, int64_t timeout_ms,
                               char **message)
{
        if (port <= 0 || port > 65535) {
                *message = xasprintf("invalid port number: %d", port);
                return PROBE_OUTCOME_ERROR;
        }
        if (timeout_ms <= 0)
                timeout_ms = 1000;
        cleanup_free char *addr = probe__join_host_port(host, port);
        size_t req_len = 0;
        cleanup_free uint8_t *req = encode_request(service, &req_len);
        struct grpc_conn *conn = grpc_conn_new_tcp(host, port);
        grpc_conn_set_user_agent(conn, PROBE_USER_AGENT);
        cleanup_free uint8_t *resp = NULL;
        size_t resp_len = 0;
        cleanup_error ck_error_t err = NULL;
        int r =
            grpc_unary(conn, HEALTH_CHECK_PATH, req, req_len, timeout_ms, &resp, &resp_len, &err);
        grpc_conn_free(conn);
        if (r < 0) {
                *message = call_error_message(addr, timeout_ms, err);
                return PROBE_OUTCOME_FAILURE;
        }
        uint64_t status;
        if (decode_status(resp, resp_len, &status) < 0) {
                *message = xstrdup("error: health rpc probe failed: malformed HealthCheckResponse");
                return PROBE_OUTCOME_FAILURE;
        }
        if (status != SERVING) {
                *message =
                    xasprintf("service unhealthy (responded with \"%s\")", status_name(status));
                return PROBE_OUTCOME_FAILURE;
        }
        *message = xstrdup("service healthy");
        return PROBE_OUTCOME_SUCCESS;
}
