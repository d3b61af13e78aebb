/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Registry credentials from a pod's imagePullSecrets (upstream
 * pkg/credentialprovider: config.go reads docker configs, keyring.go
 * BasicDockerKeyring matches them, secrets/secrets.go MakeDockerKeyring; and
 * the kubelet's getPullSecretsForPod).
 *
 * A keyring is a list of (key, credentials).  A key is a registry
 * host[:port] with an optional path ("127.0.0.1:5000/private"), made from a
 * docker config's registry entry ("https://127.0.0.1:5000/v2/" gives
 * "127.0.0.1:5000").  An image's repository matches a key when the hosts
 * have the same number of dot-separated parts, each matching as a glob
 * ("*.example.com"), the ports are equal, and the key's path is a prefix of
 * the repository's path.  Matches come most specific first (keys in reverse
 * lexical order, as upstream), each key's credentials in the order the
 * secrets gave them.  An image of Docker Hub with no match gets the
 * credentials of "index.docker.io" (the key of "https://index.docker.io/v1/").
 */
#include "kuberuntime/runtime.h"
#include "util/base64.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_REGISTRY_HOST "index.docker.io"
#define SECRET_TYPE_DOCKER_CONFIG_JSON "kubernetes.io/dockerconfigjson"
#define SECRET_KEY_DOCKER_CONFIG_JSON ".dockerconfigjson"
#define SECRET_TYPE_DOCKERCFG "kubernetes.io/dockercfg"
#define SECRET_KEY_DOCKERCFG ".dockercfg"

struct keyring_cred {
        char *key;
        char *username, *password, *identity_token, *registry_token;
        size_t seq; /* order of addition: credentials of one key keep it */
};

struct kuberuntime_keyring {
        struct keyring_cred *creds;
        size_t n;
        /* the first secret whose docker config could not be read: every
         * lookup fails with it (upstream MakeDockerKeyring's error) */
        char *error;
};

/* ---- registry keys and matching (upstream keyring.go) ---- */

/* The host[:port] and path of "scheme://[user@]host[:port][/path]" as Go's
 * url.Parse sees them (query and fragment dropped).  -1 when Go would
 * reject it: a non-numeric port, a bracket not closed, control characters
 * or spaces in the host. */
static int url_split(const char *url, char **host, char **path)
{
        const char *p = strstr(url, "://");
        if (p == NULL)
                return -1;
        p += 3;
        size_t alen = strcspn(p, "/?#");
        const char *auth_end = p + alen;
        const char *at = memrchr(p, '@', alen);
        const char *h = at != NULL ? at + 1 : p;
        size_t hlen = (size_t)(auth_end - h);
        for (size_t i = 0; i < hlen; i++) {
                unsigned char c = (unsigned char)h[i];
                if (c <= ' ' || c == 0x7f || c == '%' || c == '\\')
                        return -1;
        }
        const char *port = NULL;
        if (hlen > 0 && h[0] == '[') {
                const char *rb = memchr(h, ']', hlen);
                if (rb == NULL)
                        return -1;
                if (rb + 1 < auth_end) {
                        if (rb[1] != ':')
                                return -1;
                        port = rb + 1;
                }
        } else {
                port = memrchr(h, ':', hlen);
        }
        if (port != NULL)
                for (const char *q = port + 1; q < auth_end; q++)
                        if (*q < '0' || *q > '9')
                                return -1;
        size_t plen = *auth_end == '/' ? strcspn(auth_end, "?#") : 0;
        *host = xstrndup(h, hlen);
        *path = xstrndup(auth_end, plen);
        return 0;
}

/* Go's net.SplitHostPort, falling back to (whole, "") on any error as
 * upstream's SplitURL does.  hostport is cut in place: *host and *port
 * point into it (or to a static ""). */
static void split_host_port(char *hostport, const char **host, const char **port)
{
        *host = hostport;
        *port = "";
        if (hostport[0] == '[') {
                char *rb = strchr(hostport, ']');
                if (rb == NULL || rb[1] != ':' || strchr(rb + 2, ':') != NULL)
                        return;
                *rb = '\0';
                *host = hostport + 1;
                *port = rb + 2;
                return;
        }
        char *colon = strrchr(hostport, ':');
        if (colon == NULL || memchr(hostport, ':', (size_t)(colon - hostport)) != NULL)
                return;
        *colon = '\0';
        *port = colon + 1;
}

