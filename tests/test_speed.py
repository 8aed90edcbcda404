"""Issue 16 (speed): lazy imports, the on-demand log-likelihood, compile-once NUTS."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import bayesgen as bg
from bayesgen.inference import loglik
from tests.conftest import make_data

# tiny NUTS runs: the fast paths' agreement is checked, not convergence
pytestmark = pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning")

HEAVY = ("pymc", "pytensor", "arviz", "jax", "numpyro", "xarray", "matplotlib")


def test_point_methods_never_import_the_heavy_libraries():
    code = (
        "import sys, numpy as np, bayesgen as bg\n"
        "X = np.random.default_rng(0).normal(size=(60, 3)); y = np.repeat([0, 1, 2], 20)\n"
        "for cls in (bg.LDA, bg.QDA, bg.GaussianNB):\n"
        "    for m in ('mle', 'map'):\n"
        "        cls(method=m).fit(X, y).predict_proba(X)\n"
        "bg.MultinomialNB().fit(np.abs(X).round(), y).predict(np.abs(X).round())\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_lazy_attributes_resolve():
    assert bg.plot_ppc is bg.diagnostics.plot_ppc
    assert bg.ppc_pvalues is bg.diagnostics.ppc_pvalues
    assert bg.plot_compare is bg.diagnostics.plot_compare
    assert callable(bg.plots.reliability_diagram)
    assert {"diagnostics", "plots", "plot_ppc"} <= set(dir(bg))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bg.nope


@pytest.fixture(scope="module")
def big_fits():
    """Conjugate fits whose log-likelihood table exceeds the at-fit threshold, and the
    warnings their fits gave."""
    X, y = make_data("real", n_per_class=200)
    draws = loglik.AT_FIT_MAX_VALUES // (4 * y.size) + 10
    kw = dict(chains=4, draws=draws, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qda = bg.QDA(method="conjugate", **kw).fit(X, y)
        lda = bg.LDA(method="conjugate", **kw).fit(X, y)
    return X, y, qda, lda, [w for w in caught if issubclass(w.category, bg.DataWarning)]


def test_large_log_likelihood_is_added_on_demand(big_fits):
    from bayesgen.inference import posterior

    X, y, qda, _, caught = big_fits
    assert "log_likelihood" not in qda.idata_.groups()
    assert "observed_data" in qda.idata_.groups()  # the rows are kept at every n
    assert len(caught) == 2 and all("add_log_likelihood()" in str(w.message) for w in caught)
    idata = qda.add_log_likelihood()  # from the kept rows
    assert idata is qda.idata_
    ll = idata.log_likelihood["xy"]
    assert ll.dims == ("chain", "draw", "obs")
    assert ll.shape == (4, qda.draws, y.size)
    expected = posterior.pointwise_log_lik(qda._family, X, y, qda._params, qda._log_pi_draws)
    np.testing.assert_array_equal(ll.values.reshape(-1, y.size), expected)
    assert qda.add_log_likelihood(X, y) is idata  # idempotent


def test_compare_adds_the_missing_groups(big_fits):
    X, y, qda, lda, _ = big_fits
    assert "log_likelihood" not in lda.idata_.groups()
    # conjugate: exact LOO from the kept rows, no group needed
    table = bg.compare({"QDA": qda, "LDA": lda})
    assert set(table.index) == {"QDA", "LDA"}
    assert "log_likelihood" not in lda.idata_.groups()
    lda.add_log_likelihood()  # for az.loo / az.compare directly
    assert "log_likelihood" in lda.idata_.groups()


def test_small_data_keeps_the_group_at_fit():
    X, y = make_data("real")
    clf = bg.QDA(method="conjugate", draws=100, random_state=0).fit(X, y)
    assert "log_likelihood" in clf.idata_.groups()


def test_add_log_likelihood_needs_a_posterior():
    X, y = make_data("real")
    with pytest.raises(ValueError, match="posterior"):
        bg.QDA().fit(X, y).add_log_likelihood()


def test_too_large_log_likelihood_is_refused_on_demand(monkeypatch):
    from bayesgen.inference import posterior

    X, y = make_data("real")
    clf = bg.GaussianNB(method="conjugate", draws=50, random_state=0).fit(X, y)
    del clf.idata_.log_likelihood
    monkeypatch.setattr(posterior, "LOG_LIK_MAX_VALUES", 1000)
    with pytest.raises(ValueError, match="too large"):
        clf.add_log_likelihood()


# ------------------------------------------------------------- compile once
MCMC = dict(chains=2, draws=150, tune=150, progressbar=False)


def _fit(X, y, seed, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # short chains: convergence
        return bg.GaussianNB(method="mcmc", random_state=seed, **MCMC, **kw).fit(X, y)


@pytest.mark.slow
def test_refit_on_new_data_of_the_same_shape_reuses_the_program():
    pytest.importorskip("numpyro")
    from bayesgen.inference import jax_nuts

    X, y = make_data("real", seed=1)
    first = _fit(X, y, 0)
    n_programs = len(jax_nuts._PROGRAMS)
    X2, y2 = make_data("real", seed=2)
    second = _fit(X2 * 10.0 + 3.0, y2, 0)
    assert len(jax_nuts._PROGRAMS) == n_programs  # no new program for new data
    # the data reached the program: the posterior means follow it
    mu1 = first.idata_.posterior["mu"].mean(("chain", "draw")).values
    mu2 = second.idata_.posterior["mu"].mean(("chain", "draw")).values
    for est, Xd, yd, mu in ((first, X, y, mu1), (second, X2 * 10.0 + 3.0, y2, mu2)):
        means = np.array([Xd[yd == k].mean(0) for k in range(3)])
        sd = np.array([Xd[yd == k].std(0) for k in range(3)]) / np.sqrt(40)
        assert np.all(np.abs(mu - means) < 5 * sd), est


@pytest.mark.slow
def test_same_random_state_same_draws():
    pytest.importorskip("numpyro")
    X, y = make_data("real", seed=3)
    a, b, c = _fit(X, y, 5), _fit(X, y, 5), _fit(X, y, 6)
    np.testing.assert_array_equal(a.idata_.posterior["mu"].values,
                                  b.idata_.posterior["mu"].values)
    assert not np.array_equal(a.idata_.posterior["mu"].values,
                              c.idata_.posterior["mu"].values)
    stats = a.idata_.sample_stats
    for name in ("diverging", "n_steps", "tree_depth", "lp", "energy", "step_size",
                 "acceptance_rate"):
        assert stats[name].shape == (2, 150), name
    assert a.idata_.posterior["mu"].dtype == np.float64
