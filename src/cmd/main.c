/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ckubelet: the command.  Parses the upstream kubelet's flags and
 * KubeletConfiguration, then runs the kubelet library until SIGTERM/SIGINT.
 * As the upstream kubelet, stopping the agent leaves the pods running; the
 * next start adopts them.
 */
#include "config/kubeletconfig.h"
#include "kubelet/kubelet.h"
#include "util/error.h"
#include "util/log.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct kubelet *the_kubelet;

/* Signals are received by this thread (sigwait), never by handlers: the
 * conmon habit.  It only asks the sync loop to stop. */
static void *signal_thread(void *arg)
{
        sigset_t *set = arg;
        for (;;) {
                int sig = 0;
                if (sigwait(set, &sig) != 0)
                        continue;
                LOG_INFO(0, "Received signal, shutting down", "signal=\"%s\"", strsignal(sig));
                kubelet_stop(the_kubelet);
                return NULL;
        }
}

int main(int argc, char **argv)
{
        struct kubelet_config cfg;
        enum kubelet_flags_action action = FLAGS_RUN;
        ck_error_t err = NULL;

        /* glibc gives each thread that allocates its own malloc arena; with
         * 8 pod workers, 4 probe threads and the rest that cost megabytes of
         * RSS for nothing (bench/README.md).  Two arenas are plenty. */
        mallopt(M_ARENA_MAX, 2);
        /* A fixed mmap threshold (which also stops glibc from raising it and
         * the trim threshold): an answer of megabytes (/metrics/cadvisor,
         * the summary) is mapped and unmapped, not left in an arena.  50
         * static pods scraped six times: 17.1 MB of RSS after, 12.5 MB with
         * it (bench/README.md). */
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        kubelet_config_defaults(&cfg);
        if (kubelet_flags_parse(&cfg, argc, argv, &action, &err) < 0) {
                fprintf(stderr, "ckubelet: %s\n", ck_error_msg(err));
                fprintf(stderr, "Run 'ckubelet --help' for usage.\n");
                ck_error_release(&err);
                kubelet_config_release(&cfg);
                return 1;
        }
        if (action == FLAGS_HELP) {
                kubelet_flags_usage(stdout);
                kubelet_config_release(&cfg);
                return 0;
        }
        if (action == FLAGS_VERSION) {
                printf("Kubernetes v1.35.0 (ckubelet %s)\n", CK_VERSION);
                kubelet_config_release(&cfg);
                return 0;
        }
        log_set_verbosity(cfg.verbosity);

        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by every thread */
        signal(SIGPIPE, SIG_IGN);

        if (kubelet_cgroup_driver_from_cri(&cfg, &err) < 0 ||
            kubelet_new(&cfg, &the_kubelet, &err) < 0) {
                LOG_ERROR("Failed to create kubelet", "err=\"%s\"", ck_error_msg(err));
                ck_error_release(&err);
                kubelet_config_release(&cfg);
                return 1;
        }
        pthread_t sig_thread;
        pthread_create(&sig_thread, NULL, signal_thread, &set);
        pthread_detach(sig_thread);

        int rc = 0;
        if (kubelet_run(the_kubelet, &err) < 0) {
                LOG_ERROR("Failed to run kubelet", "err=\"%s\"", ck_error_msg(err));
                ck_error_release(&err);
                rc = 1;
        }
        if (!kubelet_free(the_kubelet))
                _exit(rc); /* threads still run: no exit handlers under them */
        kubelet_config_release(&cfg);
        return rc;
}
