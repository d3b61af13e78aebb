# SPDX-License-Identifier: Apache-2.0
"""Side by side: the same standalone bench run (bench/run) on containerd and
through ckubelet-dockershim on Docker Engine (bench/dockershim).

usage: dockershim_table.py CONTAINERD_RESULTS CONTAINERD_METRICS
                           DOCKER_RESULTS DOCKER_METRICS [--out FILE]

The results files are analyze.py's (their "# per pod" rows); the metrics
files bench/run's metrics.env.  Prints a Markdown table: ratio = docker /
containerd (below 1: the docker chain is cheaper or faster).
"""

import argparse
import sys

import analyze


def per_pod(path):
    """{scenario: [(write_ns, started_ns or None, latency_ms or None)]}"""
    rows = {}
    with open(path) as f:
        lines = f.read().split("\n# per pod\n", 1)
    if len(lines) < 2:
        raise SystemExit(f"{path}: no '# per pod' section (not an analyze.py results file)")
    body = lines[1].strip().splitlines()
    head = body[0].split("\t")
    col = {name: i for i, name in enumerate(head)}
    for line in body[1:]:
        c = line.split("\t")
        started = None if c[col["started_ns"]] == "-" else int(c[col["started_ns"]])
        lat = None if c[col["latency_ms"]] == "-" else float(c[col["latency_ms"]])
        rows.setdefault(c[col["scenario"]], []).append(
            (int(c[col["write_ns"]]), started, lat))
    return rows


def metrics(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, sep, v = line.rstrip("\n").partition("=")
            if sep:
                out[k] = v
    return out


def num(m, key, scale=1.0):
    try:
        return float(m[key]) * scale
    except (KeyError, ValueError):
        return None


def span_s(rows):
    ran = [s for _w, s, _l in rows if s is not None]
    if not rows or len(ran) < len(rows):
        return None  # not every pod ran: no makespan
    return (max(ran) - min(w for w, _s, _l in rows)) / 1e9


def fmt(v, unit):
    if v is None:
        return "n/a"
    if unit == "MB":
        return f"{v:.1f} MB"
    if unit == "%":
        return f"{v:.2f} %"
    if unit == "s":
        return f"{v:.2f} s"
    return f"{v:.0f} ms"


def table(c_rows, c_m, d_rows, d_m):
    out = ["| (N = %s pods) | containerd | dockershim → dockerd | ratio |" % c_m.get("n", "?"),
           "|---|---|---|---|"]

    def row(label, a, b, unit):
        ratio = f"{b / a:.2f}" if a and b is not None else "n/a"
        out.append(f"| {label} | {fmt(a, unit)} | {fmt(b, unit)} | {ratio} |")

    for name in ("paced", "burst", "floor"):
        if name not in c_rows and name not in d_rows:
            continue
        cr, dr = c_rows.get(name, []), d_rows.get(name, [])
        what = "crictl alone, no agent" if name == "floor" else "ckubelet"
        row(f"{name} ({what}): first write → all running", span_s(cr), span_s(dr), "s")
        for p in (50, 99):
            cl = [lat for _w, _s, lat in cr if lat is not None]
            dl = [lat for _w, _s, lat in dr if lat is not None]
            row(f"{name}: per-pod latency p{p}", analyze.percentile(cl, p) if cl else None,
                analyze.percentile(dl, p) if dl else None, "ms")
        if name != "floor":
            row(f"{name}: teardown", num(c_m, f"teardown_{name}_s"),
                num(d_m, f"teardown_{name}_s"), "s")
    row("ckubelet RSS, pods running", num(c_m, "ckubelet_rss_running_kb", 1 / 1024),
        num(d_m, "ckubelet_rss_running_kb", 1 / 1024), "MB")
    row("ckubelet steady CPU", num(c_m, "steady_cpu_pct"), num(d_m, "steady_cpu_pct"), "%")
    row("runtime RSS, pods running (containerd; dockerd + its containerd)",
        num(c_m, "containerd_rss_kb", 1 / 1024), num(d_m, "containerd_rss_kb", 1 / 1024), "MB")
    row("runtime steady CPU", num(c_m, "containerd_cpu_pct"), num(d_m, "containerd_cpu_pct"), "%")
    out.append(f"| ckubelet-dockershim RSS, pods running / peak | | "
               f"{fmt(num(d_m, 'shim_rss_kb', 1 / 1024), 'MB')} / "
               f"{fmt(num(d_m, 'shim_vmhwm_kb', 1 / 1024), 'MB')} | |")
    out.append(f"| ckubelet-dockershim steady CPU | | {fmt(num(d_m, 'shim_cpu_pct'), '%')} | |")
    starts = [f"{n} {d_m[f'start_{n}_shim_cpu_s']} s" for n in ("paced", "burst")
              if f"start_{n}_shim_cpu_s" in d_m]
    if starts:
        out.append(f"| ckubelet-dockershim CPU while the pods start | | {', '.join(starts)} | |")
    for m, label in ((c_m, "containerd"), (d_m, "docker")):
        for k in sorted(m):
            if k.startswith("disturbed_"):
                out.append(f"\nDISTURBED ({label} run, {k[len('disturbed_'):]}): {m[k]}")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("containerd_results")
    ap.add_argument("containerd_metrics")
    ap.add_argument("docker_results")
    ap.add_argument("docker_metrics")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    text = table(per_pod(a.containerd_results), metrics(a.containerd_metrics),
                 per_pod(a.docker_results), metrics(a.docker_metrics))
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
