"""Wall times of issue 16's speed table, each in a fresh Python process.

Cases (``--only NAME`` runs one; repeat with ``--repeats R``, the minimum is reported
because other processes on a shared machine only ever add time):

- ``import``: ``python -c "import bayesgen"``; ``import-qda``: ``python -c "from bayesgen
  import QDA"`` (an estimator: scikit-learn's base classes come with it);
  ``import-sklearn``: ``python -c "import sklearn.base"``, the reference;
  ``help``: ``python -m bayesgen --help``.
- ``cold`` / ``warm``: ``QDA(method="mcmc")`` on iris, 4 chains x (1000 tune + 1000
  draws), the ``fit`` alone (imports excluded), with JAX's persistent compilation
  cache in an empty folder (a first fit ever) / after a first fit filled it.
- ``refit``: in the same process as ``warm``, a second fit on a bootstrap resample of
  iris (same shapes: cross-validation, bootstraps, re-run notebooks).
- ``cold CPU``, ``warm CPU``, ``refit CPU``: the same fits' CPU time (user + system, all
  threads of the process, ``time.process_time``): on a busy machine the wall time
  includes waiting for a core, the CPU time does not.
- ``flat``: whole ``fit`` of QDA (d = 4, K = 3, 4 x (1000 + 1000)) on N = 2,000 and on
  N = 200,000 simulated rows, each after a warm-up fit on other data of the same
  shape in the same process (so that compilation is not counted); reports the ratio.
- ``demo``: ``python -m bayesgen demo`` (output to a temporary folder).

Run::

    .venv/bin/python benchmarks/bench_speed.py [--repeats 3] [--only cold --only warm]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

FIT = r"""
import json, sys, time, warnings
import numpy as np
import bayesgen as bg
case = sys.argv[1]
warnings.simplefilter("ignore")
kw = dict(chains=4, draws=1000, tune=1000, random_state=1, progressbar=False)
out = {}
bg.QDA  # imported before the timers (lazy attribute)
if case in ("cold", "warm"):
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    t, c = time.perf_counter(), time.process_time()
    bg.QDA(method="mcmc", **kw).fit(X, y)
    out[case] = time.perf_counter() - t
    out[case + " CPU"] = time.process_time() - c
    idx = np.random.default_rng(7).integers(0, len(y), len(y))
    t, c = time.perf_counter(), time.process_time()
    bg.QDA(method="mcmc", **kw).fit(X[idx], y[idx])
    out["refit"] = time.perf_counter() - t
    out["refit CPU"] = time.process_time() - c
else:  # flat
    def sim(n, seed):
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 3, size=n)
        X = rng.normal(scale=3, size=(3, 4))[y] + rng.normal(size=(n, 4)) * (1 + 0.3 * y[:, None])
        return X, y
    for n in (2000, 200000):
        bg.QDA(method="mcmc", **kw).fit(*sim(n, 1))  # compiles (if the program depends on N)
        t = time.perf_counter()
        bg.QDA(method="mcmc", **kw).fit(*sim(n, 2))
        out[f"N={n}"] = time.perf_counter() - t
    out["ratio"] = out["N=200000"] / out["N=2000"]
print("RESULT" + json.dumps(out))
"""


def _run(args: list[str], env: dict | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(f"{args[:2]} failed:\n{proc.stderr[-3000:]}")
    return wall, proc.stdout


def _fit(case: str, env: dict) -> dict:
    _, stdout = _run(["-c", FIT, case], env)
    line = [ln for ln in stdout.splitlines() if ln.startswith("RESULT")][-1]
    return json.loads(line[len("RESULT"):])


def measure(case: str) -> dict:
    """One measurement of ``case`` (see the module docstring), in seconds."""
    env = dict(os.environ)
    if case == "import":
        return {"import": _run(["-c", "import bayesgen"])[0]}
    if case == "import-qda":
        return {"import-qda": _run(["-c", "from bayesgen import QDA"])[0]}
    if case == "import-sklearn":
        return {"import-sklearn": _run(["-c", "import sklearn.base"])[0]}
    if case == "help":
        return {"help": _run(["-m", "bayesgen", "--help"])[0]}
    if case == "demo":
        with tempfile.TemporaryDirectory() as folder:
            return {"demo": _run(["-m", "bayesgen", "demo", "--out", folder])[0]}
    with tempfile.TemporaryDirectory() as folder:
        if case in ("cold", "warm"):
            # JAX's own persistent cache (bayesgen turns none on), every program stored
            env["JAX_COMPILATION_CACHE_DIR"] = folder
            env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
        if case == "warm":
            _fit("cold", env)  # fills the cache
        return _fit(case, env)


CASES = ("import", "import-qda", "import-sklearn", "help", "cold", "warm", "flat", "demo")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", action="append", choices=CASES)
    args = parser.parse_args(argv)
    best: dict[str, float] = {}
    ratios: list[float] = []
    for case in args.only or CASES:
        for _ in range(args.repeats):
            for name, value in measure(case).items():
                if name == "ratio":  # a ratio's minimum over runs is not a typical ratio
                    ratios.append(value)
                else:
                    best[name] = min(best.get(name, float("inf")), value)
                print(f"{case}: {name} = {value:.2f}", flush=True)
    print("\nminimum over", args.repeats, "runs:")
    for name, value in best.items():
        print(f"| {name} | {value:.2f} |")
    if ratios:  # flat: the ratio of the two sizes' minima, and the per-run spread
        print(f"| ratio of the minima | {best['N=200000'] / best['N=2000']:.2f} |")
        print(f"| per-run ratios (median, range) | {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}) |")


if __name__ == "__main__":
    main()
