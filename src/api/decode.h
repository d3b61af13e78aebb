/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decoding and validation of v1.Pod objects into struct pod (api/pod.h).
 *
 * Errors name the field path as the apiserver does:
 *   spec.containers[1].image: Required value
 *   spec.containers[0].ports[0].containerPort: Invalid value: "x": must be an integer
 *   spec.containers[1].name: Duplicate value: "web"
 */
#ifndef CK_API_DECODE_H
#define CK_API_DECODE_H

#include "api/pod.h"
#include "util/error.h"

#include <jansson.h>

/* Decodes obj (borrowed; a deep copy with defaults applied becomes pod->raw)
 * into a new pod (refcount 1), validating it as the apiserver's validation
 * would for the fields the kubelet uses: apiVersion v1 / kind Pod,
 * metadata.name (DNS subdomain), containers non-empty, unique container
 * names across init and app containers (DNS label), image required, valid
 * ports, resources as quantities, volume names unique and referenced mounts
 * existing, restartPolicy / dnsPolicy / pull policy enums, probe handlers
 * exactly one kind. */
int api_pod_decode(json_t *obj, struct pod **out, ck_error_t *err);

/* Parses a Kubernetes quantity ("100m", "1.5", "64Mi", "1G", "2e3").
 * milli: return the value * 1000 (cpu millicores), rounded up as upstream's
 * MilliValue(); else the value (bytes), rounded up. */
int api_parse_quantity(const char *s, bool milli, int64_t *out, ck_error_t *err);

/* A quantity in the apiserver's canonical text: milli (cpu) values as
 * resource.NewMilliQuantity(v, DecimalSI) prints them ("25m", "1"), others
 * as NewQuantity(v, BinarySI) ("25Mi", "1000"). New string. */
char *api_format_quantity(int64_t value, bool milli);

#endif
