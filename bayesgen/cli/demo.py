"""``python -m bayesgen demo``: bayesgen's methods against scikit-learn, on held-out splits.

:data:`DEMO` (or another :func:`plan`) lists (data set, bayesgen classifiers,
scikit-learn peers); each :class:`Classifier` is (name, estimator factory, methods),
each peer a :class:`~bayesgen.cli.peers.Peer`. Every model is fitted on ``n_splits``
stratified splits (seeds ``seed, seed + 1, ...``) and scored on the held-out rows:
accuracy, log loss, :func:`expected_calibration_error` and the wall time of ``fit`` +
``predict_proba``; a fit that raises ``ValueError`` becomes a row with a note.
:func:`summarise` averages the splits, :func:`headlines` states the best of each side.
NUTS samples GaussianNB on wine only by default (:data:`NUTS_SCOPES`: a first NUTS fit
compiles for about 10 s on 2 cores); ``nuts="all"`` also samples LDA and QDA.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss
from threadpoolctl import threadpool_limits

import bayesgen as bg
from bayesgen.cli import datasets
from bayesgen.cli.datasets import Split
from bayesgen.cli.figures import log_loss_figure, regions, reliability_figure, save
from bayesgen.cli.peers import COUNT_PEERS, GAUSSIAN_PEERS, Peer
from bayesgen.cli.report import format_table, headlines, summarise
from bayesgen.utils.progress import ProgressBar


class Classifier(NamedTuple):
    """One row group of the table: a name, ``factory(method, seed)`` and its methods."""

    name: str
    factory: Callable[[str, int], Any]
    methods: tuple[str, ...]


#: methods the demo compares (closed-form point estimates and the exact posterior)
METHODS = ("mle", "map", "conjugate")
#: posterior size of the demo's fits: ``chains`` x ``draws`` (the conjugate posterior
#: predictive is exact whatever the number of draws; NUTS needs enough for its checks)
POSTERIOR = {"chains": 4, "draws": 250}
#: NUTS: the defaults, 4 chains x 1000 draws after 1000 tuning steps; the demo draws its
#: own progress bar, so the sampler draws none
MCMC: dict = {"progressbar": False}
#: number of stratified splits by default (``--splits 5`` gives the spreads)
N_SPLITS = 1


def _posterior(method: str) -> dict:
    return MCMC if method == "mcmc" else POSTERIOR if method == "conjugate" else {}


def _classifier(name: str, cls: type, **params: Any) -> Classifier:
    """``cls(method=m, random_state=s, **params)`` with the demo's posterior size."""
    return Classifier(name, lambda m, s: cls(method=m, random_state=s, **params,
                                             **_posterior(m)), METHODS)


LDA = _classifier("LDA", bg.LDA)
QDA = _classifier("QDA", bg.QDA)
GAUSSIAN_NB = _classifier("GaussianNB", bg.GaussianNB)
GAUSSIAN_MODELS: list[Classifier] = [LDA, QDA, GAUSSIAN_NB]
#: LDA (with and without evidence-shrunk class means), QDA, QDA with the isotropic
#: target, QDA with spherical class covariances and the class frequencies, posterior
#: predictives stacked by their exact leave-one-out class probabilities (its
#: members are conjugate fits)
STACKED = Classifier("StackedClassifier", lambda m, s: bg.StackedClassifier(), ("conjugate",))
GAUSSIAN: list[Classifier] = [*GAUSSIAN_MODELS, STACKED]


def _with_nuts(entry: Classifier) -> Classifier:
    return Classifier(entry.name, entry.factory, (*entry.methods, "mcmc"))


#: the same with PyMC NUTS as well (seconds per fit; the first compiles JAX code)
GAUSSIAN_MCMC: list[Classifier] = [*map(_with_nuts, GAUSSIAN_MODELS), STACKED]
#: NUTS for GaussianNB only: its program compiles fastest and it samples in about a
#: second (LDA's and QDA's NUTS fits cost 5-20 s each on 2 cores)
GAUSSIAN_NB_MCMC: list[Classifier] = [LDA, QDA, _with_nuts(GAUSSIAN_NB), STACKED]

DISCRETE: list[Classifier] = [_classifier("MultinomialNB", bg.MultinomialNB),
                               _classifier("BernoulliNB(binarize=7)", bg.BernoulliNB,
                                           binarize=7.0)]

#: which models NUTS samples (``--nuts``): on wine only, with the library's default
#: 4 chains x (1000 tuning steps + 1000 draws)
NUTS_SCOPES = {
    "one": "NUTS (mcmc) samples GaussianNB on wine only",
    "all": "NUTS (mcmc) samples LDA, QDA and GaussianNB on wine",
    "none": "no NUTS fit",
}


