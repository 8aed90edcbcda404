"""Rows passed back to a fitted estimator are verified against the fit.

Every capability about the training data that takes rows (``bg.compare(..., X=, y=)``,
``add_log_likelihood``, ``log_marginal_likelihood``, ``sample_posterior_predictive``,
``predict_set(calibration="loo"/"jackknife+")``) recomputes the family's sufficient
statistics of the rows in the fit's frame and compares them with the fitted ones
(:func:`bayesgen.inference.rows.check_statistics`): the training rows pass in any order
and as a DataFrame; other rows with the same class counts, one row moved by a relative
1e-6, or other weights are a ``ValueError`` naming the statistic and the class.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

import bayesgen as bg
from bayesgen.inference import rows as training
from tests.conftest import CLASSIFIERS, make_data

NAMES = sorted(CLASSIFIERS)
REFUSED = "not those the model was fitted on"


def _check(est, X, y, w=None):
    return training.training_rows(est, X, y, w, what="the test", how="test(X, y)")


def _perturb(kind: str, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One row moved by a tiny relative amount (real columns: 1e-6 relative), or for
    discrete supports the smallest change the support allows."""
    X2 = X.copy()
    if kind in ("real", "positive"):
        X2[5, 1] *= 1 + 1e-6
    elif kind == "mixed":  # a real column of the mixed data
        X2[5, 0] *= 1 + 1e-6
    elif kind == "binary":
        X2[5, 1] = 1.0 - X2[5, 1]
    elif kind == "count":
        X2[5, 1] += 1.0
    else:  # categorical: another code seen in training
        X2[5, 1] = X[np.flatnonzero(X[:, 1] != X[5, 1])[0], 1]
    return X2


