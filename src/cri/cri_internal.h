/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/cri: the one call helper of cri.c, shared by the files that
 * implement groups of CRI calls (cri_streaming.c).
 */
#ifndef CK_CRI_INTERNAL_H
#define CK_CRI_INTERNAL_H

#include "cri/cri.h"

#include <stdint.h>

/* extra_ms of a call without a deadline. */
#define NO_DEADLINE (-1)

/* One call: packs req, sends it to /runtime.v1.<service>/<method> with a
 * deadline of the client's timeout plus extra_ms (NO_DEADLINE: none), and
 * unpacks the response into *out (a new message of type resp_desc).
 * Errors: "CRI <method>: ..." (see cri.h). */
int cri__call(struct cri_client *c, const char *service, const char *method,
              const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
              int64_t extra_ms, ProtobufCMessage **out, ck_error_t *err);

#define CALL(c, service, method, req, resp_type, extra_ms, out, err)                               \
        cri__call(c, service, method, &(req).base, &runtime__v1__##resp_type##__descriptor,        \
                  extra_ms, (ProtobufCMessage **)(out), err)

#define FREE_MSG(m) protobuf_c_message_free_unpacked((ProtobufCMessage *)(m), NULL)

#endif
