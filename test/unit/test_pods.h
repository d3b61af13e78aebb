/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pods for unit tests, through the real decoder: from YAML text, or from
 * JSON text built with printf arguments.  A text that does not parse or
 * decode fails the test.  Header-only: include it after cmocka.h.
 */
#ifndef CK_TEST_PODS_H
#define CK_TEST_PODS_H

#include "api/decode.h"
#include "util/yamljson.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((unused)) static struct pod *test_pod_yaml(const char *yaml)
{
        json_t *j = NULL;
        struct pod *p = NULL;
        ck_error_t err = NULL;
        if (yamljson_parse(yaml, strlen(yaml), &j, &err) < 0)
                fail_msg("yaml: %s", ck_error_msg(err));
        if (api_pod_decode(j, &p, &err) < 0)
                fail_msg("decode: %s", ck_error_msg(err));
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
        struct pod *pod = NULL;
        ck_error_t err = NULL;
        if (api_pod_decode(obj, &pod, &err) < 0)
                fail_msg("decode: %s", ck_error_msg(err));
        json_decref(obj);
        return pod;
}

#endif
