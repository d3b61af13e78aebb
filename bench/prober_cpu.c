/* SPDX-License-Identifier: Apache-2.0 */
/* What probing costs: 100 pods, each with a readiness httpGet and a
 * liveness tcpSocket probe, periodSeconds 1, against an HTTP server in a
 * child process (so that its work is not counted), for
 * $CK_PROBER_CPU_SECONDS seconds.  Reports the prober's CPU time
 * (getrusage of this process: the prober's threads plus an idle main
 * thread) and the probes served.
 *
 * A measurement, not part of `make test` (bench/README.md):
 *   make build/bench/prober_cpu && build/bench/prober_cpu   (CK_PROBER_CPU_SECONDS, default 20) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "api/decode.h"
#include "prober/prober.h"

#include "test_prober_server.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#define N_PODS 100

static double cpu_seconds(void)
{
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int64_t real_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The server process: reports its port, serves until the pipe closes, then
 * reports the requests (HTTP) and connections (HTTP + TCP) it saw. */
static void server_child(int to_parent, int from_parent)
{
        struct http_server *s = hs_start();
        hs_route(s, "/ready", 200);
        if (write(to_parent, &s->port, sizeof(s->port)) != sizeof(s->port))
                _exit(1);
        char c;
        while (read(from_parent, &c, 1) > 0)
                ;
        int counts[2] = {hs_hits(s, "/ready"), atomic_load(&s->connections)};
        hs_stop(s);
        if (write(to_parent, counts, sizeof(counts)) != sizeof(counts))
                _exit(1);
        _exit(0);
}

static void test_cpu_of_100_pods(void **state)
{
        (void)state;
        const char *env = getenv("CK_PROBER_CPU_SECONDS");
        int seconds = env != NULL && atoi(env) > 0 ? atoi(env) : 20;

        int up[2], down[2];
        if (pipe2(up, O_CLOEXEC) < 0 || pipe2(down, O_CLOEXEC) < 0)
                abort();
        pid_t pid = fork();
        if (pid == 0) {
                close(up[0]);
                close(down[1]);
                server_child(up[1], down[0]);
        }
        close(up[1]);
        close(down[0]);
        int port = 0;
        assert_int_equal(read(up[0], &port, sizeof(port)), sizeof(port));

        struct pod *pods[N_PODS];
        struct runtime_container_status cs[N_PODS];
        struct runtime_pod_status rs[N_PODS];
        char ids[N_PODS][32];
        for (int i = 0; i < N_PODS; i++) {
                char text[1024];
                snprintf(text, sizeof(text),
                         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\","
                         "\"uid\":\"uid-%d\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                         "\"image\":\"b\",\"readinessProbe\":{\"httpGet\":{\"path\":\"/ready\","
                         "\"port\":%d},\"periodSeconds\":1},\"livenessProbe\":{\"tcpSocket\":{"
                         "\"port\":%d},\"periodSeconds\":1}}]}}",
                         i, i, port, port);
                json_t *obj = json_loads(text, 0, NULL);
                ck_error_t err = NULL;
                if (api_pod_decode(obj, &pods[i], &err) < 0)
                        fail_msg("decode: %s", ck_error_msg(err));
                json_decref(obj);
                snprintf(ids[i], sizeof(ids[i]), "container-%d", i);
                cs[i] = (struct runtime_container_status){
                    .id = ids[i],
                    .name = (char *)"c",
                    .state = CONTAINER_STATE_RUNNING,
                    .started_at = real_ns(),
                };
                rs[i] = (struct runtime_pod_status){.uid = pods[i]->uid,
                                                    .ip = (char *)"127.0.0.1",
                                                    .containers = &cs[i],
                                                    .n_containers = 1};
        }

        struct prober_options opts = {0}; /* default threads */
        struct prober *p = prober_new(&opts, NULL, NULL);
        assert_non_null(p);
        double cpu0 = cpu_seconds();
        for (int i = 0; i < N_PODS; i++)
                prober_update_pod(p, pods[i], &rs[i]);
        sleep((unsigned)seconds);
        double cpu = cpu_seconds() - cpu0;
        prober_free(p);

        close(down[1]);
        int counts[2] = {0, 0};
        assert_int_equal(read(up[0], counts, sizeof(counts)), sizeof(counts));
        close(up[0]);
        waitpid(pid, NULL, 0);
        for (int i = 0; i < N_PODS; i++)
                pod_unref(pods[i]);

        int http = counts[0], tcp = counts[1] - counts[0];
        int probes = http + tcp;
        printf("prober CPU: %d pods x (readiness httpGet + liveness tcpSocket), periodSeconds 1, "
               "%d s: %.3f CPU s (%.2f%% of one core), %d httpGet + %d tcpSocket probes, "
               "%.1f us CPU per probe\n",
               N_PODS, seconds, cpu, 100.0 * cpu / seconds, http, tcp,
               probes ? cpu * 1e6 / probes : 0.0);
        /* every probe ran about once a second */
        assert_true(http >= N_PODS * (seconds - 1));
        assert_true(tcp >= N_PODS * (seconds - 1));
        /* and costs little: well under a tenth of a core */
        assert_true(cpu < 0.1 * seconds);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cpu_of_100_pods),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
