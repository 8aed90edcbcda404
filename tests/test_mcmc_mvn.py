"""method="mcmc" for LDA and QDA: the PyMC models against scipy and the exact NIW posterior.

References: ``scipy.stats`` log-densities (chi2, norm, multivariate_normal, dirichlet,
invwishart, t, halfnorm), the Bartlett change of variables checked through a numerical
Jacobian, the closed-form prior marginals (Murphy 2007), and the conjugate posterior.
"""

import arviz as az
import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats
from sklearn.datasets import load_iris

import bayesgen as bg
from bayesgen.families.mvn import pymc
from bayesgen.families.mvn.family import MVNFamily
from bayesgen.inference.mcmc import convergence_report
from bayesgen.inference.model import build_stats_model

pytestmark = pytest.mark.slow

ESTIMATORS = {"QDA": bg.QDA, "LDA": bg.LDA}
MCMC = dict(chains=4, draws=500, tune=500, random_state=1, progressbar=False)


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def _fits(cls, X, y, **kw):
    mcmc = cls(method="mcmc", **MCMC, **kw).fit(X, y)
    conj = cls(method="conjugate", chains=4, draws=4000, random_state=2).fit(X, y)
    return mcmc, conj


@pytest.fixture(scope="module", params=["QDA", "LDA"])
def fits(request, iris):
    return (request.param, *_fits(ESTIMATORS[request.param], *iris))


@pytest.fixture(scope="module")
def lkj_fits(iris):
    return _fits(bg.QDA, *iris, cov_prior_form="lkj")


def _point(model, rng, scale=0.3):
    """Random values for every free variable, in the model's value space."""
    return {k: v + rng.normal(scale=scale, size=np.shape(v))
            for k, v in model.initial_point().items()}


def _named_values(model, point):
    """Free variables in their natural space, and the Deterministics, at ``point``."""
    names = [v.name for v in model.unobserved_value_vars]
    fn = model.compile_fn(model.unobserved_value_vars, inputs=model.value_vars,
                          on_unused_input="ignore")
    return dict(zip(names, fn(point), strict=True))


def _per_class(a, n_classes):
    return np.broadcast_to(a, (n_classes, *np.shape(a)[-2:]))


# ----------------------------------------------------------------- 1. model_ vs scipy
@pytest.mark.parametrize("name", ["QDA", "LDA"])
def test_model_logp_matches_scipy(iris, name):
    X, y = iris
    clf = ESTIMATORS[name]().fit(X, y)
    model = clf.build_model(X, y)
    point = _point(model, np.random.default_rng(0))
    v = _named_values(model, point)
    prior = clf._prior
    d = X.shape[1]
    pi, mu, c, off = v["pi"], v["mu"], v["cov_bartlett_diag_sq"], v["cov_bartlett_lower"]
    cov = _per_class(v["cov"], 3)
    expected = stats.dirichlet.logpdf(pi, clf.class_alpha_) + np.log(pi[y]).sum()
    expected += stats.chi2.logpdf(c, prior["nu0"] - np.arange(d)).sum()
    expected += stats.norm.logpdf(off).sum()
    for k in range(3):
        expected += stats.multivariate_normal.logpdf(mu[k], prior["m0"], cov[k] / prior["kappa0"])
        expected += stats.multivariate_normal.logpdf(X[y == k], mu[k], cov[k]).sum()
    assert model.compile_logp(jacobian=False)(point) == pytest.approx(expected, rel=1e-9)
    assert off.shape[-1] == d * (d - 1) // 2 and c.shape[-1] == d


@pytest.mark.parametrize("name", ["QDA", "LDA"])
def test_model_variables_and_plates_are_named(iris, name):
    """model_ reads as the documented model (issue 26): the Bartlett variables are named
    for what they are, every plate of pm.model_to_graphviz has named dims (no unnamed
    "3 x 6"), and the class means are an MvNormal, not "CustomDist_mu"."""
    from pymc.model_graph import ModelGraph

    X, y = iris
    model = ESTIMATORS[name](method="map").fit(X, y).build_model(X, y)
    assert {rv.name for rv in model.free_RVs} == {
        "pi", "cov_bartlett_diag_sq", "cov_bartlett_lower", "mu"}
    for plate in ModelGraph(model).get_plates():
        assert plate.dim_info.names and all(plate.dim_info.names), plate
    assert model.named_vars_to_dims["cov_bartlett_lower"][-1] == "feature_pair"
    assert model.coords["feature_pair"] == ("x1,x0", "x2,x0", "x2,x1", "x3,x0", "x3,x1",
                                            "x3,x2")
    assert type(model["mu"].owner.op).__name__ == "MvNormal"


