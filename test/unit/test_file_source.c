/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The static pod directory source, on a real temporary directory with
 * inotify: what the sink receives as files appear, change, break, vanish,
 * collide; and the static pod defaults.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config/file_source.h"
#include "util/error.h"
#include "util/log.h"
#include "util/yamljson.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_MS 100
#define WAIT_MS 5000
#define MAX_PODS 16

/* ---- the sink: keeps the latest snapshot ---- */

struct sink {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        int snapshots;
        struct pod *pods[MAX_PODS];
        size_t n;
        enum pod_source src;
};

static void sink_fn(void *ctx, enum pod_source src, struct pod *const *pods, size_t n)
{
        struct sink *s = ctx;
        pthread_mutex_lock(&s->lock);
        for (size_t i = 0; i < s->n; i++)
                pod_unref(s->pods[i]);
        s->n = 0;
        for (size_t i = 0; i < n && i < MAX_PODS; i++)
                s->pods[s->n++] = pod_ref(pods[i]);
        s->src = src;
        s->snapshots++;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        return type == FTW_DP ? rmdir(path) : unlink(path);
}

struct fixture {
        char dir[64];
        char log_path[96];
        int log_fd;
        struct sink sink;
        struct file_source *fs;
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        strcpy(f->dir, "/tmp/ck-file-source-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->log_path, sizeof(f->log_path), "%s.log", f->dir);
        f->log_fd = open(f->log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(f->log_fd >= 0);
        log_set_fd(f->log_fd);
        pthread_mutex_init(&f->sink.lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&f->sink.cond, &ca);
        pthread_condattr_destroy(&ca);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        file_source_stop(f->fs);
        for (size_t i = 0; i < f->sink.n; i++)
                pod_unref(f->sink.pods[i]);
        log_set_fd(2);
        close(f->log_fd);
        unlink(f->log_path);
        assert_int_equal(nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
        pthread_mutex_destroy(&f->sink.lock);
        pthread_cond_destroy(&f->sink.cond);
        free(f);
        return 0;
}

static void start(struct fixture *f, const char *dir, const char *node)
{
        ck_error_t err = NULL;
        if (file_source_start(dir, node, PERIOD_MS, sink_fn, &f->sink, &f->fs, &err) < 0)
                fail_msg("start: %s", ck_error_msg(err));
}

/* ---- files ---- */

static void write_file(const struct fixture *f, const char *name, const char *content)
{
        char path[256], tmp[256];
        snprintf(path, sizeof(path), "%s/%s", f->dir, name);
        /* atomic replace, as editors and config tools do */
        snprintf(tmp, sizeof(tmp), "%s/.tmp-%s", f->dir, name);
        FILE *fp = fopen(tmp, "we");
        assert_non_null(fp);
        fputs(content, fp);
        assert_int_equal(fclose(fp), 0);
        assert_int_equal(rename(tmp, path), 0);
}

static void remove_file(const struct fixture *f, const char *name)
{
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", f->dir, name);
        assert_int_equal(unlink(path), 0);
}

static char *manifest(const char *name, const char *image)
{
        char *s = NULL;
        assert_true(asprintf(&s,
                             "apiVersion: v1\n"
                             "kind: Pod\n"
                             "metadata:\n"
                             "  name: %s\n"
                             "spec:\n"
                             "  containers:\n"
                             "  - name: main\n"
                             "    image: %s\n",
                             name, image) > 0);
        return s;
}

static void write_pod(const struct fixture *f, const char *file, const char *name,
                      const char *image)
{
        char *m = manifest(name, image);
        write_file(f, file, m);
        free(m);
}

/* ---- waiting for snapshots ---- */

typedef bool (*snap_pred)(const struct sink *s, const void *arg);

static bool wait_for(struct fixture *f, snap_pred pred, const void *arg)
{
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        dl.tv_sec += WAIT_MS / 1000;
        pthread_mutex_lock(&f->sink.lock);
        bool ok;
        while (!(ok = f->sink.snapshots > 0 && pred(&f->sink, arg)))
                if (pthread_cond_timedwait(&f->sink.cond, &f->sink.lock, &dl) == ETIMEDOUT) {
                        ok = f->sink.snapshots > 0 && pred(&f->sink, arg);
                        break;
                }
        pthread_mutex_unlock(&f->sink.lock);
        return ok;
}

static const struct pod *find_pod(const struct sink *s, const char *name)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->pods[i]->name, name) == 0)
                        return s->pods[i];
        return NULL;
}

