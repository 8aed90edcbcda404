"""MixtureDA against QDA, the stack, scikit-learn's per-class GaussianMixture and R's
MclustDA: held-out log loss, accuracy and time on multimodal data sets.

Data sets (stratified 70/30 splits, one per seed):

- ``interleaved``: generated; two classes of three 2-D blobs each, alternating along a
  line (one Gaussian per class cannot follow them), 100 rows per blob;
- ``mixture5d``: generated; three classes in 5-D, each a mixture of 2-4 Gaussian
  blobs with random centres, covariances and weights, 600 rows per class;
- ``digits-pca``: scikit-learn's digits (1,797 x 64, 10 classes), projected onto 15
  principal components fitted on the training rows (handwriting styles: multimodal);
- ``wine`` and ``breast cancer``: scikit-learn's bundled sets (a mixture is not needed
  there: the data must say so, and MixtureDA should match QDA).

Classifiers:

- ``MixtureDA``: ``bg.MixtureDA()`` at its defaults (EM MAP, components per class
  proposed by BIC in 1..5 and checked by the cross-validated log loss of the labels,
  the plug-in rule: the Gaussian mixtures at the mode);
- ``MixtureDA posterior`` (only with ``--methods ...,posterior``):
  ``predictive="posterior"``, the conditional posterior predictive at the mode
  (Student-t components);
- ``MixtureDA gibbs``: ``method="gibbs"``, 2 chains x (100 warm-up + 200 kept)
  sweeps (posterior predictive);
- ``MixtureDA mcmc`` (only with ``--methods ...,mcmc``): ``method="mcmc"``, NUTS
  (numpyro), 2 chains x (200 warm-up + 200 kept) iterations from the EM mode; its
  time includes compiling the NUTS program (each split's fit has other shapes);
- ``QDA``: ``bg.QDA()``; ``QDA conjugate``: ``bg.QDA(method="conjugate")`` (its
  closed-form predictive); ``stack``: ``bg.StackedClassifier()`` (its default members);
- ``stack + MixtureDA`` (only with ``--methods ...,stack-mixture``): the stack's
  default members and ``bg.MixtureDA()``, weighed by its 10-fold cross-validated
  terms;
- ``sklearn GMM``: one ``sklearn.mixture.GaussianMixture`` per class (full covariances,
  components in 1..5 by its BIC, 3 k-means starts, ``reg_covar`` 1e-6), class prior
  N_k / N, plug-in Bayes rule;
- ``MclustDA``: R's ``mclust::MclustDA`` at its defaults (``modelType="MclustDA"``,
  G = 1..5 and every covariance model per class chosen by BIC), run by ``Rscript``
  (skipped with a note when R or mclust is missing).

Log loss is scikit-learn's ``log_loss`` (probabilities clipped at machine epsilon);
time is wall seconds of fit + predict_proba (MclustDA: measured inside R, without R's
start-up and CSV I/O). The machine this ran on may be loaded: read times as ratios.

Run::

    python benchmarks/mixture_vs_mclust.py                 # 3 seeds, all sets
    python benchmarks/mixture_vs_mclust.py --seeds 5 --only digits
    python benchmarks/mixture_vs_mclust.py --no-gibbs --no-stack
    python benchmarks/mixture_vs_mclust.py --only-mixture --methods map,gibbs,mcmc
    python benchmarks/mixture_vs_mclust.py --only-mixture --methods stack-mixture
    python benchmarks/mixture_vs_mclust.py --criteria      # BIC vs fixed M vs sparse prior
    python benchmarks/mixture_vs_mclust.py --causes        # mixture5d: starts, M, prior, tol
    python benchmarks/mixture_vs_mclust.py --timing --only mixture5d --only interleaved

Prints one table per data set (mean and standard deviation over the seeds) and, with
``--markdown PATH``, writes them as Markdown.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.decomposition import PCA
from sklearn.metrics import accuracy_score, log_loss
from sklearn.mixture import GaussianMixture
from sklearn.model_selection import train_test_split

import bayesgen as bg

R_SCRIPT = r"""
suppressPackageStartupMessages(library(mclust))
args <- commandArgs(trailingOnly = TRUE)
Xtr <- as.matrix(read.csv(args[1], header = FALSE))
ytr <- as.factor(read.csv(args[2], header = FALSE)[, 1])
Xte <- as.matrix(read.csv(args[3], header = FALSE))
t0 <- proc.time()[["elapsed"]]
mod <- MclustDA(Xtr, ytr, modelType = "MclustDA", verbose = FALSE)
z <- predict(mod, Xte)$z
t1 <- proc.time()[["elapsed"]]
write.csv(z, args[4], row.names = FALSE)
G <- sapply(mod$models, function(m) m$G)
cat(sprintf("%.6f\n", t1 - t0), file = args[5])
cat(paste(names(G), G, sapply(mod$models, function(m) m$modelName), collapse = ";"),
    file = args[5], append = TRUE)
