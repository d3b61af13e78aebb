/* SPDX-License-Identifier: Apache-2.0 */
/*
 * $(VAR) expansion (upstream third_party/forked/golang/expansion): the
 * container's command, args and env values (kuberuntime), an exec probe's
 * or hook's command (probe), a subPathExpr (kuberuntime).  A leaf module:
 * it depends on util and api's kv_list only.
 */
#ifndef CK_EXPANSION_EXPANSION_H
#define CK_EXPANSION_EXPANSION_H

#include "api/pod.h"

#include <stddef.h>

/* $(VAR) replaced from the map (earlier env entries), $$ -> $, unknown $(X)
 * left as is, as upstream's expansion.Expand with MappingFuncFor.  vars may
 * be NULL.  New string. */
char *expansion_expand(const char *in, const struct kv_list *vars);

/* The same with a lookup callback: returns the value of the n-byte name
 * (borrowed), or NULL to keep "$(name)". */
typedef const char *(*expansion_lookup_fn)(void *ctx, const char *name, size_t n);
char *expansion_expand_with(const char *in, expansion_lookup_fn fn, void *ctx);

#endif
