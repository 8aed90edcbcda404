"""Active learning: BALD against entropy, margin and random sampling; BatchBALD batches.

Two studies on the bundled data sets (iris, wine, breast cancer; ``--digits`` adds
digits), each over ``--seeds`` seeds (default 10): a stratified 30 % test split; the
rest is the unlabeled pool, from which 2 rows per class start labeled. A
``GaussianNB(method="conjugate", draws=200, chains=1)`` is fitted, then in each round
``bg.select_queries`` picks rows by the strategy, their labels are revealed,
``partial_fit`` adds them and the held-out accuracy and log loss are recorded. The
area under each learning curve (mean over the rounds 0..T, labels spent on the x axis)
summarises a strategy: higher accuracy and lower log loss are better.

1. ``single``: ``--steps`` rounds (default 30) of ``--batch`` rows (default 1) chosen by
   BALD, entropy, margin or random sampling.
2. ``batch``: for each size in ``--batch-sizes`` (default 5 and 10), rounds of that many
   rows, ``--batch-labels`` labels in all (default 30), chosen by BatchBALD (the joint
   mutual information, ``strategy="batchbald"``), BALD with the greedy distance rule
   (``min_distance="auto"``), the top-b BALD rows (``min_distance=0``) and random.

Both are written to ``validation/results_active_learning.md`` (``--only`` reruns one
and keeps the other's section).

Run from the repository root (about 9 + 4 minutes single-threaded)::

    OMP_NUM_THREADS=1 python validation/active_learning.py
    OMP_NUM_THREADS=1 python validation/active_learning.py --only batch --batch-sizes 5
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
#: batch study: name -> select_queries keywords
BATCH_STRATEGIES = {
    "batchbald": {"strategy": "batchbald"},
    "bald, distance rule": {"strategy": "bald", "min_distance": "auto"},
    "bald, top-b": {"strategy": "bald", "min_distance": 0},
    "random": {"strategy": "random", "min_distance": 0},
}
DATASETS = {"iris": load_iris, "wine": load_wine, "breast cancer": load_breast_cancer}
OUT = Path(__file__).with_name("results_active_learning.md")
TITLE = "# Active learning: BALD against entropy, margin and random sampling; BatchBALD"
SECTIONS = {"single": "## One label per round", "batch": "## Batches"}


def _curve(X, y, test, pool, start, select, steps, batch, seed):
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
        pick = bg.select_queries(est, X[pool], batch, random_state=rng, **select)
        est.partial_fit(X[pool[pick]], y[pool[pick]])
        pool = np.delete(pool, pick)
    return np.array(acc), np.array(loss)


def _splits(y: np.ndarray, seed: int):
    rng = np.random.default_rng(seed)
    test = np.concatenate([rng.permutation(np.flatnonzero(y == k))[
        : round(0.3 * np.sum(y == k))] for k in np.unique(y)])
    pool = np.setdiff1d(np.arange(y.size), test)
    start = np.concatenate([rng.choice(pool[y[pool] == k], 2, replace=False)
                            for k in np.unique(y)])
    return test, pool, start


def run(seeds: int, digits: bool, designs: dict) -> dict:
    """``designs``: label -> (strategies {name: select_queries keywords}, steps, batch).

    Returns {label: {data set: {"acc"/"loss": {strategy: (seeds, steps + 1)}}}}."""
    sets = dict(DATASETS, **({"digits": load_digits} if digits else {}))
    results: dict = {label: {} for label in designs}
    for name, loader in sets.items():
        X, y = loader(return_X_y=True)
        for label, (strategies, steps, batch) in designs.items():
            t0 = time.perf_counter()
            acc = {s: [] for s in strategies}
            loss = {s: [] for s in strategies}
            for seed in range(seeds):
                test, pool, start = _splits(y, seed)
                for s, select in strategies.items():
                    a, ll = _curve(X, y, test, pool, start, select, steps, batch, seed)
                    acc[s].append(a)
                    loss[s].append(ll)
            results[label][name] = {"acc": {s: np.array(v) for s, v in acc.items()},
                                    "loss": {s: np.array(v) for s, v in loss.items()}}
            print(f"{name}, {label}: {time.perf_counter() - t0:.1f} s", flush=True)
    return results


def _table(results: dict, strategies) -> list[str]:
    lines = ["| data | strategy | AULC accuracy | AULC log loss | final accuracy | "
             "final log loss |", "|---|---|---|---|---|---|"]
    for name, res in results.items():
        for s in strategies:
            a, ll = res["acc"][s], res["loss"][s]
            au_a, au_l = a.mean(axis=1), ll.mean(axis=1)
            se = np.sqrt(len(au_a))
            lines.append(
                f"| {name} | {s} | {au_a.mean():.3f} ({au_a.std(ddof=1) / se:.3f}) | "
                f"{au_l.mean():.3f} ({au_l.std(ddof=1) / se:.3f}) | {a[:, -1].mean():.3f} | "
                f"{ll[:, -1].mean():.3f} |")
    return lines


def _paired(results: dict, a: str, b: str) -> list[str]:
    """Per data set: mean (standard error) over seeds of the AULC differences a - b."""
    lines = []
    for name, res in results.items():
        d_acc = res["acc"][a].mean(axis=1) - res["acc"][b].mean(axis=1)
        d_loss = res["loss"][a].mean(axis=1) - res["loss"][b].mean(axis=1)
        se = np.sqrt(d_acc.size)
        lines.append(f"| {name} | {a} - {b} | {d_acc.mean():+.3f} ({d_acc.std(ddof=1) / se:.3f})"
                     f" | {d_loss.mean():+.3f} ({d_loss.std(ddof=1) / se:.3f}) |")
    return lines


def _header(part: str, flags: str, seconds: float) -> list[str]:
    """The section title and the line saying which command wrote it, when and how fast."""
    return [SECTIONS[part], "",
            f"Written by `validation/active_learning.py --only {part} {flags}` on "
            f"{datetime.date.today()} ({seconds / 60:.1f} min single-threaded).", ""]


def _section_single(results: dict, seeds: int, steps: int, batch: int, flags: str,
                    seconds: float) -> str:
    lines = [
        *_header("single", flags, seconds),
        "`GaussianNB(method=\"conjugate\")`, 2 labeled rows per class to start, then "
        f"{steps} rounds of {batch} label(s) chosen by `bg.select_queries` and added by "
        "`partial_fit`; held-out (stratified 30 %) accuracy and log loss after every round. "
        "Area under the learning curve (AULC) = mean over rounds 0.."
        f"{steps}; mean (standard error) over {seeds} seeds. Accuracy: higher is better; "
        "log loss: lower is better. Final: after the last round.", "",
    ]
    return "\n".join(lines + _table(results["single"], STRATEGIES)) + "\n"


def _section_batch(results: dict, seeds: int, sizes: list[int], labels: int, flags: str,
                   seconds: float) -> str:
    lines = [
        *_header("batch", flags, seconds),
        "`GaussianNB(method=\"conjugate\", draws=200)`, 2 labeled rows per class to start, "
        f"then {labels} labels in rounds of b rows chosen by `bg.select_queries`: "
        "`\"batchbald\"` (greedy joint mutual information of the batch, 1,000 label "
        "configurations), `\"bald\"` with the greedy distance rule (`min_distance=\"auto\"`), "
        "the top-b BALD rows (`min_distance=0`) and random; the same splits and starting "
        f"rows as above. AULC = mean over the rounds; mean (standard error) over {seeds} "
        "seeds. The paired table gives the per-seed AULC difference (accuracy: positive "
        "favours BatchBALD; log loss: negative favours BatchBALD).",
    ]
    for b in sizes:
        res = results[f"batch {b}"]
        lines += ["", f"### b = {b} ({labels // b} rounds)", ""]
        lines += _table(res, BATCH_STRATEGIES)
        lines += ["", "| data | difference | AULC accuracy | AULC log loss |", "|---|---|---|---|"]
        for other in list(BATCH_STRATEGIES)[1:]:
            lines += _paired(res, "batchbald", other)
    return "\n".join(lines) + "\n"


def _write(sections: dict[str, str]) -> str:
    """Write the file with the given sections, keeping the other sections already in it."""
    kept = {}
    if OUT.exists():
        text = OUT.read_text()
        for key, heading in SECTIONS.items():
            if heading in text:
                body = text.split(heading, 1)[1]
                others = [body.index(h) for h in SECTIONS.values() if h in body]
                kept[key] = heading + (body[: min(others)] if others else body).rstrip() + "\n"
    kept.update(sections)
    text = TITLE + "\n\n" + "\n".join(kept[k] for k in SECTIONS if k in kept)
    OUT.write_text(text)
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--batch-labels", type=int, default=30)
    parser.add_argument("--only", choices=("single", "batch"), default=None)
    parser.add_argument("--digits", action="store_true")
    args = parser.parse_args(argv)
    digits = " --digits" if args.digits else ""
    sections = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if args.only in (None, "single"):
            t0 = time.perf_counter()
            designs = {"single": ({s: {"strategy": s} for s in STRATEGIES}, args.steps,
                                  args.batch)}
            results = run(args.seeds, args.digits, designs)
            flags = f"--seeds {args.seeds} --steps {args.steps} --batch {args.batch}{digits}"
            sections["single"] = _section_single(results, args.seeds, args.steps, args.batch,
                                                 flags, time.perf_counter() - t0)
        if args.only in (None, "batch"):
            t0 = time.perf_counter()
            designs = {f"batch {b}": (BATCH_STRATEGIES, args.batch_labels // b, b)
                       for b in args.batch_sizes}
            results = run(args.seeds, args.digits, designs)
            sizes = " ".join(map(str, args.batch_sizes))
            flags = (f"--seeds {args.seeds} --batch-sizes {sizes} --batch-labels "
                     f"{args.batch_labels}{digits}")
            sections["batch"] = _section_batch(results, args.seeds, args.batch_sizes,
                                               args.batch_labels, flags,
                                               time.perf_counter() - t0)
    print(_write(sections))


if __name__ == "__main__":
    main()
