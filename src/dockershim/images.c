/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI image service over the engine's images (dockershim_internal.h),
 * as cri-dockerd serves it: IDs are the engine's ("sha256:..."), the
 * sandbox image is pinned, a missing image is an empty ImageStatus.
 */
#include "cri.pb-c.h"
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "util/base64.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

/* The uid or the user name of an image's Config.User ("1000:1000",
 * "nobody", ""): the part before ':'. */
static void image_user(const char *user, Runtime__V1__Int64Value *uid, char **username,
                       bool *has_uid)
{
        *has_uid = false;
        *username = NULL;
        if (user == NULL || *user == '\0')
                return;
        size_t n = strcspn(user, ":");
        if (n == 0)
                return;
        cleanup_free char *name = xstrndup(user, n);
        char *end = NULL;
        long long v = strtoll(name, &end, 10);
        if (*end == '\0' && v >= 0) {
                uid->value = v;
                *has_uid = true;
                return;
        }
        *username = name;
        name = NULL;
}

/* One CRI Image of an engine image (fields borrowed from it, but the
 * username: malloc'ed into *username_out). */
static void to_cri_image(const struct dockershim *s, struct docker_image *d,
                         Runtime__V1__Image *img, Runtime__V1__Int64Value *uid, char **username_out)
{
        runtime__v1__image__init(img);
        runtime__v1__int64_value__init(uid);
        img->id = d->id;
        img->n_repo_tags = d->n_repo_tags;
        img->repo_tags = d->repo_tags;
        img->n_repo_digests = d->n_repo_digests;
        img->repo_digests = d->repo_digests;
        img->size = d->size > 0 ? (uint64_t)d->size : 0;
        for (size_t i = 0; i < d->n_repo_tags; i++)
                if (s->pod_infra_image && strcmp(d->repo_tags[i], s->pod_infra_image) == 0)
                        img->pinned = true;
        bool has_uid = false;
        image_user(d->user, uid, username_out, &has_uid);
        if (has_uid)
                img->uid = uid;
        if (*username_out)
                img->username = *username_out;
}

static int bad_request(ck_error_t *err, const char *what)
{
        return ck_error_make_code(err, GRPC_INVALID_ARGUMENT, "%s: the request does not decode",
                                  what);
}

int dockershim_list_images(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                           uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__ListImagesRequest *in =
            runtime__v1__list_images_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ListImages");
        const char *want = in->filter && in->filter->image && in->filter->image->image[0]
                               ? in->filter->image->image
                               : NULL;
        struct docker_image *v = NULL;
        size_t n = 0;
        int rc = 0;
        if (want) {
                /* one image: the engine resolves the reference */
                struct docker_image one;
                ck_error_t e = NULL;
                if (docker_image_inspect(s->docker, want, &one, &e) == 0) {
                        v = xcalloc(1, sizeof(*v));
                        v[0] = one;
                        n = 1;
                } else if (e->code == DOCKER_ERR_NOT_FOUND) {
                        ck_error_release(&e);
                } else {
                        *err = e;
                        rc = -1;
                }
        } else {
                rc = docker_image_list(s->docker, &v, &n, err);
        }
        runtime__v1__list_images_request__free_unpacked(in, NULL);
        if (rc < 0)
                return dockershim_fail(err);
        Runtime__V1__Image *imgs = xcalloc(n ? n : 1, sizeof(*imgs));
        Runtime__V1__Image **ptrs = xcalloc(n ? n : 1, sizeof(*ptrs));
        Runtime__V1__Int64Value *uids = xcalloc(n ? n : 1, sizeof(*uids));
        char **names = xcalloc(n ? n : 1, sizeof(*names));
        for (size_t i = 0; i < n; i++) {
                to_cri_image(s, &v[i], &imgs[i], &uids[i], &names[i]);
                ptrs[i] = &imgs[i];
        }
        Runtime__V1__ListImagesResponse r = RUNTIME__V1__LIST_IMAGES_RESPONSE__INIT;
        r.n_images = n;
        r.images = ptrs;
        dockershim_pack(&r.base, resp, resp_len);
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        free(uids);
        free(ptrs);
        free(imgs);
        docker_images_free(v, n);
        return 0;
}

