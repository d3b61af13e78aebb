/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One container: decoding, SetDefaults_Container (pull policy from the tag,
 * termination message path and policy, port protocol), and
 * validateContainerCommon plus the init/regular specific checks, in
 * upstream's order.
 */
#include "api/api_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char INCLUSIVE_PORT[] = "must be between 1 and 65535, inclusive";
static const char UID_RANGE[] = "must be between 0 and 2147483647, inclusive";

static bool vec_has(const struct str_vec *v, const char *s)
{
        for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->items[i], s) == 0)
                        return true;
        return false;
}

void str_vec_add(struct str_vec *v, const char *s)
{
        if (v->n == v->cap) {
                v->cap = v->cap ? v->cap * 2 : 8;
                v->items = xrealloc(v->items, v->cap * sizeof(*v->items));
        }
        v->items[v->n++] = xstrdup(s);
}

void str_vec_release(struct str_vec *v)
{
        for (size_t i = 0; i < v->n; i++)
                free(v->items[i]);
        free(v->items);
        *v = (struct str_vec){0};
}

/* ---- image references (parsers.ParseImageName) ---- */

static bool ref_component(const char *s, size_t n)
{
        /* [a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)* */
        if (n == 0 || (!islower((unsigned char)s[0]) && !isdigit((unsigned char)s[0])))
                return false;
        size_t i = 0;
        while (i < n) {
                while (i < n && (islower((unsigned char)s[i]) || isdigit((unsigned char)s[i])))
                        i++;
                if (i == n)
                        return true;
                size_t sep = i;
                if (s[i] == '.' || s[i] == '_') {
                        i++;
                        if (i < n && s[i - 1] == '_' && s[i] == '_')
                                i++;
                } else if (s[i] == '-') {
                        while (i < n && s[i] == '-')
                                i++;
                } else {
                        return false;
                }
                if (i == n || i == sep ||
                    !(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i])))
                        return false;
        }
        return true;
}

static bool ref_domain(const char *s, size_t n)
{
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && !strchr(".-:[]", s[i]))
                        return false;
        return true;
}

/* The tag of an image reference; "latest" when it has neither tag nor
 * digest; "" when the reference does not parse (pull policy IfNotPresent). */
static const char *image_tag(const char *image, char *buf, size_t size)
{
        buf[0] = '\0';
        if (image == NULL || image[0] == '\0' || strlen(image) >= size)
                return buf;
        char name[512];
        snprintf(name, sizeof(name), "%s", image);
        bool digest = false;
        char *at = strchr(name, '@');
        if (at) {
                *at = '\0';
                const char *dg = at + 1;
                const char *colon = strchr(dg, ':');
                if (colon == NULL || colon == dg || strlen(colon + 1) < 32)
                        return buf;
                for (const char *p = colon + 1; *p; p++)
                        if (!isxdigit((unsigned char)*p))
                                return buf;
                digest = true;
        }
        char *slash = strrchr(name, '/');
        char *colon = strrchr(name, ':');
        const char *tag = NULL;
        if (colon && (slash == NULL || colon > slash)) {
                *colon = '\0';
                tag = colon + 1;
                size_t tn = strlen(tag);
                if (tn == 0 || tn > 128 || !(isalnum((unsigned char)tag[0]) || tag[0] == '_'))
                        return buf;
                for (const char *p = tag; *p; p++)
                        if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
                                return buf;
        }
        if (strlen(name) > 255)
                return buf;
        /* [domain/]component(/component)* */
        char *p = name;
        char *first = strchr(p, '/');
        if (first) {
                size_t dn = (size_t)(first - p);
                bool is_domain = memchr(p, '.', dn) || memchr(p, ':', dn) ||
                                 (dn == 9 && strncmp(p, "localhost", 9) == 0);
                for (size_t i = 0; i < dn && !is_domain; i++)
                        if (isupper((unsigned char)p[i]))
                                is_domain = true;
                if (is_domain) {
                        if (!ref_domain(p, dn))
                                return buf;
                        p = first + 1;
                }
        }
        for (;;) {
                char *s = strchr(p, '/');
                size_t n = s ? (size_t)(s - p) : strlen(p);
                if (!ref_component(p, n))
                        return buf;
                if (!s)
                        break;
                p = s + 1;
        }
        if (tag)
                snprintf(buf, size, "%s", tag);
        else if (!digest)
                snprintf(buf, size, "latest");
        return buf;
}

