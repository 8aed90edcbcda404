"""Benchmark of method="mcmc" on the multivariate normal classifiers (LDA, QDA).

Every case runs in a fresh Python process, so that its time includes PyTensor's and
JAX's compilation, as a user's first fit would:

1. ``bg.QDA(method="mcmc", chains=4, draws=1000, tune=1000).fit`` on iris (the whole
   ``fit``: NUTS, idata_ with the pointwise log-likelihood, convergence checks); goal:
   <= 10 s. Reported with the minimum bulk ESS over pi, mu and cov, ESS per second of
   fit, the mean number of leapfrog steps per draw, divergences and the largest R-hat.
   The same fit with ``draws=tune=10`` measures the fixed cost (compilation, set-up);
   the difference is the cost of the 8,000 NUTS iterations themselves.
2. The same on iris LDA and on simulated d = 10 QDA / LDA data (N = 300, K = 3,
   correlated features on scales from 0.01 to 100): convergence of the NIW model where
   the posterior is data-dominated.
3. Flat in N: the NUTS part alone (``bayesgen.inference.mcmc.sample_posterior``, compilation
   included) for QDA with d = 4 at N = 2,000 and N = 200,000 rows; goal: ratio <= 1.1
   (issue 16; this fresh-process timing includes compilation, ``bench_flat_in_n.py``
   times NUTS alone in one process).
   (A whole ``fit`` at N = 200,000 would also time the pointwise log-likelihood of
   4,000 draws x 200,000 rows for ``idata_``, which is not NUTS.)

Run::

    .venv/bin/python benchmarks/bench_mcmc.py [--quick]

``--quick`` skips the d = 10 cases. Timings on a shared machine are noisy; the fixed
cost dominates and depends on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CASE_CODE = r"""
import json, time, warnings
t_start = time.perf_counter()
import numpy as np
import arviz as az
import bayesgen as bg
from bayesgen import mcmc

case = json.loads({case!r})
rng = np.random.default_rng(0)
if case["data"] == "iris":
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
elif case["data"] == "d10":
    d, n_per, K = 10, 100, 3
    y = np.repeat(np.arange(K), n_per)
    X = np.empty((y.size, d))
    for k in range(K):
        B = rng.normal(size=(d, d))
        cov = B @ B.T / d + 0.3 * np.eye(d)
        X[y == k] = rng.multivariate_normal(rng.normal(scale=2, size=d), cov, size=n_per)
    X *= np.logspace(-2, 2, d)
else:  # "sim<N>": d = 4, K = 3
    n = int(case["data"][3:])
    y = rng.integers(0, 3, size=n)
    X = rng.normal(scale=3, size=(3, 4))[y] + rng.normal(size=(n, 4)) * (1 + 0.3 * y[:, None])
cls = getattr(bg, case["cls"])
kw = dict(chains=4, draws=case["draws"], tune=case["draws"], random_state=1, progressbar=False)
t_imported = time.perf_counter()
out = {"import": t_imported - t_start}
if case.get("nuts_only"):
    est = cls(method="map", **kw).fit(X, y)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcmc.sample_posterior(est)
    out["seconds"] = time.perf_counter() - t0
else:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(method="mcmc", **kw).fit(X, y)
    out["seconds"] = time.perf_counter() - t0
    post = est.idata_.posterior[["pi", "mu", "cov"]]
    ess = az.ess(post, method="bulk")
    rhat = az.rhat(post)
    stats = est.idata_.sample_stats
    out["ess"] = min(float(ess[v].min()) for v in ess.data_vars)
    out["rhat"] = max(float(rhat[v].max()) for v in rhat.data_vars)
    out["divergences"] = int(stats["diverging"].sum())
    out["steps"] = float(stats["n_steps"].mean()) if "n_steps" in stats else float("nan")
print("RESULT" + json.dumps(out))
"""


def run_case(**case) -> dict:
    """Run one case in a fresh interpreter; returns its measurements and wall time."""
    code = CASE_CODE.replace("{case!r}", repr(json.dumps(case)))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    wall = time.perf_counter() - start
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    if proc.returncode or not lines:
        raise RuntimeError(f"case {case} failed:\n{proc.stderr[-3000:]}")
    return {**json.loads(lines[-1][len("RESULT"):]), "process": wall}


def _fit_row(label: str, result: dict, fixed: dict | None) -> str:
    fixed_s = f"{fixed['seconds']:.1f}" if fixed else "-"
    nuts_s = f"{result['seconds'] - fixed['seconds']:.1f}" if fixed else "-"
    return (
        f"| {label} | {result['process']:.1f} | {result['seconds']:.1f} | {fixed_s} | "
        f"{nuts_s} | {result['ess']:.0f} | {result['ess'] / result['seconds']:.0f} | "
        f"{result['steps']:.1f} | {result['divergences']} | {result['rhat']:.3f} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the d = 10 cases")
    args = parser.parse_args(argv)

    print("| case (4 chains x 1000 draws, 1000 tune) | process s | fit s | fixed s "
          "(10 + 10) | NUTS s | min bulk ESS | ESS/s of fit | steps/draw | div. | R-hat |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cases = [("iris QDA", "QDA", "iris"), ("iris LDA", "LDA", "iris")]
    if not args.quick:
        cases += [("d=10 QDA (N=300)", "QDA", "d10"), ("d=10 LDA (N=300)", "LDA", "d10")]
    for label, cls, data in cases:
        result = run_case(cls=cls, data=data, draws=1000)
        fixed = run_case(cls=cls, data=data, draws=10) if label == "iris QDA" else None
        print(_fit_row(label, result, fixed), flush=True)

    small = run_case(cls="QDA", data="sim2000", draws=1000, nuts_only=True)
    large = run_case(cls="QDA", data="sim200000", draws=1000, nuts_only=True)
    print()
    print("| NUTS only (sample_posterior), QDA d=4, 4 x (1000 + 1000) | seconds |")
    print("|---|---|")
    print(f"| N = 2,000 | {small['seconds']:.1f} |")
    print(f"| N = 200,000 | {large['seconds']:.1f} |")
    ratio = large["seconds"] / small["seconds"]
    print(f"| ratio (goal <= 1.1, see bench_flat_in_n.py) | {ratio:.2f} |")


if __name__ == "__main__":
    main()
