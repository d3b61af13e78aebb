/* SPDX-License-Identifier: Apache-2.0 */
/*
 * $(VAR) expansion with the semantics of upstream's
 * third_party/forked/golang/expansion (used for command, args and env
 * values):
 *   $(NAME)  -> the value of NAME, or "$(NAME)" unchanged when unknown
 *   $$       -> $ (so $$(NAME) is the literal "$(NAME)")
 *   $x       -> "$x" unchanged for any other x; a trailing "$" is kept
 *   "$(" without a closing ")" is kept as is, and scanning resumes right
 *   after the "$(" (so later references still expand).
 */
#include "expansion/expansion.h"

#include "util/xalloc.h"

#include <string.h>

struct buf {
        char *p;
        size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
        if (b->len + n + 1 > b->cap) {
                b->cap = (b->len + n + 1) * 2;
                b->p = xrealloc(b->p, b->cap);
        }
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
}

/* The last entry wins, as assigning into a Go map in order would. */
static const char *lookup(const struct kv_list *vars, const char *name, size_t n)
{
        if (vars == NULL)
                return NULL;
        for (size_t i = vars->n; i-- > 0;) {
                const char *k = vars->items[i].key;
                if (k != NULL && strlen(k) == n && memcmp(k, name, n) == 0)
                        return vars->items[i].value ? vars->items[i].value : "";
        }
        return NULL;
}

static const char *lookup_vars(void *ctx, const char *name, size_t n)
{
        return lookup(ctx, name, n);
}

char *expansion_expand_with(const char *in, expansion_lookup_fn fn, void *ctx)
{
        struct buf b = {0};
        size_t len = strlen(in);
        buf_add(&b, "", 0);

        size_t checkpoint = 0;
        for (size_t cur = 0; cur < len; cur++) {
                if (in[cur] != '$' || cur + 1 >= len)
                        continue;
                buf_add(&b, in + checkpoint, cur - checkpoint);
                const char *rest = in + cur + 1;
                if (rest[0] == '$') {
                        /* escaped operator */
                        buf_add(&b, "$", 1);
                } else if (rest[0] == '(') {
                        const char *close = strchr(rest + 1, ')');
                        if (close != NULL) {
                                size_t n = (size_t)(close - (rest + 1));
                                const char *v = fn(ctx, rest + 1, n);
                                if (v != NULL)
                                        buf_add(&b, v, strlen(v));
                                else
                                        buf_add(&b, in + cur, n + 3); /* "$(" NAME ")" */
                                cur += n + 2;
                                checkpoint = cur + 1;
                                continue;
                        }
                        /* incomplete reference: keep "$(" and go on after it */
                        buf_add(&b, "$(", 2);
                } else {
                        /* not an expression: the operator and the next byte
                         * (upstream converts that byte to a rune, mangling a
                         * non-ASCII byte; here it is copied as is) */
                        buf_add(&b, in + cur, 2);
                }
                cur += 1;
                checkpoint = cur + 1;
        }
        buf_add(&b, in + checkpoint, len - checkpoint);
        return b.p;
}

char *expansion_expand(const char *in, const struct kv_list *vars)
{
        return expansion_expand_with(in, lookup_vars, (void *)vars);
}
