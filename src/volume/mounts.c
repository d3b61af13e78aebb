/* SPDX-License-Identifier: Apache-2.0 */
/* Finding and unmounting the tmpfs volumes of a pod (/proc/self/mountinfo). */
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#define MOUNTINFO "/proc/self/mountinfo"
#define MOUNTINFO_MAX (64 << 20)

/* mountinfo escapes space, tab, newline and backslash as \ooo (octal). */
static void unescape_octal(char *s)
{
        char *out = s;
        for (char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
                    p[3] >= '0' && p[3] <= '7') {
                        *out++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                } else {
                        *out++ = *p;
                }
        }
        *out = '\0';
}

/* Mount point (field 5) and filesystem type (first field after " - ") of one
 * mountinfo line, in place; false if the line is malformed. */
static bool parse_line(char *line, char **mount_point, char **fstype)
{
        char *save = NULL;
        char *f = strtok_r(line, " ", &save);
        for (int i = 1; f != NULL && i < 5; i++)
                f = strtok_r(NULL, " ", &save);
        if (f == NULL)
                return false;
        *mount_point = f;
        while ((f = strtok_r(NULL, " ", &save)) != NULL && strcmp(f, "-") != 0)
                ;
        if (f == NULL || (*fstype = strtok_r(NULL, " ", &save)) == NULL)
                return false;
        unescape_octal(*mount_point);
        return true;
}

static int deepest_first(const void *a, const void *b)
{
        size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);
        return la < lb ? 1 : la > lb ? -1 : 0;
}

int volume_unmount_tmpfs_below(const char *dir, ck_error_t *err)
{
        cleanup_free char *info = NULL;
        if (fs_read_file(MOUNTINFO, MOUNTINFO_MAX, &info, NULL, err) < 0)
                return -1;
        size_t dlen = strlen(dir);
        size_t n = 0;
        char **targets = NULL;
        char *save = NULL;
        for (char *line = strtok_r(info, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *mp = NULL, *fstype = NULL;
                if (!parse_line(line, &mp, &fstype) || strcmp(fstype, "tmpfs") != 0)
                        continue;
                if (strncmp(mp, dir, dlen) != 0 || mp[dlen] != '/')
                        continue;
                targets = xrealloc(targets, (n + 1) * sizeof(*targets));
                targets[n++] = mp;
        }
        if (n > 1)
                qsort(targets, n, sizeof(*targets), deepest_first);
        int ret = 0;
        for (size_t i = 0; i < n && ret == 0; i++) {
                /* EINVAL: no longer a mount point (listed twice, or gone) */
                if (umount2(targets[i], MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL &&
                    errno != ENOENT)
                        ret = ck_error_make(err, errno, "unmount tmpfs `%s`", targets[i]);
                else
                        LOG_INFO(3, "Unmounted a tmpfs volume", "path=\"%s\"", targets[i]);
        }
        free(targets);
        return ret;
}