/* ---- pieces ---- */

static void decode_ports(struct dctx *d, json_t *c, const char *path, bool host_network,
                         struct container *out)
{
        json_t *ports = get_array(d, c, path, "ports");
        if (ports == NULL)
                return;
        cleanup_free char *pp = path_child(path, "ports");
        out->ports = xcalloc(json_array_size(ports) + 1, sizeof(*out->ports));
        struct str_vec names = {0};
        size_t i;
        json_t *po;
        json_array_foreach(ports, i, po)
        {
                cleanup_free char *ip = path_index(pp, i);
                if (!json_is_object(po)) {
                        ferr_type(d, ip, po, "an object");
                        continue;
                }
                struct container_port *p = &out->ports[out->n_ports++];
                set_default_string(po, "protocol", "TCP");
                get_string(d, po, ip, "name", &p->name);
                get_int32(d, po, ip, "containerPort", &p->container_port);
                get_int32(d, po, ip, "hostPort", &p->host_port);
                get_string(d, po, ip, "protocol", &p->protocol);
                get_string(d, po, ip, "hostIP", &p->host_ip);
                if (host_network && p->host_port == 0) { /* defaultHostNetworkPorts */
                        p->host_port = p->container_port;
                        json_object_set_new(po, "hostPort", json_integer(p->host_port));
                }

                if (p->name && p->name[0]) {
                        cleanup_free char *np = path_child(ip, "name");
                        size_t before = d->errors.n;
                        validate_port_name(d, np, p->name);
                        if (d->errors.n == before) {
                                if (vec_has(&names, p->name))
                                        ferr_duplicate(d, np, p->name);
                                else
                                        str_vec_add(&names, p->name);
                        }
                }
                cleanup_free char *cp = path_child(ip, "containerPort");
                if (p->container_port == 0)
                        ferr_required(d, cp, "");
                else if (p->container_port < 1 || p->container_port > 65535)
                        ferr_invalid_int(d, cp, p->container_port, INCLUSIVE_PORT);
                if (p->host_port != 0 && (p->host_port < 1 || p->host_port > 65535)) {
                        cleanup_free char *hp = path_child(ip, "hostPort");
                        ferr_invalid_int(d, hp, p->host_port, INCLUSIVE_PORT);
                }
                cleanup_free char *prp = path_child(ip, "protocol");
                static const char *const protocols[] = {"SCTP", "TCP", "UDP", NULL};
                if (p->protocol == NULL || p->protocol[0] == '\0')
                        ferr_required(d, prp, "");
                else if (!str_eq(p->protocol, "TCP") && !str_eq(p->protocol, "UDP") &&
                         !str_eq(p->protocol, "SCTP"))
                        ferr_not_supported(d, prp, p->protocol, protocols);
        }
        str_vec_release(&names);
}

static bool has_backstep(const char *p)
{
        for (const char *s = p; s;) {
                const char *slash = strchr(s, '/');
                size_t n = slash ? (size_t)(slash - s) : strlen(s);
                if (n == 2 && s[0] == '.' && s[1] == '.')
                        return true;
                s = slash ? slash + 1 : NULL;
        }
        return false;
}