/* The number of dot-separated parts of host. */
static size_t host_parts(const char *host)
{
        size_t n = 1;
        for (const char *p = host; *p; p++)
                n += *p == '.';
        return n;
}

/* upstream URLsMatchStr(glob, target): both are schemeless
 * "host[:port][/path]". */
static bool urls_match(const char *glob, const char *target)
{
        cleanup_free char *gurl = xasprintf("https://%s", glob);
        cleanup_free char *turl = xasprintf("https://%s", target);
        cleanup_free char *ghostport = NULL, *gpath = NULL, *thostport = NULL, *tpath = NULL;
        if (url_split(gurl, &ghostport, &gpath) < 0 || url_split(turl, &thostport, &tpath) < 0)
                return false;
        const char *ghost, *gport, *thost, *tport;
        split_host_port(ghostport, &ghost, &gport);
        split_host_port(thostport, &thost, &tport);
        if (strcmp(gport, tport) != 0 || host_parts(ghost) != host_parts(thost))
                return false;
        if (strncmp(tpath, gpath, strlen(gpath)) != 0)
                return false;
        /* each part as a glob (filepath.Match: no part holds a '/') */
        const char *g = ghost, *t = thost;
        for (;;) {
                size_t gl = strcspn(g, "."), tl = strcspn(t, ".");
                cleanup_free char *gp = xstrndup(g, gl);
                cleanup_free char *tp = xstrndup(t, tl);
                if (fnmatch(gp, tp, 0) != 0)
                        return false;
                if (g[gl] == '\0')
                        return true;
                g += gl + 1;
                t += tl + 1;
        }
}

/* upstream BasicDockerKeyring.Add: the key of a docker config entry, NULL
 * when the entry is not a valid URL. */
static char *registry_key(const char *location)
{
        cleanup_free char *url =
            strncmp(location, "https://", 8) == 0 || strncmp(location, "http://", 7) == 0
                ? xstrdup(location)
                : xasprintf("https://%s", location);
        cleanup_free char *host = NULL, *path = NULL;
        if (url_split(url, &host, &path) < 0)
                return NULL;
        const char *eff = path;
        if (strncmp(eff, "/v2/", 4) == 0 || strncmp(eff, "/v1/", 4) == 0)
                eff += 3;
        if (eff[0] != '\0' && strcmp(eff, "/") != 0)
                return xasprintf("%s%s", host, eff);
        return xstrdup(host);
}

/* The repository an image names, normalised as docker's reference package
 * does (upstream parsers.ParseImageName): "busybox:1.35" ->
 * "docker.io/library/busybox", "127.0.0.1:5000/a/b@sha256:..." ->
 * "127.0.0.1:5000/a/b".  New string. */
static char *image_repository(const char *image)
{
        size_t len = strcspn(image, "@");
        const char *slash = memrchr(image, '/', len);
        const char *last = slash != NULL ? slash + 1 : image;
        const char *colon = memchr(last, ':', len - (size_t)(last - image));
        if (colon != NULL)
                len = (size_t)(colon - image);
        cleanup_free char *name = xstrndup(image, len);

        const char *domain = "docker.io", *rest = name;
        char *first = strchr(name, '/');
        if (first != NULL) {
                size_t dl = (size_t)(first - name);
                bool lower = true;
                for (size_t i = 0; i < dl; i++)
                        if (name[i] >= 'A' && name[i] <= 'Z')
                                lower = false;
                if (memchr(name, '.', dl) != NULL || memchr(name, ':', dl) != NULL ||
                    (dl == 9 && strncmp(name, "localhost", 9) == 0) || !lower) {
                        *first = '\0';
                        domain = name;
                        rest = first + 1;
                }
        }
        if (strcmp(domain, "index.docker.io") == 0)
                domain = "docker.io";
        if (strcmp(domain, "docker.io") == 0 && strchr(rest, '/') == NULL)
                return xasprintf("%s/library/%s", domain, rest);
        return xasprintf("%s/%s", domain, rest);
}

/* upstream isDefaultRegistryMatch: an image of Docker Hub (or one whose
 * first component names no registry). */
