/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checks of what a fuzzed writer left on disk, shared by the fuzz targets
 * of the volume code.  Header-only; a violation aborts (a finding).
 */
#ifndef CK_FUZZ_FS_H
#define CK_FUZZ_FS_H

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every entry below fd (named rel in messages) is a regular file, a
 * directory or a symlink that is relative and has no ".." component: none
 * can lead out of the tree. */
__attribute__((unused)) static void fuzz_check_tree(int fd, const char *rel)
{
        int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
        if (d == NULL)
                abort();
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        abort();
                if (S_ISLNK(st.st_mode)) {
                        char target[4097];
                        ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                        if (n <= 0)
                                abort();
                        target[n] = '\0';
                        bool dotdot = strcmp(target, "..") == 0 || strncmp(target, "../", 3) == 0 ||
                                      strstr(target, "/../") != NULL ||
                                      (n >= 3 && strcmp(target + n - 3, "/..") == 0);
                        if (target[0] == '/' || dotdot) {
                                fprintf(stderr, "fuzz: `%s/%s` -> `%s`\n", rel, de->d_name, target);
                                abort();
                        }
                } else if (S_ISDIR(st.st_mode)) {
                        int sub = openat(dirfd(d), de->d_name,
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub < 0)
                                abort();
                        cleanup_free char *sub_rel = xasprintf("%s/%s", rel, de->d_name);
                        fuzz_check_tree(sub, sub_rel);
                        close(sub);
                } else if (!S_ISREG(st.st_mode)) {
                        abort();
                }
        }
        closedir(d);
}

#endif
