"""method="conjugate": exact posterior draws, InferenceData, predictive probabilities."""

import arviz as az
import matplotlib
import numpy as np
import pytest
from scipy import stats
from scipy.special import softmax

import bayesgen as bg
from bayesgen.inference.posterior import exact_predictive_log_joint, predictive_log_joint
from tests.conftest import CLASSIFIERS, make_data

# PSIS-LOO of few posterior draws: ArviZ's Pareto-k warning is expected
pytestmark = pytest.mark.filterwarnings(
    "ignore:Estimated shape parameter of Pareto distribution:UserWarning:arviz")

matplotlib.use("Agg")

CONJUGATE = [name for name in sorted(CLASSIFIERS) if name != "KernelNB"]


@pytest.fixture(scope="module", params=CONJUGATE)
def fitted(request):
    factory, kind = CLASSIFIERS[request.param]
    X, y = make_data(kind, n_per_class=8, seed=4)
    clf = factory(method="conjugate", draws=1500, chains=4, random_state=0).fit(X, y)
    return request.param, factory, X, y, clf


def test_idata_layout(fitted):
    name, _, X, y, clf = fitted
    idata = clf.idata_
    assert {"posterior", "log_likelihood", "observed_data"} <= set(idata.groups())
    post = idata.posterior
    assert post["pi"].dims == ("chain", "draw", "class")
    assert post.sizes["chain"] == 4 and post.sizes["draw"] == 1500
    assert list(post["class"].values) == list(clf.classes_)
    for var, dims in clf._family.param_dims.items():
        assert post[var].dims == ("chain", "draw", *dims)
    assert list(idata.log_likelihood.data_vars) == ["xy"]
    assert idata.log_likelihood["xy"].dims == ("chain", "draw", "obs")
    assert np.all(np.isfinite(idata.log_likelihood["xy"].values))
    np.testing.assert_array_equal(idata.observed_data["y"].values, y)
    loo = az.loo(idata)
    assert np.isfinite(loo.elpd_loo)
    summary = az.summary(idata, var_names=["pi"])
    assert summary["r_hat"].max() < 1.01


def test_pointwise_log_lik_is_the_joint(fitted):
    name, _, X, y, clf = fitted
    # draw 0 as a point estimate: log p(x_n, y_n | theta_0) through the plug-in code
    params0 = {k: (v[0] if k in clf._family.param_dims else v) for k, v in clf._params.items()}
    Xc = clf._family.check_X(X, method="map", who=name)
    joint = clf._family.log_lik(Xc, params0, full=True) + clf._log_pi_draws[0]
    ll = clf.idata_.log_likelihood["xy"].values[0, 0]
    np.testing.assert_allclose(ll, joint[np.arange(len(y)), y], rtol=1e-10)


def test_pi_posterior_moments(fitted):
    *_, clf = fitted
    conc = clf.class_count_ + clf.class_alpha_
    pi = clf.idata_.posterior["pi"].values.reshape(-1, conc.size)
    ref = stats.dirichlet(conc)
    se = np.sqrt(ref.var() / pi.shape[0])
    assert np.all(np.abs(pi.mean(0) - ref.mean()) < 5 * se)
    np.testing.assert_allclose(pi.std(0), np.sqrt(ref.var()), rtol=0.05)
    np.testing.assert_allclose(clf.class_prior_, pi.mean(0))


def test_predict_proba_is_the_closed_form_and_draws_converge_to_it(fitted):
    name, factory, X, y, clf = fitted
    exact = softmax(exact_predictive_log_joint(clf, X), axis=1)
    np.testing.assert_allclose(clf.predict_proba(X), exact, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X),
                               exact_predictive_log_joint(clf, X), rtol=1e-12)
    # the log-mean-exp over the i.i.d. draws estimates the same predictive
    by_draws = softmax(predictive_log_joint(clf._family, X, clf._params, clf._log_pi_draws),
                       axis=1)
    np.testing.assert_allclose(by_draws, exact, atol=0.03)


def test_predictive_approaches_map_plugin_with_more_data(fitted):
    name, factory, _, _, _ = fitted
    kind = CLASSIFIERS[name][1]
    X, y = make_data(kind, n_per_class=3000, seed=5)
    Xt, _ = make_data(kind, n_per_class=30, seed=6)
    post = factory(method="conjugate", draws=100, chains=2, random_state=0).fit(X, y)
    point = factory(method="map").fit(X, y)
    np.testing.assert_allclose(post.predict_proba(Xt), point.predict_proba(Xt), atol=0.02)


def test_proba_draws_and_interval(fitted):
    name, _, X, y, clf = fitted
    draws = clf.predict_proba_draws(X[:7])
    assert draws.dims == ("chain", "draw", "obs", "class")
    assert draws.shape == (4, 1500, 7, 3)
    np.testing.assert_allclose(draws.sum("class").values, 1.0)
    assert list(draws["class"].values) == list(clf.classes_)
    hdi = clf.predict_proba_interval(X[:7], hdi_prob=0.9)
    assert hdi.dims == ("obs", "class", "hdi")
    assert np.all(hdi.sel(hdi="lower") <= hdi.sel(hdi="higher"))
    assert np.all((hdi >= 0) & (hdi <= 1))


def test_posterior_predictive_sample(fitted):
    name, _, X, y, clf = fitted
    Xs, ys = clf.sample(300, random_state=1)
    assert Xs.shape == (300, X.shape[1])
    assert np.all(np.isfinite(clf.predict_proba(Xs)))
    again = clf.sample(300, random_state=1)
    np.testing.assert_array_equal(Xs, again[0])


