/* SPDX-License-Identifier: Apache-2.0 */
/* Go's time.Duration.String(), so that durations in messages and flags read
 * as upstream prints them. */
#ifndef CK_UTIL_GODURATION_H
#define CK_UTIL_GODURATION_H

#include <stddef.h>
#include <stdint.h>

/* A whole number of milliseconds ("1m30s", "500ms", "3m0.5s", "0s") into
 * buf. */
void go_duration_format_ms(int64_t ms, char *buf, size_t size);

#endif
