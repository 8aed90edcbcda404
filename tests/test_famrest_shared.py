"""The pieces several families now share, against the hand-derived formulas they replace
and brute-force references: the Gamma-rate estimates and posterior (PoissonNB,
ExponentialNB), KernelNB's one bandwidth search (labeled fit, MAP, EM's M-step, missing
entries), the one-hot table product, the PyMC observed entries and MixedNB's part-wise
dispatch."""

from __future__ import annotations

import numpy as np
import pytest

import bayesgen as bg
from bayesgen.families import conjugate, get_family
from bayesgen.families.kernel import missing as km
from bayesgen.families.kernel.bandwidth import silverman

K = 3


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(11)
    y = np.repeat(np.arange(K), 12)
    w = rng.uniform(0.5, 2.0, y.size)
    counts = rng.poisson(1.0 + y[:, None], size=(y.size, 4)).astype(float)
    durations = rng.exponential(1.0 + y[:, None], size=(y.size, 4))
    for X in (counts, durations):
        X[rng.random(X.shape) < 0.1] = np.nan
    return y, w, counts, durations


def test_gamma_rates_are_the_hand_derived_formulas(rows):
    """Poisson: MLE S/N, MAP (S + a - 1)/(N + b), posterior Gamma(S + a, N + b);
    exponential: MLE n/s, MAP (n + a - 1)/(s + b), posterior Gamma(n + a, s + b), with
    S, s the sums and N, n the weights of the observed entries."""
    y, w, counts, durations = rows
    for name, X in (("poisson", counts), ("exponential", durations)):
        fam = get_family(name)(alpha=3.0)
        stats = fam.stats(X, y, w, K)
        prior = fam.prior(stats)
        seen = ~np.isnan(X)
        total = np.stack([(w[y == k, None] * np.where(seen, X, 0.0)[y == k]).sum(0)
                          for k in range(K)])
        weight = np.stack([(w[y == k, None] * seen[y == k]).sum(0) for k in range(K)])
        shape, rate = (total, weight) if name == "poisson" else (weight, total)
        a, b = prior["alpha"], prior["beta"]
        np.testing.assert_allclose(fam.mle(stats)["rate"], shape / rate, rtol=1e-12)
        np.testing.assert_allclose(fam.map(stats, prior)["rate"],
                                   (shape + a - 1.0) / (rate + b), rtol=1e-12)
        post = fam.posterior(stats, prior)
        np.testing.assert_allclose(post["a"], shape + a, rtol=1e-12)
        np.testing.assert_allclose(post["b"], rate + b, rtol=1e-12)


def test_exponential_improper_posterior_still_refused(rows):
    y, w, _, durations = rows
    fam = get_family("exponential")(alpha=1.0)
    X = durations.copy()
    X[y == 0, 1] = 0.0
    stats = fam.stats(X, y, w, K)
    with pytest.raises(ValueError, match="improper"):
        fam.posterior(stats, fam.prior(stats))


def _kernel_stats(X, y, w):
    fam = get_family("kernel")(bandwidth_sd=0.7)
    return fam, fam.stats(X, y, w, K)


def test_em_step_with_zero_weights_is_the_labeled_fit():
    """Unlabeled rows of weight 0 add exactly nothing: the EM search is the labeled one."""
    rng = np.random.default_rng(2)
    y = np.repeat(np.arange(K), 10)
    X = rng.normal(size=(y.size, 2)) + y[:, None]
    fam, stats = _kernel_stats(X, y, np.ones(y.size))
    prior = fam.prior(stats)
    fit = fam.map(stats, prior)
    Z = rng.normal(size=(7, 2))
    em, _ = fam.em_m_step(stats, stats, Z, np.zeros((7, K)), prior, fit)
    np.testing.assert_array_equal(em["bandwidth"], fit["bandwidth"])