"""


# ------------------------------------------------------------------- data
def interleaved(seed: int):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for j, centre in enumerate([0.0, 2.0, 4.0, 6.0, 8.0, 10.0]):
        X.append(rng.normal([centre, 0.0], 0.5, size=(100, 2)))
        y.append(np.full(100, j % 2))
    return np.vstack(X), np.concatenate(y)


def mixture5d(seed: int, blobs: list | None = None):
    """The generated 5-D set of ``seed``; ``blobs``, if given, receives the true number
    of blobs of every class."""
    rng = np.random.default_rng(1000 + seed)
    X, y = [], []
    for k in range(3):
        M = rng.integers(2, 5)
        if blobs is not None:
            blobs.append(int(M))
        w = rng.dirichlet(np.full(M, 3.0))
        counts = rng.multinomial(600, w)
        for m in range(M):
            A = rng.normal(size=(5, 5)) * 0.6
            X.append(rng.multivariate_normal(rng.normal(0, 3, 5), A @ A.T + 0.2 * np.eye(5),
                                             size=counts[m]))
            y.append(np.full(counts[m], k))
    return np.vstack(X), np.concatenate(y)


def load(name: str, seed: int):
    """(X_train, X_test, y_train, y_test) of a stratified 70/30 split."""
    if name == "interleaved":
        X, y = interleaved(seed)
    elif name == "mixture5d":
        X, y = mixture5d(seed)
    elif name == "digits-pca":
        X, y = load_digits(return_X_y=True)
    elif name == "wine":
        X, y = load_wine(return_X_y=True)
    elif name == "breast cancer":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        raise ValueError(name)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
    if name == "digits-pca":
        pca = PCA(15, random_state=seed).fit(Xtr)
        Xtr, Xte = pca.transform(Xtr), pca.transform(Xte)
    return Xtr, Xte, ytr, yte


SETS = ["interleaved", "mixture5d", "digits-pca", "wine", "breast cancer"]


# ------------------------------------------------------------ classifiers
class PerClassGMM:
    """One scikit-learn GaussianMixture per class (BIC over 1..5 components)."""

    def __init__(self, seed: int):
        self.seed = seed

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.log_prior_ = np.log(np.array([np.mean(y == c) for c in self.classes_]))
        self.models_ = []
        for c in self.classes_:
            Xc = X[y == c]
            best = None
            for M in range(1, min(5, Xc.shape[0] - 1) + 1):
                gm = GaussianMixture(M, covariance_type="full", n_init=3,
                                     random_state=self.seed).fit(Xc)
                bic = gm.bic(Xc)
                if best is None or bic < best[0]:
                    best = (bic, gm)
            self.models_.append(best[1])
        return self

    def predict_proba(self, X):
        from scipy.special import logsumexp

        L = np.stack([m.score_samples(X) for m in self.models_], axis=1) + self.log_prior_
        return np.exp(L - logsumexp(L, axis=1, keepdims=True))


def run_mclust(Xtr, ytr, Xte):
    """(proba (n_test, K), seconds inside R, chosen models) or None without R."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        files = [tmp / f for f in ("xtr.csv", "ytr.csv", "xte.csv", "z.csv", "info.txt")]
        np.savetxt(files[0], Xtr, delimiter=",")
        np.savetxt(files[1], ytr, delimiter=",", fmt="%d")
        np.savetxt(files[2], Xte, delimiter=",")
        (tmp / "run.R").write_text(R_SCRIPT)
        out = subprocess.run(["Rscript", str(tmp / "run.R"), *map(str, files)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            if "mclust" in out.stderr and "no package" in out.stderr:
                return None
            raise RuntimeError(out.stderr[-2000:])
        z = np.loadtxt(files[3], delimiter=",", skiprows=1)
        info = files[4].read_text().splitlines()
        return z, float(info[0]), info[1] if len(info) > 1 else ""


def classifiers(seed: int, methods: list[str], stack: bool, others: bool = True) -> dict:
    out = {}
    if "map" in methods:
        out["MixtureDA"] = lambda: bg.MixtureDA(random_state=seed)
    if "posterior" in methods:
        out["MixtureDA posterior"] = lambda: bg.MixtureDA(predictive="posterior",
                                                          random_state=seed)
    if "gibbs" in methods:
        out["MixtureDA gibbs"] = lambda: bg.MixtureDA(method="gibbs", draws=200, tune=100,
                                                      chains=2, random_state=seed)
    if "mcmc" in methods:
        out["MixtureDA mcmc"] = lambda: bg.MixtureDA(method="mcmc", draws=200, tune=200,
                                                     chains=2, progressbar=False,
                                                     random_state=seed)
    if "stack-mixture" in methods:  # the stack's default members and a MixtureDA
        out["stack + MixtureDA"] = lambda: bg.StackedClassifier(
            [*bg.estimators.stacking.default_estimators(),
             ("mixture", bg.MixtureDA(random_state=seed))])
    if not others:
        return out
    out["QDA"] = lambda: bg.QDA()
    out["QDA conjugate"] = lambda: bg.QDA(method="conjugate", draws=200, chains=2,
                                          random_state=seed)
    if stack:
        out["stack"] = lambda: bg.StackedClassifier()
    out["sklearn GMM"] = lambda: PerClassGMM(seed)
    return out


def criteria(seed: int) -> dict:
    """MixtureDA with the number of components chosen by BIC (the default), fixed, or
    by a sparse Dirichlet prior on the weights (5 components, weight_alpha=0.5: EM
    empties the surplus ones)."""
    return {
        "BIC (auto)": lambda: bg.MixtureDA(random_state=seed),
        "M=1 (QDA)": lambda: bg.MixtureDA(n_components=1),
        "M=2": lambda: bg.MixtureDA(n_components=2, random_state=seed),
        "M=3": lambda: bg.MixtureDA(n_components=3, random_state=seed),
        "sparse Dirichlet": lambda: bg.MixtureDA(n_components=5, weight_alpha=0.5,
                                                 random_state=seed),
    }


def evaluate_criteria(name: str, seeds: int) -> dict:
    rows: dict[str, list] = {}
    for seed in range(seeds):
        Xtr, Xte, ytr, yte = load(name, seed)
        labels = np.unique(ytr)
        for label, make in criteria(seed).items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    clf = make().fit(Xtr, ytr)
                except ValueError as err:  # a class with fewer distinct rows than M
                    rows.setdefault(label, []).append((np.nan, np.nan, np.nan, str(err)[:40]))
                    continue
                proba = clf.predict_proba(Xte)
            seconds = time.perf_counter() - t0
            used = (clf.weights_ > 0).sum(axis=1)
            rows.setdefault(label, []).append(
                (log_loss(yte, proba, labels=labels),
                 accuracy_score(yte, labels[proba.argmax(1)]), seconds,
                 "G=" + ",".join(map(str, used))))
    return rows


def evaluate(name: str, seeds: int, methods: list[str], stack: bool, mclust: bool,
             others: bool = True) -> dict:
    rows: dict[str, list] = {}
    for seed in range(seeds):
        Xtr, Xte, ytr, yte = load(name, seed)
        labels = np.unique(ytr)
        for label, make in classifiers(seed, methods, stack, others).items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clf = make().fit(Xtr, ytr)
                proba = clf.predict_proba(Xte)
            seconds = time.perf_counter() - t0
            extra = ""
            if isinstance(clf, bg.MixtureDA):
                extra = "G=" + ",".join(map(str, clf.n_components_))
            rows.setdefault(label, []).append(
                (log_loss(yte, proba, labels=labels), accuracy_score(yte, labels[proba.argmax(1)]),
                 seconds, extra))
        if mclust and others:
            res = run_mclust(Xtr, ytr, Xte)
            if res is None:
                rows.setdefault("MclustDA", []).append((np.nan, np.nan, np.nan,
                                                        "R/mclust not installed"))
            else:
                z, seconds, chosen = res
                rows.setdefault("MclustDA", []).append(
                    (log_loss(yte, z, labels=labels), accuracy_score(yte, labels[z.argmax(1)]),
                     seconds, chosen))
    return rows


def timing(name: str, runs: int = 3) -> str:
    """Back to back on split 0: MixtureDA() fit + predict_proba (wall and process CPU)
    and MclustDA (wall inside R; CPU of the R child process, start-up and CSV I/O
    included), ``runs`` times each; medians."""
    import resource

    Xtr, Xte, ytr, _ = load(name, 0)
    res: dict[str, list] = {"MixtureDA": [], "MclustDA": []}
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bg.MixtureDA(random_state=0).fit(Xtr, ytr).predict_proba(Xte)
        res["MixtureDA"].append((time.perf_counter() - t0, time.process_time() - c0))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = run_mclust(Xtr, ytr, Xte)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if out is not None:
            res["MclustDA"].append((out[1], (after.ru_utime + after.ru_stime)
                                    - (before.ru_utime + before.ru_stime)))
    cells = []
    for values in res.values():
        arr = np.array(values) if values else np.full((1, 2), np.nan)
        cells.append(f"{np.median(arr[:, 0]):.2f} s / {np.median(arr[:, 1]):.2f} s")
    return f"| {name} | {cells[0]} | {cells[1]} |"


def method_timing(name: str, methods: list[str], runs: int = 3) -> str:
    """Back to back on split 0: fit + predict_proba of each MixtureDA method (the
    settings of :func:`classifiers`), ``runs`` times each in turn, wall and process CPU
    seconds; medians. The first "mcmc" fit compiles the NUTS program and the later ones
    reuse it (same shapes): that first fit is reported apart, as "(first ...)"."""
    Xtr, Xte, ytr, _ = load(name, 0)
    makers = classifiers(0, methods, stack=False, others=False)
    res: dict[str, list] = {label: [] for label in makers}
    for _ in range(runs):
        for label, make in makers.items():
            t0, c0 = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                make().fit(Xtr, ytr).predict_proba(Xte)
            res[label].append((time.perf_counter() - t0, time.process_time() - c0))
    cells = []
    for values in res.values():
        arr = np.array(values)
        cell = f"{np.median(arr[:, 0]):.2f} s / {np.median(arr[:, 1]):.2f} s"
        if len(values) > 1 and arr[0, 1] > 2 * np.median(arr[1:, 1]):  # compiled at first
            cell = (f"{np.median(arr[1:, 0]):.2f} s / {np.median(arr[1:, 1]):.2f} s "
                    f"(first {arr[0, 0]:.1f} s / {arr[0, 1]:.1f} s)")
        cells.append(cell)
    return f"| {name} | " + " | ".join(cells) + " |"


def table(name: str, rows: dict, seeds: int) -> str:
    lines = [f"### {name} ({seeds} splits)", "",
             "| classifier | log loss | per split | accuracy | seconds | chosen (first split) |",
             "|---|---|---|---|---|---|"]
    for label, values in rows.items():
        arr = np.array([v[:3] for v in values], dtype=float)
        mean, sd = np.nanmean(arr, axis=0), np.nanstd(arr, axis=0)
        each = " / ".join(f"{v:.4f}" for v in arr[:, 0])
        lines.append(f"| {label} | {mean[0]:.4f} ± {sd[0]:.4f} | {each} "
                     f"| {mean[1]:.3f} ± {sd[1]:.3f} "
                     f"| {mean[2]:.2f} ± {sd[2]:.2f} | {values[0][3]} |")
    return "\n".join(lines) + "\n"


#: the settings --causes compares with the defaults on mixture5d
CAUSES = {"default": {}, "n_init=10": {"n_init": 10}, "true M given": "true",
          'component_prior="mclust"': {"component_prior": "mclust"},
          "tol=1e-8, max_iter=500": {"tol": 1e-8, "max_iter": 500}}


def causes(seeds: int) -> str:
    """Held-out log loss of ``bg.MixtureDA`` (plug-in) on each split of mixture5d at its
    defaults and with the settings of :data:`CAUSES` (starts, the true number of
    components, mclust's component prior, the EM tolerance): what could make it differ
    from MclustDA there."""
    lines = ["| split | true M | chosen M | " + " | ".join(CAUSES) + " |",
             "|---|---|---|" + "---|" * len(CAUSES)]
    for seed in range(seeds):
        blobs: list = []
        mixture5d(seed, blobs)
        Xtr, Xte, ytr, yte = load("mixture5d", seed)
        cells, chosen = [], ""
        for name, settings in CAUSES.items():
            kw = {"n_components": blobs} if settings == "true" else settings
            fit = bg.MixtureDA(random_state=0, **kw).fit(Xtr, ytr)
            cells.append(f"{log_loss(yte, fit.predict_proba(Xte)):.4f}")
            if name == "default":
                chosen = ",".join(map(str, fit.n_components_))
        lines.append(f"| {seed} | {','.join(map(str, blobs))} | {chosen} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--no-gibbs", action="store_true")
    parser.add_argument("--methods", default=None,
                        help="MixtureDA methods to run, comma-separated (map, posterior: "
                             "predictive='posterior', gibbs, mcmc, "
                             "stack-mixture: the default stack with a MixtureDA member; "
                             "default map,gibbs); with --timing: time these back to back")
    parser.add_argument("--no-stack", action="store_true")
    parser.add_argument("--no-mclust", action="store_true")
    parser.add_argument("--only-mixture", action="store_true",
                        help="run MixtureDA (and its Gibbs fit) only")
    parser.add_argument("--timing", action="store_true",
                        help="back-to-back wall / CPU medians of MixtureDA and MclustDA")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--criteria", action="store_true",
                        help="compare how MixtureDA chooses the number of components instead")
    parser.add_argument("--causes", action="store_true",
                        help="mixture5d: the default against more starts, the true number "
                             "of components, mclust's prior and a tighter tolerance")
    args = parser.parse_args()
    if args.causes:
        print(causes(args.seeds), flush=True)
        return
    names = [n for n in SETS if not args.only or any(o in n for o in args.only)]
    out = []
    if args.timing and args.methods:
        methods = args.methods.split(",")
        print("| data | " + " | ".join(f"{m} wall / CPU" for m in methods)
              + " |\n|---|" + "---|" * len(methods))
        for name in names:
            print(method_timing(name, methods), flush=True)
        return
    if args.timing:
        print("| data | MixtureDA wall / CPU | MclustDA wall / CPU |\n|---|---|---|")
        for name in names:
            print(timing(name), flush=True)
        return
    for name in names:
        if args.criteria:
            text = table(f"{name}: choosing the components", evaluate_criteria(name, args.seeds),
                         args.seeds)
        else:
            methods = [m for m in (args.methods or "map,gibbs").split(",")
                       if not (args.no_gibbs and m == "gibbs")]
            text = table(name, evaluate(name, args.seeds, methods, not args.no_stack,
                                        not args.no_mclust, not args.only_mixture),
                         args.seeds)
        print(text, flush=True)
        out.append(text)
    if args.markdown:
        args.markdown.write_text("\n".join(out))


if __name__ == "__main__":
    main()