static bool is_default_registry_match(const char *repo)
{
        const char *slash = strchr(repo, '/');
        if (repo[0] == '\0' || repo[0] == '/')
                return false;
        if (slash == NULL)
                return true;
        size_t l = (size_t)(slash - repo);
        if ((l == 9 && strncmp(repo, "docker.io", l) == 0) ||
            (l == 15 && strncmp(repo, "index.docker.io", l) == 0))
                return true;
        return memchr(repo, '.', l) == NULL && memchr(repo, ':', l) == NULL;
}

/* ---- docker configs (upstream config.go) ---- */

/* A member by name as encoding/json finds it: exact, else ignoring case. */
static json_t *field(json_t *obj, const char *name)
{
        json_t *v = json_object_get(obj, name);
        if (v != NULL)
                return v;
        const char *k;
        json_object_foreach(obj, k, v) if (strcasecmp(k, name) == 0) return v;
        return NULL;
}

/* A string member (absent or null: NULL). */
static int string_field(json_t *obj, const char *name, const char **out, ck_error_t *err)
{
        json_t *v = field(obj, name);
        *out = NULL;
        if (v == NULL || json_is_null(v))
                return 0;
        if (!json_is_string(v))
                return ck_error_make(err, 0, "%s must be a string", name);
        *out = json_string_value(v);
        return 0;
}

static char *dup_nonempty(const char *s)
{
        return s != NULL && s[0] != '\0' ? xstrdup(s) : NULL;
}

static void cred_clear(struct keyring_cred *c)
{
        char *secrets[] = {c->username, c->password, c->identity_token, c->registry_token};
        for (size_t i = 0; i < ARRAY_SIZE(secrets); i++) {
                if (secrets[i] != NULL) {
                        explicit_bzero(secrets[i], strlen(secrets[i]));
                        free(secrets[i]);
                }
        }
        free(c->key);
        memset(c, 0, sizeof(*c));
}

/* upstream DockerConfigEntry.UnmarshalJSON: username, password, and auth
 * (base64 "user:password", which wins); identitytoken and registrytoken
 * too, passed to the runtime as they are. */
static int parse_entry(json_t *entry, struct keyring_cred *c, ck_error_t *err)
{
        if (!json_is_object(entry))
                return ck_error_make(err, 0, "must be an object");
        const char *user, *pass, *auth, *idt, *regt;
        if (string_field(entry, "username", &user, err) < 0 ||
            string_field(entry, "password", &pass, err) < 0 ||
            string_field(entry, "auth", &auth, err) < 0 ||
            string_field(entry, "identitytoken", &idt, err) < 0 ||
            string_field(entry, "registrytoken", &regt, err) < 0)
                return -1;
        c->identity_token = dup_nonempty(idt);
        c->registry_token = dup_nonempty(regt);
        if (auth == NULL || auth[0] == '\0') {
                c->username = dup_nonempty(user);
                c->password = dup_nonempty(pass);
                return 0;
        }
        size_t alen = strlen(auth), dlen = 0;
        size_t tlen = alen;
        while (tlen > 0 && strchr(" \t\r\n", auth[tlen - 1]) != NULL)
                tlen--;
        bool padded = tlen > 0 && auth[tlen - 1] == '=';
        char *decoded = NULL;
        if (base64_decode(auth, alen, padded ? 0 : BASE64_RAW, &decoded, &dlen, err) < 0)
                return ck_error_wrap(err, "auth");
        char *sep = memchr(decoded, ':', dlen);
        if (sep == NULL) {
                explicit_bzero(decoded, dlen);
                free(decoded);
                return ck_error_make(err, 0,
                                     "unable to parse auth field, must be formatted as "
                                     "base64(username:password)");
        }
        *sep = '\0';
        c->username = dup_nonempty(decoded);
        c->password = dup_nonempty(sep + 1);
        explicit_bzero(decoded, dlen);
        free(decoded);
        return 0;
}

