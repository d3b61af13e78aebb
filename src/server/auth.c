/* SPDX-License-Identifier: Apache-2.0 */
/* Authentication and authorization of the kubelet API (server/auth.h). */
#include "server/auth.h"

#include "server/auth_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/strquote.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define USER_ANONYMOUS "system:anonymous"
#define GROUP_AUTHENTICATED "system:authenticated"
#define GROUP_UNAUTHENTICATED "system:unauthenticated"

/* Upstream's webhook authorizer does not cache the answer about attributes
 * this long (maxControlledAttrCacheSize). */
#define MAX_CACHED_ATTRIBUTES_SIZE 10000

struct server_auth {
        struct server_auth_options o; /* o.node_name: node_name */
        char *node_name;
        struct server_auth_webhook webhook;
        struct server_auth_cache *tokens;  /* token digest -> user, or false */
        struct server_auth_cache *reviews; /* review spec digest -> status */
};

int server_auth_new(const struct server_auth_options *o, struct server_auth **out, ck_error_t *err)
{
        if (o->node_name == NULL || *o->node_name == '\0')
                return ck_error_make(err, 0, "kubelet API auth: no node name");
        if (o->webhook_authn && o->pool == NULL)
                return ck_error_make(err, 0,
                                     "no client provided, cannot use webhook authentication");
        if (!o->x509 && !o->webhook_authn && !o->anonymous)
                return ck_error_make(err, 0, "no authentication method configured");
        if (o->authz_mode != SERVER_AUTHZ_ALWAYS_ALLOW && o->authz_mode != SERVER_AUTHZ_WEBHOOK)
                return ck_error_make(err, 0, "unknown authorization mode %d", (int)o->authz_mode);
        if (o->authz_mode == SERVER_AUTHZ_WEBHOOK && o->pool == NULL)
                return ck_error_make(err, 0,
                                     "no client provided, cannot use webhook authorization");
        struct server_auth *a = xcalloc(1, sizeof(*a));
        if (server_auth_cache_new(&a->tokens, err) < 0 ||
            server_auth_cache_new(&a->reviews, err) < 0) {
                server_auth_free(a);
                return ck_error_wrap(err, "kubelet API auth caches");
        }
        a->o = *o;
        a->node_name = xstrdup(o->node_name);
        a->o.node_name = a->node_name;
        a->webhook.pool = o->pool;
        a->webhook.retry_initial_ms = o->retry_initial_ms;
        *out = a;
        return 0;
}

void server_auth_free(struct server_auth *a)
{
        if (a == NULL)
                return;
        server_auth_cache_free(a->tokens);
        server_auth_cache_free(a->reviews);
        free(a->node_name);
        free(a);
}

void server_auth_result_release(struct server_auth_result *r)
{
        if (r == NULL)
                return;
        free(r->message);
        free(r->user);
        memset(r, 0, sizeof(*r));
}

/* A new user object {"username","uid","groups","extra"}, or NULL when the
 * name or a group is not UTF-8 (JSON cannot carry it). */
static json_t *user_new(const char *name, const char *const *groups)
{
        json_t *g = json_array();
        for (size_t i = 0; groups && groups[i]; i++) {
                if (json_array_append_new(g, json_string(groups[i])) < 0) {
                        json_decref(g);
                        return NULL;
                }
        }
        return json_pack("{s:s, s:s, s:o, s:o}", "username", name, "uid", "", "groups", g, "extra",
                         json_object());
}

/* Upstream's AuthenticatedGroupAdder. */
static void add_authenticated_group(json_t *user)
{
        if (strcmp(json_string_value(json_object_get(user, "username")), USER_ANONYMOUS) == 0)
                return;
        json_t *groups = json_object_get(user, "groups");
        size_t i;
        json_t *g;
        json_array_foreach(groups, i, g)
        {
                const char *s = json_string_value(g);
                if (s &&
                    (strcmp(s, GROUP_AUTHENTICATED) == 0 || strcmp(s, GROUP_UNAUTHENTICATED) == 0))
                        return;
        }
        json_array_append_new(groups, json_string(GROUP_AUTHENTICATED));
}

char *server_auth_bearer_token(const char *authorization)
{
        if (authorization == NULL)
                return NULL;
        const char *s = authorization;
        while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
                s++;
        const char *end = s + strlen(s);
        while (end > s && (end[-1] == ' ' || (end[-1] >= '\t' && end[-1] <= '\r')))
                end--;
        const char *sp = memchr(s, ' ', (size_t)(end - s));
        if (sp == NULL || sp - s != 6 || strncasecmp(s, "bearer", 6) != 0)
                return NULL;
        const char *tok = sp + 1;
        const char *tok_end = memchr(tok, ' ', (size_t)(end - tok));
        if (tok_end == NULL)
                tok_end = end;
        if (tok_end == tok)
                return NULL;
        return xstrndup(tok, (size_t)(tok_end - tok));
}