static void decode_volume_mounts(struct dctx *d, json_t *c, const char *path,
                                 const struct container_ctx *cc, struct container *out)
{
        json_t *arr = get_array(d, c, path, "volumeMounts");
        if (arr == NULL)
                return;
        cleanup_free char *mp = path_child(path, "volumeMounts");
        out->volume_mounts = xcalloc(json_array_size(arr) + 1, sizeof(*out->volume_mounts));
        struct str_vec seen = {0};
        size_t i;
        json_t *mo;
        json_array_foreach(arr, i, mo)
        {
                cleanup_free char *ip = path_index(mp, i);
                if (!json_is_object(mo)) {
                        ferr_type(d, ip, mo, "an object");
                        continue;
                }
                struct volume_mount *m = &out->volume_mounts[out->n_volume_mounts++];
                get_string(d, mo, ip, "name", &m->name);
                get_string(d, mo, ip, "mountPath", &m->mount_path);
                get_string(d, mo, ip, "subPath", &m->sub_path);
                get_bool(d, mo, ip, "readOnly", &m->read_only);
                get_string(d, mo, ip, "mountPropagation", &m->mount_propagation);
                get_string(d, mo, ip, "recursiveReadOnly", &m->recursive_read_only);
                cleanup_free char *sub_path_expr = NULL;
                get_string(d, mo, ip, "subPathExpr", &sub_path_expr);
                if (m->name == NULL)
                        m->name = xstrdup("");
                if (m->mount_path == NULL)
                        m->mount_path = xstrdup("");

                cleanup_free char *np = path_child(ip, "name");
                if (m->name[0] == '\0')
                        ferr_required(d, np, "");
                if (!vec_has(cc->volumes, m->name))
                        ferr_not_found(d, np, m->name);
                cleanup_free char *pp = path_child(ip, "mountPath");
                if (m->mount_path[0] == '\0')
                        ferr_required(d, pp, "");
                if (vec_has(&seen, m->mount_path))
                        ferr_invalid(d, pp, m->mount_path, "must be unique");
                str_vec_add(&seen, m->mount_path);
                /* upstream reports these on volumeMounts.subPath, without the index */
                if (m->sub_path && m->sub_path[0]) {
                        cleanup_free char *sp = path_child(mp, "subPath");
                        if (m->sub_path[0] == '/')
                                ferr_invalid(d, sp, m->sub_path, "must be a relative path");
                        if (has_backstep(m->sub_path))
                                ferr_invalid(d, sp, m->sub_path, "must not contain '..'");
                }
                if (sub_path_expr && sub_path_expr[0]) {
                        cleanup_free char *xp = path_child(ip, "subPathExpr");
                        if (m->sub_path && m->sub_path[0])
                                ferr_invalid(d, xp, sub_path_expr,
                                             "subPathExpr and subPath are mutually exclusive");
                }
                if (m->mount_propagation) {
                        static const char *const modes[] = {"Bidirectional", "HostToContainer",
                                                            "None", NULL};
                        cleanup_free char *pp2 = path_child(mp, "mountPropagation");
                        bool ok = false;
                        for (const char *const *p = modes; *p; p++)
                                ok |= strcmp(*p, m->mount_propagation) == 0;
                        if (!ok)
                                ferr_not_supported(d, pp2, m->mount_propagation, modes);
                        bool privileged = out->security_context &&
                                          out->security_context->has_privileged &&
                                          out->security_context->privileged;
                        if (strcmp(m->mount_propagation, "Bidirectional") == 0 && !privileged)
                                ferr_forbidden(d, pp2,
                                               "Bidirectional mount propagation is available only "
                                               "to privileged containers");
                }
                /* upstream validateMountRecursiveReadOnly */
                if (m->recursive_read_only && strcmp(m->recursive_read_only, "Disabled") != 0) {
                        static const char *const rro[] = {"Disabled", "Enabled", "IfPossible",
                                                          NULL};
                        cleanup_free char *rp = path_child(ip, "recursiveReadOnly");
                        if (strcmp(m->recursive_read_only, "Enabled") != 0 &&
                            strcmp(m->recursive_read_only, "IfPossible") != 0) {
                                ferr_not_supported(d, rp, m->recursive_read_only, rro);
                        } else {
                                if (!m->read_only)
                                        ferr_forbidden(d, rp,
                                                       "may only be specified when readOnly is "
                                                       "true");
                                if (m->mount_propagation &&
                                    strcmp(m->mount_propagation, "None") != 0)
                                        ferr_forbidden(d, rp,
                                                       "may only be specified when "
                                                       "mountPropagation is None or not "
                                                       "specified");
                        }
                }
        }
        str_vec_release(&seen);
}

