"""LDA and QDA with missing entries: marginal predictive, EM, data augmentation and the
pattern-grouped NUTS likelihood, against exact references (scipy.stats densities,
brute-force optimisation, per-row computations)."""

import warnings

import numpy as np
import pytest
from scipy import optimize, stats

import bayesgen as bg
from bayesgen.families.mvn import augment, em, missing
from bayesgen.families.mvn import patterns as pat

CHOL = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.3, 0.4, 0.9]])


def make(n=240, d=3, K=2, frac=0.25, seed=0, offset=0.0, scale=1.0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = (rng.standard_normal((n, d)) @ CHOL[:d, :d].T + 1.5 * y[:, None]) * scale + offset
    X[rng.random((n, d)) < frac] = np.nan
    X[3] = np.nan  # a row with nothing observed
    return X, y


@pytest.fixture(scope="module")
def data():
    return make()


def clf_frame_is_identity(Est, X, y):
    frame = Est().fit(X, y)._frame
    return np.all(frame.scale == 1.0) or np.all(frame.loc == 0.0)


def _covs(clf):
    K = clf.classes_.size
    return [np.asarray(clf.covariance_)] * K if isinstance(clf, bg.LDA) else clf.covariance_


@pytest.mark.parametrize("Est", [bg.LDA, bg.QDA])
@pytest.mark.parametrize("method", ["mle", "map"])
def test_point_predictive_is_marginal_by_hand(Est, method):
    X, y = make(offset=5e4, scale=[1e3, 1.0, 1e-3])  # a non-trivial internal frame
    assert not clf_frame_is_identity(Est, X, y)
    clf = Est(method=method).fit(X, y)
    got = clf.predict_joint_log_proba(X[:20])
    covs = _covs(clf)
    for i in range(20):
        o = ~np.isnan(X[i])
        for k in range(2):
            want = np.log(clf.class_prior_[k])
            if o.any():  # scipy in rescaled units (it judges 1e6 vs 1e-6 singular)
                s = np.array([1e3, 1.0, 1e-3])[o]
                want += stats.multivariate_normal(
                    clf.means_[k][o] / s, covs[k][np.ix_(o, o)] / np.outer(s, s)
                ).logpdf(X[i, o] / s) - np.log(s).sum()
            # the reference rounds x / s near 5e7 (feature 2): ~1e-8 absolute
            assert got[i, k] == pytest.approx(want, rel=1e-7, abs=1e-7)
    np.testing.assert_allclose(clf.predict_proba(X[3:4])[0], clf.class_prior_)
    dec = clf.decision_function(X[:20])  # discriminants: the joint up to a row constant
    np.testing.assert_allclose(np.diff(dec, axis=-1) if dec.ndim == 2 else dec,
                               np.diff(got, axis=1)[:, 0], rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("Est", [bg.LDA, bg.QDA])
def test_conjugate_predictive_is_student_t_marginal(Est):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 3)) @ CHOL.T
    y = np.arange(80) % 2
    X[y == 1] += 1.0
    clf = Est(method="conjugate", draws=20, chains=2, random_state=0).fit(X, y)
    assert clf._frame.is_identity
    post, d = clf._posterior, 3
    Xt = rng.standard_normal((6, 3))
    Xt[0, 1] = Xt[1, [0, 2]] = Xt[2, 2] = np.nan
    Xt[3] = np.nan
    got = clf.predict_joint_log_proba(Xt)
    conc = clf.class_count_ + clf.class_alpha_
    for i in range(6):
        o = ~np.isnan(Xt[i])
        for k in range(2):
            Psi = post["Psi"] if isinstance(clf, bg.LDA) else post["Psi"][k]
            nu = np.asarray(post["nu"]) if isinstance(clf, bg.LDA) else post["nu"][k]
            df = nu - d + 1
            kap = post["kappa"][k]
            want = np.log(conc[k] / conc.sum())
            if o.any():
                shape = Psi[np.ix_(o, o)] * (kap + 1) / (kap * df)
                want += stats.multivariate_t(post["m"][k][o], shape, df=df).logpdf(Xt[i, o])
            assert got[i, k] == pytest.approx(want, rel=1e-9, abs=1e-9)


