"""scipy.sparse input for MultinomialNB, BernoulliNB and PoissonNB (issue 13.1).

The reference is the same estimator on the dense matrix (itself tested against
scikit-learn and scipy.stats), and scikit-learn's text pipelines. Sparse results must
equal dense ones to 1e-10 for every format, family and method; fitting and predicting
must never densify X (checked with tracemalloc on a matrix whose dense form would
need gigabytes).
"""

from __future__ import annotations

import tracemalloc
import warnings

import arviz as az
import numpy as np
import pytest
from scipy import sparse
from sklearn import naive_bayes as sknb
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.pipeline import make_pipeline

import bayesgen as bg
from bayesgen.data import sparse as _sparse
from bayesgen.inference.rows import kept as kept_rows

# tiny NUTS runs (shapes and agreement are checked, not convergence); an MLE zero for
# every class falls back to the class prior with a warning; PSIS-LOO of few draws
pytestmark = [
    pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning"),
    pytest.mark.filterwarnings("ignore:.*zero likelihood under every class:bayesgen.DataWarning"),
    pytest.mark.filterwarnings(
        "ignore:Estimated shape parameter of Pareto distribution:UserWarning:arviz"),
]

FAMILIES = {"multinomial": bg.MultinomialNB, "bernoulli": bg.BernoulliNB, "poisson": bg.PoissonNB}
FORMATS = {
    "csr_matrix": sparse.csr_matrix,
    "csc_matrix": sparse.csc_matrix,
    "coo_matrix": sparse.coo_matrix,
    "csr_array": sparse.csr_array,
    "csc_array": sparse.csc_array,
}
POINT = ("mle", "map")


