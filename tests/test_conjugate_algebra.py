"""The one conjugate algebra (:mod:`bayesgen.families.conjugate`) against independent
references: scipy.stats log-densities (betabinom, nbinom, lomax,
dirichlet_multinomial), the families' hand-derived closed forms (kept here as oracles,
no longer code paths) and brute-force refits without each row, with sample weights,
missing entries and sparse X."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats as st
from scipy.special import betaln, gammaln

from bayesgen.families import conjugate
from bayesgen.families.bernoulli import BernoulliFamily
from bayesgen.families.categorical.family import CategoricalFamily
from bayesgen.families.exponential import ExponentialFamily
from bayesgen.families.multinomial.family import MultinomialFamily
from bayesgen.families.poisson import PoissonFamily

K = 2


# ------------------------------------------------------------------ references
def ref_bernoulli(post, x):
    """sum_j log BetaBinomial(x_j; 1, a_j, b_j) over the observed entries (scipy)."""
    ok = ~np.isnan(x)
    return float(np.sum(st.betabinom.logpmf(x[ok], 1, post["a"][ok], post["b"][ok])))


def ref_poisson(post, x):
    """sum_j log NegBinomial(x_j; a_j, b_j / (b_j + 1)) (scipy's nbinom)."""
    ok = ~np.isnan(x)
    a, b = post["a"][ok], post["b"][ok]
    return float(np.sum(st.nbinom.logpmf(x[ok], a, b / (b + 1.0))))


def ref_exponential(post, x):
    """sum_j log Lomax(x_j; shape a_j, scale b_j) (scipy's lomax)."""
    ok = ~np.isnan(x)
    return float(np.sum(st.lomax.logpdf(x[ok], post["a"][ok], scale=post["b"][ok])))


#: the categories of every feature of the categorical cases (not the codes 0..C-1)
LEVELS = np.array([1.0, 5.0, 7.0])


def ref_categorical(post, x):
    """sum_j log DirichletMultinomial(one-hot(x_j); a_j, 1) (scipy), over the observed
    entries; x holds category values (:data:`LEVELS`)."""
    out = 0.0
    for j, v in enumerate(x):
        if not np.isnan(v):
            a = post["concentration"][j][: LEVELS.size]
            onehot = (LEVELS == v).astype(int)
            out += st.dirichlet_multinomial.logpmf(onehot, a, 1)
    return float(out)


def ref_multinomial(post, x):
    """log DirichletMultinomial(x_O; a_O, sum x_O) over the observed words O (scipy);
    0 for a row without observed counts."""
    ok = ~np.isnan(x)
    if x[ok].sum() == 0:
        return 0.0
    xo = x[ok].astype(int)
    return float(st.dirichlet_multinomial.logpmf(xo, post["concentration"][ok], xo.sum()))


def data(kind: str, n: int, d: int, seed: int, gaps: bool):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    if kind == "categorical":  # every level twice in every class: refits keep them
        X = LEVELS[(np.arange(n)[:, None] // K + rng.integers(0, 3, (1, d))) % 3]
        X[2 * K * 3:] = LEVELS[rng.integers(0, 3, (max(n - 6 * K, 0), d))]
    elif kind == "multinomial":
        X = rng.poisson(1.0 + y[:, None] * np.arange(d) / d, (n, d)).astype(float)
    elif kind == "bernoulli":
        X = (rng.uniform(size=(n, d)) < 0.3 + 0.4 * y[:, None] / K).astype(float)
    elif kind == "poisson":
        X = rng.poisson(1.0 + y[:, None], (n, d)).astype(float)
    else:
        X = rng.exponential(1.0 + y[:, None], (n, d))
    if gaps:
        X[rng.uniform(size=X.shape) < 0.15] = np.nan
    w = rng.uniform(0.5, 2.0, n)
    return X, y, w


FAMILIES = {
    "bernoulli": (lambda: BernoulliFamily(alpha=1.5, binarize=None), ref_bernoulli),
    "poisson": (lambda: PoissonFamily(alpha=2.0, rate_prior=1.5), ref_poisson),
    "exponential": (lambda: ExponentialFamily(alpha=2.5, mean_prior=0.8), ref_exponential),
    "categorical": (lambda: CategoricalFamily(alpha=1.5), ref_categorical),
    "multinomial": (lambda: MultinomialFamily(alpha=np.array([0.5, 1.0, 2.0, 3.0, 1.5])),
                    ref_multinomial),
}
#: a multinomial fit on rows with missing counts needs data augmentation: no closed form
TRAIN_GAPS = {kind: kind != "multinomial" for kind in FAMILIES}
#: families that take scipy.sparse X
SPARSE = {"bernoulli", "poisson", "multinomial"}


def fitted(kind, X, y, w):
    family = FAMILIES[kind][0]()
    stats = family.stats(X, y, w, K)
    family = family.learned(stats)  # as a fit's family (a categorical family's levels)
    prior = family.prior(stats)
    return family, stats, prior, family.posterior(stats, prior)


def as_input(X, sparse_X: bool):
    return sp.csr_matrix(X) if sparse_X else X


CASES = [(kind, gaps, sparse_X)
         for kind in FAMILIES for gaps in (False, True) for sparse_X in (False, True)
         if not (sparse_X and kind not in SPARSE)]


# ---------------------------------------------------------------- predictive
@pytest.mark.parametrize(("kind", "gaps", "sparse_X"), CASES)
def test_predictive_is_scipy(kind, gaps, sparse_X):
    X, y, w = data(kind, 30, 5, 0, gaps)
    family, _, _, post = fitted(kind, data(kind, 30, 5, 0, False)[0] if not TRAIN_GAPS[kind]
                                else X, y, w)
    ref = FAMILIES[kind][1]
    got = family.log_predictive(as_input(X, sparse_X), post)
    want = np.array([[ref({k: v[c] for k, v in post.items()}, x) for c in range(K)]
                     for x in X])
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)


# ------------------------------------------------------------------ evidence
def oracle_evidence(kind, prior, post, X, w):
    """The hand-derived closed forms the families used to compute."""
    if kind == "bernoulli":
        alpha = prior["alpha"]
        return float(np.sum(betaln(post["a"], post["b"]) - betaln(alpha, alpha)))
    if kind == "categorical":
        conc, alpha, n_cat = post["concentration"], prior["alpha"], prior["n_categories"]
        valid = np.arange(conc.shape[-1]) < n_cat[:, None]
        per_cat = np.where(valid, gammaln(np.where(valid, conc, 1.0))
                           - gammaln(alpha)[:, None], 0.0)
        return float(np.sum(gammaln(n_cat * alpha) - gammaln(conc.sum(axis=-1)))
                     + np.sum(per_cat))
    if kind == "multinomial":
        conc, alpha = post["concentration"], prior["alpha"]
        coefficient = gammaln(X.sum(axis=1) + 1.0) - gammaln(X + 1.0).sum(axis=1)
        return float(np.sum(gammaln(alpha.sum()) - gammaln(conc.sum(axis=1)))
                     + np.sum(gammaln(conc) - gammaln(alpha)) + w @ coefficient)
    alpha, beta = prior["alpha"], prior["beta"]
    out = float(np.sum(alpha * np.log(beta) - gammaln(alpha) + gammaln(post["a"])
                       - post["a"] * np.log(post["b"])))
    if kind == "poisson":
        out -= w @ gammaln(np.nan_to_num(X) + 1.0).sum(axis=1)
    return out


@pytest.mark.parametrize(("kind", "gaps"), [(kind, gaps) for kind in FAMILIES
                                             for gaps in (False, True)
                                             if TRAIN_GAPS[kind] or not gaps])
def test_evidence_is_closed_form_and_chain_rule(kind, gaps):
    X, y, _ = data(kind, 12, 5, 1, gaps)
    w = np.ones(y.size)  # the chain rule holds for unit weights
    family, stats, prior, post = fitted(kind, X, y, w)
    got = family.log_evidence(stats, prior, lambda: (X, w), method="conjugate", who="m")
    assert got == pytest.approx(oracle_evidence(kind, prior, post, X, w), rel=1e-12)
    # chain rule: log p(X) = sum_n log p(x_n | x_<n), each factor from scipy
    ref = FAMILIES[kind][1]
    total = 0.0
    for i in range(y.size):  # rows >= i at weight 0 (a categorical fit keeps its levels)
        s = family.stats(X, y, w * (np.arange(y.size) < i), K)
        p = family.posterior(s, prior)
        total += ref({k: v[y[i]] for k, v in p.items()}, X[i])
    assert got == pytest.approx(total, rel=1e-10)


# --------------------------------------------------------------- leave-one-out
def refit_post(kind, X, y, w, prior, i):
    family = FAMILIES[kind][0]()
    keep = np.arange(y.size) != i
    return family.posterior(family.stats(X[keep], y[keep], w[keep], K), prior)


@pytest.mark.parametrize(("kind", "gaps", "sparse_X"), CASES)
def test_loo_is_refit(kind, gaps, sparse_X):
    X, y, w = data(kind, 16, 5, 2, gaps and TRAIN_GAPS[kind])
    family, _, prior, post = fitted(kind, X, y, w)
    ref = FAMILIES[kind][1]
    Xin = as_input(X, sparse_X)
    got = family.loo_log_predictive(Xin, y, w, post)
    every = family.loo_log_predictive_at(Xin, y, w, post)
    X_test = data(kind, 5, 5, 3, gaps)[0]
    at = family.loo_log_predictive_at(Xin, y, w, post, as_input(X_test, sparse_X))
    assert at.shape == (y.size, 5, K)
    for i in range(y.size):
        p = refit_post(kind, X, y, w, prior, i)
        post_k = [{k: v[c] for k, v in p.items()} for c in range(K)]
        assert got[i] == pytest.approx(ref(post_k[y[i]], X[i]), rel=1e-10, abs=1e-12)
        np.testing.assert_allclose(every[i], [ref(q, X[i]) for q in post_k], rtol=1e-10)
        want = [[ref(q, x) for q in post_k] for x in X_test]
        np.testing.assert_allclose(at[i], want, rtol=1e-10, atol=1e-12)


def test_loo_at_blocks_are_exact(monkeypatch):
    """Tiny blocks (one training row x one test row) give the same answer."""
    X, y, w = data("poisson", 9, 3, 4, True)
    family, _, _, post = fitted("poisson", X, y, w)
    X_test = data("poisson", 4, 3, 5, True)[0]
    want = family.loo_log_predictive_at(X, y, w, post, X_test)
    monkeypatch.setattr(conjugate, "BLOCK", 1)
    got = family.loo_log_predictive_at(sp.csr_matrix(X), y, w, post, X_test)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    np.testing.assert_allclose(family.loo_log_predictive(sp.csr_matrix(X), y, w, post),
                               family.loo_log_predictive(X, y, w, post), rtol=1e-13)


def test_overflow_names_X():
    X, y, w = data("poisson", 6, 2, 6, False)
    family, _, _, post = fitted("poisson", X, y, w)
    with pytest.raises(ValueError, match="overflows float64"):
        family.log_predictive(np.array([[1e308, 1.0]]), post)


def test_improper_prior_has_no_evidence():
    X, y, w = data("poisson", 6, 2, 7, False)
    family = PoissonFamily(alpha=1.0)
    stats = family.stats(X, y, w, K)
    prior = family.prior(stats)
    with pytest.raises(ValueError, match="improper"):
        family.log_evidence(stats, prior, lambda: (X, w), method="conjugate", who="m")


# ------------------------------------------------------------- a joint family
class JointDirichletMultinomial(conjugate.Joint):
    """The Dirichlet-multinomial written jointly (no entry structure), for the core's
    joint path: t(x) = x, log Z = log B(a), h = the multinomial coefficient."""

    def t(self, X):
        return {"a": X}

    def log_z(self, post):
        a = post["a"]
        return gammaln(a).sum(axis=-1) - gammaln(a.sum(axis=-1))

    def log_h(self, X):
        return gammaln(X.sum(axis=1) + 1.0) - gammaln(X + 1.0).sum(axis=1)


def test_joint_path_is_scipy_and_refit():
    rng = np.random.default_rng(8)
    n, d = 10, 4
    X = rng.poisson(2.0, (n, d)).astype(float)
    y = np.arange(n) % K
    w = rng.uniform(0.5, 2.0, n)
    alpha = np.array([1.0, 2.0, 0.5, 3.0])
    post = {"a": alpha + np.stack([w[y == k] @ X[y == k] for k in range(K)])}
    alg = JointDirichletMultinomial()
    got = conjugate.log_predictive(alg, X, post)
    want = [[st.dirichlet_multinomial.logpmf(x, post["a"][k], x.sum()) for k in range(K)]
            for x in X]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    loo = conjugate.loo_log_predictive(alg, X, y, w, post)
    at = conjugate.loo_log_predictive_at(alg, X, y, w, post, X[:3])
    for i in range(n):
        a = post["a"][y[i]] - w[i] * X[i]
        assert loo[i] == pytest.approx(st.dirichlet_multinomial.logpmf(X[i], a, X[i].sum()))
        for j in range(3):
            assert at[i, j, y[i]] == pytest.approx(
                st.dirichlet_multinomial.logpmf(X[j], a, X[j].sum()))
    ev = conjugate.log_evidence(alg, {"a": alpha}, post, X, w)
    want = float(np.sum(alg.log_z(post) - alg.log_z({"a": np.stack([alpha] * K)}))
                 + w @ alg.log_h(X))
    assert ev == pytest.approx(want)
