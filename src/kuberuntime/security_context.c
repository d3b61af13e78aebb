/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container's LinuxContainerSecurityContext (upstream
 * kuberuntime/security_context.go determineEffectiveSecurityContext,
 * pkg/securitycontext, helpers.go getSeccompProfile / getAppArmorProfile):
 * the pod's runAsUser / runAsGroup / runAsNonRoot overridden by the
 * container's, capabilities as given (runtimes add the CAP_ prefix),
 * seccomp Unconfined unless a profile is set (SeccompDefault is off by
 * default), upstream's default masked and read-only /proc paths unless
 * procMount is Unmasked.
 *
 * Fields the typed pod does not carry (seccompProfile, appArmorProfile,
 * procMount) are read from the pod's raw JSON.  Not supported: SELinux
 * options (no SELinux here), runAsUser from the image's user (the caller
 * knows the image; upstream fills it when the pod sets none).
 */
#include "kuberuntime/builders.h"
#include "kuberuntime/builders_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#define APPARMOR_ANNOTATION_PREFIX "container.apparmor.security.beta.kubernetes.io/"

static json_t *raw_container_sc(const struct pod *pod, const char *container_name)
{
        return json_object_get(kuberuntime__raw_container(pod, container_name), "securityContext");
}

static json_t *raw_pod_sc(const struct pod *pod)
{
        return kuberuntime__raw_spec(pod, "securityContext");
}

/* upstream fieldSeccompProfile (fallbackToRuntimeDefault false) */
static int seccomp_from_field(const struct kuberuntime_options *opts, json_t *profile,
                              Runtime__V1__SecurityProfile **out, ck_error_t *err)
{
        const char *type = json_string_value(json_object_get(profile, "type"));
        if (type != NULL && strcmp(type, "RuntimeDefault") == 0) {
                *out = kuberuntime__security_profile(
                    RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault, NULL);
                return 0;
        }
        if (type != NULL && strcmp(type, "Localhost") == 0) {
                const char *lp = json_string_value(json_object_get(profile, "localhostProfile"));
                if (lp == NULL || *lp == '\0')
                        return ck_error_make(
                            err, 0,
                            "localhostProfile must be set if seccompProfile type is Localhost.");
                char *path = xasprintf("%s/seccomp/%s", opts->root_dir, lp);
                *out = kuberuntime__security_profile(
                    RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Localhost, path);
                free(path);
                return 0;
        }
        *out = kuberuntime__security_profile(
            RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Unconfined, NULL);
        return 0;
}

int kuberuntime__seccomp_profile(const struct kuberuntime_options *opts, const struct pod *pod,
                                 const char *container_name,
                                 Runtime__V1__SecurityProfile__ProfileType fallback,
                                 Runtime__V1__SecurityProfile **out, ck_error_t *err)
{
        json_t *p = NULL;
        if (container_name != NULL)
                p = json_object_get(raw_container_sc(pod, container_name), "seccompProfile");
        if (!json_is_object(p))
                p = json_object_get(raw_pod_sc(pod), "seccompProfile");
        if (json_is_object(p))
                return seccomp_from_field(opts, p, out, err);
        *out = kuberuntime__security_profile(fallback, NULL);
        return 0;
}

/* upstream apparmor.GetProfile + getAppArmorProfile: NULL when unset. */
static int apparmor_profile(const struct pod *pod, const char *container_name,
                            Runtime__V1__SecurityProfile **out, ck_error_t *err)
{
        *out = NULL;
        const char *type = NULL, *localhost = NULL;
        json_t *p = json_object_get(raw_container_sc(pod, container_name), "appArmorProfile");
        char *key = xasprintf(APPARMOR_ANNOTATION_PREFIX "%s", container_name);
        const char *ann = kv_list_get(&pod->annotations, key);
        free(key);
        if (!json_is_object(p) && ann != NULL) {
                /* static pods may carry only the deprecated annotation */
                if (strcmp(ann, "runtime/default") == 0)
                        type = "RuntimeDefault";
                else if (strcmp(ann, "unconfined") == 0)
                        type = "Unconfined";
                else if (strncmp(ann, "localhost/", 10) == 0) {
                        type = "Localhost";
                        localhost = ann + 10;
                }
        }
        if (type == NULL) {
                if (!json_is_object(p))
                        p = json_object_get(raw_pod_sc(pod), "appArmorProfile");
                if (!json_is_object(p))
                        return 0;
                type = json_string_value(json_object_get(p, "type"));
                localhost = json_string_value(json_object_get(p, "localhostProfile"));
        }

        if (type != NULL && strcmp(type, "RuntimeDefault") == 0)
                *out = kuberuntime__security_profile(
                    RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault, NULL);
        else if (type != NULL && strcmp(type, "Unconfined") == 0)
                *out = kuberuntime__security_profile(
                    RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Unconfined, NULL);
        else if (type != NULL && strcmp(type, "Localhost") == 0) {
                if (localhost == NULL)
                        return ck_error_make(err, 0, "missing localhost apparmor profile name");
                *out = kuberuntime__security_profile(
                    RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Localhost, localhost);
        } else
                return ck_error_make(err, 0, "unknown apparmor profile type: \"%s\"",
                                     type ? type : "");
        return 0;
}

