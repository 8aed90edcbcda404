"""The names renamed in 0.2 (one name per idea, the ecosystem's): the old ones still
work until 0.3 with a FutureWarning naming the new one and give identical results,
setting both is a ValueError, and files written before the renames still load.

- ``predict_set(X, alpha=0.1)`` -> ``predict_set(X, confidence_level=0.9)`` (MAPIE's name)
- LDA/QDA ``cov_prior`` -> ``cov_target``, ``covariance_prior`` -> ``cov_prior_form``
- GaussianNB moved from ``bayesgen.estimators.discriminant`` to ``.naive_bayes``
- one spelling, scikit-learn's: unlabeled, labeled (no public name had the other one)
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris

import bayesgen as bg
from bayesgen.decide import conformal

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


@pytest.fixture(scope="module")
def split_fit(iris):
    X, y = iris
    rows = np.random.default_rng(3).permutation(y.size)
    fit, cal, test = rows[:60], rows[60:69], rows[69:]  # 9 calibration rows: ranks tie
    est = bg.GaussianNB().fit(X[fit], y[fit])
    return est, X[test], {"X_calib": X[cal], "y_calib": y[cal]}


@pytest.fixture(scope="module")
def loo_fit(iris):
    X, y = iris
    est = bg.GaussianNB(method="conjugate", draws=4, chains=1, random_state=0).fit(X, y)
    return est, X[::7], {"calibration": "loo", "X_calib": X, "y_calib": y}


ALPHA_WARNING = r"alpha= is deprecated since bayesgen 0\.2.*confidence_level=1 - alpha"


# ------------------------------------------------------------------ predict_set
@pytest.mark.parametrize("case", ["split_fit", "loo_fit"])
@pytest.mark.parametrize("alpha, level", [(0.1, 0.9), (0.3, 0.7), ([0.05, 0.2, 0.5],
                                                                  [0.95, 0.8, 0.5])])
def test_alpha_still_works_with_a_future_warning(request, case, alpha, level):
    est, X, kw = request.getfixturevalue(case)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name warns about nothing
        new = est.predict_set(X, confidence_level=level, **kw)
    with pytest.warns(FutureWarning, match=ALPHA_WARNING) as record:
        by_keyword = est.predict_set(X, alpha=alpha, **kw)
    assert record[0].filename == __file__  # attributed to the caller's line
    with pytest.warns(FutureWarning, match=ALPHA_WARNING):
        by_position = est.predict_set(X, alpha, **kw)  # the positional use of 0.1.0
    np.testing.assert_array_equal(by_keyword, new)
    np.testing.assert_array_equal(by_position, new)
    assert new.shape == (len(X), 3) + (() if np.ndim(level) == 0 else (len(level),))


def test_the_warning_gives_the_converted_value(split_fit):
    est, X, kw = split_fit
    with pytest.warns(FutureWarning, match=r"alpha=0\.1: confidence_level=0\.9\)"):
        est.predict_set(X, alpha=0.1, **kw)
    with pytest.warns(FutureWarning, match=r"confidence_level=\[0\.95, 0\.8\]"):
        est.predict_set(X, [0.05, 0.2], **kw)


def test_randomized_sets_and_the_module_function_agree(split_fit):
    est, X, kw = split_fit
    new = est.predict_set(X, confidence_level=0.8, randomize=True, random_state=4, **kw)
    with pytest.warns(FutureWarning, match=ALPHA_WARNING):
        old = est.predict_set(X, alpha=0.2, randomize=True, random_state=4, **kw)
    np.testing.assert_array_equal(old, new)
    np.testing.assert_array_equal(conformal.predict_set(est, X, confidence_level=0.8,
                                                        randomize=True, random_state=4, **kw),
                                  new)
    with pytest.warns(FutureWarning, match=ALPHA_WARNING):
        module_old = conformal.predict_set(est, X, 0.2, randomize=True, random_state=4, **kw)
    np.testing.assert_array_equal(module_old, new)


@pytest.mark.parametrize("level", [0.9, 0.5, [0.9]])
def test_both_names_are_a_value_error(split_fit, level):
    est, X, kw = split_fit
    with pytest.raises(ValueError, match=r"both are given.*give confidence_level= only"):
        est.predict_set(X, alpha=0.1, confidence_level=level, **kw)
    with pytest.raises(ValueError, match="both are given"):
        est.predict_set(X, 0.1, confidence_level=level, **kw)


def test_levels_are_checked_under_their_own_name(split_fit):
    est, X, kw = split_fit
    for bad in (0.0, 1.0, 1.5, [0.9, -0.1], [[0.9]]):
        with pytest.raises(ValueError, match="confidence_level must be a number"):
            est.predict_set(X, confidence_level=bad, **kw)
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="alpha must be"):
        est.predict_set(X, alpha=1.5, **kw)


def test_level_and_alpha_give_the_same_float(split_fit):
    """1 - 0.9 is 0.09999999999999998 in floats; the sets use exactly 0.1, so a p-value
    k/(n + 1) = 0.1 is treated alike under both names."""
    assert conformal.miscoverage(0.9).tolist() == [0.1]
    assert conformal.miscoverage([0.95, 0.8, 0.7]).tolist() == [0.05, 0.2, 0.3]
    with pytest.warns(FutureWarning):
        assert conformal.miscoverage(alpha=0.1).tolist() == [0.1]
    est, X, kw = split_fit  # 9 calibration rows: the rank (n + 1)(1 - alpha) = 9 exactly
    scores = est.predict_set(X, confidence_level=np.linspace(0.5, 0.95, 10).tolist(), **kw)
    with pytest.warns(FutureWarning):
        old = est.predict_set(X, alpha=[round(1 - v, 12) for v in np.linspace(0.5, 0.95, 10)],
                              **kw)
    np.testing.assert_array_equal(scores, old)


# ------------------------------------------------------- cov_target, cov_prior_form
RENAMED = [("cov_prior", "cov_target", "isotropic"),
           ("cov_prior", "cov_target", [0.5, 0.2, 0.3, 0.1]),
           ("covariance_prior", "cov_prior_form", "lkj")]


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
@pytest.mark.parametrize("old, new, value", RENAMED)
def test_old_covariance_names_work_with_a_future_warning(iris, cls, old, new, value):
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the constructor only stores
        est_old = cls(**{old: value})
        params = est_old.get_params()
        copy = clone(est_old)
    assert params[old] == value and copy.get_params()[old] == value
    assert cls().get_params()[old] == "deprecated" and params[new] == cls().get_params()[new]
    with pytest.warns(FutureWarning, match=rf"{cls.__name__}: {old}= is deprecated since "
                                           rf"bayesgen 0\.2 and will be removed in 0\.3; use "
                                           rf"{new}=") as record:
        est_old.fit(X, y)
    assert record[0].filename == __file__
    est_new = cls(**{new: value}).fit(X, y)
    np.testing.assert_array_equal(est_old.predict_proba(X), est_new.predict_proba(X))
    np.testing.assert_array_equal(np.asarray(est_old.covariance_),
                                  np.asarray(est_new.covariance_))
    assert _same_family(est_old._family, est_new._family)
    assert est_old.get_params()[new] == cls().get_params()[new]  # fit sets no parameter


def _same_family(a, b) -> bool:
    return all(np.array_equal(np.asarray(getattr(a, k), dtype=object),
                              np.asarray(getattr(b, k), dtype=object))
               for k in ("cov_target", "cov_prior_form"))


def test_old_form_name_reaches_the_family_and_its_checks(iris):
    """covariance_prior="lkj" is cov_prior_form="lkj": the same family, and the same
    refusal where the LKJ prior does not apply (a structure other than "full")."""
    X, y = iris
    with pytest.warns(FutureWarning, match="use cov_prior_form='lkj'"), pytest.raises(
            ValueError, match="cov_prior_form='lkj'"):
        bg.QDA(covariance_prior="lkj", cov_structure="diag").fit(X, y)
    with pytest.raises(ValueError, match="cov_prior_form='lkj'"):
        bg.QDA(cov_prior_form="lkj", cov_structure="diag").fit(X, y)
    assert bg.QDA(covariance_prior="lkj")._make_family().cov_prior_form == "lkj"


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_both_covariance_names_are_a_value_error(iris, cls):
    X, y = iris
    with pytest.raises(ValueError, match="cov_prior= is the deprecated name of cov_target=; "
                                         "both are given"):
        cls(cov_prior="isotropic", cov_target=[1.0, 1.0, 1.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match=r"both are given.*give cov_prior_form= only"):
        cls(covariance_prior="niw", cov_prior_form="lkj").fit(X, y)


def test_set_params_partial_fit_and_search_with_the_old_names(iris):
    X, y = iris
    est = bg.QDA().set_params(cov_prior="isotropic")
    assert clone(est).get_params()["cov_prior"] == "isotropic"
    with pytest.warns(FutureWarning, match="use cov_target='isotropic'"):
        est.partial_fit(X, y, classes=np.unique(y))
    ref = bg.QDA(cov_target="isotropic").fit(X, y)
    np.testing.assert_array_equal(est.predict_proba(X), ref.predict_proba(X))
    est.set_params(cov_prior="deprecated", cov_target="isotropic")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(X, y)  # back to the sentinel: nothing to warn about
    np.testing.assert_array_equal(est.predict_proba(X), ref.predict_proba(X))


def test_prior_search_uses_the_new_names(iris):
    X, y = iris
    est = bg.QDA(cov_structure="auto", cov_target="isotropic").fit(X, y)
    text = repr(est.prior_search_)
    assert "cov_prior" not in text.replace("cov_prior_form", "")
    assert "covariance_prior" not in text


# ------------------------------------------------------------ GaussianNB's module
def test_gaussian_nb_is_in_the_naive_bayes_module():
    from bayesgen.estimators import discriminant, naive_bayes

    assert bg.GaussianNB is naive_bayes.GaussianNB
    assert bg.GaussianNB.__module__ == "bayesgen.estimators.naive_bayes"
    assert not hasattr(discriminant, "GaussianNB")
    assert {bg.LDA.__module__, bg.QDA.__module__} == {"bayesgen.estimators.discriminant"}


def _old_rows():
    """The rows the files in tests/data were fitted on (by bayesgen 0.1, before the
    renames): iris, every third row, first two features."""
    X, y = load_iris(return_X_y=True)
    return X[::3, :2], y[::3]


def test_gaussian_nb_file_written_before_the_move_loads():
    X, y = _old_rows()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = bg.load(DATA / "gaussian_nb_before_0_2.nc")
    assert type(est) is bg.GaussianNB
    np.testing.assert_allclose(est.predict_proba(X),
                               np.load(DATA / "gaussian_nb_before_0_2_proba.npy"),
                               rtol=0, atol=1e-12)


def test_qda_file_written_before_the_renames_loads(tmp_path):
    X, y = _old_rows()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = bg.load(DATA / "qda_before_0_2.nc")
    params = est.get_params()
    assert params["cov_target"] == "isotropic" and params["cov_prior_form"] == "niw"
    assert params["cov_prior"] == "deprecated" and params["covariance_prior"] == "deprecated"
    assert est._family.options["cov_target"] == "isotropic"  # cov_structure="auto"
    np.testing.assert_allclose(est.predict_proba(X),
                               np.load(DATA / "qda_before_0_2_proba.npy"), rtol=0, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # its parameters are today's: no FutureWarning
        again = bg.load(est.save(tmp_path / "again.nc"))
        clone(est).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))


def test_file_with_a_deprecated_name_set_keeps_it(tmp_path, iris):
    X, y = iris
    with pytest.warns(FutureWarning):
        est = bg.LDA(cov_prior="isotropic").fit(X, y)
    loaded = bg.load(est.save(tmp_path / "lda.nc"))
    assert loaded.get_params()["cov_prior"] == "isotropic"
    assert loaded.get_params()["cov_target"] is None
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


# --------------------------------------------------------------- one spelling each
def _lines(paths):
    for path in paths:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not re.search("deprecat", line, re.IGNORECASE):
                yield path, number, line


SOURCES = [p for p in (ROOT / "bayesgen").rglob("*.py") if p.name != "deprecation.py"]
DOCS = [*(ROOT / "docs").rglob("*.md"), *(ROOT / "docs").rglob("*.rst")]


def test_one_spelling_of_unlabeled():
    """scikit-learn's spelling (unlabeled, labeled, labeling) in the package and docs."""
    old = re.compile(r"[Ll]abell(ed|ing)")
    left = [f"{p.relative_to(ROOT)}:{n}" for p, n, line in _lines(SOURCES + DOCS)
            if old.search(line)]
    assert not left, left


def test_no_old_parameter_name_outside_the_deprecation_shims():
    old = re.compile(r"covariance_prior|(?<![A-Za-z0-9])cov_prior(?![A-Za-z0-9_])")
    left = [f"{p.relative_to(ROOT)}:{n}" for p, n, line in _lines(SOURCES + DOCS)
            if old.search(line)]
    assert not left, left
