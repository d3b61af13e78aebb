/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The environment files of env[].valueFrom.fileKeyRef (upstream
 * pkg/kubelet/util/env ParseEnv): a strict subset of POSIX shell:
 *   VAR='value'        the value single-quoted, taken literally
 *   VAR='a             newlines inside the quotes belong to the value
 *   b'
 *   VAR='v' # note     a comment after the closing quote
 *   # comment, blank lines (outside quotes), leading blanks: skipped
 *   VAR= 'v'           a blank after '=': VAR is empty (as bash has it)
 * A name with blanks before '=', a value not in quotes, text after the
 * closing quote, an unclosed quote, a NUL byte in the value or a line of
 * 64 KiB or more (upstream's bufio.Scanner limit) is an error naming the
 * line.
 */
#ifndef CK_UTIL_ENVFILE_H
#define CK_UTIL_ENVFILE_H

#include "util/error.h"

#include <stddef.h>

/* Looks up key in the file's text (buf, len bytes): *value is a new string,
 * or NULL when the file does not set it (or sets it empty, as upstream,
 * which treats both alike).  The whole file is checked up to the key. */
int envfile_lookup(const char *buf, size_t len, const char *key, char **value, ck_error_t *err);

#endif