static void free_secret(char *s)
{
        if (s) {
                explicit_bzero(s, strlen(s));
                free(s);
        }
}

/* The user of a bearer token: 1 with *user set, else -1 (the apiserver's
 * error, or "invalid bearer token").  Answers are cached, errors are not. */
static int authenticate_token(struct server_auth *a, const char *token, json_t **user,
                              ck_error_t *err)
{
        unsigned char key[SERVER_AUTH_KEY_LEN];
        server_auth_cache_key(a->tokens, token, strlen(token), key);
        int64_t now = fs_now_mono_ms();
        cleanup_json json_t *cached = server_auth_cache_get(a->tokens, key, now);
        json_t *u = NULL;
        if (cached) {
                u = json_is_object(cached) ? json_incref(cached) : NULL;
        } else {
                if (server_auth_token_review(&a->webhook, token, &u, err) < 0)
                        return -1;
                cleanup_json json_t *value = u ? json_incref(u) : json_false();
                server_auth_cache_put(a->tokens, key, value, now, a->o.authn_cache_ttl_ms);
        }
        if (u == NULL)
                return ck_error_make(err, 0, "invalid bearer token");
        add_authenticated_group(u);
        *user = u;
        return 1;
}

/* The error of upstream's union when no authenticator succeeded:
 * utilerrors.NewAggregate ("e" or "[e1, e2]").  Takes both. */
static int aggregate(ck_error_t *err, ck_error_t first, ck_error_t second)
{
        if (first && second)
                ck_error_make(err, 0, "[%s, %s]", ck_error_msg(first), ck_error_msg(second));
        else
                ck_error_make(err, 0, "%s", ck_error_msg(first ? first : second));
        ck_error_release(&first);
        ck_error_release(&second);
        return -1;
}

/* Upstream's union: x509, then the bearer token (an error of one does not
 * stop the other), then anonymous unless one of them failed.  1 with a new
 * *user, 0 when nothing identifies the request, -1 on an error. */
static int authenticate(struct server_auth *a, const struct server_auth_request *req, json_t **user,
                        ck_error_t *err)
{
        ck_error_t cert_err = NULL, token_err = NULL;
        if (a->o.x509 && req->peer_verify_error) {
                ck_error_make(&cert_err, 0, "verifying certificate failed: %s",
                              req->peer_verify_error);
        } else if (a->o.x509 && req->peer_cn && *req->peer_cn) {
                *user = user_new(req->peer_cn, req->peer_orgs);
                if (*user != NULL) {
                        add_authenticated_group(*user);
                        return 1;
                }
                /* Go's x509 parser refuses such a certificate: not anonymous */
                ck_error_make(&cert_err, 0,
                              "verifying certificate failed: its subject is not valid UTF-8");
        }
        char *token = a->o.webhook_authn ? server_auth_bearer_token(req->authorization) : NULL;
        if (token) {
                int r = authenticate_token(a, token, user, &token_err);
                free_secret(token);
                if (r > 0) {
                        ck_error_release(&cert_err);
                        return 1;
                }
        }
        if (cert_err || token_err)
                return aggregate(err, cert_err, token_err);
        if (a->o.anonymous) {
                static const char *const groups[] = {GROUP_UNAUTHENTICATED, NULL};
                *user = user_new(USER_ANONYMOUS, groups);
                return 1;
        }
        return 0;
}

/* The spec of a SubjectAccessReview of user doing verb on the node's
 * subresource (empty fields left out, as upstream's omitempty). */
static json_t *review_spec(const struct server_auth *a, const json_t *user, const char *verb,
                           const char *subresource)
{
        json_t *attrs = json_pack("{s:s, s:s, s:s, s:s}", "version", "v1", "resource", "nodes",
                                  "subresource", subresource, "name", a->node_name);
        if (*verb)
                json_object_set_new(attrs, "verb", json_string(verb));
        json_t *spec = json_pack("{s:o}", "resourceAttributes", attrs);
        const char *name = json_string_value(json_object_get(user, "username"));
        const char *uid = json_string_value(json_object_get(user, "uid"));
        json_t *groups = json_object_get(user, "groups");
        json_t *extra = json_object_get(user, "extra");
        if (name && *name)
                json_object_set_new(spec, "user", json_string(name));
        if (json_array_size(groups) > 0)
                json_object_set(spec, "groups", groups);
        if (uid && *uid)
                json_object_set_new(spec, "uid", json_string(uid));
        if (json_object_size(extra) > 0)
                json_object_set(spec, "extra", extra);
        return spec;
}