@pytest.mark.parametrize("name", ["QDA", "LDA"])
def test_bartlett_density_is_inverse_wishart(iris, name):
    """p(c, A_offdiag) / |d vech(Sigma) / d(c, A_offdiag)| == IW(Sigma; Psi0, nu0).

    The Jacobian is taken numerically (PyTensor autodiff) through the model's own graph
    of the ``cov`` Deterministic, so this checks that the Bartlett variables carry exactly
    the Inverse-Wishart prior, whatever the code in between.
    """
    X, y = iris
    X = X[:, :3]
    clf = ESTIMATORS[name]().fit(X, y)
    model = clf.build_model(X, y)
    c_rv, off_rv = model["cov_bartlett_diag_sq"], model["cov_bartlett_lower"]
    inputs = [model.rvs_to_values[c_rv], model.rvs_to_values[off_rv]]  # log c, offdiag
    cov = model.replace_rvs_by_values([model["cov"]])[0]
    rows, cols = np.tril_indices(3)
    vech = cov[..., rows, cols].flatten()
    jac = pytensor.gradient.jacobian(vech, inputs)
    jac = pt.concatenate([j.reshape((vech.shape[0], -1)) for j in jac], axis=1)
    jac_fn = pytensor.function(inputs, [jac, cov])
    logp_fn = model.compile_logp(vars=[c_rv, off_rv], jacobian=False)
    rng = np.random.default_rng(3)
    for _ in range(3):
        point = _point(model, rng, scale=0.5)
        log_c = point["cov_bartlett_diag_sq_log__"]
        J, sigma = jac_fn(log_c, point["cov_bartlett_lower"])
        assert J.shape[0] == J.shape[1]
        log_jac = np.linalg.slogdet(J)[1] - log_c.sum()  # d log c = dc / c
        expected = sum(
            stats.invwishart.logpdf(s, df=clf._prior["nu0"], scale=clf._prior["Psi0"])
            for s in np.reshape(sigma, (-1, 3, 3))
        )
        assert logp_fn(point) - log_jac == pytest.approx(expected, rel=1e-7)


@pytest.mark.parametrize("name", ["QDA", "LDA"])
def test_lkj_model_mean_and_rows_match_scipy(iris, name):
    X, y = iris
    clf = ESTIMATORS[name](cov_prior_form="lkj").fit(X, y)
    model = clf.build_model(X, y)
    point = _point(model, np.random.default_rng(4))
    v = _named_values(model, point)
    prior = clf._prior
    sd0 = np.sqrt(np.diag(prior["Psi0"]) / (prior["nu0"] - X.shape[1] - 1))
    mu, cov = v["mu"], _per_class(v["cov"], 3)
    expected = stats.norm.logpdf(mu, prior["m0"], 10 * sd0).sum()
    for k in range(3):
        expected += stats.multivariate_normal.logpdf(X[y == k], mu[k], cov[k]).sum()
    logp = model.compile_logp(vars=[model["mu"], model["x"]], jacobian=False)(point)
    assert logp == pytest.approx(expected, rel=1e-9)


# ------------------------------------------------- 2. statistics model vs row model
@pytest.mark.parametrize("cov_prior_form", ["niw", "lkj"])
@pytest.mark.parametrize("name", ["QDA", "LDA"])
def test_stats_model_equals_row_model_up_to_a_constant(iris, name, cov_prior_form):
    X, y = iris
    clf = ESTIMATORS[name](cov_prior_form=cov_prior_form).fit(X, y)
    rows, on_stats = clf.build_model(X, y), build_stats_model(clf)
    f_rows = rows.compile_logp(jacobian=False)
    f_stats = on_stats.compile_logp(jacobian=False)
    rng = np.random.default_rng(1)
    diffs = [f_rows(p) - f_stats(p) for p in (_point(on_stats, rng) for _ in range(5))]
    # the constant is the dropped -N d/2 log(2 pi)
    np.testing.assert_allclose(diffs, -0.5 * X.size * np.log(2 * np.pi), rtol=1e-10)


def test_stats_model_weights_equal_duplicated_rows(iris):
    X, y = iris
    w = np.where(np.arange(len(y)) % 3 == 0, 2.0, 1.0)
    dup = np.repeat(np.arange(len(y)), w.astype(int))
    weighted = build_stats_model(bg.QDA().fit(X, y, sample_weight=w))
    duplicated = build_stats_model(bg.QDA().fit(X[dup], y[dup]))
    f_w, f_d = weighted.compile_logp(), duplicated.compile_logp()
    rng = np.random.default_rng(5)
    for point in (_point(weighted, rng) for _ in range(3)):
        assert f_w(point) == pytest.approx(f_d(point), rel=1e-9)