static void decode_security_context(struct dctx *d, json_t *c, const char *path,
                                    struct container *out)
{
        json_t *o = get_object(d, c, path, "securityContext");
        if (o == NULL)
                return;
        cleanup_free char *sp = path_child(path, "securityContext");
        struct security_context *sc = out->security_context = xcalloc(1, sizeof(*sc));
        sc->has_run_as_user = get_int(d, o, sp, "runAsUser", 64, &sc->run_as_user);
        sc->has_run_as_group = get_int(d, o, sp, "runAsGroup", 64, &sc->run_as_group);
        sc->has_run_as_non_root = get_bool(d, o, sp, "runAsNonRoot", &sc->run_as_non_root);
        sc->has_privileged = get_bool(d, o, sp, "privileged", &sc->privileged);
        sc->has_read_only_root_filesystem =
            get_bool(d, o, sp, "readOnlyRootFilesystem", &sc->read_only_root_filesystem);
        sc->has_allow_privilege_escalation =
            get_bool(d, o, sp, "allowPrivilegeEscalation", &sc->allow_privilege_escalation);
        json_t *caps = get_object(d, o, sp, "capabilities");
        if (caps) {
                cleanup_free char *cp = path_child(sp, "capabilities");
                get_str_list(d, caps, cp, "add", &sc->capabilities.add);
                get_str_list(d, caps, cp, "drop", &sc->capabilities.drop);
        }
}

static void validate_security_context(struct dctx *d, json_t *c, const char *path,
                                      const struct security_context *sc)
{
        if (sc == NULL)
                return;
        cleanup_free char *sp = path_child(path, "securityContext");
        if (sc->has_run_as_user && (sc->run_as_user < 0 || sc->run_as_user > INT32_MAX)) {
                cleanup_free char *p = path_child(sp, "runAsUser");
                ferr_invalid_int(d, p, sc->run_as_user, UID_RANGE);
        }
        if (sc->has_run_as_group && (sc->run_as_group < 0 || sc->run_as_group > INT32_MAX)) {
                cleanup_free char *p = path_child(sp, "runAsGroup");
                ferr_invalid_int(d, p, sc->run_as_group, UID_RANGE);
        }
        if (sc->has_allow_privilege_escalation && !sc->allow_privilege_escalation) {
                cleanup_free char *bad = json_bad_value(json_object_get(c, "securityContext"));
                if (sc->has_privileged && sc->privileged)
                        ferr(d, sp,
                             "Invalid value: %s: cannot set `allowPrivilegeEscalation` to false "
                             "and `privileged` to true",
                             bad);
                for (size_t i = 0; i < sc->capabilities.add.n; i++)
                        if (strcmp(sc->capabilities.add.items[i], "CAP_SYS_ADMIN") == 0)
                                ferr(d, sp,
                                     "Invalid value: %s: cannot set `allowPrivilegeEscalation` to "
                                     "false and `capabilities.Add` CAP_SYS_ADMIN",
                                     bad);
        }
}

/* Decodes probes and lifecycle; when forbidden (a regular init container)
 * only the Forbidden error is reported, as upstream does. */
static void decode_hooks(struct dctx *d, json_t *c, const char *path, bool allowed,
                         struct container *out)
{
        static const struct {
                const char *key;
                enum probe_type type;
        } probes[] = {{"livenessProbe", PROBE_LIVENESS},
                      {"readinessProbe", PROBE_READINESS},
                      {"startupProbe", PROBE_STARTUP}};
        struct dctx scratch = {.has_grace = d->has_grace, .grace = d->grace, .os_name = d->os_name};
        struct dctx *vd = allowed ? d : &scratch;