def count_data(name: str, n: int = 150, d: int = 40, seed: int = 0):
    """Sparse-ish integer counts (about 85% zeros), 3 classes; binary for Bernoulli."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    rate = 0.15 * (1 + 2 * rng.uniform(size=(3, d)))
    X = rng.poisson(rate[y]).astype(float)
    return ((X > 0).astype(float) if name == "bernoulli" else X), y


def make(name: str, method: str, **kw):
    options = {"method": method, "draws": 40, "chains": 2, "tune": 40, "random_state": 3,
               "progressbar": False}
    return FAMILIES[name](**options, **kw)


def assert_same_fit(dense, sp, X, Xs):
    np.testing.assert_allclose(sp.predict_joint_log_proba(Xs), dense.predict_joint_log_proba(X),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(sp.predict_proba(Xs), dense.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_allclose(sp.decision_function(Xs), dense.decision_function(X),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(sp.predict(Xs), dense.predict(X))
    np.testing.assert_allclose(sp.class_count_, dense.class_count_, rtol=1e-12)
    np.testing.assert_allclose(sp.feature_count_, dense.feature_count_, rtol=1e-12)
    for key in ("feature_log_prob_", "rate_"):
        if hasattr(dense, key):
            np.testing.assert_allclose(getattr(sp, key), getattr(dense, key), rtol=1e-10)


# ------------------------------------------------------------ sparse == dense
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("method", ["mle", "map", "conjugate"])
@pytest.mark.parametrize("name", list(FAMILIES))
def test_sparse_equals_dense(name, method, fmt):
    X, y = count_data(name)
    w = np.random.default_rng(1).uniform(0.5, 2.0, y.size)
    Xs = FORMATS[fmt](X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # MLE: rows impossible under all
        dense = make(name, method).fit(X, y, sample_weight=w)
        sp = make(name, method).fit(Xs, y, sample_weight=w)
        assert_same_fit(dense, sp, X, Xs)
    if method == "conjugate":
        np.testing.assert_allclose(sp.predict_proba_draws(Xs).values,
                                   dense.predict_proba_draws(X).values, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sp.idata_.log_likelihood["xy"].values,
                                   dense.idata_.log_likelihood["xy"].values, rtol=1e-10)
        np.testing.assert_array_equal(sp.idata_.observed_data["x"].values, X)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FAMILIES))
def test_sparse_mcmc_equals_dense(name):
    """Integer counts and unit weights make the statistics bit-identical, so NUTS with
    the same seed gives the same draws."""
    X, y = count_data(name, n=90, d=6)
    dense = make(name, "mcmc").fit(X, y)
    sp = make(name, "mcmc").fit(sparse.csr_array(X), y)
    for key in dense._stats:
        np.testing.assert_array_equal(sp._stats[key], dense._stats[key])
    assert_same_fit(dense, sp, X, sparse.csr_array(X))


def test_sparse_tags_and_dense_only_estimators():
    for cls in FAMILIES.values():
        assert cls().__sklearn_tags__().input_tags.sparse
    X, y = count_data("multinomial")
    Xs = sparse.csr_matrix(X)
    dense_only = [bg.GaussianNB(), bg.LDA(), bg.QDA(), bg.KernelNB(), bg.CategoricalNB()]
    for est in dense_only:
        assert not est.__sklearn_tags__().input_tags.sparse
        name = type(est).__name__
        with pytest.raises(ValueError, match=rf"{name} does not accept sparse.*toarray\(\)"):
            est.fit(Xs, y)
    # MixedNB takes sparse X when a part does (issue 26); with dense-only parts, no
    mixed = bg.MixedNB(families=[("gaussian", [0, 1]), ("poisson", [2, 3])])
    assert mixed.__sklearn_tags__().input_tags.sparse
    only_dense = bg.MixedNB(families=[("gaussian", [0, 1]), ("exponential", [2, 3])])
    assert not only_dense.__sklearn_tags__().input_tags.sparse
    with pytest.raises(ValueError, match=r"MixedNB takes sparse input X .* when one of its "
                                         r"parts is multinomial, poisson or bernoulli"):
        only_dense.fit(Xs + sparse.csr_matrix(np.full(Xs.shape, 0.5)), y)
    fitted = bg.GaussianNB().fit(X, y)
    with pytest.raises(ValueError, match=r"sparse.*toarray"):
        fitted.predict(Xs)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_support_checks_on_stored_values(name):
    X, y = count_data(name)
    bad = sparse.csr_matrix(X)
    bad.data[3] = -1.0
    strict = (lambda: bg.BernoulliNB(binarize=None)) if name == "bernoulli" else FAMILIES[name]
    with pytest.raises(ValueError, match="Negative values"):
        strict().fit(bad, y)
    for value in (np.nan, np.inf):
        bad = sparse.csr_matrix(X)
        bad.data[3] = value
        fitted = FAMILIES[name]().fit(X, y)
        if np.isnan(value):  # a stored NaN is a missing value (issue 14), at fit too
            assert np.all(np.isfinite(fitted.predict_proba(bad)))
            FAMILIES[name]().fit(bad, y)
            continue
        with pytest.raises(ValueError, match="infinity"):
            FAMILIES[name]().fit(bad, y)
        with pytest.raises(ValueError, match="infinity"):
            fitted.predict_proba(bad)
    if name != "bernoulli":
        frac = sparse.csr_matrix(X)
        frac.data[0] = 0.5
        FAMILIES[name](method="map").fit(frac, y)  # term weights: every method
        posterior = FAMILIES[name](method="conjugate").fit(frac, y)
        np.testing.assert_allclose(posterior.predict_proba(frac),
                                   FAMILIES[name](method="conjugate").fit(frac.toarray(), y)
                                   .predict_proba(frac.toarray()), rtol=1e-10)


def test_duplicate_coo_entries_are_summed():
    X, y = count_data("bernoulli")
    coo = sparse.coo_matrix(X)
    rows, cols = np.r_[coo.row, coo.row[0]], np.r_[coo.col, coo.col[0]]
    dup = sparse.coo_matrix((np.ones(rows.size), (rows, cols)), shape=X.shape)
    with pytest.raises(ValueError, match="only 0 and 1"):  # the duplicated 1 is a 2
        bg.BernoulliNB(binarize=None).fit(dup, y)
    summed = X.copy()
    summed[coo.row[0], coo.col[0]] = 2.0
    dense = bg.MultinomialNB(method="conjugate", random_state=0).fit(summed, y)
    sp = bg.MultinomialNB(method="conjugate", random_state=0).fit(dup.tocsr(copy=True), y)
    np.testing.assert_allclose(sp.predict_joint_log_proba(summed),
                               dense.predict_joint_log_proba(summed), rtol=1e-12)


def test_bernoulli_binarize_sparse():
    X, y = count_data("poisson")
    Xs = sparse.csr_matrix(X)
    for t in (0.0, 1.0):
        dense = bg.BernoulliNB(binarize=t).fit(X, y)
        sp = bg.BernoulliNB(binarize=t).fit(Xs, y)
        assert_same_fit(dense, sp, X, Xs)
    with pytest.raises(ValueError, match="binarize"):
        bg.BernoulliNB(binarize=None).fit(Xs, y)
    assert_same_fit(bg.BernoulliNB(binarize=0.0).fit(X, y), bg.BernoulliNB().fit(Xs, y), X, Xs)
    with pytest.raises(ValueError, match=r"binarize=-0.5 < 0.*toarray"):
        bg.BernoulliNB(binarize=-0.5).fit(Xs, y)
    assert Xs.data.max() > 1  # the user's matrix is not modified


def test_mle_zero_probabilities_sparse():
    """theta = 0 and theta = 1 entries (MLE) give -inf exactly as dense."""
    X = np.array([[1, 0, 1, 0], [1, 0, 1, 0], [0, 1, 1, 0], [1, 1, 1, 0]], dtype=float)
    y = np.array([0, 0, 1, 1])
    test = np.array([[1, 0, 1, 0], [0, 0, 1, 1], [0, 1, 0, 0]], dtype=float)
    for cls in FAMILIES.values():
        dense = cls(method="mle").fit(X, y)
        sp = cls(method="mle").fit(sparse.csr_matrix(X), y)
        a = dense.predict_joint_log_proba(test)
        b = sp.predict_joint_log_proba(sparse.csr_matrix(test))
        np.testing.assert_array_equal(np.isinf(a), np.isinf(b))
        np.testing.assert_allclose(b[np.isfinite(b)], a[np.isfinite(a)], rtol=1e-12)


# ------------------------------------------------------------------ text data
def corpus(n_docs: int = 240, seed: int = 0):
    """Generated documents of 3 topics over a 60-word vocabulary (Zipf-like weights)."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(60)])
    topics = rng.dirichlet(np.full(60, 0.3), size=3)
    y = rng.integers(0, 3, n_docs)
    docs = [" ".join(rng.choice(vocab, size=rng.integers(5, 30), p=topics[k])) for k in y]
    labels = np.array(["sport", "politics", "science"])[y]
    return docs, labels


