"""MixtureDA as a StackedClassifier member: its estimated leave-one-out terms
(cross-validated refits for method="map", PSIS-LOO for the posterior methods) against
brute-force refits, ArviZ's PSIS-LOO and the exact conjugate leave-one-out; the stack
with a mixture member on multimodal classes; save/load and clone."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.metrics import log_loss

import bayesgen as bg
from bayesgen.inference import exact_loo
from tests.test_mixture_da import interleaved, two_blob_class

#: a fixed component prior (no data-dependent default): PSIS-LOO then targets exactly
#: the conjugate leave-one-out of QDA at the same prior
FIXED = {"mean_prior": [2.0, 3.0], "cov_target": [[1.0, 0.0], [0.0, 1.0]],
         "cov_dof": 6.0, "cov_scale": 2.0}


def _conditional(joint, y):
    return joint[np.arange(y.size), y] - logsumexp(joint, axis=1)


def test_map_terms_are_brute_force_refits():
    """n_folds >= n: every row's term is the refit without it (clone, fit, predict)."""
    X, y = two_blob_class(14, 3)
    w = np.linspace(0.5, 2.0, y.size)
    est = bg.MixtureDA(n_components=[2, 1], n_init=1, random_state=0)
    est.fit(X, y, sample_weight=w)
    terms = est.loo_log_joint(X, y, sample_weight=w, n_folds=y.size)
    assert terms.kind == "loo"
    assert np.isnan(terms.pareto_k).all()
    for i in range(y.size):
        keep = np.arange(y.size) != i
        ref = clone(est).fit(X[keep], y[keep], sample_weight=w[keep])
        np.testing.assert_allclose(terms.log_joint[i],
                                   ref.predict_joint_log_proba(X[i:i + 1])[0], rtol=1e-12)
        np.testing.assert_allclose(terms.class_log_prior[i], ref.class_log_prior_,
                                   rtol=1e-12)


def test_map_folds_hold_every_row_out_once():
    """10-fold terms: each row's term is the plug-in of a refit that never saw it (its
    value differs from the full fit's wherever the refit moved) and is reproducible."""
    X, y = two_blob_class(40, 4)
    est = bg.MixtureDA(n_components=[2, 1], n_init=1, random_state=2).fit(X, y)
    a = est.loo_log_joint(X, y)
    b = est.loo_log_joint(X, y)
    assert a.kind == "10-fold"
    np.testing.assert_array_equal(a.log_joint, b.log_joint)
    full = est.predict_joint_log_proba(X)
    # held-out rows are predicted worse on average than by the fit that saw them
    assert _conditional(a.log_joint, y).sum() < _conditional(full, y).sum()
    assert np.all(np.abs(a.log_joint - full).max(axis=1) > 0)
    with pytest.raises(ValueError, match="n_folds must be >= 2"):
        est.loo_log_joint(X, y, n_folds=1)
    with pytest.raises(ValueError, match="training rows"):
        est.loo_log_joint(X[:-1], y[:-1])


@pytest.fixture(scope="module")
def one_component_gibbs():
    X, y = two_blob_class(40, 5)
    gibbs = bg.MixtureDA(n_components=1, method="gibbs", draws=2000, tune=20, chains=2,
                         random_state=3, **FIXED).fit(X, y)
    return X, y, gibbs


def test_psis_matches_arviz_loo(one_component_gibbs):
    """The own-class terms and Pareto k are ArviZ's PSIS-LOO of idata_."""
    import arviz as az

    X, y, gibbs = one_component_gibbs
    terms = gibbs.loo_log_joint(X, y)
    ref = az.loo(gibbs.idata_, pointwise=True)
    np.testing.assert_allclose(terms.log_joint[np.arange(y.size), y],
                               ref.loo_i.values, rtol=1e-10)
    np.testing.assert_allclose(terms.pareto_k, ref.pareto_k.values, rtol=1e-10)
    assert terms.kind == "psis" and np.all(terms.pareto_k < 0.7)


def test_psis_matches_the_exact_conjugate_loo(one_component_gibbs):
    """One component with a fixed prior: the Gibbs posterior is QDA's conjugate
    posterior, so PSIS-LOO estimates QDA's exact leave-one-out (every class of every
    row) to Monte Carlo error, and its class prior is the exact downdate. Far in the
    other class's tail a mean over draws is itself noisy (up to a nat below the
    Student-t here), so the other classes are compared through the class
    probabilities p(y_n | x_n, D without n), which they barely move."""
    X, y, gibbs = one_component_gibbs
    terms = gibbs.loo_log_joint(X, y)
    qda = bg.QDA(method="conjugate", **FIXED).fit(X, y)
    exact, _ = exact_loo.loo_log_joint(qda, X, y)
    rows = np.arange(y.size)
    np.testing.assert_allclose(terms.log_joint[rows, y], exact[rows, y], atol=0.05)
    np.testing.assert_allclose(np.exp(_conditional(terms.log_joint, y)),
                               np.exp(_conditional(exact, y)), atol=0.01)
    np.testing.assert_allclose(terms.class_log_prior,
                               exact_loo.label_log_prior(qda.fitted_, y, np.ones(y.size)),
                               rtol=1e-12)


