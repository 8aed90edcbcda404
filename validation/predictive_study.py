"""Small-data predictive study: do posterior predictives beat plug-in estimates?

For iris, wine, breast cancer and digits (scikit-learn's bundled data sets), with n
training rows per class (10, 20, 50) drawn at random over many splits (the rest is the
test set), compare held-out log loss, accuracy and expected calibration error (ECE,
top-label, 10 bins) of

- bayesgen LDA / QDA / GaussianNB with ``method="mle"``, ``"map"`` and ``"conjugate"``
  (the exact posterior predictive; ``--mcmc`` adds ``"mcmc"``, slow), and
- scikit-learn's LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis (reg_param 0
  and 0.5) and GaussianNB (default var_smoothing).

A failed fit (e.g. QDA's MLE with fewer rows than features) counts as missing, and
log loss is computed with probabilities clipped at 1e-15 as scikit-learn does.

Run::

    .venv/bin/python validation/predictive_study.py --splits 20 --out validation/img

It prints a table of mean held-out log loss (and the standard error over splits) and
writes ``predictive_study.png`` (log loss against n per class, one panel per data set)
and ``predictive_study.csv``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sknb
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.metrics import accuracy_score, log_loss

import bayesgen as bg
from bayesgen.demo import expected_calibration_error

DATASETS = {
    "iris": load_iris,
    "wine": load_wine,
    "breast cancer": load_breast_cancer,
    "digits": load_digits,
}


def models(draws: int, with_mcmc: bool) -> dict:
    """name -> factory(seed) of every compared classifier."""
    out = {}
    for cls in (bg.LDA, bg.QDA, bg.GaussianNB):
        for method in ("mle", "map", "conjugate") + (("mcmc",) if with_mcmc else ()):
            out[f"bg {cls.__name__} {method}"] = (
                lambda s, cls=cls, method=method: cls(
                    method=method, draws=draws, chains=2, random_state=s, progressbar=False
                )
            )
    out["sk LDA"] = lambda s: skda.LinearDiscriminantAnalysis()
    out["sk QDA"] = lambda s: skda.QuadraticDiscriminantAnalysis()
    out["sk QDA reg 0.5"] = lambda s: skda.QuadraticDiscriminantAnalysis(reg_param=0.5)
    out["sk GaussianNB"] = lambda s: sknb.GaussianNB()
    return out


def split(y: np.ndarray, n_per_class: int, rng: np.random.Generator):
    """Indices of n_per_class random training rows per class, and the rest."""
    train = np.concatenate(
        [rng.choice(np.flatnonzero(y == k), n_per_class, replace=False) for k in np.unique(y)]
    )
    test = np.setdiff1d(np.arange(y.size), train)
    return train, test


def run(splits: int, sizes: list[int], draws: int, with_mcmc: bool, seed: int,
        datasets: list[str] | None = None) -> pd.DataFrame:
    """One row per (data set, n per class, split, model) with the held-out metrics."""
    rows = []
    factories = models(draws, with_mcmc)
    for data_name in datasets or list(DATASETS):
        load = DATASETS[data_name]
        X, y = load(return_X_y=True)
        for n in sizes:
            if np.bincount(y).min() <= n:
                continue
            rng = np.random.default_rng(seed)
            for rep in range(splits):
                train, test = split(y, n, rng)
                for name, factory in factories.items():
                    start = time.perf_counter()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            clf = factory(rep).fit(X[train], y[train])
                            proba = clf.predict_proba(X[test])
                    except (ValueError, np.linalg.LinAlgError):
                        continue
                    if not np.all(np.isfinite(proba)):
                        continue
                    rows.append({
                        "data": data_name, "n_per_class": n, "split": rep, "model": name,
                        "log_loss": log_loss(y[test], proba, labels=clf.classes_),
                        "accuracy": accuracy_score(y[test], clf.classes_[proba.argmax(1)]),
                        "ece": expected_calibration_error(y[test], proba, clf.classes_),
                        "seconds": time.perf_counter() - start,
                    })
    return pd.DataFrame(rows)


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error over splits of each metric."""
    grouped = results.groupby(["data", "n_per_class", "model"])
    table = grouped[["log_loss", "accuracy", "ece"]].mean()
    table["log_loss_se"] = grouped["log_loss"].std() / np.sqrt(grouped["log_loss"].count())
    table["fits"] = grouped["log_loss"].count()
    return table.reset_index()


def plot(table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(table["data"].unique())
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.8), squeeze=False)
    show = ["bg QDA conjugate", "bg LDA conjugate", "bg GaussianNB conjugate", "bg QDA map",
            "sk LDA", "sk QDA reg 0.5", "sk GaussianNB"]
    for ax, name in zip(axes[0], names, strict=True):
        sub = table[table["data"] == name]
        for model in show:
            line = sub[sub["model"] == model].sort_values("n_per_class")
            if len(line):
                style = "-" if model.startswith("bg") else "--"
                ax.errorbar(line["n_per_class"], line["log_loss"], yerr=line["log_loss_se"],
                            marker="o", linestyle=style, label=model, capsize=2)
        ax.set(title=name, xlabel="training rows per class", ylabel="held-out log loss",
               yscale="log")
    axes[0, -1].legend(fontsize=7, loc="upper right")
    fig.suptitle("Posterior predictive (solid) vs scikit-learn (dashed)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--mcmc", action="store_true", help="also fit method='mcmc' (slow)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", nargs="+", choices=sorted(DATASETS), default=None)
    parser.add_argument("--out", type=Path, default=Path("validation/img"))
    args = parser.parse_args(argv)
    results = run(args.splits, args.sizes, args.draws, args.mcmc, args.seed, args.data)
    table = summarise(results)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "predictive_study.csv", index=False)
    plot(table, args.out / "predictive_study.png")
    with pd.option_context("display.width", 160, "display.max_rows", 500):
        print(table.round(4).to_string(index=False))
    print(f"wrote {args.out / 'predictive_study.csv'} and {args.out / 'predictive_study.png'}")


if __name__ == "__main__":
    main()
