/* SPDX-License-Identifier: Apache-2.0 */
/* TokenReview and SubjectAccessReview requests to the apiserver, with
 * upstream's webhook retries (k8s.io/apiserver/pkg/util/webhook). */
#include "server/auth_internal.h"

#include "client/rest.h"
#include "util/cleanup.h"
#include "util/sleep.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOKENREVIEWS_PATH "/apis/authentication.k8s.io/v1/tokenreviews"
#define SARS_PATH "/apis/authorization.k8s.io/v1/subjectaccessreviews"

/* Upstream's DefaultAuthWebhookRetryBackoff: 5 tries, 500 ms, x1.5, 20 % jitter. */
#define RETRY_STEPS 5
#define RETRY_INITIAL_MS 500

/* Upstream's DefaultShouldRetry: a broken connection, an InternalError
 * (500), a Timeout (504), TooManyRequests (429). */
static bool should_retry(ck_error_t e)
{
        return e->code == REST_ERR_TRANSPORT || e->code == 429 || e->code == 500 || e->code == 504;
}

/* POSTs body (JSON) to path, retrying as upstream's webhooks do. */
static int post_review(const struct server_auth_webhook *w, const char *path, const char *body,
                       json_t **out, ck_error_t *err)
{
        int64_t delay = w->retry_initial_ms == 0 ? RETRY_INITIAL_MS : w->retry_initial_ms;
        for (int step = 1;; step++) {
                struct rest_client *c = rest_pool_get(w->pool);
                int r = rest_request(c, "POST", path, NULL, "application/json", body, strlen(body),
                                     out, err);
                rest_pool_put(w->pool, c);
                if (r >= 0 || delay < 0 || step == RETRY_STEPS || !should_retry(*err))
                        return r < 0 ? -1 : 0;
                ck_error_release(err);
                /* random() is thread-safe in glibc; the jitter needs no quality */
                sleep_ms(delay + (int64_t)((double)delay * 0.2 * ((double)random() / RAND_MAX)));
                delay = delay * 3 / 2;
        }
}

int server_auth_token_review(const struct server_auth_webhook *w, const char *token, json_t **user,
                             ck_error_t *err)
{
        /* no spec.audiences: the kubelet's requests carry none (upstream
         * sends the audiences of the request context, empty here) */
        cleanup_json json_t *review =
            json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "authentication.k8s.io/v1", "kind",
                      "TokenReview", "spec", "token", token);
        cleanup_free char *body = review ? json_dumps(review, JSON_COMPACT) : NULL;
        if (body == NULL)
                return ck_error_make(err, 0, "POST %s: cannot encode the review",
                                     TOKENREVIEWS_PATH);
        cleanup_json json_t *resp = NULL;
        int r = post_review(w, TOKENREVIEWS_PATH, body, &resp, err);
        explicit_bzero(body, strlen(body));
        if (r < 0)
                return -1;
        json_t *status = json_object_get(resp, "status");
        if (!json_is_true(json_object_get(status, "authenticated"))) {
                const char *e = json_string_value(json_object_get(status, "error"));
                if (e && *e)
                        return ck_error_make(err, 0, "%s", e);
                *user = NULL;
                return 0;
        }
        json_t *u = json_object_get(status, "user");
        json_t *groups = json_object_get(u, "groups");
        json_t *extra = json_object_get(u, "extra");
        const char *name = json_string_value(json_object_get(u, "username"));
        const char *uid = json_string_value(json_object_get(u, "uid"));
        *user =
            json_pack("{s:s, s:s, s:o, s:o}", "username", name ? name : "", "uid", uid ? uid : "",
                      "groups", json_is_array(groups) ? json_incref(groups) : json_array(), "extra",
                      json_is_object(extra) ? json_incref(extra) : json_object());
        if (*user == NULL)
                return ck_error_make(err, 0, "POST %s: cannot read the review", TOKENREVIEWS_PATH);
        return 0;
}

int server_auth_subject_access_review(const struct server_auth_webhook *w, const json_t *spec,
                                      json_t **status, ck_error_t *err)
{
        cleanup_json json_t *review =
            json_pack("{s:s, s:s, s:O}", "apiVersion", "authorization.k8s.io/v1", "kind",
                      "SubjectAccessReview", "spec", spec);
        cleanup_free char *body = review ? json_dumps(review, JSON_COMPACT) : NULL;
        if (body == NULL)
                return ck_error_make(err, 0, "POST %s: cannot encode the review", SARS_PATH);
        cleanup_json json_t *resp = NULL;
        if (post_review(w, SARS_PATH, body, &resp, err) < 0)
                return -1;
        json_t *s = json_object_get(resp, "status");
        if (!json_is_object(s))
                return ck_error_make(err, 0, "POST %s: the answer has no status", SARS_PATH);
        *status = json_incref(s);
        return 0;
}