def test_count_vectorizer_pipeline_matches_sklearn():
    docs, labels = corpus()
    ours = make_pipeline(CountVectorizer(), bg.MultinomialNB(alpha=2.0)).fit(docs, labels)
    ref = make_pipeline(CountVectorizer(), sknb.MultinomialNB(alpha=1.0)).fit(docs, labels)
    test, _ = corpus(50, seed=1)
    np.testing.assert_allclose(ours.predict_proba(test), ref.predict_proba(test), atol=1e-10)
    np.testing.assert_array_equal(ours.predict(test), ref.predict(test))
    assert ours.score(docs, labels) > 0.8
    for method in ("mle", "conjugate"):
        pipe = make_pipeline(CountVectorizer(), make("multinomial", method)).fit(docs, labels)
        proba = pipe.predict_proba(test)
        assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(1), 1.0)
    bern = make_pipeline(CountVectorizer(binary=True), bg.BernoulliNB(alpha=2.0)).fit(docs, labels)
    bref = make_pipeline(CountVectorizer(binary=True), sknb.BernoulliNB(alpha=1.0))
    np.testing.assert_allclose(bern.predict_proba(test), bref.fit(docs, labels).predict_proba(test),
                               atol=1e-10)


@pytest.mark.slow
def test_count_vectorizer_pipeline_mcmc():
    docs, labels = corpus()
    test, _ = corpus(50, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # short chains: ESS warnings
        nb = make("multinomial", "mcmc").set_params(draws=300, tune=300)
        mcmc = make_pipeline(CountVectorizer(), nb).fit(docs, labels)
    conj = make_pipeline(CountVectorizer(), make("multinomial", "conjugate")).fit(docs, labels)
    p_mcmc, p_exact = mcmc.predict_proba(test), conj.predict_proba(test)
    assert np.mean(np.abs(p_mcmc - p_exact)) < 0.03
    assert np.mean(p_mcmc.argmax(1) == p_exact.argmax(1)) >= 0.9


def test_tfidf_pipeline_point_methods():
    docs, labels = corpus()
    test, _ = corpus(50, seed=1)
    ours = make_pipeline(TfidfVectorizer(), bg.MultinomialNB(alpha=1.5)).fit(docs, labels)
    ref = make_pipeline(TfidfVectorizer(), sknb.MultinomialNB(alpha=0.5)).fit(docs, labels)
    np.testing.assert_allclose(ours.predict_proba(test), ref.predict_proba(test), atol=1e-10)
    tfidf = TfidfVectorizer().fit(docs)
    Xs, Xt = tfidf.transform(docs), tfidf.transform(test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # MLE: words unseen in a class
        sp = bg.MultinomialNB(method="mle").fit(Xs, labels)
        dense = bg.MultinomialNB(method="mle").fit(Xs.toarray(), labels)
        assert_same_fit(dense, sp, Xt.toarray(), Xt)
    # the Dirichlet posterior is defined for real-valued term weights (issue 26)
    pipe = make_pipeline(TfidfVectorizer(), bg.MultinomialNB(method="conjugate", random_state=0))
    proba = pipe.fit(docs, labels).predict_proba(test)
    assert np.allclose(proba.sum(axis=1), 1.0) and np.all(np.isfinite(proba))


# ------------------------------------------------------------- never densify
@pytest.mark.parametrize("name", list(FAMILIES))
def test_wide_sparse_never_densified(name):
    """A 5,000 x 100,000 matrix with 0.02% non-zeros: dense it would take 4 GB. Fit,
    predict and (for the conjugate posterior) the log-likelihood group stay small."""
    rng = np.random.default_rng(0)
    n, d = 5000, 100_000
    y = rng.integers(0, 2, n)
    nnz = n * d // 5_000
    X = sparse.csr_matrix((np.ones(nnz), (rng.integers(0, n, nnz), rng.integers(0, d, nnz))),
                          shape=(n, d))
    X.data[:] = 1.0  # binary (a repeated position was summed)
    for method, kw in (("map", {}), ("conjugate", {"draws": 5, "chains": 1})):
        tracemalloc.start()
        clf = FAMILIES[name](method=method, random_state=0, **kw).fit(X, y)
        proba = clf.predict_proba(X)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert proba.shape == (n, 2) and np.all(np.isfinite(proba))
        # temporaries of size draws x K x d (the Dirichlet/Beta draws) and K x d, but
        # nothing of size n x d (4 GB as float64, 500 MB even as a boolean mask)
        budget = 300e6 if method == "conjugate" else 8 * 2 * d * 13
        assert peak < budget, f"{method}: peak {peak / 1e6:.0f} MB > {budget / 1e6:.0f} MB"
        if method == "conjugate":
            obs = clf.idata_.observed_data
            assert "x" not in obs and obs["x_data"].size == X.nnz
            rebuilt = sparse.coo_matrix((obs["x_data"], (obs["x_row"], obs["x_col"])), X.shape)
            assert (rebuilt != X).nnz == 0
    with pytest.raises(AttributeError, match="model_ observes every entry"):
        _ = clf.model_


# ---------------------------------------------- model_, idata, predictive, io
@pytest.fixture(scope="module")
def conjugate_pair():
    X, y = count_data("multinomial", n=60, d=8)
    kw = {"method": "conjugate", "draws": 100, "chains": 2, "random_state": 5}
    dense = bg.MultinomialNB(**kw).fit(X, y)
    return X, y, dense, bg.MultinomialNB(**kw).fit(sparse.csr_matrix(X), y)


def test_small_sparse_model_and_predictive(conjugate_pair):
    X, y, dense, sp = conjugate_pair
    point = dense.model_.initial_point()
    assert sp.model_.compile_logp()(point) == pytest.approx(dense.model_.compile_logp()(point))
    np.testing.assert_array_equal(sp.model_.rvs_to_values[sp.model_["x"]].eval(), X)
    pp = sp.sample_posterior_predictive(random_state=0).posterior_predictive["x"]
    assert pp.shape == (2, 100, *X.shape)
    prior = sp.sample_prior_predictive(draws=20, random_state=0)
    assert prior.prior_predictive["x"].shape == (1, 20, *X.shape)
    table = bg.compare({"dense": dense, "sparse": sp})
    assert table.loc["dense", "elpd_loo"] == pytest.approx(table.loc["sparse", "elpd_loo"])
    assert np.isfinite(az.loo(sp.idata_).elpd_loo)
    Xs, ys = sp.sample(30, random_state=0)
    assert Xs.shape == (30, X.shape[1]) and np.all(Xs >= 0)


def test_save_load_sparse_fit(conjugate_pair, tmp_path):
    X, y, _, sp = conjugate_pair
    path = sp.save(tmp_path / "sparse.nc")
    loaded = bg.load(path)
    # the rows a posterior fit keeps (observed_data) survive the round trip
    np.testing.assert_array_equal(kept_rows(loaded).X, kept_rows(sp).X)
    Xs = sparse.csr_matrix(X)
    np.testing.assert_array_equal(loaded.predict_proba(Xs), sp.predict_proba(Xs))
    point = bg.MultinomialNB(method="map").fit(sparse.csr_array(X), y)
    again = bg.load(point.save(tmp_path / "point.nc"))
    assert kept_rows(again) is None  # a point fit keeps no rows
    np.testing.assert_array_equal(again.predict_proba(X), point.predict_proba(X))


def test_large_sparse_observed_data_is_not_densified(monkeypatch):
    X, y = count_data("poisson", n=50, d=5)
    monkeypatch.setattr(_sparse, "DENSE_LIMIT", 100)  # 50 x 5 = 250 entries > 100
    clf = bg.PoissonNB(method="conjugate", draws=20, chains=1).fit(sparse.csr_matrix(X), y)
    obs = clf.idata_.observed_data
    assert set(obs.data_vars) == {"y", "x_row", "x_col", "x_data"}
    rebuilt = np.zeros_like(X)
    rebuilt[obs["x_row"].values, obs["x_col"].values] = obs["x_data"].values
    np.testing.assert_array_equal(rebuilt, X)
    with pytest.raises(AttributeError, match="model_ observes every entry"):
        _ = clf.model_


# ------------------------------------------------------------ MixedNB (issue 26)
def _mixed_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 80
    y = np.arange(n) % 2
    counts = rng.poisson(0.3 + 0.5 * y[:, None], size=(n, 30)).astype(float)
    real = rng.normal(size=(n, 2)) * 3.0 + 100.0 + y[:, None]
    binary = (rng.random((n, 5)) < 0.3 + 0.2 * y[:, None]).astype(float)
    X = np.hstack([real[:, :1], counts, binary, real[:, 1:]])
    families = [("gaussian", [0, 36]), ("multinomial", list(range(1, 31))),
                ("bernoulli", list(range(31, 36)))]
    return X, y, families


@pytest.mark.parametrize("method", ["mle", "map", "conjugate"])
def test_mixed_sparse_equals_dense(method):
    """Count parts keep their columns sparse; the Gaussian part's columns are densified
    (and framed); the fit and every prediction equal the dense ones."""
    X, y, families = _mixed_data()
    Xs = sparse.csr_matrix(X)
    dense = bg.MixedNB(method=method, families=families, random_state=0).fit(X, y)
    sp = bg.MixedNB(method=method, families=families, random_state=0).fit(Xs, y)
    np.testing.assert_allclose(sp.predict_joint_log_proba(Xs),
                               dense.predict_joint_log_proba(X), rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(sp.predict_proba(Xs), dense.predict_proba(X), atol=1e-12)
    np.testing.assert_array_equal(sp.predict(X), dense.predict(X))  # dense rows too
    if method == "conjugate":
        np.testing.assert_allclose(sp.log_marginal_likelihood(),
                                   dense.log_marginal_likelihood(), rtol=1e-12)


def test_mixed_sparse_parts_see_sparse_columns(monkeypatch):
    from bayesgen.families import gaussian as gaussian_module
    from bayesgen.families.multinomial import family as multinomial_module

    seen = {}
    for name, cls in (("multinomial", multinomial_module.MultinomialFamily),
                      ("gaussian", gaussian_module.GaussianFamily)):
        def spy(self, X, *args, _orig=cls.stats, _name=name, **kwargs):
            seen[_name] = sparse.issparse(X)
            return _orig(self, X, *args, **kwargs)
        monkeypatch.setattr(cls, "stats", spy)
    X, y, families = _mixed_data()
    bg.MixedNB(families=families).fit(sparse.csr_matrix(X), y)
    assert seen == {"multinomial": True, "gaussian": False}


def test_mixed_sparse_missing_and_far_values():
    X, y, families = _mixed_data(1)
    X[0, 0], X[3, 36], X[5, 2] = np.nan, np.nan, np.nan  # missing entries, stored as NaN
    X[:, 36] *= 1e300  # a real column near the float64 limit (its frame moves it)
    T = X[:6].copy()
    T[1, 36] = 1.7e308  # a far test row
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.DataWarning)  # attributes overflow in X's units
        dense = bg.MixedNB(families=families).fit(X, y)
        sp = bg.MixedNB(families=families).fit(sparse.csr_matrix(X), y)
    np.testing.assert_allclose(sp.predict_proba(sparse.csr_matrix(T)), dense.predict_proba(T),
                               atol=1e-12)
