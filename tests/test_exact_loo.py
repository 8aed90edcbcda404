"""Exact leave-one-out (bayesgen.inference.exact_loo) against brute-force refits without each row,
and bg.compare's use of it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

import bayesgen as bg
from bayesgen.inference import exact_loo

N = 14  # small: one refit per row


def _data(kind: str, rng: np.random.Generator, n: int = N):
    y = np.arange(n) % 3  # every class has >= 4 rows: none disappears when a row is left out
    if kind == "real":
        X = rng.normal(size=(n, 2)) * [3.0, 0.01] + [100.0, -2.0] + y[:, None] * [2.0, 0.01]
    elif kind == "binary":
        X = (rng.random((n, 3)) < 0.4).astype(float)
    elif kind == "counts":
        X = rng.poisson(3.0, size=(n, 4)).astype(float)
    elif kind == "categories":
        X = rng.integers(0, 3, size=(n, 2)).astype(float)
    elif kind == "durations":
        X = rng.exponential([1.0, 0.01, 30.0], size=(n, 3)) * (1.0 + y[:, None])
    else:  # mixed: 2 real, 2 counts, 1 binary
        X = np.column_stack([rng.normal(size=(n, 2)) * 2 + 5, rng.poisson(2.0, size=(n, 2)),
                             (rng.random(n) < 0.5).astype(float)])
    return X, y


# Estimators whose resolved prior does not depend on the data (so that a refit without
# row n has the same prior; bayesgen's exact LOO holds _prior fixed by definition).
GAUSS = {"mean_prior": [100.0, -2.0], "var_prior": [9.0, 1e-4]}
CASES = {
    "gaussian": (bg.GaussianNB(method="conjugate", **GAUSS), "real"),
    "lda": (bg.LDA(method="conjugate", cov_dof=5.0, mean_prior=[100.0, -2.0],
                   cov_target=[9.0, 1e-4]), "real"),
    "qda": (bg.QDA(method="conjugate", cov_dof=4.5, mean_prior=[100.0, -2.0],
                   cov_target=[[9.0, 0.001], [0.001, 1e-4]]), "real"),
    "bernoulli": (bg.BernoulliNB(method="conjugate", alpha=1.5), "binary"),
    "multinomial": (bg.MultinomialNB(method="conjugate", alpha=0.7), "counts"),
    "poisson": (bg.PoissonNB(method="conjugate", rate_prior=2.5), "counts"),
    "exponential": (bg.ExponentialNB(method="conjugate", alpha=1.5,
                                     mean_prior=[1.5, 0.02, 40.0]), "durations"),
    "categorical": (bg.CategoricalNB(method="conjugate", alpha=1.3, min_categories=3),
                    "categories"),
    "mixed": (bg.MixedNB(method="conjugate", families=[
        ("gaussian", [0, 1], {"mean_prior": [5.0, 5.0], "var_prior": [4.0, 4.0]}),
        ("poisson", [2, 3], {"rate_prior": 2.0}), ("bernoulli", [4])]), "mixed"),
}


def brute_force(est, X, y, w=None, fit_kwargs=None):
    """log p(x_n, y_n | data without row n) by refitting without each row."""
    out = np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        kwargs = dict(fit_kwargs or {})
        if w is not None:
            kwargs["sample_weight"] = w[keep]
        refit = clone(est).fit(X[keep], y[keep], **kwargs)
        out[i] = refit.predict_joint_log_proba(X[i:i + 1])[0, y[i]]
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_exact_loo_equals_brute_force(case):
    est, kind = CASES[case]
    X, y = _data(kind, np.random.default_rng(1))
    fitted = clone(est).fit(X, y)
    assert exact_loo.supports(fitted)
    np.testing.assert_allclose(exact_loo.pointwise(fitted), brute_force(est, X, y),
                               rtol=0, atol=1e-8)


@pytest.mark.parametrize("case", ["gaussian", "qda", "lda", "multinomial", "categorical",
                                  "exponential"])
def test_weights_remove_the_whole_row(case):
    est, kind = CASES[case]
    X, y = _data(kind, np.random.default_rng(2))
    w = np.random.default_rng(3).uniform(0.3, 2.5, size=len(y))
    fitted = clone(est).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(exact_loo.pointwise(fitted), brute_force(est, X, y, w),
                               rtol=0, atol=1e-8)


def test_fixed_class_prior():
    est = bg.BernoulliNB(method="conjugate", alpha=1.5, class_prior=[0.2, 0.3, 0.5])
    X, y = _data("binary", np.random.default_rng(4))
    fitted = clone(est).fit(X, y)
    np.testing.assert_allclose(exact_loo.pointwise(fitted), brute_force(est, X, y), atol=1e-8)


@pytest.mark.parametrize("case", ["gaussian", "bernoulli", "poisson", "categorical",
                                  "exponential"])
def test_missing_entries_factorised(case):
    est, kind = CASES[case]
    X, y = _data(kind, np.random.default_rng(5))
    X[[1, 4, 9], [0, 1, 0]] = np.nan
    fitted = clone(est).fit(X, y)
    assert exact_loo.supports(fitted)
    np.testing.assert_allclose(exact_loo.pointwise(fitted), brute_force(est, X, y), atol=1e-8)


def test_sparse_counts():
    from scipy import sparse

    for case in ("multinomial", "poisson"):
        est, kind = CASES[case]
        X, y = _data(kind, np.random.default_rng(6))
        dense = exact_loo.pointwise(clone(est).fit(X, y))
        sp = exact_loo.pointwise(clone(est).fit(sparse.csr_matrix(X), y))
        np.testing.assert_allclose(sp, dense, rtol=1e-12, atol=1e-10)


def test_not_supported():
    X, y = _data("real", np.random.default_rng(7))
    assert not exact_loo.supports(bg.GaussianNB(method="map").fit(X, y))
    assert not exact_loo.supports(bg.KernelNB().fit(X, y))
    Xm = X.copy()
    Xm[2, 0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)  # short chains: irrelevant
        lda = bg.LDA(method="conjugate", draws=50, tune=20, chains=2, random_state=0).fit(Xm, y)
    assert not exact_loo.supports(lda)  # data augmentation: PSIS fallback
    with pytest.raises(ValueError, match="no exact"):
        exact_loo.pointwise(bg.GaussianNB(method="map").fit(X, y))


# ------------------------------------------------------------------ compare
@pytest.fixture(scope="module")
def conjugate_models():
    X, y = _data("real", np.random.default_rng(8), n=60)
    kw = {"method": "conjugate", "draws": 200, "chains": 2, "random_state": 0}
    return X, y, {
        "gnb": bg.GaussianNB(**kw).fit(X, y),
        "lda": bg.LDA(**kw).fit(X, y),
        "qda": bg.QDA(**kw).fit(X, y),
    }


def test_compare_conjugate_is_exact_and_silent(conjugate_models):
    _, _, models = conjugate_models
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no Pareto-k (or any other user) warning
        # ... except pandas' deprecation of an argument ArviZ's own az.compare passes
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        table = bg.compare(models)
    for name, est in models.items():
        assert table.loc[name, "elpd_loo"] == pytest.approx(exact_loo.pointwise(est).sum(),
                                                            abs=1e-9)
        lppd = exact_loo.full_data_pointwise(est).sum()
        assert table.loc[name, "p_loo"] == pytest.approx(lppd - table.loc[name, "elpd_loo"])
    assert not table["warning"].any()
    assert list(table["rank"]) == [0, 1, 2]
    assert table["weight"].sum() == pytest.approx(1.0)


def test_compare_exact_close_to_psis(conjugate_models):
    """The exact LOO agrees with ArviZ's PSIS-LOO estimate of the same posterior."""
    import arviz as az

    _, _, models = conjugate_models
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        psis = az.loo(models["gnb"].idata_, pointwise=True)
    exact = exact_loo.elpd(models["gnb"])
    assert abs(psis["elpd_loo"] - exact["elpd_loo"]) < 3 * psis["se"] / np.sqrt(60) + 1.0


