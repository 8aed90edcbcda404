"""Semi-supervised learning with unlabeled rows: accuracy against baselines.

Two studies, several random seeds each (mean and standard deviation of the test
accuracy), written to ``validation/results_semi_supervised.md``:

1. Synthetic: three Gaussian classes in 2-D with a shared covariance, 2 labeled rows
   per class and 3,000 unlabeled rows; test accuracy of LDA and GaussianNB (MAP)
   fitted on the labeled rows only and with the unlabeled rows (EM,
   ``unlabeled_weight`` 1 and 0.1), against the Bayes rate (the accuracy of the true
   generating model on the same test rows) and scikit-learn's
   ``SelfTrainingClassifier(GaussianNB())`` and ``LabelSpreading``.
2. Digits (``sklearn.datasets.load_digits``, 8x8 images, 10 classes): 10 labeled rows
   per class, the rest of a 70 % training split unlabeled, tested on the other 30 %;
   GaussianNB (MAP) and MultinomialNB (MAP, pixel intensities as counts), labeled-only
   versus EM with ``unlabeled_weight`` in {1, 0.1}, against the same scikit-learn
   baselines.
3. KernelNB on the synthetic study (``--only kernel``, written to
   ``validation/results_semi_kernel.md``; the other studies and their file are not
   rerun): KernelNB (MAP) labeled-only and EM with ``unlabeled_weight`` 1 and 0.1, at
   2 labeled rows per class (the same data as study 1) and, with
   ``--kernel-labeled 2 10``, also at 10 labeled rows per class, with LDA + EM as a
   reference and the seconds per fit. Its EM re-chooses every bandwidth in every step
   (about 5-20 s per fit with 3,000 unlabeled rows on two loaded cores), hence the
   separate run.

Run from the repository root (studies 1-2: about two to ten minutes on two shared cores;
study 3 with ``--kernel-labeled 2 10``: about two minutes per 3 seeds; noisy)::

    python validation/semi_supervised.py            # studies 1-2, 3 seeds
    python validation/semi_supervised.py --seeds 2  # quicker
    python validation/semi_supervised.py --only kernel --seeds 10 --kernel-labeled 2 10
"""

from __future__ import annotations

import argparse
import datetime
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import multivariate_normal
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB as SkGaussianNB
from sklearn.semi_supervised import LabelSpreading, SelfTrainingClassifier

import bayesgen as bg

OUT = Path(__file__).with_name("results_semi_supervised.md")
OUT_KERNEL = Path(__file__).with_name("results_semi_kernel.md")
MU = np.array([[0.0, 0.0], [2.5, 0.0], [1.25, 2.2]])
COV = np.array([[1.0, 0.4], [0.4, 1.0]])
PI = np.array([1 / 3, 1 / 3, 1 / 3])


def synthetic(seed: int, n_unlab: int = 3000, n_test: int = 5000, n_lab: int = 2):
    rng = np.random.default_rng(seed)
    L = np.linalg.cholesky(COV)

    def draw(n):
        y = rng.choice(3, size=n, p=PI)
        return MU[y] + rng.standard_normal((n, 2)) @ L.T, y

    X_l, y_l = [], []
    for k in range(3):  # n_lab labeled rows per class
        X_l.append(MU[k] + rng.standard_normal((n_lab, 2)) @ L.T)
        y_l += [k] * n_lab
    X_u, _ = draw(n_unlab)
    X_t, y_t = draw(n_test)
    return np.vstack(X_l), np.array(y_l), X_u, X_t, y_t


def bayes_rate(X_t, y_t) -> float:
    """Accuracy of the true generating model's Bayes rule on the test rows."""
    logp = np.stack([multivariate_normal(MU[k], COV).logpdf(X_t) for k in range(3)], 1)
    return float(np.mean(np.argmax(logp + np.log(PI), 1) == y_t))


def semi_fits(make, X_l, y_l, X_u, X_t, y_t, timed: bool = False) -> dict:
    """Accuracy of a bayesgen estimator: labeled only, EM with lambda 1 and 0.1.

    With ``timed`` each value is ``(accuracy, seconds for the fit)``.
    """
    X = np.vstack([X_l, X_u])
    y = np.concatenate([y_l.astype(float), np.full(X_u.shape[0], np.nan)])
    fits = {"labeled only": (make, X_l, y_l)}
    for lam in (1.0, 0.1):
        fits[f"EM, lambda={lam:g}"] = (lambda lam=lam, **kw: make(unlabeled_weight=lam, **kw),
                                       X, y)
    out = {}
    for key, (mk, X_fit, y_fit) in fits.items():
        start = time.perf_counter()
        clf = mk().fit(X_fit, y_fit)
        sec = time.perf_counter() - start
        out[key] = (clf.score(X_t, y_t), sec) if timed else clf.score(X_t, y_t)
    return out


