/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A thread-safe set of strings (pod UIDs and the like): a few hundred at
 * most, so a sorted array searched in halves.
 */
#ifndef CK_UTIL_STRSET_H
#define CK_UTIL_STRSET_H

#include <stdbool.h>
#include <stddef.h>

struct strset;

struct strset *strset_new(void);
void strset_free(struct strset *s);
/* Adds a copy of key; true if it was not there. */
bool strset_add(struct strset *s, const char *key);
bool strset_contains(struct strset *s, const char *key);
/* Keeps only the keys among keep[0..n). */
void strset_retain(struct strset *s, const char *const *keep, size_t n);

#endif