/* "name=image,name=image": exactly these pods, with these images */
static bool has_exactly(const struct sink *s, const void *arg)
{
        char *spec = strdup(arg), *save = NULL;
        size_t want = 0;
        bool ok = true;
        for (char *t = strtok_r(spec, ",", &save); t && ok; t = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(t, '=');
                *eq = '\0';
                const struct pod *p = find_pod(s, t);
                ok = p != NULL && p->n_containers == 1 &&
                     strcmp(p->containers[0].image, eq + 1) == 0;
                want++;
        }
        free(spec);
        return ok && s->n == want;
}

static bool is_empty(const struct sink *s, const void *arg)
{
        (void)arg;
        return s->n == 0;
}

static void expect(struct fixture *f, const char *spec)
{
        if (!wait_for(f, has_exactly, spec)) {
                pthread_mutex_lock(&f->sink.lock);
                char got[512] = "";
                for (size_t i = 0; i < f->sink.n; i++) {
                        strcat(got, f->sink.pods[i]->name);
                        strcat(got, "=");
                        strcat(got, f->sink.pods[i]->containers[0].image);
                        strcat(got, " ");
                }
                pthread_mutex_unlock(&f->sink.lock);
                fail_msg("want {%s}, have {%s}", spec, got);
        }
}

/* A copy of the current snapshot's pod (a reference). */
static struct pod *pod_now(struct fixture *f, const char *name)
{
        pthread_mutex_lock(&f->sink.lock);
        const struct pod *p = find_pod(&f->sink, name);
        struct pod *r = p ? pod_ref((struct pod *)p) : NULL;
        pthread_mutex_unlock(&f->sink.lock);
        assert_non_null(r);
        return r;
}

static int snapshots(struct fixture *f)
{
        pthread_mutex_lock(&f->sink.lock);
        int n = f->sink.snapshots;
        pthread_mutex_unlock(&f->sink.lock);
        return n;
}

static void sleep_ms(int ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* The log says path could not be processed (polling, the log is written
 * from the source's thread). */
/* An error line names the file (and says `why`, unless NULL). */
static bool log_names_error_why(struct fixture *f, const char *file, const char *why)
{
        for (int i = 0; i < WAIT_MS / 50; i++) {
                char buf[65536];
                ssize_t n = pread(f->log_fd, buf, sizeof(buf) - 1, 0);
                buf[n > 0 ? n : 0] = '\0';
                for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
                        if (line[0] == 'E' && strstr(line, "Could not process manifest file") &&
                            strstr(line, file) && (why == NULL || strstr(line, why)))
                                return true;
                sleep_ms(50);
        }
        return false;
}

static bool log_names_error(struct fixture *f, const char *file)
{
        return log_names_error_why(f, file, NULL);
}

static bool is_hex32(const char *s)
{
        if (s == NULL || strlen(s) != 32)
                return false;
        for (; *s; s++)
                if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
                        return false;
        return true;
}

/* ---- tests ---- */

static void test_good_pods_only(void **state)
{
        struct fixture *f = *state;
        write_pod(f, "web.yaml", "web", "localhost/busybox:1.35");
        write_file(f, "db.json",
                   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"db\","
                   "\"namespace\":\"infra\"},\"spec\":{\"containers\":[{\"name\":\"db\","
                   "\"image\":\"localhost/pause:3.10\"}]}}");
        write_file(f, "broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n");
        write_file(f, "noimage.yaml",
                   "apiVersion: v1\nkind: Pod\nmetadata:\n  name: noimg\n"
                   "spec:\n  containers:\n  - name: main\n");
        write_file(f, "nokind.yaml",
                   "metadata:\n  name: nokind\nspec:\n  containers:\n  - name: main\n"
                   "    image: localhost/busybox:1.35\n");
        write_file(f, "deploy.yaml",
                   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: deploy\n"
                   "spec:\n  containers:\n  - name: main\n    image: localhost/busybox:1.35\n");
        write_pod(f, ".hidden.yaml", "hidden", "localhost/busybox:1.35");
        /* upstream's ValidatePodCreate: only the subresource adds them */
        write_file(f, "ephemeral.yaml",
                   "apiVersion: v1\nkind: Pod\nmetadata:\n  name: eph\nspec:\n  containers:\n"
                   "  - {name: main, image: localhost/busybox:1.35}\n  ephemeralContainers:\n"
                   "  - {name: dbg, image: localhost/busybox:1.35}\n");
        char sub[128];
        snprintf(sub, sizeof(sub), "%s/subdir", f->dir);
        assert_int_equal(mkdir(sub, 0700), 0);

        start(f, f->dir, "node1");
        expect(f, "web-node1=localhost/busybox:1.35,db-node1=localhost/pause:3.10");
        assert_int_equal(f->sink.src, POD_SOURCE_FILE);

        struct pod *web = pod_now(f, "web-node1");
        assert_string_equal(web->namespace, "default");
        assert_true(is_hex32(web->uid));
        assert_string_equal(web->node_name, "node1");
        assert_string_equal(kv_list_get(&web->annotations, "kubernetes.io/config.hash"), web->uid);
        assert_string_equal(kv_list_get(&web->annotations, "kubernetes.io/config.source"), "file");
        assert_non_null(kv_list_get(&web->annotations, "kubernetes.io/config.seen"));
        assert_int_equal(web->source, POD_SOURCE_FILE);
        char want_path[128];
        snprintf(want_path, sizeof(want_path), "%s/web.yaml", f->dir);
        assert_string_equal(web->source_path, want_path);
        /* static pods tolerate NoExecute taints */
        json_t *tol = json_object_get(json_object_get(web->raw, "spec"), "tolerations");
        assert_int_equal(json_array_size(tol), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(tol, 0), "effect")),
                            "NoExecute");
        struct pod *db = pod_now(f, "db-node1");
        assert_string_equal(db->namespace, "infra");
        assert_true(strcmp(db->uid, web->uid) != 0);

        /* each bad file is named in an error */
        assert_true(log_names_error(f, "broken.yaml"));
        assert_true(log_names_error(f, "noimage.yaml"));
        assert_true(log_names_error(f, "nokind.yaml"));
        assert_true(log_names_error(f, "deploy.yaml"));
        assert_true(log_names_error_why(
            f, "ephemeral.yaml", "spec.ephemeralContainers: Forbidden: cannot be set on create"));

        /* rescans without changes: no new snapshot, same UIDs */
        int before = snapshots(f);
        sleep_ms(4 * PERIOD_MS);
        assert_int_equal(snapshots(f), before);
        struct pod *again = pod_now(f, "web-node1");
        assert_string_equal(again->uid, web->uid);
        pod_unref(again);
        pod_unref(web);
        pod_unref(db);
}