        json_t *lc = get_object(d, c, path, "lifecycle");
        cleanup_free char *lp = path_child(path, "lifecycle");
        if (lc) {
                if (!allowed)
                        ferr_forbidden(d, lp,
                                       "may not be set for init containers without "
                                       "restartPolicy=Always");
                decode_lifecycle(vd, lc, lp, out);
        }
        struct probe **slots[] = {&out->liveness_probe, &out->readiness_probe, &out->startup_probe};
        for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
                json_t *po = get_object(d, c, path, probes[i].key);
                if (po == NULL)
                        continue;
                cleanup_free char *pp = path_child(path, probes[i].key);
                if (!allowed)
                        ferr_forbidden(d, pp,
                                       "may not be set for init containers without "
                                       "restartPolicy=Always");
                *slots[i] = decode_probe(vd, po, pp, probes[i].type);
        }
        /* type errors always count */
        for (size_t i = 0; i < scratch.type_errors.n; i++)
                str_vec_add(&d->type_errors, scratch.type_errors.items[i]);
        dctx_release(&scratch);
}

/* Whether field `key` of a container is set as validateFieldAllowList sees
 * it (not equal to Go's zero value): pointers and slices once present and not
 * null (an empty list counts), the resources struct once it has a member
 * that is not null (the apiserver sends an ephemeral container's unset
 * resources as {}). */
static bool container_field_set(const char *key, const json_t *v)
{
        if (v == NULL || json_is_null(v))
                return false;
        if (strcmp(key, "resources") != 0 || !json_is_object(v))
                return true;
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e)
        {
                if (!json_is_null(e))
                        return true;
        }
        return false;
}

/* restartPolicyRules (upstream validateContainerRestartPolicy, with
 * ContainerRestartRules on and RestartAllContainers off, their 1.35
 * defaults): at most 20, each action Restart and exitCodes with operator
 * In or NotIn and at most 255 values. */
static void decode_restart_rules(struct dctx *d, json_t *c, const char *path, struct container *out)
{
        json_t *rules = get_array(d, c, path, "restartPolicyRules");
        if (rules == NULL)
                return;
        cleanup_free char *rp = path_child(path, "restartPolicyRules");
        if (json_array_size(rules) > 20)
                ferr(d, rp, "Too long: must have at most 20 items");
        out->restart_rules = xcalloc(json_array_size(rules) + 1, sizeof(*out->restart_rules));
        size_t i;
        json_t *ro;
        json_array_foreach(rules, i, ro)
        {
                cleanup_free char *ip = path_index(rp, i);
                if (!json_is_object(ro)) {
                        ferr_type(d, ip, ro, "an object");
                        continue;
                }
                struct container_restart_rule *r = &out->restart_rules[out->n_restart_rules++];
                cleanup_free char *action = NULL;
                get_string(d, ro, ip, "action", &action);
                if (action == NULL || strcmp(action, "Restart") != 0) {
                        static const char *const actions[] = {"Restart", NULL};
                        cleanup_free char *ap = path_child(ip, "action");
                        ferr_not_supported(d, ap, action ? action : "", actions);
                }
                cleanup_free char *ep = path_child(ip, "exitCodes");
                json_t *ec = get_object(d, ro, ip, "exitCodes");
                if (ec == NULL) {
                        if (json_object_get(ro, "exitCodes") == NULL ||
                            json_is_null(json_object_get(ro, "exitCodes")))
                                ferr_required(d, ep, "must be specified");
                        continue;
                }
                cleanup_free char *op = NULL;
                get_string(d, ec, ep, "operator", &op);
                if (op != NULL && strcmp(op, "In") == 0) {
                        r->exit_codes_in = true;
                } else if (op == NULL || strcmp(op, "NotIn") != 0) {
                        static const char *const ops[] = {"In", "NotIn", NULL};
                        cleanup_free char *opp = path_child(ep, "operator");
                        ferr_not_supported(d, opp, op ? op : "", ops);
                }
                json_t *values = get_array(d, ec, ep, "values");
                if (values == NULL)
                        continue;
                cleanup_free char *vp = path_child(ep, "values");
                if (json_array_size(values) > 255)
                        ferr(d, vp, "Too long: must have at most 255 items");
                r->exit_codes = xcalloc(json_array_size(values) + 1, sizeof(*r->exit_codes));
                size_t k;
                json_t *v;
                json_array_foreach(values, k, v)
                {
                        cleanup_free char *kp = path_index(vp, k);
                        int64_t code;
                        if (json_to_int(d, v, kp, 32, &code))
                                r->exit_codes[r->n_exit_codes++] = (int32_t)code;
                }
        }
}

