"""Second held-out check of ``StackedClassifier`` on data neither earlier study has seen.

The default stack changed after the first held-out check
(``validation/stacking_holdout.py``): it gained a fourth member, QDA with
``cov_structure="spherical"``, and a Dirichlet prior on its weights (``weight_prior=1``).
That check informed the change, so it no longer measures the defaults cleanly. This
script repeats it on new cells, with generators that neither the prior study
(``validation/prior_study.py``: Gaussian classes, raw bundled sets) nor the first check
(``make_classification``, ``make_gaussian_quantiles``, Student-t classes, log1p breast
cancer, summed or subset digits) used.

The cells (``CELLS``) and everything below were fixed and committed before any result
was seen (commit c87777b, the first commit of this file); nothing was changed after the
run but this sentence's commit.

Cells (n = training rows per class, the mean over the classes in the imbalanced cell; 3
classes unless said otherwise; a generated cell draws its generating parameters afresh
in every split):

- ``blobs spread d=5``: ``make_blobs`` with random centres in [-4, 4]^5 and per-class
  ``cluster_std`` 0.5, 1.5 and 3 (the classes differ in spread and in mean);
- ``mixture3 d=4``: every class a mixture of 3 Gaussians (weights Dirichlet(3, 3, 3),
  component means a class centre N(0, 1.5^2 I) plus N(0, 1.5^2 I), component covariances
  a random rotation of variances in [0.1, 1]);
- ``manifold d=20``: a 2-dimensional latent u ~ N(m_k, 0.5^2 I), m_k ~ N(0, I), mapped
  into d = 20 by one random map shared by the classes, x = W2 tanh(W1 u + b), plus
  N(0, 0.05^2 I) noise (the class covariances are nearly rank 2 and curved);
- ``lognormal d=8``: x = exp(z), z Gaussian per class (mean N(0, 0.5^2 I), covariance a
  random rotation of variances log-spaced over [0.05, 0.5]): skewed, positive features;
- ``units timestamp d=6``: Gaussian classes with a covariance per class (means
  N(0, I), variances log-spaced over [0.3, 3], random rotations); column 0 becomes a
  timestamp 1.7e9 + 1e6 z_0 (seconds), the other columns are multiplied by
  10**U(-4, 4);
- ``K=8 d=6``: 8 Gaussian classes, means N(0, 1.5^2 I), covariance per class a scale
  U(0.5, 2) times a random rotation of variances log-spaced over [0.3, 3];
- ``imbalanced d=5``: 3 Gaussian classes as in ``units timestamp`` (no rescaling) with
  class probabilities 0.8 / 0.15 / 0.05 (training rows 96 / 18 / 6 at n = 40; the test
  rows in the same ratio);
- ``collinear d=30``: a 5-dimensional Gaussian z per class (as in ``units timestamp``),
  x = z A + N(0, 1e-3^2 I), A (5, 30) standard normal: rank 5 plus 1e-3 noise;
- ``iris + 8 noise``, ``wine + 5 noise``: the bundled sets with 8 resp. 5 columns of
  N(0, 1) noise appended (new noise in every split);
- ``digits 1 vs 7``: the bundled digits 1 and 7 (64 raw pixels, several constant);
- ``breast cancer std``: the bundled set standardised per split by the training rows'
  means and standard deviations.

Each generated cell trains on exactly the class counts above and tests on 2,000 fresh
rows of the same generator (class counts in the training ratio); a bundled cell trains
on n random rows per class and tests on the rest. Splits per cell: ``--splits`` (10).

Models, log loss, summaries and the report's tables are those of the first check (its
``run``, with its ``models``, and its ``table`` and ``summary`` are imported from it):
``bg.StackedClassifier()`` (its defaults), ``bg.LDA`` and ``bg.QDA``
(``method="conjugate"``), scikit-learn's Ledoit-Wolf LDA, CV-tuned QDA and GaussianNB
(the prior study's), and standardised logistic regression (discriminative reference).
"best sk gen." is the lowest mean log loss of the three scikit-learn generative models
in the cell; the ratio divides a bayesgen model's mean log loss by it.

Run from the repository root (single process; the time of a run is written in the
results)::

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/stacking_holdout2.py \\
        --splits 10 --markdown validation/results_stacking_holdout2.md
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import ortho_group
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_blobs

from validation import stacking_holdout as holdout
from validation.stacking_holdout import report, take

#: (data set, n per class) cells, fixed before any result was seen
CELLS = [("blobs spread d=5", 10), ("blobs spread d=5", 50), ("mixture3 d=4", 100),
         ("manifold d=20", 20), ("manifold d=20", 100), ("lognormal d=8", 10),
         ("lognormal d=8", 50), ("units timestamp d=6", 20), ("K=8 d=6", 10),
         ("imbalanced d=5", 40), ("collinear d=30", 20), ("collinear d=30", 100),
         ("iris + 8 noise", 10), ("wine + 5 noise", 20), ("digits 1 vs 7", 10),
         ("breast cancer std", 20)]
BUNDLED = {"iris + 8 noise", "wine + 5 noise", "digits 1 vs 7", "breast cancer std"}
#: class probabilities of the imbalanced cell
IMBALANCE = (0.8, 0.15, 0.05)
N_TEST = 2000


def class_counts(name: str, n: int) -> np.ndarray:
    """Training rows per class of a generated cell, (K,)."""
    if name == "imbalanced d=5":
        return np.maximum(5, np.round(3 * n * np.asarray(IMBALANCE)).astype(int))
    return np.full(8 if name == "K=8 d=6" else 3, n)


def _covariances(rng: np.random.Generator, k: int, d: int, low: float,
                 high: float) -> np.ndarray:
    """k random covariances (k, d, d): rotations of variances log-spaced over
    [low, high]."""
    var = np.logspace(np.log10(low), np.log10(high), d)
    rotations = ortho_group.rvs(d, size=k, random_state=rng).reshape(k, d, d)
    return np.einsum("kij,j,klj->kil", rotations, var, rotations)


def _gaussian(means: np.ndarray, covs: np.ndarray, counts: np.ndarray,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """counts[k] rows of N(means[k], covs[k]) per class k: (X (sum counts, d), y)."""
    X = np.concatenate([rng.multivariate_normal(m, c, size=int(n))
                        for m, c, n in zip(means, covs, counts, strict=True)])
    return X, np.repeat(np.arange(len(counts)), counts)


def generate(name: str, counts_list: list[np.ndarray], seed: int
             ) -> list[tuple[np.ndarray, np.ndarray]]:
    """One (X, y) per entry of ``counts_list`` (counts[k] rows of class k) from one draw
    of the generating parameters of a generated cell; parameters and rows from
    ``seed``."""
    rng = np.random.default_rng(seed)
    if name == "blobs spread d=5":
        centres = rng.uniform(-4, 4, size=(3, 5))
        return [make_blobs(n_samples=list(counts), centers=centres,
                           cluster_std=[0.5, 1.5, 3.0], shuffle=False,
                           random_state=int(rng.integers(2**31))) for counts in counts_list]
    if name == "mixture3 d=4":
        d = 4
        centre = rng.normal(0, 1.5, size=(3, 1, d))
        means = centre + rng.normal(0, 1.5, size=(3, 3, d))
        covs = np.stack([_covariances(rng, 3, d, 0.1, 1.0) for _ in range(3)])
        mix = rng.dirichlet([3.0, 3.0, 3.0], size=3)
        out = []
        for counts in counts_list:
            X = []
            for k, n in enumerate(counts):
                comp = rng.choice(3, size=int(n), p=mix[k])
                X.append(np.stack([rng.multivariate_normal(means[k, c], covs[k, c])
                                   for c in comp]).reshape(int(n), d))
            out.append((np.concatenate(X), np.repeat(np.arange(3), counts)))
        return out
    if name == "manifold d=20":
        centres = rng.normal(size=(3, 2))
        W1, b = rng.normal(size=(8, 2)), rng.normal(size=8)
        W2 = rng.normal(size=(20, 8)) / np.sqrt(8)
        out = []
        for counts in counts_list:
            y = np.repeat(np.arange(3), counts)
            u = centres[y] + 0.5 * rng.normal(size=(y.size, 2))
            X = np.tanh(u @ W1.T + b) @ W2.T + 0.05 * rng.normal(size=(y.size, 20))
            out.append((X, y))
        return out
    if name == "lognormal d=8":
        means = rng.normal(0, 0.5, size=(3, 8))
        covs = _covariances(rng, 3, 8, 0.05, 0.5)
        return [(np.exp(X), y) for X, y in
                (_gaussian(means, covs, counts, rng) for counts in counts_list)]
    if name in ("units timestamp d=6", "imbalanced d=5", "collinear d=30"):
        d = {"units timestamp d=6": 6, "imbalanced d=5": 5, "collinear d=30": 5}[name]
        means = rng.normal(size=(3, d))
        covs = _covariances(rng, 3, d, 0.3, 3.0)
        data = [_gaussian(means, covs, counts, rng) for counts in counts_list]
        if name == "units timestamp d=6":
            scale = 10.0 ** rng.uniform(-4, 4, d)
            scale[0] = 1e6
            offset = np.zeros(d)
            offset[0] = 1.7e9
            return [(X * scale + offset, y) for X, y in data]
        if name == "collinear d=30":
            A = rng.normal(size=(d, 30))
            return [(X @ A + 1e-3 * rng.normal(size=(X.shape[0], 30)), y) for X, y in data]
        return data
    if name == "K=8 d=6":
        means = rng.normal(0, 1.5, size=(8, 6))
        covs = _covariances(rng, 8, 6, 0.3, 3.0) * rng.uniform(0.5, 2, size=(8, 1, 1))
        return [_gaussian(means, covs, counts, rng) for counts in counts_list]
    raise ValueError(f"unknown generated data set {name!r}")


def bundled(name: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A bundled data set (X, y), noise columns drawn from ``rng``."""
    if name == "iris + 8 noise":
        X, y = load_iris(return_X_y=True)
        return np.hstack([X, rng.normal(size=(y.size, 8))]), y
    if name == "wine + 5 noise":
        X, y = load_wine(return_X_y=True)
        return np.hstack([X, rng.normal(size=(y.size, 5))]), y
    if name == "digits 1 vs 7":
        X, y = load_digits(return_X_y=True)
        keep = np.isin(y, [1, 7])
        return X[keep], y[keep]
    if name == "breast cancer std":
        return load_breast_cancer(return_X_y=True)
    raise ValueError(f"unknown bundled data set {name!r}")