def test_em_step_never_descends():
    """With unlabeled rows the M-step's objective at the new bandwidth is >= at the old."""
    rng = np.random.default_rng(3)
    y = np.repeat(np.arange(K), 10)
    X = rng.normal(size=(y.size, 2)) + y[:, None]
    fam, stats = _kernel_stats(X, y, np.ones(y.size))
    old = {"bandwidth": 3.0 * silverman(stats)}
    Z = rng.normal(size=(9, 2)) + 1.0
    A = rng.dirichlet(np.ones(K), size=9)
    new = fam.em_m_step(stats, stats, Z, A, None, old)[0]["bandwidth"]
    assert np.all(np.isfinite(new)) and not np.array_equal(new, old["bandwidth"])


def test_missing_entries_fit_each_feature_alone():
    """With NaN, every feature's bandwidths are those of that feature's observed rows."""
    rng = np.random.default_rng(4)
    y = np.repeat(np.arange(K), 12)
    X = rng.normal(size=(y.size, 3)) + y[:, None]
    X[rng.random(X.shape) < 0.15] = np.nan
    w = rng.integers(1, 3, y.size).astype(float)  # the MLE rescales by the smallest weight
    fam, stats = _kernel_stats(X, y, w)
    for how in ("mle", "map"):
        h = fam.mle(stats) if how == "mle" else fam.map(stats, fam.prior(stats))
        for j in range(X.shape[1]):
            seen = ~np.isnan(X[:, j])
            one, sub = _kernel_stats(X[seen, j:j + 1], y[seen], w[seen])
            ref = one.mle(sub) if how == "mle" else one.map(sub, one.prior(sub))
            np.testing.assert_allclose(h["bandwidth"][:, j], ref["bandwidth"][:, 0],
                                       rtol=1e-12)
    assert km.has_gaps(stats)


def test_onehot_matmul_is_a_lookup():
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 4, size=(6, 3))
    M = rng.random((6, 3)) < 0.3
    T = rng.normal(size=(2, K, 3, 4))
    out = conjugate.onehot_matmul(codes, M, T)
    ref = np.array([[sum(T[s, k, j, codes[n, j]] for j in range(3) if not M[n, j])
                     for s in range(2) for k in range(K)] for n in range(6)])
    np.testing.assert_allclose(out, ref, rtol=1e-14)


def test_mixed_dispatch_sums_the_parts():
    """MixedNB's log-likelihood is the sum of its parts' (each fitted alone)."""
    rng = np.random.default_rng(7)
    y = np.repeat(np.arange(K), 8)
    X = np.column_stack([rng.poisson(2.0 + y), rng.random(y.size) < 0.5]).astype(float)
    mixed = bg.MixedNB(families=[("poisson", [0]), ("bernoulli", [1])]).fit(X, y)
    parts = [cls().fit(X[:, [j]], y) for j, cls in enumerate((bg.PoissonNB, bg.BernoulliNB))]
    prior = np.log(mixed.class_prior_)
    ref = sum(p.predict_joint_log_proba(X[:5, [j]]) - prior for j, p in enumerate(parts))
    np.testing.assert_allclose(mixed.predict_joint_log_proba(X[:5]) - prior, ref,
                               rtol=1e-10)


def test_kernel_model_with_missing_entries_is_the_leave_one_out_likelihood():
    """KernelNB's ``build_model`` on rows with NaN: its ``x_loglik`` potential is the
    unit-weight leave-one-out log-likelihood of each feature's observed points (brute
    force; it was NaN before the per-feature path was used there)."""
    from scipy import stats as st

    rng = np.random.default_rng(8)
    y = np.repeat(np.arange(2), 10)
    X = rng.normal(size=(20, 2)) + y[:, None]
    X[[1, 5, 12], [0, 1, 1]] = np.nan
    model = bg.KernelNB(method="map").fit(X, y).build_model(X, y)
    point = model.initial_point()
    potential = model.replace_rvs_by_values([model["x_loglik"]])[0]
    got = model.compile_fn(potential, inputs=model.value_vars, on_unused_input="ignore")(point)
    h = np.exp(point["bandwidth_log"])
    ref = 0.0
    for j in range(2):
        for k in range(2):
            p = X[(y == k) & ~np.isnan(X[:, j]), j]
            for i in range(p.size):
                dens = st.norm.pdf(p[i], np.delete(p, i), h[k, j]).sum() / (p.size - 1)
                ref += np.log(dens)
    np.testing.assert_allclose(got, ref, rtol=1e-10)
