"""Semi-supervised NUTS starts near the mode the labeled rows anchor (issue 17).

Started at the prior's support point, the chains of an LDA fit with 3 labeled rows per
class and ~300 unlabeled ones settled in a label-swapped mode (R-hat 1.8). Now
:func:`bayesgen.semi.nuts.start_point` starts them at a local mode of the posterior
reached from the labeled-only one.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest

import bayesgen as bg
from bayesgen.inference import mcmc
from bayesgen.inference.model import build_stats_model
from bayesgen.semi import nuts

MU = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
N_PER_CLASS = 103
N_LAB = 3


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(MU[k], 1.0, size=(N_PER_CLASS, 2)) for k in range(3)])
    y = np.repeat(np.arange(3), N_PER_CLASS)
    y_semi = np.full(y.size, np.nan)
    lab = np.concatenate([np.arange(k * N_PER_CLASS, k * N_PER_CLASS + N_LAB)
                          for k in range(3)])
    y_semi[lab] = y[lab]
    return X, y, y_semi


def _fit(cls, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        return cls(method="mcmc", chains=2, draws=300, tune=300, progressbar=False,
                   random_state=1, **kw).fit(X, y)


def _check_anchored(est, y, X):
    post = est.idata_.posterior
    mu = post["mu"].mean(("chain", "draw")).values
    assert np.all(np.abs(mu - MU) < 0.5), mu  # class k stays class k: no label swap
    rhat = az.rhat(post)
    worst = max(float(rhat[v].max()) for v in post.data_vars)
    assert worst < 1.05, worst
    assert np.mean(est.predict(X) == y) > 0.9


@pytest.mark.slow
@pytest.mark.parametrize("cls", [bg.GaussianNB, bg.LDA])
def test_semi_supervised_nuts_keeps_the_labels(data, cls):
    X, y, y_semi = data
    est = _fit(cls, X, y_semi)
    assert est.n_unlabeled_ == 3 * (N_PER_CLASS - N_LAB)
    _check_anchored(est, y, X)


def test_start_is_the_anchored_mode(data):
    """The start itself: class means at the true ones, and pi near uniform."""
    X, _, y_semi = data
    est = bg.LDA(method="map").fit(X, y_semi)  # for classes_, _family, _prior, _stats
    seen = {}

    def capture(estimator, model):
        seen["init"] = start(estimator, model)
        seen["model"] = model
        raise RuntimeError("stop after the start")

    start = nuts.start_point
    mp = pytest.MonkeyPatch()
    mp.setattr(nuts, "start_point", capture)
    try:
        with pytest.raises(RuntimeError, match="stop after the start"):
            _fit(bg.LDA, X, y_semi)
    finally:
        mp.undo()
    init, model = seen["init"], seen["model"]
    assert init is not None and set(init) == {v.name for v in model.value_vars}
    values = mcmc.constrained(model, init)
    assert np.all(np.abs(values["mu"] - MU) < 0.5), values["mu"]
    np.testing.assert_allclose(values["pi"].sum(), 1.0)
    assert np.all(np.abs(values["pi"] - 1 / 3) < 0.1)
    assert est.n_unlabeled_ > 0


def test_fully_labeled_and_lambda_zero_start_as_before(data, monkeypatch):
    """No unlabeled rows (or unlabeled_weight=0): no ascent, PyMC's initial point."""
    X, y, y_semi = data

    def fail(*args, **kwargs):
        raise AssertionError("the semi-supervised start ran")

    monkeypatch.setattr(nuts, "_ascend", fail)
    for labels, lam in ((y, 1.0), (y_semi, 0.0)):
        est = bg.GaussianNB(method="map", unlabeled_weight=lam).fit(X, labels)
        if lam == 0.0:  # no extra terms, so no start
            assert nuts.extra_likelihood(X[:5], np.ones(5), 0.0) is None
        assert nuts.start_point(est, build_stats_model(est)) is None
    est = _fit(bg.GaussianNB, X[::3], y[::3])
    assert np.all(np.abs(est.idata_.posterior["mu"].mean(("chain", "draw")).values - MU)
                  < 0.5)


def test_pymc_samplers_get_constrained_initvals(data, monkeypatch):
    """Samplers run through pm.sample receive the start as ``initvals`` (constrained)."""
    X, y, y_semi = data
    got = {}

    def fake(estimator, model, sampler, chains, draws, init=None, chain_method=None):
        got["init"] = init
        got["initvals"] = mcmc.constrained(model, init)
        raise RuntimeError("stop before sampling")

    monkeypatch.setattr(mcmc, "resolve_sampler", lambda s: "pymc")
    monkeypatch.setattr(mcmc, "_sample_pymc", fake)
    with pytest.raises(RuntimeError, match="stop before sampling"):
        _fit(bg.GaussianNB, X, y_semi, sampler="pymc")
    mu = got["initvals"]["mu"]
    assert np.all(np.abs(mu - MU) < 0.5), mu
    assert np.all(got["initvals"]["var"] > 0)