/* Whether the apiserver allows user verb on subresource: 1 yes, 0 no (denied
 * or no opinion), -1 on an error.  Answers are cached as upstream's. */
static int authorize_webhook(struct server_auth *a, const json_t *user, const char *verb,
                             const char *subresource, const char *path, ck_error_t *err)
{
        cleanup_json json_t *spec = review_spec(a, user, verb, subresource);
        cleanup_free char *canon = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
        if (canon == NULL)
                return ck_error_make(err, 0, "cannot encode the SubjectAccessReview");
        unsigned char key[SERVER_AUTH_KEY_LEN];
        server_auth_cache_key(a->reviews, canon, strlen(canon), key);
        int64_t now = fs_now_mono_ms();
        cleanup_json json_t *status = server_auth_cache_get(a->reviews, key, now);
        bool cached = status != NULL;
        if (!cached && server_auth_subject_access_review(&a->webhook, spec, &status, err) < 0)
                return -1;
        bool allowed = json_is_true(json_object_get(status, "allowed"));
        bool denied = json_is_true(json_object_get(status, "denied"));
        size_t attrs_size = strlen(verb) + strlen("v1") + strlen("nodes") + strlen(subresource) +
                            strlen(a->node_name) + strlen(path);
        if (!cached && attrs_size < MAX_CACHED_ATTRIBUTES_SIZE)
                server_auth_cache_put(a->reviews, key, status, now,
                                      allowed ? a->o.authz_allowed_ttl_ms
                                              : a->o.authz_denied_ttl_ms);
        if (allowed && denied)
                return ck_error_make(
                    err, 0, "webhook subject access review returned both allow and deny response");
        return allowed ? 1 : 0;
}

static void unauthorized(struct server_auth_result *out)
{
        out->status = 401;
        out->message = xstrdup("Unauthorized");
}

void server_auth_check_request(struct server_auth *a, const struct server_auth_request *req,
                               struct server_auth_result *out)
{
        const char *method = req->method, *path = req->path;
        memset(out, 0, sizeof(*out));
        cleanup_error ck_error_t err = NULL;
        cleanup_json json_t *user = NULL;
        int r = authenticate(a, req, &user, &err);
        if (r <= 0) {
                if (r < 0) {
                        cleanup_free char *qpath = str_go_quote(path, strlen(path));
                        LOG_ERROR("Unable to authenticate the request due to an error",
                                  "method=\"%s\" path=%s err=\"%s\"", method, qpath,
                                  ck_error_msg(err));
                }
                unauthorized(out);
                return;
        }
        const char *name = json_string_value(json_object_get(user, "username"));
        out->user = xstrdup(name);
        if (a->o.authz_mode == SERVER_AUTHZ_ALWAYS_ALLOW)
                return;

        const char *verb = server_auth_verb(method);
        const char *subs[2];
        size_t n = server_auth_subresources(path, subs);
        for (size_t i = 0; i < n; i++) {
                r = authorize_webhook(a, user, verb, subs[i], path, &err);
                if (r > 0)
                        return;
                if (r < 0) {
                        cleanup_free char *quser = str_go_quote(name, strlen(name));
                        LOG_ERROR("Authorization error",
                                  "user=%s verb=\"%s\" "
                                  "resource=\"nodes\" subresource=\"%s\" err=\"%s\"",
                                  quser, verb, subs[i], ck_error_msg(err));
                        out->status = 500;
                        out->message = xasprintf("Authorization error (user=%s, verb=%s, "
                                                 "resource=nodes, subresource=%s)",
                                                 name, verb, subs[i]);
                        return;
                }
        }
        /* upstream formats the list with %v: [pods proxy] */
        cleanup_free char *list = n == 2 ? xasprintf("%s %s", subs[0], subs[1]) : xstrdup(subs[0]);
        cleanup_free char *quser = str_go_quote(name, strlen(name));
        LOG_INFO(2, "Forbidden", "user=%s verb=\"%s\" resource=\"nodes\" subresource(s)=[%s]",
                 quser, verb, list);
        out->status = 403;
        out->message =
            xasprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource(s)=[%s])\n", name,
                      verb, list);
}
