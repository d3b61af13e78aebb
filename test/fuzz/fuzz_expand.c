/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes $(VAR) expansion (src/expansion/expansion.c) and the container
 * environment built with it (kuberuntime__container_env), on what a pod's
 * author writes: command, args and env values.  The input is
 *
 *   <text to expand> NUL <NAME=VALUE> LF <NAME=VALUE> LF ...
 *
 * Checks, beyond memory safety:
 *   - the expansion equals a reference written from upstream's
 *     third_party/forked/golang/expansion (Expand, tryReadVariableName);
 *   - a text without '$' comes out unchanged, and so does one without "$$"
 *     when no variable is known; the output is never longer than the input
 *     then;
 *   - the env of a pod whose env list is the NAME=VALUE lines holds, for
 *     each name, the value the reference gives by expanding each entry with
 *     the entries before it (upstream makeEnvironmentVariables).
 */
#include "api/decode.h"
#include "expansion/expansion.h"
#include "kuberuntime/builders.h"
#include "kuberuntime/builders_internal.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_VARS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the reference: upstream's Expand, byte for byte ---- */

struct ref_buf {
        char *p;
        size_t len;
};

static void ref_add(struct ref_buf *b, const char *s, size_t n)
{
        b->p = xrealloc(b->p, b->len + n + 1);
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
}

/* MappingFuncFor over vars, the last entry of a name winning (a Go map
 * filled in order); unknown names wrapped back into "$(name)". */
static void ref_map(struct ref_buf *b, const struct kv_list *vars, const char *name, size_t n)
{
        for (size_t i = vars->n; i-- > 0;) {
                const char *k = vars->items[i].key;
                if (strlen(k) == n && memcmp(k, name, n) == 0) {
                        ref_add(b, vars->items[i].value, strlen(vars->items[i].value));
                        return;
                }
        }
        ref_add(b, "$(", 2);
        ref_add(b, name, n);
        ref_add(b, ")", 1);
}

static char *ref_expand(const char *input, const struct kv_list *vars)
{
        struct ref_buf b = {0};
        ref_add(&b, "", 0);
        size_t len = strlen(input), checkpoint = 0;
        for (size_t cursor = 0; cursor < len; cursor++) {
                if (input[cursor] != '$' || cursor + 1 >= len)
                        continue;
                ref_add(&b, input + checkpoint, cursor - checkpoint);
                const char *in = input + cursor + 1; /* tryReadVariableName(in) */
                size_t in_len = len - cursor - 1, advance = 1;
                if (in[0] == '$') {
                        ref_add(&b, "$", 1);
                } else if (in[0] == '(') {
                        size_t i = 1;
                        while (i < in_len && in[i] != ')')
                                i++;
                        if (i < in_len) {
                                ref_map(&b, vars, in + 1, i - 1);
                                advance = i + 1;
                        } else {
                                ref_add(&b, "$(", 2);
                        }
                } else {
                        /* "$" + string(input[0]): Go would turn a byte >= 0x80
                         * into a 2-byte rune; ckubelet copies it (expansion.c) */
                        ref_add(&b, "$", 1);
                        ref_add(&b, in, 1);
                }
                cursor += advance;
                checkpoint = cursor + 1;
        }
        ref_add(&b, input + checkpoint, len - checkpoint);
        return b.p;
}

/* ---- the checks ---- */

static void check_expand(const char *text, const struct kv_list *vars)
{
        cleanup_free char *got = expansion_expand(text, vars);
        cleanup_free char *want = ref_expand(text, vars);
        if (got == NULL || strcmp(got, want) != 0)
                abort();
        if (strchr(text, '$') == NULL && strcmp(got, text) != 0)
                abort();
        struct kv_list none = {0};
        cleanup_free char *bare = expansion_expand(text, &none);
        if (strlen(bare) > strlen(text))
                abort();
        if (strstr(text, "$$") == NULL && strcmp(bare, text) != 0)
                abort();
        cleanup_free char *null_vars = expansion_expand(text, NULL);
        if (strcmp(null_vars, bare) != 0)
                abort();
}

/* The pod's env through kuberuntime__container_env, against the reference
 * chain.  Skipped when the pod does not decode (names the API rejects). */
static void check_env(const char *text, const struct kv_list *vars)
{
        json_t *env = json_array();
        for (size_t i = 0; i < vars->n; i++)
                json_array_append_new(env, json_pack("{s:s,s:s}", "name", vars->items[i].key,
                                                     "value", vars->items[i].value));
        cleanup_json json_t *obj =
            json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:[{s:s,s:s,s:[s],s:[s],s:o}]}}", "apiVersion",
                      "v1", "kind", "Pod", "metadata", "name", "p", "namespace", "default", "uid",
                      "u1", "spec", "containers", "name", "c", "image", "busybox", "command", text,
                      "args", text, "env", env);
        if (obj == NULL)
                return; /* not UTF-8: jansson refuses it, as the API would */
        cleanup_pod struct pod *pod = NULL;
        cleanup_error ck_error_t err = NULL;
        if (api_pod_decode(obj, &pod, &err) < 0)
                return;
        struct kuberuntime_options opts = {.root_dir = "/nonexistent", .node_name = "n"};
        struct kv_list got = {0};
        if (kuberuntime__container_env(&opts, pod, &pod->containers[0], NULL, NULL, NULL, &got,
                                       &err) < 0)
                abort(); /* only values: nothing to fail on */
        /* the reference: each value expanded with the entries before it */
        struct kv_list want = {0};
        for (size_t i = 0; i < pod->containers[0].n_env; i++) {
                const struct env_var *e = &pod->containers[0].env[i];
                cleanup_free char *v = ref_expand(e->value ? e->value : "", &want);
                kv_list_add(&want, e->name, v);
        }
        for (size_t i = 0; i < want.n; i++) {
                const char *w = NULL;
                for (size_t j = want.n; j-- > 0 && w == NULL;)
                        if (strcmp(want.items[j].key, want.items[i].key) == 0)
                                w = want.items[j].value;
                const char *g = kv_list_get(&got, want.items[i].key);
                if (g == NULL || strcmp(g, w) != 0)
                        abort();
        }
        kv_list_release(&want);
        kv_list_release(&got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static bool init;
        if (!init) {
                log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
                init = true;
        }
        cleanup_free char *in = xmalloc(size + 1);
        memcpy(in, data, size);
        in[size] = '\0';
        const char *text = in;
        size_t text_len = strlen(text);
        struct kv_list vars = {0};
        /* NAME=VALUE lines after the first NUL (a line without '=' is a name
         * with an empty value) */
        for (char *line = text_len < size ? in + text_len + 1 : NULL; line && vars.n < MAX_VARS;) {
                char *nl = memchr(line, '\n', (size_t)(in + size - line));
                if (nl != NULL)
                        *nl = '\0';
                char *eq = strchr(line, '=');
                if (eq != NULL)
                        *eq = '\0';
                kv_list_add(&vars, line, eq != NULL ? eq + 1 : "");
                line = nl != NULL ? nl + 1 : NULL;
        }
        check_expand(text, &vars);
        for (size_t i = 0; i < vars.n; i++)
                check_expand(vars.items[i].value, &vars);
        check_env(text, &vars);
        kv_list_release(&vars);
        return 0;
}