def test_psis_warns_on_large_pareto_k():
    """Few draws of a many-component fit: some Pareto k > 0.7 and one DataWarning."""
    X, y = two_blob_class(12, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        est = bg.MixtureDA(n_components=[2, 1], method="gibbs", draws=30, tune=5,
                           chains=1, random_state=0).fit(X, y)
    with pytest.warns(bg.DataWarning, match="Pareto k > 0.7"):
        terms = est.loo_log_joint(X, y)
    assert np.nanmax(terms.pareto_k) > 0.7


@pytest.fixture(scope="module")
def multimodal():
    X, y = interleaved(40, 0)
    X_test, y_test = interleaved(100, 1)
    return X, y, X_test, y_test


def _conjugate_members():
    return [("lda", bg.LDA(method="conjugate", draws=50, chains=1)),
            ("qda", bg.QDA(method="conjugate", draws=50, chains=1))]


@pytest.fixture(scope="module")
def stacks(multimodal):
    X, y, _, _ = multimodal
    without = bg.StackedClassifier(_conjugate_members()).fit(X, y)
    mixture = bg.MixtureDA(max_components=3, n_init=2, random_state=0)
    with_map = bg.StackedClassifier([*_conjugate_members(), ("mixture", mixture)]).fit(X, y)
    return without, with_map


def test_stack_with_a_mixture_member(stacks, multimodal):
    """On interleaved blobs the mixture member takes the weight, and the stack's held-out
    log loss is far below the stack of LDA and QDA; the conjugate members' terms are
    unchanged by the new member."""
    X, y, X_test, y_test = multimodal
    without, with_map = stacks
    assert with_map.weights_.sum() == pytest.approx(1.0, abs=1e-12)
    assert with_map.loo_["weight"].idxmax() == "mixture"
    assert with_map.loo_kind_ == {"lda": "exact", "qda": "exact", "mixture": "10-fold"}
    assert set(with_map.pareto_k_) == {"mixture"}
    np.testing.assert_allclose(with_map.loo_.loc[["lda", "qda"], "elpd_loo"],
                               without.loo_["elpd_loo"], rtol=1e-12)
    loss_with = log_loss(y_test, with_map.predict_proba(X_test))
    loss_without = log_loss(y_test, without.predict_proba(X_test))
    assert loss_with < 0.5 * loss_without
    # the member's elpd is its cross-validated terms
    member = with_map.named_estimators_["mixture"]
    terms = member.loo_log_joint(X, y)
    assert with_map.loo_.loc["mixture", "elpd_loo"] == pytest.approx(
        _conditional(terms.log_joint, y).sum(), rel=1e-12)


def test_stack_with_a_gibbs_member(multimodal):
    X, y, X_test, y_test = multimodal
    gibbs = bg.MixtureDA(n_components=3, method="gibbs", draws=150, tune=50, chains=2,
                         random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        stack = bg.StackedClassifier([*_conjugate_members(), ("mixture", gibbs)]).fit(X, y)
    assert stack.loo_kind_["mixture"] == "psis"
    k = stack.pareto_k_["mixture"]
    assert k.shape == (y.size,) and np.all(k < 0.7)
    assert stack.loo_["weight"].idxmax() == "mixture"
    assert log_loss(y_test, stack.predict_proba(X_test)) < 0.2


def test_stack_with_a_mixture_member_save_load_clone(stacks, multimodal, tmp_path):
    X, y, X_test, _ = multimodal
    _, with_map = stacks
    path = with_map.save(tmp_path / "stack.nc")
    loaded = bg.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(X_test), with_map.predict_proba(X_test))
    np.testing.assert_array_equal(loaded.weights_, with_map.weights_)
    assert loaded.loo_kind_ == with_map.loo_kind_
    copy = clone(with_map)
    assert "weights_" not in vars(copy)
    assert copy.get_params()["estimators"][2][1].get_params() == \
        with_map.estimators[2][1].get_params()


def test_stack_still_rejects_other_non_conjugate_members(multimodal):
    X, y, _, _ = multimodal
    with pytest.raises(ValueError, match="method='map'"):
        bg.StackedClassifier([("qda", bg.QDA(method="map"))]).fit(X, y)