int dockershim_image_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                            uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__ImageStatusRequest *in =
            runtime__v1__image_status_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ImageStatus");
        if (in->image == NULL || in->image->image[0] == '\0') {
                runtime__v1__image_status_request__free_unpacked(in, NULL);
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "ImageStatus: no image given");
        }
        struct docker_image d;
        ck_error_t e = NULL;
        int rc = docker_image_inspect(s->docker, in->image->image, &d, &e);
        runtime__v1__image_status_request__free_unpacked(in, NULL);
        Runtime__V1__ImageStatusResponse r = RUNTIME__V1__IMAGE_STATUS_RESPONSE__INIT;
        if (rc < 0 && e->code == DOCKER_ERR_NOT_FOUND) {
                /* no such image: an empty answer, as CRI says */
                ck_error_release(&e);
                dockershim_pack(&r.base, resp, resp_len);
                return 0;
        }
        if (rc < 0) {
                *err = e;
                return dockershim_fail(err);
        }
        Runtime__V1__Image img;
        Runtime__V1__Int64Value uid;
        cleanup_free char *username = NULL;
        to_cri_image(s, &d, &img, &uid, &username);
        r.image = &img;
        dockershim_pack(&r.base, resp, resp_len);
        docker_image_clear(&d);
        return 0;
}

char *dockershim_registry_auth(const char *username, const char *password, const char *auth,
                               const char *server_address, const char *identity_token,
                               const char *registry_token, ck_error_t *err)
{
        cleanup_free char *user = NULL, *pass = NULL;
        if ((username == NULL || *username == '\0') && auth && *auth) {
                cleanup_free char *plain = NULL;
                size_t n = 0;
                if (base64_decode(auth, strlen(auth), 0, &plain, &n, err) < 0)
                        return ck_error_wrap(err, "auth"), NULL;
                char *colon = memchr(plain, ':', n);
                if (colon == NULL)
                        return ck_error_make(err, 0, "auth: not user:password"), NULL;
                user = xstrndup(plain, (size_t)(colon - plain));
                pass = xstrdup(colon + 1);
                username = user;
                password = pass;
        }
        json_t *j = json_object();
        const char *keys[] = {"username", "password", "serveraddress", "identitytoken",
                              "registrytoken"};
        const char *vals[] = {username, password, server_address, identity_token, registry_token};
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                if (vals[i] && *vals[i])
                        json_object_set_new(j, keys[i], json_string(vals[i]));
        cleanup_free char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(j);
        size_t tl = strlen(text);
        char *out = xmalloc(4 * ((tl + 2) / 3) + 1);
        EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)text, (int)tl);
        /* the URL alphabet, padding kept (Go's base64.URLEncoding) */
        for (char *p = out; *p; p++)
                if (*p == '+')
                        *p = '-';
                else if (*p == '/')
                        *p = '_';
        return out;
}

int dockershim_pull_image(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                          uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        struct dockershim *s = ctx;
        Runtime__V1__PullImageRequest *in = runtime__v1__pull_image_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "PullImage");
        if (in->image == NULL || in->image->image[0] == '\0') {
                runtime__v1__pull_image_request__free_unpacked(in, NULL);
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT, "PullImage: no image given");
        }
        cleanup_free char *ref = xstrdup(in->image->image);
        const Runtime__V1__AuthConfig *a = in->auth;
        cleanup_free char *auth =
            a ? dockershim_registry_auth(a->username, a->password, a->auth, a->server_address,
                                         a->identity_token, a->registry_token, err)
              : dockershim_registry_auth(NULL, NULL, NULL, NULL, NULL, NULL, err);
        runtime__v1__pull_image_request__free_unpacked(in, NULL);
        if (auth == NULL) {
                (*err)->code = GRPC_INVALID_ARGUMENT;
                return ck_error_wrap(err, "PullImage `%s`", ref);
        }
        /* a pull has no deadline but the caller's */
        if (docker_image_pull(s->docker, ref, auth, timeout_ms, err) < 0)
                return dockershim_fail(err);
        struct docker_image d;
        if (docker_image_inspect(s->docker, ref, &d, err) < 0)
                return dockershim_fail(err);
        Runtime__V1__PullImageResponse r = RUNTIME__V1__PULL_IMAGE_RESPONSE__INIT;
        r.image_ref = d.n_repo_digests > 0 ? d.repo_digests[0] : d.id;
        dockershim_pack(&r.base, resp, resp_len);
        docker_image_clear(&d);
        return 0;
}

