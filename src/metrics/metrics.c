/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The registry, its children and the text exposition (client_golang's
 * Registry.Gather + prometheus/common expfmt's MetricFamilyToText).
 *
 * Families live in an array sorted by name, children in a per-family array
 * sorted by label values (binary search; a family has at most a few hundred
 * children, one per pod or container), so rendering needs no sort except for
 * the samples a collect callback emits.  Label values are kept in label-name
 * order because client_golang sorts a metric's label pairs by name
 * (MakeLabelPairs) and then the metrics of a family by those values.
 *
 * Locks: the registry mutex guards the family array; a family mutex guards
 * its children array; a histogram child has its own mutex so that _count,
 * _sum and the buckets of one scrape agree.  Counter and gauge values are
 * doubles updated with compare-and-swap on their bits (client_golang's
 * valBits).  Collect callbacks run with no lock held.
 */
#include "metrics/metrics.h"

#include "util/xalloc.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct metrics_child {
        const struct metrics_family *fam;
        char **values;         /* n_labels values, in label-name order */
        _Atomic uint64_t bits; /* counter or gauge value: a double's bits */
        /* histograms only */
        pthread_mutex_t lock;
        uint64_t *counts; /* n_bounds + 1, not cumulative; the last is above every bound */
        uint64_t count;
        double sum;
};

struct metrics_family {
        char *name;
        char *help; /* annotated, not escaped */
        enum metrics_type type;
        size_t n_labels;
        char *label_names[METRICS_MAX_LABELS]; /* sorted */
        size_t order[METRICS_MAX_LABELS];      /* the caller's index of label_names[k] */
        double *bounds;
        size_t n_bounds;
        metrics_collect_fn collect;
        void *collect_ctx;
        pthread_mutex_t lock; /* children */
        struct metrics_child **children;
        size_t n_children, cap_children;
};

struct metrics_registry {
        pthread_mutex_t lock;
        struct metrics_family **families; /* sorted by name */
        size_t n, cap;
};

/* One sample from a collect callback. */
struct emitted {
        char **values; /* label-name order, owned */
        double v;
        bool has_ts;
        int64_t ts_ms;
        size_t seq; /* emission order: the first of duplicates wins */
};

struct metrics_emit {
        const struct metrics_family *fam;
        struct emitted *items;
        size_t n, cap;
        size_t dropped;
};

/* client_golang's DefBuckets. */
static const double default_buckets[] = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};

/* ---- Validation ---------------------------------------------------------- */

/* model.IsValidLegacyMetricName: [a-zA-Z_:][a-zA-Z0-9_:]* */
static bool valid_metric_name(const char *s)
{
        if (*s == '\0')
                return false;
        for (size_t i = 0; s[i]; i++) {
                char c = s[i];
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                          c == ':' || (i > 0 && c >= '0' && c <= '9');
                if (!ok)
                        return false;
        }
        return true;
}

/* client_golang's checkLabelName: legacy-valid and not reserved ("__"). */
static bool valid_label_name(const char *s)
{
        if (*s == '\0' || strncmp(s, "__", 2) == 0)
                return false;
        for (size_t i = 0; s[i]; i++) {
                char c = s[i];
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                          (i > 0 && c >= '0' && c <= '9');
                if (!ok)
                        return false;
        }
        return true;
}

/* Go's utf8.ValidString: no overlong forms, surrogates or code points
 * beyond U+10FFFF. */
static bool valid_utf8(const char *s)
{
        static const uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
        const unsigned char *p = (const unsigned char *)s;
        while (*p) {
                if (*p < 0x80) {
                        p++;
                        continue;
                }
                uint32_t cp;
                int n;
                if ((*p & 0xe0) == 0xc0) {
                        cp = *p & 0x1f;
                        n = 1;
                } else if ((*p & 0xf0) == 0xe0) {
                        cp = *p & 0x0f;
                        n = 2;
                } else if ((*p & 0xf8) == 0xf0) {
                        cp = *p & 0x07;
                        n = 3;
                } else {
                        return false;
                }
                /* a NUL fails the continuation test, so nothing past it is read */
                for (int i = 1; i <= n; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (p[i] & 0x3f);
                }
                if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                p += n + 1;
        }
        return true;
}

