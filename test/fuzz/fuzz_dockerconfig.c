/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes image pull secrets (kuberuntime/pull_secrets.c, upstream
 * credentialprovider's config.go and keyring.go): what a user puts into a
 * kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg secret, read
 * through a fake `struct kube_objects` by kuberuntime_pull_keyring_load, then
 * matched against image names by kuberuntime_keyring_lookup.  The input is
 *
 *   <flags byte> <image> SP <image> ... LF <payload>
 *
 * flags: bit 0 dockercfg (else dockerconfigjson), bit 1 the payload goes
 * into data as it is (else base64-encoded, as the apiserver stores it),
 * bit 2 the payload is the whole Secret object, bit 3 the pod names the
 * secret twice.  Checks, beyond memory safety: a lookup fails only with an
 * error and then returns nothing; a malformed secret fails every lookup or
 * none; a repeated lookup gives the same credentials; every credential
 * returned is a whole AuthConfig.
 */
#include "api/decode.h"
#include "kuberuntime/runtime.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_IMAGES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fake_api {
        const uint8_t *payload;
        size_t len;
        unsigned flags;
};

static int fake_get(void *opaque, const char *resource, const char *ns, const char *name,
                    const char *pod_uid, json_t **out, ck_error_t *err)
{
        (void)pod_uid;
        struct fake_api *api = opaque;
        if (strcmp(resource, "secrets") != 0)
                abort();
        if (strcmp(name, "missing") == 0)
                return ck_error_make_code(err, 404, "secrets \"%s\" not found", name);
        if (api->flags & 4) {
                json_t *j = json_loadb((const char *)api->payload, api->len, JSON_DECODE_ANY, NULL);
                if (j == NULL)
                        return ck_error_make_code(err, 500, "not JSON");
                *out = j;
                return 0;
        }
        const char *type =
            api->flags & 1 ? "kubernetes.io/dockercfg" : "kubernetes.io/dockerconfigjson";
        const char *key = api->flags & 1 ? ".dockercfg" : ".dockerconfigjson";
        json_t *value;
        if (api->flags & 2) {
                value = json_stringn_nocheck((const char *)api->payload, api->len);
        } else {
                cleanup_free char *enc = xmalloc(4 * ((api->len + 2) / 3) + 1);
                EVP_EncodeBlock((unsigned char *)enc, api->payload, (int)api->len);
                value = json_string(enc);
        }
        *out = json_pack("{s:{s:s,s:s},s:s,s:{s:o}}", "metadata", "name", name, "namespace", ns,
                         "type", type, "data", key, value);
        return 0;
}

/* A pod naming the pull secrets "a" (twice with flags bit 3), and "missing". */
static struct pod *make_pod(bool twice)
{
        cleanup_json json_t *obj = json_pack(
            "{s:s,s:s,s:{s:s,s:s,s:s},s:{s:[{s:s,s:s}],s:[{s:s},{s:s},{s:s}]}}", "apiVersion", "v1",
            "kind", "Pod", "metadata", "name", "web", "namespace", "team", "uid", "u-1", "spec",
            "containers", "name", "c", "image", "busybox", "imagePullSecrets", "name", "a", "name",
            twice ? "a" : "missing", "name", "missing");
        struct pod *pod = NULL;
        ck_error_t err = NULL;
        if (api_pod_decode(obj, &pod, &err) < 0)
                abort();
        return pod;
}

static bool nonnull_strings(const Runtime__V1__AuthConfig *a)
{
        return a != NULL && a->username != NULL && a->password != NULL && a->auth != NULL &&
               a->server_address != NULL && a->identity_token != NULL && a->registry_token != NULL;
}

/* One lookup: -1 failed, else the number of credentials; *sig: their
 * concatenation (to compare two lookups). */
static int lookup(const struct kuberuntime_keyring *k, const char *image, char **sig)
{
        Runtime__V1__AuthConfig **auths = (void *)1;
        size_t n = 99;
        ck_error_t err = NULL;
        int r = kuberuntime_keyring_lookup(k, image, &auths, &n, &err);
        if (r < 0) {
                if (err == NULL || auths != NULL || n != 0)
                        abort();
                ck_error_release(&err);
                *sig = NULL;
                return -1;
        }
        if (err != NULL || (n == 0) != (auths == NULL))
                abort();
        char *s = xstrdup("");
        for (size_t i = 0; i < n; i++) {
                if (!nonnull_strings(auths[i]))
                        abort();
                char *next = xasprintf("%s|%s:%s:%s:%s", s, auths[i]->username, auths[i]->password,
                                       auths[i]->identity_token, auths[i]->registry_token);
                free(s);
                s = next;
        }
        kuberuntime_auths_free(auths, n);
        *sig = s;
        return (int)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct pod *pods[2];
        if (pods[0] == NULL) {
                log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
                pods[0] = make_pod(false);
                pods[1] = make_pod(true);
        }
        if (size == 0)
                return 0;
        unsigned flags = data[0];
        const uint8_t *rest = data + 1;
        size_t rest_len = size - 1;
        const uint8_t *nl = memchr(rest, '\n', rest_len);
        size_t images_len = nl != NULL ? (size_t)(nl - rest) : 0;
        struct fake_api api = {
            .payload = nl != NULL ? nl + 1 : rest,
            .len = nl != NULL ? rest_len - images_len - 1 : rest_len,
            .flags = flags,
        };
        struct kube_objects kube = {.get = fake_get, .opaque = &api};
        struct kuberuntime_keyring *k =
            kuberuntime_pull_keyring_load(&kube, NULL, pods[(flags >> 3) & 1]);
        if (k == NULL)
                abort(); /* the pod names secrets */

        /* the images: the first line, split at spaces (NULs end a name) */
        cleanup_free char *line = xstrndup((const char *)rest, images_len);
        const char *images[MAX_IMAGES + 4] = {"busybox", "docker.io/library/busybox:1.35",
                                              "127.0.0.1:5000/private/app@sha256:00", ""};
        size_t n_images = 4;
        for (char *save = NULL, *tok = strtok_r(line, " ", &save); tok && n_images < MAX_IMAGES + 4;
             tok = strtok_r(NULL, " ", &save))
                images[n_images++] = tok;
        int failed = -1; /* unknown yet */
        for (size_t i = 0; i < n_images; i++) {
                cleanup_free char *sig = NULL, *again = NULL;
                int r = lookup(k, images[i], &sig);
                if (failed >= 0 && failed != (r < 0))
                        abort();
                failed = r < 0;
                int r2 = lookup(k, images[i], &again);
                if (r2 != r || (r >= 0 && strcmp(sig, again) != 0))
                        abort();
        }
        kuberuntime_keyring_free(k);
        return 0;
}
