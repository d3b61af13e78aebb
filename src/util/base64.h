/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Base64 decoding with the standard alphabet (RFC 4648 section 4), as Go's
 * encoding/base64 does it: StdEncoding (padded, what encoding/json uses for
 * []byte: secret and configMap data, a kubeconfig's *-data fields) and
 * RawStdEncoding (unpadded).  '\r' and '\n' are skipped anywhere in the
 * input; the unused low bits of the last quantum are not checked (Go's
 * encodings are not Strict).
 */
#ifndef CK_UTIL_BASE64_H
#define CK_UTIL_BASE64_H

#include "util/error.h"

#include <stddef.h>

enum base64_flags {
        /* RawStdEncoding: no '=' at all; the last quantum may have 2 or 3
         * characters.  Without it padding is required (StdEncoding). */
        BASE64_RAW = 1u << 0,
        /* also skip ' ', '\t', '\v' and '\f' (YAML's !!binary, whose value
         * may be folded over lines) */
        BASE64_SKIP_SPACE = 1u << 1,
};

/* Decodes the len bytes at in (flags: enum base64_flags).  On success *out is
 * a new NUL-terminated buffer of *out_len bytes (the NUL not counted).  On
 * invalid input returns -1 and, when err is not NULL, sets it to
 * "illegal base64 data" (callers name the field).  Any thread. */
int base64_decode(const char *in, size_t len, unsigned flags, char **out, size_t *out_len,
                  ck_error_t *err);

#endif