/* ---- Atomic doubles ------------------------------------------------------ */

static uint64_t dbl_bits(double v)
{
        uint64_t u;
        memcpy(&u, &v, sizeof(u));
        return u;
}

static double bits_dbl(uint64_t u)
{
        double v;
        memcpy(&v, &u, sizeof(v));
        return v;
}

static void atomic_add_double(_Atomic uint64_t *p, double v)
{
        uint64_t old = atomic_load_explicit(p, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(p, &old, dbl_bits(bits_dbl(old) + v),
                                                      memory_order_relaxed, memory_order_relaxed))
                ;
}

/* ---- Registry and families ---------------------------------------------- */

struct metrics_registry *metrics_registry_new(void)
{
        struct metrics_registry *r = xcalloc(1, sizeof(*r));
        pthread_mutex_init(&r->lock, NULL);
        return r;
}

static void child_free(struct metrics_child *c, size_t n_labels)
{
        for (size_t k = 0; k < n_labels; k++)
                free(c->values[k]);
        free(c->values);
        if (c->counts) {
                pthread_mutex_destroy(&c->lock);
                free(c->counts);
        }
        free(c);
}

static void family_free(struct metrics_family *f)
{
        for (size_t i = 0; i < f->n_children; i++)
                child_free(f->children[i], f->n_labels);
        free(f->children);
        for (size_t k = 0; k < f->n_labels; k++)
                free(f->label_names[k]);
        free(f->bounds);
        free(f->help);
        free(f->name);
        pthread_mutex_destroy(&f->lock);
        free(f);
}

void metrics_registry_free(struct metrics_registry *r)
{
        if (r == NULL)
                return;
        for (size_t i = 0; i < r->n; i++)
                family_free(r->families[i]);
        free(r->families);
        pthread_mutex_destroy(&r->lock);
        free(r);
}

/* Index of name, or -(insertion point) - 1.  Registry lock held. */
static long find_family_locked(const struct metrics_registry *r, const char *name)
{
        size_t lo = 0, hi = r->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(r->families[mid]->name, name);
                if (c == 0)
                        return (long)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -(long)lo - 1;
}

static const char *stability_text(enum metrics_stability s)
{
        switch (s) {
        case METRICS_INTERNAL:
                return "INTERNAL";
        case METRICS_BETA:
                return "BETA";
        case METRICS_STABLE:
                return "STABLE";
        case METRICS_RAW:
                return NULL;
        case METRICS_ALPHA:
        default:
                return "ALPHA";
        }
}

/* component-base: markDeprecated ("(Deprecated since v) help") runs before
 * annotateStabilityLevel ("[LEVEL] help"). */
static char *annotated_help(const struct metrics_opts *o)
{
        const char *help = o->help ? o->help : "";
        const char *level = stability_text(o->stability);
        char *dep = o->deprecated_version
                        ? xasprintf("(Deprecated since %s) %s", o->deprecated_version, help)
                        : xstrdup(help);
        if (level == NULL)
                return dep;
        char *out = xasprintf("[%s] %s", level, dep);
        free(dep);
        return out;
}

