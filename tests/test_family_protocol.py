"""The family protocol (bayesgen.families.protocol), parametrised over the registry.

Every registered family (and the composite MixedFamily) keeps the protocol and declares
its capabilities; every capability it declares is then exercised through the protocol
alone: the exact evidence and leave-one-out hooks against the closed-form predictive
(log p(X) - log p(X without row r) = log p(x_r | the rest), and the LOO downdate is
the predictive given the rest), the frame, far rows, data augmentation, fixed
parameters, the training rows' own log-likelihood, coordinates, row-wise PyMC
log-densities, category levels, the linear discriminant, the composite's columns,
missing entries, sparse input and the scikit-learn tags. A new family written as one
module and registered once is checked here unchanged, once it has a row in ``CASES``.
"""

import copy
import pickle
from dataclasses import fields

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.exceptions import NotFittedError

import bayesgen as bg
from bayesgen.families import REGISTRY, family_names, get_family
from bayesgen.families.protocol import (
    HOOKS,
    Capabilities,
    Conjugate,
    ExactLOO,
    Family,
    undeclared,
)
from bayesgen.inference import evidence, exact_loo, posterior, scoring
from tests.conftest import MIXED_FAMILIES, make_data

#: one estimator per registered family (the MVN ones twice: LDA and QDA), and the
#: composite
CASES = {
    "gaussian": (lambda **kw: bg.GaussianNB(**kw), "real"),
    "mvn-tied": (lambda **kw: bg.LDA(**kw), "real"),
    "mvn": (lambda **kw: bg.QDA(**kw), "real"),
    "mvn_diagonal-tied": (lambda **kw: bg.LDA(cov_structure="diag", **kw), "real"),
    "mvn_diagonal": (lambda **kw: bg.QDA(cov_structure="spherical", **kw), "real"),
    "mvn_choice-tied": (lambda **kw: bg.LDA(cov_structure="average", **kw), "real"),
    "mvn_choice": (lambda **kw: bg.QDA(cov_structure="auto", **kw), "real"),
    "bernoulli": (lambda **kw: bg.BernoulliNB(**kw), "binary"),
    "multinomial": (lambda **kw: bg.MultinomialNB(**kw), "count"),
    "categorical": (lambda **kw: bg.CategoricalNB(**kw), "categorical"),
    "poisson": (lambda **kw: bg.PoissonNB(**kw), "count"),
    "exponential": (lambda **kw: bg.ExponentialNB(**kw), "positive"),
    "kernel": (lambda **kw: bg.KernelNB(**kw), "real"),
    "mixed": (lambda **kw: bg.MixedNB(families=MIXED_FAMILIES, **kw), "mixed"),
}
SMALL = {"draws": 30, "chains": 2, "random_state": 0}
#: cases that predict rows with missing entries but fit complete rows only (the model
#: average needs the full structure's closed-form posterior): fit with NaN is a
#: ValueError saying so
COMPLETE_ROWS_AT_FIT = {"mvn_choice-tied": "needs complete rows"}
#: mclust names of the structures that are conjugate with missing entries (a structure
#: chosen by the evidence among them needs no data augmentation)
NO_AUGMENTATION = {"EII", "EEI", "VII", "VVI"}


def _case(case: str):
    factory, kind = CASES[case]
    X, y = make_data(kind, n_per_class=12, seed=3)
    return factory, X, y


def _fit(case: str, method: str | None = None, w=None):
    """A fitted estimator of the case: ``method`` or the richest one its family has."""
    factory, X, y = _case(case)
    if method is None:
        method = "conjugate" if factory()._make_family().capabilities.conjugate else "map"
    kw = SMALL if method == "conjugate" else {}
    return factory(method=method, **kw).fit(X, y, sample_weight=w), X, y


# ---------------------------------------------------------------- the registry
def test_every_registered_family_has_a_case():
    """A family registered without a row in CASES would escape this suite."""
    covered = {case.split("-")[0] for case in CASES}
    assert set(family_names()) <= covered
    assert list(REGISTRY) == family_names()
    with pytest.raises(ValueError, match="Unknown family 'nope'"):
        get_family("nope")