def sklearn_fits(X_l, y_l, X_u, X_t, y_t, spreading: dict) -> dict[str, float]:
    X = np.vstack([X_l, X_u])
    y = np.concatenate([y_l, np.full(X_u.shape[0], -1)])
    st = SelfTrainingClassifier(SkGaussianNB()).fit(X, y)
    ls = LabelSpreading(**spreading).fit(X, y)
    return {"sklearn SelfTraining(GaussianNB)": st.score(X_t, y_t),
            "sklearn LabelSpreading": ls.score(X_t, y_t)}


def study_synthetic(seeds: list[int]) -> dict[str, list[float]]:
    rows: dict[str, list[float]] = {}
    for seed in seeds:
        X_l, y_l, X_u, X_t, y_t = synthetic(seed)
        res = {"Bayes rate (true model)": bayes_rate(X_t, y_t)}
        for name, cls in (("LDA", bg.LDA), ("GaussianNB", bg.GaussianNB)):
            for key, acc in semi_fits(cls, X_l, y_l, X_u, X_t, y_t).items():
                res[f"{name}, {key}"] = acc
        res.update(sklearn_fits(X_l, y_l, X_u, X_t, y_t, {"kernel": "knn", "n_neighbors": 10}))
        for key, acc in res.items():
            rows.setdefault(key, []).append(acc)
    return rows


def study_kernel(seeds: list[int], n_labs: list[int]) -> dict[int, dict[str, list[float]]]:
    """KernelNB (MAP) on the synthetic data: accuracy and seconds per fit, per n_lab."""
    out: dict[int, dict[str, list[float]]] = {}
    for n_lab in n_labs:
        rows = out.setdefault(n_lab, {})
        for seed in seeds:
            X_l, y_l, X_u, X_t, y_t = synthetic(seed, n_lab=n_lab)
            rows.setdefault("Bayes rate (true model)", []).append(bayes_rate(X_t, y_t))
            ldas = semi_fits(bg.LDA, X_l, y_l, X_u, X_t, y_t)
            rows.setdefault("LDA, EM, lambda=1 (reference)", []).append(ldas["EM, lambda=1"])
            for key, (acc, sec) in semi_fits(
                    lambda **kw: bg.KernelNB(method="map", **kw),
                    X_l, y_l, X_u, X_t, y_t, timed=True).items():
                rows.setdefault(f"KernelNB, {key}", []).append(acc)
                rows.setdefault(f"KernelNB, {key} [seconds]", []).append(sec)
            print(f"n_lab={n_lab} seed={seed}: "
                  + ", ".join(f"{k}={v[-1]:.3f}" for k, v in rows.items()), flush=True)
    return out


def study_digits(seeds: list[int]) -> dict[str, list[float]]:
    X_all, y_all = load_digits(return_X_y=True)
    rows: dict[str, list[float]] = {}
    for seed in seeds:
        X_tr, X_t, y_tr, y_t = train_test_split(X_all, y_all, test_size=0.3,
                                                random_state=seed, stratify=y_all)
        rng = np.random.default_rng(seed)
        lab = np.concatenate([rng.choice(np.flatnonzero(y_tr == k), 10, replace=False)
                              for k in range(10)])
        unl = np.setdiff1d(np.arange(y_tr.size), lab)
        X_l, y_l, X_u = X_tr[lab], y_tr[lab], X_tr[unl]
        res: dict[str, float] = {}
        makers = (("GaussianNB", lambda **kw: bg.GaussianNB(**kw)),
                  ("MultinomialNB", lambda **kw: bg.MultinomialNB(**kw)))
        for name, make in makers:
            for key, acc in semi_fits(make, X_l, y_l, X_u, X_t, y_t).items():
                res[f"{name}, {key}"] = acc
        res.update(sklearn_fits(X_l, y_l, X_u, X_t, y_t, {"kernel": "knn", "n_neighbors": 7}))
        for key, acc in res.items():
            rows.setdefault(key, []).append(acc)
    return rows