/* Copies the histogram bounds (or the defaults) into f. */
static int set_bounds(struct metrics_family *f, const struct metrics_opts *o, ck_error_t *err)
{
        const double *b = o->n_buckets ? o->buckets : default_buckets;
        size_t n = o->n_buckets ? o->n_buckets : sizeof(default_buckets) / sizeof(double);
        if (b == NULL)
                return ck_error_make(err, EINVAL, "%zu buckets but no bounds", n);
        if (n > 0 && isinf(b[n - 1]) && b[n - 1] > 0)
                n--; /* client_golang drops a trailing +Inf: it is always there */
        for (size_t i = 0; i < n; i++) {
                if (isnan(b[i]))
                        return ck_error_make(err, EINVAL, "bucket %zu is NaN", i);
                if (i > 0 && !(b[i] > b[i - 1]))
                        return ck_error_make(err, EINVAL,
                                             "histogram buckets must be in increasing order: "
                                             "%g >= %g",
                                             b[i - 1], b[i]);
        }
        f->n_bounds = n;
        f->bounds = xmalloc((n ? n : 1) * sizeof(double));
        if (n)
                memcpy(f->bounds, b, n * sizeof(double));
        return 0;
}

static int set_labels(struct metrics_family *f, const struct metrics_opts *o, ck_error_t *err)
{
        if (o->n_labels > METRICS_MAX_LABELS)
                return ck_error_make(err, EINVAL, "%zu labels, at most %d", o->n_labels,
                                     METRICS_MAX_LABELS);
        if (o->n_labels > 0 && o->label_names == NULL)
                return ck_error_make(err, EINVAL, "%zu labels but no names", o->n_labels);
        for (size_t i = 0; i < o->n_labels; i++) {
                const char *l = o->label_names[i];
                if (l == NULL || !valid_label_name(l))
                        return ck_error_make(err, EINVAL, "invalid label name `%s`",
                                             l ? l : "(null)");
                if (o->type == METRICS_HISTOGRAM && strcmp(l, "le") == 0)
                        return ck_error_make(err, EINVAL,
                                             "`le` is not allowed as label name in histograms");
                for (size_t j = 0; j < i; j++)
                        if (strcmp(o->label_names[j], l) == 0)
                                return ck_error_make(err, EINVAL, "duplicate label name `%s`", l);
        }
        /* insertion sort of the caller's indices by name */
        for (size_t i = 0; i < o->n_labels; i++) {
                size_t j = i;
                while (j > 0 && strcmp(o->label_names[f->order[j - 1]], o->label_names[i]) > 0) {
                        f->order[j] = f->order[j - 1];
                        j--;
                }
                f->order[j] = i;
        }
        f->n_labels = o->n_labels;
        for (size_t k = 0; k < f->n_labels; k++)
                f->label_names[k] = xstrdup(o->label_names[f->order[k]]);
        return 0;
}

static struct metrics_child *child_new(const struct metrics_family *f, const char *const *key)
{
        struct metrics_child *c = xcalloc(1, sizeof(*c));
        c->fam = f;
        if (f->n_labels) {
                c->values = xcalloc(f->n_labels, sizeof(char *));
                for (size_t k = 0; k < f->n_labels; k++)
                        c->values[k] = xstrdup(key[k]);
        }
        atomic_init(&c->bits, dbl_bits(0));
        if (f->type == METRICS_HISTOGRAM) {
                pthread_mutex_init(&c->lock, NULL);
                c->counts = xcalloc(f->n_bounds + 1, sizeof(uint64_t));
        }
        return c;
}

