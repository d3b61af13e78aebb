/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML to a jansson tree, typed the way Kubernetes' sigs.k8s.io/yaml types
 * it: go-yaml v2 (YAML 1.1) resolves each plain scalar, then the tree is
 * written as JSON.  So unquoted y/yes/on/true are true, n/no/off/false are
 * false, ~/null/empty are null, 0x1F / 0o17 / 017 / 0b101 / 1_000 are
 * integers, 1e3 and 1.5 are reals; quoted and block scalars are strings.
 * Non-string mapping keys become their text ("true", "1", "1.5").
 *
 * Unlike sigs.k8s.io/yaml's non-strict YAMLToJSON, a key defined twice in
 * one mapping is an error (a manifest that says two things is a mistake).
 */
#include "util/yamljson.h"
#include "util/yamljson_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* Deeper than any real manifest; keeps recursion far from the stack's end. */
#define YAMLJSON_MAX_DEPTH 200
/* Nodes an input may produce through aliases and merges (billion laughs). */
#define YAMLJSON_MAX_ALIAS_NODES 100000

#define TAG_PREFIX "tag:yaml.org,2002:"

struct anchor {
        char *name;
        json_t *value;
        size_t nodes;
};

struct builder {
        yaml_parser_t parser;
        struct anchor *anchors;
        size_t n_anchors, cap_anchors;
        size_t alias_nodes;
        ck_error_t *err;
};

static int mark_error(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int mark_error(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        cleanup_free char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        return ck_error_make(b->err, 0, "line %zu, column %zu: %s", m->line + 1, m->column + 1,
                             msg);
}

static int parser_error(struct builder *b)
{
        yaml_parser_t *p = &b->parser;
        const char *problem = p->problem ? p->problem : "unknown YAML error";
        switch (p->error) {
        case YAML_MEMORY_ERROR:
                return ck_error_make(b->err, ENOMEM, "YAML parser");
        case YAML_READER_ERROR:
                return ck_error_make(b->err, 0, "byte offset %zu: %s", p->problem_offset, problem);
        default:
                break;
        }
        if (p->context)
                return ck_error_make(
                    b->err, 0, "line %zu, column %zu: %s (%s at line %zu, column %zu)",
                    p->problem_mark.line + 1, p->problem_mark.column + 1, problem, p->context,
                    p->context_mark.line + 1, p->context_mark.column + 1);
        return mark_error(b, &p->problem_mark, "%s", problem);
}

static int next_event(struct builder *b, yaml_event_t *ev)
{
        if (!yaml_parser_parse(&b->parser, ev))
                return parser_error(b);
        return 0;
}

/* Builds the JSON value of a scalar event. *is_merge is set for a `<<` key. */
static int build_scalar(struct builder *b, yaml_event_t *ev, json_t **out, bool *is_merge)
{
        const char *value = (const char *)ev->data.scalar.value;
        size_t len = ev->data.scalar.length;
        const char *tag = (const char *)ev->data.scalar.tag;
        *is_merge = false;

        bool resolve = false;
        const char *want = NULL; /* explicit core tag */
        if (tag == NULL) {
                resolve = ev->data.scalar.plain_implicit;
        } else if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) == 0) {
                want = tag + strlen(TAG_PREFIX);
                if (strcmp(want, "binary") == 0) {
                        *out = yamljson_decode_binary(value, len);
                        if (*out == NULL)
                                return mark_error(b, &ev->start_mark,
                                                  "!!binary value contains invalid base64 data");
                        return 0;
                }
                if (strcmp(want, "merge") == 0 && strcmp(value, "<<") == 0) {
                        *is_merge = true;
                        *out = json_string("<<");
                        return 0;
                }
                resolve = strcmp(want, "int") == 0 || strcmp(want, "float") == 0 ||
                          strcmp(want, "bool") == 0 || strcmp(want, "null") == 0;
                if (strcmp(want, "str") != 0 && strcmp(want, "timestamp") != 0 && !resolve)
                        want = NULL; /* !!map etc. on a scalar: keep the text */
        }

        if (resolve && strlen(value) == len) {
                struct scalar s;
                yamljson_resolve_plain(value, &s);
                if (want != NULL) {
                        const char *got = yamljson_short_tag(s.type) + 2;
                        bool ok = strcmp(want, got) == 0;
                        if (!ok && strcmp(want, "float") == 0 && s.type == S_INT) {
                                s.type = S_FLOAT;
                                s.f = (double)s.i;
                                ok = true;
                        }
                        if (!ok)
                                return mark_error(b, &ev->start_mark,
                                                  "cannot decode %s `%s` as a !!%s",
                                                  yamljson_short_tag(s.type), value, want);
                } else if (s.type == S_MERGE) {
                        *is_merge = true;
                        s.type = S_STRING;
                }
                if (s.type != S_STRING && s.type != S_MERGE) {
                        *out = yamljson_scalar_to_json(&s);
                        if (*out == NULL)
                                return mark_error(b, &ev->start_mark,
                                                  "unsupported value: %s (not representable in "
                                                  "JSON)",
                                                  value);
                        return 0;
                }
        }
        *out = json_stringn(value, len);
        if (*out == NULL)
                return mark_error(b, &ev->start_mark, "invalid UTF-8 in string");
        return 0;
}

