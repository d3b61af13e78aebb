/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The static pod file source (upstream pkg/kubelet/config/file.go,
 * file_linux.go, common.go): every regular file in the manifest directory
 * (not hidden, YAML or JSON) holds one Pod.  Watched with inotify plus a
 * periodic rescan (--file-check-frequency).
 *
 * Each pod gets the upstream static pod treatment (applyDefaults): name
 * "<name>-<nodename>", namespace "default" if empty, UID = md5 over the
 * canonical manifest, the node name and the file path (hex), spec.nodeName,
 * annotations kubernetes.io/config.hash (= UID), kubernetes.io/config.seen,
 * kubernetes.io/config.source "file".
 *
 * A file that fails to read, parse or validate is logged with the file and
 * the field path ("Could not process manifest file" path=... err=...); if it
 * held a good pod before, that last good version is kept (a typo never kills
 * a running pod); every other file is unaffected.
 *
 * Threading: runs its own thread; the sink is called from it.
 */
#ifndef CK_CONFIG_FILE_SOURCE_H
#define CK_CONFIG_FILE_SOURCE_H

#include "api/pod.h"
#include "util/error.h"

#include <stdint.h>

/* Called with the full set of pods of the source each time it may have
 * changed (upstream's SET semantics).  `pods` and the pods are borrowed for
 * the duration of the call: pod_ref() what you keep. */
typedef void (*pod_source_sink)(void *ctx, enum pod_source src, struct pod *const *pods, size_t n);

struct file_source;

/* Starts watching `dir` (need not exist yet: then it is an empty set, with a
 * warning, and checked again every period).  The first snapshot is delivered
 * from the source's thread soon after start. */
int file_source_start(const char *dir, const char *node_name, int64_t period_ms,
                      pod_source_sink sink, void *ctx, struct file_source **out, ck_error_t *err);
void file_source_stop(struct file_source *fs);

/* Applies the static pod defaults to a decoded manifest object (exposed for
 * unit tests and the HTTP source). Modifies obj in place.
 * path: the manifest file (or the URL for the HTTP source); source_name:
 * the kubernetes.io/config.source value, "file" (UID over "host:<node>"
 * and "file:<path>", plus the NoExecute toleration) or "http" (UID over
 * "url:<path>"). */
int file_source_apply_defaults(json_t *obj, const char *node_name, const char *path,
                               const char *source_name, ck_error_t *err);

#endif
