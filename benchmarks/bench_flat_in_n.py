"""MCMC cost flat in N: NUTS on QDA (d = 4, K = 3) at N = 2,000 and N = 200,000 rows.

The model is written on the sufficient statistics, so the sampling cost does not grow
with N. This times ``bayesgen.inference.mcmc.sample_posterior`` (4 chains x (1000 tune + 1000
draws), the statistics of a ``method="map"`` fit) in one process: a first fit compiles
the NUTS program (it is then reused for both sizes, which share the model structure),
then the two sizes alternate ``--repeats`` times. ``bench_mcmc.py`` times the same in
fresh processes, where compilation (and its noise) is part of every run. The cost per
leapfrog step (one gradient) is what the statistics keep flat; the number of steps per
draw follows the shape of the posterior, which narrows with N.

    .venv/bin/python benchmarks/bench_flat_in_n.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import bayesgen as bg
from bayesgen.inference import mcmc


def data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Three Gaussian classes in d = 4 with different spreads (as ``bench_mcmc.py``)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=n)
    X = rng.normal(scale=3, size=(3, 4))[y] + rng.normal(size=(n, 4)) * (1 + 0.3 * y[:, None])
    return X, y


def nuts_seconds(n: int) -> tuple[float, float]:
    """Wall time of ``sample_posterior`` and the mean leapfrog steps per draw."""
    X, y = data(n)
    est = bg.QDA(method="map", chains=4, draws=1000, tune=1000, random_state=1,
                 progressbar=False).fit(X, y)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, stats = mcmc.sample_posterior(est)
    return time.perf_counter() - start, float(np.mean(stats["n_steps"]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    compile_s, _ = nuts_seconds(2_000)
    times: dict[int, list[float]] = {2_000: [], 200_000: []}
    steps: dict[int, float] = {}
    for _ in range(args.repeats):
        for n in times:
            seconds, steps[n] = nuts_seconds(n)
            times[n].append(seconds)
    print(f"first fit (compiles the NUTS program): {compile_s:.2f} s")
    print("| N | NUTS seconds (median) | leapfrog steps per draw | ms per 1,000 steps |")
    print("|---|---:|---:|---:|")
    per_step = {}
    for n, values in times.items():
        per_step[n] = np.median(values) / (steps[n] * 4 * 2000) * 1e6
        print(f"| {n:,} | {np.median(values):.2f} | {steps[n]:.1f} | {per_step[n]:.1f} |")
    ratio = np.median(times[200_000]) / np.median(times[2_000])
    print(f"ratio N = 200,000 / N = 2,000: {ratio:.2f} (goal <= 1.1); per leapfrog step: "
          f"{per_step[200_000] / per_step[2_000]:.2f}")


if __name__ == "__main__":
    main()
