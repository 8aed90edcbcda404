"""Exact evidence log p(X, y) (bayesgen.inference.evidence): numerical integration, the chain rule,
units, weights, missing entries, errors, and bg.compare(ic="evidence")."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln
from sklearn.base import clone

import bayesgen as bg
from tests.test_exact_loo import CASES, _data


def _label_evidence(y, alpha=1.0, K=None):
    """Dirichlet-multinomial probability of the label sequence (by the chain rule)."""
    K = K or int(y.max()) + 1
    counts = np.zeros(K)
    total = 0.0
    for label in y:
        total += np.log((counts[label] + alpha) / (counts.sum() + K * alpha))
        counts[label] += 1
    return total


# -------------------------------------------------- numerical integration, d = 1
def test_gaussian_nb_equals_numerical_integration():
    x = np.array([0.3, -0.4, 1.1, 0.2, 1.9, 2.4, 1.6])
    y = np.array([0, 0, 0, 0, 1, 1, 1])
    m0, s0, kappa0, nu0 = 0.5, 1.2, 0.3, 4.0
    est = bg.GaussianNB(method="conjugate", mean_prior=[m0], var_prior=[s0],
                        mean_strength=kappa0, var_dof=nu0).fit(x[:, None], y)
    a0, b0 = nu0 / 2.0, (nu0 - 2.0) * s0 / 2.0
    total = _label_evidence(y)
    for k in (0, 1):
        xs = x[y == k]

        # likelihood x prior on a fine (t = log s2, mu) grid, Simpson's rule (vectorised)
        t = np.linspace(-12.0, 14.0, 801)[:, None]
        mu = np.linspace(-20.0, 20.0, 801)[None, :]
        s2 = np.exp(t)
        log_f = (stats.norm.logpdf(xs[:, None, None], mu, np.sqrt(s2)).sum(axis=0)
                 + stats.invgamma.logpdf(s2, a0, scale=b0)
                 + stats.norm.logpdf(mu, m0, np.sqrt(s2 / kappa0)) + t)
        shift = log_f.max()
        inner = integrate.simpson(np.exp(log_f - shift), x=mu[0], axis=1)
        value = integrate.simpson(inner, x=t[:, 0]) * np.exp(shift)
        total += np.log(value)
    assert est.log_marginal_likelihood() == pytest.approx(total, abs=1e-8)


def test_bernoulli_nb_equals_numerical_integration():
    x = np.array([1, 0, 1, 1, 0, 0, 0, 1, 0])
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
    alpha = 1.7
    est = bg.BernoulliNB(method="map", alpha=alpha, class_alpha=2.0).fit(x[:, None], y)
    total = _label_evidence(y, alpha=2.0)
    for k in (0, 1):
        xs = x[y == k]
        value, _ = integrate.quad(
            lambda t, xs=xs: np.exp(stats.bernoulli.logpmf(xs, t).sum()
                                    + stats.beta.logpdf(t, alpha, alpha)), 0, 1,
            epsabs=1e-14)
        total += np.log(value)
    assert est.log_marginal_likelihood() == pytest.approx(total, abs=1e-9)


# ----------------------------------------------------------------- chain rule
@pytest.mark.parametrize("case", sorted(CASES))
def test_chain_rule(case):
    """log p(D) - log p(D_:m) = sum_{i >= m} log p(x_i, y_i | D_:i) (refits on prefixes)."""
    est, kind = CASES[case]
    X, y = _data(kind, np.random.default_rng(11), n=12)
    start = 6  # the first prefix holds every class
    full = clone(est).fit(X, y).log_marginal_likelihood()
    steps = clone(est).fit(X[:start], y[:start]).log_marginal_likelihood()
    for i in range(start, len(y)):
        prefix = clone(est).fit(X[:i], y[:i])
        steps += prefix.predict_joint_log_proba(X[i:i + 1])[0, y[i]]
    assert full == pytest.approx(steps, abs=1e-8)


@pytest.mark.parametrize("case", ["gaussian", "bernoulli", "poisson", "categorical", "mixed",
                                  "exponential"])
def test_chain_rule_with_missing_entries(case):
    est, kind = CASES[case]
    X, y = _data(kind, np.random.default_rng(12), n=12)
    X[[7, 9, 10], [0, 1, 0]] = np.nan
    full = clone(est).fit(X, y).log_marginal_likelihood()
    steps = clone(est).fit(X[:6], y[:6]).log_marginal_likelihood()
    for i in range(6, len(y)):
        steps += clone(est).fit(X[:i], y[:i]).predict_joint_log_proba(X[i:i + 1])[0, y[i]]
    assert full == pytest.approx(steps, abs=1e-8)


def test_evidence_from_the_first_rows_matches_label_formula():
    """Two rows per class: the chain rule's starting point, computed independently."""
    est = bg.BernoulliNB(method="conjugate", alpha=1.0)  # Beta(1, 1): p(x) = 1/2 per entry
    X = np.array([[1.0], [0.0], [1.0], [1.0]])
    y = np.array([0, 1, 0, 1])
    # per class: Beta(1,1) evidence of (1,1) is 1/3, of (0,1) is 1/6
    expected = _label_evidence(y) + np.log(1 / 3) + np.log(1 / 6)
    assert est.fit(X, y).log_marginal_likelihood() == pytest.approx(expected, abs=1e-12)


