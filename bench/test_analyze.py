#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of bench/analyze.py on a synthetic agent log in the exact klog
format the agent writes.  Run: python3 bench/test_analyze.py"""

import calendar
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402

NS = 1_000_000_000
MS = 1_000_000
# 2026-11-30 00:21:06 UTC
BASE = calendar.timegm((2026, 11, 30, 0, 21, 6, 0, 0, 0)) * NS


def klog_ts(ns: int) -> str:
    secs, rem = divmod(ns, NS)
    t = analyze.datetime.fromtimestamp(secs, tz=analyze.timezone.utc)
    return f"{t:%m%d %H:%M:%S}.{rem // 1000:06d}"


def rfc3339(ns: int) -> str:
    secs, rem = divmod(ns, NS)
    t = analyze.datetime.fromtimestamp(secs, tz=analyze.timezone.utc)
    return f"{t:%Y-%m-%dT%H:%M:%S}.{rem:09d}Z"


class Parsing(unittest.TestCase):
    def test_klog_line_with_quoted_values_and_list(self):
        line = ('I1130 00:21:06.273123   1234 kubelet.c:255] "SyncLoop ADD" source="file" '
                'pods=["default/bench-paced-07-ckbench"]\n')
        (t, sev, src, msg, kv), = analyze.parse_log([line], BASE)
        self.assertEqual(t, BASE + 273123 * 1000)
        self.assertEqual((sev, src, msg), ("I", "kubelet.c", "SyncLoop ADD"))
        self.assertEqual(kv["pods"], ["default/bench-paced-07-ckbench"])
        self.assertEqual(kv["source"], "file")

    def test_sync_finished_line(self):
        line = ('I1130 00:21:06.273123   1234 sync_pod.c:88] "Pod sync finished" '
                'pod="default/bench-07-n" podUID="abc" wait_ms=1.2 sync_ms=412.5 '
                'cri_ms=398.1 ok=true')
        (_t, _s, _f, msg, kv), = analyze.parse_log([line], BASE)
        self.assertEqual(msg, "Pod sync finished")
        self.assertEqual((kv["pod"], kv["wait_ms"], kv["sync_ms"], kv["cri_ms"], kv["ok"]),
                         ("default/bench-07-n", "1.2", "412.5", "398.1", "true"))

    def test_escaped_quotes_in_values(self):
        line = ('W1130 00:21:06.000001   1 dns.c:287] "a \\"b\\" c" pod="x" '
                'err="say \\"no\\""')
        (_t, _s, _f, msg, kv), = analyze.parse_log([line], BASE)
        self.assertEqual(msg, 'a "b" c')
        self.assertEqual(kv["err"], 'say "no"')

    def test_year_wraps_at_new_year(self):
        ref = calendar.timegm((2027, 1, 1, 0, 0, 1, 0, 0, 0)) * NS
        line = 'I1231 23:59:59.500000 1 a.c:1] "x"'
        (t, *_), = analyze.parse_log([line], ref)
        self.assertEqual(t, ref - 1_500_000_000)

    def test_non_klog_lines_are_skipped(self):
        self.assertEqual(list(analyze.parse_log(["garbage\n", "\n"], BASE)), [])

    def test_cri_times(self):
        self.assertEqual(analyze.parse_cri_time("2026-11-30T00:21:06.000000123Z"), BASE + 123)
        self.assertEqual(analyze.parse_cri_time("2026-11-30T01:21:06.5+01:00"),
                         BASE + 500_000_000)
        self.assertEqual(analyze.parse_cri_time(str(BASE + 7)), BASE + 7)
        with self.assertRaises(ValueError):
            analyze.parse_cri_time("yesterday")

    def test_durations(self):
        self.assertEqual(analyze.duration_ms("412ms"), 412.0)
        self.assertEqual(analyze.duration_ms("1.5s"), 1500.0)
        self.assertEqual(analyze.duration_ms("850us"), 0.85)
        self.assertIsNone(analyze.duration_ms("soon"))
        self.assertIsNone(analyze.duration_ms(None))

    def test_percentile_interpolates(self):
        vals = list(range(1, 51))  # 1..50
        self.assertEqual(analyze.percentile(vals, 50), 25.5)
        self.assertAlmostEqual(analyze.percentile(vals, 99), 49.51)
        self.assertEqual(analyze.percentile([7], 99), 7.0)


class AgentShare(unittest.TestCase):
    """Two pods: one synced once; one that failed a first sync and waited
    for a worker twice.  A later resync (after the container ran) must not
    count."""

    def setUp(self):
        w1, w2 = BASE, BASE + 500 * MS
        add1, add2 = w1 + 3 * MS, w2 + 5 * MS
        # pod 1: one sync of 400 ms (380 in CRI), container started 350 ms in
        s1_end = add1 + 2 * MS + 400 * MS
        start1 = add1 + 2 * MS + 350 * MS
        # pod 2: sync A fails (100 ms, 90 CRI), sync B (300 ms, 270 CRI) starts it
        s2a_end = add2 + 10 * MS + 100 * MS
        s2b_end = s2a_end + 20 * MS + 300 * MS
        start2 = s2b_end - 30 * MS
        resync_end = start2 + 60 * NS
        p1, p2 = "default/bench-paced-01-n", "default/bench-paced-02-n"
        lines = [
            f'I{klog_ts(add1)}   10 kubelet.c:255] "SyncLoop ADD" source="file" pods=["{p1}"]',
            f'I{klog_ts(add2)}   10 kubelet.c:255] "SyncLoop ADD" source="file" pods=["{p2}"]',
            f'I{klog_ts(s1_end)}   11 sync_pod.c:90] "Pod sync finished" pod="{p1}" '
            f'podUID="u1" wait_ms=2.0 sync_ms=400.0 cri_ms=380.0 ok=true',
            f'I{klog_ts(s1_end)}   11 runtime_manager.c:320] "Created PodSandbox for pod" '
            f'pod="{p1}" podSandboxID="s1" podIP="10.88.0.2" attempt=0 duration="200ms"',
            f'I{klog_ts(s1_end)}   11 container_start.c:195] "Started container" pod="{p1}" '
            f'container="sleep" containerID="c1" restartCount=0 create="30ms" start="100ms"',
            f'I{klog_ts(s2a_end)}   12 sync_pod.c:90] "Pod sync finished" pod="{p2}" '
            f'podUID="u2" wait_ms=10.0 sync_ms=100.0 cri_ms=90.0 ok=false',
            f'E{klog_ts(s2a_end)}   12 sync_pod.c:205] "Error syncing pod, skipping" '
            f'err="boom" pod="{p2}" podUID="u2"',
            f'I{klog_ts(s2b_end)}   12 sync_pod.c:90] "Pod sync finished" pod="{p2}" '
            f'podUID="u2" wait_ms=20.0 sync_ms=300.0 cri_ms=270.0 ok=true',
            f'I{klog_ts(resync_end)}   12 sync_pod.c:90] "Pod sync finished" pod="{p2}" '
            f'podUID="u2" wait_ms=0.1 sync_ms=5.0 cri_ms=4.0 ok=true',
        ]
        self.ix = analyze.LogIndex.build([ln + "\n" for ln in lines], BASE)
        writes = [(p1, str(w1)), (p2, str(w2)), ("default/bench-paced-03-n", str(w2))]
        started = [[p1, "sleep", rfc3339(start1), "0"], [p2, "sleep", rfc3339(start2), "0"]]
        self.res = {r.pod: r for r in analyze.analyze_scenario("paced", writes, started,
                                                               self.ix)}
        self.p1, self.p2 = p1, p2

    def test_single_sync(self):
        r = self.res[self.p1]
        self.assertAlmostEqual(r.latency_ms, 355.0)
        self.assertAlmostEqual(r.detect_ms, 3.0)
        self.assertEqual(r.n_syncs, 1)
        self.assertAlmostEqual(r.own_ms, 20.0)
        self.assertAlmostEqual(r.agent_ms, 3.0 + 2.0 + 20.0)
        self.assertEqual(r.sandboxes, 1)

    def test_cri_durations_the_agent_logs(self):
        r = self.res[self.p1]
        self.assertAlmostEqual(r.logged_cri_ms, 200.0 + 30.0 + 100.0)
        self.assertAlmostEqual(r.rest_ms, 355.0 - 330.0)
        # pod 2 logged no "Started container": no figure rather than a wrong one
        self.assertIsNone(self.res[self.p2].logged_cri_ms)

    def test_retry_counts_both_syncs_not_the_later_resync(self):
        r = self.res[self.p2]
        self.assertEqual((r.n_syncs, r.failed_syncs), (2, 1))
        self.assertAlmostEqual(r.wait_ms, 30.0)
        self.assertAlmostEqual(r.own_ms, 10.0 + 30.0)
        self.assertAlmostEqual(r.cri_ms, 360.0)
        self.assertAlmostEqual(r.agent_ms, 5.0 + 30.0 + 40.0)

    def test_pod_that_never_ran_has_no_figures(self):
        r = self.res["default/bench-paced-03-n"]
        self.assertIsNone(r.latency_ms)
        self.assertIsNone(r.agent_ms)

    def test_summary_and_results_file(self):
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, text in {
                "log": "".join(ln for ln in []),
                "writes": f"{self.p1}\t{BASE}\n",
                "started": f"{self.p1}\tsleep\t{rfc3339(BASE + 400 * MS)}\t0\n",
                "metrics": "n=1\nckubelet_vmhwm_kb=9000\nsteady_cpu_pct=0.25\n",
            }.items():
                paths[name] = os.path.join(d, name)
                with open(paths[name], "w") as f:
                    f.write(text)
            out = os.path.join(d, "results.txt")
            import contextlib
            import io
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                analyze.main(["--log", paths["log"], "--scenario", "paced", paths["writes"],
                              paths["started"], "--metrics", paths["metrics"], "--out", out])
            text = buf.getvalue()
            self.assertIn("1/1 pods running", text)
            self.assertIn('no "Pod sync finished" lines', text)
            self.assertIn("peak RSS (VmHWM): 8.8 MB", text)
            self.assertIn("0.25 % of one core", text)
            with open(out) as f:
                body = f.read()
            self.assertIn("# per pod", body)
            self.assertIn(f"paced\t{self.p1}\t{BASE}\t{BASE + 400 * MS}\t0\t400.000", body)

    def test_summary_of_a_run_through_the_dockershim(self):
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, text in {
                "log": "",
                "writes": f"{self.p1}\t{BASE}\n",
                "started": f"{self.p1}\tsleep\t{rfc3339(BASE + 400 * MS)}\t0\n",
                "metrics": "n=1\nruntime=docker\ncontainerd_rss_kb=102400\n"
                           "containerd_cpu_pct=1.5\nshim_rss_kb=6144\nshim_vmhwm_kb=8192\n"
                           "shim_cpu_pct=0.125\nstart_paced_shim_cpu_s=0.42\n",
            }.items():
                paths[name] = os.path.join(d, name)
                with open(paths[name], "w") as f:
                    f.write(text)
            import contextlib
            import io
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                analyze.main(["--log", paths["log"], "--scenario", "paced", paths["writes"],
                              paths["started"], "--metrics", paths["metrics"]])
            text = buf.getvalue()
            self.assertIn("dockerd and its containerd, RSS with the pods running: 100.0 MB, "
                          "steady-state CPU: 1.5 % of one core", text)
            self.assertIn("ckubelet-dockershim RSS with the pods running / peak: 6.0 MB / 8.0 MB, "
                          "steady-state CPU: 0.125 % of one core, CPU while starting: paced 0.42 s",
                          text)
            self.assertNotIn("containerd RSS with the pods running", text)


class DockershimTable(unittest.TestCase):
    """bench/dockershim's side-by-side table from two runs' files."""

    def write(self, d, name, text):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def results(self, d, name, lat_ms):
        head = analyze.raw_rows([])[0]
        rows = [head]
        for i, lat in enumerate(lat_ms):
            started = "-" if lat is None else str(BASE + int(lat * MS))
            cells = ["paced", f"default/bench-paced-0{i}-n", str(BASE), started, "0",
                     "-" if lat is None else f"{lat:.3f}"] + ["-"] * 11
            rows.append("\t".join(cells))
        return self.write(d, name, "summary\n\n# per pod\n" + "\n".join(rows) + "\n")

    def test_ratios_and_a_pod_that_never_ran(self):
        import dockershim_table
        with tempfile.TemporaryDirectory() as d:
            c_res = self.results(d, "c.txt", [100.0, 200.0])
            d_res = self.results(d, "d.txt", [150.0, None])
            c_m = self.write(d, "c.env", "n=2\nsteady_cpu_pct=0.5\ncontainerd_rss_kb=51200\n"
                                         "teardown_paced_s=4\n")
            d_m = self.write(d, "d.env", "n=2\nruntime=docker\nsteady_cpu_pct=0.25\n"
                                         "containerd_rss_kb=102400\nteardown_paced_s=6\n"
                                         "shim_rss_kb=4096\nshim_vmhwm_kb=5120\n"
                                         "disturbed_steady=other pods\n")
            text = dockershim_table.table(dockershim_table.per_pod(c_res),
                                          dockershim_table.metrics(c_m),
                                          dockershim_table.per_pod(d_res),
                                          dockershim_table.metrics(d_m))
        # containerd: all ran by 0.2 s; docker: one pod never ran, no makespan
        self.assertIn("| paced (ckubelet): first write → all running | 0.20 s | n/a | n/a |", text)
        self.assertIn("| paced: per-pod latency p50 | 150 ms | 150 ms | 1.00 |", text)
        self.assertIn("| paced: teardown | 4.00 s | 6.00 s | 1.50 |", text)
        self.assertIn("| ckubelet steady CPU | 0.50 % | 0.25 % | 0.50 |", text)
        self.assertIn("| 50.0 MB | 100.0 MB | 2.00 |", text)
        self.assertIn("| ckubelet-dockershim RSS, pods running / peak | | 4.0 MB / 5.0 MB | |", text)
        self.assertIn("DISTURBED (docker run, steady): other pods", text)

    def test_not_a_results_file(self):
        import dockershim_table
        with tempfile.TemporaryDirectory() as d:
            path = self.write(d, "x.txt", "no rows\n")
            with self.assertRaises(SystemExit):
                dockershim_table.per_pod(path)


if __name__ == "__main__":
    unittest.main()
