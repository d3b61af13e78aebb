/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which sysctls a pod may set (upstream pkg/kubelet/sysctl): the safe set
 * for the running kernel (safe_sysctls.go) plus allowedUnsafeSysctls
 * (names or "prefix*" patterns), each in a namespace the pod does not share
 * with the host (allowlist.go).  A pod asking for another is rejected at
 * admission with reason SysctlForbidden.
 */
#ifndef CK_KUBELET_SYSCTL_H
#define CK_KUBELET_SYSCTL_H

#include "api/pod.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>

struct sysctl_allowlist;

/* The safe sysctls of kernel `release` (uname -r form; NULL or unparsable:
 * those that need no minimum version) and `unsafe` (NULL-terminated, may be
 * NULL).  Fails as upstream's NewAllowlist on a malformed pattern or one not
 * known to be namespaced. */
int sysctl_allowlist_new(const char *const *unsafe, const char *release,
                         struct sysctl_allowlist **out, ck_error_t *err);
void sysctl_allowlist_free(struct sysctl_allowlist *al);

/* upstream patternAllowlist.Admit: true when every sysctl of the pod is
 * allowed; otherwise false with upstream's message ("forbidden sysctl: ...")
 * in `message`. */
bool sysctl_allowlist_admit(const struct sysctl_allowlist *al, const struct pod *pod, char *message,
                            size_t len);

/* upstream NormalizeName: "net/ipv4/ip_forward" -> "net.ipv4.ip_forward".
 * New string. */
char *sysctl_normalize_name(const char *name);

#endif
