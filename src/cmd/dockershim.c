/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ckubelet-dockershim: the command.  Serves CRI on a unix socket over a
 * Docker Engine (src/dockershim) until SIGTERM/SIGINT.  Flags are
 * cri-dockerd's where it has one (--docker-endpoint,
 * --pod-infra-container-image, --runtime-request-timeout, --network-plugin,
 * --cni-conf-dir, --cni-bin-dir, -v), plus --listen for the socket
 * (cri-dockerd's --container-runtime-endpoint is accepted as its other
 * name), --root-directory (cri-dockerd's --cri-dockerd-root-directory) and
 * --restrict-oom-score-adj (containerd's option of that name),
 * --streaming-bind-addr (cri-dockerd's; here loopback and an ephemeral port
 * by default, as containerd's stream server) and
 * --streaming-connection-idle-timeout (the kubelet's; cri-dockerd has the
 * setting without a flag).
 */
#include "config/kubeletconfig.h"
#include "dockershim/dockershim.h"
#include "util/error.h"
#include "util/log.h"

#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DOCKER "unix:///var/run/docker.sock"
#define DEFAULT_LISTEN "unix:///run/ckubelet-dockershim.sock"
#define DEFAULT_PAUSE "registry.k8s.io/pause:3.10"
#define DEFAULT_CNI_CONF "/etc/cni/net.d"
#define DEFAULT_CNI_BIN "/opt/cni/bin"
#define DEFAULT_ROOT "/var/lib/ckubelet-dockershim"

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: ckubelet-dockershim [flags]\n"
                "\n"
                "Serves the CRI runtime.v1 services over a Docker Engine (API 1.41 or later).\n"
                "\n"
                "  --docker-endpoint string            the engine's socket (default \"%s\")\n"
                "  --listen string                     the CRI socket to serve (default \"%s\");\n"
                "                                      also --container-runtime-endpoint\n"
                "  --pod-infra-container-image string  the sandbox image (default \"%s\")\n"
                "  --runtime-request-timeout duration  each engine call's deadline but pulls'\n"
                "                                      (default 2m0s)\n"
                "  --network-plugin string             the pod network: cni, the only one\n"
                "                                      (default \"cni\")\n"
                "  --cni-conf-dir string               the CNI configuration (default \"%s\")\n"
                "  --cni-bin-dir string                the CNI plugins, ',' separated\n"
                "                                      (default \"%s\")\n"
                "  --root-directory string             sandbox checkpoints and pod networks'\n"
                "                                      results (default \"%s\")\n"
                "  --restrict-oom-score-adj            never give a container an OOM score\n"
                "                                      adjustment below the shim's own\n"
                "  --streaming-bind-addr string        the exec/attach/port-forward streaming\n"
                "                                      server's address[:port] (default\n"
                "                                      \"127.0.0.1\", an ephemeral port)\n"
                "  --streaming-connection-idle-timeout duration\n"
                "                                      a stream session ends after this long\n"
                "                                      with nothing read nor written (default\n"
                "                                      4h0m0s, the kubelet's)\n"
                "  -v, --v int                         log verbosity\n"
                "  --version                           print the version and exit\n"
                "  -h, --help                          this help\n",
                DEFAULT_DOCKER, DEFAULT_LISTEN, DEFAULT_PAUSE, DEFAULT_CNI_CONF, DEFAULT_CNI_BIN,
                DEFAULT_ROOT);
}

int main(int argc, char **argv)
{
        mallopt(M_ARENA_MAX, 2);
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        struct dockershim_options o = {
            .docker_endpoint = DEFAULT_DOCKER,
            .listen = DEFAULT_LISTEN,
            .pod_infra_image = DEFAULT_PAUSE,
            .request_timeout_ms = 2 * 60 * 1000,
            .root_dir = DEFAULT_ROOT,
            .cni_conf_dir = DEFAULT_CNI_CONF,
            .cni_bin_dirs = DEFAULT_CNI_BIN,
        };
        enum {
                OPT_DOCKER = 256,
                OPT_LISTEN,
                OPT_PAUSE,
                OPT_TIMEOUT,
                OPT_VERSION,
                OPT_NETWORK,
                OPT_CNI_CONF,
                OPT_CNI_BIN,
                OPT_ROOT,
                OPT_RESTRICT_OOM,
                OPT_STREAMING,
                OPT_STREAMING_IDLE,
        };
        static const struct option opts[] = {
            {"docker-endpoint", required_argument, NULL, OPT_DOCKER},
            {"listen", required_argument, NULL, OPT_LISTEN},
            {"container-runtime-endpoint", required_argument, NULL, OPT_LISTEN},
            {"pod-infra-container-image", required_argument, NULL, OPT_PAUSE},
            {"runtime-request-timeout", required_argument, NULL, OPT_TIMEOUT},
            {"network-plugin", required_argument, NULL, OPT_NETWORK},
            {"cni-conf-dir", required_argument, NULL, OPT_CNI_CONF},
            {"cni-bin-dir", required_argument, NULL, OPT_CNI_BIN},
            {"root-directory", required_argument, NULL, OPT_ROOT},
            {"restrict-oom-score-adj", no_argument, NULL, OPT_RESTRICT_OOM},
            {"streaming-bind-addr", required_argument, NULL, OPT_STREAMING},
            {"streaming-connection-idle-timeout", required_argument, NULL, OPT_STREAMING_IDLE},
            {"v", required_argument, NULL, 'v'},
            {"version", no_argument, NULL, OPT_VERSION},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        int verbosity = 0;
        opterr = 0;
        for (;;) {
                int c = getopt_long(argc, argv, ":v:h", opts, NULL);
                if (c == -1)
                        break;
                ck_error_t err = NULL;
                char *end = NULL;
                switch (c) {
                case OPT_DOCKER:
                        o.docker_endpoint = optarg;
                        break;
                case OPT_LISTEN:
                        o.listen = optarg;
                        break;
                case OPT_PAUSE:
                        o.pod_infra_image = optarg;
                        break;
                case OPT_TIMEOUT:
                        if (config_parse_duration(optarg, &o.request_timeout_ms, &err) < 0 ||
                            o.request_timeout_ms <= 0) {
                                fprintf(stderr,
                                        "ckubelet-dockershim: invalid argument \"%s\" for "
                                        "\"--runtime-request-timeout\": %s\n",
                                        optarg, err ? ck_error_msg(err) : "not positive");
                                ck_error_release(&err);
                                return 1;
                        }
                        break;
                case OPT_STREAMING_IDLE:
                        if (config_parse_duration(optarg, &o.streaming_idle_timeout_ms, &err) < 0 ||
                            o.streaming_idle_timeout_ms <= 0) {
                                fprintf(stderr,
                                        "ckubelet-dockershim: invalid argument \"%s\" for "
                                        "\"--streaming-connection-idle-timeout\": %s\n",
                                        optarg, err ? ck_error_msg(err) : "not positive");
                                ck_error_release(&err);
                                return 1;
                        }
                        break;
                case OPT_NETWORK:
                        if (strcmp(optarg, "cni") != 0) {
                                fprintf(stderr,
                                        "ckubelet-dockershim: invalid argument \"%s\" for "
                                        "\"--network-plugin\": only cni is supported\n",
                                        optarg);
                                return 1;
                        }
                        break;
                case OPT_CNI_CONF:
                        o.cni_conf_dir = optarg;
                        break;
                case OPT_CNI_BIN:
                        o.cni_bin_dirs = optarg;
                        break;
                case OPT_ROOT:
                        o.root_dir = optarg;
                        break;
                case OPT_RESTRICT_OOM:
                        o.restrict_oom_score_adj = true;
                        break;
                case OPT_STREAMING:
                        o.streaming_bind_addr = optarg;
                        break;
                case 'v':
                        verbosity = (int)strtol(optarg, &end, 10);
                        if (*optarg == '\0' || *end != '\0' || verbosity < 0) {
                                fprintf(stderr,
                                        "ckubelet-dockershim: invalid argument \"%s\" for \"-v\"\n",
                                        optarg);
                                return 1;
                        }
                        break;
                case OPT_VERSION:
                        printf("ckubelet-dockershim %s\n", CK_VERSION);
                        return 0;
                case 'h':
                        usage(stdout);
                        return 0;
                case ':':
                        fprintf(stderr, "ckubelet-dockershim: flag needs an argument: %s\n",
                                argv[optind - 1]);
                        return 1;
                default:
                        fprintf(stderr, "ckubelet-dockershim: unknown flag: %s\n",
                                argv[optind - 1]);
                        fprintf(stderr, "Run 'ckubelet-dockershim --help' for usage.\n");
                        return 1;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "ckubelet-dockershim: unexpected argument \"%s\"\n", argv[optind]);
                return 1;
        }
        log_set_verbosity(verbosity);

        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by every thread */
        signal(SIGPIPE, SIG_IGN);

        struct dockershim *shim = NULL;
        ck_error_t err = NULL;
        if (dockershim_start(&o, &shim, &err) < 0) {
                LOG_ERROR("Failed to start the dockershim", "err=\"%s\"", ck_error_msg(err));
                ck_error_release(&err);
                return 1;
        }
        int sig = 0;
        while (sigwait(&set, &sig) != 0)
                ;
        LOG_INFO(0, "Received signal, shutting down", "signal=\"%s\"", strsignal(sig));
        dockershim_stop(shim);
        return 0;
}
