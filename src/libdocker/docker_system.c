/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's version and info (docker.h). */
#include "libdocker/docker.h"
#include "util/cleanup.h"

#include <stdlib.h>

void docker_version_clear(struct docker_version *v)
{
        free(v->version);
        free(v->api_version);
        free(v->os);
        free(v->arch);
        free(v->kernel);
        *v = (struct docker_version){0};
}

int docker_version(struct docker_client *d, struct docker_version *out, ck_error_t *err)
{
        *out = (struct docker_version){0};
        json_t *j = NULL;
        if (docker_do_json(d, "GET", "/version", NULL, "version", &j, err) < 0)
                return -1;
        int rc = docker_decode_version(j, out, err);
        json_decref(j);
        return rc < 0 ? ck_error_wrap(err, "version") : 0;
}

void docker_info_clear(struct docker_info *i)
{
        free(i->cgroup_driver);
        free(i->cgroup_version);
        free(i->docker_root_dir);
        free(i->driver);
        free(i->logging_driver);
        *i = (struct docker_info){0};
}

int docker_info(struct docker_client *d, struct docker_info *out, ck_error_t *err)
{
        *out = (struct docker_info){0};
        json_t *j = NULL;
        if (docker_do_json(d, "GET", "/info", NULL, "info", &j, err) < 0)
                return -1;
        int rc = docker_decode_info(j, out, err);
        json_decref(j);
        return rc < 0 ? ck_error_wrap(err, "info") : 0;
}
