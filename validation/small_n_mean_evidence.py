"""Why the evidence merges the class means when rows per class are fewer than features.

``LDA(mean_strength="auto")`` chooses the class-mean prior strength kappa0 by the NIW
evidence with the prior mean m0 set to the overall mean of the rows (a plug-in). Left
free, that choice is kappa0 = 1e4 (the class means merged) in every cell with 60
features and 10 or 20 rows per class, even where the classes lie 3 standard deviations
apart (``validation/small_n_cause.py``), which is why it is bounded at d / 4.

This study tests one explanation. With m0 plugged in, the evidence is that of K class
means drawn around a *known* centre, so it charges the Occam factor of K free class
means, prod_k (kappa0 / (kappa0 + N_k))^(d/2), while the data, centred at their own
mean, leave only K - 1 free contrasts: for 2 classes in d = 60 dimensions the extra
factor is about (d / 2) log(1 + N_k / kappa0) (some 17 nats at N_k = 10, kappa0 = 13),
more than the signal of a 3-standard-deviation difference can repay. Integrating m0
out under a flat prior (restricted maximum likelihood, REML) gives, for LDA (one
Sigma ~ IW(Psi0, nu0), mu_k | Sigma ~ N(m0, Sigma / kappa0), w_k = kappa0 N_k /
(kappa0 + N_k), m_w = sum_k w_k xbar_k / sum_k w_k), up to terms free of kappa0::

    plug-in:  F(kappa0) = d/2 sum_k log(kappa0 / (kappa0 + N_k))
                          - (nu0 + N) / 2 log|Psi0 + S + sum_k w_k (xbar_k - m0)(.)^T|
    flat m0:  F(kappa0) = d/2 sum_k log(kappa0 / (kappa0 + N_k)) - d/2 log(sum_k w_k)
                          - (nu0 + N - 1) / 2 log|Psi0 + S + sum_k w_k (xbar_k - m_w)(.)^T|

(S the pooled within-class scatter). Both are maximised here over kappa0 in
[1e-4, 1e8] on a grid of 241 points of log kappa0 refined by a bounded scalar search,
with nu0 and Psi0 = (nu0 - d - 1) S0 those of ``LDA()`` (nu0 from OAS, S0 the diagonal of
the pooled within-class variances). The plug-in choice is checked against the library's
own (``LDA(mean_strength="auto", cov_dof=nu0, cov_scale=1, mean_prior=<overall
mean>)``, its ``prior_search_["mean_strength_unbounded"]`` where the d / 4 bound
applied). Since this study the library's ``LDA(mean_strength="auto")`` (``mean_prior``
None) uses the flat-m0 evidence, unbounded; the column ``LDA(mean_strength='auto')`` of
a run after that change is the flat-m0 choice with nu0 from OAS.

Oracles on generated data (``--study generated``; 2 Gaussian classes sharing a covariance
Sigma, a random rotation of variances log-spaced over [0.1, 10], class means
+-delta/2 with delta of Mahalanobis length ``Delta`` in a random direction, 1,000 test
rows, parameters drawn afresh in every split): with Sigma known, the predictive
N(m_k, Sigma (1 + 1 / (N_k + kappa0))) at kappa0 = 0.01, at the plug-in evidence's kappa0
and at the flat-m0 evidence's kappa0 (the marginal of the class means with Sigma known).
Columns: the Bayes classifier, ``LDA()``, ``LDA(mean_strength=...)`` at the plug-in and
the flat-m0 choices (everything else at ``LDA()``'s defaults), the library's bounded
``LDA(mean_strength="auto")``, the oracles, the class frequencies, and the median
chosen kappa0.

``--per-class``: ``QDA()`` and ``GaussianNB()`` at their defaults and with kappa0 at
LDA's flat-m0 choice, which isolates what their per-class covariances (variances) add.

``--study real``: the cells of ``validation/small_n.py`` (``--cells small_n``) or of
``validation/stacking_holdout2.py`` (``--cells holdout2``), same seeds and splits, with
``LDA()``, ``LDA(mean_strength="auto")`` and ``LDA(mean_strength=<flat-m0 kappa0>)``.

Run from the repository root::

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_mean_evidence.py \\
        --study generated --dims 5 20 60 --rows 10 20 --deltas 0 1.5 3 --splits 3
    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_mean_evidence.py \\
        --study real --splits 3
    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_mean_evidence.py \\
        --study real --cells holdout2 --splits 3
    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_mean_evidence.py \\
        --study generated --dims 5 20 60 --rows 100 --deltas 0 1.5 3 --splits 3
    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_mean_evidence.py \\
        --study generated --dims 5 20 60 --rows 10 20 --deltas 0 3 --splits 3 --per-class
    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_mean_evidence.py \\
        --study real --splits 3 --per-class
"""

