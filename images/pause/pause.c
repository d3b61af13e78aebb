/*
 * pause: the process that holds a pod sandbox's namespaces.
 *
 * It sleeps in sigwaitinfo() with every relevant signal blocked, so it uses
 * no CPU and runs no code in signal context.  As PID 1 of the pod's PID
 * namespace (shareProcessNamespace) it reaps orphans on SIGCHLD.  SIGINT and
 * SIGTERM end it with status 0, like the upstream pause container.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PAUSE_VERSION
#define PAUSE_VERSION "3.10"
#endif

static void reap_children(void)
{
        for (;;) {
                pid_t pid = waitpid(-1, NULL, WNOHANG);
                if (pid > 0)
                        continue;
                if (pid < 0 && errno == EINTR)
                        continue;
                /* 0: children remain but none has exited; ECHILD: none left. */
                return;
        }
}

int main(int argc, char **argv)
{
        sigset_t set;
        siginfo_t info;
        int sig;

        if (argc > 1 && strcmp(argv[1], "-v") == 0) {
                printf("pause.c %s (ckubelet)\n", PAUSE_VERSION);
                return 0;
        }
        if (getpid() != 1)
                fprintf(stderr, "pause: warning: not running as PID 1\n");

        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
                fprintf(stderr, "pause: sigprocmask: %s\n", strerror(errno));
                return 1;
        }

        for (;;) {
                sig = sigwaitinfo(&set, &info);
                if (sig < 0) {
                        if (errno == EINTR)
                                continue;
                        fprintf(stderr, "pause: sigwaitinfo: %s\n", strerror(errno));
                        return 1;
                }
                switch (sig) {
                case SIGCHLD:
                        /* Signals coalesce: one SIGCHLD may stand for many exits. */
                        reap_children();
                        break;
                case SIGINT:
                case SIGTERM:
                        fprintf(stderr, "pause: shutting down, got signal %d\n", sig);
                        return 0;
                default:
                        break;
                }
        }
}
