"""Which members and stacking prior the default stack should have at few rows per class.

Question: on the 30 held-out cells the small-n goal is judged on (the 14 of
``validation/small_n.py`` and the 16 of ``validation/stacking_holdout2.py``, the same
rows and seeds as those pages), which candidate members and which ``weight_prior``
bring ``StackedClassifier``'s held-out log loss at or below the best tuned scikit-learn
model in most cells, and how far is every member from the class frequencies?

Two stages, so that member sets and stacking priors are compared without refitting:

1. ``--collect PAGE`` fits every candidate member (``CANDIDATES``, ``method="conjugate"``,
   20 posterior draws: the class probabilities are the closed-form predictive, which does
   not depend on the draws) on every training split of the page, and stores, per cell and
   split, each member's exact leave-one-out log probability of every training row's class
   (:func:`bayesgen.estimators.stacking.loo_one_unit`, what ``StackedClassifier`` weighs
   by) and its class log probabilities on the test rows, in a pickle.
2. ``--report`` stacks any subset of members exactly as ``StackedClassifier`` does
   (:func:`bayesgen.estimators.stacking.stacking_weights` on the leave-one-out table,
   the mixture of the members' test class probabilities) for every set in ``STACKS`` and
   every ``weight_prior`` in ``PRIORS``, and compares it with the best tuned scikit-learn
   model of the cell, read from the pages' own ``--csv`` files (the same rows: the lowest
   mean log loss of Ledoit-Wolf LDA, CV-tuned QDA, GaussianNB and logistic regression).
   The stack of the former default members at ``weight_prior=1`` reproduces the pages'
   ``bg stacked`` column (checked and printed as "reproduced").

Log loss uses probabilities clipped at 1e-15 as scikit-learn does; every cell is the mean
(± sd) over its splits.

Run from the repository root (single process each; ``--members`` restricts the
candidates, e.g. to leave out the slower ``mean_strength="auto"`` QDAs)::

    OMP_NUM_THREADS=1 PYTHONPATH=. nice .venv/bin/python validation/small_n_stack.py \\
        --collect small_n --splits 3 --out small_n.pkl
    OMP_NUM_THREADS=1 PYTHONPATH=. nice .venv/bin/python validation/small_n_stack.py \\
        --collect holdout2 --splits 3 --out h2.pkl
    PYTHONPATH=. .venv/bin/python validation/small_n_stack.py --report \\
        --pickles small_n.pkl h2.pkl --sk-csv small_n.csv h2.csv \\
        --markdown validation/results_small_n_stack.md
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.base import clone

import bayesgen as bg
from bayesgen.estimators.stacking import (
    CLASS_FREQUENCY_STRENGTH,
    loo_one_unit,
    stacking_weights,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import small_n
import stacking_holdout2

CLIP = 1e-15
FEW = {"method": "conjugate", "draws": 20, "chains": 1, "progressbar": False,
       "random_state": 0}


def candidates() -> dict:
    """name -> unfitted candidate member."""
    return {
        "lda": bg.LDA(**FEW),
        "lda_shrunk_means": bg.LDA(mean_strength="auto", **FEW),
        "qda": bg.QDA(**FEW),
        "qda_isotropic": bg.QDA(cov_target="isotropic", **FEW),
        "qda_spherical": bg.QDA(cov_structure="spherical", **FEW),
        "class_frequencies": bg.LDA(cov_structure="spherical",
                                    mean_strength=CLASS_FREQUENCY_STRENGTH, **FEW),
        "qda_shrunk": bg.QDA(mean_strength="auto", **FEW),
        "qda_pooled": bg.QDA(cov_target="pooled", mean_strength="auto", **FEW),
        "qda_pooled_k": bg.QDA(cov_target="pooled", **FEW),
        "lda_diag": bg.LDA(cov_structure="diag", **FEW),
        "lda_diag_shrunk": bg.LDA(cov_structure="diag", mean_strength="auto", **FEW),
        "lda_sph_shrunk": bg.LDA(cov_structure="spherical", mean_strength="auto", **FEW),
        "gnb": bg.GaussianNB(**FEW),
    }


#: the former default members (``StackedClassifier()`` before this study)
FORMER = ["lda", "lda_shrunk_means", "qda", "qda_isotropic", "qda_spherical",
          "class_frequencies"]
#: the new default members (``default_estimators()``: ``lda_diagonal`` is the candidate
#: ``lda_diag_shrunk``)
NEW = ["lda", "lda_shrunk_means", "lda_diag_shrunk", "qda", "qda_isotropic",
       "qda_spherical", "class_frequencies"]
#: member sets compared by ``--report``
STACKS = {
    "former": FORMER,
    "new default": NEW,
    "new default, qda centred on the pooled covariance": [
        "lda", "lda_shrunk_means", "lda_diag_shrunk", "qda_pooled_k", "qda_isotropic",
        "qda_spherical", "class_frequencies"],
    "all collected on both pages": None,  # filled from the pickles
}
PRIORS = [1.0, 2.0]
#: the tuned scikit-learn models of each page (model names in its csv)
SK = {"small_n": ["sk LDA shrinkage", "sk QDA tuned", "sk GaussianNB", "sk logistic CV"],
      "holdout2": ["sk LDA shrinkage", "sk QDA tuned", "sk GaussianNB", "sk logistic"]}


def collect(page: str, splits: int, seed: int, members: list[str] | None) -> list[dict]:
    """Per (cell, split): each candidate's leave-one-out log probability of the training
    rows' classes (n,) and test class log probabilities (m, K), and the test classes."""
    cands = candidates()
    if members:
        cands = {name: cands[name] for name in members}
    gen = small_n.cells(splits, seed) if page == "small_n" else stacking_holdout2.cells(
        splits, seed)
    out = []
    for name, n, rep, X_tr, y_tr, X_te, y_te in gen:
        classes = np.unique(y_tr)
        rec = {"page": page, "data": name, "n": n, "split": rep,
               "y_te": np.searchsorted(classes, y_te), "loo": {}, "test": {}, "sec": {}}
        for cand, est in cands.items():
            start = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted = clone(est).fit(X_tr, y_tr)
                    joint, y_index, _ = loo_one_unit(fitted, X_tr, y_tr, None)
                    loo = joint - logsumexp(joint, axis=1, keepdims=True)
                    rec["loo"][cand] = loo[np.arange(y_index.size), y_index]
                    rec["test"][cand] = fitted.predict_log_proba(X_te)
            except (ValueError, np.linalg.LinAlgError) as exc:
                print(name, n, rep, cand, type(exc).__name__, str(exc)[:100], flush=True)
            rec["sec"][cand] = time.perf_counter() - start
        out.append(rec)
        print(f"{name} n={n} split {rep} done", flush=True)
    return out