@pytest.mark.parametrize("name", family_names())
def test_registered_class_keeps_the_protocol(name):
    cls = get_family(name)
    family = cls(tied=True) if name.startswith("mvn") else cls()
    assert isinstance(family, Family)
    assert family.name == name
    assert isinstance(family.capabilities, Capabilities)
    assert undeclared(family) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_fitted_family_declares_its_capabilities(case):
    """Before fitting (as scikit-learn reads the tags) and after, the family keeps the
    protocol; the tags are its declared capabilities."""
    factory, _, _ = _case(case)
    est, _, _ = _fit(case)
    for family in (factory()._make_family(), est._family):
        assert undeclared(family) == [], case
        caps = family.capabilities
        tags = est.__sklearn_tags__()
        assert tags.input_tags.sparse is caps.sparse
        assert tags.input_tags.allow_nan is caps.missing
        assert tags.classifier_tags.poor_score is caps.poor_score
        assert tags.input_tags.positive_only is bool(family.positive_only)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fitted_family_is_not_changed_by_its_hooks(case):
    """A fitted family's hooks are functions of their arguments: prior, estimates,
    posterior and ``learned`` on other statistics (fewer rows, so fewer categories) leave
    the family as it was (what the statistics teach it is a new copy's, ``learned``)."""
    est, X, y = _fit(case, method="map")
    family = est._family
    before = pickle.dumps(family)
    Xc = family.check_X(X, method="map", who="test")
    Z = scoring.internal(est, Xc)
    stats = family.stats(Z[::2], y[::2], np.ones(y[::2].size), est.classes_.size)
    prior = family.prior(stats, record=False)
    family.map(stats, prior)
    if family.capabilities.conjugate:
        family.posterior(stats, prior)
    learned = family.learned(stats)
    assert pickle.dumps(family) == before
    if case == "categorical":
        assert [c.size for c in learned.categories_] == list(prior["n_categories"])
        assert learned.categories_ is not family.categories_


def test_undeclared_names_what_is_missing():
    gauss = get_family("gaussian")()

    class Claims(type(gauss)):
        capabilities = Capabilities(missing=True, real_valued=True, far_rows=True,
                                    coords=True, levels=True)

    assert undeclared(Claims()) == ["coords", "levels"]

    class Bare:
        name = "bare"

    assert undeclared(Bare()) == ["Family", "capabilities"]
    assert set(HOOKS) <= {f.name for f in fields(Capabilities)}


# ---------------------------------------------- evidence and exact LOO hooks
def _pieces(est, X, y, w):
    """A copy of the fitted family, the checked rows, their internal coordinates and
    the number of classes."""
    family = copy.deepcopy(est._family)
    Xc = family.check_X(X, method=est.method, who="test")
    return family, Xc, scoring.internal(est, Xc), est.classes_.size


