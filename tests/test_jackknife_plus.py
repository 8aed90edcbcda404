"""Jackknife+ conformal sets (bayesgen.decide.conformal, calibration="jackknife+") and the
leave-one-out predictive at other rows they need (the ``loo_log_predictive_at`` family
hook, bayesgen.inference.exact_loo.loo_log_joint_at), against brute-force refits
without each training row."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy import sparse
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine

import bayesgen as bg
from bayesgen.decide import conformal
from bayesgen.families import conjugate
from bayesgen.inference import exact_loo, scoring
from tests.conftest import CLASSIFIERS, make_data
from tests.test_exact_loo import CASES, _data

CONJUGATE = sorted(name for name in CLASSIFIERS if name != "KernelNB")


def _refit_log_joint(est, X, y, X_test, w=None):
    """log p(x_test_j, y=k | D without row i), (n, m, K), by n refits (user units)."""
    out = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        kwargs = {} if w is None else {"sample_weight": w[keep]}
        refit = clone(est).fit(X[keep], y[keep], **kwargs)
        out.append(refit.predict_joint_log_proba(X_test))
    return np.stack(out)


def _test_rows(kind, seed=11, m=5):
    X_test, _ = _data(kind, np.random.default_rng(seed), n=m)
    return X_test


# --------------------------------------------------------- the family hook
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_loo_at_equals_refits(case, weighted):
    """Every class of every test row under the posterior without each training row,
    against refits of estimators whose prior does not depend on the data."""
    est, kind = CASES[case]
    X, y = _data(kind, np.random.default_rng(1))
    X_test = _test_rows(kind)
    w = np.random.default_rng(3).uniform(0.3, 2.5, size=len(y)) if weighted else None
    fitted = clone(est).fit(X, y, sample_weight=w)
    rows = exact_loo.training_rows(fitted)
    got = exact_loo.loo_log_joint_at(fitted, rows, fitted._check_X_predict(X_test))
    want = _refit_log_joint(est, X, y, X_test, w)
    assert got.shape == (len(y), len(X_test), fitted.classes_.size)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-8)


@pytest.mark.parametrize("case", sorted(CASES))
def test_loo_log_joint_every_class_equals_refits(case):
    """The leave-one-out predictive of every class at the training row itself (LDA's
    entries k != y_n change with the shared covariance: they are not the full-data
    predictive)."""
    est, kind = CASES[case]
    X, y = _data(kind, np.random.default_rng(1))
    w = np.random.default_rng(4).uniform(0.3, 2.5, size=len(y))
    fitted = clone(est).fit(X, y, sample_weight=w)
    got, y_index = exact_loo.loo_log_joint(fitted)
    brute = np.empty_like(got)
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        refit = clone(est).fit(X[keep], y[keep], sample_weight=w[keep])
        brute[i] = refit.predict_joint_log_proba(X[i:i + 1])[0]
    np.testing.assert_array_equal(y_index, y)
    np.testing.assert_allclose(got, brute, rtol=0, atol=1e-8)
    # the diagonal of the hook at other rows is the hook at the rows themselves
    rows = exact_loo.training_rows(fitted)
    at = exact_loo.loo_log_joint_at(fitted, rows, fitted._check_X_predict(X))
    np.testing.assert_allclose(at[np.arange(len(y)), np.arange(len(y))], got, rtol=0,
                               atol=1e-9)


# ------------------------------------------- the hook on the family, prior held fixed
def _family_refits(est, Z, y, w, Z_test):
    """log p(z_test | y=k, D without row i), (n, m, K), from the family's statistics and
    posterior of the other rows under the fit's resolved prior (internal frame)."""
    family, K = copy.deepcopy(est._family), est.classes_.size
    out = []
    for i in range(len(y)):
        rest = np.flatnonzero(np.arange(len(y)) != i)
        post = family.posterior(family.stats(Z[rest], y[rest], w[rest], K), est._prior)
        out.append(family.log_predictive(Z_test, post))
    return np.stack(out)


