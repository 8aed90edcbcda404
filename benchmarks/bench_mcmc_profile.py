"""Where the wall time of a ``method="mcmc"`` fit goes: wall-clock stamps, no profiler.

In a fresh Python process (imports and compilation count, as in a user's first fit):
``import bayesgen``, loading iris, then ``QDA(method="mcmc", chains=4, draws=1000,
tune=1000)``, then a second fit of the same shape on a bootstrap resample of iris (same
process: cross-validation, bootstraps and re-run notebooks look like this). The phases
are timed by wrapping the functions that do them with ``time.perf_counter`` stamps
(nesting shown by indentation; each line gives its start offset from the start of the
process's Python code and its wall time):

- imports: ``import bayesgen``, then the imports the first fit would do itself
  (``bayesgen.estimators.discriminant``, ``pymc``, ``jax``, ``numpyro``, ``arviz``), timed one by
  one before it (the sum is the same),
- ``build_stats_model``: the PyMC statistics model,
- ``_jax_nuts.sample``: the log-density graph, constant lifting, PyTensor->JAX
  conversion (``_jaxify``), tracing and XLA compilation (``backend_compile*``, the
  on-disk cache look-up included) and running the NUTS program,
- ``_build_idata``: ``InferenceData`` assembly (``loglik.at_fit``: pointwise
  log-likelihood), ``warn_if_not_converged``: R-hat and ESS.

Run::

    .venv/bin/python benchmarks/bench_mcmc_profile.py [--cold] [--draws 1000]

``--cold`` points JAX's persistent cache at an empty temporary folder (a first fit ever);
by default the user's cache is used (warm after the first run). Timings on a shared
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
import json, sys, time, warnings, functools, importlib
T0 = time.perf_counter()
STAMPS = []
DEPTH = [0]

def stamp(label, fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        start = time.perf_counter()
        DEPTH[0] += 1
        try:
            return fn(*a, **k)
        finally:
            DEPTH[0] -= 1
            STAMPS.append((start - T0, DEPTH[0], label, time.perf_counter() - start))
    return wrapper

def timed_import(name):
    start = time.perf_counter()
    importlib.import_module(name)
    STAMPS.append((start - T0, 0, f"import {name}", time.perf_counter() - start))

args = json.loads(sys.argv[1])
timed_import("numpy")
timed_import("bayesgen")
import numpy as np
import bayesgen as bg
timed_import("sklearn.datasets")
from sklearn.datasets import load_iris
# imports the first fit would do itself, timed here (the sum is the same)
for name in ("bayesgen.estimators.discriminant", "pymc", "jax", "numpyro", "arviz"):
    timed_import(name)

# wrap the phases (module attributes: the callers import them at call time)
from bayesgen import _base, mcmc, model as bgmodel, loglik, _jax_nuts
import bayesgen.estimators.discriminant  # noqa
PATCH = [
    (bgmodel, "build_stats_model"), (mcmc, "sample_posterior"),
    (mcmc, "warn_if_not_converged"), (mcmc, "convergence_report"),
    (loglik, "at_fit"), (_base.GenerativeClassifier, "_build_idata"),
    (_base.GenerativeClassifier, "fit"),
]
for name in dir(_jax_nuts):
    obj = getattr(_jax_nuts, name)
    if callable(obj) and getattr(obj, "__module__", "") == "bayesgen.inference.jax_nuts" \
            and not isinstance(obj, type):
        PATCH.append((_jax_nuts, name))
try:
    from bayesgen import _graph_inputs
    for name in ("lift_constants",):
        if hasattr(_graph_inputs, name):
            PATCH.append((_graph_inputs, name))
except ImportError:
    pass
for owner, name in PATCH:
    setattr(owner, name, stamp(f"{getattr(owner, '__name__', owner)}.{name}",
                               getattr(owner, name)))

_late = []
def late_patches():
    # modules imported by the fit itself: patched once they exist
    import pymc, jax
    from jax._src import compiler, dispatch, interpreters
    from pymc.model import core
    core.Model.logp = stamp("pymc Model.logp", core.Model.logp)
    for name in ("backend_compile_and_load", "compile_or_get_cached"):
        if hasattr(compiler, name):
            setattr(compiler, name, stamp(f"jax compiler.{name}", getattr(compiler, name)))
    from jax._src.interpreters import pxla
    for name in ("lower_sharding_computation", "lower_parallel_callable"):
        if hasattr(pxla, name):
            setattr(pxla, name, stamp(f"jax pxla.{name} (trace+lower)", getattr(pxla, name)))
    import arviz
    for name in ("rhat", "ess"):
        setattr(arviz, name, stamp(f"arviz.{name}", getattr(arviz, name)))

X, y = load_iris(return_X_y=True)
kw = dict(chains=4, draws=args["draws"], tune=args["draws"], random_state=1,
          progressbar=False)
idx = np.random.default_rng(7).integers(0, len(y), len(y))
result = {}
first_sample_stats = None
for label, (Xf, yf) in (("first", (X, y)), ("second", (X[idx], y[idx]))):
    t = time.perf_counter()
    STAMPS.append((t - T0, 0, f"---- {label} fit ----", 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if label == "first":
            late_patches()
        est = bg.QDA(method="mcmc", **kw).fit(Xf, yf)
    result[label] = time.perf_counter() - t
    if label == "first":
        ss = est.idata_.sample_stats
        result["tree"] = {k: float(ss[k].mean()) for k in ("tree_depth", "n_steps")
                          if k in ss}
        result["tree"]["step_size"] = float(ss["step_size"].mean())
        result["tree"]["max_tree_depth"] = int(ss["tree_depth"].max())
result["stamps"] = sorted(STAMPS)
result["end"] = time.perf_counter() - T0
print("RESULT" + json.dumps(result))
"""


def run(draws: int, cold: bool) -> dict:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as folder:
        if cold:
            # JAX's own persistent cache (bayesgen turns none on), every program stored
            env["JAX_COMPILATION_CACHE_DIR"] = folder
            env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
        arg = json.dumps({"draws": draws})
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CODE, arg], capture_output=True,
                              text=True, env=env)
        wall = time.perf_counter() - start
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    if proc.returncode or not lines:
        raise RuntimeError(proc.stderr[-3000:])
    return {**json.loads(lines[-1][len("RESULT"):]), "process": wall}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="empty JAX compilation cache")
    parser.add_argument("--draws", type=int, default=1000, help="draws = tune per chain")
    parser.add_argument("--min-time", type=float, default=0.02,
                        help="hide stamps shorter than this (s)")
    args = parser.parse_args(argv)
    res = run(args.draws, args.cold)
    cache = "empty" if args.cold else "user's (warm after a first run)"
    print(f"iris QDA, 4 chains x ({args.draws} tune + {args.draws} draws), JAX cache: {cache}")
    print(f"whole process {res['process']:.2f} s; Python code {res['end']:.2f} s; "
          f"first fit {res['first']:.2f} s; second fit {res['second']:.2f} s")
    print("first fit's NUTS: " + ", ".join(f"{k} {v:.3g}" for k, v in res["tree"].items()))
    print(f"{'start':>8} {'wall':>7}  what")
    for start, depth, label, wall in res["stamps"]:
        if wall >= args.min_time or label.startswith("----"):
            print(f"{start:8.2f} {wall:7.2f}  {'  ' * depth}{label}")


if __name__ == "__main__":
    main()
