/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The response side of the gRPC transport (grpc/grpc_frame.c): headers and
 * trailers, DATA reassembly, message prefixes, grpc-message decoding and the
 * final status, driven by a small script in the fuzz input:
 *
 *   'H' <name index> <len> <value bytes>   a header or trailer field
 *   'D' <len hi> <len lo> <payload>        a DATA frame payload
 *   anything else                          ignored
 *
 * The whole input also goes through the stand-alone parsers.
 */
#include "grpc/grpc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {":status",      "grpc-status",  "grpc-message",
                                    "content-type", "grpc-timeout", "x-other"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ck_error_t err = NULL;

        char *decoded = grpc_percent_decode((const char *)data, size);
        free(decoded);
        int64_t ms;
        if (grpc_parse_timeout((const char *)data, size, &ms, &err) == 0 && ms >= 0) {
                char buf[16];
                grpc_format_timeout(ms, buf, sizeof(buf));
        }
        ck_error_release(&err);
        uint32_t len;
        grpc_parse_message_prefix(data, size, 1024, &len, &err);
        ck_error_release(&err);

        struct grpc_response r;
        grpc_response_init(&r, 64 * 1024);
        size_t i = 0;
        int failed = 0;
        while (i < size && !failed) {
                uint8_t op = data[i++];
                if (op == 'H' && i + 2 <= size) {
                        const char *name = names[data[i] % (sizeof(names) / sizeof(names[0]))];
                        size_t n = data[i + 1];
                        i += 2;
                        if (n > size - i)
                                n = size - i;
                        grpc_response_on_header(&r, name, strlen(name), (const char *)data + i, n);
                        i += n;
                } else if (op == 'D' && i + 2 <= size) {
                        size_t n = (size_t)data[i] << 8 | data[i + 1];
                        i += 2;
                        if (n > size - i)
                                n = size - i;
                        failed = grpc_response_on_data(&r, data + i, n, &err) < 0;
                        i += n;
                }
        }
        if (failed) {
                if (err == NULL || err->code == 0)
                        abort(); /* every failure carries a gRPC code */
        } else {
                uint8_t *msg = NULL;
                size_t msg_len = 0;
                if (grpc_response_finish(&r, &msg, &msg_len, &err) == 0) {
                        if (msg == NULL || err != NULL)
                                abort();
                        if (msg_len > 0)
                                (void)msg[msg_len - 1];
                        free(msg);
                } else if (err == NULL || err->code == 0) {
                        abort();
                }
        }
        ck_error_release(&err);
        grpc_response_free(&r);
        return 0;
}