from __future__ import annotations

import argparse
import itertools
import warnings

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp
from sklearn.metrics import log_loss

import bayesgen as bg
from bayesgen.families import gaussian_stats as gstats
from validation.small_n_cause import make  # the generator with known truth

FEW = {"method": "conjugate", "draws": 20, "chains": 1, "progressbar": False}
#: log kappa0 search range and grid
LOG_K = (np.log(1e-4), np.log(1e8))
GRID = 241


def _objective(Z: np.ndarray, y: np.ndarray, c: float, nu0: float, flat: bool):
    """F(log kappa0) of the module docstring in S0-whitened coordinates Z (Psi0 = c I)."""
    classes = np.unique(y)
    N_k = np.array([np.sum(y == k) for k in classes], dtype=float)
    xbar = np.stack([Z[y == k].mean(axis=0) for k in classes])
    centred = Z - xbar[np.searchsorted(classes, y)]
    base = c * np.eye(Z.shape[1]) + centred.T @ centred
    N, d = N_k.sum(), Z.shape[1]
    m_plug = Z.mean(axis=0)

    def F(log_k: float) -> float:
        k = np.exp(log_k)
        w = k * N_k / (k + N_k)
        m = (w @ xbar) / w.sum() if flat else m_plug
        D = (xbar - m) * np.sqrt(w)[:, None]
        _, logdet = np.linalg.slogdet(base + D.T @ D)
        value = 0.5 * d * np.sum(np.log(k / (k + N_k)))
        if flat:
            return value - 0.5 * d * np.log(w.sum()) - 0.5 * (nu0 + N - 1.0) * logdet
        return value - 0.5 * (nu0 + N) * logdet

    return F


def evidence_kappa(X: np.ndarray, y: np.ndarray, nu0: float, *, flat: bool) -> float:
    """kappa0 maximising the LDA evidence (module docstring) at nu0 and
    Psi0 = (nu0 - d - 1) S0, S0 the library's default target (pooled within-class
    variances); ``flat``: m0 integrated out under a flat prior, else the overall mean."""
    classes = np.unique(y)
    stats = gstats.scatter_stats(X, np.searchsorted(classes, y), np.ones(len(y)),
                                 classes.size, tied=True)
    s0 = gstats.default_scale(stats)
    F = _objective(X / np.sqrt(s0), y, nu0 - X.shape[1] - 1.0, nu0, flat)
    grid = np.linspace(*LOG_K, GRID)
    values = np.array([F(g) for g in grid])
    i = int(np.argmax(values))
    if i in (0, GRID - 1):
        return float(np.exp(grid[i]))
    best = minimize_scalar(lambda g: -F(g), bounds=(grid[i - 1], grid[i + 1]),
                           method="bounded", options={"xatol": 1e-6})
    return float(np.exp(best.x))


