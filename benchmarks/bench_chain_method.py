"""``QDA(method="mcmc")`` on iris by ``chain_method``: wall and CPU seconds of the first
fit in a fresh process (compilation included, no persistent cache) and of a refit on a
bootstrap resample (same shapes: the compiled program is reused).

4 chains x (1000 tune + 1000 draws), numpyro. Each run is its own process, so that the
first fit compiles; "parallel" needs one XLA device per chain, which the run sets the
way a user would (``XLA_FLAGS`` before JAX starts). CPU seconds are reported next to
wall seconds because they move less with the load of a shared machine.

Run::

    .venv/bin/python benchmarks/bench_chain_method.py [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

METHODS = ("sequential", "vectorized", "parallel")

CODE = r"""
import json, sys, time, warnings
import numpy as np
import bayesgen as bg
from sklearn.datasets import load_iris

X, y = load_iris(return_X_y=True)
kw = dict(method="mcmc", random_state=0, chain_method=sys.argv[1])
idx = np.random.default_rng(1).integers(0, len(y), len(y))
out = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, (A, b) in (("first", (X, y)), ("refit", (X[idx], y[idx]))):
        wall, cpu = time.perf_counter(), time.process_time()
        bg.QDA(**kw).fit(A, b)
        out[name] = [time.perf_counter() - wall, time.process_time() - cpu]
print("RESULT" + json.dumps(out))
"""


def run(method: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    if method == "parallel":
        env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    proc = subprocess.run([sys.executable, "-c", CODE, method], capture_output=True,
                          text=True, env=env, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    if proc.returncode or not lines:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(lines[-1][len("RESULT"):])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--only", action="append", choices=METHODS)
    args = parser.parse_args(argv)
    for _ in range(args.repeats):
        for method in args.only or METHODS:
            load = os.getloadavg()[0]
            r = run(method)
            print(f"{method:10s} first fit {r['first'][0]:6.1f} s wall / {r['first'][1]:5.1f} s "
                  f"CPU, refit {r['refit'][0]:5.1f} s wall / {r['refit'][1]:4.1f} s CPU "
                  f"(load average {load:.1f} at the start)", flush=True)


if __name__ == "__main__":
    main()
