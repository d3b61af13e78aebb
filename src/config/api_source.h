/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The apiserver pod source (upstream pkg/kubelet/config/apiserver.go): the
 * pods bound to this node, list-watched with fieldSelector
 * spec.nodeName=<node> by a reflector (client/reflector.h: resume from the
 * last resourceVersion, relist on 410 Gone, reconnect with backoff).
 *
 * After every change the sink gets the whole set (POD_SOURCE_API), as the
 * file source does; mirror pods (annotation kubernetes.io/config.mirror)
 * are part of it, for the kubelet to tell apart.  An object that does not
 * decode is left out with an error naming it (an update that does not
 * decode keeps the previous version); the others are unaffected.
 * Objects are decoded once per resourceVersion.  Sink calls come from the
 * reflector's thread.
 */
#ifndef CK_CONFIG_API_SOURCE_H
#define CK_CONFIG_API_SOURCE_H

#include "client/ratelimit.h"
#include "client/rest_config.h"
#include "config/file_source.h"
#include "util/error.h"

struct api_source;

int api_source_start(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                     const char *node_name, pod_source_sink sink, void *ctx,
                     struct api_source **out, ck_error_t *err);
void api_source_stop(struct api_source *s);

/* Whether the first list has been delivered. */
bool api_source_synced(struct api_source *s);

#endif
