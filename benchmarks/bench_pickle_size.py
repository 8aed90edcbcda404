"""Bytes of ``pickle.dumps`` and of ``save()`` of MAP fits: GaussianNB on 200,000 x 20,
then every estimator except KernelNB (whose kernel centres are its fit) on 100,000 rows
of its support (20 features; MixedNB: 6 columns, Gaussian + Bernoulli + Poisson pairs).

Run (``PYTHONPATH`` picks the bayesgen measured)::

    .venv/bin/python benchmarks/bench_pickle_size.py
"""

from __future__ import annotations

import os
import pickle
import tempfile

import numpy as np

import bayesgen as bg


def data(kind: str, n: int, d: int = 20, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    if kind == "real":
        return rng.normal(size=(n, d)) + y[:, None], y
    if kind == "binary":
        return (rng.uniform(size=(n, d)) < np.where(y[:, None] == 1, 0.6, 0.3)).astype(float), y
    if kind == "count":
        return rng.poisson(np.where(y[:, None] == 1, 3.0, 1.5), size=(n, d)).astype(float), y
    if kind == "categorical":
        return rng.integers(0, 4, size=(n, d)).astype(float), y
    return np.column_stack([rng.normal(size=(n, 2)) + y[:, None],
                            (rng.uniform(size=(n, 2)) < 0.4).astype(float),
                            rng.poisson(2.0, size=(n, 2)).astype(float)]), y


CASES = {
    "LDA": (bg.LDA, "real"), "QDA": (bg.QDA, "real"), "GaussianNB": (bg.GaussianNB, "real"),
    "BernoulliNB": (bg.BernoulliNB, "binary"), "MultinomialNB": (bg.MultinomialNB, "count"),
    "PoissonNB": (bg.PoissonNB, "count"), "CategoricalNB": (bg.CategoricalNB, "categorical"),
    "MixedNB": (lambda **kw: bg.MixedNB(families=[("gaussian", [0, 1]), ("bernoulli", [2, 3]),
                                                   ("poisson", [4, 5])], **kw), "mixed"),
}


def sizes(est) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as folder:
        return len(pickle.dumps(est)), os.path.getsize(est.save(os.path.join(folder, "m.nc")))


def main() -> None:
    print(f"bayesgen from {os.path.dirname(bg.__file__)}")
    X, y = data("real", 200_000)
    p, s = sizes(bg.GaussianNB(method="map").fit(X, y))
    print(f"{'GaussianNB':14s} 200,000 x 20 MAP: pickle {p:>12,} B, save {s:>12,} B")
    for name, (factory, kind) in CASES.items():
        X, y = data(kind, 100_000)
        p, s = sizes(factory(method="map").fit(X, y))
        print(f"{name:14s} 100,000 x {X.shape[1]:2d} MAP: pickle {p:>12,} B, save {s:>12,} B",
              flush=True)


if __name__ == "__main__":
    main()
