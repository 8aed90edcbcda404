"""Wall and CPU time of ``python -m bayesgen demo``, each run in a fresh Python process.

Cases (``--only NAME`` runs one; repeat with ``--repeats R``; medians are reported):

- ``default``: ``python -m bayesgen demo`` (one split, NUTS for GaussianNB on wine),
  the README's command;
- ``five``: ``--splits 5`` (the table with standard deviations);
- ``five-all``: ``--splits 5 --nuts all`` (NUTS for LDA, QDA and GaussianNB on wine,
  the five-split table of ``docs/benchmarks.md``);
- ``none``: ``--nuts none`` (no NUTS fit: what the rest of the demo costs).

Every run writes to a temporary folder and starts with nothing compiled in the
process: imports and JAX's compilation of the NUTS program count, as for a user's first
run (JAX's persistent compilation cache is only used when the user turns it on, which
this script leaves as the environment has it). CPU time is the user + system time of
the child process (``resource.getrusage(RUSAGE_CHILDREN)``); on a machine whose cores
are busy with other work it is the steadier figure, as wall time then also counts
waiting for a core. The load average is printed before each run.

Run::

    .venv/bin/python benchmarks/bench_demo.py [--repeats 3] [--only default --only five]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

CASES = {
    "default": [],
    "five": ["--splits", "5"],
    "five-all": ["--splits", "5", "--nuts", "all"],
    "none": ["--nuts", "none"],
}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``python -m bayesgen demo ARGS`` in a fresh process."""
    with tempfile.TemporaryDirectory() as folder:
        cpu = _children_cpu()
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "bayesgen", "demo", "--out", folder, "--no-progress",
             *args], capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        cpu = _children_cpu() - cpu
    if done.returncode:
        raise RuntimeError(f"demo {args} failed:\n{done.stderr[-3000:]}")
    return wall, cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", action="append", choices=list(CASES))
    args = parser.parse_args(argv)
    rows = []
    for case in args.only or list(CASES):
        walls, cpus = [], []
        for _ in range(args.repeats):
            load = os.getloadavg()[0]
            wall, cpu = measure(CASES[case])
            walls.append(wall)
            cpus.append(cpu)
            print(f"{case}: wall {wall:.1f} s, CPU {cpu:.1f} s (load average {load:.1f} "
                  "at the start)", flush=True)
        rows.append((case, statistics.median(walls), statistics.median(cpus), walls, cpus))
    print(f"\nmedians of {args.repeats} run(s):")
    print("| command | wall (s) | CPU (s) | runs: wall / CPU |")
    print("|---|---:|---:|---|")
    for case, wall, cpu, walls, cpus in rows:
        command = " ".join(["python -m bayesgen demo", *CASES[case]])
        runs = ", ".join(f"{w:.0f} / {c:.0f}" for w, c in zip(walls, cpus, strict=True))
        print(f"| `{command}` | {wall:.1f} | {cpu:.1f} | {runs} |")


if __name__ == "__main__":
    main()