def plan(nuts: str = "one") -> list[tuple[Callable[[int], Split], list[Classifier],
                                           list[Peer]]]:
    """The demo's (data set loader taking the seed, bayesgen classifiers, scikit-learn
    peers) triples, with NUTS on wine for the models of ``nuts`` (a key of
    :data:`NUTS_SCOPES`)."""
    if nuts not in NUTS_SCOPES:
        raise ValueError(f"nuts must be one of {tuple(NUTS_SCOPES)}; got {nuts!r}.")
    on_wine = {"one": GAUSSIAN_NB_MCMC, "all": GAUSSIAN_MCMC, "none": GAUSSIAN}[nuts]
    return [
        (datasets.breast_cancer, GAUSSIAN, GAUSSIAN_PEERS),
        (datasets.wine, on_wine, GAUSSIAN_PEERS),
        (datasets.breast_cancer_small, GAUSSIAN, GAUSSIAN_PEERS),
        (datasets.digits, DISCRETE, COUNT_PEERS),
    ]


#: The default demo: every classifier and peer on the four data sets, NUTS for
#: GaussianNB on wine.
DEMO = plan("one")

#: columns of the per-split table (``results.csv``; ``proba`` is kept in memory only)
COLUMNS = ["data", "classifier", "method", "split", "accuracy", "log_loss", "ece",
           "fit_predict_ms", "convergence", "note", "proba"]


def expected_calibration_error(y_true: Any, proba: np.ndarray, classes: Any, n_bins: int = 10):
    """Top-label expected calibration error with equal-width confidence bins.

    Each row's confidence is its largest predicted probability c_n = max_k p_nk, and
    it is correct when that class is the true one. Rows are grouped into ``n_bins``
    bins of equal width on (0, 1] (bin b holds (b/B, (b+1)/B]), and

        ECE = sum_b (|B_b| / n) * |accuracy(B_b) - mean confidence(B_b)|,

    the average gap between confidence and accuracy (Naeini et al. 2015; Guo et al.
    2017). 0 is perfect calibration; empty bins contribute nothing.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels.
    proba : ndarray of shape (n, K)
        Predicted probabilities, columns in the order of ``classes``.
    classes : array-like of shape (K,)
        Labels of the columns of ``proba``.
    n_bins : int, default=10

    Returns
    -------
    float in [0, 1]
    """
    proba = np.asarray(proba, dtype=np.float64)
    top = np.argmax(proba, axis=1)
    confidence = proba[np.arange(proba.shape[0]), top]
    correct = np.asarray(classes)[top] == np.asarray(y_true)
    bins = np.clip(np.ceil(confidence * n_bins).astype(int) - 1, 0, n_bins - 1)
    gap = np.bincount(bins, weights=correct - confidence, minlength=n_bins)
    return float(np.abs(gap).sum() / proba.shape[0])


def _fit(estimator: Any, classifier: str, method: str, data: Split, seed: int) -> dict:
    """Fit and score one model (a bayesgen method or a scikit-learn peer) on one split:
    the wall time of fit + predict_proba and the scores of its held-out probabilities;
    a ValueError becomes a note."""
    row = {"data": data.name, "classifier": classifier, "method": method, "split": seed}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            proba = estimator.fit(data.X_train, data.y_train).predict_proba(data.X_test)
    except ValueError as err:
        n_k = np.unique(data.y_train, return_counts=True)[1].min()
        d = data.X_train.shape[1]
        label = row["method"].upper() if row["method"] in (*METHODS, "mcmc") else "fit"
        reason = "singular (n_k <= d)" if n_k <= d else str(err).strip().split(". ")[0]
        return {**row, "note": f"{label}: {reason}"}
    seconds = time.perf_counter() - start
    classes = estimator.classes_
    return {
        **row,
        "accuracy": float(np.mean(classes[np.argmax(proba, axis=1)] == data.y_test)),
        "log_loss": float(log_loss(data.y_test, proba, labels=classes)),
        "ece": expected_calibration_error(data.y_test, proba, classes),
        "fit_predict_ms": 1000 * seconds,
        "convergence": _convergence(estimator),
        "note": "; ".join(sorted({_short_warning(w.message) for w in caught})),
        "proba": proba,
    }


