"""Conformal prediction sets: coverage and set size against MAPIE and crepes.

For each bundled scikit-learn data set (iris, wine, breast cancer, digits) and each of
``--splits`` random stratified splits (default 200), 30 % of the rows are test rows and
the rest are labeled. One bayesgen model (``GaussianNB(method="conjugate")``,
closed-form posterior predictive) is fitted per split and scheme, and every
conformal method below uses the same fitted model's ``predict_proba``:

- split conformal (half of the labeled rows fit the model, the other half
  calibrate): bayesgen ``predict_set(calibration="split")`` with ``score="lac"`` and
  ``"aps"``; MAPIE 1.x ``SplitConformalClassifier(prefit=True)`` with
  ``conformity_score="lac"`` and ``"aps"``; crepes ``WrapClassifier.calibrate`` +
  ``predict_set`` (hinge score 1 - p, its default smoothed p-values); bayesgen's
  ``randomize=True`` (smoothed p-values too) for LAC, split and no split;
- no split: bayesgen ``predict_set(calibration="loo")``, fitted on all labeled rows
  and calibrated by their exact closed-form leave-one-out predictive (no refit);
- no split with a guarantee: bayesgen ``predict_set(calibration="jackknife+")``, the
  same model, the test rows also scored by the posterior without each training row
  (coverage >= 1 - 2 alpha guaranteed, about 1 - alpha expected), LAC (also
  randomized) and APS.

Two regimes: "all" (every labeled row) and "small" (``--small`` labeled rows per
class on average, default 20, drawn in the classes' proportions so that labeled and
test rows stay exchangeable; split conformal fits on half and calibrates on the other
half).
For alpha in {0.05, 0.1, 0.2}: mean empirical coverage of the test rows over the
splits and the mean set size. Written to ``validation/results_conformal.md``.

MAPIE and crepes are the optional extra ``bayesgen[compare]``. Run from the
repository root (about 15 minutes single-threaded on a shared machine, a third of it
the jackknife+ sets of digits)::

    OMP_NUM_THREADS=1 python validation/conformal.py
    OMP_NUM_THREADS=1 python validation/conformal.py --splits 20   # quicker
"""

from __future__ import annotations

import argparse
import datetime
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine

import bayesgen as bg

ALPHAS = (0.05, 0.1, 0.2)
#: the confidence levels 1 - alpha, as bayesgen's and MAPIE's confidence_level
LEVELS = [round(1 - a, 12) for a in ALPHAS]
DATASETS = {"iris": load_iris, "wine": load_wine, "breast cancer": load_breast_cancer,
            "digits": load_digits}
METHODS = ("bayesgen split LAC", "bayesgen split LAC randomized", "bayesgen split APS",
           "MAPIE LAC", "MAPIE APS", "crepes",
           "bayesgen no-split LAC (exact LOO)", "bayesgen no-split LAC randomized (exact LOO)",
           "bayesgen no-split APS (exact LOO)", "bayesgen jackknife+ LAC",
           "bayesgen jackknife+ LAC randomized", "bayesgen jackknife+ APS")
OUT = Path(__file__).with_name("results_conformal.md")
#: labeled x test rows x features up to which jackknife+ runs on every split
JACKKNIFE_LIGHT = 2e7


def _model():
    return bg.GaussianNB(method="conjugate", draws=2, chains=1, random_state=0)


def _stratified(y, rng, fraction):
    """Row positions of a stratified random subset of about ``fraction`` of each class."""
    out = []
    for k in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == k))
        out.append(rows[: max(1, round(fraction * rows.size))])
    return np.concatenate(out)


def _sets(name, est, X_fit, y_fit, X_cal, y_cal, X_test, rng=None):
    """Boolean sets (n_test, K, len(ALPHAS)) of one method."""
    from crepes import WrapClassifier
    from mapie.classification import SplitConformalClassifier

    randomize = "randomized" in name  # smoothed p-values, one stream per method
    if name.startswith("bayesgen split"):
        score = name.split()[2].lower()
        return est.predict_set(X_test, confidence_level=LEVELS, X_calib=X_cal, y_calib=y_cal,
                               score=score, randomize=randomize, random_state=rng)
    if name.startswith(("bayesgen no-split", "bayesgen jackknife+")):
        score = name.split()[2].lower()
        calibration = "jackknife+" if "jackknife+" in name else "loo"
        return est.predict_set(X_test, confidence_level=LEVELS, calibration=calibration,
                               X_calib=X_fit, y_calib=y_fit, score=score, randomize=randomize,
                               random_state=rng)
    if name.startswith("MAPIE"):
        if name.endswith("APS") and est.classes_.size == 2:
            return None  # MAPIE accepts only "lac" for a binary target
        mapie = SplitConformalClassifier(est, confidence_level=[1 - a for a in ALPHAS],
                                         conformity_score=name.split()[-1].lower(),
                                         prefit=True)
        mapie.conformalize(X_cal, y_cal)
        return np.asarray(mapie.predict_set(X_test)[1], dtype=bool)
    wrapped = WrapClassifier(est)
    wrapped.calibrate(X_cal, y_cal)
    return np.stack([np.asarray(wrapped.predict_set(X_test, labels=False, confidence=1 - a),
                                dtype=bool) for a in ALPHAS], axis=-1)