/* Removes name; gone already is fine. */
static int remove_name(struct dockershim *s, const char *name, ck_error_t *err)
{
        ck_error_t e = NULL;
        if (docker_image_remove(s->docker, name, false, &e) == 0)
                return 0;
        if (e->code == DOCKER_ERR_NOT_FOUND) {
                ck_error_release(&e);
                return 0;
        }
        *err = e;
        return -1;
}

int dockershim_remove_image(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                            uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__RemoveImageRequest *in =
            runtime__v1__remove_image_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "RemoveImage");
        cleanup_free char *ref = xstrdup(in->image ? in->image->image : "");
        runtime__v1__remove_image_request__free_unpacked(in, NULL);
        if (*ref == '\0')
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "RemoveImage: no image given");
        /* the image the reference names goes with all its names, as
         * containerd's CRI removes it; already gone: done */
        struct docker_image d;
        ck_error_t e = NULL;
        if (docker_image_inspect(s->docker, ref, &d, &e) < 0) {
                if (e->code == DOCKER_ERR_NOT_FOUND) {
                        ck_error_release(&e);
                        Runtime__V1__RemoveImageResponse r =
                            RUNTIME__V1__REMOVE_IMAGE_RESPONSE__INIT;
                        dockershim_pack(&r.base, resp, resp_len);
                        return 0;
                }
                *err = e;
                return dockershim_fail(err);
        }
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < d.n_repo_tags; i++)
                rc = remove_name(s, d.repo_tags[i], err);
        for (size_t i = 0; rc == 0 && i < d.n_repo_digests; i++)
                rc = remove_name(s, d.repo_digests[i], err);
        if (rc == 0)
                rc = remove_name(s, d.id, err);
        docker_image_clear(&d);
        if (rc < 0)
                return dockershim_fail(err);
        Runtime__V1__RemoveImageResponse r = RUNTIME__V1__REMOVE_IMAGE_RESPONSE__INIT;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}

int dockershim_image_fs_info(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                             uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)req;
        (void)len;
        (void)timeout_ms;
        struct dockershim *s = ctx;
        struct docker_image *v = NULL;
        size_t n = 0;
        if (docker_image_list(s->docker, &v, &n, err) < 0)
                return dockershim_fail(err);
        /* the images' sizes added up: a layer shared by two images counts
         * twice (API 1.41 has no SharedSize) */
        uint64_t used = 0;
        for (size_t i = 0; i < n; i++)
                used += v[i].size > 0 ? (uint64_t)v[i].size : 0;
        docker_images_free(v, n);
        struct statvfs fs;
        if (statvfs(s->docker_root_dir, &fs) < 0)
                return ck_error_make_code(err, GRPC_UNKNOWN, "statfs `%s`: %s", s->docker_root_dir,
                                          strerror(errno));
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        Runtime__V1__FilesystemIdentifier id = RUNTIME__V1__FILESYSTEM_IDENTIFIER__INIT;
        id.mountpoint = s->docker_root_dir;
        Runtime__V1__UInt64Value ub = RUNTIME__V1__UINT64_VALUE__INIT;
        Runtime__V1__UInt64Value iu = RUNTIME__V1__UINT64_VALUE__INIT;
        ub.value = used;
        iu.value = fs.f_files >= fs.f_ffree ? fs.f_files - fs.f_ffree : 0;
        Runtime__V1__FilesystemUsage u = RUNTIME__V1__FILESYSTEM_USAGE__INIT;
        u.timestamp = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
        u.fs_id = &id;
        u.used_bytes = &ub;
        u.inodes_used = &iu;
        Runtime__V1__FilesystemUsage *list[] = {&u};
        Runtime__V1__ImageFsInfoResponse r = RUNTIME__V1__IMAGE_FS_INFO_RESPONSE__INIT;
        r.n_image_filesystems = 1;
        r.image_filesystems = list;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}