static void test_uid_stable_per_node_and_path(void **state)
{
        struct fixture *f = *state;
        write_pod(f, "web.yaml", "web", "localhost/busybox:1.35");
        start(f, f->dir, "node1");
        expect(f, "web-node1=localhost/busybox:1.35");
        struct pod *a = pod_now(f, "web-node1");
        file_source_stop(f->fs);
        f->fs = NULL;

        /* a restart of the source gives the same UID */
        start(f, f->dir, "node1");
        expect(f, "web-node1=localhost/busybox:1.35");
        struct pod *b = pod_now(f, "web-node1");
        assert_string_equal(a->uid, b->uid);
        file_source_stop(f->fs);
        f->fs = NULL;

        /* another node: another name and UID */
        start(f, f->dir, "node2");
        expect(f, "web-node2=localhost/busybox:1.35");
        struct pod *c = pod_now(f, "web-node2");
        assert_true(is_hex32(c->uid));
        assert_true(strcmp(a->uid, c->uid) != 0);

        /* the same manifest under another file name: another UID */
        file_source_stop(f->fs);
        f->fs = NULL;
        remove_file(f, "web.yaml");
        write_pod(f, "web2.yaml", "web", "localhost/busybox:1.35");
        start(f, f->dir, "node1");
        expect(f, "web-node1=localhost/busybox:1.35");
        struct pod *d = pod_now(f, "web-node1");
        assert_true(strcmp(a->uid, d->uid) != 0);
        pod_unref(a);
        pod_unref(b);
        pod_unref(c);
        pod_unref(d);
}

static void test_modify_break_delete(void **state)
{
        struct fixture *f = *state;
        write_pod(f, "a.yaml", "a", "img:1");
        write_pod(f, "b.yaml", "b", "img:1");
        start(f, f->dir, "n");
        expect(f, "a-n=img:1,b-n=img:1");
        struct pod *a1 = pod_now(f, "a-n");

        /* modify: a new snapshot with the changed pod (and a new UID) */
        write_pod(f, "a.yaml", "a", "img:2");
        expect(f, "a-n=img:2,b-n=img:1");
        struct pod *a2 = pod_now(f, "a-n");
        assert_true(strcmp(a1->uid, a2->uid) != 0);

        /* break it: the last good pod stays, the error names the file */
        write_file(f, "a.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {}\n");
        assert_true(log_names_error(f, "a.yaml"));
        sleep_ms(3 * PERIOD_MS);
        expect(f, "a-n=img:2,b-n=img:1");
        struct pod *a3 = pod_now(f, "a-n");
        assert_ptr_equal(a3, a2);

        /* fixed again: picked up */
        write_pod(f, "a.yaml", "a", "img:3");
        expect(f, "a-n=img:3,b-n=img:1");

        /* delete: its pod goes */
        remove_file(f, "b.yaml");
        expect(f, "a-n=img:3");
        remove_file(f, "a.yaml");
        assert_true(wait_for(f, is_empty, NULL));
        pod_unref(a1);
        pod_unref(a2);
        pod_unref(a3);
}