@pytest.fixture(scope="module", params=NAMES)
def fitted(request):
    factory, kind = CLASSIFIERS[request.param]
    X, y = make_data(kind, n_per_class=20)
    if kind == "real":
        X = X * 1e-3 + 1e9  # an offset of 1e9: rounding of the sums must not matter
    w = np.random.default_rng(3).uniform(0.5, 2.0, y.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = factory().fit(X, y)
        weighted = factory().fit(X, y, sample_weight=w)
    return request.param, kind, est, weighted, X, y, w


def test_training_rows_accepted_in_any_order(fitted):
    name, kind, est, weighted, X, y, w = fitted
    _check(est, X, y)
    perm = np.random.default_rng(0).permutation(y.size)
    _check(est, X[perm], y[perm])
    _check(weighted, X, y, w)
    _check(weighted, X[perm], y[perm], w[perm])


def test_training_rows_as_dataframe(fitted):
    name, kind, est, weighted, X, y, w = fitted
    factory = CLASSIFIERS[name][0]
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_frame = factory().fit(df, y)
    perm = np.random.default_rng(1).permutation(y.size)
    _check(on_frame, df.iloc[perm], pd.Series(y[perm]))
    with pytest.raises(ValueError, match=REFUSED):
        _check(on_frame, pd.DataFrame(_perturb(kind, X, y), columns=df.columns), y)


def test_other_rows_with_the_same_class_counts_refused(fitted):
    name, kind, est, weighted, X, y, w = fitted
    X2, y2 = make_data(kind, n_per_class=20, seed=11)
    if kind == "real":
        X2 = X2 * 1e-3 + 1e9
    assert np.array_equal(np.bincount(y2), np.bincount(y))
    with pytest.raises(ValueError, match=REFUSED + r".*sufficient statistic '.+' of class"):
        _check(est, X2, y2)


def test_one_row_perturbed_refused(fitted):
    name, kind, est, weighted, X, y, w = fitted
    X2 = _perturb(kind, X, y)
    with pytest.raises(ValueError, match=REFUSED + r".*sufficient statistic") as err:
        _check(est, X2, y)
    label = repr(int(y[5]))
    assert f"of class {label}" in str(err.value)
    with pytest.raises(ValueError, match=REFUSED):
        _check(weighted, X2, y, w)


def test_weights_changed_refused(fitted):
    name, kind, est, weighted, X, y, w = fitted
    w2 = w.copy()
    w2[[0, 1]] = w2[[1, 0]]  # same class, same total: only the statistics tell
    assert y[0] == y[1] and w2[0] != w[0]
    with pytest.raises(ValueError, match=REFUSED + r".*sufficient statistic"):
        _check(weighted, X, y, w2)
    with pytest.raises(ValueError, match=REFUSED):
        _check(weighted, X, y)  # the weights left out
    with pytest.raises(ValueError, match=REFUSED):
        _check(est, X, y, w)  # weights given to an unweighted fit


# --------------------------------------------------------------- rounding and tolerance
@pytest.mark.parametrize("offset, unit", [(1e9, 1.0), (0.0, 1e-12), (0.0, 1e12),
                                          (-3e8, 1e-3)])
@pytest.mark.parametrize("name", ["GaussianNB", "LDA", "QDA"])
def test_rounding_accepted_perturbation_caught(name, offset, unit):
    """Float rounding (another order, another summation) is accepted at offsets and in
    tiny or huge units; a relative 1e-6 change of one value is caught."""
    X, y = make_data("real", n_per_class=50)
    X = X * unit + offset
    est = CLASSIFIERS[name][0]().fit(X, y)
    for seed in range(3):
        perm = np.random.default_rng(seed).permutation(y.size)
        _check(est, X[perm], y[perm])
    X2 = X.copy()
    X2[7, 2] = X[7, 2] * (1 + 1e-6) if X[7, 2] != 0 else 1e-6 * unit
    with pytest.raises(ValueError, match=REFUSED):
        _check(est, X2, y)


def test_streamed_fit_accepts_its_rows_in_any_order():
    """``partial_fit`` merges batch statistics (another rounding): the rows pass."""
    X, y = make_data("real", n_per_class=60)
    X = X + 1e9
    est = bg.QDA()
    for part in np.array_split(np.random.default_rng(2).permutation(y.size), 4):
        est.partial_fit(X[part], y[part], classes=np.unique(y))
    _check(est, X, y)
    X2 = X.copy()
    X2[0, 0] = X[0, 0] * (1 + 1e-6)
    with pytest.raises(ValueError, match=REFUSED):
        _check(est, X2, y)


def test_missing_entries_must_be_missing_in_the_same_places():
    X, y = make_data("real", n_per_class=30)
    X[[2, 40, 70], [0, 1, 3]] = np.nan
    est = bg.GaussianNB().fit(X, y)
    perm = np.random.default_rng(4).permutation(y.size)
    _check(est, X[perm], y[perm])
    X2 = X.copy()
    X2[2, 0] = np.nanmean(X[:, 0])  # imputed: not the training rows
    with pytest.raises(ValueError, match=REFUSED):
        _check(est, X2, y)
    X3 = X.copy()
    X3[5, 2] = np.nan
    with pytest.raises(ValueError, match=REFUSED):
        _check(est, X3, y)


def test_sparse_counts():
    X, y = make_data("count", n_per_class=30)
    est = bg.MultinomialNB().fit(sparse.csr_array(X), y)
    perm = np.random.default_rng(5).permutation(y.size)
    _check(est, sparse.csr_array(X[perm]), y[perm])
    _check(est, X, y)  # dense rows of the same values
    X2 = X.copy()
    X2[3, 0] += 1.0
    with pytest.raises(ValueError, match=REFUSED + r".*'feature_count'"):
        _check(est, sparse.csr_array(X2), y)


def test_mle_with_huge_weights():
    """``method="mle"`` rescales huge weights by a power of two: the same rows and
    weights are read the same way."""
    X, y = make_data("real", n_per_class=20)
    w = np.full(y.size, 1e305)
    est = bg.GaussianNB(method="mle").fit(X, y, sample_weight=w)
    _check(est, X, y, w)
    w2 = w.copy()
    w2[0] *= 1.5
    with pytest.raises(ValueError, match=REFUSED):
        _check(est, X, y, w2)


# ---------------------------------------------------------------------- entry points
@pytest.fixture(scope="module")
def iris_like():
    X, y = make_data("real", n_per_class=20)
    X2, y2 = make_data("real", n_per_class=20, seed=7)
    return X, y, X2, y2


def _conjugate(factory, X, y, **kw):
    # draws x rows above bayesgen.inference.loglik.AT_FIT_MAX_VALUES: no rows kept
    return factory(method="conjugate", draws=200, random_state=0, **kw).fit(X, y)


def test_compare_refuses_other_rows(iris_like):
    X, y, X2, y2 = iris_like
    models = {"lda": _conjugate(bg.LDA, X, y), "qda": _conjugate(bg.QDA, X, y)}
    perm = np.random.default_rng(0).permutation(y.size)
    good = bg.compare(models, X=X, y=y)
    shuffled = bg.compare(models, X=X[perm], y=y[perm])
    np.testing.assert_allclose(shuffled["elpd_loo"].sort_index(),
                               good["elpd_loo"].sort_index(), rtol=1e-10)
    with pytest.raises(ValueError, match=r"model 'lda'.*" + REFUSED):
        bg.compare(models, X=X2, y=y2)
    with pytest.raises(ValueError, match=REFUSED):
        bg.compare(models, ic="evidence", X=X2, y=y2)


def test_compare_psis_refuses_other_rows_even_with_a_stored_log_likelihood(iris_like):
    """A fit that kept its log-likelihood group does not need X, y; given, they are
    still checked."""
    X, y, X2, y2 = iris_like
    est = bg.GaussianNB(method="conjugate", draws=100, random_state=0).fit(X, y)
    assert "log_likelihood" in est.idata_.groups()
    est.add_log_likelihood(X, y)
    with pytest.raises(ValueError, match=REFUSED):
        est.add_log_likelihood(X2, y2)


def test_add_log_likelihood_and_predictive_refuse_other_rows(iris_like, monkeypatch):
    from bayesgen.inference import loglik

    X, y, X2, y2 = iris_like
    monkeypatch.setattr(loglik, "AT_FIT_MAX_VALUES", 1000)  # no log-likelihood at fit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bg.QDA(method="conjugate", draws=50, random_state=0).fit(X, y)
    assert "log_likelihood" not in est.idata_.groups()
    monkeypatch.setattr(loglik, "AT_FIT_MAX_VALUES", 4_000_000)
    with pytest.raises(ValueError, match=REFUSED):
        est.add_log_likelihood(X2, y2)
    with pytest.raises(ValueError, match=REFUSED):
        est.sample_posterior_predictive(X=X2, y=y2, random_state=0)
    est.sample_posterior_predictive(X=X[::-1], y=y[::-1], random_state=0)
    est.add_log_likelihood(X[::-1], y[::-1])
    assert "log_likelihood" in est.idata_.groups()


def test_log_marginal_likelihood_refuses_other_rows(iris_like):
    X, y, X2, y2 = iris_like
    est = bg.LDA().fit(X, y)
    assert est.log_marginal_likelihood(X, y) == est.log_marginal_likelihood()
    with pytest.raises(ValueError, match=REFUSED):
        est.log_marginal_likelihood(X2, y2)
    Xc, yc = make_data("count", n_per_class=20)
    Xc2, _ = make_data("count", n_per_class=20, seed=9)
    counts = bg.MultinomialNB().fit(Xc, yc)
    counts.log_marginal_likelihood(Xc[::-1], yc[::-1])
    with pytest.raises(ValueError, match=REFUSED):
        counts.log_marginal_likelihood(Xc2, yc)


@pytest.mark.parametrize("calibration", ["loo", "jackknife+"])
def test_conformal_loo_refuses_other_rows(iris_like, calibration):
    X, y, X2, y2 = iris_like
    est = _conjugate(bg.GaussianNB, X, y)
    est.predict_set(X[:5], confidence_level=0.8, calibration=calibration,
                    X_calib=X[::-1], y_calib=y[::-1])
    with pytest.raises(ValueError, match=REFUSED):
        est.predict_set(X[:5], confidence_level=0.8, calibration=calibration,
                        X_calib=X2, y_calib=y2)


def test_kernel_training_log_lik_in_any_order():
    """KernelNB's statistics are the rows themselves: compared as a set, and its
    training rows' leave-one-out terms (``train_log_lik``, the pointwise
    log-likelihood of a posterior fit) follow the rows in any order."""
    from bayesgen.inference import scoring

    X, y = make_data("real", n_per_class=10)
    X[4, 2] = np.nan
    w = np.ones(y.size)
    w[3] = 0.0
    est = bg.KernelNB().fit(X, y, sample_weight=w)
    perm = np.random.default_rng(6).permutation(y.size)
    _check(est, X[perm], y[perm], w[perm])
    family, Z = est._family, scoring.internal(est, X)
    ordered = family.train_log_lik(Z, y, est._params)
    shuffled = family.train_log_lik(Z[perm], y[perm], est._params)
    np.testing.assert_array_equal(shuffled, ordered[..., perm])
    with pytest.raises(ValueError, match="not among these rows"):
        family.train_log_lik(Z[1:], y[1:], est._params)


@pytest.mark.parametrize("name", NAMES)
def test_missing_entries_every_family(name):
    """Statistics with missing entries (observed counts, missingness groups, rows with
    gaps) are order-free too; an imputed entry or a new gap is refused."""
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind, n_per_class=20)
    X[[1, 25, 50, 52], [0, 1, 2, 2]] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = factory().fit(X, y)
    perm = np.random.default_rng(7).permutation(y.size)
    _check(est, X[perm], y[perm])
    imputed = X.copy()
    imputed[1, 0] = X[2, 0]
    with pytest.raises(ValueError, match=REFUSED):
        _check(est, imputed, y)
    gap = X.copy()
    gap[5, 3] = np.nan
    with pytest.raises(ValueError, match=REFUSED):
        _check(est, gap, y)


def test_sparse_counts_with_missing_entries():
    X, y = make_data("count", n_per_class=20)
    X[[1, 30], [0, 1]] = np.nan
    est = bg.MultinomialNB().fit(sparse.csr_array(X), y)
    perm = np.random.default_rng(8).permutation(y.size)
    _check(est, sparse.csr_array(X[perm]), y[perm])