def table(rows: dict[str, list[float]]) -> str:
    lines = ["| model | test accuracy, mean | sd over seeds |", "|---|---|---|"]
    for key, accs in rows.items():
        a = np.asarray(accs)
        lines.append(f"| {key} | {a.mean():.3f} | {a.std(ddof=1) if a.size > 1 else 0:.3f} |")
    return "\n".join(lines)


def kernel_text(res: dict[int, dict[str, list[float]]], command: str, n_seeds: int,
                seconds: float) -> str:
    """Markdown of :func:`study_kernel`: accuracy table and seconds per fit."""
    parts = [f"""# Semi-supervised KernelNB: results

Generated by `{command}` on {datetime.date.today().isoformat()} ({n_seeds} seeds,
{seconds:.0f} s in all on two shared, loaded cores; timings are noisy, for orientation
only). The synthetic study of `results_semi_supervised.md` (three Gaussian classes in
2-D with a shared covariance, 3,000 unlabeled rows, 5,000 test rows; with 2 labeled
rows per class, the same data as there for the same seed), with KernelNB
(`method="map"`). Its EM keeps
the kernels on the labeled rows; the unlabeled rows enter through their mixture
likelihood and re-choose the bandwidths and the class prior. LDA with EM (the true
model family) is shown for reference. Test accuracy, mean and standard deviation over
the seeds; then the seconds per fit."""]
    for n_lab, rows in res.items():
        acc = {k: v for k, v in rows.items() if not k.endswith("[seconds]")}
        sec = {k[: -len(" [seconds]")]: v for k, v in rows.items() if k.endswith("[seconds]")}
        secs = ["| fit | seconds, mean | min | max |", "|---|---|---|---|"]
        secs += [f"| {k} | {np.mean(v):.1f} | {np.min(v):.1f} | {np.max(v):.1f} |"
                 for k, v in sec.items()]
        parts.append(f"## {n_lab} labeled rows per class, 3,000 unlabeled\n\n{table(acc)}"
                     f"\n\nSeconds per fit (noisy):\n\n" + "\n".join(secs))
    return "\n\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", choices=["kernel"], default=None,
                        help="run only the KernelNB study, written to results_semi_kernel.md")
    parser.add_argument("--kernel-labeled", type=int, nargs="+", default=[2],
                        help="labeled rows per class for the KernelNB study (default: 2)")
    args = parser.parse_args()
    seeds = list(range(args.seeds))
    start = time.perf_counter()
    if args.only == "kernel":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bg.ConvergenceWarning)
            warnings.simplefilter("ignore", bg.DataWarning)
            res = study_kernel(seeds, args.kernel_labeled)
        command = ("python validation/semi_supervised.py --only kernel --seeds "
                   f"{args.seeds} --kernel-labeled {' '.join(map(str, args.kernel_labeled))}")
        text = kernel_text(res, command, len(seeds), time.perf_counter() - start)
        OUT_KERNEL.write_text(text)
        print(text)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        warnings.simplefilter("ignore", bg.DataWarning)
        syn = study_synthetic(seeds)
        dig = study_digits(seeds)
    seconds = time.perf_counter() - start
    text = f"""# Semi-supervised learning: results

Generated by `python validation/semi_supervised.py --seeds {args.seeds}` ({len(seeds)} seeds,
{seconds:.0f} s on two shared cores; timings are noisy). Test accuracy, mean and
standard deviation over the seeds. bayesgen estimators use `method="map"` (the default);
"EM" fits the labeled and unlabeled rows together (`y` = NaN for an unlabeled row),
with `unlabeled_weight` = lambda.

## 1. Synthetic: three Gaussian classes, 2 labeled rows per class, 3,000 unlabeled

Classes N(mu_k, Sigma) in 2-D, mu = {MU.tolist()}, Sigma = {COV.tolist()}, equal class
probabilities; 5,000 test rows. The Bayes rate is the accuracy of the true model's
Bayes rule on the same test rows (the best any classifier can do, up to sampling).

{table(syn)}

## 2. Digits: 10 labeled rows per class, the rest unlabeled

`sklearn.datasets.load_digits` (1,797 images, 64 pixel intensities 0-16): a stratified
70/30 split; 100 labeled training rows, about 1,160 unlabeled; tested on 540 rows.
MultinomialNB reads the intensities as counts.

{table(dig)}
"""
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