def oracle(X, y, X_te, cov, kappa0) -> tuple[np.ndarray, float]:
    """Class probabilities with Sigma known (module docstring) and the kappa0 used:
    a number, "plug-in" or "flat" (the marginal of the class means, m0 the overall mean
    or integrated out)."""
    Li = np.linalg.inv(np.linalg.cholesky(cov))
    Z, Z_te = X @ Li.T, X_te @ Li.T
    classes = np.unique(y)
    N_k = np.array([np.sum(y == k) for k in classes], dtype=float)
    xbar = np.stack([Z[y == k].mean(axis=0) for k in classes])
    d, m_plug = Z.shape[1], Z.mean(axis=0)
    if isinstance(kappa0, str):
        flat = kappa0 == "flat"

        def nll(log_k):
            v = np.exp(-log_k) + 1.0 / N_k
            w = 1.0 / v
            m = (w @ xbar) / w.sum() if flat else m_plug
            value = 0.5 * (d * np.sum(np.log(v)) + np.sum(w[:, None] * (xbar - m) ** 2))
            return value + (0.5 * d * np.log(w.sum()) if flat else 0.0)

        grid = np.linspace(*LOG_K, GRID)
        i = int(np.argmin([nll(g) for g in grid]))
        kappa0 = float(np.exp(grid[i])) if i in (0, GRID - 1) else float(np.exp(
            minimize_scalar(nll, bounds=(grid[i - 1], grid[i + 1]), method="bounded").x))
    m = (N_k[:, None] * xbar + kappa0 * m_plug) / (N_k + kappa0)[:, None]
    var = 1.0 + 1.0 / (N_k + kappa0)
    logp = np.stack([-0.5 * ((Z_te - m[k]) ** 2).sum(1) / var[k] - 0.5 * d * np.log(var[k])
                     + np.log(N_k[k] / N_k.sum()) for k in range(classes.size)], axis=1)
    return np.exp(logp - logsumexp(logp, axis=1, keepdims=True)), kappa0


def lda_losses(X, y, X_te, y_te, labels) -> tuple[dict, dict]:
    """Held-out log loss of LDA() and its single kappa0 changes, and the kappa0s."""
    def ll(est):
        return log_loss(y_te, est.fit(X, y).predict_proba(X_te), labels=labels)

    default = bg.LDA(**FEW).fit(X, y)
    nu0 = float(default.prior_search_["cov_dof"])
    plug, flat = (evidence_kappa(X, y, nu0, flat=f) for f in (False, True))
    library = bg.LDA(mean_strength="auto", cov_dof=nu0, cov_scale=1.0,
                     mean_prior=X.mean(axis=0), **FEW).fit(X, y)  # plug-in evidence
    lib = library.prior_search_.get("mean_strength_unbounded",
                                    library.prior_search_["mean_strength"])
    out = {"LDA()": log_loss(y_te, default.predict_proba(X_te), labels=labels),
           "LDA k=plug-in evidence": ll(bg.LDA(mean_strength=plug, **FEW)),
           "LDA k=flat-m0 evidence": ll(bg.LDA(mean_strength=flat, **FEW)),
           "LDA(mean_strength='auto')": ll(bg.LDA(mean_strength="auto", **FEW))}
    return out, {"k plug-in": plug, "k library": lib, "k flat-m0": flat}


def per_class_losses(X, y, X_te, y_te, labels) -> tuple[dict, dict]:
    """``--per-class``: QDA() and GaussianNB() at their defaults and with kappa0 at
    LDA's flat-m0 choice (the class means shrunk as far as the evidence says, so that
    what is left of their excess over the class frequencies is their per-class
    covariances or variances), and LDA at that kappa0."""
    def ll(est):
        return log_loss(y_te, est.fit(X, y).predict_proba(X_te), labels=labels)

    nu0 = float(bg.LDA(**FEW).fit(X, y).prior_search_["cov_dof"])
    flat = evidence_kappa(X, y, nu0, flat=True)
    out = {"QDA()": ll(bg.QDA(**FEW)),
           "QDA k=flat-m0 (LDA's)": ll(bg.QDA(mean_strength=flat, **FEW)),
           "GaussianNB()": ll(bg.GaussianNB(**FEW)),
           "GaussianNB k=flat-m0 (LDA's)": ll(bg.GaussianNB(mean_strength=flat, **FEW)),
           "LDA k=flat-m0 evidence": ll(bg.LDA(mean_strength=flat, **FEW))}
    return out, {"k flat-m0": flat}