int metrics_register(struct metrics_registry *r, const struct metrics_opts *o,
                     struct metrics_family **out, ck_error_t *err)
{
        if (o->name == NULL || !valid_metric_name(o->name))
                return ck_error_make(err, EINVAL, "register metric: invalid name `%s`",
                                     o->name ? o->name : "(null)");
        if (o->type != METRICS_COUNTER && o->type != METRICS_GAUGE && o->type != METRICS_HISTOGRAM)
                return ck_error_make(err, EINVAL, "register metric `%s`: unknown type %d", o->name,
                                     (int)o->type);
        if (o->type == METRICS_HISTOGRAM && o->collect)
                return ck_error_make(
                    err, EINVAL, "register metric `%s`: a histogram cannot be collected", o->name);
        struct metrics_family *f = xcalloc(1, sizeof(*f));
        pthread_mutex_init(&f->lock, NULL);
        f->type = o->type;
        f->collect = o->collect;
        f->collect_ctx = o->collect_ctx;
        if (set_labels(f, o, err) < 0 ||
            (f->type == METRICS_HISTOGRAM && set_bounds(f, o, err) < 0)) {
                family_free(f);
                return ck_error_wrap(err, "register metric `%s`", o->name);
        }
        f->name = xstrdup(o->name);
        f->help = annotated_help(o);
        if (f->n_labels == 0 && f->collect == NULL) {
                /* a plain Counter/Gauge/Histogram: exposed from registration */
                f->children = xmalloc(sizeof(*f->children));
                f->children[0] = child_new(f, NULL);
                f->n_children = f->cap_children = 1;
        }

        pthread_mutex_lock(&r->lock);
        long i = find_family_locked(r, f->name);
        if (i >= 0) {
                pthread_mutex_unlock(&r->lock);
                family_free(f);
                return ck_error_make(err, EEXIST,
                                     "register metric `%s`: duplicate metrics collector "
                                     "registration attempted",
                                     o->name);
        }
        size_t at = (size_t)(-i - 1);
        if (r->n == r->cap) {
                r->cap = r->cap ? r->cap * 2 : 16;
                r->families = xrealloc(r->families, r->cap * sizeof(*r->families));
        }
        memmove(&r->families[at + 1], &r->families[at], (r->n - at) * sizeof(*r->families));
        r->families[at] = f;
        r->n++;
        pthread_mutex_unlock(&r->lock);
        if (out)
                *out = f;
        return 0;
}

/* ---- Children ------------------------------------------------------------ */

static int cmp_values(char *const *a, char *const *b, size_t n)
{
        for (size_t k = 0; k < n; k++) {
                int c = strcmp(a[k], b[k]);
                if (c)
                        return c;
        }
        return 0;
}

/* Index of the child with key, or -(insertion point) - 1.  Family lock held. */
static long find_child_locked(const struct metrics_family *f, char *const *key)
{
        size_t lo = 0, hi = f->n_children;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = cmp_values(f->children[mid]->values, key, f->n_labels);
                if (c == 0)
                        return (long)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -(long)lo - 1;
}

/* The caller's values in label-name order, checked.  Returns the index of
 * the first bad label, or -1 when all are good. */
static long sorted_key(const struct metrics_family *f, const char *const *values,
                       const char *key[METRICS_MAX_LABELS])
{
        for (size_t k = 0; k < f->n_labels; k++) {
                const char *v = values ? values[f->order[k]] : NULL;
                if (v == NULL || !valid_utf8(v))
                        return (long)k;
                key[k] = v;
        }
        return -1;
}

int metrics_child_get(struct metrics_family *f, const char *const *values,
                      struct metrics_child **out, ck_error_t *err)
{
        const char *key[METRICS_MAX_LABELS];
        long bad = sorted_key(f, values, key);
        if (bad >= 0)
                return ck_error_make(err, EINVAL,
                                     "metric `%s`: label `%s`: value missing or not valid UTF-8",
                                     f->name, f->label_names[bad]);
        pthread_mutex_lock(&f->lock);
        long i = find_child_locked(f, (char *const *)key);
        if (i < 0) {
                size_t at = (size_t)(-i - 1);
                if (f->n_children == f->cap_children) {
                        f->cap_children = f->cap_children ? f->cap_children * 2 : 8;
                        f->children = xrealloc(f->children, f->cap_children * sizeof(*f->children));
                }
                memmove(&f->children[at + 1], &f->children[at],
                        (f->n_children - at) * sizeof(*f->children));
                f->children[at] = child_new(f, key);
                f->n_children++;
                i = (long)at;
        }
        *out = f->children[i];
        pthread_mutex_unlock(&f->lock);
        return 0;
}