static void test_touch_is_not_a_change(void **state)
{
        struct fixture *f = *state;
        write_pod(f, "a.yaml", "a", "img:1");
        start(f, f->dir, "n");
        expect(f, "a-n=img:1");
        struct pod *before = pod_now(f, "a-n");
        int n = snapshots(f);
        /* same bytes rewritten: new inode and mtime, same content */
        write_pod(f, "a.yaml", "a", "img:1");
        char path[256];
        snprintf(path, sizeof(path), "%s/a.yaml", f->dir);
        assert_int_equal(utimensat(AT_FDCWD, path, NULL, 0), 0);
        sleep_ms(4 * PERIOD_MS);
        assert_int_equal(snapshots(f), n);
        struct pod *after = pod_now(f, "a-n");
        assert_ptr_equal(before, after);
        pod_unref(before);
        pod_unref(after);
}

static void test_duplicate_name_first_wins(void **state)
{
        struct fixture *f = *state;
        write_pod(f, "1-first.yaml", "dup", "img:first");
        write_pod(f, "2-second.yaml", "dup", "img:second");
        start(f, f->dir, "n");
        expect(f, "dup-n=img:first");
        struct pod *p = pod_now(f, "dup-n");
        assert_non_null(strstr(p->source_path, "1-first.yaml"));
        pod_unref(p);
        /* the first goes: the second takes its place */
        remove_file(f, "1-first.yaml");
        expect(f, "dup-n=img:second");
}

static void test_missing_dir_then_created(void **state)
{
        struct fixture *f = *state;
        char dir[128];
        snprintf(dir, sizeof(dir), "%s/later/", f->dir); /* trailing slash too */
        start(f, dir, "n");
        /* the first snapshot comes, empty */
        assert_true(wait_for(f, is_empty, NULL));
        dir[strlen(dir) - 1] = '\0';
        assert_int_equal(mkdir(dir, 0700), 0);
        char path[160];
        snprintf(path, sizeof(path), "%s/x.yaml", dir);
        char *m = manifest("x", "img:1");
        FILE *fp = fopen(path, "we");
        fputs(m, fp);
        fclose(fp);
        free(m);
        expect(f, "x-n=img:1");
        struct pod *p = pod_now(f, "x-n");
        assert_string_equal(p->source_path, path); /* no double slash */
        pod_unref(p);
}

