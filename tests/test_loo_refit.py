"""Exact leave-one-out is the refit without the row, at the same constructor settings.

For every estimator with a closed-form leave-one-out, at its defaults and at two other
settings, with and without ``sample_weight`` (and with missing entries where the
closed form exists): log p(x_n, y = k | D without row n) from the package
(:func:`bayesgen.inference.exact_loo.loo_log_joint`, every class, and
:func:`~bayesgen.inference.exact_loo.pointwise`) against refitting the same
constructor (``method="conjugate"``) without row n and calling
``predict_joint_log_proba`` on the left-out row, to 1e-8 per row; and the
leave-one-out at other rows (:func:`~bayesgen.inference.exact_loo.loo_log_joint_at`,
what jackknife+ scores with) against the same refits at test rows. Data-dependent
defaults (the grand mean, pooled variances, OAS and evidence-chosen strengths, the
count and duration families' rates, a structure chosen by the evidence) are
re-resolved without the row; the refit also chooses its own unit frame, so agreement
shows the frame cancels.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

import bayesgen as bg
from bayesgen.inference import exact_loo, loo_refit

N_PER_CLASS, K = 10, 3
RTOL = 1e-8
#: the left-out rows refitted by brute force (every fifth row: each class, first and last)
CHECKED = np.r_[np.arange(0, N_PER_CLASS * K, 5), N_PER_CLASS * K - 1]


def _data(kind: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = N_PER_CLASS * K
    y = np.repeat(np.arange(K), N_PER_CLASS)
    if kind == "real":  # offset and scaled: the frame is not the identity
        return 100.0 + 3.0 * (rng.normal(size=(n, 3)) + 0.8 * y[:, None]) * [1.0, 10.0, 0.1]
    if kind == "counts":
        return rng.poisson(2.0 + y[:, None], size=(n, 4)).astype(float)
    if kind == "durations":
        return rng.exponential(1.0 + y[:, None], size=(n, 3))
    if kind == "binary":
        return (rng.uniform(size=(n, 4)) < 0.3 + 0.2 * y[:, None]).astype(float)
    if kind == "categories":  # every code at least twice per column (a refit keeps them)
        return np.column_stack([rng.permutation(np.arange(n) % 4) for _ in range(3)]).astype(float)
    if kind == "mixed":
        real = rng.normal(size=(n, 2)) + y[:, None]
        return np.column_stack([real, rng.poisson(2.0, size=(n, 1)),
                                rng.permutation(np.arange(n) % 3)]).astype(float)
    raise AssertionError(kind)


MIXED = [("gaussian", [0, 1]), ("poisson", [2]), ("categorical", [3])]

#: (id, estimator, data kind, missing entries have a closed form)
CASES = [
    ("LDA-default", bg.LDA(), "real", False),
    ("LDA-auto", bg.LDA(cov_dof="auto"), "real", False),
    ("LDA-mean-auto", bg.LDA(mean_strength="auto"), "real", False),
    ("LDA-mean-dof-auto", bg.LDA(mean_strength="auto", cov_dof="auto"), "real", False),
    ("LDA-isotropic-fixed", bg.LDA(cov_target="isotropic", cov_dof=8.0), "real", False),
    ("QDA-default", bg.QDA(), "real", False),
    ("QDA-oas-pooled", bg.QDA(cov_dof="oas", cov_target="pooled"), "real", False),
    ("QDA-structure-auto", bg.QDA(cov_structure="auto"), "real", False),
    ("QDA-diag", bg.QDA(cov_structure="diag"), "real", True),
    ("GaussianNB-default", bg.GaussianNB(), "real", True),
    ("GaussianNB-auto", bg.GaussianNB(var_dof="auto"), "real", True),
    ("GaussianNB-fixed", bg.GaussianNB(mean_prior=[100.0, 100.0, 100.0],
                                       var_prior=[9.0, 900.0, 0.09]), "real", True),
    ("PoissonNB-default", bg.PoissonNB(), "counts", True),
    ("PoissonNB-alpha", bg.PoissonNB(alpha=3.0), "counts", True),
    ("PoissonNB-fixed", bg.PoissonNB(rate_prior=2.0), "counts", True),
    ("ExponentialNB-default", bg.ExponentialNB(), "durations", True),
    ("ExponentialNB-alpha", bg.ExponentialNB(alpha=4.0), "durations", True),
    ("ExponentialNB-fixed", bg.ExponentialNB(mean_prior=1.5), "durations", True),
    ("MultinomialNB-default", bg.MultinomialNB(), "counts", False),
    ("MultinomialNB-alpha", bg.MultinomialNB(alpha=0.5), "counts", False),
    ("MultinomialNB-vector", bg.MultinomialNB(alpha=[0.5, 1.0, 2.0, 3.0]), "counts", False),
    ("BernoulliNB-default", bg.BernoulliNB(), "binary", True),
    ("BernoulliNB-alpha", bg.BernoulliNB(alpha=0.3), "binary", True),
    ("BernoulliNB-alpha2", bg.BernoulliNB(alpha=2.0), "binary", True),
    ("CategoricalNB-default", bg.CategoricalNB(), "categories", True),
    ("CategoricalNB-alpha", bg.CategoricalNB(alpha=0.4), "categories", True),
    ("CategoricalNB-min", bg.CategoricalNB(min_categories=6), "categories", True),
    ("MixedNB-default", bg.MixedNB(families=MIXED), "mixed", True),
    ("MixedNB-options", bg.MixedNB(families=[("gaussian", [0, 1], {"var_dof": 5.0}),
                                             ("poisson", [2], {"alpha": 2.0}),
                                             ("categorical", [3], {"alpha": 0.5})]),
     "mixed", True),
]
IDS = [case[0] for case in CASES]


def _conjugate(est):
    return clone(est).set_params(method="conjugate", draws=10, chains=1, random_state=0)


def _refits(est, X, y, w, X_test):
    """log p(x, y = k | D without row n) by brute force for the rows :data:`CHECKED`:
    (c, K) at the left-out rows and (c, m, K) at ``X_test``."""
    n = y.size
    own, at = np.empty((CHECKED.size, K)), np.empty((CHECKED.size, X_test.shape[0], K))
    for r, i in enumerate(CHECKED):
        keep = np.arange(n) != i
        refit = _conjugate(est).fit(X[keep], y[keep], None if w is None else w[keep])
        own[r] = refit.predict_joint_log_proba(X[i:i + 1])[0]
        at[r] = refit.predict_joint_log_proba(X_test)
    return own, at


def _with_gaps(X: np.ndarray, seed: int) -> np.ndarray:
    X = X.copy()
    rng = np.random.default_rng(seed)
    rows = rng.choice(X.shape[0], size=6, replace=False)
    X[rows, rng.integers(0, X.shape[1], size=6)] = np.nan
    return X


@pytest.fixture(scope="module")
def weights():
    return np.random.default_rng(7).uniform(0.5, 2.0, N_PER_CLASS * K)


@pytest.mark.parametrize("variant", ["plain", "weighted", "missing"])
@pytest.mark.parametrize(("name", "est", "kind", "gaps"), CASES, ids=IDS)
def test_loo_equals_refit(name, est, kind, gaps, variant, weights):
    if variant == "missing" and not gaps:
        pytest.skip("no closed-form leave-one-out with missing entries")
    X = _data(kind)
    y = np.repeat(np.arange(K), N_PER_CLASS)
    w = weights if variant == "weighted" else None
    if variant == "missing":
        X = _with_gaps(X, 3)
    X_test = _data(kind, seed=1)[::7][:4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = _conjugate(est).fit(X, y, w)
        assert exact_loo.supports(fitted)
        joint, y_index = exact_loo.loo_log_joint(fitted, X, y, w)
        pointwise = exact_loo.pointwise(fitted, X, y, w)
        rows = exact_loo.training_rows(fitted, X, y, w)
        at = exact_loo.loo_log_joint_at(fitted, rows, X_test)
        own_ref, at_ref = _refits(est, X, y, w, X_test)
    np.testing.assert_array_equal(y_index, y)
    np.testing.assert_allclose(joint[CHECKED], own_ref, rtol=RTOL, atol=RTOL)
    np.testing.assert_allclose(pointwise[CHECKED], own_ref[np.arange(CHECKED.size), y[CHECKED]],
                               rtol=RTOL, atol=RTOL)
    np.testing.assert_allclose(pointwise, joint[np.arange(y.size), y], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(at[CHECKED], at_ref, rtol=RTOL, atol=RTOL)


def test_fixed_priors_use_the_downdates():
    """A prior with every hyper-parameter fixed is the same for every subset of the
    rows: the families say so and the closed-form downdates are used."""
    for est in (bg.MultinomialNB(), bg.BernoulliNB(), bg.CategoricalNB(),
                bg.PoissonNB(rate_prior=2.0), bg.ExponentialNB(mean_prior=1.0)):
        assert not est._make_family().prior_uses_data()
    for est in (bg.LDA(), bg.QDA(), bg.GaussianNB(), bg.PoissonNB(), bg.ExponentialNB(),
                bg.LDA(cov_target=[1.0, 1.0], mean_prior=[0.0, 0.0], cov_dof=5.0,
                       cov_scale=2.0)):
        # the last: every number fixed but the strength is a number, the target given
        fam = est._make_family()
        expected = not isinstance(est, bg.LDA) or est.mean_prior is None
        assert fam.prior_uses_data() == expected


def test_large_fits_hold_the_prior(monkeypatch):
    """Beyond REFIT_MAX_ROWS training rows the data-dependent hyper-parameters are held
    at their full-data values (the downdates), documented in exact_loo."""
    X, y = _data("real"), np.repeat(np.arange(K), N_PER_CLASS)
    fitted = _conjugate(bg.LDA()).fit(X, y)
    refit = exact_loo.loo_log_joint(fitted, X, y)[0]
    monkeypatch.setattr(loo_refit, "REFIT_MAX_ROWS", 10)
    held = exact_loo.loo_log_joint(fitted, X, y)[0]
    assert np.all(np.isfinite(held))
    # held fixed, the left-out row still speaks through the prior: optimistic on average
    assert held[np.arange(y.size), y].sum() > refit[np.arange(y.size), y].sum()


def test_loo_does_not_change_the_fit():
    """The per-row priors are resolved on a copy: the fitted search record stays."""
    X, y = _data("real"), np.repeat(np.arange(K), N_PER_CLASS)
    fitted = _conjugate(bg.QDA(cov_structure="auto")).fit(X, y)
    before = repr(fitted.prior_search_)
    proba = fitted.predict_proba(X)
    exact_loo.loo_log_joint(fitted, X, y)
    assert repr(fitted.prior_search_) == before
    np.testing.assert_array_equal(fitted.predict_proba(X), proba)


def _tied_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Real data in which class 0's second feature takes three values (rows 0 and 1
    hold two of them alone: without either it keeps two, so every row of class 0 may be
    subtracted) and class 1's third feature two values (row 10 holds one alone: without
    it the feature is constant, so class 1's rows are recomputed); class 2 varies
    continuously."""
    X = _data("real", seed)
    y = np.repeat(np.arange(K), N_PER_CLASS)
    X[:N_PER_CLASS, 1] = 50.0
    X[0, 1], X[1, 1] = 60.0, 70.0
    X[N_PER_CLASS:2 * N_PER_CLASS, 2] = 100.0
    X[N_PER_CLASS, 2] = 101.0
    return X, y


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("tied", [True, False])
def test_downdated_statistics_equal_recomputed(tied, weighted, weights):
    """The statistics without a row by subtraction equal those recomputed from the other
    rows (count, mean, scatter to rounding; ``rows`` exactly), where
    :func:`loo_refit.subtractable` allows it; it refuses exactly the rows whose removal
    could leave a feature constant within the class."""
    from bayesgen.families.mvn.family import MVNFamily

    X, y = _tied_data()
    fam = MVNFamily(tied=tied)
    w = weights if weighted else np.ones(y.size)
    full = fam.stats(X, y, w, K)
    safe = loo_refit.subtractable(X, y, w, K, full)
    np.testing.assert_array_equal(safe, y != 1)
    for i in np.flatnonzero(safe):
        for leave in (w[i], 0.5 * w[i]):
            dropped = leave == w[i]
            got = loo_refit.downdated(full, X[i], int(y[i]), leave, dropped=dropped)
            rest = w.copy()
            rest[i] -= leave
            keep = rest > 0
            ref = fam.stats(X[keep], y[keep], rest[keep], K)
            np.testing.assert_allclose(got["count"], ref["count"], rtol=1e-14)
            np.testing.assert_allclose(got["mean"], ref["mean"], rtol=1e-12, atol=1e-12)
            scale = np.abs(ref["scatter"]).max()
            np.testing.assert_allclose(got["scatter"], ref["scatter"], rtol=1e-10,
                                       atol=1e-12 * scale)
            np.testing.assert_array_equal(got["rows"], ref["rows"])
            np.testing.assert_array_equal(got["scatter"], np.swapaxes(got["scatter"], -1, -2))


