/* SPDX-License-Identifier: Apache-2.0 */
/* hostPath (upstream pkg/volume/hostpath): the node's path itself, checked
 * against its type; DirectoryOrCreate and FileOrCreate create it. */
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool has_backstep(const char *path)
{
        for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2)
                if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
                        return true;
        return false;
}

/* upstream makeFile: os.OpenFile(path, O_CREATE, 0644); an existing file or
 * directory is fine. */
static int make_file(const char *path, ck_error_t *err)
{
        int fd =
            TEMP_FAILURE_RETRY_INT(open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644));
        if (fd < 0 && errno != EEXIST && errno != EISDIR)
                return ck_error_make(err, errno, "create file `%s`", path);
        if (fd >= 0)
                close(fd);
        return 0;
}

/* upstream checkTypeInternal, with its messages. */
static int check_type(const char *path, const char *type, ck_error_t *err)
{
        static const struct {
                const char *type;
                mode_t format;
                const char *what;
        } checks[] = {
            {"DirectoryOrCreate", S_IFDIR, "a directory"},
            {"Directory", S_IFDIR, "a directory"},
            {"FileOrCreate", S_IFREG, "a file"},
            {"File", S_IFREG, "a file"},
            {"Socket", S_IFSOCK, "a socket file"},
            {"CharDevice", S_IFCHR, "a character device"},
            {"BlockDevice", S_IFBLK, "a block device"},
        };
        struct stat st;
        bool exists = stat(path, &st) == 0;
        if (!exists && strcmp(type, "DirectoryOrCreate") == 0)
                return fs_mkdir_p(path, 0755, err);
        if (!exists && strcmp(type, "FileOrCreate") == 0)
                return make_file(path, err);
        for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
                if (strcmp(type, checks[i].type) != 0)
                        continue;
                if (!exists || (st.st_mode & S_IFMT) != checks[i].format)
                        return ck_error_make(err, 0, "hostPath type check failed: %s is not %s",
                                             path, checks[i].what);
                return 0;
        }
        return ck_error_make(err, 0, "%s is an invalid volume type", type);
}

int volume_host_path_setup(const struct volume *v, char **path, ck_error_t *err)
{
        const char *p = v->host_path;
        if (p == NULL || *p == '\0')
                return ck_error_make(err, 0, "hostPath: empty path");
        if (has_backstep(p))
                return ck_error_make(err, 0, "invalid HostPath `%s`: must not contain '..'", p);
        const char *type = v->host_path_type ? v->host_path_type : "";
        if (*type != '\0' && check_type(p, type, err) < 0)
                return ck_error_wrap(err, "hostPath type %s", type);
        *path = xstrdup(p);
        return 0;
}