/* Adds the entries of a docker config map (registry -> entry). */
static int add_config(struct kuberuntime_keyring *k, json_t *auths, ck_error_t *err)
{
        if (auths == NULL || json_is_null(auths))
                return 0;
        if (!json_is_object(auths))
                return ck_error_make(err, 0, "the registry map must be an object");
        /* parse every entry first: a bad one rejects the whole config */
        size_t n0 = k->n;
        const char *loc;
        json_t *entry;
        json_object_foreach(auths, loc, entry)
        {
                struct keyring_cred c = {0};
                if (parse_entry(entry, &c, err) < 0) {
                        cred_clear(&c);
                        while (k->n > n0)
                                cred_clear(&k->creds[--k->n]);
                        return ck_error_wrap(err, "registry \"%s\"", loc);
                }
                c.key = registry_key(loc);
                if (c.key == NULL) {
                        LOG_ERROR("Entry in dockercfg invalid, ignoring", "entry=\"%s\"", loc);
                        cred_clear(&c);
                        continue;
                }
                c.seq = k->n;
                k->creds = xrealloc(k->creds, (k->n + 1) * sizeof(*k->creds));
                k->creds[k->n++] = c;
        }
        return 0;
}

/* Adds one docker config (the decoded secret value). */
static int add_docker_config(struct kuberuntime_keyring *k, const char *data, size_t len,
                             bool is_json_format, ck_error_t *err)
{
        json_error_t jerr;
        cleanup_json json_t *root = json_loadb(data, len, JSON_DECODE_ANY, &jerr);
        if (root == NULL)
                return ck_error_make(err, 0, "invalid JSON: %s", jerr.text);
        if (!json_is_object(root))
                return ck_error_make(err, 0, "must be a JSON object");
        return add_config(k, is_json_format ? field(root, "auths") : root, err);
}

/* upstream secretsToTrackedDockerConfigs for one secret: a
 * kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg secret with its
 * key present and not empty is read; any other secret is ignored. */
static int add_secret(struct kuberuntime_keyring *k, json_t *secret, ck_error_t *err)
{
        const char *type = json_string_value(json_object_get(secret, "type"));
        json_t *data = json_object_get(secret, "data");
        const char *key;
        bool json_format;
        if (type != NULL && strcmp(type, SECRET_TYPE_DOCKER_CONFIG_JSON) == 0) {
                key = SECRET_KEY_DOCKER_CONFIG_JSON;
                json_format = true;
        } else if (type != NULL && strcmp(type, SECRET_TYPE_DOCKERCFG) == 0) {
                key = SECRET_KEY_DOCKERCFG;
                json_format = false;
        } else {
                return 0;
        }
        json_t *v = json_object_get(data, key);
        const char *b64 = json_string_value(v);
        if (b64 == NULL || b64[0] == '\0')
                return 0;
        char *raw = NULL;
        size_t len = 0;
        if (base64_decode(b64, json_string_length(v), 0, &raw, &len, err) < 0)
                return ck_error_wrap(err, "%s", key);
        int r = add_docker_config(k, raw, len, json_format, err);
        explicit_bzero(raw, len);
        free(raw);
        if (r < 0)
                return ck_error_wrap(err, "%s", key);
        return 0;
}

static struct kuberuntime_keyring *keyring_from_secrets(json_t *const *secrets, size_t n)
{
        struct kuberuntime_keyring *k = xcalloc(1, sizeof(*k));
        for (size_t i = 0; i < n; i++) {
                cleanup_error ck_error_t err = NULL;
                if (add_secret(k, secrets[i], &err) == 0)
                        continue;
                json_t *md = json_object_get(secrets[i], "metadata");
                const char *ns = json_string_value(json_object_get(md, "namespace"));
                const char *name = json_string_value(json_object_get(md, "name"));
                ck_error_wrap(&err, "pull secret %s/%s", ns ? ns : "", name ? name : "");
                LOG_INFO(2, "Failed to read pull secret", "err=\"%s\"", ck_error_msg(err));
                if (k->error == NULL)
                        k->error = xstrdup(ck_error_msg(err));
        }
        return k;
}