def _convergence(estimator) -> str:
    """'exact' for i.i.d. conjugate draws; max R-hat and divergences for NUTS; else ''."""
    method = getattr(estimator, "method_", None)  # peers have none
    if method == "conjugate":
        return "exact draws"
    if method != "mcmc":
        return ""
    from bayesgen.inference.mcmc import RHAT_MAX

    table = estimator.summary(round_to="none")  # the unrounded R-hat of the warning
    n_div = int(estimator.idata_.sample_stats["diverging"].sum())
    rhat, ess = table["r_hat"].max(), table["ess_bulk"].min()
    flag = "ok" if rhat <= RHAT_MAX and n_div == 0 else "CHECK"
    return f"R-hat {rhat:.3f}, {n_div} div, min ESS {ess:.0f} {flag}"


def _short_warning(message: Warning | str) -> str:
    """'warning: ' + the first clause of a warning, without the estimator-name prefix."""
    text = str(message).split(" (")[0].split(". ")[0]
    head, sep, tail = text.partition(": ")
    return "warning: " + (tail if sep and " " not in head else text)


def warm_up(nuts: bool = False) -> float:
    """Import what the fits use and run one small fit of every kind; return the seconds.

    The first fit in a process pays one-time costs (importing scikit-learn, PyMC, ArviZ
    and, with ``nuts``, JAX and numpyro; first-call set-up) that belong to no model.
    They are spent here, so that the timed rows hold fit + predict_proba only. The first
    NUTS fit of each model still compiles its sampler: with several splits the demo
    reports that separately (:func:`compile_seconds`); with one, the row's note says
    that its time includes it.
    """
    start = time.perf_counter()
    from sklearn.datasets import load_iris

    import bayesgen.inference.mcmc  # noqa: F401  (PyMC, ArviZ)

    if nuts:  # what the first NUTS fit would import (JAX's settings left as they are)
        import numpyro.infer.hmc  # noqa: F401

        from bayesgen.inference import jax_scope

        jax_scope.imports()

    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("ignore")
        for method in METHODS:
            bg.QDA(method=method, random_state=0, **_posterior(method)).fit(X, y)
            bg.MultinomialNB(method=method, random_state=0,
                             **_posterior(method)).fit(X.round(), y)
        for peer in (*GAUSSIAN_PEERS, *COUNT_PEERS):
            peer.factory(0).fit(X.round(), y).predict_proba(X[:3])
    return time.perf_counter() - start


def compile_seconds(table: pd.DataFrame) -> dict[str, float]:
    """For each NUTS model, the first split's time above the median of the others (s).

    The first ``method="mcmc"`` fit of a model shape in a process compiles its JAX
    sampler; later fits of the same shape reuse it.
    """
    out = {}
    for (name, clf), rows in table[table["method"] == "mcmc"].groupby(
            ["data", "classifier"], sort=False):
        times = rows.sort_values("split")["fit_predict_ms"].to_numpy() / 1000
        if times.size > 1 and np.isfinite(times).all():
            out[f"{clf} on {name}"] = float(times[0] - np.median(times[1:]))
    return out


def _n_models(demo: list) -> int:
    return sum(sum(len(c.methods) for c in cs) + len(ps) for _, cs, ps in demo)


def _label(data: str, name: str, method: str) -> str:
    """The progress bar's label of one fit."""
    if method == "mcmc":
        return f"{data}: {name} mcmc (NUTS; a first fit compiles its program)"
    return f"{data}: {name} {method}"


def run(seed: int = 0, n_splits: int = N_SPLITS, demo: list | None = None,
        bar: ProgressBar | None = None) -> pd.DataFrame:
    """Fit every model of ``demo`` (default :data:`DEMO`) on ``n_splits`` splits.

    Every model runs with one BLAS thread (``threadpoolctl``), as bayesgen's point fits
    do anyway: on a machine whose cores are busy, OpenBLAS's waiting threads otherwise
    slow small products down many times over, and the times would measure the load
    rather than the model. ``bar``, when given, names each fit before it starts and
    counts it when done.

    Returns
    -------
    DataFrame, one row per (data set, classifier, method, split), with the columns of
    :data:`COLUMNS`: ``fit_predict_ms`` is the wall time of ``fit`` + ``predict_proba``
    in milliseconds, ``proba`` the held-out probabilities; failed fits have NaN scores
    and the reason in ``note``. With one split, a NUTS row's note says that its time
    includes compiling the sampler (with more, :func:`compile_seconds` takes it out).
    """
    rows = []

    def timed(label: str, estimator: Any, classifier: str, method: str, data: Split,
              split: int) -> dict:
        if bar is not None:
            bar.start(label)
        row = _fit(estimator, classifier, method, data, split)
        if bar is not None:
            bar.advance()
        return row

    with threadpool_limits(limits=1, user_api="blas"):
        for load, classifiers, peers in DEMO if demo is None else demo:
            for split in range(seed, seed + n_splits):
                data = load(split)
                for clf in classifiers:
                    for method in clf.methods:
                        rows.append(timed(_label(data.name, clf.name, method),
                                          clf.factory(method, split), clf.name, method,
                                          data, split))
                for peer in peers:
                    rows.append(timed(_label(data.name, f"scikit-learn {peer.classifier}",
                                             peer.method.removeprefix("sklearn ")),
                                      peer.factory(split), peer.classifier, peer.method,
                                      data, split))
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["note"] = table["note"].fillna("")
    table["convergence"] = table["convergence"].fillna("")
    if n_splits == 1:
        nuts = (table["method"] == "mcmc") & table["accuracy"].notna()
        table.loc[nuts, "note"] = [
            "; ".join(filter(None, [COMPILE_NOTE, note]))
            for note in table.loc[nuts, "note"]]
    return table


