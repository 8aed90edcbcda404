"""Write one PNG per plot type of :mod:`bayesgen.plots` and of the posterior predictive
checks / model comparison of :mod:`bayesgen.diagnostics` to ``docs/img/``.

Same data as ``tests/test_plots.py``: iris (sepal length and width) for the Gaussian
plots, digits binarised at 7 for the shrinkage plot. Run from the repository root:
``python docs/make_images.py``.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from PIL import Image
from sklearn.datasets import load_digits, load_iris
from sklearn.model_selection import train_test_split

import bayesgen as bg
from bayesgen import plots

OUT = Path(__file__).resolve().parent / "img"
POST = {"method": "conjugate", "chains": 2, "draws": 200, "random_state": 0}


def save(ax_or_fig, name: str) -> None:
    fig = getattr(ax_or_fig, "figure", ax_or_fig)
    if fig.get_layout_engine() is None:  # the plots' own figures use constrained layout
        fig.tight_layout()
    fig.savefig(OUT / name, dpi=100)
    plt.close(fig)
    # 256-colour palette PNG: a few times smaller, no visible change for line plots.
    Image.open(OUT / name).convert("RGB").quantize(256).save(OUT / name, optimize=True)
    print(f"wrote {OUT / name}")


def label_iris(ax, iris):
    """Real feature names on the axes (the models were fitted on a plain array)."""
    ax.set(xlabel=iris.feature_names[0], ylabel=iris.feature_names[1])
    return ax


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    iris = load_iris()
    X, y = iris.data[:, :2], iris.target
    qda = bg.QDA(**POST).fit(X, y)
    mle = bg.QDA(method="mle").fit(X, y)
    map_ = bg.QDA(method="map").fit(X, y)
    ax = plots.decision_regions(qda, X, y, compare={"QDA MLE": mle, "QDA MAP": map_})
    save(label_iris(ax, iris), "decision_regions.png")
    save(label_iris(plots.probability_ellipses(qda, n_draws=20), iris), "probability_ellipses.png")

    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    fits = {
        "QDA MLE": bg.QDA(method="mle").fit(X_tr, y_tr),
        "QDA conjugate": bg.QDA(**POST).fit(X_tr, y_tr),
        "GaussianNB MAP": bg.GaussianNB(method="map").fit(X_tr, y_tr),
    }
    proba = {name: m.predict_proba(X_te) for name, m in fits.items()}
    save(plots.reliability_diagram(y_te, proba, n_bins=8), "reliability_diagram.png")
    save(plots.probability_forest(qda, X[[0, 60, 70, 130]]), "probability_forest.png")

    digits = load_digits()
    Xd, yd = (digits.data[:150] > 7).astype(float), digits.target[:150]
    discrete = {
        "MLE": bg.BernoulliNB(method="mle").fit(Xd, yd),
        "MAP (alpha=2)": bg.BernoulliNB(method="map").fit(Xd, yd),
        "posterior mean": bg.BernoulliNB(**POST).fit(Xd, yd),
    }
    save(plots.shrinkage(discrete), "shrinkage.png")
    save(plots.trace(qda, var_names=["pi", "mu"], figsize=(9, 4.5))[0, 0], "trace.png")
    save(plots.rank(qda, var_names=["pi"], figsize=(10, 3.2)).ravel()[0], "rank.png")

    # posterior predictive checks (bayesgen.diagnostics) and the LOO comparison
    gnb = bg.GaussianNB(**POST).fit(X, y)
    axes = bg.plot_ppc(gnb, num_pp_samples=30, random_state=0)
    save(axes.ravel()[0], "ppc.png")
    models = {"LDA": bg.LDA(**POST).fit(X, y), "QDA": qda, "GaussianNB": gnb}
    save(bg.plot_compare(models), "compare.png")


if __name__ == "__main__":
    main()