static void test_symlink_followed_uid_from_dir_path(void **state)
{
        struct fixture *f = *state;
        char outside[160], link[160];
        snprintf(outside, sizeof(outside), "%s.target.yaml", f->dir);
        char *m = manifest("linked", "img:1");
        FILE *fp = fopen(outside, "we");
        fputs(m, fp);
        fclose(fp);
        snprintf(link, sizeof(link), "%s/linked.yaml", f->dir);
        assert_int_equal(symlink(outside, link), 0);
        start(f, f->dir, "n");
        expect(f, "linked-n=img:1");

        /* the UID is the one of the manifest at the path in the directory */
        json_t *obj = NULL;
        ck_error_t err = NULL;
        assert_int_equal(yamljson_parse(m, strlen(m), &obj, &err), 0);
        assert_int_equal(file_source_apply_defaults(obj, "n", link, "file", &err), 0);
        struct pod *p = pod_now(f, "linked-n");
        assert_string_equal(
            p->uid, json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid")));
        assert_string_equal(p->source_path, link);
        pod_unref(p);
        json_decref(obj);
        free(m);

        /* the target changes outside the watched directory: the periodic
         * rescan still sees it */
        m = manifest("linked", "img:2");
        char tmp[200];
        snprintf(tmp, sizeof(tmp), "%s.new", outside);
        fp = fopen(tmp, "we");
        fputs(m, fp);
        fclose(fp);
        free(m);
        assert_int_equal(rename(tmp, outside), 0);
        expect(f, "linked-n=img:2");
        unlink(outside);
        expect(f, "");
}

static void test_apply_defaults(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        const char *y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n"
                        "  annotations: {a: b}\n"
                        "spec:\n  tolerations:\n  - {operator: Exists, effect: NoExecute, "
                        "tolerationSeconds: 5}\n  - {key: k, operator: Exists}\n"
                        "  containers: [{name: c, image: i}]\n";
        json_t *o1 = NULL, *o2 = NULL, *o3 = NULL;
        assert_int_equal(yamljson_parse(y, strlen(y), &o1, &err), 0);
        o2 = json_deep_copy(o1);
        o3 = json_deep_copy(o1);
        assert_int_equal(file_source_apply_defaults(o1, "Node-A", "/etc/m/web.yaml", "file", &err),
                         0);
        assert_int_equal(file_source_apply_defaults(o2, "Node-A", "/etc/m/web2.yaml", "file", &err),
                         0);
        assert_int_equal(
            file_source_apply_defaults(o3, "Node-A", "http://x/web.yaml", "http", &err), 0);
        json_t *meta = json_object_get(o1, "metadata");
        const char *uid1 = json_string_value(json_object_get(meta, "uid"));
        const char *uid2 =
            json_string_value(json_object_get(json_object_get(o2, "metadata"), "uid"));
        const char *uid3 =
            json_string_value(json_object_get(json_object_get(o3, "metadata"), "uid"));
        assert_true(is_hex32(uid1));
        assert_true(strcmp(uid1, uid2) != 0);
        assert_true(strcmp(uid1, uid3) != 0);
        assert_string_equal(json_string_value(json_object_get(meta, "name")), "web-node-a");
        assert_string_equal(json_string_value(json_object_get(meta, "namespace")), "default");
        json_t *ann = json_object_get(meta, "annotations");
        assert_string_equal(json_string_value(json_object_get(ann, "a")), "b");
        assert_string_equal(json_string_value(json_object_get(ann, "kubernetes.io/config.hash")),
                            uid1);
        const char *seen = json_string_value(json_object_get(ann, "kubernetes.io/config.seen"));
        assert_non_null(seen);
        assert_int_equal(seen[strlen(seen) - 1], 'Z');
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(json_object_get(o3, "metadata"), "annotations"),
                                "kubernetes.io/config.source")),
                            "http");
        json_t *spec = json_object_get(o1, "spec");
        assert_string_equal(json_string_value(json_object_get(spec, "nodeName")), "Node-A");
        /* the matching toleration is replaced in place, the other kept */
        json_t *tol = json_object_get(spec, "tolerations");
        assert_int_equal(json_array_size(tol), 2);
        assert_null(json_object_get(json_array_get(tol, 0), "tolerationSeconds"));
        assert_string_equal(json_string_value(json_object_get(json_array_get(tol, 1), "key")), "k");
        /* http pods get no toleration added */
        assert_int_equal(
            json_array_size(json_object_get(json_object_get(o3, "spec"), "tolerations")), 2);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(o1, "status"), "phase")), "Pending");

        /* an explicit UID is kept */
        json_t *o4 = json_pack("{s:{s:s, s:s}}", "metadata", "name", "x", "uid", "given");
        assert_int_equal(file_source_apply_defaults(o4, "n", "/p", "file", &err), 0);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(o4, "metadata"), "uid")), "given");

        /* no name: the upstream error */
        json_t *o5 = json_pack("{s:{}}", "metadata");
        assert_int_equal(file_source_apply_defaults(o5, "n", "/p", "file", &err), -1);
        assert_string_equal(ck_error_msg(err), "invalid pod: name is needed for the pod");
        ck_error_release(&err);
        json_decref(o1);
        json_decref(o2);
        json_decref(o3);
        json_decref(o4);
        json_decref(o5);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_good_pods_only, setup, teardown),
            cmocka_unit_test_setup_teardown(test_uid_stable_per_node_and_path, setup, teardown),
            cmocka_unit_test_setup_teardown(test_modify_break_delete, setup, teardown),
            cmocka_unit_test_setup_teardown(test_touch_is_not_a_change, setup, teardown),
            cmocka_unit_test_setup_teardown(test_duplicate_name_first_wins, setup, teardown),
            cmocka_unit_test_setup_teardown(test_missing_dir_then_created, setup, teardown),
            cmocka_unit_test_setup_teardown(test_symlink_followed_uid_from_dir_path, setup,
                                            teardown),
            cmocka_unit_test(test_apply_defaults),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