bool metrics_child_delete(struct metrics_family *f, const char *const *values)
{
        const char *key[METRICS_MAX_LABELS];
        if (sorted_key(f, values, key) >= 0)
                return false;
        pthread_mutex_lock(&f->lock);
        long i = find_child_locked(f, (char *const *)key);
        struct metrics_child *c = NULL;
        if (i >= 0) {
                c = f->children[i];
                memmove(&f->children[i], &f->children[i + 1],
                        (f->n_children - (size_t)i - 1) * sizeof(*f->children));
                f->n_children--;
        }
        pthread_mutex_unlock(&f->lock);
        if (c == NULL)
                return false;
        child_free(c, f->n_labels);
        return true;
}

void metrics_counter_inc(struct metrics_child *c)
{
        atomic_add_double(&c->bits, 1);
}

void metrics_counter_add(struct metrics_child *c, double v)
{
        if (v < 0)
                return;
        atomic_add_double(&c->bits, v);
}

void metrics_gauge_set(struct metrics_child *c, double v)
{
        atomic_store_explicit(&c->bits, dbl_bits(v), memory_order_relaxed);
}

void metrics_gauge_add(struct metrics_child *c, double v)
{
        atomic_add_double(&c->bits, v);
}

double metrics_child_value(const struct metrics_child *c)
{
        return bits_dbl(atomic_load_explicit(&c->bits, memory_order_relaxed));
}

void metrics_histogram_observe(struct metrics_child *c, double v)
{
        const struct metrics_family *f = c->fam;
        if (f->type != METRICS_HISTOGRAM)
                return;
        /* sort.SearchFloat64s: the first bound >= v; NaN compares false
         * everywhere and lands above every bound */
        size_t lo = 0, hi = f->n_bounds;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (f->bounds[mid] >= v)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        pthread_mutex_lock(&c->lock);
        c->counts[lo]++;
        c->count++;
        c->sum += v;
        pthread_mutex_unlock(&c->lock);
}

/* ---- Collect callbacks --------------------------------------------------- */

static void emit_sample(struct metrics_emit *e, const char *const *values, double v, bool has_ts,
                        int64_t ts_ms)
{
        const struct metrics_family *f = e->fam;
        const char *key[METRICS_MAX_LABELS];
        if (sorted_key(f, values, key) >= 0) {
                e->dropped++;
                return;
        }
        if (e->n == e->cap) {
                e->cap = e->cap ? e->cap * 2 : 16;
                e->items = xrealloc(e->items, e->cap * sizeof(*e->items));
        }
        struct emitted *it = &e->items[e->n];
        it->values = f->n_labels ? xcalloc(f->n_labels, sizeof(char *)) : NULL;
        for (size_t k = 0; k < f->n_labels; k++)
                it->values[k] = xstrdup(key[k]);
        it->v = v;
        it->has_ts = has_ts;
        it->ts_ms = ts_ms;
        it->seq = e->n;
        e->n++;
}

void metrics_emit(struct metrics_emit *e, const char *const *values, double v)
{
        emit_sample(e, values, v, false, 0);
}

void metrics_emit_at(struct metrics_emit *e, const char *const *values, double v,
                     int64_t timestamp_ms)
{
        emit_sample(e, values, v, true, timestamp_ms);
}

static void emitted_free_values(struct emitted *it, size_t n_labels)
{
        for (size_t k = 0; k < n_labels; k++)
                free(it->values[k]);
        free(it->values);
        it->values = NULL;
}

