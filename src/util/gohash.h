/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hashes upstream's kubelet writes to disk and to the runtime, computed
 * bit for bit as Go computes them, so that ckubelet and the upstream
 * kubelet can take over each other's containers and checkpoints:
 *
 * - hashutil.DeepHashObject(fnv.New32a(), obj) prints obj with
 *   dump.ForHash (spew's %#v with methods disabled) into the hash: a
 *   []byte prints as "([]uint8)[123 34 ...]" (decimal bytes, one space
 *   apart), a string as "(string)" and its bytes as they are.
 * - encoding/json.Marshal of a string: "..." with \" \\ \n \r \t escaped,
 *   other control bytes, <, >, & and U+2028/U+2029 as \u00XX / \u20XX, and
 *   each byte of invalid UTF-8 as \ufffd.
 */
#ifndef CK_UTIL_GOHASH_H
#define CK_UTIL_GOHASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 32 bits (Go's hash/fnv New32a), continued from h (start with
 * GO_FNV32A_INIT). */
#define GO_FNV32A_INIT 2166136261u
uint32_t go_fnv32a(uint32_t h, const void *p, size_t n);

/* DeepHashObject(fnv32a, []byte(p[:n])) */
uint32_t go_deep_hash_bytes(const void *p, size_t n);
/* DeepHashObject(fnv32a, string(s)): upstream's checkpoint checksum. */
uint32_t go_deep_hash_string(const char *s);

/* json.Marshal(s) for a NUL-terminated string: a new string, quotes included. */
char *go_json_string(const char *s);

#endif
