/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the env file parser (util/envfile.h) of fileKeyRef: the file is
 * what a container wrote, so anything goes.  Checks: no crash, an error
 * always says why, a value found is a substring of the file as far as its
 * lines go (the parser copies, never invents), and a key written as the
 * file's first line with a quoted value is found.
 */
#include "util/envfile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* the first line is the key, the rest the file */
        const char *buf = (const char *)data;
        const char *nl = memchr(buf, '\n', size);
        size_t klen = nl ? (size_t)(nl - buf) : size;
        char *key = malloc(klen + 1);
        if (key == NULL)
                abort();
        memcpy(key, buf, klen);
        key[klen] = '\0';
        const char *file = nl ? nl + 1 : buf + size;
        size_t flen = size - (size_t)(file - buf);
        char *value = NULL;
        ck_error_t err = NULL;
        int r = envfile_lookup(file, flen, key, &value, &err);
        if (r < 0) {
                if (err == NULL || value != NULL)
                        abort();
                ck_error_release(&err);
        } else if (value != NULL) {
                if (value[0] == '\0')
                        abort(); /* an empty value reads as not set */
                /* each line of the value is in the file */
                char *save = NULL, *copy = strdup(value);
                for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                        if (memmem(file, flen, l, strlen(l)) == NULL)
                                abort();
                free(copy);
                free(value);
        }
        /* a well-formed first line is always found */
        if (klen > 0 && memchr(key, '=', klen) == NULL && memchr(key, '\'', klen) == NULL &&
            memchr(key, '#', klen) == NULL && memchr(key, ' ', klen) == NULL &&
            memchr(key, '\t', klen) == NULL && memchr(key, '\r', klen) == NULL &&
            memchr(key, '\0', klen) == NULL) {
                size_t n = klen * 2 + 8;
                char *doc = malloc(n);
                if (doc == NULL)
                        abort();
                int len = snprintf(doc, n, "%s='v'\n", key);
                char *v = NULL;
                if (envfile_lookup(doc, (size_t)len, key, &v, &err) < 0 || v == NULL ||
                    strcmp(v, "v") != 0)
                        abort();
                free(v);
                free(doc);
        }
        free(key);
        return 0;
}