struct kuberuntime_keyring *kuberuntime_pull_keyring_load(const struct kube_objects *kube,
                                                          struct event_recorder *recorder,
                                                          const struct pod *pod)
{
        const struct str_list *names = &pod->image_pull_secrets;
        if (names->n == 0)
                return NULL;
        json_t **secrets = xcalloc(names->n, sizeof(*secrets));
        size_t n = 0;
        cleanup_free char *failed = NULL;
        for (size_t i = 0; i < names->n; i++) {
                const char *name = names->items[i];
                if (name == NULL || name[0] == '\0')
                        continue; /* allowed by API validation: ignored upstream */
                cleanup_error ck_error_t err = NULL;
                json_t *secret = NULL;
                int r = kube != NULL ? kube->get(kube->opaque, "secrets", pod->namespace, name,
                                                 pod->uid, &secret, &err)
                                     : ck_error_make(&err, 0, "no apiserver (standalone mode)");
                if (r < 0) {
                        LOG_INFO(0,
                                 "Unable to retrieve pull secret, the image pull may not succeed.",
                                 "pod=\"%s/%s\" secret=\"%s/%s\" err=\"%s\"", pod->namespace,
                                 pod->name, pod->namespace, name, ck_error_msg(err));
                        char *f =
                            failed == NULL ? xstrdup(name) : xasprintf("%s, %s", failed, name);
                        free(failed);
                        failed = f;
                        continue;
                }
                secrets[n++] = secret;
        }
        if (failed != NULL)
                event_emit_pod(recorder, pod, NULL, EVENT_WARNING,
                               "FailedToRetrieveImagePullSecret",
                               "Unable to retrieve some image pull secrets (%s); attempting to "
                               "pull the image may not succeed.",
                               failed);
        struct kuberuntime_keyring *k = keyring_from_secrets(secrets, n);
        for (size_t i = 0; i < n; i++)
                json_decref(secrets[i]);
        free(secrets);
        return k;
}

void kuberuntime_keyring_free(struct kuberuntime_keyring *k)
{
        if (k == NULL)
                return;
        for (size_t i = 0; i < k->n; i++)
                cred_clear(&k->creds[i]);
        free(k->creds);
        free(k->error);
        free(k);
}

/* Most specific key first (reverse lexical), then the order of addition. */
static int cmp_specific_first(const void *a, const void *b)
{
        const struct keyring_cred *x = *(const struct keyring_cred *const *)a;
        const struct keyring_cred *y = *(const struct keyring_cred *const *)b;
        int c = strcmp(y->key, x->key);
        if (c != 0)
                return c;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static Runtime__V1__AuthConfig *auth_config(const struct keyring_cred *c)
{
        Runtime__V1__AuthConfig *a = xmalloc(sizeof(*a));
        runtime__v1__auth_config__init(a);
        if (c->username != NULL)
                a->username = xstrdup(c->username);
        if (c->password != NULL)
                a->password = xstrdup(c->password);
        if (c->identity_token != NULL)
                a->identity_token = xstrdup(c->identity_token);
        if (c->registry_token != NULL)
                a->registry_token = xstrdup(c->registry_token);
        return a;
}

int kuberuntime_keyring_lookup(const struct kuberuntime_keyring *k, const char *image,
                               Runtime__V1__AuthConfig ***out, size_t *n_out, ck_error_t *err)
{
        *out = NULL;
        *n_out = 0;
        if (k == NULL)
                return 0;
        if (k->error != NULL)
                return ck_error_make(err, 0, "%s", k->error);
        cleanup_free char *repo = image_repository(image);
        cleanup_free const struct keyring_cred **hits = xcalloc(k->n + 1, sizeof(*hits));
        size_t n = 0;
        for (size_t i = 0; i < k->n; i++)
                if (urls_match(k->creds[i].key, repo))
                        hits[n++] = &k->creds[i];
        if (n == 0 && is_default_registry_match(repo))
                for (size_t i = 0; i < k->n; i++)
                        if (strcmp(k->creds[i].key, DEFAULT_REGISTRY_HOST) == 0)
                                hits[n++] = &k->creds[i];
        if (n == 0)
                return 0;
        qsort(hits, n, sizeof(*hits), cmp_specific_first);
        Runtime__V1__AuthConfig **auths = xcalloc(n, sizeof(*auths));
        for (size_t i = 0; i < n; i++)
                auths[i] = auth_config(hits[i]);
        *out = auths;
        *n_out = n;
        return 0;
}

void kuberuntime_auths_free(Runtime__V1__AuthConfig **auths, size_t n)
{
        if (auths == NULL)
                return;
        for (size_t i = 0; i < n; i++) {
                Runtime__V1__AuthConfig *a = auths[i];
                char *secrets[] = {a->password, a->identity_token, a->registry_token};
                for (size_t j = 0; j < ARRAY_SIZE(secrets); j++)
                        if (secrets[j] != (char *)protobuf_c_empty_string)
                                explicit_bzero(secrets[j], strlen(secrets[j]));
                protobuf_c_message_free_unpacked(&a->base, NULL);
        }
        free(auths);
}
