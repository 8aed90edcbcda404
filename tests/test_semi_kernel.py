"""KernelNB and MixedNB's kernel parts with unlabeled rows (bayesgen.semi.kernel):
EM against brute-force KDEs and responsibilities, NUTS potential by hand, identities."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

import bayesgen as bg
from bayesgen.inference import scoring
from bayesgen.semi import nuts


def _data(n=90, seed=0, p_unlabeled=0.75):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.where(y[:, None] == 0, rng.normal(0.0, 1.0, (n, 2)), rng.normal(2.5, 0.6, (n, 2)))
    ys = y.astype(float)
    ys[rng.random(n) < p_unlabeled] = np.nan
    ys[:6] = [0, 1, 0, 1, 0, 1]
    return X, y, ys


@pytest.fixture(scope="module")
def data():
    return _data()


# ------------------------------------------------------------------ brute force
def _kde(z, P, w, h):
    """log sum_j KDE_j(z_j) over the observed j of z (points observed in j only)."""
    total = 0.0
    for j in np.flatnonzero(~np.isnan(z)):
        obs = ~np.isnan(P[:, j])  # in log space: far rows or tiny bandwidths underflow
        total += (logsumexp(norm.logpdf(z[j], P[obs, j], h[j]), b=w[obs])
                  - np.log(w[obs].sum()))
    return total


def _loo(i, Z, y, w, h):
    """Row i's leave-one-out term: one unit of its own weight out of its class's KDE."""
    total = 0.0
    mine = np.flatnonzero(y == y[i])
    u = min(w[i], 1.0)
    for j in np.flatnonzero(~np.isnan(Z[i])):
        pts = mine[~np.isnan(Z[mine, j])]
        v = w[pts].copy()
        v[pts == i] -= u
        total += (logsumexp(norm.logpdf(Z[i, j], Z[pts, j], h[y[i], j]), b=v)
                  - np.log(v.sum()))
    return total


def _by_hand(clf, X, ys, w=None, lam=1.0, method="mle"):
    """The objective, the responsibilities (m, K), in the fit's internal frame."""
    Z = scoring.internal(clf, X)
    lab = ~np.isnan(ys)
    w = np.ones(X.shape[0]) if w is None else w
    unit = w[lab].min() if method == "mle" else 1.0
    w = w / unit
    classes = list(clf.classes_)
    yl = np.array([classes.index(v) for v in ys[lab]])
    Zl, wl, Zu, wu = Z[lab], w[lab], Z[~lab], w[~lab]
    h = clf._params["bandwidth"] if "bandwidth" in clf._params else None
    log_pi = np.log(clf.class_prior_)
    value = sum(wl[i] * (log_pi[yl[i]] + _loo(i, Zl, yl, wl, h)) for i in range(yl.size))
    J = np.array([[log_pi[k] + _kde(z, Zl[yl == k], wl[yl == k], h[k]) for k in range(2)]
                  for z in Zu])
    value += lam * np.sum(wu * logsumexp(J, axis=1))
    if method == "map":
        c, sd = clf._prior["centre"], clf._prior["sd"]
        value += -0.5 * np.sum(((np.log(h) - np.log(c)) / sd) ** 2)
        value += np.sum((clf.class_alpha_ - 1.0) * log_pi)
    return value, np.exp(J - logsumexp(J, axis=1, keepdims=True)), (Zl, yl, wl, Zu, wu)


# ------------------------------------------------------------------ EM
@pytest.mark.parametrize("method", ["mle", "map"])
def test_objective_and_responsibilities_by_hand(data, method):
    X, _, ys = data
    rng = np.random.default_rng(1)
    w = rng.choice([1.0, 2.0, 0.5], size=X.shape[0])
    clf = bg.KernelNB(method=method, unlabeled_weight=0.8).fit(X, ys, sample_weight=w)
    value, R, _ = _by_hand(clf, X, ys, w, lam=0.8, method=method)
    assert np.isclose(clf.em_objective_[-1], value, rtol=1e-10)
    assert np.allclose(clf.predict_proba(X[np.isnan(ys)]), R, atol=1e-10)
    assert clf.n_unlabeled_ == int(np.isnan(ys).sum()) and clf.n_iter_ >= 1


