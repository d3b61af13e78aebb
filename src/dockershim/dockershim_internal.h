/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of src/dockershim shared by its files and the unit tests: the
 * shim's state and the CRI methods, each a grpc_method_fn (request and
 * answer are protobuf bytes).
 */
#ifndef CK_DOCKERSHIM_INTERNAL_H
#define CK_DOCKERSHIM_INTERNAL_H

#include "dockershim/dockershim.h"
#include "libdocker/docker.h"

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

struct grpc_server;
struct grpc_method;

struct dockershim {
        struct docker_client *docker;
        struct grpc_server *server;
        struct grpc_method *methods; /* the server's table */
        char *listen_path;
        char *pod_infra_image;
        char *cgroup_driver;   /* the engine's: "cgroupfs" or "systemd" */
        char *docker_root_dir; /* the engine's data root: the image filesystem */
};

/* The gRPC status of a failed Docker call (enum docker_error_code):
 * the engine away is UNAVAILABLE, a deadline DEADLINE_EXCEEDED, a 404
 * NOT_FOUND, a 400 INVALID_ARGUMENT, anything else UNKNOWN. */
int dockershim_grpc_code(const ck_error_t err);
/* Gives *err (a failed Docker call's) its gRPC status; returns -1. */
int dockershim_fail(ck_error_t *err);

/* Packs m into *out (malloc'ed) and *len; returns 0. */
int dockershim_pack(const ProtobufCMessage *m, uint8_t **out, size_t *len);

/* Runtime (runtime.c) */
int dockershim_version(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                       uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                      uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_runtime_config(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                              uint8_t **resp, size_t *resp_len, ck_error_t *err);

/* Images (images.c) */
int dockershim_list_images(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                           uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_image_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                            uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_pull_image(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                          uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_remove_image(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                            uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_image_fs_info(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                             uint8_t **resp, size_t *resp_len, ck_error_t *err);

/* The X-Registry-Auth value of a CRI AuthConfig's fields (base64url of
 * the engine's auth JSON, padded); the CRI "auth" field (base64 of
 * user:password) fills username and password when they are empty.  NULL
 * with err when auth does not decode. */
char *dockershim_registry_auth(const char *username, const char *password, const char *auth,
                               const char *server_address, const char *identity_token,
                               const char *registry_token, ck_error_t *err);

#endif