def _brute_force(X, y, tied, prior=None):
    """Maximise the observed-data log-likelihood (+ log NIW prior from scipy.stats) over
    means and Cholesky factors (log diagonal) with BFGS."""
    K, d = 2, X.shape[1]
    n_cov = 1 if tied else K
    tril = np.tril_indices(d)

    def unpack(theta):
        mu = theta[:K * d].reshape(K, d)
        covs = []
        for c in range(n_cov):
            v = theta[K * d + c * len(tril[0]):K * d + (c + 1) * len(tril[0])]
            L = np.zeros((d, d))
            L[tril] = v
            L[np.diag_indices(d)] = np.exp(np.diag(L))
            covs.append(L @ L.T)
        return mu, covs * K if tied else covs

    def negative(theta):
        mu, covs = unpack(theta)
        total = 0.0
        for x, k in zip(X, y, strict=True):
            o = ~np.isnan(x)
            if o.any():
                total += stats.multivariate_normal(mu[k][o], covs[k][np.ix_(o, o)]).logpdf(x[o])
        if prior is not None:
            for c in range(n_cov):
                total += stats.invwishart(prior["nu0"], prior["Psi0"]).logpdf(covs[c])
            for k in range(K):
                total += stats.multivariate_normal(prior["m0"], covs[k] / prior["kappa0"]
                                                   ).logpdf(mu[k])
        return -total

    start = np.concatenate([np.nanmean(X, 0)] * K + [np.eye(d)[tril] * 0] * n_cov)
    res = optimize.minimize(negative, start, method="BFGS", options={"gtol": 1e-8})
    return unpack(res.x), -res.fun


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("method", ["mle", "map"])
def test_em_equals_brute_force_optimiser(tied, method, monkeypatch):
    monkeypatch.setattr(em, "TOL", 1e-14)
    X, y = make(n=40, d=2, frac=0.3, seed=3)
    Est = bg.LDA if tied else bg.QDA
    clf = Est(method=method, cov_dof=None).fit(X, y)
    prior = None
    if method == "map":
        from bayesgen.inference import scoring

        prior = scoring.user_prior(clf)
    (mu, covs), best = _brute_force(X, y, tied, prior)
    np.testing.assert_allclose(clf.means_, mu, atol=2e-5)
    np.testing.assert_allclose(np.asarray(_covs(clf)), np.asarray(covs), atol=2e-5)
    jac = clf._frame.log_jacobian * np.sum(~np.isnan(X).all(1))  # identity frame: 0
    if method == "mle":
        assert clf.em_objective_[-1] - jac == pytest.approx(best, abs=1e-6)


@pytest.mark.parametrize("Est", [bg.LDA, bg.QDA])
@pytest.mark.parametrize("seed", range(4))
def test_em_objective_never_decreases(Est, seed):
    X, y = make(n=150, d=3, K=3, frac=0.5, seed=seed)
    for method in ("mle", "map"):
        clf = Est(method=method).fit(X, y)
        trace = clf.em_objective_
        assert clf.n_iter_ == trace.size - 1 >= 2
        assert np.all(np.diff(trace) >= -1e-9 * np.abs(trace[1:]))


def test_em_max_iter_warns(monkeypatch, data):
    monkeypatch.setattr(em, "MAX_ITER", 2)
    # both EMs stop early: the one of the fit and the one behind cov_dof='auto'
    with pytest.warns(bg.ConvergenceWarning, match="EM .*did not converge") as record:
        clf = bg.QDA(method="mle").fit(*data)
    assert any("EM did not converge" in str(w.message) for w in record)
    assert clf.n_iter_ == 2