/* ---- Anchors ------------------------------------------------------------- */

static void anchor_add(struct builder *b, const char *name, json_t *value, size_t nodes)
{
        if (b->n_anchors == b->cap_anchors) {
                b->cap_anchors = b->cap_anchors ? b->cap_anchors * 2 : 8;
                b->anchors = xrealloc(b->anchors, b->cap_anchors * sizeof(*b->anchors));
        }
        b->anchors[b->n_anchors++] =
            (struct anchor){.name = xstrdup(name), .value = json_incref(value), .nodes = nodes};
}

static const struct anchor *anchor_find(struct builder *b, const char *name)
{
        for (size_t i = b->n_anchors; i > 0; i--)
                if (strcmp(b->anchors[i - 1].name, name) == 0)
                        return &b->anchors[i - 1];
        return NULL;
}

static int charge_alias(struct builder *b, const yaml_mark_t *m, size_t nodes)
{
        b->alias_nodes += nodes;
        if (b->alias_nodes > YAMLJSON_MAX_ALIAS_NODES)
                return mark_error(b, m, "document contains excessive aliasing");
        return 0;
}

/* ---- Tree building ------------------------------------------------------- */

static int parse_node(struct builder *b, yaml_event_t *ev, int depth, json_t **out, size_t *nodes);

/* The text a non-string key becomes, as sigs.k8s.io/yaml writes it. */
static int key_text(struct builder *b, const yaml_mark_t *m, json_t *key, char **out, size_t *len)
{
        switch (json_typeof(key)) {
        case JSON_STRING:
                *len = json_string_length(key);
                *out = xmalloc(*len + 1);
                memcpy(*out, json_string_value(key), *len + 1);
                return 0;
        case JSON_INTEGER:
                *out = xasprintf("%" PRId64, (int64_t)json_integer_value(key));
                break;
        case JSON_REAL:
                *out = yamljson_float32_text(json_real_value(key));
                break;
        case JSON_TRUE:
                *out = xstrdup("true");
                break;
        case JSON_FALSE:
                *out = xstrdup("false");
                break;
        case JSON_NULL:
                return mark_error(b, m, "unsupported map key: null");
        default:
                return mark_error(b, m, "unsupported map key: a %s",
                                  json_is_object(key) ? "mapping" : "sequence");
        }
        *len = strlen(*out);
        return 0;
}

/* `<<: value`: value's keys are set (earlier maps in a list win); keys
 * written later in the mapping override them. */
static int merge_into(struct builder *b, const yaml_mark_t *m, json_t *obj, json_t *src)
{
        static const char *const msg = "map merge requires map or sequence of maps as the value";
        if (json_is_array(src)) {
                for (size_t i = json_array_size(src); i > 0; i--)
                        if (!json_is_object(json_array_get(src, i - 1)))
                                return mark_error(b, m, "%s", msg);
                for (size_t i = json_array_size(src); i > 0; i--)
                        if (merge_into(b, m, obj, json_array_get(src, i - 1)) < 0)
                                return -1;
                return 0;
        }
        if (!json_is_object(src))
                return mark_error(b, m, "%s", msg);
        const char *k;
        size_t klen;
        json_t *v;
        json_object_keylen_foreach(src, k, klen, v)
        {
                if (charge_alias(b, m, 1) < 0)
                        return -1;
                json_object_setn_new(obj, k, klen, json_deep_copy(v));
        }
        return 0;
}