# ------------------------------------------------------------- 3. prior predictive
@pytest.mark.parametrize("name", ["QDA", "LDA"])
def test_prior_predictive_has_the_niw_marginals(iris, name):
    X, y = iris
    d, n_draws = X.shape[1], 2000
    clf = ESTIMATORS[name](cov_dof=d + 10).fit(X, y)  # finite IW variances
    idata = clf.sample_prior_predictive(draws=n_draws, random_state=0, X=X, y=y)
    prior = idata.prior
    np.testing.assert_allclose(prior["pi"].mean(("chain", "draw")), 1 / 3, atol=0.02)
    nu0, Psi0, m0, kappa0 = (clf._prior[k] for k in ("nu0", "Psi0", "m0", "kappa0"))
    # cov: every class has the same IW prior; pool the classes' draws
    cov = prior["cov"].values.reshape(-1, d, d)
    se = np.sqrt(stats.invwishart.var(df=nu0, scale=Psi0) / cov.shape[0])
    np.testing.assert_array_less(
        np.abs(cov.mean(0) - stats.invwishart.mean(df=nu0, scale=Psi0)), 5 * se
    )
    reference = stats.invwishart.rvs(df=nu0, scale=Psi0, size=cov.shape[0], random_state=7)
    for i, j in zip(*np.tril_indices(d), strict=True):
        assert stats.ks_2samp(cov[:, i, j], reference[:, i, j]).pvalue > 1e-3, (i, j)
    # mu and a replicated x are multivariate t with nu0 - d + 1 dof (Murphy 2007, eq. 258)
    df = nu0 - d + 1
    mu = prior["mu"].values.reshape(-1, 3, d)[:, 0]
    x0 = idata.prior_predictive["x"].values.reshape(-1, len(y), d)[:, 0]
    for values, inflate in ((mu, 1 / kappa0), (x0, 1 + 1 / kappa0)):
        scale = np.sqrt(np.diag(Psi0) * inflate / df)
        for j in range(d):
            dist = stats.t(df, loc=m0[j], scale=scale[j])
            assert stats.kstest(values[:, j], dist.cdf).pvalue > 1e-3, j
    assert idata.prior_predictive["x"].dims == ("chain", "draw", "obs", "feature")


def test_lkj_prior_predictive_scales(iris):
    X, y = iris
    d = X.shape[1]
    clf = bg.QDA(cov_prior_form="lkj").fit(X, y)
    prior = clf.sample_prior_predictive(draws=2000, random_state=1, X=X, y=y).prior
    sd0 = np.sqrt(np.diag(clf._prior["Psi0"]) / (clf._prior["nu0"] - d - 1))
    sd = np.sqrt(np.diagonal(prior["cov"].values, axis1=-2, axis2=-1)).reshape(-1, d)
    mu = prior["mu"].values.reshape(-1, d)
    for j in range(d):
        assert stats.kstest(sd[:, j], stats.halfnorm(scale=2.5 * sd0[j]).cdf).pvalue > 1e-3
        assert stats.kstest(mu[:, j], stats.norm(clf._prior["m0"][j], 10 * sd0[j]).cdf
                            ).pvalue > 1e-3


# ----------------------------------------------------- 4. MCMC vs exact posterior
def test_mcmc_agrees_with_conjugate(fits, iris):
    name, mcmc, conj = fits
    X, _ = iris
    n_conj = conj.idata_.posterior.sizes["chain"] * conj.idata_.posterior.sizes["draw"]
    for var in ("pi", "mu", "cov"):
        a = mcmc.idata_.posterior[var]
        b = conj.idata_.posterior[var]
        mcse = az.mcse(mcmc.idata_, var_names=[var])[var]
        tol = 4 * np.sqrt(mcse**2 + b.std(("chain", "draw")) ** 2 / n_conj)
        diff = np.abs(a.mean(("chain", "draw")) - b.mean(("chain", "draw")))
        assert bool((diff <= tol).all()), (name, var)
        # and the posterior spread, not only the mean
        np.testing.assert_allclose(a.std(("chain", "draw")), b.std(("chain", "draw")),
                                   rtol=0.15)
    np.testing.assert_allclose(mcmc.predict_proba(X), conj.predict_proba(X), atol=0.03)


# ------------------------------------------------------------- 5. idata_ layout
def test_mcmc_idata_layout(fits):
    name, mcmc, conj = fits
    post = mcmc.idata_.posterior
    assert set(post.data_vars) == {"pi", "mu", "cov"}
    for var in ("pi", "mu", "cov"):
        assert post[var].dims == conj.idata_.posterior[var].dims
    expected = ("chain", "draw", "class", "feature", "feature_bis")
    assert post["cov"].dims == (expected if name == "QDA" else expected[:2] + expected[3:])
    assert "diverging" in mcmc.idata_.sample_stats
    assert int(mcmc.idata_.sample_stats["diverging"].sum()) == 0
    assert np.isfinite(az.loo(mcmc.idata_).elpd_loo)
    assert mcmc.summary()["r_hat"].max() <= 1.01
    assert convergence_report(mcmc.idata_, ["pi", "mu", "cov"]) == []
    cov = np.asarray(mcmc.covariance_)
    np.testing.assert_allclose(cov, np.swapaxes(cov, -1, -2))
    assert np.all(np.linalg.eigvalsh(cov) > 0)


