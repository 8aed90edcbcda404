"""MultinomialNB fitted on rows with missing counts, against exact references: a
brute-force optimiser of the observed-data log-likelihood (per row, theta renormalised
over the observed features), numerical integration over the simplex, per-row
log-likelihoods for the NUTS potential and ``model_``."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest
from scipy import optimize, sparse, stats
from scipy.special import logsumexp

import bayesgen as bg
from bayesgen.exceptions import ConvergenceWarning
from bayesgen.families.multinomial import missing as mm

THETA = np.array([[0.15, 0.35, 0.5], [0.5, 0.3, 0.2]])


def _data(n: int = 60, rate: float = 0.3, seed: int = 0, total: int = 12):
    """Counts from THETA (n/2 rows per class) with about ``rate`` of entries missing,
    one row with everything missing and one with observed total 0 per class."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = np.array([rng.multinomial(total, THETA[k]) for k in y], dtype=float)
    X[rng.uniform(size=X.shape) < rate] = np.nan
    X[0] = X[n // 2] = np.nan
    X[1] = [0.0, np.nan, 0.0]
    return X, y


def _ref_loglik(theta: np.ndarray, X: np.ndarray, y: np.ndarray, w=None) -> float:
    """sum_n w_n log Multinomial(x_nO; m_n, theta_yO / p_yO) without the coefficients,
    row by row from X."""
    w = np.ones(len(y)) if w is None else w
    seen = ~np.isnan(X)
    X0 = np.where(seen, X, 0.0)
    t = theta[y]
    m = X0.sum(axis=1)
    p = (seen * t).sum(axis=1)
    with np.errstate(divide="ignore"):
        log_p = np.where(m > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
    return float(w @ ((X0 * np.log(t)).sum(axis=1) - m * log_p))


def _coefficients(X: np.ndarray) -> float:
    """sum_n [log m_n! - sum_{j in O} log x_nj!]."""
    X0 = np.nan_to_num(X)
    return float(np.sum(stats.multinomial.logpmf(X0, X0.sum(axis=1), np.ones(3) / 3)
                        + X0.sum(axis=1) * np.log(3.0)))


def _brute_force(X, y, alpha=None, w=None) -> np.ndarray:
    """argmax of the observed-data log-likelihood (+ log Dirichlet) over softmax logits."""
    K, d = 2, X.shape[1]

    def theta_of(v):
        z = np.concatenate([np.zeros((K, 1)), v.reshape(K, d - 1)], axis=1)
        return np.exp(z - logsumexp(z, axis=1, keepdims=True))

    def neg(v):
        theta = theta_of(v)
        value = _ref_loglik(theta, X, y, w)
        if alpha is not None:
            value += sum(stats.dirichlet.logpdf(t, alpha) for t in theta)
        return -value

    res = optimize.minimize(neg, np.zeros(K * (d - 1)), method="BFGS",
                            options={"gtol": 1e-10, "maxiter": 10_000})
    return theta_of(res.x)


@pytest.fixture(scope="module")
def data():
    return _data()


@pytest.fixture(scope="module")
def fits(data):
    X, y = data
    return {m: bg.MultinomialNB(method=m, random_state=0).fit(X, y) for m in ("mle", "map")}


# ------------------------------------------------------------------------- EM
@pytest.mark.parametrize("method", ["mle", "map"])
def test_em_equals_brute_force_optimiser(data, fits, method):
    X, y = data
    clf = fits[method]
    alpha = None if method == "mle" else np.full(3, 2.0)
    want = _brute_force(X, y, alpha)
    np.testing.assert_allclose(np.exp(clf.feature_log_prob_), want, atol=1e-6)
    # the reference really differs from the available-case (observed-only) estimate
    c = clf.feature_count_ + (0.0 if alpha is None else 1.0)
    assert np.abs(c / c.sum(axis=1, keepdims=True) - want).max() > 1e-3


@pytest.mark.parametrize("method", ["mle", "map"])
def test_em_objective_monotone_and_exact(data, fits, method):
    X, y = data
    clf = fits[method]
    obj = clf.em_objective_
    assert clf.n_iter_ == obj.size - 1 >= 2
    assert np.all(np.diff(obj) >= -1e-12 * np.abs(obj[1:]))
    theta = np.exp(clf.feature_log_prob_)
    want = _ref_loglik(theta, X, y)
    if method == "map":
        want += sum(stats.dirichlet.logpdf(t, np.full(3, 2.0)) for t in theta)
    np.testing.assert_allclose(obj[-1], want, rtol=1e-12)


def test_em_max_iter_warns(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(mm, "MAX_ITER", 2)
    with pytest.warns(ConvergenceWarning, match="EM did not converge in 2"):
        clf = bg.MultinomialNB(method="map").fit(X, y)
    assert clf.n_iter_ == 2


def test_weights_are_replication_counts(data):
    X, y = data
    w = np.random.default_rng(1).integers(1, 4, size=y.size).astype(float)
    for method in ("mle", "map"):
        a = bg.MultinomialNB(method=method).fit(X, y, sample_weight=w)
        b = bg.MultinomialNB(method=method).fit(np.repeat(X, w.astype(int), axis=0),
                                                np.repeat(y, w.astype(int)))
        np.testing.assert_allclose(a.feature_log_prob_, b.feature_log_prob_, rtol=1e-9)
    want = _brute_force(X, y, None, w)
    np.testing.assert_allclose(np.exp(bg.MultinomialNB(method="mle").fit(
        X, y, sample_weight=w / 7.0).feature_log_prob_), want, atol=1e-6)


def test_complete_data_unchanged_and_empty_rows_contribute_nothing(data):
    X, y = data
    full = np.nan_to_num(X)
    for method, shift in (("mle", 0.0), ("map", 1.0)):
        clf = bg.MultinomialNB(method=method).fit(full, y)
        c = np.stack([full[y == k].sum(axis=0) for k in (0, 1)]) + shift
        assert np.array_equal(clf._params["theta"], c / c.sum(axis=1, keepdims=True))
        assert not hasattr(clf, "n_iter_") and "groups" not in clf._stats
        # rows with nothing observed (or observed total 0) change nothing but pi
        extra = np.array([[np.nan] * 3, [0.0, np.nan, np.nan], [np.nan] * 3])
        gap = bg.MultinomialNB(method=method).fit(np.vstack([full, extra]),
                                                  np.r_[y, 0, 1, 1])
        np.testing.assert_allclose(gap.feature_log_prob_, clf.feature_log_prob_,
                                   rtol=1e-12, atol=1e-15)
        assert gap.n_iter_ == 2  # one step to the optimum, one that confirms it
    conj = bg.MultinomialNB(method="conjugate", random_state=0).fit(full, y)
    assert np.array_equal(conj._posterior["concentration"], c + 1.0)


# ------------------------------------------------------------- bad input
def test_mle_identifiability_errors_and_prior_fallback():
    X, y = _data(seed=2)
    bad = X.copy()
    bad[y == 1] = np.nan  # class 1: every count missing
    with pytest.raises(ValueError, match="class 1 has no observed count"):
        bg.MultinomialNB(method="mle").fit(bad, y)
    bad = X.copy()
    bad[y == 1, 2] = np.nan  # feature x2 never observed in class 1
    with pytest.raises(ValueError, match=r"feature x2 \(position 2\) is never observed in "
                                         r"class 1"):
        bg.MultinomialNB(method="mle").fit(bad, y)
    bad = X.copy()  # class 0: rows observe {x0, x1} or {x2} only, never linked
    rows = np.flatnonzero(y == 0)
    bad[rows[::2], 2] = np.nan
    bad[rows[1::2], :2] = np.nan
    with pytest.raises(ValueError, match=r"in class 0 features x0 .* and x2 .* never linked"):
        bg.MultinomialNB(method="mle").fit(bad, y)
    for method in ("map", "conjugate"):
        with warnings.catch_warnings():  # the prior alone identifies the split: data
            warnings.simplefilter("ignore", ConvergenceWarning)  # augmentation mixes slowly
            clf = bg.MultinomialNB(method=method, random_state=0, draws=200).fit(bad, y)
        theta = np.exp(clf.feature_log_prob_)
        assert np.all(np.isfinite(theta)) and np.allclose(theta.sum(axis=1), 1.0)


def test_all_missing_column_is_the_existing_error(data):
    X, y = data
    bad = X.copy()
    bad[:, 1] = np.nan
    with pytest.raises(ValueError, match=r"column x1 .* has no observed value"):
        bg.MultinomialNB().fit(bad, y)


# ------------------------------------------------------ streaming, sparse
def test_partial_fit_merge_and_sparse_equal_one_fit(data):
    X, y = data
    whole = bg.MultinomialNB(method="map").fit(X, y)
    order = np.random.default_rng(0).permutation(y.size)
    Xo, yo = X[order], y[order]
    stream = bg.MultinomialNB(method="map")
    stream.partial_fit(np.nan_to_num(Xo[:20]), yo[:20], classes=[0, 1])  # complete batch
    stream.partial_fit(Xo[20:], yo[20:])
    parts = [bg.MultinomialNB(method="map").fit(Xo[i::3], yo[i::3]) for i in range(3)]
    merged = bg.merge(parts)
    ref = bg.MultinomialNB(method="map").fit(np.vstack([np.nan_to_num(Xo[:20]), Xo[20:]]), yo)
    np.testing.assert_allclose(stream.feature_log_prob_, ref.feature_log_prob_, rtol=1e-10)
    np.testing.assert_allclose(merged.feature_log_prob_, whole.feature_log_prob_, rtol=1e-10)
    assert merged._stats["groups"]["cls"].size == whole._stats["groups"]["cls"].size
    Xs = sparse.csr_matrix(np.nan_to_num(X, nan=-1.0))
    Xs.data[Xs.data == -1.0] = np.nan  # explicit NaN stored values
    for method in ("mle", "map"):
        dense = bg.MultinomialNB(method=method).fit(X, y)
        sp = bg.MultinomialNB(method=method).fit(Xs, y)
        np.testing.assert_allclose(sp.feature_log_prob_, dense.feature_log_prob_, rtol=1e-12)
        assert sp.n_iter_ == dense.n_iter_
    assert bg.MultinomialNB().__sklearn_tags__().input_tags.allow_nan


# --------------------------------------------------------- posterior draws
def _grid_posterior_mean(X, y, k: int, alpha: float = 2.0, n: int = 600) -> np.ndarray:
    """E[theta_k | data] by a midpoint rule over the 2-simplex (3 features)."""
    u = (np.arange(n) + 0.5) / n
    a, b = np.meshgrid(u, u, indexing="ij")
    keep = a + b < 1.0
    theta = np.stack([a[keep], b[keep], 1.0 - a[keep] - b[keep]], axis=1)  # (P, 3)
    rows = (y == k) & (np.nansum(X, axis=1) > 0)  # the others have likelihood 1
    seen = ~np.isnan(X[rows])
    X0 = np.where(seen, X[rows], 0.0)
    logp = np.log(theta) @ (X0.sum(axis=0) + alpha - 1.0)
    logp -= np.log(theta @ seen.T) @ X0.sum(axis=1)
    w = np.exp(logp - logp.max())
    return w @ theta / w.sum()


@pytest.fixture(scope="module")
def conjugate(data):
    X, y = data
    return bg.MultinomialNB(method="conjugate", random_state=0, draws=1500, tune=200,
                            chains=2).fit(X, y)


def test_data_augmentation_matches_numerical_integration(data, conjugate):
    X, y = data
    summary = az.summary(conjugate.idata_, var_names=["theta"])
    mean = summary["mean"].to_numpy().reshape(2, 3)
    mcse = summary["mcse_mean"].to_numpy().reshape(2, 3)
    want = np.stack([_grid_posterior_mean(X, y, k) for k in (0, 1)])
    assert np.all(np.abs(mean - want) < 4.0 * mcse + 1e-3), (mean, want)
    assert summary["r_hat"].max() < 1.01
    post = conjugate.idata_.posterior["theta"].values.reshape(-1, 2, 3)
    np.testing.assert_allclose(post.mean(axis=0), want, atol=6e-3)
    assert conjugate._posterior["concentration"].shape[1:] == (2, 3)
    assert "lp" in conjugate.idata_.sample_stats


def test_posterior_groups_keep_gaps(data, conjugate):
    X, y = data
    clf = conjugate
    obs = clf.idata_.observed_data["x"].values
    assert np.array_equal(np.isnan(obs), np.isnan(X))
    theta = clf._params["theta"][:3]
    log_pi = clf._log_pi_draws[:3]
    ll = clf.idata_.log_likelihood["xy"].values.reshape(-1, y.size)[:3]
    for s in range(3):
        for n in (0, 1, 2, 5, 40):
            seen = ~np.isnan(X[n])
            want = log_pi[s, y[n]]
            if X[n, seen].sum() > 0:
                p = theta[s, y[n], seen] / theta[s, y[n], seen].sum()
                want += stats.multinomial.logpmf(X[n, seen], X[n, seen].sum(), p)
            np.testing.assert_allclose(ll[s, n], want, rtol=1e-10)
    joint = clf.predict_joint_log_proba(X[:5])
    np.testing.assert_allclose(clf.score_samples(X[:5]), logsumexp(joint, axis=1), rtol=1e-12)
    assert np.all(np.isfinite(joint))
    idata = clf.sample_posterior_predictive(random_state=0)
    rep = idata.posterior_predictive["x"].values
    assert rep.shape == (2, 1500, *X.shape) and np.all(np.isfinite(rep))


def test_mean_totals_complete_the_missing_counts():
    X, y = _data(n=2000, rate=0.3, seed=5, total=20)
    clf = bg.MultinomialNB(method="map").fit(X, y)
    np.testing.assert_allclose(clf.fitted_.family.sample_inputs(clf.fitted_.stats)["total"],
                               20.0, rtol=0.05)
    assert np.all(np.nansum(X, axis=1).mean() < 0.8 * 20.0)


# ----------------------------------------------------------------- PyMC
def _point(model, theta: np.ndarray) -> dict:
    point = model.initial_point()
    tr = model.rvs_to_transforms[model["theta"]]
    name = model.rvs_to_values[model["theta"]].name
    point[name] = tr.forward(theta).eval()
    return point


def test_stats_potential_and_model_equal_per_row_loglik(data, fits):
    from bayesgen.inference.model import build_stats_model

    X, y = data
    clf = fits["map"]
    theta = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    model = build_stats_model(clf)
    [potential] = model.replace_rvs_by_values([model["x_loglik"]])
    fn = model.compile_fn(potential, inputs=model.value_vars, on_unused_input="ignore")
    np.testing.assert_allclose(fn(_point(model, theta)), _ref_loglik(theta, X, y), rtol=1e-12)
    Xs = sparse.csr_matrix(np.nan_to_num(X, nan=-1.0))  # sparse X, NaN stored explicitly
    Xs.data[Xs.data == -1.0] = np.nan
    model = build_stats_model(bg.MultinomialNB(method="map").fit(Xs, y))
    [potential] = model.replace_rvs_by_values([model["x_loglik"]])
    fn = model.compile_fn(potential, inputs=model.value_vars, on_unused_input="ignore")
    np.testing.assert_allclose(fn(_point(model, theta)), _ref_loglik(theta, X, y), rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gen = clf.build_model(X, y)
    logp = gen.compile_logp(vars=[gen["x"]], jacobian=False)
    want = _ref_loglik(theta, X, y) + _coefficients(X)
    np.testing.assert_allclose(logp(_point(gen, theta)), want, rtol=1e-12)


@pytest.mark.slow
def test_nuts_matches_numerical_integration(data):
    X, y = data
    clf = bg.MultinomialNB(method="mcmc", random_state=1, draws=500, tune=300,
                           chains=2).fit(X, y)
    summary = az.summary(clf.idata_, var_names=["theta"])
    mean = summary["mean"].to_numpy().reshape(2, 3)
    mcse = summary["mcse_mean"].to_numpy().reshape(2, 3)
    want = np.stack([_grid_posterior_mean(X, y, k) for k in (0, 1)])
    assert np.all(np.abs(mean - want) < 4.0 * mcse + 1e-3), (mean, want)


def test_save_load_and_dask_with_gaps(data, tmp_path):
    da = pytest.importorskip("dask.array")
    X, y = data
    head = bg.MultinomialNB(method="map").fit(X[:40], y[:40])
    head.save(tmp_path / "m.nc")
    loaded = bg.load(tmp_path / "m.nc")
    np.testing.assert_array_equal(loaded.predict_proba(X), head.predict_proba(X))
    loaded.partial_fit(X[40:], y[40:])
    whole = bg.MultinomialNB(method="map").fit(X, y)
    np.testing.assert_allclose(loaded.feature_log_prob_, whole.feature_log_prob_, rtol=1e-10)
    # chunks of 20 rows hold one class each: the groups' class index is re-indexed
    lazy = bg.MultinomialNB(method="map").fit(da.from_array(X, chunks=20),
                                              da.from_array(y, chunks=20))
    np.testing.assert_allclose(lazy.feature_log_prob_, whole.feature_log_prob_, rtol=1e-10)
    Z = np.random.default_rng(0).normal(size=(60, 3)) + y[:, None]
    Z[np.isnan(X)] = np.nan
    Z[0, 0] = 1.0  # no all-missing row (LDA keeps none)
    lda = bg.LDA(method="map", cov_dof=6.0).fit(da.from_array(Z, chunks=20),
                                                 da.from_array(y, chunks=20))
    np.testing.assert_allclose(lda.means_, bg.LDA(method="map", cov_dof=6.0).fit(Z, y).means_,
                               rtol=1e-8)


def test_no_closed_forms_after_a_fit_with_gaps(conjugate):
    from bayesgen.inference import exact_loo

    assert not exact_loo.supports(conjugate)
    with pytest.raises(ValueError, match="posterior of theta is not a Dirichlet"):
        conjugate.log_marginal_likelihood()


def test_mixed_part_and_unlabeled_rows_with_gaps(data):
    X, y = data
    G = np.c_[np.random.default_rng(3).normal(size=y.size), X]
    families = [("gaussian", [0]), ("multinomial", [1, 2, 3])]
    mixed = bg.MixedNB(families=families, method="map").fit(G, y)
    alone = bg.MultinomialNB(method="map").fit(X, y)
    np.testing.assert_allclose(mixed._params["multinomial1_theta"], alone._params["theta"],
                               rtol=1e-12)
    with pytest.raises(ValueError, match="MixedNB multinomial part with missing counts"):
        bg.MixedNB(families=families, method="conjugate").fit(G, y)
    yu = y.astype(object)
    yu[::4] = None  # unlabeled rows: EM over the classes and the missing counts
    semi = bg.MultinomialNB(method="map").fit(X, yu)
    assert np.all(np.diff(semi.em_objective_) >= -1e-9 * np.abs(semi.em_objective_[1:]))
    with pytest.raises(ValueError, match="both missing values in X and unlabeled rows"):
        bg.MultinomialNB(method="conjugate").fit(X, yu)