static void push_group(size_t *n, int64_t **arr, int64_t g)
{
        *arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
        (*arr)[(*n)++] = g;
}

static void push_paths(size_t *n, char ***arr, const char *const *paths)
{
        for (; *paths; paths++)
                kuberuntime__strv_push(n, arr, *paths);
}

Runtime__V1__SELinuxOption *kuberuntime__selinux_option(const json_t *o)
{
        if (!json_is_object(o))
                return NULL;
        Runtime__V1__SELinuxOption *se = xmalloc(sizeof(*se));
        runtime__v1__selinux_option__init(se);
        const char *v;
        se->user = xstrdup((v = json_string_value(json_object_get(o, "user"))) ? v : "");
        se->role = xstrdup((v = json_string_value(json_object_get(o, "role"))) ? v : "");
        se->type = xstrdup((v = json_string_value(json_object_get(o, "type"))) ? v : "");
        se->level = xstrdup((v = json_string_value(json_object_get(o, "level"))) ? v : "");
        return se;
}

bool kuberuntime_selinux_enabled(void)
{
        struct statfs st;
        if (statfs("/sys/fs/selinux", &st) < 0 || st.f_type != SELINUX_MAGIC)
                return false;
        char label[256] = "";
        FILE *f = fopen("/proc/self/attr/current", "re");
        if (f == NULL)
                return false;
        size_t n = fread(label, 1, sizeof(label) - 1, f);
        fclose(f);
        label[n] = '\0';
        label[strcspn(label, "\n")] = '\0';
        return strcmp(label, "kernel") != 0;
}

int kuberuntime__container_security_context(const struct kuberuntime_options *opts,
                                            const struct pod *pod, const struct container *c,
                                            Runtime__V1__LinuxContainerSecurityContext **out,
                                            ck_error_t *err)
{
        const struct security_context *csc = c->security_context;
        const struct pod_security_context *psc = &pod->security_context;

        Runtime__V1__LinuxContainerSecurityContext *sc = xmalloc(sizeof(*sc));
        runtime__v1__linux_container_security_context__init(sc);

        if (csc != NULL && csc->has_run_as_user)
                sc->run_as_user = kuberuntime__int64_value(csc->run_as_user);
        else if (psc->has_run_as_user)
                sc->run_as_user = kuberuntime__int64_value(psc->run_as_user);
        if (csc != NULL && csc->has_run_as_group)
                sc->run_as_group = kuberuntime__int64_value(csc->run_as_group);
        else if (psc->has_run_as_group)
                sc->run_as_group = kuberuntime__int64_value(psc->run_as_group);

        if (csc != NULL) {
                sc->privileged = csc->has_privileged && csc->privileged;
                sc->readonly_rootfs =
                    csc->has_read_only_root_filesystem && csc->read_only_root_filesystem;
                /* upstream AddNoNewPrivileges: only an explicit false sets it */
                sc->no_new_privs =
                    csc->has_allow_privilege_escalation && !csc->allow_privilege_escalation;
                if (csc->capabilities.add.n > 0 || csc->capabilities.drop.n > 0) {
                        Runtime__V1__Capability *cap = xmalloc(sizeof(*cap));
                        runtime__v1__capability__init(cap);
                        for (size_t i = 0; i < csc->capabilities.add.n; i++)
                                kuberuntime__strv_push(&cap->n_add_capabilities,
                                                       &cap->add_capabilities,
                                                       csc->capabilities.add.items[i]);
                        for (size_t i = 0; i < csc->capabilities.drop.n; i++)
                                kuberuntime__strv_push(&cap->n_drop_capabilities,
                                                       &cap->drop_capabilities,
                                                       csc->capabilities.drop.items[i]);
                        sc->capabilities = cap;
                }
        }

        if (kuberuntime__seccomp_profile(opts, pod, c->name,
                                         RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Unconfined,
                                         &sc->seccomp, err) < 0 ||
            apparmor_profile(pod, c->name, &sc->apparmor, err) < 0) {
                kuberuntime__message_free((ProtobufCMessage *)sc);
                return -1;
        }

        sc->namespace_options = kuberuntime__namespace_options(pod);
        if (kuberuntime__userns_options(opts, pod, &sc->namespace_options->userns_options, err) <
            0) {
                kuberuntime__message_free((ProtobufCMessage *)sc);
                return -1;
        }
        /* DetermineEffectiveSecurityContext: the container's options
         * replace the pod's whole */
        const json_t *se = json_object_get(raw_container_sc(pod, c->name), "seLinuxOptions");
        sc->selinux_options = kuberuntime__selinux_option(
            json_is_object(se) ? se : json_object_get(raw_pod_sc(pod), "seLinuxOptions"));
        if (psc->has_fs_group)
                push_group(&sc->n_supplemental_groups, &sc->supplemental_groups, psc->fs_group);
        for (size_t i = 0; i < psc->n_supplemental_groups; i++)
                push_group(&sc->n_supplemental_groups, &sc->supplemental_groups,
                           psc->supplemental_groups[i]);
        const char *policy =
            json_string_value(json_object_get(raw_pod_sc(pod), "supplementalGroupsPolicy"));
        if (policy != NULL && strcmp(policy, "Strict") == 0)
                sc->supplemental_groups_policy = RUNTIME__V1__SUPPLEMENTAL_GROUPS_POLICY__Strict;
        else if (policy != NULL && strcmp(policy, "Merge") != 0) {
                ck_error_make(err, 0, "unsupported supplementalGroupsPolicy: %s", policy);
                kuberuntime__message_free((ProtobufCMessage *)sc);
                return -1;
        }

        const char *proc_mount =
            json_string_value(json_object_get(raw_container_sc(pod, c->name), "procMount"));
        if (proc_mount == NULL || strcmp(proc_mount, "Unmasked") != 0) {
                push_paths(&sc->n_masked_paths, &sc->masked_paths,
                           kuberuntime__default_masked_paths());
                push_paths(&sc->n_readonly_paths, &sc->readonly_paths,
                           kuberuntime__default_readonly_paths());
        }
        *out = sc;
        return 0;
}