# ------------------------------------------------------------------ LKJ
def test_lkj_samples_and_is_close_to_the_conjugate(lkj_fits, iris):
    """LKJ is not the conjugate prior: close, not equal (the largest gaps, about 0.08,
    are at two versicolor/virginica boundary points of iris)."""
    mcmc, conj = lkj_fits
    X, _ = iris
    assert convergence_report(mcmc.idata_, ["pi", "mu", "cov"]) == []
    assert set(mcmc.idata_.posterior.data_vars) == {"pi", "mu", "cov"}
    gap = np.abs(mcmc.predict_proba(X) - conj.predict_proba(X))
    assert gap.mean() < 0.01
    assert gap.max() < 0.1
    np.testing.assert_allclose(mcmc.means_, conj.means_, atol=0.02)
    np.testing.assert_allclose(np.asarray(mcmc.covariance_), np.asarray(conj.covariance_),
                               atol=0.03)


# ------------------------------------------------------------ hooks and checks
def test_bad_cov_prior_form(iris):
    X, y = iris
    with pytest.raises(ValueError, match="'cov_prior_form' parameter of QDA must be a str among"):
        bg.QDA(cov_prior_form="wishart").fit(X, y)


@pytest.mark.parametrize("cov_prior_form", ["niw", "lkj"])
@pytest.mark.parametrize("tied", [False, True])
def test_hooks_honour_prefix_and_dims(iris, tied, cov_prior_form):
    X, y = iris
    family = MVNFamily(tied=tied, cov_prior_form=cov_prior_form)
    _stats = family.stats(X, y, np.ones(len(y)), 3)
    dims = {"mu": ("c", "f"), "cov": ("f", "f2") if tied else ("c", "f", "f2")}
    coords = {"c": [0, 1, 2], "f": list("abcd"), "f2": list("abcd"), "obs": np.arange(len(y))}
    with pm.Model(coords=coords) as model:
        params = family.pymc_params(family.prior(_stats), prefix="p_", dims=dims)
        family.pymc_observed(params, X, y, prefix="p_", dims=dims)
        family.pymc_stats_loglik(params, _stats)
    assert model.named_vars_to_dims["p_mu"] == dims["mu"]
    assert model.named_vars_to_dims["p_cov"] == dims["cov"]
    assert model.named_vars_to_dims["p_x"] == ("obs", "f")
    assert all(v.name.startswith(("p_mu", "p_cov")) for v in model.free_RVs)


def test_precision_scale_factor():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(2, 5, 5))
    Psi = B @ np.swapaxes(B, -1, -2) + np.eye(5)
    np.testing.assert_allclose(pymc.precision_scale_factor(Psi),
                               np.linalg.cholesky(np.linalg.inv(Psi)), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("tied", [False, True])
def test_per_class_prior_as_from_a_posterior(iris, tied):
    """A posterior used as the next prior (per-class m0, kappa0, nu0, Psi0): the model's
    draws have the NIW means E[Sigma_k] = Psi_k / (nu_k - d - 1), E[mu_k] = m_k."""
    X, y = iris
    family = MVNFamily(tied=tied)
    _stats = family.stats(X, y, np.ones(len(y)), 3)
    post = family.posterior(_stats, family.prior(_stats))
    prior = {"m0": post["m"], "kappa0": post["kappa"], "nu0": post["nu"], "Psi0": post["Psi"]}
    coords = {"class": [0, 1, 2], "feature": list("abcd"), "feature_bis": list("abcd")}
    with pm.Model(coords=coords) as model:
        family.pymc_params(prior)
    cov, mu = pm.draw([model["cov"], model["mu"]], draws=3000, random_seed=0)
    expected = post["Psi"] / (np.reshape(post["nu"], (-1, 1, 1)) - X.shape[1] - 1)
    np.testing.assert_allclose(cov.mean(0), np.squeeze(expected), rtol=0.03,
                               atol=0.03 * np.abs(expected).max())
    sd = np.sqrt(np.diagonal(_per_class(expected, 3), axis1=-2, axis2=-1) / post["kappa"][:, None])
    assert np.all(np.abs(mu.mean(0) - post["m"]) < 5 * sd / np.sqrt(3000))
