"""Few rows, many features: how the stack's weights are estimated, by measurement.

Question: in the cells of ``validation/small_n.py`` where the stack is above the best
tuned scikit-learn model although one of its members is below it (iris: LDA 0.072
against the stack's 0.090; breast cancer at 20 rows per class: LDA 0.132 against
0.152), is the weight estimation at fault, and does another rule or member set do
better?

Every cell and split of ``validation/small_n.py`` (same seeds) fits each candidate
member once and keeps its exact leave-one-out class probabilities (the stack's,
:func:`bayesgen.estimators.stacking.loo_one_unit`) and its test class probabilities;
each variant then re-weighs those tables (no refit), so all variants see the same fits:

- ``weight_prior`` c in {0, 1 (the default), 3, 6} (Dirichlet(1 + c / M) on the weights);
- ``class counts in``: the leave-one-out terms with the class-count factor of the full
  data instead of the rows without row n (leaving out a row of class k lowers class
  k's count, which penalises the class-frequency member more than confident members);
- ``best by LOO``: all weight on the member of the best leave-one-out score;
- member sets: the default six plus, or with ``qda`` replaced by, one of
  QDA(cov_target="pooled", mean_strength="auto"), QDA(mean_strength="auto"),
  LDA(cov_structure="diag", mean_strength="auto") (diagonal LDA with shrunk means),
  GaussianNB();
- ``tempered``: every member tempered by its leave-one-out temperature
  (:func:`bayesgen.estimators.stacking.loo_temperature`) before stacking.

Reported per variant: cells at or below the best tuned scikit-learn model of
``validation/results_small_n.md`` (the "best sk" column, read from that page), cells
within 1.1 times it, the largest ratio and the geometric mean ratio.

``--cells holdout2`` runs the same variants on the cells of the second held-out check
(``validation/stacking_holdout2.py``, same seeds and splits), whose cells were fixed before
any of these variants was proposed, and divides by that page's best scikit-learn
generative model ("best sk gen."): a member chosen on the small-n cells must also help
there before it becomes a default.

Run from the repository root after ``validation/small_n.py`` (about 10 min
single-process on a loaded machine)::

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_weights.py \\
        --splits 3 --markdown validation/results_small_n_weights.md
    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n_weights.py \\
        --cells holdout2 --splits 3 --markdown validation/results_small_n_weights_holdout2.md
"""

from __future__ import annotations

import argparse
import re
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import log_softmax, logsumexp

import bayesgen as bg
from bayesgen.estimators.stacking import (
    class_log_prior,
    default_estimators,
    loo_one_unit,
    loo_temperature,
    stacking_weights,
    tempered,
)
from validation import small_n, stacking_holdout2
from validation.small_n import CLIP

FEW = {"draws": 20, "chains": 1, "progressbar": False}
BASE = ["lda", "lda_shrunk_means", "qda", "qda_isotropic", "qda_spherical",
        "class_frequencies"]
EXTRA = {
    "qda_pooled_shrunk": lambda: bg.QDA(cov_target="pooled", mean_strength="auto",
                                        method="conjugate", **FEW),
    "qda_shrunk_means": lambda: bg.QDA(mean_strength="auto", method="conjugate", **FEW),
    "lda_diag_shrunk": lambda: bg.LDA(cov_structure="diag", mean_strength="auto",
                                      method="conjugate", **FEW),
    "gnb": lambda: bg.GaussianNB(method="conjugate", **FEW),
}


SHOWN = {"small_n": [("iris", 10), ("iris", 20), ("breast cancer", 20)],
         "holdout2": [("blobs spread d=5", 10), ("manifold d=20", 100),
                      ("breast cancer std", 20)]}
"""Cells whose ratios the page shows one by one (the worst of earlier runs)."""


def tables(X_tr, y_tr, X_te, y_te) -> dict:
    """Per candidate member: leave-one-out class log probabilities (n, K), test class
    log probabilities (m, K), the class log prior; and the class indices."""
    members = [(name, est.set_params(**FEW)) for name, est in default_estimators()]
    members += [(name, make()) for name, make in EXTRA.items()]
    out = {"loo": {}, "test": {}, "prior": {}, "loo prior": {}}
    for name, est in members:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X_tr, y_tr)
            joint, y_index, loo_prior = loo_one_unit(est, X_tr, y_tr, None)
        out["loo"][name] = joint - logsumexp(joint, axis=1, keepdims=True)
        out["test"][name] = est.predict_log_proba(X_te)
        out["prior"][name] = class_log_prior(est)
        out["loo prior"][name] = loo_prior
    out["y"] = y_index
    out["index"] = np.searchsorted(np.unique(y_tr), y_te)
    return out


