/* SPDX-License-Identifier: Apache-2.0 */
/* Shared inside src/client; not a public API. */
#ifndef CK_CLIENT_REST_INTERNAL_H
#define CK_CLIENT_REST_INTERNAL_H

#include "util/error.h"

#include <stddef.h>

/* Fills err for a failed (non-2xx) answer with this body: the apiserver's
 * Status when the body is one, else an excerpt of the body.  Returns -1. */
int rest_answer_error(ck_error_t *err, const char *what, long http_code, const char *body,
                      size_t len);

/* The User-Agent every request carries. */
const char *rest_user_agent(void);

#endif