#: the note of a NUTS row when its time includes compiling the sampler (one split)
COMPILE_NOTE = "time includes compiling NUTS (first fit of this shape)"


def main(out: str | Path = "bayesgen-demo", seed: int = 0, n_splits: int = N_SPLITS,
         nuts: str = "one", progress: bool | str = "auto") -> pd.DataFrame:
    """Run the demo, print the table and its headlines, and write ``results.csv``,
    ``summary.csv``, ``log_loss.png``, ``reliability.png`` and ``decision_regions.png``
    to ``out``. Returns the per-split table.

    ``nuts``: which models NUTS samples (a key of :data:`NUTS_SCOPES`); ``progress``:
    the progress bar on standard error (True, False or "auto": in a terminal or a
    notebook only; :class:`bayesgen.utils.progress.ProgressBar`).
    """
    if isinstance(n_splits, bool) or not isinstance(n_splits, int) or n_splits < 1:
        raise ValueError(f"n_splits must be at least 1; got {n_splits}.")
    demo = plan(nuts)
    out = Path(out)
    start = time.perf_counter()
    n_models = _n_models(demo)
    print(f"fitting {n_models} models on {n_splits} split(s) each; "
          f"{NUTS_SCOPES[nuts]}", flush=True)
    figures = ["log_loss.png", "reliability.png", "decision_regions.png"]
    with ProgressBar(1 + n_models * n_splits + len(figures), show=progress) as bar:
        bar.start("start-up: imports (scikit-learn, PyMC"
                  + (", JAX" if nuts != "none" else "") + ") and first fits")
        setup = warm_up(nuts != "none")
        bar.advance()
        table = run(seed, n_splits, demo, bar)
        summary = summarise(table)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, draw in zip(figures, [lambda p: save(log_loss_figure(summary), p),
                                        lambda p: save(reliability_figure(table), p),
                                        lambda p: regions(seed, p)], strict=True):
            bar.start(f"figure {name}")
            written.append(draw(out / name))
            bar.advance()
    splits = f"seeds {seed}-{seed + n_splits - 1}" if n_splits > 1 else f"seed {seed}"
    print(f"\nbayesgen {bg.__version__} demo: held-out scores over {n_splits} stratified "
          f"70/30 split(s) ({splits})"
          + (", mean (standard deviation)" if n_splits > 1 else
             "; --splits 5 gives means and standard deviations over five"))
    print(f"{NUTS_SCOPES[nuts]}"
          + (" (4 chains x (1000 tuning steps + 1000 draws)); --nuts all samples LDA and "
             "QDA too" if nuts == "one" else
             " (4 chains x (1000 tuning steps + 1000 draws))" if nuts == "all" else
             "; --nuts one or all adds NUTS fits on wine"))
    print("ECE = expected calibration error, 10 equal-width bins; time = median wall time "
          "of fit + predict_proba, one BLAS thread\n")
    print(format_table(summary))
    print()
    for line in headlines(summary, table):
        print(line)
    compiled = compile_seconds(table)
    print(f"\nnot in the times above: start-up (imports, first fits) {setup:.1f} s"
          + ("".join(f"; compiling NUTS for {k} {v:.1f} s" for k, v in compiled.items())
             if compiled else ""))
    table.drop(columns="proba").to_csv(out / "results.csv", index=False)
    summary.to_csv(out / "summary.csv", index=False)
    print()
    for path in written:
        print(f"wrote {path}")
    print(f"wrote {out / 'results.csv'} (one row per split) and {out / 'summary.csv'}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return table