@pytest.mark.parametrize("case", sorted(CASES))
def test_evidence_and_loo_hooks_are_the_closed_form_predictive(case):
    """log p(X) - log p(X without row r) = log p(x_r | the other rows), and the exact
    LOO downdate of the full posterior is that same predictive, for rows of every class
    (weights: the other rows weigh 0.5..2, row r weighs 1)."""
    factory, X, y = _case(case)
    caps = factory()._make_family().capabilities
    w = np.random.default_rng(5).uniform(0.5, 2.0, y.size)
    rows = [0, y.size // 2, y.size - 1]
    w[rows] = 1.0
    est = factory(method="conjugate" if caps.conjugate else "map",
                  **(SMALL if caps.conjugate else {})).fit(X, y, sample_weight=w)
    family, Xc, Z, K = _pieces(est, X, y, w)
    prior = est._prior
    s_all = family.stats(Z, y, w, K)
    if not caps.evidence:
        with pytest.raises(ValueError, match="no closed-form"):
            family.log_evidence(s_all, prior, lambda: (Xc, w), method=est.method, who="test")
        with pytest.raises(ValueError):
            est.log_marginal_likelihood()
    if not caps.exact_loo:  # no hooks, or (a composite's) hooks that refuse
        if isinstance(family, ExactLOO):
            with pytest.raises(ValueError):
                family.loo_log_predictive(Z, y, w, {})
            with pytest.raises(ValueError):
                family.loo_log_predictive_at(Z, y, w, {}, Z[:2])
        assert not exact_loo.supports(est)
        with pytest.raises(ValueError, match="no exact leave-one-out"):
            exact_loo.pointwise(est, X, y, w)
    if not caps.conjugate:
        if isinstance(family, Conjugate):
            with pytest.raises(ValueError):
                family.posterior(s_all, prior)
        return
    loo = family.loo_log_predictive(Z, y, w, family.posterior(s_all, prior))
    assert loo.shape == (y.size,) and np.all(np.isfinite(loo))
    if caps.exact_loo:  # at other rows and every class: (n, m, K); at the rows: (n, K)
        at = family.loo_log_predictive_at(Z, y, w, family.posterior(s_all, prior), Z[rows])
        at_rows = family.loo_log_predictive_at(Z, y, w, family.posterior(s_all, prior))
        assert at.shape == (y.size, len(rows), K) and at_rows.shape == (y.size, K)
        np.testing.assert_allclose(at_rows[np.arange(y.size), y], loo, rtol=1e-12, atol=1e-12)
    e_all = family.log_evidence(s_all, prior, lambda: (Xc, w), method=est.method, who="test")
    for r in rows:
        rest = np.arange(y.size) != r
        s_rest = family.stats(Z[rest], y[rest], w[rest], K)
        every = family.log_predictive(Z[r:r + 1], family.posterior(s_rest, prior))[0]
        predictive = every[y[r]]
        assert loo[r] == pytest.approx(predictive, rel=1e-9, abs=1e-9)
        if caps.exact_loo:  # every class at row r itself and at the other chosen rows
            np.testing.assert_allclose(at_rows[r], every, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(
                at[r], family.log_predictive(Z[rows], family.posterior(s_rest, prior)),
                rtol=1e-9, atol=1e-9)
        if caps.evidence:
            e_rest = family.log_evidence(s_rest, prior, lambda rest=rest: (Xc[rest], w[rest]),
                                         method=est.method, who="test")
            jacobian = float(np.ravel(scoring.jacobian(est.fitted_, Z[r:r + 1]))[0])
            assert e_all - e_rest == pytest.approx(predictive - jacobian, rel=1e-9, abs=1e-8)
    if caps.evidence:
        assert est.log_marginal_likelihood() == pytest.approx(
            e_all + evidence.label_term(est), rel=1e-12)
    if caps.exact_loo:
        assert exact_loo.supports(est)


# ------------------------------------------------------ structural abilities
@pytest.mark.parametrize("case", sorted(CASES))
def test_frame_hooks(case):
    """real_valued: the frame's columns and the conversion of parameters to user units,
    which is what the fitted attributes report; otherwise no frame."""
    est, X, _ = _fit(case, "map")
    family = est._family
    if not family.capabilities.real_valued:
        assert est._frame is None
        return
    real = family.real_columns(X.shape[1])
    assert real.shape == (X.shape[1],) and real.dtype == bool
    user = family.to_user(est._params)
    assert set(user) == set(est._params)
    for key, value in family.attributes(user).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            np.testing.assert_allclose(getattr(est, key), value, rtol=1e-12)
    assert set(family.prior_to_user(est._prior)) == set(est._prior)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("method", ["map", "conjugate"])
def test_far_rows(case, method):
    """far_rows: a value at 1e300 in a real column gets finite probabilities (the far
    terms, or the far predictive of a conjugate fit)."""
    factory, X, y = _case(case)
    family = factory()._make_family()
    caps = family.capabilities
    if not caps.far_rows or (method == "conjugate" and not caps.conjugate):
        pytest.skip("no far rows for this family or method")
    est = factory(method=method, **(SMALL if method == "conjugate" else {})).fit(X, y)
    j = int(np.flatnonzero(est._family.real_columns(X.shape[1]))[0])
    far = X[:3].copy()
    far[0, j] = 1e300
    far[1, j] = -1e300
    proba = est.predict_proba(far)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning")  # a short chain
@pytest.mark.parametrize("case", sorted(CASES))
def test_augmentation(case):
    """augmentation: complete statistics need none; with a missing entry the conjugate
    fit augments (no exact LOO then) and still predicts."""
    factory, X, y = _case(case)
    if not factory()._make_family().capabilities.augmentation:
        pytest.skip("no data augmentation")
    est = factory(method="map").fit(X, y)
    assert not est._family.needs_augmentation(est._stats)
    Xm = X.copy()
    Xm[1, 0] = np.nan
    conjugate = factory(method="conjugate", draws=15, tune=10, chains=1, random_state=0)
    if case in COMPLETE_ROWS_AT_FIT:
        with pytest.raises(ValueError, match=COMPLETE_ROWS_AT_FIT[case]):
            conjugate.fit(Xm, y)
        return
    est = conjugate.fit(Xm, y)
    chosen = getattr(est, "prior_search_", {}).get("structure")
    needs = chosen not in NO_AUGMENTATION  # a structure chosen by the evidence may not
    assert est._family.needs_augmentation(est._stats) is needs
    assert exact_loo.supports(est) is not needs
    assert np.all(np.isfinite(est.predict_proba(Xm[:5])))


@pytest.mark.parametrize("case", sorted(CASES))
def test_fixed_params_and_train_log_lik(case):
    est, X, y = _fit(case, "map")
    family = est._family
    caps = family.capabilities
    if caps.fixed_params:
        fixed = family.fixed_params(est._stats)
        assert not set(fixed) & set(family.param_dims)
        for key, value in fixed.items():
            np.testing.assert_array_equal(est._params[key], value)
    if caps.train_log_lik:
        Z = scoring.internal(est, family.check_X(X, method="map", who="test"))
        terms = family.train_log_lik(Z, y, est._params)
        assert terms.shape == (y.size,) and np.all(np.isfinite(terms))
        log_pi = est.class_log_prior_[None, :]
        np.testing.assert_allclose(
            posterior.pointwise_log_lik(family, Z, y, est._params, log_pi)[0],
            terms + est.class_log_prior_[y], rtol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_coords_name_every_dim(case):
    est, _, _ = _fit(case, "map")
    family = est._family
    coords = posterior.coords_for(est.classes_, est._feature_names(), family, est._params)
    for name, dims in family.param_dims.items():
        shape = np.shape(est._params[name])[-len(dims):]
        for dim, size in zip(dims, shape, strict=True):
            assert len(coords[dim]) == size, (name, dim)
    if family.capabilities.coords:
        assert isinstance(family.coords(), dict)


@pytest.mark.parametrize("case", sorted(CASES))
def test_rows_loglik_is_log_lik(case):
    """The unlabeled rows' PyMC log-density (``pymc_rows_loglik``, every family) equals
    ``log_lik`` at the fitted parameters, missing entries included."""
    from bayesgen.semi.nuts import class_log_lik

    est, X, _ = _fit(case, "map")
    family = est._family
    if family.capabilities.kernel_density:
        pytest.skip("KDE rows are scored by the labeled points (tested in test_semi_kernel)")
    Xm = np.array(X, dtype=float, copy=True)
    Xm[0, 1] = np.nan
    if not family.capabilities.missing:
        Xm = Xm[1:]
    Z = Xm if est._frame is None else est._frame.internal(Xm)
    params = {k: np.asarray(v) for k, v in est._params.items()}
    expression = class_log_lik(est, params, Z)
    value = expression.eval() if hasattr(expression, "eval") else np.asarray(expression)
    np.testing.assert_allclose(value, family.log_lik(Z, est._params), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("case", sorted(CASES))
def test_levels(case):
    """levels: text columns are read as the category values behind the codes, with the
    same model as their codes."""
    factory, X, y = _case(case)
    family = factory()._make_family()
    if not family.capabilities.levels or family.capabilities.composite:
        pytest.skip("no levels (a composite's levels are its parts')")
    codes = factory().fit(X, y)
    text = pd.DataFrame({f"c{j}": [f"v{int(v)}" for v in X[:, j]] for j in range(X.shape[1])})
    est = factory().fit(text, y)
    assert est._family.levels is not None
    np.testing.assert_allclose(est.predict_proba(text), codes.predict_proba(X), rtol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_discriminant(case):
    """decision_function is the joint log-density up to a term equal for every class;
    with a linear discriminant it is also affine in x."""
    est, X, _ = _fit(case, "map")
    rows = X[:6]
    diff = est.decision_function(rows) - est.predict_joint_log_proba(rows)
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-8)
    if est._family.capabilities.linear_discriminant:
        a, b = X[:5], X[5:10]
        mid = est.decision_function((a + b) / 2.0)
        ends = (est.decision_function(a) + est.decision_function(b)) / 2.0
        np.testing.assert_allclose(mid, ends, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", sorted(CASES))
def test_composite_columns(case):
    est, X, _ = _fit(case, "map")
    family = est._family
    if not family.capabilities.composite:
        pytest.skip("not a composite")
    per_column = family.column_families(None, ["float"] * X.shape[1])
    assert len(per_column) == X.shape[1]
    for part in family.parts_:
        for j in part["columns"]:
            assert isinstance(per_column[j], Family)
            assert per_column[j].name == part["name"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_missing_and_sparse(case):
    factory, X, y = _case(case)
    caps = factory()._make_family().capabilities
    Xm = X.copy()
    Xm[0, 0] = np.nan
    if case in COMPLETE_ROWS_AT_FIT:
        with pytest.raises(ValueError, match=COMPLETE_ROWS_AT_FIT[case]):
            factory().fit(Xm, y)
        assert np.all(np.isfinite(factory().fit(X, y).predict_proba(Xm[:3])))
    elif caps.missing:
        proba = factory().fit(Xm, y).predict_proba(Xm[:3])
        assert np.all(np.isfinite(proba))
    else:
        with pytest.raises(ValueError, match="missing"):
            factory().fit(Xm, y)
    if caps.sparse:
        dense = factory().fit(X, y).predict_proba(X)
        np.testing.assert_allclose(
            factory().fit(sparse.csr_array(X), y).predict_proba(sparse.csr_array(X)),
            dense, rtol=1e-10)
    else:
        with pytest.raises(ValueError, match="sparse"):
            factory().fit(sparse.csr_array(X), y)


# ------------------------------------------------------- MixedNB parts by name
def test_mixed_parts_by_name():
    X, y = make_data("mixed", n_per_class=12, seed=4)
    X = np.column_stack([X, X[:, 0] * 2.0 + 1.0])
    spec = [("gaussian", [0, 1]), ("bernoulli", [2, 3]), ("poisson", [4, 5]),
            ("gaussian", [6])]
    clf = bg.MixedNB(families=spec).fit(X, y)
    parts = clf.named_parts_
    assert list(parts) == ["gaussian", "bernoulli", "poisson", "gaussian_2"]
    assert parts["gaussian_2"].columns == [6] and parts["gaussian_2"].family == "gaussian"
    np.testing.assert_array_equal(parts.gaussian.theta_, clf.gaussian0_theta_)
    np.testing.assert_array_equal(parts["gaussian_2"].var_, clf.gaussian3_var_)
    assert [q["part"] for q in clf.parts_] == list(parts)
    # a name does not depend on the position: reordering the parts keeps it
    moved = bg.MixedNB(families=[spec[2], spec[3], spec[0], spec[1]]).fit(X, y)
    assert list(moved.named_parts_) == ["poisson", "gaussian", "gaussian_2", "bernoulli"]
    np.testing.assert_allclose(moved.named_parts_.poisson.rate_, parts.poisson.rate_)
    np.testing.assert_allclose(moved.named_parts_.bernoulli.feature_log_prob_,
                               parts.bernoulli.feature_log_prob_)
    with pytest.raises(NotFittedError):
        bg.MixedNB(families=spec).named_parts_
    assert not hasattr(bg.MixedNB(families=spec), "named_parts_")


def test_mixed_parts_by_name_survive_save_and_load(tmp_path):
    X, y = make_data("mixed", n_per_class=12, seed=6)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d", "e", "f"])
    df["colour"] = np.where(y == 0, "red", "blue")
    clf = bg.MixedNB(families="auto", overrides={"e": "poisson", "f": "poisson"}).fit(df, y)
    assert list(clf.named_parts_) == ["gaussian", "poisson", "categorical"]
    assert clf.named_parts_.categorical.features == ["colour"]
    assert list(clf.named_parts_.categorical.categories_[0]) == ["blue", "red"]
    clf.save(tmp_path / "mixed.nc")
    loaded = bg.load(tmp_path / "mixed.nc").named_parts_
    assert list(loaded) == list(clf.named_parts_)
    for name, part in clf.named_parts_.items():
        assert loaded[name].columns == part.columns
        assert loaded[name].features == part.features
    np.testing.assert_array_equal(loaded.gaussian.theta_, clf.named_parts_.gaussian.theta_)
    np.testing.assert_array_equal(loaded.poisson.rate_, clf.named_parts_.poisson.rate_)
    assert list(loaded.categorical.categories_[0]) == ["blue", "red"]