static int parse_mapping(struct builder *b, int depth, json_t **out, size_t *nodes)
{
        cleanup_json json_t *obj = json_object();
        cleanup_json json_t *seen = json_object(); /* explicit keys -> line */
        for (;;) {
                yaml_event_t kev;
                if (next_event(b, &kev) < 0)
                        return -1;
                if (kev.type == YAML_MAPPING_END_EVENT) {
                        yaml_event_delete(&kev);
                        break;
                }
                yaml_mark_t kmark = kev.start_mark;
                json_t *key = NULL;
                bool is_merge = false;
                int r;
                if (kev.type == YAML_SCALAR_EVENT) {
                        r = build_scalar(b, &kev, &key, &is_merge);
                        if (r == 0 && kev.data.scalar.anchor)
                                anchor_add(b, (const char *)kev.data.scalar.anchor, key, 1);
                        yaml_event_delete(&kev);
                        (*nodes)++;
                } else {
                        r = parse_node(b, &kev, depth + 1, &key, nodes);
                }
                if (r < 0)
                        return -1;
                cleanup_json json_t *k = key;

                yaml_event_t vev;
                if (next_event(b, &vev) < 0)
                        return -1;
                yaml_mark_t vmark = vev.start_mark;
                cleanup_json json_t *value = NULL;
                if (parse_node(b, &vev, depth + 1, &value, nodes) < 0)
                        return -1;

                if (is_merge) {
                        if (merge_into(b, &vmark, obj, value) < 0)
                                return -1;
                        continue;
                }
                cleanup_free char *text = NULL;
                size_t tlen = 0;
                if (key_text(b, &kmark, k, &text, &tlen) < 0)
                        return -1;
                json_t *prev = json_object_getn(seen, text, tlen);
                if (prev)
                        return mark_error(b, &kmark,
                                          "mapping key \"%s\" already defined at line %d", text,
                                          (int)json_integer_value(prev));
                json_object_setn_new(seen, text, tlen, json_integer((json_int_t)kmark.line + 1));
                if (json_object_setn(obj, text, tlen, value) < 0)
                        return mark_error(b, &kmark, "invalid mapping key");
        }
        *out = obj;
        obj = NULL;
        return 0;
}

static int parse_sequence(struct builder *b, int depth, json_t **out, size_t *nodes)
{
        cleanup_json json_t *arr = json_array();
        for (;;) {
                yaml_event_t ev;
                if (next_event(b, &ev) < 0)
                        return -1;
                if (ev.type == YAML_SEQUENCE_END_EVENT) {
                        yaml_event_delete(&ev);
                        break;
                }
                json_t *item = NULL;
                if (parse_node(b, &ev, depth + 1, &item, nodes) < 0)
                        return -1;
                json_array_append_new(arr, item);
        }
        *out = arr;
        arr = NULL;
        return 0;
}

/* Builds the node that starts with *ev (consumed).  *nodes counts the
 * nodes produced, alias expansions included. */
static int parse_node(struct builder *b, yaml_event_t *ev, int depth, json_t **out, size_t *nodes)
{
        yaml_mark_t mark = ev->start_mark;
        if (depth > YAMLJSON_MAX_DEPTH) {
                yaml_event_delete(ev);
                return mark_error(b, &mark, "maximum nesting depth of %d exceeded",
                                  YAMLJSON_MAX_DEPTH);
        }
        size_t before = *nodes;
        cleanup_free char *anchor = NULL;
        int r;
        switch (ev->type) {
        case YAML_SCALAR_EVENT: {
                bool is_merge;
                anchor = xstrdup((const char *)ev->data.scalar.anchor);
                r = build_scalar(b, ev, out, &is_merge);
                yaml_event_delete(ev);
                (*nodes)++;
                break;
        }
        case YAML_ALIAS_EVENT: {
                const struct anchor *a = anchor_find(b, (const char *)ev->data.alias.anchor);
                if (a == NULL) {
                        r = mark_error(b, &mark, "unknown anchor '%s' referenced",
                                       (const char *)ev->data.alias.anchor);
                } else if ((r = charge_alias(b, &mark, a->nodes)) == 0) {
                        *out = json_deep_copy(a->value);
                        *nodes += a->nodes;
                }
                yaml_event_delete(ev);
                return r;
        }
        case YAML_SEQUENCE_START_EVENT:
                anchor = xstrdup((const char *)ev->data.sequence_start.anchor);
                yaml_event_delete(ev);
                (*nodes)++;
                r = parse_sequence(b, depth, out, nodes);
                break;
        case YAML_MAPPING_START_EVENT:
                anchor = xstrdup((const char *)ev->data.mapping_start.anchor);
                yaml_event_delete(ev);
                (*nodes)++;
                r = parse_mapping(b, depth, out, nodes);
                break;
        default: {
                int type = (int)ev->type;
                yaml_event_delete(ev);
                return mark_error(b, &mark, "unexpected YAML event %d", type);
        }
        }
        if (r < 0)
                return -1;
        if (anchor)
                anchor_add(b, anchor, *out, *nodes - before);
        return 0;
}

