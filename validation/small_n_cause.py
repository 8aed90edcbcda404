"""Why the Gaussian posterior predictives were overconfident with few rows per feature.

Generated data where the truth is known: 2 Gaussian classes in d dimensions sharing a
covariance that is a random rotation of variances log-spaced over [0.1, 10], the class
means +-delta/2 with delta a random direction of Mahalanobis length ``Delta`` (the
generating parameters drawn afresh in every split), n training rows per class and 1,000
test rows. For each d in ``--dims``, n in ``--rows`` and ``Delta`` in ``--deltas``, the
held-out log loss (mean +- sd over the splits) of

- the Bayes classifier (the true parameters);
- ``bg.LDA(method="conjugate")`` with the class-mean prior strength kappa0
  (``mean_strength``) at 0.01 (the estimator's default), 1, d / 4, "auto" (the evidence's
  choice, at most d / 4) and the evidence's unbounded choice
  (``prior_search_["mean_strength_unbounded"]`` where the bound applied);
- LDA with ``cov_dof="auto"`` (the evidence's covariance strength instead of OAS) and
  kappa0 = 0.01 (is the covariance prior the cause?);
- ``bg.QDA(method="conjugate")`` at kappa0 = 0.01 and "auto";
- the class frequencies (log 2 = 0.693).

Under mu_k | Sigma ~ N(m0, Sigma / kappa0) the prior expects a squared Mahalanobis
distance d / kappa0 between a class mean and the overall mean: kappa0 = 0.01 claims
that in d = 60 dimensions the classes lie about 77 standard deviations apart, and the
posterior of the means, which shrinks the sample means by N_k / (N_k + kappa0), keeps
their noise (squared length about d / N_k) as signal.

``--study per-class`` asks the same of the models with a density per class, QDA and
Gaussian naive Bayes (:func:`losses_per_class`), Delta = 0 being pure noise (the class
frequencies are then the best prediction): each at its default prior, with the class
means shrunk, with the class covariances pinned to the common target S0, and both, so
that the share of the class-mean prior and of the per-class covariances in the
overconfidence can be read off.

Run from the repository root (a few minutes single-process each)::

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_cause.py \\
        --dims 5 20 60 --rows 10 20 --deltas 1.5 3 --splits 3
    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_cause.py \\
        --dims 5 20 60 --rows 10 20 --deltas 0 3 --splits 3 --study per-class
"""

from __future__ import annotations

import argparse
import itertools
import warnings

import numpy as np
from scipy.stats import multivariate_normal, ortho_group
from sklearn.metrics import log_loss

import bayesgen as bg

FEW = {"method": "conjugate", "draws": 20, "chains": 1, "progressbar": False}