/* The effective runAsNonRoot and whether a runAsUser is set. */
static bool run_as_non_root(const struct pod *pod, const struct container *c, bool *has_user)
{
        const struct security_context *csc = c->security_context;
        const struct pod_security_context *psc = &pod->security_context;
        *has_user = (csc != NULL && csc->has_run_as_user) || psc->has_run_as_user;
        return csc != NULL && csc->has_run_as_non_root
                   ? csc->run_as_non_root
                   : psc->has_run_as_non_root && psc->run_as_non_root;
}

int kuberuntime__verify_run_as_non_root(const struct pod *pod, const struct container *c,
                                        ck_error_t *err)
{
        bool has_user = false;
        if (!run_as_non_root(pod, c, &has_user) || !has_user)
                return 0; /* without a runAsUser: kuberuntime_verify_image_user */
        const struct security_context *csc = c->security_context;
        int64_t user = csc != NULL && csc->has_run_as_user ? csc->run_as_user
                                                           : pod->security_context.run_as_user;
        if (user != 0)
                return 0;
        cleanup_free char *p = kuberuntime__format_pod(pod);
        return ck_error_make(err, 0,
                             "container's runAsUser breaks non-root policy (pod: \"%s\", "
                             "container: %s)",
                             p, c->name);
}

bool kuberuntime_needs_image_user(const struct pod *pod, const struct container *c)
{
        bool has_user = false;
        return run_as_non_root(pod, c, &has_user) && !has_user;
}

int kuberuntime_verify_image_user(const struct pod *pod, const struct container *c,
                                  const Runtime__V1__Image *image, ck_error_t *err)
{
        if (!kuberuntime_needs_image_user(pod, c))
                return 0;
        /* upstream getImageUser: the uid, else the user name, else root */
        bool has_uid = image == NULL || image->uid != NULL || image->username == NULL ||
                       image->username[0] == '\0';
        int64_t uid = image != NULL && image->uid != NULL ? image->uid->value : 0;
        cleanup_free char *p = kuberuntime__format_pod(pod);
        if (!has_uid)
                return ck_error_make(err, 0,
                                     "container has runAsNonRoot and image has non-numeric user "
                                     "(%s), cannot verify user is non-root (pod: \"%s\", "
                                     "container: %s)",
                                     image->username, p, c->name);
        if (uid == 0)
                return ck_error_make(err, 0,
                                     "container has runAsNonRoot and image will run as root (pod: "
                                     "\"%s\", container: %s)",
                                     p, c->name);
        if (uid < 0 || uid > INT32_MAX)
                return ck_error_make(err, 0,
                                     "container has runAsNonRoot and image has an invalid user id "
                                     "(%" PRId64 "). (Must be 1-(%d)): must be between 0 and %d, "
                                     "inclusive (pod: \"%s\", container: %s)",
                                     uid, INT32_MAX, INT32_MAX, p, c->name);
        return 0;
}
