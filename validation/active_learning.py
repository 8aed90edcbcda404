"""Active learning: BALD against entropy, margin and random sampling.

For each bundled data set (iris, wine, breast cancer; ``--digits`` adds digits) and
each of ``--seeds`` seeds (default 10): a stratified 30 % test split; the rest is the
unlabelled pool, from which 2 rows per class start labelled. A
``GaussianNB(method="conjugate", draws=200, chains=1)`` is fitted, then ``--steps``
times (default 30): ``bg.select_queries`` picks ``--batch`` rows (default 1) by the
strategy, their labels are revealed, ``partial_fit`` adds them and the held-out
accuracy and log loss are recorded. The area under each learning curve (mean over the
steps 0..T, labels spent on the x axis) summarises a strategy: higher accuracy and
lower log loss are better. Written to ``validation/results_active_learning.md``.

Run from the repository root (about 2-5 minutes single-threaded)::

    OMP_NUM_THREADS=1 python validation/active_learning.py
    OMP_NUM_THREADS=1 python validation/active_learning.py --batch 5 --steps 8
"""

from __future__ import annotations

import argparse
import datetime
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.metrics import log_loss

import bayesgen as bg

STRATEGIES = ("bald", "entropy", "margin", "random")
DATASETS = {"iris": load_iris, "wine": load_wine, "breast cancer": load_breast_cancer}
OUT = Path(__file__).with_name("results_active_learning.md")


def _curve(X, y, test, pool, start, strategy, steps, batch, seed):
    est = bg.GaussianNB(method="conjugate", draws=200, chains=1, random_state=seed)
    est.fit(X[start], y[start])
    pool = np.setdiff1d(pool, start)
    acc, loss = [], []
    rng = np.random.default_rng(seed)
    for step in range(steps + 1):
        proba = est.predict_proba(X[test])
        acc.append(np.mean(est.classes_[proba.argmax(axis=1)] == y[test]))
        loss.append(log_loss(y[test], proba, labels=est.classes_))
        if step == steps:
            break
        pick = bg.select_queries(est, X[pool], batch, strategy, random_state=rng)
        est.partial_fit(X[pool[pick]], y[pool[pick]])
        pool = np.delete(pool, pick)
    return np.array(acc), np.array(loss)


def run(seeds: int, steps: int, batch: int, digits: bool) -> dict:
    sets = dict(DATASETS, **({"digits": load_digits} if digits else {}))
    results = {}
    for name, loader in sets.items():
        X, y = loader(return_X_y=True)
        t0 = time.perf_counter()
        acc = {s: [] for s in STRATEGIES}
        loss = {s: [] for s in STRATEGIES}
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            test = np.concatenate([rng.permutation(np.flatnonzero(y == k))[
                : round(0.3 * np.sum(y == k))] for k in np.unique(y)])
            pool = np.setdiff1d(np.arange(y.size), test)
            start = np.concatenate([rng.choice(pool[y[pool] == k], 2, replace=False)
                                    for k in np.unique(y)])
            for s in STRATEGIES:
                a, ll = _curve(X, y, test, pool, start, s, steps, batch, seed)
                acc[s].append(a)
                loss[s].append(ll)
        results[name] = {"acc": {s: np.array(v) for s, v in acc.items()},
                         "loss": {s: np.array(v) for s, v in loss.items()},
                         "start": start.size, "seconds": time.perf_counter() - t0}
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    return results


def write(results: dict, seeds: int, steps: int, batch: int, digits: bool,
          seconds: float) -> str:
    flags = f"--seeds {seeds} --steps {steps} --batch {batch}" + (" --digits" if digits else "")
    lines = [
        "# Active learning: BALD against entropy, margin and random sampling",
        "",
        f"Written by `validation/active_learning.py {flags}` on {datetime.date.today()} "
        f"({seconds / 60:.1f} min single-threaded).",
        "",
        "`GaussianNB(method=\"conjugate\")`, 2 labelled rows per class to start, then "
        f"{steps} rounds of {batch} label(s) chosen by `bg.select_queries` and added by "
        "`partial_fit`; held-out (stratified 30 %) accuracy and log loss after every round. "
        "Area under the learning curve (AULC) = mean over rounds 0.."
        f"{steps}; mean (standard error) over {seeds} seeds. Accuracy: higher is better; "
        "log loss: lower is better. Final: after the last round.",
        "",
        "| data | strategy | AULC accuracy | AULC log loss | final accuracy | final log loss |",
        "|---|---|---|---|---|---|",
    ]
    for name, res in results.items():
        for s in STRATEGIES:
            a, ll = res["acc"][s], res["loss"][s]
            au_a, au_l = a.mean(axis=1), ll.mean(axis=1)
            se = np.sqrt(len(au_a))
            lines.append(
                f"| {name} | {s} | {au_a.mean():.3f} ({au_a.std(ddof=1) / se:.3f}) | "
                f"{au_l.mean():.3f} ({au_l.std(ddof=1) / se:.3f}) | {a[:, -1].mean():.3f} | "
                f"{ll[:, -1].mean():.3f} |")
    text = "\n".join(lines) + "\n"
    OUT.write_text(text)
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--digits", action="store_true")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        results = run(args.seeds, args.steps, args.batch, args.digits)
    print(write(results, args.seeds, args.steps, args.batch, args.digits,
                time.perf_counter() - t0))


if __name__ == "__main__":
    main()