# ------------------------------------------------------------- units, weights
@pytest.mark.parametrize("make", [
    lambda: bg.GaussianNB(method="conjugate"),
    lambda: bg.LDA(method="conjugate"),  # cov_dof="auto" and data-aware defaults
    lambda: bg.QDA(method="map", cov_dof=6.0),
])
def test_rescaling_shifts_by_the_jacobian(make):
    X, y = _data("real", np.random.default_rng(13), n=40)
    a = np.array([3.7e5, 1e-3])
    base = make().fit(X, y).log_marginal_likelihood()
    scaled = make().fit(X * a + [1e6, -7.0], y).log_marginal_likelihood()
    assert scaled - base == pytest.approx(-len(y) * np.log(a).sum(), rel=1e-9, abs=1e-7)


def test_rescaling_with_missing_entries_and_mixed():
    X, y = _data("mixed", np.random.default_rng(14), n=30)
    X[[2, 5], 0] = np.nan
    est = bg.MixedNB(method="conjugate", families=[("gaussian", [0, 1]),
                                                    ("poisson", [2, 3]), ("bernoulli", [4])])
    base = clone(est).fit(X, y).log_marginal_likelihood()
    X2 = X.copy()
    X2[:, :2] = X2[:, :2] * [1e4, 0.5]
    shift = -(28 * np.log(1e4) + 30 * np.log(0.5))  # observed entries of each column
    assert clone(est).fit(X2, y).log_marginal_likelihood() - base == pytest.approx(shift,
                                                                                   abs=1e-7)


@pytest.mark.parametrize("case", ["gaussian", "lda", "multinomial", "poisson", "categorical",
                                  "exponential"])
def test_integer_weights_are_replications(case):
    est, kind = CASES[case]
    X, y = _data(kind, np.random.default_rng(15), n=12)
    w = np.array([1, 2, 3, 1, 1, 2, 1, 1, 3, 1, 2, 1])
    weighted = clone(est).fit(X, y, sample_weight=w).log_marginal_likelihood()
    repeated = clone(est).fit(np.repeat(X, w, axis=0), np.repeat(y, w)).log_marginal_likelihood()
    assert weighted == pytest.approx(repeated, abs=1e-8)


