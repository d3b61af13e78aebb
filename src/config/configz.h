/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The body of the kubelet's /configz endpoint, as upstream serves it
 * (component-base/configz, cmd/kubelet/app/server.go setConfigz): one member
 * per registered component, here {"kubeletconfig": {...}}, the inner object
 * being the effective configuration (defaults, --config file and flags
 * merged) converted to kubelet.config.k8s.io/v1beta1 KubeletConfiguration
 * and marshalled with encoding/json.
 *
 * So, as upstream:
 * - no "kind" or "apiVersion": the internal-to-v1beta1 conversion does not
 *   fill TypeMeta and both are omitempty;
 * - v1beta1's JSON names, in v1beta1's field order; map keys sorted;
 * - durations as Go's time.Duration.String() ("1m0s", "4h0m0s", "500ms"),
 *   always present (omitempty never omits a struct such as metav1.Duration);
 * - omitempty strings, integers, lists and maps left out when zero/empty;
 *   fields that are pointers in v1beta1 (enableServer, healthzPort,
 *   resolvConf, kubeAPIQPS, ...) always present, even 0 or false: the
 *   conversion always fills them;
 * - tlsCertFile / tlsPrivateKeyFile: when neither is configured, the
 *   self-signed pair's paths <cert-dir>/kubelet.crt and kubelet.key, which
 *   upstream's InitializeTLS writes into the configuration before configz is
 *   set;
 * - imageServiceEndpoint: left out when it is the runtime endpoint (that is
 *   how ckubelet derives an unset one; upstream leaves it empty).
 * Only the fields struct kubelet_config carries appear: loading the inner
 * object (with apiVersion and kind added) as a --config file gives the same
 * document back.
 */
#ifndef CK_CONFIG_CONFIGZ_H
#define CK_CONFIG_CONFIGZ_H

#include "config/kubeletconfig.h"

#include <jansson.h>

/* Returns a new reference to {"kubeletconfig": {...}} for cfg (borrowed,
 * read only).  Strings that are not valid UTF-8 have each bad byte replaced
 * by U+FFFD, as encoding/json does.  Never NULL (allocation failure aborts,
 * as xalloc does).  Any thread, given cfg is not being modified. */
json_t *configz_json(const struct kubelet_config *cfg);

#endif