def generated_study(dims, rows, deltas, splits, per_class: bool = False) -> None:
    """Print the generated-data table (module docstring; ``per_class``: the models of
    :func:`per_class_losses`)."""
    header = None
    for d, n, delta in itertools.product(dims, rows, deltas):
        table: dict[str, list[float]] = {}
        for rep in range(splits):
            rng = np.random.default_rng([d, n, int(10 * delta), rep])
            X, y, X_te, y_te, cov, bayes = make(d, n, delta, rng)
            row = {"Bayes": bayes}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                losses, kappas = (per_class_losses if per_class else lda_losses)(
                    X, y, X_te, y_te, [0, 1])
            row.update(losses)
            for name, how in () if per_class else (("oracle Sigma k=0.01", 0.01),
                              ("oracle Sigma k=plug-in", "plug-in"),
                              ("oracle Sigma k=flat-m0", "flat")):
                proba, k = oracle(X, y, X_te, cov, how)
                row[name] = log_loss(y_te, proba, labels=[0, 1])
                if isinstance(how, str):
                    kappas[f"oracle {how}"] = k
            row["class frequencies"] = np.log(2.0)
            for key, value in {**row, **kappas}.items():
                table.setdefault(key, []).append(value)
        if header is None:
            header = list(table)
            print("| d | n | Delta | " + " | ".join(header) + " |")
            print("|---|---|---|" + "---|" * len(header))
        cellsout = [f"{np.mean(table[k]):.3f} ± {np.std(table[k], ddof=1):.3f}"
                    if not k.startswith(("k ", "oracle plug", "oracle flat"))
                    else f"{np.median(table[k]):.3g}" for k in header]
        print(f"| {d} | {n} | {delta:g} | " + " | ".join(cellsout) + " |", flush=True)


def real_study(splits: int, seed: int, which: str, per_class: bool = False) -> None:
    """Print the table on the cells of ``validation/small_n.py`` (``which`` "small_n")
    or ``validation/stacking_holdout2.py`` ("holdout2"), same seeds and splits."""
    from validation import small_n, stacking_holdout2

    study = {"small_n": small_n, "holdout2": stacking_holdout2}[which]
    table: dict[tuple, dict[str, list[float]]] = {}
    for name, n, _rep, X, y, X_te, y_te in study.cells(splits, seed):
        labels = np.unique(np.concatenate([y, y_te]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            losses, kappas = (per_class_losses if per_class else lda_losses)(
                X, y, X_te, y_te, labels)
        freq = np.bincount(np.searchsorted(labels, y), minlength=labels.size) / y.size
        losses["class frequencies"] = log_loss(y_te, np.tile(freq, (y_te.size, 1)),
                                               labels=labels)
        cell = table.setdefault((name, n), {})
        for key, value in {**losses, **kappas}.items():
            cell.setdefault(key, []).append(value)
        print(name, n, _rep, {k: round(v, 3) for k, v in losses.items()},
              {k: f"{v:.3g}" for k, v in kappas.items()}, flush=True)
    header = list(next(iter(table.values())))
    print("\n| data | n | " + " | ".join(header) + " |")
    print("|---|---|" + "---|" * len(header))
    for (name, n), cell in table.items():
        print(f"| {name} | {n} | " + " | ".join(
            f"{np.mean(cell[k]):.3f} ± {np.std(cell[k], ddof=1):.3f}"
            if not k.startswith("k ") else f"{np.median(cell[k]):.3g}" for k in header)
            + " |", flush=True)


def main() -> None:
    """Command line: ``--study``, ``--dims``, ``--rows``, ``--deltas``, ``--splits``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", choices=["generated", "real"], default="generated")
    parser.add_argument("--dims", type=int, nargs="+", default=[5, 20, 60])
    parser.add_argument("--rows", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.0, 1.5, 3.0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--cells", choices=["small_n", "holdout2"], default="small_n",
                        help="--study real: the cells of validation/small_n.py or of "
                             "validation/stacking_holdout2.py")
    parser.add_argument("--seed", type=int, default=0, help="that script's --seed")
    parser.add_argument("--per-class", action="store_true",
                        help="QDA and GaussianNB with LDA's flat-m0 kappa0")
    args = parser.parse_args()
    if args.study == "generated":
        generated_study(args.dims, args.rows, args.deltas, args.splits, args.per_class)
    else:
        real_study(args.splits, args.seed, args.cells, args.per_class)


if __name__ == "__main__":
    main()
