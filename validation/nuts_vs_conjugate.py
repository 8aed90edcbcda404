"""NUTS against the exact conjugate posterior on one simulated data set per SBC spec.

A finer check of ``method="mcmc"`` than a 100-replication SBC: for each spec of
:mod:`validation.sbc_specs`, draw one truth from its prior, simulate ``n_per_class``
rows per class, and compare, for every summary but pi_0, the NUTS posterior (2 chains,
``--draws`` draws after ``--tune`` tuning steps) with ``--exact`` conjugate draws::

    z = (mean_nuts - mean_exact) / sqrt(MCSE_nuts^2 + sd_exact^2 / n_exact)
    sd ratio = sd_nuts / sd_exact

Under a correct NUTS model z ~ N(0, 1) and the sd ratio is 1 up to Monte Carlo error
(about 1 / sqrt(2 ESS)). Run::

    OMP_NUM_THREADS=1 .venv/bin/python -m validation.nuts_vs_conjugate \
        mvn_lda_diag mvn_lda_spherical mvn_qda_diag mvn_qda_spherical
"""

from __future__ import annotations

import argparse
import warnings

import arviz as az
import numpy as np

from validation.sbc_specs import N_CLASSES, SPECS


def compare(name: str, *, n_per_class: int = 10, draws: int = 4000, tune: int = 1000,
            n_exact: int = 40_000, seed: int = 5) -> list[dict]:
    """One row per summary (pi_0 excluded): exact and NUTS mean and sd, z, sd ratio, ESS."""
    spec = SPECS[name]()
    rng = np.random.default_rng(seed)
    truth = spec.draw_truth(rng)
    y = np.repeat(np.arange(N_CLASSES), n_per_class)
    X = spec.simulate(truth, y, rng)
    exact = spec.make_estimator(n_exact, seed + 1).fit(X, y).idata_.posterior
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*may not have converged.*")
        nuts = spec.make_estimator(10, seed + 2).set_params(
            method="mcmc", chains=2, draws=draws, tune=tune, progressbar=False
        ).fit(X, y).idata_.posterior
    exact_draws = {k: v.values.reshape(-1, *v.shape[2:]) for k, v in exact.data_vars.items()}
    nuts_draws = {k: v.values for k, v in nuts.data_vars.items()}  # (chain, draw, ...)
    rows = []
    for summary, f in spec.summaries.items():
        if summary == "pi_0":
            continue
        a, b = f(exact_draws), f(nuts_draws)
        ds = az.convert_to_dataset(b)
        mcse, ess = float(az.mcse(ds)["x"]), float(az.ess(ds)["x"])
        z = (b.mean() - a.mean()) / np.hypot(mcse, a.std() / np.sqrt(a.size))
        rows.append({"family": name, "summary": summary, "exact_mean": a.mean(),
                     "exact_sd": a.std(), "nuts_mean": b.mean(), "nuts_sd": b.std(),
                     "z": float(z), "sd_ratio": float(b.std() / a.std()), "ess": ess})
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    """Command line: print one line per summary and the worst |z| per family."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("family", choices=sorted(SPECS), nargs="+")
    parser.add_argument("--n-per-class", type=int, default=10)
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--exact", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    out = []
    for name in args.family:
        rows = compare(name, n_per_class=args.n_per_class, draws=args.draws, tune=args.tune,
                       n_exact=args.exact, seed=args.seed)
        for r in rows:
            print(f"{r['family']:18s} {r['summary']:13s} exact {r['exact_mean']:8.4f} "
                  f"({r['exact_sd']:.4f})  nuts {r['nuts_mean']:8.4f} ({r['nuts_sd']:.4f})  "
                  f"z {r['z']:6.2f}  sd ratio {r['sd_ratio']:.3f}  ESS {r['ess']:.0f}")
        print(f"{name}: worst |z| {max(abs(r['z']) for r in rows):.2f}, sd ratio "
              f"{min(r['sd_ratio'] for r in rows):.3f}..{max(r['sd_ratio'] for r in rows):.3f}",
              flush=True)
        out += rows
    return out


if __name__ == "__main__":
    main()