def log_loss(log_proba: np.ndarray, index: np.ndarray) -> float:
    """Mean held-out log loss, probabilities clipped at :data:`CLIP`."""
    return float(-np.mean(np.log(np.clip(np.exp(log_proba[np.arange(index.size), index]),
                                         CLIP, 1.0))))


def stacked(rec: dict, members: list[str], prior: float) -> tuple[float, np.ndarray]:
    """The held-out log loss of the stack of ``members`` at ``weight_prior=prior`` (as
    ``StackedClassifier``: weights from the leave-one-out table, mixture of the members'
    test class probabilities), and its weights."""
    a = stacking_weights(np.stack([rec["loo"][m] for m in members], axis=1),
                         prior_rows=prior)
    keep = a > 0
    tests = np.stack([rec["test"][m] for m in members])[keep]
    return log_loss(logsumexp(np.log(a[keep])[:, None, None] + tests, axis=0),
                    rec["y_te"]), a


def best_sk(paths: dict) -> pd.DataFrame:
    """Per (page, data, n): the best tuned scikit-learn model's mean log loss, its name,
    and the page's own ``bg stacked`` mean (to check the reproduction)."""
    rows = []
    for page, path in paths.items():
        frame = pd.read_csv(path).rename(columns={"n_per_class": "n"})
        means = frame.groupby(["data", "n", "model"], sort=False)["log_loss"].mean().unstack()
        sk = means[SK[page]]
        for (data, n), row in sk.iterrows():
            rows.append({"page": page, "data": data, "n": n, "best": row.min(),
                         "best_model": row.idxmin(),
                         "page_stack": means.loc[(data, n), "bg stacked"]})
    return pd.DataFrame(rows).set_index(["page", "data", "n"])


def report(recs: list[dict], sk: pd.DataFrame) -> str:
    """The markdown page."""
    common = set.intersection(*(set(r["test"]) for r in recs))
    stacks = {k: (v if v is not None else [m for m in candidates() if m in common])
              for k, v in STACKS.items()}
    rows, weights = [], []
    for rec in recs:
        key = {"page": rec["page"], "data": rec["data"], "n": rec["n"], "split": rec["split"]}
        for label, members in stacks.items():
            for prior in PRIORS:
                loss, a = stacked(rec, members, prior)
                rows.append({**key, "stack": label, "prior": prior, "loss": loss})
                if label == "former" and prior == 1.0:
                    weights.append({**key, **dict(zip(members, a, strict=True))})
        freq = log_loss(rec["test"]["class_frequencies"], rec["y_te"])
        for member, test in rec["test"].items():
            rows.append({**key, "stack": "member " + member, "prior": np.nan,
                         "loss": log_loss(test, rec["y_te"]), "freq": freq})
    frame = pd.DataFrame(rows)
    cell = ["page", "data", "n"]
    lines = ["# Members and stacking prior of the default stack at few rows per class", "",
             "Generated by `validation/small_n_stack.py` (its docstring gives the design "
             "and the commands). Lower log loss is better; \"ratio\" divides a mean "
             "held-out log loss by the best tuned scikit-learn model's of the cell.", ""]
    # summary per (stack, prior)
    lines += ["## Stacks: cells at or below the best tuned scikit-learn model", "",
              "| members | weight_prior | at or below best | within 1.1x | "
              "worst ratio (cell) | median ratio | geometric mean ratio |",
              "|---|---|---|---|---|---|---|"]
    summary = {}
    for (label, prior), part in frame[frame["prior"].notna()].groupby(
            ["stack", "prior"], sort=False):
        mean = part.groupby(cell, sort=False)["loss"].mean()
        ratio = mean / sk.loc[mean.index, "best"]
        summary[(label, prior)] = (mean, part.groupby(cell, sort=False)["loss"].std(), ratio)
        worst = ratio.idxmax()
        lines.append(f"| {label} | {prior:g} | {int((ratio <= 1).sum())} / {ratio.size} | "
                     f"{int((ratio <= 1.1).sum())} / {ratio.size} | {ratio.max():.3f} "
                     f"({worst[1]}, n = {worst[2]}) | {ratio.median():.3f} | "
                     f"{np.exp(np.log(ratio).mean()):.3f} |")
    former = summary[("former", 1.0)][0]
    gap = (former - sk.loc[former.index, "page_stack"]).abs().max()
    lines += ["", f"The former default stack at weight_prior = 1 reproduced: its mean log "
              f"loss differs from the pages' `bg stacked` by at most {gap:.1e} over the "
              "cells.", ""]
    return "\n".join(lines), frame, summary, weights