def test_save_load_round_trip(fitted, tmp_path):
    name, _, X, y, clf = fitted
    path = tmp_path / f"{name}.nc"
    clf.save(path)
    loaded = bg.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    assert loaded.get_params() == clf.get_params() or name == "MixedNB"
    xr_a = clf.idata_.posterior["pi"].values
    np.testing.assert_array_equal(loaded.idata_.posterior["pi"].values, xr_a)
    assert np.isfinite(az.loo(loaded.idata_).elpd_loo)


def test_same_seed_same_result(fitted):
    name, factory, X, y, clf = fitted
    again = factory(method="conjugate", draws=1500, chains=4, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))


def test_plot_posterior_runs():
    X, y = make_data("real", n_per_class=10)
    clf = bg.QDA(method="conjugate", draws=200, random_state=0).fit(X, y)
    axes = az.plot_posterior(clf.idata_, var_names=["pi"])
    assert np.size(axes) == 3
    matplotlib.pyplot.close("all")


def test_compare_table():
    X, y = make_data("real", n_per_class=15)
    models = {
        "LDA": bg.LDA(method="conjugate", draws=500, random_state=0).fit(X, y),
        "QDA": bg.QDA(method="conjugate", draws=500, random_state=0).fit(X, y),
        "GaussianNB": bg.GaussianNB(method="conjugate", draws=500, random_state=0).fit(X, y),
    }
    table = bg.compare(models)
    assert set(table.index) == set(models)
    assert "elpd_loo" in table.columns
    with pytest.raises(ValueError, match="posterior"):
        bg.compare({"a": bg.LDA().fit(X, y), "b": models["QDA"]})


def test_kernel_has_no_conjugate_posterior():
    X, y = make_data("real")
    with pytest.raises(ValueError, match="mcmc"):
        bg.KernelNB(method="conjugate").fit(X, y)


def test_posterior_methods_take_real_valued_counts():
    """Term weights (TF-IDF): the Dirichlet posterior and its predictive are defined for
    real counts; the predictive's x! is Gamma(x + 1). Scaling the counts by an integer
    factor keeps the fit a proper one of whole counts to compare with."""
    X, y = make_data("count")
    clf = bg.MultinomialNB(method="conjugate", random_state=0).fit(X + 0.5, y)
    assert clf.score(X, y) > 0.5
    assert bg.MultinomialNB(method="map").fit(X + 0.5, y).score(X, y) > 0.5
    halves = bg.MultinomialNB(method="conjugate", random_state=0).fit(X / 2.0, y)
    whole = bg.MultinomialNB(method="conjugate", random_state=0).fit(X, y)
    # the Dirichlet posterior of X / 2 has half the data counts: it sits between the
    # prior and the posterior of X, and its predictive is finite and normalised
    assert np.all(halves.feature_count_ == whole.feature_count_ / 2.0)
    assert np.allclose(halves.predict_proba(X / 2.0).sum(axis=1), 1.0)


@pytest.mark.parametrize("cls", [bg.MultinomialNB, bg.PoissonNB], ids=lambda c: c.__name__)
def test_real_count_predictive_is_the_mean_of_the_kernel_over_the_posterior(cls):
    """For real-valued counts the closed-form predictive (Dirichlet-multinomial or
    negative binomial, x! as Gamma(x + 1)) is still E[p(x | theta)] under the posterior:
    the log-mean-exp over i.i.d. posterior draws of the same kernel converges to it."""
    X, y = make_data("count")
    X = X * 0.37 + 0.05
    clf = cls(method="conjugate", draws=3000, chains=2, random_state=0).fit(X, y)
    exact = exact_predictive_log_joint(clf, X)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), exact, rtol=1e-12)
    by_draws = predictive_log_joint(clf._family, X, clf._params, clf._log_pi_draws)
    np.testing.assert_allclose(softmax(by_draws, axis=1), softmax(exact, axis=1), atol=0.03)
    np.testing.assert_allclose(by_draws, exact, rtol=0.02)


def test_point_methods_reject_posterior_helpers():
    X, y = make_data("real")
    clf = bg.GaussianNB().fit(X, y)
    with pytest.raises(ValueError, match="posterior"):
        clf.predict_proba_draws(X)


def test_huge_log_likelihood_is_skipped_with_a_warning(monkeypatch):
    from bayesgen.inference import posterior

    monkeypatch.setattr(posterior, "LOG_LIK_MAX_VALUES", 1000)
    X, y = make_data("real")
    with pytest.warns(bg.DataWarning, match="no log_likelihood group"):
        clf = bg.GaussianNB(method="conjugate", draws=100, random_state=0).fit(X, y)
    assert "log_likelihood" not in clf.idata_.groups()
    assert np.all(np.isfinite(clf.predict_proba(X)))
    # exact LOO needs no log_likelihood group; the rows are not kept (too many values)
    table = bg.compare({"a": clf, "b": clf}, X=X, y=y)
    assert not table["warning"].any()


def test_refit_with_a_point_method_drops_the_posterior():
    X, y = make_data("real")
    clf = bg.GaussianNB(method="conjugate", draws=50, random_state=0).fit(X, y)
    assert hasattr(clf, "idata_")
    clf.set_params(method="map").fit(X, y)
    assert not hasattr(clf, "idata_") and not hasattr(clf, "_log_pi_draws")
    np.testing.assert_allclose(clf.predict_proba(X), bg.GaussianNB().fit(X, y).predict_proba(X))
