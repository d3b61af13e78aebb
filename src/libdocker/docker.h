/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Docker Engine API client: what the dockershim needs of dockerd, as
 * upstream's pkg/kubelet/dockershim/libdocker (and cri-dockerd's) had it.
 *
 * HTTP/1.1 over the engine's unix socket, API version 1.41 (Docker Engine
 * 20.10) in every path; an engine that speaks less is refused when the
 * client is opened.  Connections are kept alive and pooled, so calls from
 * any number of threads run side by side, each on a connection of its own.
 *
 * Every call returns 0, or -1 with err: its code an enum docker_error_code,
 * its message "<what>: <the engine's message>" (e.g. "inspect container
 * `k8s_POD_web`: No such container: k8s_POD_web").
 */
#ifndef CK_LIBDOCKER_DOCKER_H
#define CK_LIBDOCKER_DOCKER_H

#include "http/http_client.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The API version every request names ("/v1.41/..."). */
#define DOCKER_API_VERSION "1.41"

/* The largest answer kept in memory (a list of containers or images). */
#define DOCKER_MAX_ANSWER (64u * 1024 * 1024)

/* err->code of a failed call: outside gRPC's codes (1..16), so that one
 * passed on unmapped is noticed. */
enum docker_error_code {
        DOCKER_ERR_UNAVAILABLE = 1001, /* no answer: the engine is away, the connection broke */
        DOCKER_ERR_TIMEOUT,            /* the call's deadline passed */
        DOCKER_ERR_NOT_FOUND,          /* 404: no such container, image, exec */
        DOCKER_ERR_CONFLICT,           /* 409: a name in use, a running container */
        DOCKER_ERR_NOT_MODIFIED,       /* 304: already started, already stopped */
        DOCKER_ERR_INVALID,            /* 400: the engine refused the request */
        DOCKER_ERR_SERVER,             /* any other failure the engine reported */
        DOCKER_ERR_PROTOCOL,           /* an answer that does not decode */
};

struct docker_client;

/* A client of the engine at endpoint ("unix:///var/run/docker.sock", or
 * the socket's path).  Pings it and reads its version: fails (with
 * DOCKER_ERR_UNAVAILABLE) when it does not answer, or when its API is
 * older than DOCKER_API_VERSION.  timeout_ms bounds each call that names
 * no deadline of its own (upstream's --runtime-request-timeout, 2 m). */
int docker_client_open(const char *endpoint, int64_t timeout_ms, struct docker_client **out,
                       ck_error_t *err);
void docker_client_free(struct docker_client *d);
/* Makes every call in progress and to come fail at once (DOCKER_ERR_
 * UNAVAILABLE): for a shutdown that must not wait out a grace period or
 * a pull.  Any thread. */
void docker_client_cancel(struct docker_client *d);
/* The same without asking the engine anything. */
int docker_client_new(const char *endpoint, int64_t timeout_ms, struct docker_client **out,
                      ck_error_t *err);

/* ---- the raw exchange (docker_client.c) -------------------------------- */

struct docker_request {
        const char *method;
        const char *path; /* after the version: "/containers/json?all=1" */
        const char *body; /* JSON, or NULL */
        size_t body_len;
        const struct http_field *headers; /* extra header fields (X-Registry-Auth) */
        size_t n_headers;
        int64_t timeout_ms; /* 0: the client's; negative: none (a pull) */
};

/* Called with each piece of a streamed answer body as it arrives; returns
 * 0 to go on, -1 (with err) to abandon the call. */
typedef int (*docker_chunk_fn)(void *ctx, const char *data, size_t len, ck_error_t *err);

/* One exchange.  A 2xx answer's body goes to chunk (as it arrives), or,
 * when chunk is NULL, into *body (malloc'ed, NUL-terminated; body may be
 * NULL to drop it).  Any other status is an error with the engine's
 * message.  what names the step in that message. */
int docker_do(struct docker_client *d, const struct docker_request *r, const char *what,
              docker_chunk_fn chunk, void *ctx, char **body, size_t *len, ck_error_t *err);

/* A JSON exchange: body (may be NULL) sent as JSON, the answer parsed
 * into *out (may be NULL to drop it). */
int docker_do_json(struct docker_client *d, const char *method, const char *path, json_t *body,
                   const char *what, json_t **out, ck_error_t *err);

/* A hijacked exchange, for attach and exec streams: POST path (after the
 * version) with body (JSON, may be NULL) and "Upgrade: tcp", as Docker's
 * own client does; on the engine's 101 (or 200) *fd is the connection,
 * blocking and O_CLOEXEC, carrying the raw or multiplexed stream both
 * ways (shutdown(SHUT_WR) ends stdin).  The answer's head must come within
 * the client's timeout. */
int docker_hijack(struct docker_client *d, const char *path, json_t *body, const char *what,
                  int *fd, ck_error_t *err);

/* ---- system (docker_system.c) ------------------------------------------ */

struct docker_version {
        char *version;     /* the engine's, "20.10.24+dfsg1" */
        char *api_version; /* "1.41" */
        char *os, *arch, *kernel;
};
void docker_version_clear(struct docker_version *v);
int docker_version(struct docker_client *d, struct docker_version *out, ck_error_t *err);

struct docker_info {
        char *cgroup_driver;   /* "cgroupfs" or "systemd" */
        char *cgroup_version;  /* "1" or "2" */
        char *docker_root_dir; /* "/var/lib/docker" */
        char *driver;          /* the storage driver */
        char *logging_driver;  /* the containers' default: "json-file", "journald", ... */
};
void docker_info_clear(struct docker_info *i);
int docker_info(struct docker_client *d, struct docker_info *out, ck_error_t *err);

/* ---- containers (docker_containers.c) ------------------------------------ */

/* A mount of an inspected container. */
struct docker_mount {
        char *type; /* "bind", "volume", "tmpfs" */
        char *source, *destination;
        bool rw;
        char *propagation; /* "rprivate", "rslave", "rshared", or "" */
};

/* GET /containers/{id}/json, the fields the shim reads. */
struct docker_container {
        char *id;
        char *name;     /* without the leading '/' */
        char *image;    /* Config.Image: the reference it was created from */
        char *image_id; /* Image: "sha256:..." */
        int64_t created_ns;
        /* State */
        char *status; /* "created", "running", "paused", "restarting", "removing",
                       * "exited", "dead" */
        bool running, oom_killed;
        int pid;
        int exit_code;
        char *error;
        int64_t started_ns, finished_ns; /* 0: never */
        json_t *labels;                  /* Config.Labels, an object (never NULL) */
        bool tty;                        /* Config.Tty */
        char *log_path, *resolv_conf_path, *hostname_path, *hosts_path;
        char *network_mode, *ipc_mode, *pid_mode, *cgroup_parent; /* HostConfig */
        char *sandbox_key; /* NetworkSettings.SandboxKey: the netns path */
        char *ip_address;  /* NetworkSettings.IPAddress */
        struct docker_mount *mounts;
        size_t n_mounts;
};
void docker_container_clear(struct docker_container *c);

/* An entry of GET /containers/json. */
struct docker_container_summary {
        char *id;
        char *name; /* the first of Names, without '/' */
        char *image, *image_id;
        int64_t created_s; /* Created: seconds */
        char *state;       /* "created", "running", "exited", ... */
        json_t *labels;    /* never NULL */
};
void docker_container_summaries_free(struct docker_container_summary *v, size_t n);

/* Creates the container name from config (a JSON object: the Config
 * fields with HostConfig inside, as the API takes them); *id is its ID. */
int docker_container_create(struct docker_client *d, const char *name, json_t *config, char **id,
                            ck_error_t *err);
int docker_container_start(struct docker_client *d, const char *id, ck_error_t *err);
/* Stops with SIGTERM (or the container's StopSignal), SIGKILL after
 * timeout_s; the call's deadline allows for that.  Already stopped: 0. */
int docker_container_stop(struct docker_client *d, const char *id, int64_t timeout_s,
                          ck_error_t *err);
/* Removes it (force: running or not), its anonymous volumes with it. */
int docker_container_remove(struct docker_client *d, const char *id, bool force, ck_error_t *err);
int docker_container_inspect(struct docker_client *d, const char *id, struct docker_container *out,
                             ck_error_t *err);
/* all: stopped ones too; filters: a JSON object of arrays ({"label":
 * ["a=b"]}) or NULL. */
int docker_container_list(struct docker_client *d, bool all, json_t *filters,
                          struct docker_container_summary **out, size_t *n, ck_error_t *err);
/* POST /containers/{id}/update with resources (the Resources fields). */
int docker_container_update(struct docker_client *d, const char *id, json_t *resources,
                            ck_error_t *err);

/* GET /containers/{id}/stats?stream=false&one-shot=true, what the shim
 * reports: cumulative CPU, memory usage and its inactive file pages (the
 * working set is the difference, as cAdvisor counts it), the number of
 * processes (the pids cgroup's). */
struct docker_stats {
        int64_t read_ns; /* when the engine read them */
        uint64_t cpu_total_ns;
        uint64_t mem_usage;
        uint64_t mem_inactive_file; /* cgroup v1 total_inactive_file, v2 inactive_file */
        bool has_memory;
        uint64_t pids_current; /* pids_stats.current */
        bool has_pids;         /* the engine gave it (no pids controller: not) */
};
int docker_container_stats(struct docker_client *d, const char *id, struct docker_stats *out,
                           ck_error_t *err);

/* ---- images (docker_images.c) -------------------------------------------- */

struct docker_image {
        char *id;         /* "sha256:..." */
        char **repo_tags; /* "busybox:1.35" */
        size_t n_repo_tags;
        char **repo_digests; /* "busybox@sha256:..." */
        size_t n_repo_digests;
        int64_t size; /* bytes */
        char *user;   /* Config.User (inspect only), may be NULL */
};
void docker_image_clear(struct docker_image *i);
void docker_images_free(struct docker_image *v, size_t n);

int docker_image_list(struct docker_client *d, struct docker_image **out, size_t *n,
                      ck_error_t *err);
/* The image a reference or ID names; DOCKER_ERR_NOT_FOUND when none. */
int docker_image_inspect(struct docker_client *d, const char *ref, struct docker_image *out,
                         ck_error_t *err);
/* Pulls ref ("name[:tag|@digest]"); registry_auth: the X-Registry-Auth
 * value (base64url of the auth JSON) or NULL; timeout_ms <= 0: no
 * deadline (a pull takes what it takes; the caller's deadline, when it
 * has one, is given).  The engine reports a failed pull inside its
 * progress stream: that is an error too. */
int docker_image_pull(struct docker_client *d, const char *ref, const char *registry_auth,
                      int64_t timeout_ms, ck_error_t *err);
/* Removes the image ref names (a tag: only that tag, as `docker rmi`). */
int docker_image_remove(struct docker_client *d, const char *ref, bool force, ck_error_t *err);

/* ---- exec (docker_exec.c) ------------------------------------------------ */

struct docker_exec_config {
        const char *const *cmd; /* NULL-terminated */
        bool tty, attach_stdin, attach_stdout, attach_stderr;
};
/* Creates an exec of cmd in the running container id; *exec_id is its ID. */
int docker_exec_create(struct docker_client *d, const char *id,
                       const struct docker_exec_config *cfg, char **exec_id, ck_error_t *err);

/* Output of an exec without a TTY: stdout and stderr, each at most cap
 * bytes (what comes beyond is dropped, *truncated set). */
struct docker_exec_output {
        char *out, *err;
        size_t out_len, err_len;
        size_t cap;
        bool truncated;
};
void docker_exec_output_clear(struct docker_exec_output *o);
/* Starts the exec attached (no TTY, no stdin) and collects its output
 * until it ends or timeout_ms passes (DOCKER_ERR_TIMEOUT; the process is
 * left running: the API cannot kill an exec).  An error the engine writes
 * into the stream (stream 3) fails the call with its text. */
int docker_exec_run(struct docker_client *d, const char *exec_id, int64_t timeout_ms,
                    struct docker_exec_output *o, ck_error_t *err);

struct docker_exec_state {
        bool running;
        int exit_code;
        int pid;
};
int docker_exec_inspect(struct docker_client *d, const char *exec_id, struct docker_exec_state *out,
                        ck_error_t *err);
/* The TTY of a started exec, or of a container (POST .../resize). */
int docker_exec_resize(struct docker_client *d, const char *exec_id, unsigned width,
                       unsigned height, ck_error_t *err);
int docker_container_resize(struct docker_client *d, const char *id, unsigned width,
                            unsigned height, ck_error_t *err);

/* The engine's stdout/stderr multiplexing of a non-TTY stream: frames of
 * an 8-byte header (stream 0 stdin, 1 stdout, 2 stderr, 3 the engine's
 * own error; 3 zero bytes; the size, big-endian) and that many bytes. */
struct docker_demux {
        uint8_t head[8];
        size_t head_len;
        uint32_t left; /* payload bytes of the current frame still to come */
        int stream;
};
typedef void (*docker_demux_fn)(void *ctx, int stream, const char *data, size_t len);
/* Feeds n bytes of the stream; calls fn for each piece of payload.
 * -1 on a header that is not one (a stream byte above 3). */
int docker_demux_feed(struct docker_demux *m, const char *buf, size_t n, docker_demux_fn fn,
                      void *ctx);

/* ---- decoding (docker_decode.c): pure, fuzzed ----------------------------- */

/* An RFC 3339 time of the engine in ns since the epoch; 0 for Go's zero
 * time, an empty string or none. */
int docker_decode_time(const json_t *v, int64_t *ns);

int docker_decode_version(const json_t *j, struct docker_version *out, ck_error_t *err);
int docker_decode_info(const json_t *j, struct docker_info *out, ck_error_t *err);
int docker_decode_container(const json_t *j, struct docker_container *out, ck_error_t *err);
int docker_decode_container_list(const json_t *j, struct docker_container_summary **out, size_t *n,
                                 ck_error_t *err);
/* One image: of GET /images/json (list) or GET /images/{name}/json. */
int docker_decode_image(const json_t *j, struct docker_image *out, ck_error_t *err);
int docker_decode_image_list(const json_t *j, struct docker_image **out, size_t *n,
                             ck_error_t *err);
int docker_decode_exec(const json_t *j, struct docker_exec_state *out, ck_error_t *err);
int docker_decode_stats(const json_t *j, struct docker_stats *out, ck_error_t *err);
/* One line of a pull's progress stream: -1 with the engine's message when
 * it reports the pull failed. */
int docker_decode_pull_progress(const char *line, size_t len, ck_error_t *err);

#endif