def class_counts_in(loo: np.ndarray, y: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Leave-one-out class log probabilities with the class-count factor of the full
    data, (N_k + a) / (N + K a), instead of the one without row n (a = 1, the
    estimators' default ``class_alpha``)."""
    n, K = loo.shape
    counts = np.bincount(y, minlength=K) + alpha
    without = np.broadcast_to(counts, (n, K)).copy()
    without[np.arange(n), y] -= 1.0
    shift = (np.log(counts) - np.log(counts.sum())) - (np.log(without)
                                                       - np.log(counts.sum() - 1.0))
    return log_softmax(loo + shift, axis=1)


def stacked(t: dict, names: list[str], rule) -> float:
    """Held-out log loss of the stack of ``names`` under the weight rule ``rule``: a
    ``weight_prior`` (float), "best", "counts in" or "tempered"."""
    y, index = t["y"], t["index"]
    rows = np.arange(y.size)
    loo = {m: t["loo"][m] for m in names}
    test = {m: t["test"][m] for m in names}
    prior = 1.0
    if rule == "counts in":
        loo = {m: class_counts_in(v, y) for m, v in loo.items()}
    elif rule == "tempered":
        for m in names:
            T = loo_temperature(loo[m], y, t["loo prior"][m])
            loo[m], test[m] = tempered(loo[m], t["loo prior"][m], T), tempered(
                test[m], t["prior"][m], T)
    elif rule != "best":
        prior = float(rule)
    L = np.stack([loo[m][rows, y] for m in names], axis=1)
    if rule == "best":
        a = np.zeros(len(names))
        a[np.argmax(L.sum(axis=0))] = 1.0
    else:
        a = stacking_weights(L, prior_rows=prior)
    keep = a > 0
    mix = logsumexp(np.log(a[keep])[:, None, None]
                    + np.stack([test[m] for m in names])[keep], axis=0)
    p_true = np.clip(np.exp(mix[np.arange(index.size), index]), CLIP, 1.0)
    return float(-np.mean(np.log(p_true)))


def variants() -> list[tuple[str, list[str], object]]:
    """(label, members, rule) of every variant."""
    out = [(f"weight_prior = {c:g}", BASE, c) for c in (0.0, 1.0, 3.0, 6.0)]
    out += [("class counts in", BASE, "counts in"), ("best by LOO", BASE, "best")]
    for name in EXTRA:
        out.append((f"+ {name}", [*BASE, name], 1.0))
        out.append((f"qda -> {name}", [name if m == "qda" else m for m in BASE], 1.0))
    out.append(("tempered members", BASE, "tempered"))
    return out


def best_sk(page: Path) -> dict:
    """(data, n) -> the best scikit-learn model's mean log loss, read from the "best sk"
    column of ``validation/results_small_n.md`` or the "best sk gen." column of
    ``validation/results_stacking_holdout2.md``."""
    best = {}
    for line in page.read_text().splitlines():
        found = re.match(r"\| ([^|]+) \| (\d+) \|.*\| ([0-9.]+) \((sk )?[^)]*\) \| [0-9.]+ \|",
                         line)
        if found:
            best[found.group(1).strip(), int(found.group(2))] = float(found.group(3))
    return best


def main() -> None:
    """Command line: ``--splits``, ``--seed``, ``--markdown PATH``, ``--results PATH``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cells", choices=["small_n", "holdout2"], default="small_n")
    parser.add_argument("--results", default=None,
                        help="the page with the best scikit-learn model per cell")
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args()
    study = {"small_n": small_n, "holdout2": stacking_holdout2}[args.cells]
    results = args.results or ("validation/results_small_n.md" if args.cells == "small_n"
                               else "validation/results_stacking_holdout2.md")
    best = best_sk(Path(results))
    cells = study.cells
    start = time.perf_counter()
    losses: dict = {}
    for name, n, rep, X_tr, y_tr, X_te, y_te in cells(args.splits, args.seed):
        t = tables(X_tr, y_tr, X_te, y_te)
        for label, names, rule in variants():
            losses.setdefault(label, {}).setdefault((name, n), []).append(
                stacked(t, names, rule))
        print(f"{name} n={n} split {rep} done", flush=True)
    lines = ["# Few rows, many features: the stack's weights, by measurement", "",
             "Generated by `validation/small_n_weights.py` (its docstring gives the design "
             f"and the command); {time.perf_counter() - start:.0f} s single-process on a "
             f"loaded 2-core machine (`--cells {args.cells}`). Ratios to the best "
             f"scikit-learn model of `{results}`, over its "
             f"{len(best)} cells ({args.splits} splits each)."
             + (" That page's best is a mean over its own splits (10), of which these "
                "are the first; compare the variants with each other (the paired "
                "column), not with the ratios there." if args.cells == "holdout2" else ""),
             "",
             "| variant | cells <= best sk | cells <= 1.1 x | largest ratio (cell) | "
             "geometric mean ratio | cells better / worse than the default stack | "
             + " | ".join(f"{name} {n}" for name, n in SHOWN[args.cells]) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(SHOWN[args.cells])]
    default = losses["weight_prior = 1"]
    for label, per_cell in losses.items():
        ratio = {k: np.mean(v) / best[k] for k, v in per_cell.items()}
        r = np.array(list(ratio.values()))
        worst = max(ratio, key=ratio.get)
        paired = np.array([np.mean(v) - np.mean(default[k]) for k, v in per_cell.items()])
        lines.append(
            f"| {label} | {int((r <= 1).sum())} / {r.size} | {int((r <= 1.1).sum())} | "
            f"{r.max():.2f} ({worst[0]} {worst[1]}) | {np.exp(np.mean(np.log(r))):.3f} | "
            f"{int((paired < 0).sum())} / {int((paired > 0).sum())} | "
            + " | ".join(f"{ratio[k]:.2f}" for k in SHOWN[args.cells]) + " |")
    page = "\n".join(lines) + "\n"
    if args.markdown:
        Path(args.markdown).write_text(page)
    print(page)


if __name__ == "__main__":
    main()
