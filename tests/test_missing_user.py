"""Missing values from a user's seat: problems found by the validation study
(validation/missing_values.py) and by trying the feature as a user would."""

import warnings

import numpy as np
import pytest

import bayesgen as bg
from bayesgen.families.mvn import em as _mvn_em


def gappy(n=120, d=3, frac=0.3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.standard_normal((n, d)) + 1.5 * y[:, None]
    X[rng.random((n, d)) < frac] = np.nan
    return X, y


def caught(fit):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        clf = fit()
    return clf, [str(x.message) for x in w if issubclass(x.category, bg.ConvergenceWarning)]


@pytest.mark.parametrize("Est", [bg.LDA, bg.QDA])
def test_auto_dof_em_warning_names_cov_dof_with_conjugate(Est, monkeypatch):
    # cov_dof="auto" runs an EM with missing entries for every method. Its warning used
    # to read "EM did not converge ...; method='mcmc' or 'conjugate' do not depend on
    # it" in a method="conjugate" fit, advice that cannot help.
    monkeypatch.setattr(_mvn_em, "MAX_ITER", 2)
    _, messages = caught(lambda: Est(method="conjugate", draws=20, tune=20, chains=2,
                                     random_state=0, progressbar=False).fit(*gappy()))
    em = [m for m in messages if "EM" in m]
    assert em, messages
    assert all("cov_dof" in m and "'conjugate' do not" not in m for m in em)


def test_auto_dof_em_warning_is_told_apart_from_n_iter(monkeypatch):
    # With method="map" two EMs run; a warning "did not converge in MAX_ITER" next to
    # n_iter_ < MAX_ITER was contradictory. Each warning now says which EM it is.
    X, y = gappy()
    monkeypatch.setattr(_mvn_em, "MAX_ITER", 2)
    _, messages = caught(lambda: bg.QDA().fit(X, y))
    assert any("cov_dof='auto'" in m for m in messages)
    assert any("cov_dof='auto'" not in m and "EM did not converge" in m for m in messages)
    monkeypatch.setattr(_mvn_em, "MAX_ITER", 1000)
    _, messages = caught(lambda: bg.QDA(cov_dof=10.0).fit(X, y))
    assert not any("cov_dof='auto'" in m for m in messages)
