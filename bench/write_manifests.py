#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write N static pod manifests into a directory, one every INTERVAL seconds
(0: all at once), and record when each one appeared.

Each manifest is written to a hidden file first (the file source ignores
hidden files) and renamed into place; the wall-clock time taken right after
the rename is the pod's "manifest written" time.  Writes are scheduled on
absolute times (start + i * INTERVAL) so that the pace does not drift.

Output (--out), one line per pod:
    <namespace>/<name>-<node>\t<epoch nanoseconds>

usage: write_manifests.py --dir DIR --node NODE --scenario NAME --n N
                          --interval SECONDS --image IMAGE --out FILE
"""

import argparse
import os
import sys
import time

MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels:
    ckubelet-bench: "{scenario}"
spec:
  # sleep is PID 1 and ignores SIGTERM: 0 is raised to the agent's minimum
  # grace period (2 s, as upstream), so that teardown does not wait 30 s.
  terminationGracePeriodSeconds: 0
  containers:
  - name: sleep
    image: {image}
    command: ["sleep", "3600"]
"""


def pod_name(scenario: str, i: int, width: int) -> str:
    """The manifest's metadata.name for pod i (1-based)."""
    return f"bench-{scenario}-{i:0{width}d}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--interval", type=float, required=True)
    ap.add_argument("--image", default="localhost/busybox:1.35")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if a.n < 1 or a.interval < 0:
        ap.error("--n must be >= 1 and --interval >= 0")

    width = max(2, len(str(a.n)))
    # Render everything first: the timed loop only writes and renames.
    pods = []
    for i in range(1, a.n + 1):
        name = pod_name(a.scenario, i, width)
        text = MANIFEST.format(name=name, scenario=a.scenario, image=a.image).encode()
        pods.append((name, text))

    lines = []
    start = time.monotonic()
    for i, (name, text) in enumerate(pods):
        delay = start + i * a.interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        hidden = os.path.join(a.dir, f".{name}.yaml.tmp")
        final = os.path.join(a.dir, f"{name}.yaml")
        fd = os.open(hidden, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, text)
        finally:
            os.close(fd)
        os.rename(hidden, final)
        written_ns = time.time_ns()
        lines.append(f"default/{name}-{a.node}\t{written_ns}\n")

    with open(a.out, "w", encoding="utf-8") as f:
        f.writelines(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
