/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod networks through CNI plugins, run by the shim itself as libcni runs
 * them for cri-dockerd and containerd (dockershim_internal.h): the first
 * configuration of the conf directory (*.conf, *.conflist, *.json in name
 * order; a lone plugin's file is a list of one), each plugin found in the
 * bin directories and executed with the CNI_* environment and its
 * configuration on stdin (the list's name and cniVersion, the previous
 * plugin's result as prevResult, the portMappings capability as
 * runtimeConfig), ADD in order and DEL in reverse.  Before the network,
 * the loopback plugin brings up "lo" (cri-dockerd's loopback network).
 *
 * No shell: the plugin is execve'd with an environment built here, every
 * other descriptor closed; it is killed when the deadline passes.
 */
#include "dockershim/dockershim_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CNI_MAX_CONF (1024 * 1024)
#define CNI_MAX_OUTPUT (1024 * 1024)

struct shim_cni {
        char *file;   /* the configuration's file */
        json_t *list; /* {"cniVersion", "name", "plugins": [...]} */
        char **bin_dirs;
        size_t n_bin_dirs;
        char *cni_path; /* bin_dirs joined by ':' */
};

void shim_cni_free(struct shim_cni *n)
{
        if (n == NULL)
                return;
        free(n->file);
        json_decref(n->list);
        for (size_t i = 0; i < n->n_bin_dirs; i++)
                free(n->bin_dirs[i]);
        free(n->bin_dirs);
        free(n->cni_path);
        free(n);
}

const char *shim_cni_name(const struct shim_cni *n)
{
        return json_string_value(json_object_get(n->list, "name"));
}

/* The plugin's executable in the bin dirs, or NULL. */
static char *find_plugin(const struct shim_cni *n, const char *type)
{
        if (type == NULL || *type == '\0' || strchr(type, '/') != NULL || strcmp(type, ".") == 0 ||
            strcmp(type, "..") == 0)
                return NULL;
        for (size_t i = 0; i < n->n_bin_dirs; i++) {
                char *p = xasprintf("%s/%s", n->bin_dirs[i], type);
                struct stat st;
                if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
                        return p;
                free(p);
        }
        return NULL;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

static bool conf_suffix(const char *name)
{
        size_t l = strlen(name);
        return (l > 5 && strcmp(name + l - 5, ".conf") == 0) ||
               (l > 9 && strcmp(name + l - 9, ".conflist") == 0) ||
               (l > 5 && strcmp(name + l - 5, ".json") == 0);
}

/* One file as a list, its plugins found: 0, or -1 with err saying why it
 * is not usable. */
static int load_file(struct shim_cni *n, const char *path, ck_error_t *err)
{
        cleanup_free char *buf = NULL;
        size_t len = 0;
        if (fs_read_file(path, CNI_MAX_CONF, &buf, &len, err) < 0)
                return -1;
        json_error_t jerr;
        json_t *j = json_loadb(buf, len, 0, &jerr);
        if (!json_is_object(j)) {
                json_decref(j);
                return ck_error_make(err, 0, "`%s`: not a JSON object (%s)", path, jerr.text);
        }
        if (json_object_get(j, "plugins") == NULL) {
                /* a lone plugin: a list of one */
                if (!json_is_string(json_object_get(j, "type"))) {
                        json_decref(j);
                        return ck_error_make(err, 0, "`%s`: no plugins and no type", path);
                }
                json_t *list =
                    json_pack("{s:O,s:O,s:[O]}", "cniVersion", json_object_get(j, "cniVersion"),
                              "name", json_object_get(j, "name"), "plugins", j);
                json_decref(j);
                j = list;
                if (j == NULL)
                        return ck_error_make(err, 0, "`%s`: no cniVersion or name", path);
        }
        json_t *plugins = json_object_get(j, "plugins");
        if (!json_is_string(json_object_get(j, "name")) ||
            !json_is_string(json_object_get(j, "cniVersion")) || !json_is_array(plugins) ||
            json_array_size(plugins) == 0) {
                json_decref(j);
                return ck_error_make(err, 0, "`%s`: a list needs a name, a cniVersion and plugins",
                                     path);
        }
        size_t i;
        json_t *p;
        json_array_foreach(plugins, i, p)
        {
                const char *type = json_string_value(json_object_get(p, "type"));
                cleanup_free char *bin = find_plugin(n, type);
                if (bin == NULL) {
                        json_decref(j);
                        return ck_error_make(err, 0, "`%s`: plugin \"%s\" not found in %s", path,
                                             type ? type : "", n->cni_path);
                }
        }
        n->list = j;
        n->file = xstrdup(path);
        return 0;
}

int shim_cni_load(const char *conf_dir, const char *bin_dirs, struct shim_cni **out,
                  ck_error_t *err)
{
        *out = NULL;
        struct shim_cni *n = xcalloc(1, sizeof(*n));
        n->cni_path = xstrdup(bin_dirs);
        cleanup_free char *copy = xstrdup(bin_dirs);
        for (char *s = copy, *save = NULL, *tok; (tok = strtok_r(s, ",:", &save)); s = NULL) {
                n->bin_dirs = xrealloc(n->bin_dirs, (n->n_bin_dirs + 1) * sizeof(char *));
                n->bin_dirs[n->n_bin_dirs++] = xstrdup(tok);
        }
        for (char *p = n->cni_path; *p; p++)
                if (*p == ',')
                        *p = ':';
        struct dirent **names = NULL;
        int count = scandir(conf_dir, &names, NULL, by_name);
        if (count < 0) {
                int e = errno;
                shim_cni_free(n);
                return ck_error_make(err, e, "cni config directory `%s`", conf_dir);
        }
        cleanup_free char *why = NULL;
        for (int i = 0; i < count; i++) {
                if (n->list == NULL && names[i]->d_name[0] != '.' &&
                    conf_suffix(names[i]->d_name)) {
                        cleanup_free char *path = xasprintf("%s/%s", conf_dir, names[i]->d_name);
                        ck_error_t e = NULL;
                        if (load_file(n, path, &e) < 0) {
                                free(why);
                                why = xstrdup(ck_error_msg(e));
                                ck_error_release(&e);
                        }
                }
                free(names[i]);
        }
        free(names);
        if (n->list == NULL) {
                shim_cni_free(n);
                return ck_error_make(err, 0, "no valid networks found in %s%s%s", conf_dir,
                                     why ? ": " : "", why ? why : "");
        }
        *out = n;
        return 0;
}

/* Runs bin with env and stdin; its stdout into *out.  0 when it exited 0,
 * else -1 with the CNI error it printed ({"code", "msg", "details"}) or
 * its exit status. */
static int run_plugin(const char *bin, char *const env[], const char *in, int64_t deadline,
                      char **out, ck_error_t *err)
{
        *out = NULL;
        int pin[2], pout[2];
        if (pipe2(pin, O_CLOEXEC) < 0)
                return ck_error_make(err, errno, "pipe");
        if (pipe2(pout, O_CLOEXEC) < 0) {
                int e = errno;
                close(pin[0]);
                close(pin[1]);
                return ck_error_make(err, e, "pipe");
        }
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(pin[0]);
                close(pin[1]);
                close(pout[0]);
                close(pout[1]);
                return ck_error_make(err, e, "fork");
        }
        if (pid == 0) {
                /* the child (async-signal-safe calls only): a process
                 * group of its own (killed whole at the deadline), stdin
                 * and stdout from the pipes, stderr kept, no other
                 * descriptor (all are O_CLOEXEC; the belt), default signals */
                setpgid(0, 0);
                if (dup2(pin[0], 0) < 0 || dup2(pout[1], 1) < 0)
                        _exit(127);
                if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
                        for (int fd = 3; fd < 4096; fd++)
                                close(fd);
                struct sigaction dfl = {.sa_handler = SIG_DFL};
                sigaction(SIGPIPE, &dfl, NULL);
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                char *const argv[] = {(char *)bin, NULL};
                execve(bin, argv, env);
                _exit(127);
        }
        setpgid(pid, pid); /* also here: no kill before the child's own call */
        close(pin[0]);
        close(pout[1]);
        size_t in_len = strlen(in), in_off = 0;
        fcntl(pin[1], F_SETFL, O_NONBLOCK);
        char *buf = xmalloc(4096);
        size_t len = 0, cap = 4096;
        bool timed_out = false, too_big = false;
        int in_fd = pin[1];
        for (;;) {
                struct pollfd pf[2] = {{.fd = pout[0], .events = POLLIN},
                                       {.fd = in_fd, .events = POLLOUT}};
                int64_t left = deadline - fs_now_mono_ms();
                if (left <= 0) {
                        timed_out = true;
                        break;
                }
                int r = poll(pf, in_fd >= 0 ? 2 : 1, left > 1000 ? 1000 : (int)left);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        break;
                if (in_fd >= 0 && (pf[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
                        ssize_t w = write(in_fd, in + in_off, in_len - in_off);
                        if (w > 0)
                                in_off += (size_t)w;
                        if (w < 0 && errno != EAGAIN && errno != EINTR)
                                in_off = in_len; /* it does not read: give up on stdin */
                        if (in_off == in_len) {
                                close(in_fd);
                                in_fd = -1;
                        }
                }
                if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                        if (cap - len < 1024) {
                                cap *= 2;
                                buf = xrealloc(buf, cap);
                        }
                        ssize_t got = read(pout[0], buf + len, cap - len - 1);
                        if (got < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (got <= 0)
                                break;
                        len += (size_t)got;
                        if (len > CNI_MAX_OUTPUT) {
                                too_big = true;
                                break;
                        }
                }
        }
        if (in_fd >= 0)
                close(in_fd);
        close(pout[0]);
        if (timed_out || too_big)
                kill(-pid, SIGKILL);
        /* its end, within the deadline too (a plugin may close its stdout
         * and go on) */
        int status = 0;
        for (;;) {
                pid_t w = waitpid(pid, &status, WNOHANG);
                if (w == pid || (w < 0 && errno != EINTR))
                        break;
                if (w == 0 && fs_now_mono_ms() >= deadline) {
                        timed_out = true;
                        kill(-pid, SIGKILL);
                        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                                ;
                        break;
                }
                if (w == 0)
                        poll(NULL, 0, 10);
        }
        buf[len] = '\0';
        if (timed_out) {
                free(buf);
                return ck_error_make(err, ETIMEDOUT, "plugin `%s`", bin);
        }
        if (too_big) {
                free(buf);
                return ck_error_make(err, 0, "plugin `%s`: output over %d bytes", bin,
                                     CNI_MAX_OUTPUT);
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                *out = buf;
                return 0;
        }
        /* the CNI error object, or what it printed */
        json_t *j = json_loads(buf, 0, NULL);
        const char *msg = json_string_value(json_object_get(j, "msg"));
        const char *details = json_string_value(json_object_get(j, "details"));
        if (msg)
                ck_error_make(err, 0, "plugin `%s`: %s%s%s", bin, msg,
                              details && *details ? ": " : "", details && *details ? details : "");
        else if (WIFEXITED(status))
                ck_error_make(err, 0, "plugin `%s` exited with status %d: %.200s", bin,
                              WEXITSTATUS(status), buf);
        else
                ck_error_make(err, 0, "plugin `%s` killed by signal %d", bin, WTERMSIG(status));
        json_decref(j);
        free(buf);
        return -1;
}

/* The environment of one plugin call (a NULL-terminated array, freed with
 * free_env). */
static char **make_env(const struct shim_cni *n, const char *cmd, const struct shim_cni_args *a,
                       const char *ifname)
{
        char **env = xcalloc(8, sizeof(char *));
        env[0] = xasprintf("CNI_COMMAND=%s", cmd);
        env[1] = xasprintf("CNI_CONTAINERID=%s", a->container_id);
        env[2] = xasprintf("CNI_NETNS=%s", a->netns ? a->netns : "");
        env[3] = xasprintf("CNI_IFNAME=%s", ifname);
        env[4] = xasprintf("CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=%s;K8S_POD_NAME=%s;"
                           "K8S_POD_INFRA_CONTAINER_ID=%s",
                           a->pod_ns, a->pod_name, a->container_id);
        env[5] = xasprintf("CNI_PATH=%s", n->cni_path);
        env[6] = xstrdup("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        return env;
}

static void free_env(char **env)
{
        for (char **e = env; *e; e++)
                free(*e);
        free(env);
}

/* The configuration one plugin of the list gets on stdin. */
static char *plugin_conf(const json_t *list, const json_t *plugin, const json_t *prev,
                         const struct shim_cni_args *a)
{
        json_t *c = json_deep_copy(plugin);
        json_object_set(c, "name", json_object_get(list, "name"));
        json_object_set(c, "cniVersion", json_object_get(list, "cniVersion"));
        if (prev)
                json_object_set(c, "prevResult", (json_t *)prev);
        json_t *caps = json_object_get(plugin, "capabilities");
        if (json_is_true(json_object_get(caps, "portMappings"))) {
                json_t *pm = json_array();
                for (size_t i = 0; i < a->n_ports; i++) {
                        const struct shim_port *p = &a->ports[i];
                        if (p->host_port <= 0)
                                continue;
                        json_t *o =
                            json_pack("{s:i,s:i,s:s}", "hostPort", p->host_port, "containerPort",
                                      p->container_port, "protocol", p->protocol);
                        if (p->host_ip && *p->host_ip)
                                json_object_set_new(o, "hostIP", json_string(p->host_ip));
                        json_array_append_new(pm, o);
                }
                json_t *rc = json_object_get(c, "runtimeConfig");
                if (!json_is_object(rc)) {
                        rc = json_object();
                        json_object_set_new(c, "runtimeConfig", rc);
                }
                json_object_set_new(rc, "portMappings", pm);
        }
        char *s = json_dumps(c, JSON_COMPACT);
        json_decref(c);
        return s;
}

/* The loopback network: "lo" up (an error only when ADD fails). */
static int loopback(const struct shim_cni *n, const char *cmd, const struct shim_cni_args *a,
                    int64_t deadline, ck_error_t *err)
{
        cleanup_free char *bin = find_plugin(n, "loopback");
        if (bin == NULL)
                return strcmp(cmd, "ADD") == 0
                           ? ck_error_make(err, 0, "plugin \"loopback\" not found in %s",
                                           n->cni_path)
                           : 0;
        char **env = make_env(n, cmd, a, "lo");
        static const char conf[] =
            "{\"cniVersion\":\"0.3.1\",\"name\":\"cni-loopback\",\"type\":\"loopback\"}";
        cleanup_free char *out = NULL;
        int rc = run_plugin(bin, env, conf, deadline, &out, err);
        free_env(env);
        return rc;
}

/* The first IPv4 (else IPv6) address of a result, without its prefix. */
static char *result_ip(const json_t *r)
{
        const json_t *ips = json_object_get(r, "ips");
        const char *v6 = NULL;
        size_t i;
        json_t *ip;
        json_array_foreach(ips, i, ip)
        {
                const char *addr = json_string_value(json_object_get(ip, "address"));
                if (addr == NULL)
                        continue;
                if (strchr(addr, ':') == NULL)
                        return xstrndup(addr, strcspn(addr, "/"));
                if (v6 == NULL)
                        v6 = addr;
        }
        /* 0.2.0: ip4.ip */
        const char *old = json_string_value(json_object_get(json_object_get(r, "ip4"), "ip"));
        if (old)
                return xstrndup(old, strcspn(old, "/"));
        return v6 ? xstrndup(v6, strcspn(v6, "/")) : NULL;
}

int shim_cni_add(const struct shim_cni *n, const struct shim_cni_args *a, int64_t timeout_ms,
                 char **ip, char **result, ck_error_t *err)
{
        *ip = NULL;
        *result = NULL;
        int64_t deadline = fs_now_mono_ms() + timeout_ms;
        if (loopback(n, "ADD", a, deadline, err) < 0)
                return ck_error_wrap(err, "loopback");
        const json_t *plugins = json_object_get(n->list, "plugins");
        json_t *prev = NULL;
        size_t i;
        json_t *p;
        json_array_foreach(plugins, i, p)
        {
                const char *type = json_string_value(json_object_get(p, "type"));
                cleanup_free char *bin = find_plugin(n, type);
                if (bin == NULL) {
                        json_decref(prev);
                        return ck_error_make(err, 0, "plugin \"%s\" not found in %s", type,
                                             n->cni_path);
                }
                cleanup_free char *conf = plugin_conf(n->list, p, prev, a);
                char **env = make_env(n, "ADD", a, a->ifname ? a->ifname : SHIM_CNI_IFNAME);
                cleanup_free char *out = NULL;
                int rc = run_plugin(bin, env, conf, deadline, &out, err);
                free_env(env);
                if (rc < 0) {
                        json_decref(prev);
                        return ck_error_wrap(err, "network \"%s\"", shim_cni_name(n));
                }
                json_t *r = json_loads(out, 0, NULL);
                if (!json_is_object(r)) {
                        json_decref(r);
                        json_decref(prev);
                        return ck_error_make(err, 0,
                                             "network \"%s\": plugin \"%s\": a result that "
                                             "is not a JSON object",
                                             shim_cni_name(n), type);
                }
                json_decref(prev);
                prev = r;
        }
        *ip = result_ip(prev);
        *result = json_dumps(prev, JSON_COMPACT);
        json_decref(prev);
        if (*ip == NULL) {
                free(*result);
                *result = NULL;
                return ck_error_make(err, 0, "network \"%s\": the result has no IP address",
                                     shim_cni_name(n));
        }
        return 0;
}

int shim_cni_del(const struct shim_cni *n, const struct shim_cni_args *a, const char *result,
                 int64_t timeout_ms, ck_error_t *err)
{
        int64_t deadline = fs_now_mono_ms() + timeout_ms;
        json_t *prev = result ? json_loads(result, 0, NULL) : NULL;
        const json_t *plugins = json_object_get(n->list, "plugins");
        int rc = 0;
        for (size_t k = json_array_size(plugins); rc == 0 && k > 0; k--) {
                const json_t *p = json_array_get(plugins, k - 1);
                const char *type = json_string_value(json_object_get(p, "type"));
                cleanup_free char *bin = find_plugin(n, type);
                if (bin == NULL) {
                        rc = ck_error_make(err, 0, "plugin \"%s\" not found in %s", type,
                                           n->cni_path);
                        break;
                }
                cleanup_free char *conf = plugin_conf(n->list, p, prev, a);
                char **env = make_env(n, "DEL", a, a->ifname ? a->ifname : SHIM_CNI_IFNAME);
                cleanup_free char *out = NULL;
                rc = run_plugin(bin, env, conf, deadline, &out, err);
                free_env(env);
        }
        json_decref(prev);
        if (rc < 0)
                return ck_error_wrap(err, "network \"%s\"", shim_cni_name(n));
        ck_error_t ignored = NULL;
        loopback(n, "DEL", a, deadline, &ignored);
        ck_error_release(&ignored);
        return 0;
}