def _hook_case(name, *, missing=False, as_sparse=False, seed=0):
    factory, kind = CLASSIFIERS[name]
    X_all, y_all = make_data(kind, n_per_class=7, seed=seed)
    test = np.arange(y_all.size) % 7 >= 5  # two rows per class (categories seen in fit)
    X, y, X_test = X_all[~test], y_all[~test], X_all[test]
    w = np.random.default_rng(seed).uniform(0.5, 2.0, y.size)
    if missing:  # test rows always; training rows where the exact LOO allows it
        X_test = X_test.copy()
        X_test[[0, 1, 4], [0, 2, 1]] = np.nan
        X_test[3, :] = np.nan
        if name not in ("LDA", "QDA"):
            X = X.copy()
            X[[2, 7, 11], [1, 0, 2]] = np.nan
    if as_sparse:
        X, X_test = sparse.csr_matrix(X), sparse.csr_matrix(X_test)
    extra = {"min_categories": 4} if kind == "categorical" else {}  # codes 0..3
    est = factory(method="conjugate", draws=5, chains=1, random_state=0, **extra)
    est.fit(X, y, sample_weight=w)
    Z = scoring.internal(est, est._check_X_predict(X))
    Z_test = scoring.internal(est, est._check_X_predict(X_test))
    return est, Z, y, w, Z_test


