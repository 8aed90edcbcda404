"""Where the time of a ``method="mcmc"`` fit goes, and what a refit costs.

In a fresh Python process (so that imports and compilation count, as in a user's first
fit): ``import bayesgen``, then ``QDA(method="mcmc", chains=4, draws=1000, tune=1000)``
on iris under ``cProfile``, then a second fit of the same shape on a bootstrap resample
of iris (same process: cross-validation, bootstraps and re-run notebooks look like this).
For each fit the cumulative time of its phases is read off the profile:

- model: building the PyMC statistics model (``build_stats_model``),
- graph: PyMC's log-density graph and bayesgen's constant lifting
  (``Model.logp``, ``lift_constants``),
- jaxify: PyTensor's rewrites and conversion to JAX (``jax_funcify`` and the rewrites),
- compile: XLA compilation (``backend_compile``, on-disk cache look-ups included),
- start: PyMC's initial point,
- sample: running the NUTS program (compilation excluded),
- idata: ``InferenceData`` assembly (pointwise log-likelihood included),
- diagnostics: the convergence checks (R-hat, ESS).

Run::

    .venv/bin/python benchmarks/bench_mcmc_profile.py [--cold] [--top 25] [--draws 1000]

``--cold`` points JAX's persistent cache at an empty temporary folder (a first fit ever);
by default the user's cache is used (warm after the first run). ``--top N`` also prints
the N functions with the largest cumulative time of the first fit. Timings on a shared
machine are noisy: repeat and take the minimum.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CODE = r"""
import cProfile, json, pstats, sys, time, warnings
t0 = time.perf_counter()
import numpy as np
import bayesgen as bg
t_import = time.perf_counter() - t0
from sklearn.datasets import load_iris

PHASES = {
    "model": ["build_stats_model"],
    "graph": ["logp", "lift_constants"],
    "jaxify": ["_jaxify", "get_jaxified_graph", "get_jaxified_logp"],
    "compile": ["backend_compile", "backend_compile_and_load", "compile_or_get_cached"],
    "start": ["initial_point", "_get_batched_jittered_initial_points"],
    "idata": ["_build_idata"],
    "diagnostics": ["warn_if_not_converged"],
}

def phases(prof, wall):
    st = pstats.Stats(prof)
    out = {}
    for phase, names in PHASES.items():
        best = 0.0
        for (file, line, func), (cc, nc, tt, ct, callers) in st.stats.items():
            if func in names and ("site-packages" in file or "bayesgen" in file):
                if phase == "graph" and func == "logp" and "model/core.py" not in file:
                    continue
                best = max(best, ct)
        out[phase] = round(best, 3)
    out["total"] = round(wall, 3)
    return out

def top(prof, n):
    st = pstats.Stats(prof)
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][3])[:n]
    return [f"{ct:7.2f} s  {func} ({file.split('site-packages/')[-1]}:{line})"
            for (file, line, func), (cc, nc, tt, ct, callers) in rows]

args = json.loads(sys.argv[1])
X, y = load_iris(return_X_y=True)
kw = dict(chains=4, draws=args["draws"], tune=args["draws"], random_state=1,
          progressbar=False)
result = {"import": round(t_import, 3)}
for label, (Xf, yf) in (("first", (X, y)), ("second", None)):
    if Xf is None:
        idx = np.random.default_rng(7).integers(0, len(y), len(y))
        Xf, yf = X[idx], y[idx]
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bg.QDA(method="mcmc", **kw).fit(Xf, yf)
    prof.disable()
    wall = time.perf_counter() - t
    result[label] = phases(prof, wall)
    if label == "first" and args["top"]:
        result["top"] = top(prof, args["top"])
print("RESULT" + json.dumps(result))
"""


def run(draws: int, top: int, cold: bool) -> dict:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as folder:
        if cold:
            env["BAYESGEN_JAX_CACHE"] = folder
        arg = json.dumps({"draws": draws, "top": top})
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CODE, arg], capture_output=True,
                              text=True, env=env)
        wall = time.perf_counter() - start
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    if proc.returncode or not lines:
        raise RuntimeError(proc.stderr[-3000:])
    return {**json.loads(lines[-1][len("RESULT"):]), "process": round(wall, 2)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="empty JAX compilation cache")
    parser.add_argument("--top", type=int, default=0, help="print the N costliest functions")
    parser.add_argument("--draws", type=int, default=1000, help="draws = tune per chain")
    args = parser.parse_args(argv)
    res = run(args.draws, args.top, args.cold)
    cache = "empty" if args.cold else "user's (warm after a first run)"
    print(f"iris QDA, 4 chains x ({args.draws} tune + {args.draws} draws), JAX cache: {cache}")
    print(f"import bayesgen: {res['import']:.2f} s; whole process: {res['process']:.1f} s")
    phases = [k for k in res["first"] if k != "total"]
    print("| fit | " + " | ".join(phases) + " | total s |")
    print("|---" * (len(phases) + 2) + "|")
    for label in ("first", "second"):
        row = res[label]
        print(f"| {label} | " + " | ".join(f"{row[p]:.2f}" for p in phases)
              + f" | {row['total']:.2f} |")
    print("(phases are cumulative profile times and may nest: 'jaxify' and 'compile' "
          "run inside the sampler call; cProfile adds some overhead)")
    for line in res.get("top", []):
        print(line)


if __name__ == "__main__":
    main()
