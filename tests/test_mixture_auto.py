"""n_components="auto": BIC proposes, the cross-validated log loss of the labels keeps
extra components only when they pay by more than a standard error."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

import bayesgen as bg
from tests.test_mixture_da import interleaved


def test_auto_reverts_to_one_component_when_the_labels_say_so():
    """Breast cancer (split of seed 1): BIC gives the second class two components, but
    they do not lower the cross-validated log loss of the labels by a standard error,
    so the class keeps one and the fit is QDA's (with the closed-form predictive:
    ``QDA(method="conjugate")``)."""
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=1)
    mix = bg.MixtureDA(predictive="posterior", random_state=1).fit(Xtr, ytr)
    assert list(np.nanargmax(mix.bic_, axis=1) + 1) == [1, 2]
    assert list(mix.n_components_) == [1, 1]
    assert np.all(np.isfinite(mix.cv_log_loss_))
    qda = bg.QDA(method="conjugate", draws=5, chains=1).fit(Xtr, ytr)
    np.testing.assert_allclose(mix.predict_proba(Xtr), qda.predict_proba(Xtr), atol=1e-10)
    plugin = bg.MixtureDA(random_state=1).fit(Xtr, ytr)  # the default: the plug-in rule
    assert list(plugin.n_components_) == [1, 1]
    np.testing.assert_allclose(plugin.predict_proba(Xtr),
                               bg.QDA().fit(Xtr, ytr).predict_proba(Xtr), atol=1e-10)


def test_auto_keeps_components_that_pay():
    X, y = interleaved(60, 2)
    mix = bg.MixtureDA(max_components=4, random_state=0).fit(X, y)
    assert list(mix.n_components_) == [3, 3]
    assert list(np.nanargmax(mix.bic_, axis=1) + 1) == [3, 3]
    assert mix.cv_log_loss_[0] == mix.cv_log_loss_[1] < 0.3
    # the same choice as given numbers
    fixed = bg.MixtureDA(n_components=3, random_state=0).fit(X, y)
    assert not hasattr(fixed, "cv_log_loss_") and not hasattr(fixed, "bic_")


def test_auto_check_skipped_without_candidates():
    """One component everywhere: no check (NaN losses)."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (60, 2)), rng.normal(3, 1, (60, 2))])
    y = np.repeat([0, 1], 60)
    mix = bg.MixtureDA(random_state=0).fit(X, y)
    assert list(mix.n_components_) == [1, 1]
    assert np.isnan(mix.cv_log_loss_).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_auto_is_reproducible(seed):
    X, y = interleaved(30, seed)
    a = bg.MixtureDA(random_state=seed).fit(X, y)
    b = bg.MixtureDA(random_state=seed).fit(X, y)
    np.testing.assert_array_equal(a.cv_log_loss_, b.cv_log_loss_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
