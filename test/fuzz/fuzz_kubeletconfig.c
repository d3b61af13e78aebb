/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the KubeletConfiguration decoder, the Go duration parser and the
 * flag parser.  The first byte picks the target:
 *   'd'  the rest is a duration string;
 *   'f'  the rest is argv, arguments separated by NUL bytes (--config is
 *        skipped: the file decoder is fuzzed from memory);
 *   else the whole input is a KubeletConfiguration (YAML or JSON); its
 *        eviction settings then go through the threshold parser.
 */
#include "config/kubeletconfig.h"
#include "eviction/eviction.h"
#include "util/log.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARGS 64

static struct eviction_kv *kv_of(const struct kv_list *l)
{
        struct eviction_kv *out = calloc(l->n + 1, sizeof(*out));
        for (size_t i = 0; out && i < l->n; i++)
                out[i] = (struct eviction_kv){l->items[i].key, l->items[i].value};
        return out;
}

/* what the kubelet does with them at its start */
static void fuzz_eviction(const struct kubelet_config *cfg)
{
        struct eviction_kv *h = kv_of(&cfg->eviction_hard), *s = kv_of(&cfg->eviction_soft);
        struct eviction_kv *g = kv_of(&cfg->eviction_soft_grace);
        struct eviction_kv *r = kv_of(&cfg->eviction_minimum_reclaim);
        struct eviction_config c;
        ck_error_t err = NULL;
        if (h && s && g && r &&
            eviction_config_parse(h, cfg->eviction_hard.n, s, cfg->eviction_soft.n, g,
                                  cfg->eviction_soft_grace.n, r, cfg->eviction_minimum_reclaim.n,
                                  true, &c, &err) == 0)
                eviction_config_release(&c);
        ck_error_release(&err);
        free(h);
        free(s);
        free(g);
        free(r);
}

static void fuzz_config(const uint8_t *data, size_t size)
{
        struct kubelet_config cfg;
        ck_error_t err = NULL;
        kubelet_config_defaults(&cfg);
        if (kubelet_config_load_buffer(&cfg, "fuzz/kubelet.yaml", (const char *)data, size, &err) ==
            0) {
                /* a loaded config must be consistent enough to validate */
                if (kubelet_config_validate(&cfg, &err) < 0)
                        ck_error_release(&err);
                fuzz_eviction(&cfg);
        }
        ck_error_release(&err);
        kubelet_config_release(&cfg);
}

static void fuzz_duration(const uint8_t *data, size_t size)
{
        char *s = strndup((const char *)data, size);
        int64_t ms = 0;
        ck_error_t err = NULL;
        if (s && config_parse_duration(s, &ms, &err) < 0)
                ck_error_release(&err);
        free(s);
}

static void fuzz_flags(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);
        char *argv[MAX_ARGS + 2];
        int argc = 0;
        if (buf == NULL)
                return;
        memcpy(buf, data, size);
        buf[size] = '\0';
        argv[argc++] = "kubelet";
        for (char *p = buf; p <= buf + size && argc < MAX_ARGS + 1; p += strlen(p) + 1) {
                if (strncmp(p, "--config", 8) == 0)
                        continue;
                argv[argc++] = p;
        }
        argv[argc] = NULL;

        struct kubelet_config cfg;
        enum kubelet_flags_action action;
        ck_error_t err = NULL;
        kubelet_config_defaults(&cfg);
        if (kubelet_flags_parse(&cfg, argc, argv, &action, &err) < 0)
                ck_error_release(&err);
        kubelet_config_release(&cfg);
        free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static int quiet = -1;
        if (quiet < 0) {
                quiet = open("/dev/null", O_WRONLY | O_CLOEXEC);
                log_set_fd(quiet);
        }
        if (size > 0 && data[0] == 'd')
                fuzz_duration(data + 1, size - 1);
        else if (size > 0 && data[0] == 'f')
                fuzz_flags(data + 1, size - 1);
        else
                fuzz_config(data, size);
        log_set_verbosity(0);
        return 0;
}
