"""Small-data predictive study: do posterior predictives beat plug-in estimates?

For iris, wine, breast cancer and digits (scikit-learn's bundled data sets), with n
training rows per class (10, 20, 50) drawn at random over many splits (the rest is the
test set), compare held-out log loss, accuracy and expected calibration error (ECE,
top-label, 10 bins) of

- bayesgen LDA / QDA / GaussianNB with their default priors and ``method="mle"``,
  ``"map"`` and ``"conjugate"`` (the exact posterior predictive; ``--mcmc`` adds NUTS
  for the data sets in ``--mcmc-data``), and
- their scikit-learn counterparts: LinearDiscriminantAnalysis, QuadraticDiscriminant-
  Analysis (reg_param 0 and 0.5) and GaussianNB (default var_smoothing); plus, as
  stronger references outside the goal, Ledoit-Wolf shrinkage LDA and QDA
  (``shrinkage="auto"``).

A failed fit (e.g. QDA's MLE, or scikit-learn's QDA, with no more rows per class than
features) counts as missing (the ``fits`` column says how many splits succeeded); log
loss is computed with probabilities clipped at 1e-15 as scikit-learn does.

The goal table (:func:`goal_table`) puts each posterior predictive next to its
scikit-learn counterparts: it must have lower mean held-out log loss at 10 and 20 rows
per class and be no worse at 50 (a counterpart that fails on every split is beaten).

Run::

    .venv/bin/python validation/predictive_study.py --splits 20 --mcmc \
        --out validation/img --markdown validation/results_predictive.md

It prints the tables and writes ``predictive_study.png`` (log loss against n per
class, one panel per data set), ``predictive_study.csv`` and the Markdown tables.
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
from bayesgen.cli.demo import expected_calibration_error

DATASETS = {
    "iris": load_iris,
    "wine": load_wine,
    "breast cancer": load_breast_cancer,
    "digits": load_digits,
}


#: bayesgen classifier -> its scikit-learn counterparts (the goal) and references
COUNTERPARTS = {
    "LDA": ["sk LDA"],
    "QDA": ["sk QDA", "sk QDA reg 0.5"],
    "GaussianNB": ["sk GaussianNB"],
}
REFERENCES = {"LDA": ["sk LDA shrinkage"], "QDA": ["sk QDA shrinkage"], "GaussianNB": []}


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
    out["sk LDA shrinkage"] = lambda s: skda.LinearDiscriminantAnalysis(
        solver="lsqr", shrinkage="auto")
    out["sk QDA shrinkage"] = lambda s: skda.QuadraticDiscriminantAnalysis(
        solver="eigen", shrinkage="auto")
    return out


def split(y: np.ndarray, n_per_class: int, rng: np.random.Generator):
    """Indices of n_per_class random training rows per class, and the rest."""
    train = np.concatenate(
        [rng.choice(np.flatnonzero(y == k), n_per_class, replace=False) for k in np.unique(y)]
    )
    test = np.setdiff1d(np.arange(y.size), train)
    return train, test


def run(splits: int, sizes: list[int], draws: int, with_mcmc: bool, seed: int,
        datasets: list[str] | None = None, mcmc_data: list[str] | None = None,
        mcmc_splits: int | None = None) -> pd.DataFrame:
    """One row per (data set, n per class, split, model) with the held-out metrics.

    ``method="mcmc"`` runs (``with_mcmc``) only on ``mcmc_data`` (default: all) and on
    the first ``mcmc_splits`` splits (default: all).
    """
    rows = []
    all_factories = models(draws, with_mcmc)
    for data_name in datasets or list(DATASETS):
        load = DATASETS[data_name]
        X, y = load(return_X_y=True)
        for n in sizes:
            if np.bincount(y).min() <= n:
                continue
            rng = np.random.default_rng(seed)
            for rep in range(splits):
                train, test = split(y, n, rng)
                mcmc_here = (mcmc_data is None or data_name in mcmc_data) and (
                    mcmc_splits is None or rep < mcmc_splits)
                factories = {name: f for name, f in all_factories.items()
                             if mcmc_here or not name.endswith(" mcmc")}
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


def goal_table(table: pd.DataFrame, results: pd.DataFrame, splits: int) -> pd.DataFrame:
    """Each bayesgen posterior predictive against its scikit-learn counterparts.

    One row per (data set, n per class, classifier) with the mean held-out log loss of
    ``method="conjugate"``, of ``"mcmc"`` and of the conjugate on the same (fewer)
    splits where MCMC ran, of every counterpart and reference (NaN where it failed on
    every split), ``fits`` notes for partial failures, and ``goal``: "met" when the
    conjugate predictive is lower than every counterpart that fitted (at 50 rows per
    class: no worse than the best of them within one standard error), else "missed".
    """
    rows = []
    for (data, n), sub in table.groupby(["data", "n_per_class"]):
        by_model = sub.set_index("model")
        for name, counterparts in COUNTERPARTS.items():
            bayes = by_model.loc[f"bg {name} conjugate"]
            row = {"data": data, "n_per_class": n, "classifier": name,
                   "conjugate": bayes["log_loss"], "conjugate_se": bayes["log_loss_se"],
                   "mcmc": np.nan, "conjugate_on_mcmc_splits": np.nan}
            raw = results[(results["data"] == data) & (results["n_per_class"] == n)]
            mcmc = raw[raw["model"] == f"bg {name} mcmc"]
            if len(mcmc):
                conj = raw[(raw["model"] == f"bg {name} conjugate")
                           & raw["split"].isin(mcmc["split"])]
                row["mcmc"] = mcmc["log_loss"].mean()
                row["conjugate_on_mcmc_splits"] = conj["log_loss"].mean()
            notes, fitted = [], []
            for other in counterparts + REFERENCES[name]:
                row[other] = by_model.loc[other, "log_loss"] if other in by_model.index else np.nan
                fits = int(by_model.loc[other, "fits"]) if other in by_model.index else 0
                if fits < splits:
                    notes.append(f"{other} fits {fits}/{splits}")
                if other in counterparts and fits:
                    fitted.append(row[other])
            if not fitted:
                met = True
            elif n >= 50:
                met = row["conjugate"] <= min(fitted) + row["conjugate_se"]
            else:
                met = row["conjugate"] < min(fitted)
            row["goal"] = "met" if met else "missed"
            row["notes"] = "; ".join(notes)
            rows.append(row)
    return pd.DataFrame(rows)


def _fmt(value: float) -> str:
    return "fails" if np.isnan(value) else f"{value:.3f}"


def markdown(goal: pd.DataFrame) -> str:
    """The goal table as Markdown: one line per data set, size and classifier."""
    head = ["data", "n/class", "classifier", "conjugate", "mcmc (conjugate, same splits)",
            "scikit-learn counterparts", "Ledoit-Wolf shrinkage", "goal"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in goal.iterrows():
        name = r["classifier"]
        mcmc = ("" if np.isnan(r["mcmc"])
                else f"{r['mcmc']:.3f} ({r['conjugate_on_mcmc_splits']:.3f})")
        sk = ", ".join(f"{o.removeprefix('sk ')} {_fmt(r[o])}" for o in COUNTERPARTS[name])
        ref = ", ".join(f"{o.removeprefix('sk ')} {_fmt(r[o])}" for o in REFERENCES[name])
        lines.append("| " + " | ".join([
            r["data"], str(r["n_per_class"]), name,
            f"{r['conjugate']:.3f} ± {r['conjugate_se']:.3f}", mcmc, sk, ref, r["goal"],
        ]) + " |")
    return "\n".join(lines)


def metrics_markdown(table: pd.DataFrame) -> str:
    """Accuracy and ECE of every method and counterpart, one line per data set, size and
    classifier ("acc / ECE"; "fails" where a model never fitted)."""
    head = ["data", "n/class", "classifier", "mle", "map", "conjugate", "mcmc",
            "scikit-learn counterparts"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def cell(by_model, model):
        if model not in by_model.index:
            return "fails"
        r = by_model.loc[model]
        return f"{r['accuracy']:.3f} / {r['ece']:.3f}"

    for (data, n), sub in table.groupby(["data", "n_per_class"]):
        by_model = sub.set_index("model")
        for name, counterparts in COUNTERPARTS.items():
            methods = [cell(by_model, f"bg {name} {m}") for m in ("mle", "map", "conjugate")]
            mcmc = f"bg {name} mcmc"
            methods.append(cell(by_model, mcmc) if mcmc in by_model.index else "")
            sk = ", ".join(f"{o.removeprefix('sk ')} {cell(by_model, o)}" for o in counterparts)
            lines.append("| " + " | ".join([data, str(n), name, *methods, sk]) + " |")
    return "\n".join(lines)


def plot(table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(table["data"].unique())
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.8), squeeze=False)
    # one colour per classifier: bayesgen solid, scikit-learn dashed, references dotted
    show = {"bg LDA conjugate": ("C0", "-"), "sk LDA": ("C0", "--"),
            "sk LDA shrinkage": ("C0", ":"),
            "bg QDA conjugate": ("C1", "-"), "sk QDA": ("C1", "--"),
            "sk QDA reg 0.5": ("C3", "--"), "sk QDA shrinkage": ("C1", ":"),
            "bg GaussianNB conjugate": ("C2", "-"), "sk GaussianNB": ("C2", "--")}
    for ax, name in zip(axes[0], names, strict=True):
        sub = table[table["data"] == name]
        for model, (colour, style) in show.items():
            line = sub[sub["model"] == model].sort_values("n_per_class")
            if len(line):
                ax.errorbar(line["n_per_class"], line["log_loss"], yerr=line["log_loss_se"],
                            marker="o", color=colour, linestyle=style, label=model, capsize=2)
        ax.set(title=name, xlabel="training rows per class", ylabel="held-out log loss",
               yscale="log")
    legend = {}  # every model once, in the order of ``show``
    for ax in axes[0]:
        legend.update(zip(*reversed(ax.get_legend_handles_labels()), strict=True))
    order = [m for m in show if m in legend]
    fig.legend([legend[m] for m in order], order, fontsize=8, loc="center left",
               bbox_to_anchor=(1.0, 0.5))
    fig.suptitle("Held-out log loss: bayesgen posterior predictive (solid), scikit-learn "
                 "(dashed), Ledoit-Wolf shrinkage (dotted); missing = fit fails")
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--draws", type=int, default=250,
                        help="posterior draws per chain (2 chains); the conjugate "
                        "predictive is exact and does not depend on them")
    parser.add_argument("--mcmc", action="store_true", help="also fit method='mcmc' (slow)")
    parser.add_argument("--mcmc-data", nargs="+", choices=sorted(DATASETS),
                        default=["iris", "wine"])
    parser.add_argument("--mcmc-splits", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", nargs="+", choices=sorted(DATASETS), default=None)
    parser.add_argument("--out", type=Path, default=Path("validation/img"))
    parser.add_argument("--markdown", type=Path, default=None, help="write the goal table")
    args = parser.parse_args(argv)
    results = run(args.splits, args.sizes, args.draws, args.mcmc, args.seed, args.data,
                  args.mcmc_data, args.mcmc_splits)
    table = summarise(results)
    goal = goal_table(table, results, args.splits)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "predictive_study.csv", index=False)
    plot(table, args.out / "predictive_study.png")
    with pd.option_context("display.width", 200, "display.max_rows", 500,
                           "display.max_columns", 30):
        print(table.round(4).to_string(index=False))
        print(goal.round(4).to_string(index=False))
    if args.markdown is not None:
        args.markdown.write_text(
            "## Held-out log loss and the goal\n\n" + markdown(goal)
            + "\n\n## Held-out accuracy / expected calibration error (10 bins)\n\n"
            + metrics_markdown(table) + "\n")
    print(f"wrote {args.out / 'predictive_study.csv'} and {args.out / 'predictive_study.png'}")


if __name__ == "__main__":
    main()
