/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pods for unit tests, through the real decoder: from an object, from YAML
 * text, or from JSON text built with printf arguments.  A text that does
 * not parse or an object that does not decode fails the test.  Header-only: include it after
 * cmocka.h.
 */
#ifndef CK_TEST_PODS_H
#define CK_TEST_PODS_H

#include "api/decode.h"
#include "util/yamljson.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The pod obj (borrowed) decodes to. */
__attribute__((unused)) static struct pod *test_pod_object(json_t *obj)
{
        struct pod *p = NULL;
        ck_error_t err = NULL;
        if (api_pod_decode(obj, &p, &err) < 0)
                fail_msg("decode: %s", ck_error_msg(err));
        return p;
}

__attribute__((unused)) static struct pod *test_pod_yaml(const char *yaml)
{
        json_t *j = NULL;
        ck_error_t err = NULL;
        if (yamljson_parse(yaml, strlen(yaml), &j, &err) < 0)
                fail_msg("yaml: %s", ck_error_msg(err));
        struct pod *p = test_pod_object(j);
        json_decref(j);
        return p;
}

__attribute__((unused, format(printf, 1, 2))) static struct pod *test_pod_json(const char *fmt, ...)
{
        char text[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        json_error_t jerr;
        json_t *obj = json_loads(text, 0, &jerr);
        if (obj == NULL)
                fail_msg("bad JSON: %s: %s", jerr.text, text);
        struct pod *pod = test_pod_object(obj);
        json_decref(obj);
        return pod;
}

#endif