def test_fixed_class_prior_label_term():
    X, y = _data("binary", np.random.default_rng(16))
    p = np.array([0.2, 0.3, 0.5])
    free = bg.BernoulliNB(method="conjugate").fit(X, y)
    fixed = bg.BernoulliNB(method="conjugate", class_prior=p).fit(X, y)
    counts = np.bincount(y)
    dm = gammaln(3.0) - gammaln(3.0 + len(y)) + np.sum(gammaln(1.0 + counts))
    diff = fixed.log_marginal_likelihood() - free.log_marginal_likelihood()
    assert diff == pytest.approx(counts @ np.log(p) - dm, abs=1e-10)


def test_methods_share_the_evidence():
    X, y = _data("counts", np.random.default_rng(17))
    # the log x! terms are sums over the rows, which a point fit does not keep
    values = [bg.PoissonNB(method=m, rate_prior=2.0).fit(X, y).log_marginal_likelihood(X, y)
              for m in ("map", "conjugate")]
    assert values[0] == pytest.approx(values[1], abs=1e-12)


# --------------------------------------------------------------------- errors
def test_errors():
    X, y = _data("real", np.random.default_rng(18))
    with pytest.raises(ValueError, match="method='mle' has no prior"):
        bg.GaussianNB(method="mle").fit(X, y).log_marginal_likelihood()
    with pytest.raises(ValueError, match="KernelNB has no closed-form"):
        bg.KernelNB().fit(X, y).log_marginal_likelihood()
    mixed = bg.MixedNB(families=[("kernel", [0]), ("gaussian", [1])]).fit(X, y)
    with pytest.raises(ValueError, match="KernelNB has no closed-form"):
        mixed.log_marginal_likelihood()
    Xm = X.copy()
    Xm[3, 1] = np.nan
    with pytest.raises(ValueError, match="missing entries has no closed-form"):
        bg.LDA(method="map").fit(Xm, y).log_marginal_likelihood()
    Xc, yc = _data("counts", np.random.default_rng(18))
    streamed = bg.MultinomialNB(method="conjugate").partial_fit(Xc, yc, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="needs the training rows"):
        streamed.log_marginal_likelihood()
    assert streamed.log_marginal_likelihood(Xc, yc) == pytest.approx(
        bg.MultinomialNB(method="conjugate").fit(Xc, yc).log_marginal_likelihood(), abs=1e-10)
    # statistics suffice for the others
    streamed = bg.BernoulliNB(method="conjugate").partial_fit(Xc > 2, yc, classes=[0, 1, 2])
    fitted = bg.BernoulliNB(method="conjugate").fit(Xc > 2, yc)
    assert streamed.log_marginal_likelihood() == pytest.approx(
        fitted.log_marginal_likelihood(), abs=1e-10)


# -------------------------------------------------------- compare(ic="evidence")
def test_compare_evidence_table():
    X, y = _data("real", np.random.default_rng(19), n=60)
    models = {"gnb": bg.GaussianNB(method="conjugate").fit(X, y),
              "lda": bg.LDA(method="map").fit(X, y),
              "qda": bg.QDA(method="conjugate", draws=50).fit(X, y)}
    table = bg.compare(models, ic="evidence")
    assert list(table.columns) == ["rank", "log_evidence", "log_bayes_factor", "probability"]
    assert list(table["rank"]) == [0, 1, 2]
    for name, est in models.items():
        assert table.loc[name, "log_evidence"] == est.log_marginal_likelihood()
    best = table["log_evidence"].max()
    np.testing.assert_allclose(table["log_bayes_factor"], table["log_evidence"] - best)
    assert table["log_bayes_factor"].iloc[0] == 0.0
    prob = np.exp(table["log_evidence"] - best)
    np.testing.assert_allclose(table["probability"], prob / prob.sum())
    assert table["log_evidence"].is_monotonic_decreasing

    models["kde"] = bg.KernelNB().fit(X, y)
    with pytest.raises(ValueError, match="model 'kde' has no closed-form evidence"):
        bg.compare(models, ic="evidence")
    other = {"a": models["gnb"], "b": bg.GaussianNB(method="map").fit(X[:50], y[:50])}
    with pytest.raises(ValueError, match="same data"):
        bg.compare(other, ic="evidence")