def make(d: int, n: int, delta: float, rng: np.random.Generator, n_test: int = 1000):
    """Training and test rows of one draw, the true covariance and the Bayes classifier's
    log loss."""
    var = np.logspace(-1, 1, d)
    rotation = ortho_group.rvs(d, random_state=rng)
    cov = rotation @ np.diag(var) @ rotation.T
    chol = np.linalg.cholesky(cov)
    u = rng.normal(size=d)
    means = np.outer([-0.5, 0.5], chol @ (delta * u / np.linalg.norm(u)))

    def draw(m: int):
        y = np.repeat([0, 1], m)
        return means[y] + rng.normal(size=(2 * m, d)) @ chol.T, y

    X_tr, y_tr = draw(n)
    X_te, y_te = draw(n_test // 2)
    logp = np.stack([multivariate_normal(mu, cov).logpdf(X_te) for mu in means], axis=1)
    proba = np.exp(logp - logp.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    return X_tr, y_tr, X_te, y_te, cov, log_loss(y_te, proba)


def losses(X_tr, y_tr, X_te, y_te) -> dict:
    """Held-out log loss of every model of the study on one split."""
    d = X_tr.shape[1]
    out = {}

    def score(name, est):
        out[name] = log_loss(y_te, est.fit(X_tr, y_tr).predict_proba(X_te), labels=[0, 1])
        return est

    score("LDA k=0.01", bg.LDA(**FEW))
    score("LDA k=1", bg.LDA(mean_strength=1.0, **FEW))
    score("LDA k=d/4", bg.LDA(mean_strength=d / 4, **FEW))
    auto = score("LDA k=auto", bg.LDA(mean_strength="auto", **FEW))
    free = auto.prior_search_.get("mean_strength_unbounded")
    out["LDA k=evidence unbounded"] = (out["LDA k=auto"] if free is None else log_loss(
        y_te, bg.LDA(mean_strength=free, **FEW).fit(X_tr, y_tr).predict_proba(X_te)))
    score("LDA cov_dof=auto", bg.LDA(cov_dof="auto", **FEW))
    score("QDA k=0.01", bg.QDA(**FEW))
    score("QDA k=auto", bg.QDA(mean_strength="auto", **FEW))
    return out


def losses_per_class(X_tr, y_tr, X_te, y_te) -> dict:
    """Held-out log loss of the per-class models (``--study per-class``): QDA and
    Gaussian naive Bayes, each with its default prior, with the class means shrunk
    (kappa0 = "auto" for QDA, d / 4 for naive Bayes, which has no "auto"), with the
    class covariances pinned to the common target S0 (``cov_dof`` / ``var_dof`` =
    1e6: the classes then differ in their means only), and both."""
    d = X_tr.shape[1]
    out = {}

    def score(name, est):
        out[name] = log_loss(y_te, est.fit(X_tr, y_tr).predict_proba(X_te), labels=[0, 1])

    score("QDA()", bg.QDA(**FEW))
    score("QDA k=auto", bg.QDA(mean_strength="auto", **FEW))
    score("QDA pinned cov", bg.QDA(cov_dof=1e6, **FEW))
    score("QDA pinned cov k=auto", bg.QDA(cov_dof=1e6, mean_strength="auto", **FEW))
    score("QDA pooled target k=auto", bg.QDA(cov_target="pooled", mean_strength="auto",
                                             **FEW))
    score("GaussianNB()", bg.GaussianNB(**FEW))
    score("GaussianNB k=d/4", bg.GaussianNB(mean_strength=d / 4, **FEW))
    score("GaussianNB pinned var", bg.GaussianNB(var_dof=1e6, **FEW))
    score("GaussianNB pinned var k=d/4", bg.GaussianNB(var_dof=1e6, mean_strength=d / 4,
                                                       **FEW))
    score("LDA k=auto", bg.LDA(mean_strength="auto", **FEW))
    return out


def main() -> None:
    """Command line: ``--dims``, ``--rows``, ``--deltas``, ``--splits``, ``--study``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[5, 20, 60])
    parser.add_argument("--rows", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--deltas", type=float, nargs="+", default=[1.5, 3.0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--study", choices=["lda", "per-class"], default="lda",
                        help="lda: the class-mean prior of LDA (and QDA); per-class: "
                             "what makes QDA and Gaussian naive Bayes overconfident")
    args = parser.parse_args()
    study = losses if args.study == "lda" else losses_per_class
    header = None
    for d, n, delta in itertools.product(args.dims, args.rows, args.deltas):
        table: dict[str, list[float]] = {}
        for rep in range(args.splits):
            rng = np.random.default_rng([d, n, int(10 * delta), rep])
            X_tr, y_tr, X_te, y_te, _, bayes = make(d, n, delta, rng)
            table.setdefault("Bayes", []).append(bayes)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for name, value in study(X_tr, y_tr, X_te, y_te).items():
                    table.setdefault(name, []).append(value)
        if header is None:
            header = list(table)
            print("| d | n | Delta | " + " | ".join(header) + " |")
            print("|---|---|---|" + "---|" * len(header))
        print(f"| {d} | {n} | {delta:g} | " + " | ".join(
            f"{np.mean(table[k]):.3f} ± {np.std(table[k], ddof=1):.3f}" for k in header)
            + " |", flush=True)


if __name__ == "__main__":
    main()
