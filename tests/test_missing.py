"""Missing values (NaN / None / pd.NA / null) in the factorised families: exact
references (per-feature fits on the observed rows, scipy.stats log-densities)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import sparse, stats

import bayesgen as bg
from bayesgen.inference.posterior import closed_form_log_pi

# tiny NUTS runs: the handling of missing values is checked, not convergence
pytestmark = pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning")

RNG = np.random.default_rng(11)
N = 80
Y = np.repeat([0, 1], N // 2)


def _holes(X: np.ndarray, rate: float = 0.2, seed: int = 3) -> np.ndarray:
    """X with about ``rate`` of its entries NaN (each column keeps observed entries in
    every class)."""
    rng = np.random.default_rng(seed)
    out = np.array(X, dtype=float)
    out[rng.uniform(size=X.shape) < rate] = np.nan
    return out


DATA = {
    "gaussian": _holes(RNG.normal(size=(N, 3)) * [1.0, 10.0, 0.1] + [0.0, 100.0, -5.0]
                       + Y[:, None]),
    "bernoulli": _holes((RNG.uniform(size=(N, 4)) < 0.3 + 0.4 * Y[:, None]).astype(float)),
    "poisson": _holes(RNG.poisson(2.0 + 2.0 * Y[:, None], size=(N, 4)).astype(float)),
    "categorical": _holes(RNG.integers(0, 3, size=(N, 3)).astype(float)),
    "kernel": _holes(RNG.normal(size=(N, 2)) + Y[:, None]),
    "exponential": _holes(RNG.exponential((1.0 + 2.0 * Y)[:, None] * [1.0, 10.0, 0.1, 1.0],
                                          size=(N, 4))),
}
ESTIMATORS = {
    "gaussian": bg.GaussianNB, "bernoulli": bg.BernoulliNB, "poisson": bg.PoissonNB,
    "categorical": bg.CategoricalNB, "kernel": bg.KernelNB, "exponential": bg.ExponentialNB,
}
#: fitted attributes that are per (class, feature)
ATTRIBUTES = {
    "gaussian": ("theta_", "var_"), "bernoulli": ("feature_log_prob_",),
    "poisson": ("rate_",), "kernel": ("bandwidth_",), "exponential": ("rate_",),
}
CASES = [(name, method) for name in DATA for method in ("mle", "map", "conjugate")
         if not (name == "kernel" and method == "conjugate")]


@pytest.fixture(scope="module")
def fitted():
    return {(name, method): ESTIMATORS[name](method=method, random_state=0).fit(DATA[name], Y)
            for name, method in CASES}


def _feature_fit(name: str, method: str, j: int):
    X = DATA[name]
    rows = ~np.isnan(X[:, j])
    return ESTIMATORS[name](method=method, random_state=0).fit(X[rows][:, [j]], Y[rows])


@pytest.mark.parametrize(("name", "method"), CASES)
def test_fit_equals_per_feature_fit_on_observed_rows(fitted, name, method):
    clf = fitted[name, method]
    for j in range(DATA[name].shape[1]):
        ref = _feature_fit(name, method, j)
        if name == "categorical":
            np.testing.assert_allclose(clf.category_count_[j], ref.category_count_[0])
            if method != "conjugate":  # (conjugate: posterior means of random draws)
                np.testing.assert_allclose(clf.feature_log_prob_[j], ref.feature_log_prob_[0],
                                           rtol=1e-12, atol=1e-12)
        for attr in ATTRIBUTES.get(name, ()):
            got, want = getattr(clf, attr)[:, j], getattr(ref, attr)[:, 0]
            if method == "conjugate":  # posterior means of different random draws
                continue
            np.testing.assert_allclose(got, want, rtol=1e-10, err_msg=f"{attr} feature {j}")
        if method == "conjugate":
            post, ref_post = clf._posterior, ref._posterior
            for key, value in post.items():
                np.testing.assert_allclose(value[:, j], ref_post[key][:, 0], rtol=1e-10,
                                           err_msg=f"posterior {key} feature {j}")


def _by_hand(name: str, clf, x: np.ndarray) -> np.ndarray:
    """log pi_k + sum over observed j of log p(x_j | k) from the fitted attributes."""
    out = np.log(clf.class_prior_).copy()
    for k in range(2):
        for j in np.flatnonzero(~np.isnan(x)):
            if name == "gaussian":
                out[k] += stats.norm.logpdf(x[j], clf.theta_[k, j], np.sqrt(clf.var_[k, j]))
            elif name == "bernoulli":
                out[k] += stats.bernoulli.logpmf(x[j], np.exp(clf.feature_log_prob_[k, j]))
            elif name == "poisson":
                out[k] += stats.poisson.logpmf(x[j], clf.rate_[k, j])
            elif name == "categorical":
                out[k] += clf.feature_log_prob_[j][k, int(x[j])]
            elif name == "exponential":
                out[k] += stats.expon.logpdf(x[j], scale=1.0 / clf.rate_[k, j])
    return out


@pytest.mark.parametrize("name", ["gaussian", "bernoulli", "poisson", "categorical",
                                  "exponential"])
@pytest.mark.parametrize("method", ["mle", "map"])
def test_predict_drops_missing_terms(fitted, name, method):
    clf = fitted[name, method]
    X = DATA[name][:12]
    joint = clf.predict_joint_log_proba(X)
    want = np.array([_by_hand(name, clf, x) for x in X])
    np.testing.assert_allclose(joint, want, rtol=1e-10)
    assert np.isnan(X).any()


def test_gaussian_conjugate_predictive_is_student_t_of_observed(fitted):
    clf = fitted["gaussian", "conjugate"]
    post = clf._posterior
    frame = clf._frame
    X = DATA["gaussian"][:10]
    log_pi = closed_form_log_pi(clf)
    for x, row in zip(X, clf.predict_joint_log_proba(X), strict=True):
        want = log_pi.copy()
        for k in range(2):
            for j in np.flatnonzero(~np.isnan(x)):
                a, b, kappa, m = (post[v][k, j] for v in ("a", "b", "kappa", "m"))
                scale = np.sqrt(b * (kappa + 1) / (a * kappa)) * frame.scale[j]
                want[k] += stats.t.logpdf(x[j], 2 * a, frame.loc[j] + frame.scale[j] * m, scale)
        np.testing.assert_allclose(row, want, rtol=1e-10)


@pytest.mark.parametrize(("name", "method"), CASES)
def test_row_with_nothing_observed_gets_class_prior(fitted, name, method):
    clf = fitted[name, method]
    x = np.full((2, DATA[name].shape[1]), np.nan)
    prior = np.exp(closed_form_log_pi(clf)) if method == "conjugate" else clf.class_prior_
    np.testing.assert_allclose(clf.predict_proba(x), np.tile(prior, (2, 1)), rtol=1e-10)


@pytest.mark.parametrize(("name", "method"), CASES)
def test_never_nan(fitted, name, method):
    clf = fitted[name, method]
    X = DATA[name]
    for out in (clf.predict_proba(X), clf.predict_log_proba(X),
                clf.predict_joint_log_proba(X), clf.decision_function(X)):
        assert not np.isnan(out).any()


def test_kernel_predict_drops_term(fitted):
    clf = fitted["kernel", "map"]
    X = DATA["kernel"]
    x = X[:6]
    want = np.tile(np.log(clf.class_prior_), (6, 1))
    for j in range(X.shape[1]):
        ref = _feature_fit("kernel", "map", j)
        seen = ~np.isnan(x[:, j])
        part = ref.predict_joint_log_proba(x[seen][:, [j]]) - np.log(ref.class_prior_)
        want[seen] += part
    np.testing.assert_allclose(clf.predict_joint_log_proba(x), want, rtol=1e-10)


# ------------------------------------------------------------------ multinomial
def test_multinomial_predict_is_renormalised_marginal():
    X = RNG.poisson(3.0, size=(N, 5)).astype(float)
    clf = bg.MultinomialNB(method="mle").fit(X, Y)
    x = X[:4].copy()
    x[0, 1] = x[1, [0, 3]] = x[3, :] = np.nan
    theta = np.exp(clf.feature_log_prob_)
    joint = clf.predict_joint_log_proba(x)
    for row, got in zip(x, joint, strict=True):
        seen = ~np.isnan(row)
        want = np.log(clf.class_prior_).copy()
        if seen.any():
            for k in range(2):
                p = theta[k, seen] / theta[k, seen].sum()
                want[k] += stats.multinomial.logpmf(row[seen], row[seen].sum(), p)
        np.testing.assert_allclose(got, want, rtol=1e-10)
    conj = bg.MultinomialNB(method="conjugate").fit(X, Y)
    a = conj._posterior["concentration"]
    seen = ~np.isnan(x[0])
    want = [stats.dirichlet_multinomial.logpmf(x[0, seen], a[k, seen], x[0, seen].sum())
            for k in range(2)]
    got = conj.predict_joint_log_proba(x[:1])[0] - closed_form_log_pi(conj)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    dense = conj.predict_joint_log_proba(x)
    np.testing.assert_allclose(conj.predict_joint_log_proba(sparse.csr_matrix(x)), dense,
                               rtol=1e-12)


def test_multinomial_fit_with_missing_runs_em():
    """Fitting on missing counts (issue 14) is EM / augmentation / NUTS, tested against
    exact references in test_multinomial_missing.py; here: it runs and predicts."""
    X = RNG.poisson(3.0, size=(N, 5)).astype(float)
    X[0, 0] = np.nan
    clf = bg.MultinomialNB().fit(X, Y)
    assert clf.n_iter_ >= 1 and np.all(np.isfinite(clf.predict_proba(X)))


# ------------------------------------------------------------- merge, streaming
@pytest.mark.parametrize("name", list(DATA))
def test_partial_fit_and_merge_equal_one_fit(name):
    X = DATA[name].copy()
    X[: N // 4] = np.where(np.isnan(X[: N // 4]), np.nanmean(X, axis=0).round(), X[: N // 4])
    order = np.random.default_rng(0).permutation(N)
    X, y = X[order], Y[order]
    whole = ESTIMATORS[name](method="map").fit(X, y)
    half = N // 2
    stream = ESTIMATORS[name](method="map")
    stream.partial_fit(X[:half], y[:half], classes=[0, 1])
    stream.partial_fit(X[half:], y[half:])
    a = ESTIMATORS[name](method="map").fit(X[:half], y[:half])
    b = ESTIMATORS[name](method="map").fit(X[half:], y[half:])
    merged = bg.merge([a, b])
    for other in (stream, merged):
        np.testing.assert_allclose(other.predict_joint_log_proba(X),
                                   whole.predict_joint_log_proba(X), rtol=1e-9, atol=1e-9)


def test_sparse_nan_equals_dense():
    for name in ("bernoulli", "poisson"):
        X = DATA[name]
        dense = ESTIMATORS[name](method="map").fit(X, Y)
        sp = ESTIMATORS[name](method="map").fit(sparse.csr_matrix(np.nan_to_num(X, nan=0.0))
                                                + _nan_csr(X), Y)
        np.testing.assert_allclose(sp.predict_joint_log_proba(_nan_csr(X) + sparse.csr_matrix(
            np.nan_to_num(X, nan=0.0))), dense.predict_joint_log_proba(X), rtol=1e-12)


def _nan_csr(X: np.ndarray) -> sparse.csr_matrix:
    rows, cols = np.nonzero(np.isnan(X))
    return sparse.csr_matrix((np.full(rows.size, np.nan), (rows, cols)), shape=X.shape)


# ------------------------------------------------------------------ tables
def test_dataframe_none_na_and_polars_null_are_missing():
    pl = pytest.importorskip("polars")
    X = DATA["gaussian"]
    frame = pd.DataFrame({"a": X[:, 0], "b": pd.array(np.round(X[:, 1]), dtype="Float64"),
                          "c": X[:, 2].astype(object)})
    frame.loc[np.isnan(X[:, 1]), "b"] = pd.NA
    frame.loc[np.isnan(X[:, 2]), "c"] = None
    want = bg.GaussianNB(method="map").fit(
        np.column_stack([X[:, 0], np.round(X[:, 1]), X[:, 2]]), Y)
    for table in (frame, pl.from_pandas(frame)):
        got = bg.GaussianNB(method="map").fit(table, Y)
        np.testing.assert_allclose(got.theta_, want.theta_, rtol=1e-12)
        np.testing.assert_allclose(got.predict_proba(table), want.predict_proba(
            np.column_stack([X[:, 0], np.round(X[:, 1]), X[:, 2]])), rtol=1e-12)


def test_categorical_text_column_with_none():
    levels = np.array(["red", "green", "blue"], dtype=object)[RNG.integers(0, 3, N)]
    levels[[1, 5, 9]] = None
    frame = pd.DataFrame({"colour": levels, "x": DATA["gaussian"][:, 0]})
    clf = bg.MixedNB(families="auto", method="map").fit(frame, Y)
    proba = clf.predict_proba(frame)
    assert not np.isnan(proba).any()
    codes = pd.Series(levels).map({"blue": 0.0, "green": 1.0, "red": 2.0}).to_numpy(float)
    ref = bg.CategoricalNB(method="map").fit(codes[:, None], Y)
    np.testing.assert_allclose(clf.categorical0_category_count_[0], ref.category_count_[0])


# -------------------------------------------------------------------- errors
def test_infinity_is_still_an_error():
    X = DATA["gaussian"].copy()
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        bg.GaussianNB().fit(X, Y)
    X = DATA["poisson"].copy()
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        bg.PoissonNB().fit(X, Y)
    clf = bg.PoissonNB().fit(DATA["poisson"], Y)
    with pytest.raises(ValueError, match="infinity"):
        clf.predict(X)


def test_all_missing_column_is_named():
    X = DATA["gaussian"].copy()
    X[:, 1] = np.nan
    with pytest.raises(ValueError, match=r"column x1.*no observed value"):
        bg.GaussianNB().fit(X, Y)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"column 'b'.*no observed value"):
        bg.GaussianNB().fit(frame, Y)


@pytest.mark.parametrize("name", ["gaussian", "bernoulli", "poisson", "categorical",
                                  "exponential"])
def test_never_observed_in_a_class(name):
    X = DATA[name].copy()
    X[Y == 1, 1] = np.nan
    with pytest.raises(ValueError, match=r"feature x1.*never observed in class 1"):
        ESTIMATORS[name](method="mle").fit(X, Y)
    for method in ("map", "conjugate"):
        clf = ESTIMATORS[name](method=method, random_state=0).fit(X, Y)
        assert np.all(np.isfinite(clf.predict_log_proba(X)))


def test_never_observed_uses_the_prior():
    X = DATA["gaussian"].copy()
    X[Y == 1, 1] = np.nan
    clf = bg.GaussianNB(method="map").fit(X, Y)
    prior = clf._prior
    # internal frame: class 1's mean is the prior mean m0, its variance b0 / (a0 + 3/2)
    np.testing.assert_allclose(clf._params["mu"][1, 1], prior["m0"][1], rtol=1e-12)
    np.testing.assert_allclose(clf._params["var"][1, 1], prior["b0"][1] / (prior["a0"][1] + 1.5),
                               rtol=1e-12)


@pytest.mark.parametrize("factory", [bg.LDA, bg.QDA])
def test_lda_qda_accept_missing(factory):
    # LDA/QDA integrate missing entries out (tests/test_missing_mvn.py checks the values)
    clf = factory().fit(DATA["gaussian"], Y)
    assert np.all(np.isfinite(clf.predict_proba(DATA["gaussian"])))


# ----------------------------------------------------------- idata and PPC
def test_observed_data_keeps_gaps_and_ppc_uses_observed_entries(fitted):
    clf = fitted["gaussian", "conjugate"]
    X = DATA["gaussian"]
    x_obs = clf.idata_.observed_data["x"].values
    np.testing.assert_array_equal(np.isnan(x_obs), np.isnan(X))
    clf.sample_posterior_predictive(random_state=1)
    assert not np.isnan(clf.idata_.posterior_predictive["x"].values).any()
    table = bg.ppc_pvalues(clf)
    means = table[(table["statistic"] == "mean") & (table["class"] == 0)]
    np.testing.assert_allclose(means["observed"], np.nanmean(X[Y == 0], axis=0), rtol=1e-12)
    assert not table["p_value"].isna().any()
    assert np.all(np.isfinite(clf.idata_.log_likelihood["xy"].values))


def test_masked_statistics_match_observed_entries():
    from bayesgen.data.missing import masked_stats

    x = np.array([[1.0, np.nan], [2.0, 4.0], [4.0, 1.0], [np.nan, 3.0]])
    rows = np.ones((1, 4), dtype=bool)
    out = masked_stats(x[None], rows, ~np.isnan(x), ("mean", "sd", "min", "max"), True)
    np.testing.assert_allclose(out["mean"][0], np.nanmean(x, axis=0))
    np.testing.assert_allclose(out["sd"][0], np.nanstd(x, axis=0, ddof=1))
    np.testing.assert_allclose(out["min"][0], [1.0, 1.0])
    np.testing.assert_allclose(out["corr"][0], [np.corrcoef([2.0, 4.0], [4.0, 1.0])[0, 1]])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gaussian", "bernoulli"])
def test_mcmc_with_missing_agrees_with_conjugate(fitted, name):
    clf = ESTIMATORS[name](method="mcmc", draws=300, chains=2, random_state=0).fit(DATA[name], Y)
    conj = fitted[name, "conjugate"]
    np.testing.assert_allclose(clf.predict_proba(DATA[name]), conj.predict_proba(DATA[name]),
                               atol=0.03)