def cells(splits: int, seed: int):
    """(data, n per class, split, X_train, y_train, X_test, y_test) of every cell."""
    for index, (name, n) in enumerate(CELLS):
        for rep in range(splits):
            rng = np.random.default_rng([seed, index, rep])
            if name in BUNDLED:
                X, y = bundled(name, rng)
                train = take(y, np.full(np.unique(y).size, n), rng)
                test = np.setdiff1d(np.arange(y.size), train)
                X_tr, y_tr, X_te, y_te = X[train], y[train], X[test], y[test]
                if name == "breast cancer std":
                    mean, sd = X_tr.mean(axis=0), X_tr.std(axis=0)
                    X_tr, X_te = (X_tr - mean) / sd, (X_te - mean) / sd
            else:
                counts = class_counts(name, n)
                test_counts = np.round(N_TEST * counts / counts.sum()).astype(int)
                (X_tr, y_tr), (X_te, y_te) = generate(
                    name, [counts, test_counts], int(rng.integers(2**31)))
                order = rng.permutation(y_tr.size)
                X_tr, y_tr = X_tr[order], y_tr[order]
            yield name, n, rep, X_tr, y_tr, X_te, y_te


def markdown(results: pd.DataFrame, weights: pd.DataFrame, splits: int,
             seconds: float) -> str:
    """The results as a Markdown page (the tables as the first check's)."""
    lines = ["# Stacking on held-out data sets, second check: log loss", "",
             f"Mean ± sd over {splits} splits per cell of the held-out log loss (lower is "
             "better; probabilities clipped at 1e-15); `n` training rows per class (the "
             "imbalanced cell: the mean over its classes, in the ratio "
             f"{' / '.join(map(str, IMBALANCE))}). Generated by "
             "`validation/stacking_holdout2.py` (see its docstring for the design, the "
             f"cells and the command); {seconds:.0f} s single-process. The cells were "
             "fixed and committed before any result was seen; none is one of the prior "
             "study's or of the first held-out check's.", ""]
    return "\n".join([*lines, *report(results, weights, CELLS)]) + "\n"


def main() -> None:
    """The command line (the first check's, with these cells and this page)."""
    holdout.main(source=cells, page=markdown, description=__doc__.splitlines()[0])


if __name__ == "__main__":
    main()