def test_not_subtractable_with_gaps():
    """Missing entries (pattern-grouped statistics): every row recomputed."""
    from bayesgen.families.mvn.family import MVNFamily

    X, y = _with_gaps(_data("real"), 3), np.repeat(np.arange(K), N_PER_CLASS)
    fam = MVNFamily(tied=True)
    w = np.ones(y.size)
    assert loo_refit.subtractable(X, y, w, K, fam.stats(X, y, w, K)) is None


@pytest.mark.parametrize("est", [bg.LDA(), bg.QDA(), bg.QDA(cov_structure="diag")],
                         ids=["LDA", "QDA", "QDA-diag"])
def test_loo_equals_refit_where_features_become_constant(est):
    """Rows whose removal leaves a feature with two or one values in their class take
    the recomputed statistics; the others the subtraction: both equal the refits."""
    X, y = _tied_data()
    X_test = _data("real", seed=1)[::7][:4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = _conjugate(est).fit(X, y)
        joint, _ = exact_loo.loo_log_joint(fitted, X, y)
        at = exact_loo.loo_log_joint_at(fitted, exact_loo.training_rows(fitted, X, y, None),
                                        X_test)
        own_ref, at_ref = _refits(est, X, y, None, X_test)
    np.testing.assert_allclose(joint[CHECKED], own_ref, rtol=RTOL, atol=RTOL)
    np.testing.assert_allclose(at[CHECKED], at_ref, rtol=RTOL, atol=RTOL)


def _evidence_cases():
    """(stats, m0, kappa0, S0, tied) of small Gaussian samples: n > d and n < d, one
    class nearly the target (evidence rising to the upper bound of C_BOUNDS)."""
    from bayesgen.families import gaussian_stats as gstats

    rng = np.random.default_rng(3)
    cases = []
    for n, d, spread in ((30, 3, 1.0), (8, 6, 1.0), (60, 5, 0.0), (40, 4, 3.0)):
        y = np.repeat(np.arange(2), n // 2)
        A = np.eye(d) + spread * rng.normal(size=(d, d)) / np.sqrt(d)
        X = rng.normal(size=(n, d)) @ A.T + y[:, None]
        for tied in (True, False):
            st = gstats.scatter_stats(X, y, np.ones(n), 2, tied=tied)
            S0 = np.diag(np.diagonal(gstats.class_sum(st["scatter"]) if not tied
                                     else st["scatter"]) / n)
            cases.append((st, X.mean(axis=0), 0.01, S0, tied))
    return cases


def test_warm_started_evidence_dof_is_the_cold_one():
    """cov_dof="auto" from a warm start (Newton on the slope) equals the bounded search
    and its polish, from near and far starts, to 1e-11 relative; starts outside the
    bounds and at non-concave points fall back to the search."""
    from bayesgen.families.mvn import niw_evidence as ne

    for st, m0, kappa0, S0, tied in _evidence_cases():
        d = m0.size
        cold = ne.evidence_dof(st, m0, kappa0, S0, tied=tied)
        for start in (cold, cold * (1 + 1e-3), d + 1.0 + 0.5 * (cold - d - 1.0),
                      d + 1.0 + 3.0 * (cold - d - 1.0), d + 1.0 + 1e-3, d + 1.0 + 1e7,
                      np.nan):
            warm = ne.evidence_dof(st, m0, kappa0, S0, tied=tied, start=start)
            np.testing.assert_allclose(warm, cold, rtol=1e-11)


def test_warm_start_search_both_and_prior():
    """The start reaches evidence_search's joint (nu0, s) search and MVNFamily.prior
    unchanged in its answer."""
    from bayesgen.families.mvn import niw_evidence as ne
    from bayesgen.families.mvn.family import MVNFamily

    for st, m0, kappa0, S0, tied in _evidence_cases()[:4]:
        cold = ne.evidence_search(st, m0, kappa0, S0, tied=tied)
        warm = ne.evidence_search(st, m0, kappa0, S0, tied=tied, start=cold["nu0"] * 1.01)
        np.testing.assert_allclose(warm["nu0"], cold["nu0"], rtol=1e-11)
        both = ne.evidence_search(st, m0, kappa0, S0, tied=tied, scale=None)
        both_warm = ne.evidence_search(st, m0, kappa0, S0, tied=tied, scale=None,
                                       start=both["nu0"])
        np.testing.assert_allclose([both_warm["nu0"], both_warm["scale"]],
                                   [both["nu0"], both["scale"]], rtol=1e-9)
    X, y = _data("real"), np.repeat(np.arange(K), N_PER_CLASS)
    for tied in (True, False):
        fam = MVNFamily(tied=tied, cov_dof="auto")
        st = fam.stats(X, y, np.ones(y.size), K)
        cold = fam.prior(st, record=False)
        warm = fam.prior(st, record=False, start=dict(cold, nu0=cold["nu0"] * 1.05))
        np.testing.assert_allclose(warm["nu0"], cold["nu0"], rtol=1e-11)
        np.testing.assert_allclose(warm["Psi0"], cold["Psi0"], rtol=1e-10)


def test_warm_started_diagonal_search_is_the_cold_one():
    """GaussianNB's var_dof="auto" (diagonal family) from a start near or far from the
    answer: the same root of the evidence's slope as the bounded search's polish."""
    from bayesgen.families import gaussian_evidence as gev
    from bayesgen.families.mvn.diagonal import DiagonalMVNFamily

    rng = np.random.default_rng(5)
    for n, spread in ((5, 0.3), (40, 1.0), (12, 3.0)):
        count = np.full((3, 4), float(n))
        beta = (n - 1) * rng.gamma(2.0, 1.0, size=(3, 4)) ** spread
        cold = gev.search_entries(beta, count, scale=1.0)
        for start in (cold[0], 2.0 + 1.2 * (cold[0] - 2.0), 2.0 + 0.2 * (cold[0] - 2.0),
                      3.0, 1e5, np.nan):
            warm = gev.search_entries(beta, count, scale=1.0, start=start)
            np.testing.assert_allclose(warm, cold, rtol=1e-11)
    X, y = _data("real"), np.repeat(np.arange(K), N_PER_CLASS)
    for tied in (True, False):
        fam = DiagonalMVNFamily(tied=tied, cov_dof="auto")
        st = fam.stats(X, y, np.ones(y.size), K)
        cold = fam.prior(st, record=False)
        warm = fam.prior(st, record=False, start=dict(cold, nu0=cold["nu0"] * 1.05))
        np.testing.assert_allclose(warm["nu0"], cold["nu0"], rtol=1e-11)
