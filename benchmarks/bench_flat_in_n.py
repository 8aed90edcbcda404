"""MCMC cost flat in N: NUTS on QDA (d = 4, K = 3) at N = 2,000, 20,000 and 200,000 rows.

The model is written on the sufficient statistics, so a leapfrog step (one gradient)
costs the same at every N; the number of leapfrog steps per draw follows the geometry
NUTS sees, which the Laplace whitening (``bayesgen.inference.jax_nuts``) keeps the same
at every N. This times ``bayesgen.inference.mcmc.sample_posterior`` (default 2 chains x
(500 tune + 500 draws), the statistics of a ``method="map"`` fit) in one process: a
first fit compiles the NUTS program (reused for every size, which share the model
structure), then the sizes alternate ``--repeats`` times (back to back, so a load
change on a shared machine hits every size alike). Printed per size: the median wall
and CPU (user + sys of the process, all threads) seconds, the mean leapfrog steps per
draw (numpyro's ``num_steps``), the median step size, and the ratios to the smallest N.

    .venv/bin/python benchmarks/bench_flat_in_n.py [--repeats 5] [--chains 2]
        [--tune 500] [--draws 500] [--sizes 2000 20000 200000]
"""

from __future__ import annotations

import argparse
import time
import warnings

import arviz as az
import numpy as np

import bayesgen as bg
from bayesgen.inference import mcmc


def data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Three Gaussian classes in d = 4 with different spreads (as ``bench_mcmc.py``)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=n)
    X = rng.normal(scale=3, size=(3, 4))[y] + rng.normal(size=(n, 4)) * (1 + 0.3 * y[:, None])
    return X, y


def nuts_run(n: int, chains: int, tune: int, draws: int, seed: int = 1) -> dict:
    """Wall and CPU seconds of ``sample_posterior``, mean leapfrog steps per draw,
    median step size, divergences, largest R-hat and smallest bulk ESS over every
    parameter entry (constant entries skipped)."""
    X, y = data(n)
    est = bg.QDA(method="map", chains=chains, draws=draws, tune=tune, random_state=seed,
                 progressbar=False).fit(X, y)
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log_pi, params, stats, _ = mcmc.sample_posterior(est)
    out = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
           "steps": float(np.mean(stats["n_steps"])),
           "step_size": float(np.median(stats["step_size"])),
           "divergences": int(np.sum(stats["diverging"]))}
    # convergence over every parameter: pi (as log) and the means and covariances
    flat = np.concatenate([v.reshape(chains, draws, -1)
                           for v in (log_pi, *params.values())], axis=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dataset = az.convert_to_dataset(flat)
        out["rhat"] = float(np.nanmax(az.rhat(dataset)["x"].values))
        out["ess"] = float(np.nanmin(az.ess(dataset, method="bulk")["x"].values))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000, 200_000])
    args = parser.parse_args(argv)
    shape = dict(chains=args.chains, tune=args.tune, draws=args.draws)
    first = time.perf_counter()
    nuts_run(args.sizes[0], **shape)
    print(f"first fit (compiles the NUTS program): {time.perf_counter() - first:.2f} s")
    runs: dict[int, list[dict]] = {n: [] for n in args.sizes}
    for rep in range(args.repeats):
        for n in args.sizes:
            runs[n].append(nuts_run(n, **shape, seed=1 + rep))
    med = {n: {k: float(np.median([r[k] for r in rs])) for k in rs[0]} for n, rs in runs.items()}
    print(f"{args.chains} chains x ({args.tune} + {args.draws}), medians of {args.repeats}")
    print("| N | wall s | CPU s | leapfrog steps per draw | step size | divergences (sum) "
          "| max R-hat | min bulk ESS |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for n, m in med.items():
        div = sum(r["divergences"] for r in runs[n])
        rhat = max(r["rhat"] for r in runs[n])
        ess = min(r["ess"] for r in runs[n])
        print(f"| {n:,} | {m['wall']:.2f} | {m['cpu']:.2f} | {m['steps']:.1f} | "
              f"{m['step_size']:.3f} | {div} | {rhat:.3f} | {ess:.0f} |")
    base = args.sizes[0]
    for n in args.sizes[1:]:
        per_run = [a["wall"] / b["wall"] for a, b in zip(runs[n], runs[base], strict=True)]
        print(f"N = {n:,} / N = {base:,}: wall {med[n]['wall'] / med[base]['wall']:.2f} "
              f"(per back-to-back pair: median {np.median(per_run):.2f}, "
              f"{min(per_run):.2f}-{max(per_run):.2f}), CPU "
              f"{med[n]['cpu'] / med[base]['cpu']:.2f}, leapfrog steps "
              f"{med[n]['steps'] / med[base]['steps']:.2f} (goal: wall <= 1.1)")


if __name__ == "__main__":
    main()