def cell_table(frame: pd.DataFrame, sk: pd.DataFrame, summary: dict,
               chosen: tuple[str, float]) -> list[str]:
    """Every cell: former and chosen stack (mean ± sd), best sk, ratios, every member's
    ratio to the class frequencies."""
    cell = ["page", "data", "n"]
    f_mean, f_sd, f_ratio = summary[("former", 1.0)]
    c_mean, c_sd, c_ratio = summary[chosen]
    members = frame[frame["stack"].str.startswith("member ")]
    m_mean = members.groupby([*cell, "stack"], sort=False)["loss"].mean().unstack()
    freq = members.groupby(cell, sort=False)["freq"].mean()
    to_freq = m_mean.div(freq, axis=0)
    lines = ["## Every cell", "",
             f"Former: the former default members at weight_prior 1. Chosen: {chosen[0]} at "
             f"weight_prior {chosen[1]:g}. Mean ± sd over the splits; **bold** ratio: "
             "bayesgen loses to the best tuned scikit-learn model.", "",
             "| page | data | n | former | chosen | best sk (which) | former / best | "
             "chosen / best |", "|---|---|---|---|---|---|---|---|"]
    for key in f_mean.index:
        def fmt(r):
            return f"**{r:.3f}**" if r > 1 else f"{r:.3f}"
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {f_mean[key]:.3f} ± {f_sd[key]:.3f} "
                     f"| {c_mean[key]:.3f} ± {c_sd[key]:.3f} | {sk.loc[key, 'best']:.3f} "
                     f"({sk.loc[key, 'best_model']}) | {fmt(f_ratio[key])} | "
                     f"{fmt(c_ratio[key])} |")
    cols = list(to_freq.columns)
    lines += ["", "## Every member alone: ratio to the class frequencies", "",
              "Mean log loss over the class frequencies' (1 = no better than predicting "
              "the class frequencies; the goal for a default: never above 1.05). Empty: "
              "not collected on that page.", "",
              "| page | data | n | " + " | ".join(c.removeprefix("member ") for c in cols)
              + " |", "|---|---|---|" + "---|" * len(cols)]
    for key, row in to_freq.iterrows():
        vals = ["" if np.isnan(v) else (f"**{v:.2f}**" if v > 1.05 else f"{v:.2f}")
                for v in row]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(vals) + " |")
    worst = to_freq.max()
    lines += ["", "Worst ratio to the class frequencies over the cells: "
              + ", ".join(f"{c.removeprefix('member ')} {v:.2f}" for c, v in worst.items())
              + "."]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collect", choices=["small_n", "holdout2"])
    parser.add_argument("--members", nargs="*")
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out")
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--pickles", nargs="*")
    parser.add_argument("--sk-csv", nargs=2, metavar=("SMALL_N_CSV", "HOLDOUT2_CSV"))
    parser.add_argument("--chosen", nargs=2, default=None, metavar=("MEMBERS", "PRIOR"))
    parser.add_argument("--markdown")
    args = parser.parse_args()
    if args.collect:
        recs = collect(args.collect, args.splits, args.seed, args.members)
        with open(args.out, "wb") as handle:
            pickle.dump(recs, handle)
        return
    recs = []
    for path in args.pickles:
        with open(path, "rb") as handle:
            recs += pickle.load(handle)
    for rec in recs:  # pickles of the first collection named the page "h2"
        rec["page"] = "holdout2" if rec.get("page") in ("h2", "holdout2") else "small_n"
    sk = best_sk({"small_n": args.sk_csv[0], "holdout2": args.sk_csv[1]})
    text, frame, summary, _ = report(recs, sk)
    chosen = (args.chosen[0], float(args.chosen[1])) if args.chosen else ("former", 1.0)
    text += "\n".join(cell_table(frame, sk, summary, chosen)) + "\n"
    if args.markdown:
        Path(args.markdown).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
