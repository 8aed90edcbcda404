"""bayesgen's MCMC against a plain PyMC model of the same classifier.

The plain model is what a PyMC user would write for QDA on iris: per class an
``LKJCholeskyCov`` (eta=2, half-normal scales) and a normal prior on the mean, and the
observed rows ``MvNormal(mu[y], chol[y])``, sampled with ``pm.sample`` (numpyro, or
PyMC's default sampler with ``--sampler pymc``, which took 265 s here). bayesgen's
``QDA(method="mcmc")`` samples the conjugate Normal-Inverse-Wishart model written on the
sufficient statistics. Both: 4 chains x 1000 draws after 1000 tuning steps, each in a
fresh process, so that compilation is included as in a user's first fit.

Run::

    .venv/bin/python benchmarks/bench_plain_pymc.py [--sampler numpyro|pymc]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

PLAIN = r"""
import json, time, warnings
warnings.simplefilter("ignore")
import numpy as np, pymc as pm, pytensor.tensor as pt, arviz as az
from sklearn.datasets import load_iris
X, y = load_iris(return_X_y=True)
K, d = 3, X.shape[1]
start = time.perf_counter()
with pm.Model(coords={"class": range(K), "feature": range(d)}) as model:
    pi = pm.Dirichlet("pi", a=np.ones(K))
    pm.Categorical("y", p=pi, observed=y)
    chols = []
    for k in range(K):
        chol, _, _ = pm.LKJCholeskyCov(
            f"chol_{k}", n=d, eta=2.0, sd_dist=pm.HalfNormal.dist(2.5 * X.std(0)),
            compute_corr=True,
        )
        chols.append(chol)
    chol = pt.stack(chols)
    mu = pm.Normal("mu", X.mean(0), 10 * X.std(0), dims=("class", "feature"))
    pm.MvNormal("x", mu=mu[y], chol=chol[y], observed=X)
    idata = pm.sample(1000, tune=1000, chains=4, nuts_sampler=__SAMPLER__, random_seed=0,
                      progressbar=False, compute_convergence_checks=False)
wall = time.perf_counter() - start
ess = az.ess(idata, var_names=["pi", "mu"])
print(json.dumps({"wall": wall, "min_ess": float(min(ess[v].min() for v in ess.data_vars))}))
"""

OURS = r"""
import json, time, warnings
warnings.simplefilter("ignore")
import arviz as az
import bayesgen as bg
from sklearn.datasets import load_iris
X, y = load_iris(return_X_y=True)
start = time.perf_counter()
clf = bg.QDA(method="mcmc", chains=4, draws=1000, tune=1000, random_state=0,
             progressbar=False).fit(X, y)
wall = time.perf_counter() - start
ess = az.ess(clf.idata_, var_names=["pi", "mu"])
print(json.dumps({"wall": wall, "min_ess": float(min(ess[v].min() for v in ess.data_vars))}))
"""


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sampler", default="numpyro", choices=["numpyro", "pymc"])
    args = parser.parse_args(argv)
    plain = _run(PLAIN.replace("__SAMPLER__", repr(args.sampler)))
    ours = _run(OURS)
    print("| iris QDA, 4 x 1000 draws after 1000 tune | wall s (fit, compile included) "
          "| min bulk ESS (pi, mu) | ESS/s |")
    print("|---|---|---|---|")
    for name, r in ((f"plain PyMC, observed rows, LKJ, {args.sampler}", plain),
                    ("bayesgen QDA(method='mcmc'), NIW on statistics", ours)):
        print(f"| {name} | {r['wall']:.1f} | {r['min_ess']:.0f} | "
              f"{r['min_ess'] / r['wall']:.0f} |")


if __name__ == "__main__":
    main()
