"""The demo's figures (``log_loss.png``, ``reliability.png``, ``decision_regions.png``).

Every figure names its data set and what its points are, and draws on scales a reader
can compare: one shared log axis for the log losses of all data sets, a linear count
axis for the forecasts behind the reliability curves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.calibration import calibration_curve
from sklearn.datasets import load_wine

import bayesgen as bg
from bayesgen.cli.datasets import SMALL_N_PER_CLASS, wine

#: log-loss axis of ``log_loss.png``: values below FLOOR are drawn at it and labeled
FLOOR = 1e-3
#: colours of the peers' bars and curves (the methods take C0, C1, ...)
PEER_COLOR = "0.35"
#: ``decision_regions.png``: grid points per axis and the posterior draws (chains x
#: draws) behind the 94% HDI width of the shading, computed at every grid point
REGION_RESOLUTION = 100
REGION_CHAINS, REGION_DRAWS = 2, 250


def _agg_figure(**kwargs):
    """A matplotlib Figure on the Agg canvas (no pyplot, no display)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(layout="constrained", **kwargs)
    FigureCanvasAgg(fig)
    return fig


def save(fig, path: Path) -> Path:
    """Write the Figure ``fig`` to ``path`` (PNG); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    return path


def log_loss_figure(summary: pd.DataFrame):
    """Bar chart of held-out log loss by classifier and method, one panel per data set.

    ``summary`` has one row per (data, classifier, method) with the mean ``log_loss``
    and, optionally, its standard deviation over splits ``log_loss_sd`` (drawn as an
    error bar) and a ``note``. All panels share one logarithmic y axis; every bar is
    labeled with its value, and a value below :data:`FLOOR` (a near-perfect fit) is
    drawn at the floor and labeled ``<0.001`` rather than hidden. Failed fits are marked
    with an 'x' and their note. Each method has one colour in all panels (one legend for
    the figure, naming every bayesgen method of the table); scikit-learn peers (methods
    starting with "sklearn") are grey and hatched, with one legend entry.
    """
    from matplotlib.patches import Patch

    from bayesgen.cli.report import is_peer

    datasets = list(dict.fromkeys(summary["data"]))
    ours = [m for m in dict.fromkeys(summary["method"]) if not is_peer(m)]
    fig = _agg_figure(figsize=(4.6 * len(datasets), 4.8))
    axes = fig.subplots(1, len(datasets), squeeze=False, sharey=True)[0]
    values = summary["log_loss"].to_numpy(dtype=float)
    spread = summary.get("log_loss_sd", pd.Series(np.nan, index=summary.index))
    tops = values + np.nan_to_num(spread.to_numpy(dtype=float))
    top = np.nanmax(tops) if np.isfinite(tops).any() else 1.0

    def color(method: str) -> str:
        return PEER_COLOR if is_peer(method) else f"C{ours.index(method)}"

    def style(method: str) -> dict:
        extra = {"hatch": "//", "edgecolor": "white"} if is_peer(method) else {}
        return {"facecolor": color(method), **extra}

    for ax, name in zip(axes, datasets, strict=True):
        part = summary[summary["data"] == name]
        names = list(dict.fromkeys(part["classifier"]))
        width = 0.8 / part.groupby("classifier").size().max()
        for j, clf in enumerate(names):
            rows = part[part["classifier"] == clf].to_dict("records")
            for i, row in enumerate(rows):
                x = j + (i - (len(rows) - 1) / 2) * width
                value = float(row["log_loss"])
                if not np.isfinite(value):
                    ax.plot([x], [FLOOR], "x", color=color(row["method"]), ms=9, mew=2,
                            clip_on=False)
                    ax.annotate(row.get("note", "") or "failed", (x, FLOOR), xytext=(0, 10),
                                textcoords="offset points", rotation=90, fontsize=7,
                                ha="center", va="bottom").set_in_layout(False)
                    continue
                shown = max(value, FLOOR)
                ax.bar([x], [shown - FLOOR], width, bottom=FLOOR, **style(row["method"]))
                sd = float(row.get("log_loss_sd", np.nan))
                upper = shown
                if np.isfinite(sd) and sd > 0:
                    low = min(sd, shown - FLOOR * 1.0001)
                    ax.errorbar([x], [shown], yerr=[[low], [sd]], color="black", lw=0.8,
                                capsize=2)
                    upper = shown + sd
                label = f"{value:.3f}" if value >= FLOOR else "<0.001"
                ax.annotate(label, (x, upper), xytext=(0, 2), textcoords="offset points",
                            rotation=90, fontsize=6.5, ha="center", va="bottom")
        ax.set_xticks(np.arange(len(names)),
                      [n.split("(")[0].replace("LogisticRegression", "logistic\nregression")
                       for n in names], fontsize=8)
        ax.set_xlim(-0.6, len(names) - 0.4)
        ax.set_title(name, fontsize=10)
        ax.set_yscale("log")
        ax.set_ylim(FLOOR, top * 6)
        ax.grid(axis="y", which="major", alpha=0.3)
    axes[0].set_ylabel("held-out log loss (log scale; lower is better)")
    handles = [Patch(label=m, **style(m)) for m in ours]
    if summary["method"].map(is_peer).any():
        handles.append(Patch(label="scikit-learn peer\n(see the table)", **style("sklearn")))
    fig.legend(handles=handles, title="method", fontsize=8, loc="outside right upper")
    n_splits = int(summary["splits"].max()) if "splits" in summary else 0
    fig.suptitle("bayesgen's methods and scikit-learn's peers: held-out log loss"
                 + (", one split" if n_splits == 1 else
                    ", mean and standard deviation over the splits"))
    return fig


def reliability_figure(table: pd.DataFrame, n_bins: int = 8):
    """Reliability diagram of the small breast cancer set, pooled over the demo's splits.

    Held-out P(benign) of LDA's MAP plug-in and posterior predictive, QDA's posterior
    predictive and scikit-learn's shrinkage LDA and tuned logistic regression, in
    ``n_bins`` bins of equal count (``sklearn.calibration.calibration_curve(...,
    strategy="quantile")``), so that every point averages the same number of forecasts
    and no bin of one or two forecasts pulls a curve to 0 or 1. Below: how many
    forecasts fall at each predicted probability (linear count axis).
    """
    from bayesgen.cli.report import SMALL

    wanted = [("LDA", "map"), ("LDA", "conjugate"), ("QDA", "conjugate"),
              ("LDA", "sklearn shrinkage"), ("LogisticRegression", "sklearn tuned by CV")]
    part = table[(table["data"] == SMALL) & table["proba"].map(
        lambda p: isinstance(p, np.ndarray))]
    fig = _agg_figure(figsize=(7.5, 6.4))
    top, bottom = fig.subplots(2, 1, height_ratios=[3, 1.3], sharex=True)
    top.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfectly calibrated")
    edges = np.linspace(0, 1, 21)
    n_rows = n_splits = 0
    for i, (clf, method) in enumerate(wanted):
        rows = part[(part["classifier"] == clf) & (part["method"] == method)]
        if rows.empty:
            continue
        splits = list(rows["split"])
        y = np.concatenate([_y_test(s) for s in splits])
        p = np.concatenate([proba[:, 1] for proba in rows["proba"]])
        n_rows, n_splits = y.size, len(splits)
        frac, mean = calibration_curve(y == 1, p, n_bins=n_bins, strategy="quantile")
        color = PEER_COLOR if method.startswith("sklearn") else f"C{i}"
        ls = ":" if clf == "LogisticRegression" else "-"
        label = (f"scikit-learn {clf} ({method.removeprefix('sklearn ')})"
                 if method.startswith("sklearn") else f"bayesgen {clf} {method}")
        top.plot(mean, frac, marker="o", ms=4, color=color, ls=ls, label=label)
        bottom.stairs(np.histogram(p, edges)[0], edges, color=color, ls=ls, lw=1.4)
    top.set(xlim=(0, 1), ylim=(-0.02, 1.02), ylabel="observed frequency of benign")
    top.set_title(f"breast cancer, {SMALL_N_PER_CLASS} training rows per class (30 features): "
                  f"calibration on the held-out rows\n{n_rows} forecasts pooled over "
                  f"{n_splits} split(s), {n_bins} bins of equal count", fontsize=10)
    top.legend(loc="upper left", fontsize=8, framealpha=0.9)
    bottom.set(xlabel="predicted probability of benign", ylabel="forecasts")
    bottom.set_ylim(0, None)
    return fig


def _y_test(seed: int) -> np.ndarray:
    from bayesgen.cli.datasets import breast_cancer_small

    return breast_cancer_small(seed).y_test


def regions(seed: int, path: Path) -> Path:
    """Decision regions of QDA's exact posterior on wine's first two features (alcohol,
    malic acid), fitted on the training rows of split ``seed`` and drawn with its
    held-out rows, shaded by the uncertainty of the class probability, with the MLE and
    MAP boundaries."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayesgen.plots import decision_regions

    data = wine(seed)
    names = load_wine().feature_names[:2]
    X_train, X_test = data.X_train[:, :2], data.X_test[:, :2]
    post = bg.QDA(method="conjugate", chains=REGION_CHAINS, draws=REGION_DRAWS,
                  random_state=seed).fit(X_train, data.y_train)
    compare = {f"QDA {m.upper()}": bg.QDA(method=m).fit(X_train, data.y_train)
               for m in ("mle", "map")}
    fig, ax = plt.subplots(figsize=(7.5, 5.6), layout="constrained")
    decision_regions(post, X_test, data.y_test, compare=compare,
                     resolution=REGION_RESOLUTION, ax=ax)
    ax.set(xlabel=f"{names[0]} (feature 1 of 13)", ylabel=f"{names[1]} (feature 2 of 13)")
    ax.set_title(f"wine, 2 of its 13 features: QDA posterior fitted on the "
                 f"{len(X_train)} training rows (split {seed});\npoints: the {len(X_test)} "
                 "held-out rows, coloured by their true class", fontsize=10)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