@pytest.mark.parametrize("method", ["mle", "map"])
def test_objective_never_decreases(data, method):
    X, _, ys = data
    Xm = X.copy()
    Xm[np.random.default_rng(2).random(X.shape) < 0.1] = np.nan
    for A in (X, Xm):
        clf = bg.KernelNB(method=method).fit(A, ys)
        assert np.all(np.diff(clf.em_objective_) >= -1e-9 * np.abs(clf.em_objective_[1:]))
        assert clf.em_objective_[-1] > clf.em_objective_[0]  # the unlabeled rows count


def test_bandwidths_maximise_the_expected_objective(data):
    """At convergence each h_kj maximises Q_kj(t) = LOO_kj(t) + lambda sum_n w_n r_nk
    log KDE_kj(x_nj; e^t), brute force on the final responsibilities."""
    X, _, ys = data
    clf = bg.KernelNB(method="mle").fit(X, ys)
    _, R, (Zl, yl, wl, Zu, wu) = _by_hand(clf, X, ys)
    h = clf._params["bandwidth"]
    for k in range(2):
        for j in range(2):
            def Q(t, k=k, j=j):
                hh = h.copy()
                hh[k, j] = np.exp(t)
                loo = sum(wl[i] * _loo(i, Zl[:, [j]], yl, wl, hh[:, [j]])
                          for i in np.flatnonzero(yl == k))
                unl = sum(wu[n] * R[n, k] * _kde(Zu[n, [j]], Zl[yl == k][:, [j]],
                                                 wl[yl == k], hh[k, [j]])
                          for n in range(wu.size))
                return loo + unl
            t = np.log(h[k, j])
            q0 = Q(t)
            assert q0 >= max(Q(t - 1e-3), Q(t + 1e-3)) - 1e-7 * abs(q0)


@pytest.mark.parametrize("method", ["mle", "map"])
def test_lambda_zero_is_labeled_only(data, method):
    X, _, ys = data
    lab = ~np.isnan(ys)
    a = bg.KernelNB(method=method, unlabeled_weight=0.0).fit(X, ys)
    b = bg.KernelNB(method=method).fit(X[lab], ys[lab])
    assert np.array_equal(a.bandwidth_, b.bandwidth_)
    assert np.array_equal(a.predict_joint_log_proba(X), b.predict_joint_log_proba(X))
    assert a.n_iter_ == 0


def test_mixed_kernel_and_gaussian_parts(data):
    """MixedNB: the kernel part as KernelNB's EM; the Gaussian part's means are the
    responsibility-weighted means of all rows (brute force), the objective monotone."""
    X, y, ys = data
    rng = np.random.default_rng(3)
    M = np.column_stack([X, rng.normal(2.0 * y, 1.0)])
    spec = [("kernel", [0, 1]), ("gaussian", [2])]
    clf = bg.MixedNB(families=spec, method="mle").fit(M, ys)
    assert np.all(np.diff(clf.em_objective_) >= -1e-9 * np.abs(clf.em_objective_[1:]))
    lab = ~np.isnan(ys)
    R = clf.predict_proba(M[~lab])
    for k, c in enumerate(clf.classes_):
        wk = np.concatenate([(ys[lab] == c).astype(float), R[:, k]])
        x = np.concatenate([M[lab, 2], M[~lab, 2]])
        assert np.isclose(clf.gaussian1_theta_[k, 0], wk @ x / wk.sum(), rtol=1e-5)
    # the kernel part alone on the same rows: other bandwidths (the Gaussian column
    # changes the responsibilities), same kind of fit
    kern = bg.KernelNB(method="mle").fit(M[:, :2], ys)
    assert clf.kernel0_bandwidth_.shape == kern.bandwidth_.shape
    unlabeled = bg.MixedNB(families=spec, method="mle", unlabeled_weight=0.0).fit(M, ys)
    only = bg.MixedNB(families=spec, method="mle").fit(M[lab], ys[lab])
    assert np.array_equal(unlabeled.kernel0_bandwidth_, only.kernel0_bandwidth_)
    assert np.array_equal(unlabeled.gaussian1_theta_, only.gaussian1_theta_)


