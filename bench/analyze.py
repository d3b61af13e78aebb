#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turn one bench run's raw data into per-pod figures and a summary.

Inputs (written by bench/run):
  --log FILE            the agent's klog text log (the agent ran with TZ=UTC)
  --scenario NAME WRITES STARTED
                        WRITES:  "<ns>/<pod>\t<epoch ns>" per manifest write
                        STARTED: "<ns>/<pod>\t<container>\t<startedAt>\t<attempt>"
                                 per container, startedAt from CRI ContainerStatus
                                 (RFC 3339 with nanoseconds, or epoch ns)
  --metrics FILE        key=value lines measured by bench/run
  --out FILE            where the results (summary + raw per-pod rows) go

Per pod:
  latency    = last container's CRI startedAt - manifest write time
  detect     = "SyncLoop ADD" log time - manifest write time
  wait       = sum of wait_ms over the pod's syncs until its container ran
  own        = sum of (sync_ms - cri_ms) over those syncs
  cri        = sum of cri_ms over those syncs
  agent      = detect + wait + own   (the agent's share of the latency)
A sync counts when it started (log time - sync_ms) no later than the last
container's startedAt; the sync that started the container is included.

Percentiles interpolate linearly between ranks (numpy's default): with 50
pods, p99 lies between the two largest values.
"""

import argparse
import calendar
import math
import re
import sys
from collections import defaultdict
from datetime import datetime, timezone

# I1130 00:21:06.273123   1234 sync_pod.c:88] "Msg" key="v" key=1.5 ...
KLOG_RE = re.compile(
    r'^([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+(\d+)\s+([^\s:\]]+):(\d+)\] '
    r'"((?:[^"\\]|\\.)*)"(.*)$'
)
KV_RE = re.compile(r'\s*([A-Za-z_][\w.]*)=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|\S+)')
QUOTED_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')
RFC3339_RE = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$"
)

NS = 1_000_000_000
MS = 1_000_000


def unquote(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


def parse_kv(tail: str) -> dict:
    """The key=value pairs after a klog message: strings unquoted, lists as
    lists of strings, everything else as the raw token."""
    out = {}
    for m in KV_RE.finditer(tail):
        k, v = m.group(1), m.group(2)
        if v.startswith('"'):
            out[k] = unquote(v[1:-1])
        elif v.startswith("["):
            out[k] = [unquote(x) for x in QUOTED_RE.findall(v)]
        else:
            out[k] = v
    return out


def klog_time_ns(month: int, day: int, hh: int, mm: int, ss: int, us: int, year: int) -> int:
    """A klog header time (no year; UTC because the agent ran with TZ=UTC)."""
    secs = calendar.timegm((year, month, day, hh, mm, ss, 0, 0, 0))
    return secs * NS + us * 1000


def parse_log(lines, ref_ns: int):
    """Yields (time_ns, severity, file, msg, kv) for each klog line.
    ref_ns (a time near the run) supplies the year klog omits."""
    ref = datetime.fromtimestamp(ref_ns / NS, tz=timezone.utc)
    for line in lines:
        m = KLOG_RE.match(line.rstrip("\n"))
        if not m:
            continue
        sev, mon, day, hh, mi, ss, us, _tid, src, _ln, msg, tail = m.groups()
        mon, day = int(mon), int(day)
        year = ref.year
        # A log written just across New Year from the reference time.
        if mon == 12 and ref.month == 1:
            year -= 1
        elif mon == 1 and ref.month == 12:
            year += 1
        t = klog_time_ns(mon, day, int(hh), int(mi), int(ss), int(us), year)
        yield t, sev, src, unquote(msg), parse_kv(tail)


def parse_cri_time(s: str) -> int:
    """CRI startedAt as crictl prints it: RFC 3339 (nanoseconds), or epoch ns."""
    s = s.strip()
    if s.isdigit():
        return int(s)
    m = RFC3339_RE.match(s)
    if not m:
        raise ValueError(f"not a time: {s!r}")
    y, mo, d, h, mi, se, frac, tz = m.groups()
    secs = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(se), 0, 0, 0))
    if tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        secs -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    nanos = int((frac or "0").ljust(9, "0"))
    return secs * NS + nanos


def percentile(values, p: float) -> float:
    """Linear interpolation between closest ranks (numpy 'linear')."""
    if not values:
        return math.nan
    v = sorted(values)
    if len(v) == 1:
        return float(v[0])
    pos = (len(v) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


class LogIndex:
    """What the analysis needs from the agent's log, by pod full name."""

    def __init__(self):
        self.add_ns = {}  # first SyncLoop ADD
        self.syncs = defaultdict(list)  # (end_ns, wait_ms, sync_ms, cri_ms, ok)
        self.sandboxes = defaultdict(int)  # "Created PodSandbox for pod" count
        # CRI durations the agent logs itself, as (log time, ms):
        # RunPodSandbox ("Created PodSandbox for pod" duration=) and
        # CreateContainer + StartContainer ("Started container" create= start=)
        self.sandbox_ms = defaultdict(list)
        self.container_ms = defaultdict(list)
        self.removed_ns = {}  # "Pod removed"
        self.orphans = []  # (time, pod) of "Cleaning up orphaned pod"
        self.errors = []  # E lines (time, msg, kv)
        self.sync_lines = 0

    @classmethod
    def build(cls, lines, ref_ns: int):
        ix = cls()
        for t, sev, _src, msg, kv in parse_log(lines, ref_ns):
            if msg == "SyncLoop ADD":
                for p in kv.get("pods", []):
                    ix.add_ns.setdefault(p, t)
            elif msg == "Pod sync finished":
                try:
                    rec = (
                        t,
                        float(kv.get("wait_ms", "0")),
                        float(kv["sync_ms"]),
                        float(kv["cri_ms"]),
                        kv.get("ok", "true") == "true",
                    )
                except (KeyError, ValueError):
                    continue
                ix.syncs[kv.get("pod", "")].append(rec)
                ix.sync_lines += 1
            elif msg == "Created PodSandbox for pod":
                ix.sandboxes[kv.get("pod", "")] += 1
                d = duration_ms(kv.get("duration"))
                if d is not None:
                    ix.sandbox_ms[kv.get("pod", "")].append((t, d))
            elif msg == "Started container":
                c, s = duration_ms(kv.get("create")), duration_ms(kv.get("start"))
                if c is not None and s is not None:
                    ix.container_ms[kv.get("pod", "")].append((t, c + s))
            elif msg == "Pod removed":
                ix.removed_ns[kv.get("pod", "")] = t
            elif msg == "Cleaning up orphaned pod":
                ix.orphans.append((t, kv.get("pod", "")))
            if sev == "E":
                ix.errors.append((t, msg, kv))
        return ix


def duration_ms(v):
    """A logged duration ("412ms", "1.5s", "850us") in milliseconds."""
    if not v:
        return None
    m = re.match(r"^([0-9.]+)(ns|us|µs|ms|s)$", v)
    if not m:
        return None
    scale = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0}[m.group(2)]
    return float(m.group(1)) * scale


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


class PodResult:
    __slots__ = (
        "pod", "write_ns", "started_ns", "attempt", "add_ns", "latency_ms", "detect_ms",
        "wait_ms", "own_ms", "cri_ms", "sync_ms", "agent_ms", "n_syncs", "failed_syncs",
        "sandboxes", "logged_cri_ms", "rest_ms",
    )


def analyze_scenario(name, writes, started, ix: LogIndex):
    """Per-pod results for one scenario.  Pods that never ran have
    started_ns None and no figures."""
    by_pod = defaultdict(list)
    for row in started:
        pod, _container, when, attempt = row[0], row[1], row[2], int(row[3] or 0)
        by_pod[pod].append((parse_cri_time(when), attempt))
    results = []
    for pod, wns in writes:
        r = PodResult()
        r.pod, r.write_ns = pod, int(wns)
        st = by_pod.get(pod)
        r.started_ns = max(s for s, _ in st) if st else None
        r.attempt = max(a for _, a in st) if st else None
        r.add_ns = ix.add_ns.get(pod)
        r.sandboxes = ix.sandboxes.get(pod, 0)
        r.latency_ms = r.detect_ms = r.wait_ms = r.own_ms = r.cri_ms = None
        r.sync_ms = r.agent_ms = None
        r.n_syncs = r.failed_syncs = 0
        r.logged_cri_ms = r.rest_ms = None
        if r.started_ns is not None:
            # Every RunPodSandbox / Create+Start logged up to the "Started
            # container" line of the container that is running now.
            starts = ix.container_ms.get(pod, [])
            upto = next((t for t, _ in starts if t >= r.started_ns), None)
            if upto is not None:
                r.logged_cri_ms = sum(ms for t, ms in ix.sandbox_ms.get(pod, []) if t <= upto)
                r.logged_cri_ms += sum(ms for t, ms in starts if t <= upto)
        if r.started_ns is not None:
            r.latency_ms = (r.started_ns - r.write_ns) / MS
        if r.add_ns is not None:
            r.detect_ms = (r.add_ns - r.write_ns) / MS
        if r.latency_ms is not None and r.logged_cri_ms is not None:
            r.rest_ms = r.latency_ms - r.logged_cri_ms
        counted = [
            s for s in ix.syncs.get(pod, [])
            if r.started_ns is not None and s[0] - s[2] * MS <= r.started_ns
        ]
        if counted:
            r.n_syncs = len(counted)
            r.failed_syncs = sum(1 for s in counted if not s[4])
            r.wait_ms = sum(s[1] for s in counted)
            r.sync_ms = sum(s[2] for s in counted)
            r.cri_ms = sum(s[3] for s in counted)
            r.own_ms = r.sync_ms - r.cri_ms
            if r.detect_ms is not None:
                r.agent_ms = r.detect_ms + r.wait_ms + r.own_ms
        results.append(r)
    return results


def fmt(v, unit="ms", width=9):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a".rjust(width)
    return f"{v:{width}.1f}" if unit == "ms" else f"{v:{width}.2f}"


def stats_row(label, values):
    vals = [v for v in values if v is not None]
    if not vals:
        return f"  {label:<34}{'n/a':>9}{'n/a':>9}{'n/a':>9}   (n=0)"
    return (
        f"  {label:<34}{fmt(percentile(vals, 50))}{fmt(percentile(vals, 99))}"
        f"{fmt(max(vals))}   (n={len(vals)})"
    )


def load_metrics(path):
    m = {}
    if not path:
        return m
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            k, v = line.split("=", 1)
            m[k.strip()] = v.strip()
    return m


def mf(m, key):
    try:
        return float(m[key])
    except (KeyError, ValueError):
        return None


def summarize(scenarios, ix: LogIndex, metrics, targets):
    """The summary table as text lines."""
    out = []
    add = out.append
    add("ckubelet bench: " + metrics.get("date", "") + "  " + metrics.get("machine", ""))
    add(f"  pods per scenario: {metrics.get('n', '?')}, "
        f"paced interval: {metrics.get('interval', '?')} s, "
        f"load average before/after: {metrics.get('loadavg_start', '?')} / "
        f"{metrics.get('loadavg_end', '?')}")
    add("")
    notes = []
    if ix.sync_lines == 0:
        notes.append('no "Pod sync finished" lines in the agent log: the agent share '
                     "(wait/own/cri) cannot be computed; only detection is reported")
    for name, results in scenarios:
        ran = [r for r in results if r.started_ns is not None]
        if name == "floor":
            summarize_floor(add, results, ran, metrics, scenarios)
            continue
        add(f"Scenario {name}: {len(ran)}/{len(results)} pods running")
        add(f"  {'(milliseconds)':<34}{'p50':>9}{'p99':>9}{'max':>9}")
        add(stats_row("startup latency (write -> running)", [r.latency_ms for r in results]))
        add(stats_row("agent share (detect+wait+own)", [r.agent_ms for r in results]))
        add(stats_row("  detection (write -> SyncLoop ADD)", [r.detect_ms for r in results]))
        add(stats_row("  queueing for a worker (wait_ms)", [r.wait_ms for r in results]))
        add(stats_row("  own work in syncs (sync - cri)", [r.own_ms for r in results]))
        add(stats_row("agent share without queueing", [
            (r.detect_ms + r.own_ms) if r.detect_ms is not None and r.own_ms is not None
            else None for r in results]))
        add(stats_row("CRI calls (cri_ms)", [r.cri_ms for r in results]))
        add(stats_row("RunPodSandbox+Create+Start (logged)", [r.logged_cri_ms for r in results]))
        add(stats_row("latency - those three calls", [r.rest_ms for r in results]))
        if ran:
            first_write = min(r.write_ns for r in results)
            last_start = max(r.started_ns for r in ran)
            span = (last_start - first_write) / NS
            add(f"  first write -> last container running: {span:.2f} s"
                f" ({len(ran) / span:.1f} pods/s)" if span > 0 else "")
        cpu = mf(metrics, f"start_{name}_agent_cpu_s")
        if cpu is not None and results:
            add(f"  agent CPU from first write to all running: {cpu:.2f} s "
                f"({1000 * cpu / len(results):.1f} ms per pod)")
        retried = [r.pod for r in results if r.n_syncs > 1]
        if retried:
            add(f"  pods needing more than one sync: {len(retried)}")
        disturbed = [r.pod for r in results if r.sandboxes > 1 or (r.attempt or 0) > 0]
        if disturbed:
            notes.append(f"scenario {name}: {len(disturbed)} pods got a second sandbox or a "
                         f"restarted container (someone else removed them?): "
                         f"{', '.join(disturbed[:5])}{' ...' if len(disturbed) > 5 else ''}")
        td = mf(metrics, f"teardown_{name}_s")
        t0 = mf(metrics, f"teardown_{name}_start_ns")
        if td is not None:
            agent_view = ""
            removed = [ix.removed_ns[r.pod] for r in results if r.pod in ix.removed_ns]
            if t0 is not None and removed:
                agent_view = (f"; agent logged the last \"Pod removed\" after "
                              f"{(max(removed) - t0) / NS:.2f} s")
            add(f"  teardown of {len(results)} pods (manifests removed -> runtime has none): "
                f"{td:.2f} s{agent_view}")
        add("")

    hwm = mf(metrics, "ckubelet_vmhwm_kb")
    cpu = mf(metrics, "steady_cpu_pct")
    add("Agent resources")
    add(f"  peak RSS (VmHWM): {fmt_mb(hwm)}   target < {targets['rss_mb']:.0f} MB: "
        f"{verdict(hwm is not None and hwm / 1024 < targets['rss_mb'])}")
    add(f"  RSS idle / {metrics.get('n', '?')} pods running / end: "
        f"{fmt_mb(mf(metrics, 'ckubelet_rss_idle_kb'))} / "
        f"{fmt_mb(mf(metrics, 'ckubelet_rss_running_kb'))} / "
        f"{fmt_mb(mf(metrics, 'ckubelet_rss_end_kb'))}")
    add(f"  steady-state CPU over {metrics.get('steady_wall_s', '?')} s: "
        f"{metrics.get('steady_cpu_s', '?')} s = "
        f"{'n/a' if cpu is None else f'{cpu:.2f}'} % of one core   target < "
        f"{targets['cpu_pct']:g} %: {verdict(cpu is not None and cpu < targets['cpu_pct'])}")
    add(f"  threads: {metrics.get('ckubelet_threads', '?')}, open fds: "
        f"{metrics.get('ckubelet_fds', '?')}")
    measured = False
    for name, results in scenarios:
        vals = [r.agent_ms for r in results if r.agent_ms is not None]
        if not vals:
            continue
        measured = True
        p99 = percentile(vals, 99)
        noq = [r.detect_ms + r.own_ms for r in results
               if r.detect_ms is not None and r.own_ms is not None]
        add(f"  agent share p99, {name}: {p99:.1f} ms   target < {targets['agent_p99_ms']:g} ms: "
            f"{verdict(p99 < targets['agent_p99_ms'])}"
            f"   (without queueing: {percentile(noq, 99):.1f} ms)")
    if not measured and any(n != "floor" for n, _ in scenarios):
        add(f"  agent share p99: n/a   target < {targets['agent_p99_ms']:g} ms: not measured")
    add("Runtime, for context")
    if metrics.get("runtime") == "docker":
        add(f"  dockerd and its containerd, RSS with the pods running: "
            f"{fmt_mb(mf(metrics, 'containerd_rss_kb'))}, "
            f"steady-state CPU: {metrics.get('containerd_cpu_pct', '?')} % of one core")
        starts = ", ".join(f"{n} {metrics[f'start_{n}_shim_cpu_s']} s"
                           for n, _ in scenarios if f"start_{n}_shim_cpu_s" in metrics)
        add(f"  ckubelet-dockershim RSS with the pods running / peak: "
            f"{fmt_mb(mf(metrics, 'shim_rss_kb'))} / {fmt_mb(mf(metrics, 'shim_vmhwm_kb'))}, "
            f"steady-state CPU: {metrics.get('shim_cpu_pct', '?')} % of one core"
            f"{', CPU while starting: ' + starts if starts else ''}")
    else:
        add(f"  containerd RSS with the pods running: {fmt_mb(mf(metrics, 'containerd_rss_kb'))}, "
            f"steady-state CPU: {metrics.get('containerd_cpu_pct', '?')} % of one core")
    if ix.orphans:
        foreign = sorted({p for _t, p in ix.orphans if "/bench-" not in p})
        if foreign:
            notes.append("the agent cleaned up runtime pods that were not the bench's "
                         "(the runtime was shared during the run): " + ", ".join(foreign[:5]))
    if ix.errors:
        notes.append(f"{len(ix.errors)} error lines in the agent log, first: "
                     f"{ix.errors[0][1]} {ix.errors[0][2]}")
    for k in sorted(metrics):
        if k.startswith("disturbed_"):
            notes.insert(0, f"DISTURBED RUN ({k[len('disturbed_'):]}): {metrics[k]}; "
                            "the figures are not reliable")
    for n in notes:
        add("NOTE: " + n)
    return out


def makespan_s(results):
    """First write -> last container running, in seconds (None if none ran)."""
    ran = [r for r in results if r.started_ns is not None]
    if not ran:
        return None
    return (max(r.started_ns for r in ran) - min(r.write_ns for r in results)) / NS


def summarize_floor(add, results, ran, metrics, scenarios):
    """The same pods through crictl alone (4 at a time), no agent."""
    add(f"Scenario floor (crictl run, 4 at a time, no agent): "
        f"{len(ran)}/{len(results)} pods running")
    add(f"  {'(milliseconds)':<34}{'p50':>9}{'p99':>9}{'max':>9}")
    add(stats_row("startup latency (t0 -> running)", [r.latency_ms for r in results]))
    span = makespan_s(results)
    if span:
        line = f"  t0 -> last container running: {span:.2f} s ({len(ran) / span:.1f} pods/s)"
        burst = dict(scenarios).get("burst")
        bspan = makespan_s(burst) if burst else None
        if bspan:
            line += f"; the agent's burst took {bspan / span:.2f}x that"
        add(line)
    td = mf(metrics, "teardown_floor_s")
    if td is not None:
        add(f"  teardown (crictl stopp+rmp, 4 at a time, no grace period): {td:.2f} s")
    add("")


def fmt_mb(kb):
    return "n/a" if kb is None else f"{kb / 1024:.1f} MB"


def verdict(ok):
    return "met" if ok else "NOT met"


def raw_rows(scenarios):
    out = ["scenario\tpod\twrite_ns\tstarted_ns\tattempt\tlatency_ms\tdetect_ms\twait_ms"
           "\town_ms\tcri_ms\tsync_ms\tagent_ms\tsyncs\tfailed_syncs\tsandboxes"
           "\tlogged_cri_ms\trest_ms"]
    for name, results in scenarios:
        for r in results:
            cells = [name, r.pod, r.write_ns, r.started_ns, r.attempt]
            cells += [None if v is None else f"{v:.3f}" for v in
                      (r.latency_ms, r.detect_ms, r.wait_ms, r.own_ms, r.cri_ms, r.sync_ms,
                       r.agent_ms)]
            cells += [r.n_syncs, r.failed_syncs, r.sandboxes]
            cells += [None if v is None else f"{v:.3f}" for v in (r.logged_cri_ms, r.rest_ms)]
            out.append("\t".join("-" if c is None else str(c) for c in cells))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--scenario", nargs=3, action="append", default=[],
                    metavar=("NAME", "WRITES", "STARTED"))
    ap.add_argument("--metrics")
    ap.add_argument("--out")
    ap.add_argument("--target-rss-mb", type=float, default=15)
    ap.add_argument("--target-cpu-pct", type=float, default=1)
    ap.add_argument("--target-agent-p99-ms", type=float, default=50)
    a = ap.parse_args(argv)

    metrics = load_metrics(a.metrics)
    loaded = [(name, read_tsv(w), read_tsv(s)) for name, w, s in a.scenario]
    ref_ns = min((int(row[1]) for _n, w, _s in loaded for row in w), default=0)
    with open(a.log, encoding="utf-8", errors="replace") as f:
        ix = LogIndex.build(f, ref_ns)
    scenarios = [(name, analyze_scenario(name, [(r[0], r[1]) for r in w], s, ix))
                 for name, w, s in loaded]
    targets = {"rss_mb": a.target_rss_mb, "cpu_pct": a.target_cpu_pct,
               "agent_p99_ms": a.target_agent_p99_ms}
    summary = summarize(scenarios, ix, metrics, targets)
    print("\n".join(summary))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write("\n".join(summary) + "\n\n# metrics\n")
            for k in sorted(metrics):
                f.write(f"{k}={metrics[k]}\n")
            f.write("\n# per pod\n" + "\n".join(raw_rows(scenarios)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
