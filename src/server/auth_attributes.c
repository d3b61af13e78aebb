/* SPDX-License-Identifier: Apache-2.0 */
/* The authorization attributes of a request to the kubelet API (upstream's
 * nodeAuthorizerAttributesGetter): verb and subresources of nodes/<node>. */
#include "server/auth.h"

#include <string.h>

const char *server_auth_verb(const char *method)
{
        static const char *const verbs[][2] = {
            {"POST", "create"}, {"GET", "get"},       {"PUT", "update"},
            {"PATCH", "patch"}, {"DELETE", "delete"},
        };
        for (size_t i = 0; method && i < sizeof(verbs) / sizeof(verbs[0]); i++)
                if (strcmp(method, verbs[i][0]) == 0)
                        return verbs[i][1];
        return "";
}

/* path is prefix or below it (upstream's isSubpath; prefix without a
 * trailing '/'). */
static bool is_subpath(const char *path, const char *prefix)
{
        size_t n = strlen(prefix);
        return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

size_t server_auth_subresources(const char *path, const char *out[2])
{
        /* KubeletFineGrainedAuthz: a specific subresource first, proxy after */
        static const char *const fine[][2] = {
            {"/pods", "pods"},
            {"/healthz", "healthz"},
            {"/configz", "configz"},
            {"/runningpods", "pods"},
        };
        static const char *const coarse[][2] = {
            {"/stats", "stats"},           {"/metrics", "metrics"}, {"/logs", "log"},
            {"/checkpoint", "checkpoint"}, {"/statusz", "statusz"}, {"/flagz", "configz"},
        };
        size_t n = 0;
        if (path == NULL)
                path = "";
        for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
                if (is_subpath(path, fine[i][0])) {
                        out[n++] = fine[i][1];
                        break;
                }
        for (size_t i = 0; i < sizeof(coarse) / sizeof(coarse[0]); i++)
                if (is_subpath(path, coarse[i][0])) {
                        out[n++] = coarse[i][1];
                        return n;
                }
        out[n++] = "proxy";
        return n;
}