/* validateEphemeralContainers: EphemeralContainerCommon has the fields of a
 * Container, but only those of allowedEphemeralContainerFields may be set
 * (the rest would make a debugging container part of the pod's services). */
static void forbid_ephemeral_fields(struct dctx *d, json_t *c, const char *path)
{
        static const char *const forbidden[] = {
            "ports",     "livenessProbe", "readinessProbe", "startupProbe",      "lifecycle",
            "resources", "resizePolicy",  "restartPolicy",  "restartPolicyRules"};
        for (size_t i = 0; i < ARRAY_SIZE(forbidden); i++) {
                if (!container_field_set(forbidden[i], json_object_get(c, forbidden[i])))
                        continue;
                cleanup_free char *fp = path_child(path, forbidden[i]);
                ferr_forbidden(d, fp, "cannot be set for an Ephemeral Container");
        }
        size_t i;
        json_t *m;
        json_array_foreach(json_object_get(c, "volumeMounts"), i, m)
        {
                const char *sub = json_string_value(json_object_get(m, "subPath"));
                const char *expr = json_string_value(json_object_get(m, "subPathExpr"));
                if ((sub == NULL || sub[0] == '\0') && (expr == NULL || expr[0] == '\0'))
                        continue;
                cleanup_free char *lp = path_child(path, "volumeMounts");
                cleanup_free char *ip = path_index(lp, i);
                cleanup_free char *mp = path_child(ip, sub && sub[0] ? "subPath" : "subPathExpr");
                ferr_forbidden(d, mp, "cannot be set for an Ephemeral Container");
        }
}

void decode_container(struct dctx *d, json_t *c, const char *path, const struct container_ctx *cc,
                      struct container *out)
{
        if (cc->ephemeral) {
                forbid_ephemeral_fields(d, c, path);
                get_string(d, c, path, "targetContainerName", &out->target_container_name);
        }
        /* SetDefaults_Container */
        get_string(d, c, path, "image", &out->image);
        char tag[256];
        set_default_string(c, "imagePullPolicy",
                           strcmp(image_tag(out->image, tag, sizeof(tag)), "latest") == 0
                               ? "Always"
                               : "IfNotPresent");
        set_default_string(c, "terminationMessagePath", "/dev/termination-log");
        set_default_string(c, "terminationMessagePolicy", "File");

        get_string(d, c, path, "name", &out->name);
        if (out->name == NULL)
                out->name = xstrdup("");
        cleanup_free char *pull = NULL;
        get_string(d, c, path, "imagePullPolicy", &pull);
        get_str_list(d, c, path, "command", &out->command);
        get_str_list(d, c, path, "args", &out->args);
        get_string(d, c, path, "workingDir", &out->working_dir);
        get_string(d, c, path, "terminationMessagePath", &out->termination_message_path);
        get_string(d, c, path, "terminationMessagePolicy", &out->termination_message_policy);
        get_bool(d, c, path, "stdin", &out->stdin_open);
        get_bool(d, c, path, "stdinOnce", &out->stdin_once);
        get_bool(d, c, path, "tty", &out->tty);
        bool has_restart = get_string(d, c, path, "restartPolicy", &out->restart_policy);
        decode_security_context(d, c, path, out);

