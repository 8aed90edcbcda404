"""The demo's figures (``log_loss.png``, ``reliability.png``, ``decision_regions.png``);
:mod:`bayesgen.cli.demo` re-exports :func:`plot`, :func:`reliability` and :func:`regions`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_wine

import bayesgen as bg


def plot(table: pd.DataFrame, path: Path) -> Path:
    """Write :func:`log_loss_figure` of ``table`` to ``path`` (PNG)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    log_loss_figure(table).savefig(path, dpi=100)
    return path


def log_loss_figure(table: pd.DataFrame):
    """Bar chart of test log loss by classifier and method, one panel per data set.

    Uses matplotlib's Agg canvas directly (no pyplot, no display needed). Failed
    fits are marked with an 'x' and their note at the bottom of the panel. One legend
    for the figure names every method of the table (a method run on some data sets
    only, such as ``"mcmc"``, included), each with one colour in all panels.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    datasets = list(dict.fromkeys(table["data"]))
    all_methods = list(dict.fromkeys(table["method"]))  # one colour per method, all panels
    fig = Figure(figsize=(4.2 * len(datasets), 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(datasets), squeeze=False)[0]
    for ax, name in zip(axes, datasets, strict=True):
        part = table[table["data"] == name]
        names = list(dict.fromkeys(part["classifier"]))
        methods = list(dict.fromkeys(part["method"]))
        width = 0.8 / len(methods)
        for i, method in enumerate(methods):
            rows = part[part["method"] == method].set_index("classifier").reindex(names)
            x = np.arange(len(names)) + (i - (len(methods) - 1) / 2) * width
            heights = rows["log_loss"].to_numpy(dtype=float)
            ok = np.isfinite(heights)
            color = f"C{all_methods.index(method)}"
            ax.bar(x[ok], heights[ok], width, color=color)
            if not ok.all():
                ax.plot(x[~ok], 0 * x[~ok], "x", color=color, ms=10, mew=2, clip_on=False)
            for xi, note in zip(x[~ok], rows["note"].to_numpy()[~ok], strict=True):
                ax.annotate(
                    note,
                    (xi, 0),
                    xytext=(0, 12),
                    textcoords="offset points",
                    rotation=90,
                    fontsize=7,
                    ha="center",
                    va="bottom",
                ).set_in_layout(False)
        ax.set_xticks(np.arange(len(names)), [n.split("(")[0] for n in names])
        ax.set_title(name, fontsize=10)
        ax.set_ylabel("test log loss (lower is better)")
    # one legend for the figure: every method of every panel (mcmc runs on some only)
    handles = [Patch(color=f"C{i}", label=m) for i, m in enumerate(all_methods)]
    fig.legend(handles=handles, title="method", fontsize=8, loc="outside right upper")
    fig.suptitle("bayesgen: MLE vs MAP vs posterior predictive, held-out log loss")
    return fig


def reliability(table: pd.DataFrame, seed: int, path: Path) -> Path:
    """Reliability diagram of LDA and QDA on the small breast cancer set (``bayesgen.plots``).

    With 20 training rows per class and 30 features the plug-in MAP probabilities are
    over-confident (forecasts pile up at 0 and 1 and miss), while the posterior predictive
    (``"conjugate"``) spreads them out and follows the diagonal more closely: the
    picture behind the log-loss gap of the table. QDA's MLE fails there (singular).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayesgen.cli.datasets import breast_cancer_small
    from bayesgen.plots import reliability_diagram

    data = breast_cancer_small(seed)
    rows = table[(table["data"] == data.name) & (table["classifier"] == "QDA")]
    proba = {
        f"{r['classifier']} {r['method']}": r["proba"]
        for r in rows.to_dict("records")
        if isinstance(r["proba"], np.ndarray) and r["method"] in ("map", "conjugate")
    }
    fig, ax = plt.subplots(figsize=(7.0, 5.0), layout="constrained")
    reliability_diagram(data.y_test, proba, n_bins=5, ax=ax)
    ax.set_title(f"{data.name} (n_k < d): calibration of held-out probabilities")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def regions(seed: int, path: Path) -> Path:
    """Decision regions of QDA's exact posterior on wine's first two features, shaded by
    the uncertainty of the class probability, with the MLE and MAP boundaries."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayesgen.plots import decision_regions

    X, y = load_wine(return_X_y=True)
    X = X[:, :2]
    post = bg.QDA(method="conjugate", draws=250, random_state=seed).fit(X, y)
    compare = {f"QDA {m.upper()}": bg.QDA(method=m).fit(X, y) for m in ("mle", "map")}
    ax = decision_regions(post, X, y, compare=compare, resolution=120)
    ax.set(xlabel="alcohol", ylabel="malic acid")
    ax.figure.savefig(path, dpi=100)
    plt.close(ax.figure)
    return path