static int parse_yaml(const char *buf, size_t len, json_t **out, ck_error_t *err)
{
        struct builder b = {.err = err};
        if (!yaml_parser_initialize(&b.parser))
                return ck_error_make(err, ENOMEM, "initialize YAML parser");
        yaml_parser_set_input_string(&b.parser, (const unsigned char *)buf, len);

        int ret = -1;
        json_t *root = NULL;
        yaml_event_t ev;
        /* stream start, then document start or stream end */
        for (;;) {
                if (next_event(&b, &ev) < 0)
                        goto out;
                yaml_event_type_t t = ev.type;
                yaml_event_delete(&ev);
                if (t == YAML_STREAM_END_EVENT) {
                        ck_error_make(err, 0, "empty document");
                        goto out;
                }
                if (t == YAML_DOCUMENT_START_EVENT)
                        break;
        }
        if (next_event(&b, &ev) < 0)
                goto out;
        size_t nodes = 0;
        if (parse_node(&b, &ev, 0, &root, &nodes) < 0)
                goto out;
        if (json_is_null(root)) {
                ck_error_make(err, 0, "empty document");
                goto out;
        }
        *out = root;
        root = NULL;
        ret = 0;
out:
        json_decref(root);
        for (size_t i = 0; i < b.n_anchors; i++) {
                free(b.anchors[i].name);
                json_decref(b.anchors[i].value);
        }
        free(b.anchors);
        yaml_parser_delete(&b.parser);
        return ret;
}

int yamljson_parse(const char *buf, size_t len, json_t **out, ck_error_t *err)
{
        *out = NULL;
        if (buf == NULL || len == 0)
                return ck_error_make(err, 0, "empty document");
        size_t i = 0;
        while (i < len && isspace((unsigned char)buf[i]))
                i++;
        /* JSON is YAML, but the JSON parser keeps numbers exact (as
         * k8s.io/apimachinery's ToJSON passes JSON through untouched). */
        if (i < len && buf[i] == '{') {
                json_error_t jerr;
                json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
                if (j) {
                        *out = j;
                        return 0;
                }
                if (parse_yaml(buf, len, out, NULL) == 0)
                        return 0;
                return ck_error_make(err, 0, "line %d, column %d: %s", jerr.line, jerr.column,
                                     jerr.text);
        }
        return parse_yaml(buf, len, out, err);
}

int yamljson_parse_file(const char *path, size_t max_bytes, json_t **out, ck_error_t *err)
{
        *out = NULL;
        cleanup_close int fd = TEMP_FAILURE_RETRY_INT(open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY));
        if (fd < 0)
                return ck_error_make(err, errno, "open `%s`", path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return ck_error_make(err, errno, "stat `%s`", path);
        if (S_ISDIR(st.st_mode))
                return ck_error_make(err, EISDIR, "read `%s`", path);
        if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max_bytes)
                return ck_error_make(err, 0, "`%s` is larger than %zu bytes", path, max_bytes);

        size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 4096;
        if (cap > max_bytes + 1)
                cap = max_bytes + 1;
        cleanup_free char *buf = xmalloc(cap);
        size_t len = 0;
        for (;;) {
                if (len == cap) {
                        if (cap > max_bytes)
                                return ck_error_make(err, 0, "`%s` is larger than %zu bytes", path,
                                                     max_bytes);
                        cap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
                        buf = xrealloc(buf, cap);
                }
                ssize_t n = TEMP_FAILURE_RETRY_INT(read(fd, buf + len, cap - len));
                if (n < 0)
                        return ck_error_make(err, errno, "read `%s`", path);
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        if (len > max_bytes)
                return ck_error_make(err, 0, "`%s` is larger than %zu bytes", path, max_bytes);
        if (yamljson_parse(buf, len, out, err) < 0)
                return ck_error_wrap(err, "parse `%s`", path);
        return 0;
}
