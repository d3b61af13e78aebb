/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the decoders of the Docker Engine's answers (libdocker/
 * docker_decode.c) and the stream demultiplexer (docker_exec.c).  The
 * input is
 *
 *   <selector byte> <bytes>
 *
 * selector % 8: 0 container inspect, 1 container list, 2 image, 3 image
 * list, 4 exec inspect, 5 a pull progress line, 6 a multiplexed stream
 * (fed in pieces whose sizes the bytes themselves choose), 7 a
 * container's stats.
 *
 * Checks, beyond memory safety: a decoder either succeeds with its
 * required fields set or fails with DOCKER_ERR_PROTOCOL and a message
 * (a pull line may fail with the engine's message, DOCKER_ERR_SERVER),
 * and stats without a process count report none;
 * the demultiplexer hands out no more payload than it was fed, and only
 * for streams 0..3.
 */
#include "libdocker/docker.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect_failure(ck_error_t *err, int code)
{
        if (*err == NULL || (*err)->code != code || ck_error_msg(*err)[0] == '\0')
                abort();
        ck_error_release(err);
}

static size_t payload;

static void count(void *ctx, int stream, const char *d, size_t len)
{
        (void)ctx;
        (void)d;
        if (stream < 0 || stream > 3)
                abort();
        payload += len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        int sel = data[0] % 8;
        const char *body = (const char *)data + 1;
        size_t len = size - 1;
        ck_error_t err = NULL;

        if (sel == 5) {
                if (docker_decode_pull_progress(body, len, &err) < 0) {
                        int code = err->code;
                        if (code != DOCKER_ERR_SERVER)
                                code = DOCKER_ERR_PROTOCOL;
                        expect_failure(&err, code);
                }
                return 0;
        }
        if (sel == 6) {
                struct docker_demux m = {0};
                payload = 0;
                size_t off = 0;
                while (off < len) {
                        size_t piece = 1 + (size_t)(unsigned char)body[off] % 17;
                        if (piece > len - off)
                                piece = len - off;
                        if (docker_demux_feed(&m, body + off, piece, count, NULL) < 0)
                                break;
                        off += piece;
                }
                if (payload > len)
                        abort();
                return 0;
        }

        json_t *j = json_loadb(body, len, JSON_DECODE_ANY, NULL);
        if (j == NULL)
                return 0;
        if (sel == 0) {
                struct docker_container c;
                if (docker_decode_container(j, &c, &err) == 0) {
                        if (c.id == NULL || c.labels == NULL || !json_is_object(c.labels))
                                abort();
                        docker_container_clear(&c);
                } else {
                        expect_failure(&err, DOCKER_ERR_PROTOCOL);
                }
        } else if (sel == 1) {
                struct docker_container_summary *v = NULL;
                size_t n = 0;
                if (docker_decode_container_list(j, &v, &n, &err) == 0) {
                        for (size_t i = 0; i < n; i++)
                                if (v[i].id == NULL || v[i].labels == NULL)
                                        abort();
                        docker_container_summaries_free(v, n);
                } else {
                        expect_failure(&err, DOCKER_ERR_PROTOCOL);
                }
        } else if (sel == 2 || sel == 3) {
                struct docker_image *v = NULL, one;
                size_t n = 0;
                int rc = sel == 2 ? docker_decode_image(j, &one, &err)
                                  : docker_decode_image_list(j, &v, &n, &err);
                if (rc < 0) {
                        expect_failure(&err, DOCKER_ERR_PROTOCOL);
                } else if (sel == 2) {
                        if (one.id == NULL)
                                abort();
                        for (size_t i = 0; i < one.n_repo_tags; i++)
                                if (strcmp(one.repo_tags[i], "<none>:<none>") == 0)
                                        abort();
                        docker_image_clear(&one);
                } else {
                        docker_images_free(v, n);
                }
        } else if (sel == 7) {
                struct docker_stats st;
                if (docker_decode_stats(j, &st, &err) < 0)
                        expect_failure(&err, DOCKER_ERR_PROTOCOL);
                else if (!st.has_pids && st.pids_current != 0)
                        abort();
        } else {
                struct docker_exec_state st;
                if (docker_decode_exec(j, &st, &err) < 0)
                        expect_failure(&err, DOCKER_ERR_PROTOCOL);
        }
        json_decref(j);
        return 0;
}