def test_compare_mixes_exact_and_psis(conjugate_models):
    X, y, models = conjugate_models
    Xm = X.copy()
    Xm[::7, 1] = np.nan
    # LDA with missing entries: data augmentation, PSIS-LOO; rows line up with the others
    lda_da = bg.LDA(method="conjugate", draws=150, tune=100, chains=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lda_da.fit(Xm, y)
        table = bg.compare({"gnb": models["gnb"], "lda_missing": lda_da})
    assert set(table.index) == {"gnb", "lda_missing"}
    assert table.loc["gnb", "elpd_loo"] == pytest.approx(
        exact_loo.pointwise(models["gnb"]).sum(), abs=1e-9)


def test_compare_scale_deviance(conjugate_models):
    _, _, models = conjugate_models
    log = bg.compare(models)
    dev = bg.compare(models, scale="deviance")
    for name in models:
        assert dev.loc[name, "elpd_loo"] == pytest.approx(-2 * log.loc[name, "elpd_loo"])


def test_save_load_keeps_weights(tmp_path):
    est, kind = CASES["gaussian"]
    X, y = _data(kind, np.random.default_rng(9))
    w = np.linspace(0.5, 2.0, len(y))
    fitted = clone(est).fit(X, y, sample_weight=w)
    fitted.save(tmp_path / "m.nc")
    loaded = bg.load(tmp_path / "m.nc")
    np.testing.assert_allclose(exact_loo.pointwise(loaded), exact_loo.pointwise(fitted),
                               rtol=1e-14)
    assert loaded.log_marginal_likelihood() == fitted.log_marginal_likelihood()


def test_compare_rejects_unknown_ic(conjugate_models):
    with pytest.raises(ValueError, match="ic must be"):
        bg.compare(conjugate_models[2], ic="aic")