static int cmp_emitted(const void *a, const void *b, void *arg)
{
        const struct emitted *x = a, *y = b;
        int c = cmp_values(x->values, y->values, *(const size_t *)arg);
        if (c)
                return c;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Runs the family's collect callback: e->items sorted, duplicates dropped. */
static void collect_family(const struct metrics_family *f, struct metrics_emit *e)
{
        e->fam = f;
        if (f->collect == NULL)
                return;
        f->collect(f->collect_ctx, e);
        size_t n_labels = f->n_labels;
        if (e->n > 1)
                qsort_r(e->items, e->n, sizeof(*e->items), cmp_emitted, &n_labels);
        size_t o = 0;
        for (size_t i = 0; i < e->n; i++) {
                if (o > 0 &&
                    cmp_values(e->items[o - 1].values, e->items[i].values, n_labels) == 0) {
                        emitted_free_values(&e->items[i], n_labels);
                        e->dropped++;
                        continue;
                }
                e->items[o++] = e->items[i];
        }
        e->n = o;
}

/* ---- Text exposition ----------------------------------------------------- */

void metrics_buf_release(struct metrics_buf *b)
{
        free(b->data);
        b->data = NULL;
        b->len = b->cap = 0;
}

static void buf_put(struct metrics_buf *b, const char *s, size_t n)
{
        if (b->len + n + 1 > b->cap) {
                size_t cap = b->cap ? b->cap : 4096;
                while (cap < b->len + n + 1)
                        cap *= 2;
                b->data = xrealloc(b->data, cap);
                b->cap = cap;
        }
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
}

static void buf_puts(struct metrics_buf *b, const char *s)
{
        buf_put(b, s, strlen(s));
}

/* expfmt's writeEscapedString: `\` and newline, and `"` in label values. */
static void buf_put_escaped(struct metrics_buf *b, const char *s, bool quote)
{
        const char *run = s;
        for (; *s; s++) {
                const char *rep = NULL;
                if (*s == '\\')
                        rep = "\\\\";
                else if (*s == '\n')
                        rep = "\\n";
                else if (quote && *s == '"')
                        rep = "\\\"";
                if (rep == NULL)
                        continue;
                buf_put(b, run, (size_t)(s - run));
                buf_puts(b, rep);
                run = s + 1;
        }
        buf_put(b, run, (size_t)(s - run));
}

/* Whether the decimal d[0..n) * 10^(exp10 - n + 1) reads back as v.  The
 * text has no decimal point, so the locale does not matter. */
static bool reads_back(const char *d, int n, int exp10, double v)
{
        char buf[48];
        snprintf(buf, sizeof(buf), "%.*se%d", n, d, exp10 - n + 1);
        return strtod(buf, NULL) == v;
}

/* Go's shortest digits of v (finite, > 0): the fewest digits that read back
 * as v, the closest to v among those.  glibc's printf rounds correctly, so
 * for each length the closest candidate is "%.*e"; when it does not read
 * back, the one on the other side of v still may: at a power of two the
 * interval that reads back as v is half as wide below v as above, so the
 * candidate just above can be the shortest (2^-1017 is 7.120236347223045e-307
 * in Go, 17 digits by printf alone).  Writes the digits without a point and
 * without trailing zeros, and dp, the position of the point (value =
 * 0.d1d2... * 10^dp). */
static void shortest_digits(double v, char digits[24], int *nd, int *dp)
{
        char buf[40];
        int n = 0, exp10 = 0;
        for (int prec = 0; prec < 17; prec++) {
                snprintf(buf, sizeof(buf), "%.*e", prec, v);
                /* buf: d[.ddd]e[+-]xx (the point is the locale's: skip non-digits) */
                const char *p = buf;
                for (n = 0; *p && *p != 'e'; p++)
                        if (*p >= '0' && *p <= '9' && n < 23)
                                digits[n++] = *p;
                exp10 = *p == 'e' ? atoi(p + 1) : 0;
                double back = strtod(buf, NULL);
                if (back == v)
                        break;
                if (back > v)
                        continue; /* above v the interval is never the narrower side */
                int i = n - 1;
                for (; i >= 0 && digits[i] == '9'; i--)
                        digits[i] = '0';
                if (i >= 0) {
                        digits[i]++;
                } else { /* 99.9 + 1 = 100.0: one more digit before the point */
                        digits[0] = '1';
                        exp10++;
                }
                if (reads_back(digits, n, exp10, v))
                        break;
        }
        while (n > 1 && digits[n - 1] == '0')
                n--;
        digits[n] = '\0';
        *nd = n;
        *dp = exp10 + 1;
}

size_t metrics_format_float(double v, char buf[METRICS_FLOAT_BUF])
{
        const char *fixed = NULL;
        if (isnan(v))
                fixed = "NaN";
        else if (isinf(v))
                fixed = v > 0 ? "+Inf" : "-Inf";
        else if (v == 0)
                fixed = "0"; /* writeFloat's f == 0 case, -0 included */
        if (fixed) {
                size_t n = strlen(fixed);
                memcpy(buf, fixed, n + 1);
                return n;
        }
        char d[24];
        int nd, dp;
        shortest_digits(fabs(v), d, &nd, &dp);
        size_t o = 0;
        if (v < 0)
                buf[o++] = '-';
        int exp10 = dp - 1;
        if (exp10 < -4 || exp10 >= 6) {
                /* %e: d.ddde±XX, at least two exponent digits */
                buf[o++] = d[0];
                if (nd > 1) {
                        buf[o++] = '.';
                        memcpy(buf + o, d + 1, (size_t)nd - 1);
                        o += (size_t)nd - 1;
                }
                int n = snprintf(buf + o, METRICS_FLOAT_BUF - o, "e%c%02d", exp10 < 0 ? '-' : '+',
                                 abs(exp10));
                return o + (size_t)n;
        }
        if (dp <= 0) {
                buf[o++] = '0';
                buf[o++] = '.';
                for (int i = 0; i < -dp; i++)
                        buf[o++] = '0';
                memcpy(buf + o, d, (size_t)nd);
                o += (size_t)nd;
        } else {
                for (int i = 0; i < dp; i++)
                        buf[o++] = i < nd ? d[i] : '0';
                if (dp < nd) {
                        buf[o++] = '.';
                        memcpy(buf + o, d + dp, (size_t)(nd - dp));
                        o += (size_t)(nd - dp);
                }
        }
        buf[o] = '\0';
        return o;
}

static void buf_put_float(struct metrics_buf *b, double v)
{
        char tmp[METRICS_FLOAT_BUF];
        size_t n = metrics_format_float(v, tmp);
        buf_put(b, tmp, n);
}

/* One line: name+suffix{labels[,le="..."]} value[ timestamp] */
static void put_sample(struct metrics_buf *b, const struct metrics_family *f, const char *suffix,
                       char *const *values, const char *le, double v, bool has_ts, int64_t ts_ms)
{
        buf_puts(b, f->name);
        buf_puts(b, suffix);
        if (f->n_labels > 0 || le) {
                buf_put(b, "{", 1);
                for (size_t k = 0; k < f->n_labels; k++) {
                        if (k > 0)
                                buf_put(b, ",", 1);
                        buf_puts(b, f->label_names[k]);
                        buf_put(b, "=\"", 2);
                        buf_put_escaped(b, values[k], true);
                        buf_put(b, "\"", 1);
                }
                if (le) {
                        if (f->n_labels > 0)
                                buf_put(b, ",", 1);
                        buf_put(b, "le=\"", 4);
                        buf_puts(b, le);
                        buf_put(b, "\"", 1);
                }
                buf_put(b, "}", 1);
        }
        buf_put(b, " ", 1);
        buf_put_float(b, v);
        if (has_ts) {
                char ts[24];
                int n = snprintf(ts, sizeof(ts), " %" PRId64, ts_ms);
                buf_put(b, ts, (size_t)n);
        }
        buf_put(b, "\n", 1);
}

static void put_histogram(struct metrics_buf *b, const struct metrics_family *f,
                          struct metrics_child *c)
{
        char le[METRICS_FLOAT_BUF];
        pthread_mutex_lock(&c->lock);
        uint64_t cum = 0;
        for (size_t i = 0; i < f->n_bounds; i++) {
                cum += c->counts[i];
                metrics_format_float(f->bounds[i], le);
                put_sample(b, f, "_bucket", c->values, le, (double)cum, false, 0);
        }
        cum += c->counts[f->n_bounds];
        put_sample(b, f, "_bucket", c->values, "+Inf", (double)cum, false, 0);
        put_sample(b, f, "_sum", c->values, NULL, c->sum, false, 0);
        put_sample(b, f, "_count", c->values, NULL, (double)c->count, false, 0);
        pthread_mutex_unlock(&c->lock);
}

static void put_header(struct metrics_buf *b, const struct metrics_family *f)
{
        static const char *const types[] = {
            [METRICS_COUNTER] = "counter",
            [METRICS_GAUGE] = "gauge",
            [METRICS_HISTOGRAM] = "histogram",
        };
        buf_puts(b, "# HELP ");
        buf_puts(b, f->name);
        buf_put(b, " ", 1);
        buf_put_escaped(b, f->help, false);
        buf_puts(b, "\n# TYPE ");
        buf_puts(b, f->name);
        buf_put(b, " ", 1);
        buf_puts(b, types[f->type]);
        buf_put(b, "\n", 1);
}

/* Renders one family: its children merged with what collect emitted, in
 * label-value order; a tuple held as a child wins over an emitted one.
 * Returns the number of emitted samples dropped. */
static size_t render_family(struct metrics_family *f, struct metrics_buf *b)
{
        struct metrics_emit e = {0};
        collect_family(f, &e);
        pthread_mutex_lock(&f->lock);
        if (f->n_children + e.n > 0)
                put_header(b, f);
        size_t i = 0, j = 0;
        while (i < f->n_children || j < e.n) {
                int c = i >= f->n_children ? 1
                        : j >= e.n
                            ? -1
                            : cmp_values(f->children[i]->values, e.items[j].values, f->n_labels);
                if (c > 0) {
                        struct emitted *it = &e.items[j++];
                        put_sample(b, f, "", it->values, NULL, it->v, it->has_ts, it->ts_ms);
                        continue;
                }
                if (c == 0) {
                        j++;
                        e.dropped++;
                }
                struct metrics_child *ch = f->children[i++];
                if (f->type == METRICS_HISTOGRAM)
                        put_histogram(b, f, ch);
                else
                        put_sample(b, f, "", ch->values, NULL, metrics_child_value(ch), false, 0);
        }
        pthread_mutex_unlock(&f->lock);
        for (size_t k = 0; k < e.n; k++)
                emitted_free_values(&e.items[k], f->n_labels);
        free(e.items);
        return e.dropped;
}

size_t metrics_render(struct metrics_registry *r, struct metrics_buf *out)
{
        /* families are never removed before metrics_registry_free, so a copy
         * of the array lets collect callbacks run without the registry lock */
        pthread_mutex_lock(&r->lock);
        size_t n = r->n;
        struct metrics_family **fams = xmalloc((n ? n : 1) * sizeof(*fams));
        if (n)
                memcpy(fams, r->families, n * sizeof(*fams));
        pthread_mutex_unlock(&r->lock);
        size_t dropped = 0;
        for (size_t i = 0; i < n; i++)
                dropped += render_family(fams[i], out);
        free(fams);
        return dropped;
}

/* ---- Bucket helpers ------------------------------------------------------ */

void metrics_exponential_buckets(double start, double factor, size_t count, double *out)
{
        for (size_t i = 0; i < count; i++) {
                out[i] = start;
                start *= factor;
        }
}

void metrics_linear_buckets(double start, double width, size_t count, double *out)
{
        for (size_t i = 0; i < count; i++) {
                out[i] = start;
                start += width;
        }
}