@pytest.mark.parametrize("name", CONJUGATE)
def test_hook_equals_family_refits(name):
    est, Z, y, w, Z_test = _hook_case(name)
    family = est._family
    got = family.loo_log_predictive_at(Z, y, w, est._posterior, Z_test)
    assert got.shape == (y.size, Z_test.shape[0], est.classes_.size)
    np.testing.assert_allclose(got, _family_refits(est, Z, y, w, Z_test), rtol=1e-10,
                               atol=1e-9)
    # at the training rows themselves: every class, the own class is loo_log_predictive
    at_rows = family.loo_log_predictive_at(Z, y, w, est._posterior)
    np.testing.assert_allclose(
        at_rows, np.einsum("iik->ik", _family_refits(est, Z, y, w, Z)), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(at_rows[np.arange(y.size), y],
                               family.loo_log_predictive(Z, y, w, est._posterior), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("name", ["GaussianNB", "BernoulliNB", "PoissonNB", "CategoricalNB",
                                  "ExponentialNB", "MultinomialNB", "MixedNB", "LDA", "QDA"])
def test_hook_with_missing_entries(name):
    """NaN in the test rows (a whole row missing included) is integrated out, as
    log_predictive does; NaN in the training rows is left out of the downdate (the
    factorised families; LDA/QDA and MultinomialNB fitted with missing entries have no
    exact LOO)."""
    if name == "MultinomialNB":
        est, Z, y, w, Z_test = _hook_case(name)
        Z_test = Z_test.copy()
        Z_test[[0, 1, 4], [0, 2, 1]] = np.nan  # missing counts of the test rows only
        Z_test[3, :] = np.nan
    else:
        est, Z, y, w, Z_test = _hook_case(name, missing=True)
    got = est._family.loo_log_predictive_at(Z, y, w, est._posterior, Z_test)
    np.testing.assert_allclose(got, _family_refits(est, Z, y, w, Z_test), rtol=1e-10,
                               atol=1e-9)
    assert np.all(np.isfinite(got))


@pytest.mark.parametrize("name", ["MultinomialNB", "PoissonNB", "BernoulliNB"])
def test_hook_on_sparse_rows(name):
    est, Z, y, w, Z_test = _hook_case(name, as_sparse=True)
    dense = _hook_case(name)
    got = est._family.loo_log_predictive_at(Z, y, w, est._posterior, Z_test)
    want = dense[0]._family.loo_log_predictive_at(*dense[1:4], dense[0]._posterior, dense[4])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("name", ["GaussianNB", "PoissonNB", "CategoricalNB", "MixedNB"])
def test_blocks_do_not_change_the_result(name, monkeypatch):
    """Blocks of training and test rows (tiny BLOCK: one training row against a few test
    rows at a time) give the same values."""
    est, Z, y, w, Z_test = _hook_case(name)
    whole = est._family.loo_log_predictive_at(Z, y, w, est._posterior, Z_test)
    monkeypatch.setattr(conjugate, "BLOCK", 13)
    assert conjugate.blocks(y.size, Z_test.shape[0], Z_test.shape[1])[0] == 1
    np.testing.assert_array_equal(
        est._family.loo_log_predictive_at(Z, y, w, est._posterior, Z_test), whole)


def test_kernel_has_no_hook():
    est, X, y = None, *make_data("real", n_per_class=5)
    est = bg.KernelNB().fit(X, y)
    assert not est._family.capabilities.exact_loo
    assert not hasattr(est._family, "loo_log_predictive_at")
    for point in (est, bg.GaussianNB(method="map").fit(X, y)):
        with pytest.raises(ValueError, match="exact leave-one-out"):
            point.predict_set(X, confidence_level=0.9, calibration="jackknife+", X_calib=X,
                              y_calib=y)


# ------------------------------------------------------ the jackknife+ set
def _brute_scores(est, X, y, X_test, score):
    """R_i (n,) and s_i(x, k) (n, m, K) from n refits, each without row i."""
    def scores(model, rows):
        lj = model.predict_joint_log_proba(rows)
        return conformal.nonconformity(lj - logsumexp(lj, axis=1, keepdims=True), score)

    n, K = len(y), np.unique(y).size
    R, S = np.empty(n), np.empty((n, len(X_test), K))
    for i in range(n):
        keep = np.arange(n) != i
        refit = clone(est).fit(X[keep], y[keep])
        R[i] = scores(refit, X[i:i + 1])[0, y[i]]
        S[i] = scores(refit, X_test)
    return R, S


def _brute_sets(R, S, y, alpha, mondrian, uniform=None):
    """The jackknife+ set by its definition: k in C(x) iff #{i : R_i < s_i(x, k)} <
    (1 - alpha)(n + 1) (the reference rows i of class k with ``mondrian``)."""
    ref = np.eye(S.shape[-1], dtype=bool)[y] if mondrian else np.ones((y.size, S.shape[-1]),
                                                                      dtype=bool)
    n_ref = ref.sum(axis=0)
    R, ref = R[:, None, None], ref[:, None, :]
    if uniform is None:
        return np.sum((R < S) & ref, axis=0) < (1 - alpha) * (n_ref + 1)
    greater = np.sum((R > S) & ref, axis=0)
    equal = np.sum((R == S) & ref, axis=0)
    return (greater + uniform * (equal + 1)) / (n_ref + 1) > alpha


@pytest.mark.parametrize("case", ["gaussian", "lda", "qda", "multinomial"])
@pytest.mark.parametrize("score", ["lac", "aps"])
def test_jackknife_plus_equals_refits(case, score):
    est, kind = CASES[case]
    X, y = _data(kind, np.random.default_rng(12), n=20)
    X_test = _test_rows(kind, seed=13, m=25)
    fitted = clone(est).fit(X, y)
    R, S = _brute_scores(est, X, y, X_test, score)
    for mondrian in (False, True):
        for alpha in (0.1, 0.3):
            got = fitted.predict_set(X_test, confidence_level=1 - alpha,
                                     calibration="jackknife+", score=score, mondrian=mondrian)
            np.testing.assert_array_equal(got, _brute_sets(R, S, y, alpha, mondrian))
            if kind == "real" and not mondrian:  # informative features: not every class
                assert 0 < got.mean() < 1
    uniform = np.random.default_rng(7).uniform(size=(len(X_test), fitted.classes_.size))
    got = fitted.predict_set(X_test, confidence_level=0.8, calibration="jackknife+", score=score,
                             randomize=True, random_state=7)
    np.testing.assert_array_equal(got, _brute_sets(R, S, y, 0.2, False, uniform))


def test_jackknife_plus_counts_and_chunks(monkeypatch):
    """The counts add up; chunks of test rows (tiny JACKKNIFE_BLOCK) change nothing; a
    sequence of levels gives nested sets; given rows equal the kept ones."""
    est, kind = CASES["lda"]
    X, y = _data(kind, np.random.default_rng(12), n=20)
    X_test = _test_rows(kind, seed=13, m=25)
    fitted = clone(est).fit(X, y)
    Xv = fitted._check_X_predict(X_test)
    less, greater, equal, n_ref = conformal.jackknife_plus_counts(fitted, Xv, score="aps")
    np.testing.assert_array_equal(less + greater + equal, np.broadcast_to(n_ref, less.shape))
    sets = fitted.predict_set(X_test, confidence_level=[0.95, 0.8, 0.5], calibration="jackknife+")
    assert sets.shape == (25, 3, 3)
    assert np.all(sets[..., 0] >= sets[..., 1]) and np.all(sets[..., 1] >= sets[..., 2])
    monkeypatch.setattr(conformal, "JACKKNIFE_BLOCK", 50)  # chunks of 50 // (20 x 3) = 1 row
    np.testing.assert_array_equal(
        fitted.predict_set(X_test, confidence_level=[0.95, 0.8, 0.5], calibration="jackknife+",
                           X_calib=X, y_calib=y), sets)
    # rank > n: every class
    assert fitted.predict_set(X_test[:3], confidence_level=0.99, calibration="jackknife+").all()


@pytest.mark.parametrize("name", CONJUGATE)
def test_jackknife_plus_on_every_conjugate_estimator(name):
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind, n_per_class=15)
    est = factory(method="conjugate", draws=5, chains=1, random_state=0).fit(X, y)
    sets = est.predict_set(X[:9], confidence_level=[0.9, 0.7], calibration="jackknife+",
                           score="aps", mondrian=True)
    assert sets.shape == (9, est.classes_.size, 2) and sets.dtype == bool
    assert np.all(sets[..., 0] >= sets[..., 1])
    # the training rows themselves are covered as often as jackknife+ promises, at least
    hit = est.predict_set(X, confidence_level=0.9, calibration="jackknife+")[np.arange(y.size), y]
    assert hit.mean() >= 0.8


# ------------------------------------------------------------------ coverage
def _split_runs(loader, runs=60, alphas=(0.05, 0.1, 0.2), seed=0):
    """Mean coverage and set size over random 70/30 splits of a bundled data set, for
    split (half fits, half calibrates), loo and jackknife+ (all labeled rows fit)."""
    X, y = loader(return_X_y=True)
    rng = np.random.default_rng(seed)
    names = ("split", "loo", "jackknife+")
    cover = {c: [] for c in names}
    size = {c: [] for c in names}
    levels = [round(1 - a, 12) for a in alphas]
    for _ in range(runs):
        perm = rng.permutation(y.size)
        n_test = int(0.3 * y.size)
        test, labeled = perm[:n_test], perm[n_test:]
        half, other = labeled[: labeled.size // 2], labeled[labeled.size // 2:]
        model = bg.GaussianNB(method="conjugate", draws=2, chains=1, random_state=0)
        split_model = clone(model).fit(X[half], y[half])
        full_model = clone(model).fit(X[labeled], y[labeled])
        for c in names:
            if c == "split":
                sets = split_model.predict_set(X[test], confidence_level=levels,
                                               X_calib=X[other], y_calib=y[other])
            else:
                sets = full_model.predict_set(X[test], confidence_level=levels, calibration=c)
            cover[c].append(sets[np.arange(test.size), y[test]].mean(axis=0))
            size[c].append(sets.sum(axis=1).mean(axis=0))
    return ({c: np.mean(v, axis=0) for c, v in cover.items()},
            {c: np.mean(v, axis=0) for c, v in size.items()})


@pytest.mark.parametrize("loader", [load_iris, load_wine], ids=["iris", "wine"])
def test_jackknife_plus_coverage_over_random_splits(loader):
    """>= 1 - 2 alpha (the guarantee), and close to 1 - alpha in practice; sets about as
    small as the loo set's and no larger than split conformal's."""
    alphas = np.array([0.05, 0.1, 0.2])
    cover, size = _split_runs(loader, alphas=tuple(alphas))
    jk = cover["jackknife+"]
    assert np.all(jk >= 1 - 2 * alphas)
    np.testing.assert_allclose(jk, 1 - alphas, atol=0.025)
    assert np.all(size["jackknife+"] <= size["split"] + 0.05)
    np.testing.assert_allclose(size["jackknife+"], size["loo"], atol=0.1)


def test_far_rows_take_the_full_data_predictive():
    """A row beyond the float range of the frame is scored by the split form of the
    full-data predictive for every i (no overflow, no warning); the other rows of the
    same call are unaffected."""
    import warnings

    X, y = make_data("real", n_per_class=15)
    est = bg.LDA(method="conjugate", draws=5, chains=1, random_state=0).fit(X, y)
    test = X[:4].copy()
    test[0, 0], test[1, 1] = 1e300, -1e200
    rows = exact_loo.training_rows(est)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        joint = exact_loo.loo_log_joint_at(est, rows, est._check_X_predict(test))
        sets = est.predict_set(test, confidence_level=0.9, calibration="jackknife+")
    np.testing.assert_array_equal(joint[:, :2], np.broadcast_to(
        est.predict_joint_log_proba(test[:2]), (y.size, 2, 3)))
    np.testing.assert_array_equal(joint[:, 2:], exact_loo.loo_log_joint_at(
        est, rows, est._check_X_predict(test[2:])))
    np.testing.assert_array_equal(sets[2:], est.predict_set(test[2:], confidence_level=0.9,
                                                            calibration="jackknife+"))