def run(splits: int, small: int, seed: int, jackknife_splits: int) -> dict:
    results = {}
    for data_name, loader in DATASETS.items():
        X, y = loader(return_X_y=True)
        rng = np.random.default_rng(seed)
        uniforms = np.random.default_rng([seed, 1])  # randomized sets: apart from the splits
        for regime in ("all", "small"):
            cover = {m: [] for m in METHODS}
            size = {m: [] for m in METHODS}
            t0 = time.perf_counter()
            for split in range(splits):
                test = _stratified(y, rng, 0.3)
                labeled = np.setdiff1d(np.arange(y.size), test)
                if regime == "small":  # classes in their proportions: exchangeable with test
                    fraction = small * np.unique(y).size / labeled.size
                    labeled = labeled[_stratified(y[labeled], rng, fraction)]
                half = labeled[_stratified(y[labeled], rng, 0.5)]
                other = np.setdiff1d(labeled, half)
                split_model = _model().fit(X[half], y[half])
                full_model = _model().fit(X[labeled], y[labeled])
                # jackknife+ costs O(labeled x test x features) per set: on the larger
                # sets (digits, all rows) only on the first jackknife_splits splits
                heavy = labeled.size * test.size * X.shape[1] > JACKKNIFE_LIGHT
                for m in METHODS:
                    if "jackknife+" in m and heavy and split >= jackknife_splits:
                        continue
                    if "no-split" in m or "jackknife+" in m:
                        sets = _sets(m, full_model, X[labeled], y[labeled], None, None, X[test],
                                     uniforms)
                    else:
                        sets = _sets(m, split_model, X[half], y[half], X[other], y[other],
                                     X[test], uniforms)
                    if sets is None:
                        cover[m].append(np.full(len(ALPHAS), np.nan))
                        size[m].append(np.full(len(ALPHAS), np.nan))
                        continue
                    hit = sets[np.arange(test.size), np.searchsorted(split_model.classes_,
                                                                     y[test])]
                    cover[m].append(hit.mean(axis=0))
                    size[m].append(sets.sum(axis=1).mean(axis=0))
            results[(data_name, regime)] = {
                "cover": {m: np.mean(v, axis=0) for m, v in cover.items()},
                "size": {m: np.mean(v, axis=0) for m, v in size.items()},
                "n_labeled": labeled.size, "n_test": test.size,
                "jackknife_splits": len(cover[METHODS[-1]]),
                "seconds": time.perf_counter() - t0,
            }
            print(f"{data_name} ({regime}): {time.perf_counter() - t0:.1f} s", flush=True)
    return results


def write(results: dict, splits: int, small: int, seed: int, seconds: float,
          jackknife_splits: int) -> str:
    lines = [
        "# Conformal prediction sets: coverage and size against MAPIE and crepes",
        "",
        f"Written by `validation/conformal.py --splits {splits} --small {small} --seed {seed} "
        f"--jackknife-splits {jackknife_splits}` "
        f"on {datetime.date.today()} ({seconds / 60:.1f} min single-threaded).",
        "",
        "One `GaussianNB(method=\"conjugate\")` per split and scheme; every method uses the "
        "same fitted model's `predict_proba`. Split methods fit on half of the labeled rows "
        "and calibrate on the other half; the no-split methods fit on all labeled rows and "
        "calibrate with their exact leave-one-out predictive (jackknife+ also scores the "
        "test rows by the posterior without each training row: coverage >= 1 - 2 alpha "
        "guaranteed). Test rows: a stratified 30 %. "
        "Cells: mean empirical coverage over the splits / mean set size. \"small\": "
        f"{small} labeled rows per class on average, in the classes' proportions. "
        "n/a: MAPIE's APS refuses a binary target.",
        "",
    ]
    for (data_name, regime), res in results.items():
        jk = ("" if res["jackknife_splits"] == splits
              else f"; jackknife+ on the first {res['jackknife_splits']} splits")
        lines += [f"## {data_name}, {regime} labeled rows ({res['n_labeled']} labeled, "
                  f"{res['n_test']} test{jk})", "",
                  "| method | " + " | ".join(f"alpha = {a}" for a in ALPHAS) + " |",
                  "|---|" + "---|" * len(ALPHAS)]
        for m in METHODS:
            pairs = zip(res["cover"][m], res["size"][m], strict=True)
            cells = ["n/a" if np.isnan(c) else f"{c:.3f} / {s:.2f}" for c, s in pairs]
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines.append("")
    text = "\n".join(lines)
    OUT.write_text(text)
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jackknife-splits", type=int, default=40,
                        help="splits with jackknife+ sets where labeled x test rows x "
                             "features exceeds 2e7 (digits, all rows); every split elsewhere")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # MAPIE's and crepes' notices
        results = run(args.splits, args.small, args.seed, args.jackknife_splits)
    print(write(results, args.splits, args.small, args.seed, time.perf_counter() - t0,
                args.jackknife_splits))


if __name__ == "__main__":
    main()
