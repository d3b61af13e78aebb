/* SPDX-License-Identifier: Apache-2.0 */
/* Upstream pkg/kubelet/cm/cgroup_manager_linux.go: ToSystemd (with
 * libcontainer's ExpandSlice), escapeSystemdCgroupName, and the reading back
 * of ParseSystemdToCgroupName / unescapeSystemdCgroupName. */
#include "util/cgroup_name.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define SLICE_SUFFIX ".slice"

/* The components of name, each with '-' escaped as '_', joined by '-'
 * (the unit name without its suffix); "" for the root. */
static char *unit_stem(const char *name)
{
        size_t len = strlen(name);
        char *out = xmalloc(len + 1);
        size_t n = 0;
        for (const char *p = name; *p;) {
                while (*p == '/')
                        p++;
                size_t c = strcspn(p, "/");
                if (c == 0)
                        break;
                if (n > 0)
                        out[n++] = '-';
                for (size_t i = 0; i < c; i++)
                        out[n++] = p[i] == '-' ? '_' : p[i];
                p += c;
        }
        out[n] = '\0';
        return out;
}

char *cgroup_name_literal(const char *name, bool systemd)
{
        if (!systemd)
                return xstrdup(name);
        char *stem = unit_stem(name);
        if (*stem == '\0')
                return stem;
        /* ExpandSlice: "a-b-c" lives at /a.slice/a-b.slice/a-b-c.slice */
        size_t len = strlen(stem);
        size_t parts = 1;
        for (const char *p = stem; *p; p++)
                parts += *p == '-';
        char *out = xmalloc(parts * (len + 1 + sizeof(SLICE_SUFFIX)) + 1);
        size_t n = 0;
        for (size_t i = 0; i <= len; i++) {
                if (stem[i] != '-' && stem[i] != '\0')
                        continue;
                out[n++] = '/';
                memcpy(out + n, stem, i);
                n += i;
                memcpy(out + n, SLICE_SUFFIX, sizeof(SLICE_SUFFIX) - 1);
                n += sizeof(SLICE_SUFFIX) - 1;
        }
        out[n] = '\0';
        free(stem);
        return out;
}

char *cgroup_name_unit(const char *name)
{
        char *stem = unit_stem(name);
        char *unit = xasprintf("%s" SLICE_SUFFIX, *stem ? stem : "-");
        free(stem);
        return unit;
}

char *cgroup_name_child(const char *entry, bool systemd)
{
        if (!systemd)
                return xstrdup(entry);
        size_t len = strlen(entry), slen = sizeof(SLICE_SUFFIX) - 1;
        if (len <= slen || strcmp(entry + len - slen, SLICE_SUFFIX) != 0)
                return NULL;
        len -= slen;
        const char *dash = memrchr(entry, '-', len);
        const char *last = dash ? dash + 1 : entry;
        size_t n = (size_t)(entry + len - last);
        if (n == 0)
                return NULL;
        char *out = xmalloc(n + 1);
        for (size_t i = 0; i < n; i++)
                out[i] = last[i] == '_' ? '-' : last[i];
        out[n] = '\0';
        return out;
}
