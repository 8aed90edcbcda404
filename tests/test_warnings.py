"""bayesgen's warning classes, attributed to the user's calling line."""

import warnings

import numpy as np
import pytest

import bayesgen as bg
from bayesgen import exceptions
from bayesgen.inference import mcmc
from tests.conftest import make_data


def test_warning_classes_are_public_user_warnings():
    for cls in (bg.ConvergenceWarning, bg.DataWarning):
        assert issubclass(cls, bg.BayesgenWarning)
    assert issubclass(bg.BayesgenWarning, UserWarning)
    assert not issubclass(bg.BayesgenWarning, RuntimeWarning)
    assert {"BayesgenWarning", "ConvergenceWarning", "DataWarning"} <= set(bg.__all__)


def test_no_runtime_warning_is_issued_by_bayesgen():
    """Every warnings.warn in the package goes through exceptions.warn (user's line)."""
    from pathlib import Path

    root = Path(bg.__file__).parent
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "exceptions.py" and "warnings.warn(" in path.read_text()
    ]
    assert offenders == []


def _impossible_row_model():
    """MultinomialNB MLE on which word 3 was never seen: such rows have zero likelihood."""
    X = np.array([[3, 0, 0, 0], [1, 2, 0, 0], [2, 0, 1, 0], [0, 4, 1, 0]], dtype=float)
    return bg.MultinomialNB(method="mle").fit(X, [0, 0, 1, 1]), [[1, 0, 0, 1]]


@pytest.mark.parametrize("call", ["predict_proba", "predict", "predict_log_proba"])
def test_prior_fallback_points_at_the_user_line(call):
    clf, row = _impossible_row_model()
    with pytest.warns(bg.DataWarning, match="fall back to the class prior") as record:
        getattr(clf, call)(row)
    assert record[0].filename == __file__


def test_attribution_through_scikit_learn_mixins():
    """ClassifierMixin.score calls predict: still the user's line, not sklearn/base.py."""
    clf, row = _impossible_row_model()
    with pytest.warns(bg.DataWarning) as record:
        clf.score(row, [0])
    assert record[0].filename == __file__


def test_all_warnings_can_be_silenced_through_the_base_class():
    clf, row = _impossible_row_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", bg.BayesgenWarning)
        assert np.all(np.isfinite(clf.predict_proba(row)))


def test_huge_log_likelihood_warning_points_at_the_user_line(monkeypatch):
    from bayesgen.inference import posterior

    monkeypatch.setattr(posterior, "LOG_LIK_MAX_VALUES", 10)
    X, y = make_data("real", n_per_class=5)
    with pytest.warns(bg.DataWarning, match="no log_likelihood group") as record:
        bg.GaussianNB(method="conjugate", draws=5, chains=1, random_state=0).fit(X, y)
    assert record[0].filename == __file__


def test_ppc_pvalues_warning_points_at_the_user_line():
    X, y = make_data("real", n_per_class=5)
    X = np.vstack([X, X[:1]])
    y = np.append(y, 3)  # a class with one row: its sd is undefined
    clf = bg.GaussianNB(method="conjugate", draws=20, chains=1, random_state=0).fit(X, y)
    with pytest.warns(bg.DataWarning, match="undefined") as record:
        bg.ppc_pvalues(clf, random_state=0)
    assert record[0].filename == __file__


def test_warn_helper_skips_every_bayesgen_frame():
    def inner():  # a frame of this test file, i.e. outside bayesgen
        exceptions.warn("direct", bg.DataWarning)

    with pytest.warns(bg.DataWarning) as record:
        inner()
    assert record[0].filename == __file__


def _fake_idata(chains: int, draws: int = 500, seed: int = 0):
    import arviz as az

    rng = np.random.default_rng(seed)
    return az.from_dict(posterior={"pi": rng.normal(size=(chains, draws, 3))})


def test_one_chain_report_says_rhat_needs_two_chains():
    problems = mcmc.convergence_report(_fake_idata(1), ["pi"])
    assert any("R-hat was not computed: it needs two or more chains" in p for p in problems)
    assert not any("nan" in p.lower() for p in problems)


def test_two_chain_report_of_good_draws_is_empty():
    assert mcmc.convergence_report(_fake_idata(2), ["pi"]) == []


def test_report_of_diverging_chains_gives_rhat():
    idata = _fake_idata(2)
    idata.posterior["pi"][1] += 5.0  # the chains disagree
    problems = mcmc.convergence_report(idata, ["pi"])
    assert any(p.startswith("R-hat up to") for p in problems)


def test_warn_if_not_converged_points_at_the_caller():
    with pytest.warns(bg.ConvergenceWarning, match="needs two or more chains") as record:
        mcmc.warn_if_not_converged(_fake_idata(1), ["pi"], "GaussianNB")
    assert record[0].filename == __file__


@pytest.mark.slow
def test_mcmc_non_convergence_points_at_the_user_line():
    X, y = make_data("real", n_per_class=10)
    with pytest.warns(bg.ConvergenceWarning, match="needs two or more chains") as record:
        bg.GaussianNB(method="mcmc", chains=1, draws=30, tune=30, progressbar=False,
                      random_state=np.random.default_rng(0)).fit(X, y)
    ours = [r for r in record if issubclass(r.category, bg.ConvergenceWarning)]
    assert len(ours) == 1 and ours[0].filename == __file__
    assert "R-hat up to nan" not in str(ours[0].message)


def test_convergence_warning_is_scikit_learns_too():
    """Filters written for scikit-learn's ConvergenceWarning catch bayesgen's (issue:
    users' existing warning filters missed it)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    import bayesgen as bg

    assert issubclass(bg.ConvergenceWarning, SklearnConvergenceWarning)
    assert issubclass(bg.ConvergenceWarning, bg.BayesgenWarning)
    assert issubclass(bg.ConvergenceWarning, UserWarning)
    assert bg.ConvergenceWarning is bg.exceptions.ConvergenceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", SklearnConvergenceWarning)
        with pytest.raises(SklearnConvergenceWarning):
            warnings.warn("not converged", bg.ConvergenceWarning, stacklevel=1)


def test_import_bayesgen_does_not_import_scikit_learn():
    """The warning classes stay importable without loading scikit-learn."""
    import subprocess
    import sys

    code = "import sys, bayesgen; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "False"