def test_errors(data):
    X, _, ys = data
    with pytest.raises(ValueError, match="KernelNB has no conjugate prior"):
        bg.KernelNB(method="conjugate").fit(X, ys)
    with pytest.raises(ValueError, match="every row is unlabeled"):
        bg.KernelNB().fit(X, np.full(X.shape[0], np.nan))
    w = np.ones(X.shape[0])
    w[ys == 1] = 0.0
    with pytest.raises(ValueError, match=r"class 1\.0 has no labeled row"):
        bg.KernelNB().fit(X, ys, sample_weight=w)
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="unlabeled_weight"):
            bg.KernelNB(unlabeled_weight=bad).fit(X, ys)
    with pytest.raises(ValueError, match="no conjugate"):
        bg.MixedNB(families=[("kernel", [0]), ("gaussian", [1])],
                   method="conjugate").fit(X, ys)


# ------------------------------------------------------------------ NUTS
def test_nuts_potential_by_hand(data):
    """unlabeled_loglik at a random point = lambda sum_n w_n logsumexp_k(log pi_k +
    log KDE_k(x_n)) over the labeled points, brute force (missing entries in both)."""
    from bayesgen.inference.model import build_stats_model

    X, _, ys = data
    lab = ~np.isnan(ys)
    Xl = X[lab].copy()
    Xl[2, 0] = np.nan  # a missing entry among the labeled points too
    clf = bg.KernelNB(method="map").fit(Xl, ys[lab])
    Zu = scoring.internal(clf, X[~lab])
    Zu[0, 1] = np.nan
    w = np.linspace(0.5, 1.5, Zu.shape[0])
    model = build_stats_model(clf, nuts.extra_likelihood(Zu, w, 0.6))
    rng = np.random.default_rng(4)
    point = {k: v + 0.3 * rng.standard_normal(np.shape(v))
             for k, v in model.initial_point().items()}
    pot = next(p for p in model.potentials if p.name == "unlabeled_loglik")
    f = model.compile_fn(outs=[pot, model["bandwidth"], model["pi"]],
                         inputs=model.value_vars, on_unused_input="ignore")
    value, h, pi = f(point)
    P, yl, wl = clf._stats["X"], clf._stats["y"], clf._stats["w"]
    J = np.array([[np.log(pi[k]) + _kde(z, P[yl == k], wl[yl == k], h[k]) for k in range(2)]
                  for z in Zu])
    assert np.isclose(value, 0.6 * np.sum(w * logsumexp(J, axis=1)), rtol=1e-10)


@pytest.mark.slow
def test_nuts_samples_the_em_objective(data):
    """NUTS's posterior concentrates around the EM mode (MAP) of the same objective, and
    lambda = 0 samples the labeled-only posterior exactly."""
    X, _, ys = data
    kw = dict(method="mcmc", draws=200, tune=200, chains=2, random_state=0,
              progressbar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        nuts = bg.KernelNB(**kw).fit(X, ys)
        zero = bg.KernelNB(unlabeled_weight=0.0, **kw).fit(X, ys)
        lab = ~np.isnan(ys)
        only = bg.KernelNB(**kw).fit(X[lab], ys[lab])
    em = bg.KernelNB(method="map").fit(X, ys)
    log_h = np.log(nuts.idata_.posterior["bandwidth"].values.reshape(-1, 2, 2))
    assert np.all(np.abs(log_h.mean(0) - np.log(em.bandwidth_)) < 2.0 * log_h.std(0))
    assert np.array_equal(zero._params["bandwidth"], only._params["bandwidth"])


def test_mixed_with_categories_seen_only_unlabeled():
    rng = np.random.default_rng(0)
    n = 120
    y = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(2 * y, 1), rng.integers(0, 3, n) + 3 * y]).astype(float)
    ys = y.astype(float)
    ys[rng.random(n) < 0.7] = np.nan
    ys[:4] = [0, 1, 0, 1]
    X[np.flatnonzero(np.isnan(ys))[:5], 1] = 6.0  # a category no labeled row has
    spec = [("kernel", [0]), ("categorical", [1])]
    for method in ("mle", "map"):
        clf = bg.MixedNB(families=spec, method=method).fit(X, ys)
        assert 6.0 in clf.categorical1_categories_[0]
        assert np.all(np.diff(clf.em_objective_) >= -1e-9 * np.abs(clf.em_objective_[1:]))
        if method == "map":  # (the MLE gives a category unseen in a class probability 0)
            assert np.all(np.isfinite(clf.predict_joint_log_proba(X)))