        /* validateContainerCommon */
        cleanup_free char *np = path_child(path, "name");
        if (out->name[0] == '\0')
                ferr_required(d, np, "");
        else
                validate_dns1123_label(d, np, out->name);
        if (out->image == NULL || out->image[0] == '\0') {
                cleanup_free char *ip = path_child(path, "image");
                ferr_required(d, ip, "");
        }
        cleanup_free char *tp = path_child(path, "terminationMessagePolicy");
        if (out->termination_message_policy && /* NULL: a type error, reported already */
            !str_eq(out->termination_message_policy, "File") &&
            !str_eq(out->termination_message_policy, "FallbackToLogsOnError")) {
                static const char *const policies[] = {"File", "FallbackToLogsOnError", NULL};
                ferr_not_supported(d, tp, out->termination_message_policy, policies);
        }
        decode_ports(d, c, path, cc->host_network, out);
        decode_env(d, c, path, out);
        decode_env_from(d, c, path, out);
        decode_volume_mounts(d, c, path, cc, out);
        cleanup_free char *pp = path_child(path, "imagePullPolicy");
        if (str_eq(pull, "Always")) {
                out->image_pull_policy = PULL_ALWAYS;
        } else if (str_eq(pull, "Never")) {
                out->image_pull_policy = PULL_NEVER;
        } else if (str_eq(pull, "IfNotPresent")) {
                out->image_pull_policy = PULL_IF_NOT_PRESENT;
        } else if (pull) {
                static const char *const policies[] = {"Always", "IfNotPresent", "Never", NULL};
                ferr_not_supported(d, pp, pull, policies);
        }
        decode_resources(d, c, path, &out->resources);
        decode_resize_policy(d, c, path, cc->pod_restart_policy, out);
        validate_security_context(d, c, path, out->security_context);

        /* the container's own restartPolicy and restartPolicyRules
         * (ContainerRestartRules, on by default since 1.35; upstream
         * validateInitContainerRestartPolicy / validateContainerRestartPolicy) */
        cleanup_free char *rp = path_child(path, "restartPolicy");
        bool sidecar = cc->init && has_restart && strcmp(out->restart_policy, "Always") == 0;
        if (!cc->ephemeral) {
                bool has_rules = json_array_size(jget(c, "restartPolicyRules")) > 0;
                if (!has_restart && has_rules)
                        ferr_required(d, rp,
                                      "must specify restartPolicy when restart rules are used");
                if (has_restart && !str_eq(out->restart_policy, "Always") &&
                    !str_eq(out->restart_policy, "OnFailure") &&
                    !str_eq(out->restart_policy, "Never")) {
                        static const char *const policies[] = {"Always", "Never", "OnFailure",
                                                               NULL};
                        ferr_not_supported(d, rp, out->restart_policy, policies);
                }
                if (sidecar && has_rules) {
                        cleanup_free char *rr = path_child(path, "restartPolicyRules");
                        ferr_forbidden(d, rr,
                                       "restartPolicyRules are not allowed for init containers "
                                       "with restart policy Always");
                } else if (has_restart) {
                        decode_restart_rules(d, c, path, out);
                }
        }
        /* names are unique across init and regular containers */
        if (vec_has(cc->names, out->name))
                ferr_duplicate(d, np, out->name);
        else if (out->name[0] || !cc->init)
                str_vec_add(cc->names, out->name);
        if (cc->init) {
                const struct container one = *out;
                check_host_port_conflicts(d, &one, 1, cc->list_path);
        }
        if (!cc->ephemeral)
                decode_hooks(d, c, path, !cc->init || sidecar, out);
        if (cc->ephemeral) {
                free(out->restart_policy);
                out->restart_policy = NULL;
        }
}

void check_host_port_conflicts(struct dctx *d, const struct container *cs, size_t n,
                               const char *list_path)
{
        struct str_vec seen = {0};
        for (size_t ci = 0; ci < n; ci++) {
                for (size_t pi = 0; pi < cs[ci].n_ports; pi++) {
                        const struct container_port *p = &cs[ci].ports[pi];
                        if (p->host_port == 0)
                                continue;
                        cleanup_free char *key =
                            xasprintf("%s/%s/%d", p->protocol ? p->protocol : "",
                                      p->host_ip ? p->host_ip : "", p->host_port);
                        if (vec_has(&seen, key)) {
                                cleanup_free char *path =
                                    xasprintf("%s[%zu].ports[%zu].hostPort", list_path, ci, pi);
                                ferr_duplicate(d, path, key);
                        } else {
                                str_vec_add(&seen, key);
                        }
                }
        }
        str_vec_release(&seen);
}