@pytest.mark.parametrize("Est", [bg.LDA, bg.QDA])
def test_no_missing_values_unchanged(Est):
    X, y = make(frac=0.0)
    keep = ~np.isnan(X).any(1)  # the row with nothing observed
    X, y = X[keep], y[keep]
    for method in ("mle", "map"):
        clf = Est(method=method).fit(X, y)
        assert not hasattr(clf, "n_iter_") and "groups" not in clf._stats
        # the grouped path on complete data converges in one EM step to the same fit
        family = clf._family
        grouped = missing.stats(family, X, y, np.ones(len(y)), 2)
        params = family.mle(grouped) if method == "mle" else family.map(grouped, clf._prior)
        np.testing.assert_allclose(params["mu"], clf._params["mu"], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(params["cov"], clf._params["cov"], rtol=1e-10, atol=1e-12)
    mle = Est(method="mle").fit(X, y)
    for k in range(2):
        np.testing.assert_allclose(mle.means_[k], X[y == k].mean(0), rtol=1e-12)


def test_group_stats_are_the_weighted_moments_of_each_pattern_and_class(data):
    """Each (pattern, class) group holds the weighted count, mean and centred scatter of
    its rows' observed entries, zero-padded; rows with nothing observed or no weight are
    left out."""
    X, y = data
    X = X.copy()
    X[3] = np.nan
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    w[7] = 0.0
    groups = pat.group_stats(X, y, w, 2)
    seen = 0
    for g, (obs, k) in enumerate(zip(groups["obs"], groups["cls"], strict=True)):
        rows = np.flatnonzero((~np.isnan(X) == obs).all(axis=1) & (y == k) & (w > 0))
        Xo, wg = X[np.ix_(rows, np.flatnonzero(obs))], w[rows]
        mean = wg @ Xo / wg.sum()
        scatter = np.zeros((3, 3))
        scatter[np.ix_(obs, obs)] = (Xo - mean).T * wg @ (Xo - mean)
        assert groups["count"][g] == pytest.approx(wg.sum(), rel=1e-13)
        assert groups["rows"][g] == rows.size
        np.testing.assert_allclose(groups["mean"][g][obs], mean, rtol=1e-13)
        assert not groups["mean"][g][~obs].any()
        np.testing.assert_allclose(groups["scatter"][g], scatter, rtol=1e-12, atol=1e-13)
        seen += rows.size
    assert seen == np.sum((~np.isnan(X)).any(axis=1) & (w > 0))


def test_grouped_loglik_equals_row_by_row(data):
    X, y = data
    rng = np.random.default_rng(5)
    w = rng.uniform(0.5, 2.0, len(y))
    groups = pat.group_stats(X, y, w, 2)
    mu = rng.standard_normal((2, 3))
    A = rng.standard_normal((2, 3, 3))
    cov = A @ A.transpose(0, 2, 1) + np.eye(3)
    cond = pat.condition(groups, {"mu": mu, "cov": cov}, False)
    got = pat.loglik(groups, cond).sum()
    want = sum(wi * stats.multivariate_normal(mu[k][o], cov[k][np.ix_(o, o)]).logpdf(x[o])
               for x, k, wi in zip(X, y, w, strict=True) if (o := ~np.isnan(x)).any())
    assert got == pytest.approx(want, rel=1e-11)
    # the NUTS likelihood (PyTensor) equals it up to the constant
    import pytensor
    import pytensor.tensor as pt

    from bayesgen.families.mvn import pymc_missing
    from bayesgen.families.mvn.family import MVNFamily

    for tied in (False, True):
        c = cov if not tied else cov[0]
        cond = pat.condition(groups, {"mu": mu, "cov": c}, tied)
        exact = pat.loglik(groups, cond).sum()
        const = -0.5 * np.log(2 * np.pi) * (groups["count"] * groups["obs"].sum(1)).sum()
        mu_t, cov_t = pt.dmatrix(), (pt.dmatrix() if tied else pt.dtensor3())
        expr = pymc_missing.stats_loglik(MVNFamily(tied=tied), {"mu": mu_t, "cov": cov_t},
                                              {"groups": groups, "count": np.ones(2)})
        value = pytensor.function([mu_t, cov_t], expr)(mu, c)
        assert value + const == pytest.approx(exact, rel=1e-10)


def test_row_grouping_of_predictions(data):
    X, y = data
    clf = bg.QDA(method="map").fit(X, y)
    whole = clf.predict_joint_log_proba(X)
    one = np.vstack([clf.predict_joint_log_proba(X[i:i + 1]) for i in range(30)])
    np.testing.assert_allclose(whole[:30], one, rtol=1e-12)


def test_completion_matches_per_row_draws():
    """The grouped completion's moments equal those of drawing each row's missing
    coordinates (mean and covariance of the completed scatter entries)."""
    rng = np.random.default_rng(7)
    n, d = 6, 3
    Z = rng.standard_normal((n, d))
    Z[:, 2] = np.nan
    Z[:, 1] = np.where(np.arange(n) < 0, np.nan, Z[:, 1])
    y = np.zeros(n, dtype=int)
    groups = pat.group_stats(Z, y, np.ones(n), 1)
    mu = np.array([[0.2, -0.1, 0.5]])
    cov = np.array([[[1.0, 0.3, 0.5], [0.3, 1.5, -0.4], [0.5, -0.4, 2.0]]])
    cond = pat.condition(groups, {"mu": mu, "cov": cov}, False)
    S = 40000
    cond_s = {k: np.broadcast_to(v, (S, *v.shape)) for k, v in cond.items()}
    mean_g, scat_g = augment.complete(groups, augment.prepare(groups), cond_s, rng)
    # per row: x_2 | x_0, x_1 ~ N(mu_2 + B (x_o - mu_o), C)
    o = np.array([0, 1])
    B = cov[0][2, o] @ np.linalg.inv(cov[0][np.ix_(o, o)])
    C = cov[0][2, 2] - B @ cov[0][o, 2]
    x2 = mu[0, 2] + (Z[:, o] - mu[0, o]) @ B + np.sqrt(C) * rng.standard_normal((S, n))
    full = np.concatenate([np.broadcast_to(Z[:, o], (S, n, 2)), x2[..., None]], axis=-1)
    dev = full - full.mean(1, keepdims=True)
    ref = np.einsum("sni,snj->sij", dev, dev)
    got = scat_g[:, 0]
    np.testing.assert_allclose(mean_g[:, 0].mean(0), full.mean(1).mean(0), atol=0.03)
    np.testing.assert_allclose(got.mean(0), ref.mean(0), rtol=0.03, atol=0.03)
    np.testing.assert_allclose(got.std(0), ref.std(0), rtol=0.05, atol=0.03)
    np.testing.assert_allclose(np.cov(got[:, 2, 2], got[:, 0, 2])[0, 1],
                               np.cov(ref[:, 2, 2], ref[:, 0, 2])[0, 1], rtol=0.1)


def test_mle_never_observed_raises_map_uses_prior():
    X, y = make(n=60, frac=0.1, seed=2)
    X[y == 1, 2] = np.nan
    with pytest.raises(ValueError, match=r"feature x2 .* never observed in class 1"):
        bg.QDA(method="mle").fit(X, y)
    clf = bg.QDA(method="map").fit(X, y)
    assert np.all(np.isfinite(clf.predict_proba(X)))


@pytest.mark.parametrize("Est", [bg.LDA, bg.QDA])
def test_partial_fit_equals_fit(Est, data, monkeypatch):
    monkeypatch.setattr(em, "TOL", 1e-15)  # EM to convergence from either start
    X, y = data
    whole = Est(method="map").fit(X, y)
    parts = Est(method="map")
    parts.partial_fit(X[:50], y[:50], classes=[0, 1])
    parts.partial_fit(np.nan_to_num(X[50:120], nan=0.0), y[50:120])  # a complete batch
    Xall = np.vstack([X[:50], np.nan_to_num(X[50:120], nan=0.0), X[120:]])
    parts.partial_fit(X[120:], y[120:])
    ref = Est(method="map").fit(Xall, y)
    np.testing.assert_allclose(parts._prior["Psi0"], ref._prior["Psi0"], rtol=1e-10)
    np.testing.assert_allclose(parts.means_, ref.means_, atol=1e-7)
    np.testing.assert_allclose(np.asarray(parts.covariance_), np.asarray(ref.covariance_),
                               atol=1e-7)
    assert not np.allclose(whole.means_, ref.means_)


def test_unbiased_divisor_and_far_rows(data):
    X, y = data
    biased = bg.LDA(method="mle").fit(X, y)
    unbiased = bg.LDA(method="mle", divisor="unbiased").fit(X, y)
    n = np.sum(~np.isnan(X).all(1))
    np.testing.assert_allclose(unbiased.covariance_, biased.covariance_ * n / (n - 2))
    far = X[:4].copy()
    far[0] = [1e300, np.nan, 0.0]
    proba = bg.QDA(method="map").fit(X, y).predict_proba(far)
    assert np.all(np.isfinite(proba))
    dec = biased.decision_function(X[:10])
    assert np.all(np.isfinite(dec))


def test_cov_dof_auto_is_fixed_point_of_em_completed_statistics(data):
    X, y = data
    clf = bg.QDA(method="map").fit(X, y)
    d = 3
    assert clf._prior["nu0"] > d + 1
    from bayesgen.families.mvn.niw_evidence import evidence_dof

    p = clf._prior
    S0 = p["Psi0"] / (p["nu0"] - d - 1)
    completed = em.evidence_stats(clf._family, clf._stats, p["m0"], p["kappa0"], S0,
                                       p["nu0"])
    assert evidence_dof(completed, p["m0"], p["kappa0"], S0, tied=False) == pytest.approx(
        p["nu0"], rel=1e-5)


@pytest.mark.parametrize("Est", [bg.LDA, bg.QDA])
def test_data_augmentation_chains(Est, data):
    import arviz as az

    X, y = data
    kw = dict(method="conjugate", draws=200, tune=100, chains=2, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        a = Est(**kw).fit(X, y)
        b = Est(**kw).fit(X, y)
    np.testing.assert_array_equal(a._params["cov"], b._params["cov"])
    assert set(a.idata_.posterior.data_vars) == {"pi", "mu", "cov"}
    assert a.idata_.sample_stats["lp"].shape == (2, 200)
    assert float(az.rhat(a.idata_, var_names=["mu"])["mu"].max()) < 1.05
    assert a.idata_.log_likelihood["xy"].shape == (2, 200, len(y))
    proba = a.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(1), 1.0)
    conc = a.class_count_ + a.class_alpha_  # nothing observed: E[pi | data]
    np.testing.assert_allclose(a.predict_proba(X[3:4])[0], conc / conc.sum(), rtol=1e-12)
    assert a._posterior["m"].ndim == 3  # Rao-Blackwellised stack


@pytest.mark.slow
@pytest.mark.parametrize("Est", [bg.LDA, bg.QDA])
def test_data_augmentation_agrees_with_nuts(Est, data):
    import arviz as az

    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        da = Est(method="conjugate", draws=600, tune=200, chains=2, random_state=1).fit(X, y)
        nuts = Est(method="mcmc", draws=300, tune=300, chains=2, random_state=1,
                   progressbar=False).fit(X, y)
    for name in ("mu", "cov"):
        sa = az.summary(da.idata_, var_names=[name])
        sb = az.summary(nuts.idata_, var_names=[name])
        se = np.sqrt(sa["mcse_mean"] ** 2 + sb["mcse_mean"] ** 2).to_numpy()
        diff = np.abs(sa["mean"] - sb["mean"]).to_numpy()
        keep = sa["sd"].to_numpy() > 0
        assert np.all(diff[keep] < 5 * se[keep] + 1e-3), (name, diff / se)
    # NUTS's predictive is a 600-draw average of Gaussians (noisy for outlying rows),
    # data augmentation's the average of 100 Student-t: agreement within MC error
    np.testing.assert_allclose(da.predict_proba(X), nuts.predict_proba(X), atol=0.05)
