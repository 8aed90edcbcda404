"""``bg.compare(..., ic="evidence", candidates=True)``: the priors an empirical-Bayes
search scored, as rows of the evidence table, checked against refits at fixed values."""

import numpy as np
import pytest
from sklearn.datasets import load_wine

import bayesgen as bg


@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True)


@pytest.fixture(scope="module")
def table(wine):
    X, y = wine
    models = {"LDA": bg.LDA(cov_scale="auto").fit(X, y),
              "NB": bg.GaussianNB(var_dof="auto").fit(X, y)}
    return models, bg.compare(models, ic="evidence", candidates=True)


def test_fixed_candidate_row_is_the_evidence_of_a_fit_at_those_values(wine, table):
    X, y = wine
    models, got = table
    fixed = next(c for c in models["LDA"].prior_search_["candidates"]
                 if c["cov_dof"] != "auto")
    refit = bg.LDA(cov_dof=fixed["cov_dof"], cov_scale=fixed["cov_scale"],
                   mean_strength=fixed["mean_strength"]).fit(X, y)
    name = (f"LDA [cov_dof={fixed['cov_dof']:.4g}, cov_scale={fixed['cov_scale']:.4g}, "
            f"mean_strength={fixed['mean_strength']:.4g}]")
    np.testing.assert_allclose(got.loc[name, "log_evidence"],
                               refit.log_marginal_likelihood(), rtol=1e-10)


def test_searched_candidate_row_is_the_evidence_at_its_chosen_values(wine, table):
    X, y = wine
    models, got = table
    auto = next(c for c in models["NB"].prior_search_["candidates"]
                if c["var_dof"] == "auto" and c["var_scale"] == "auto")
    refit = bg.GaussianNB(var_dof=auto["chosen_var_dof"],
                          var_scale=auto["chosen_var_scale"]).fit(X, y)
    np.testing.assert_allclose(got.loc["NB [var_dof=auto, var_scale=auto]", "log_evidence"],
                               refit.log_marginal_likelihood(), rtol=1e-10)


def test_the_fitted_prior_is_the_models_own_row(table):
    models, got = table
    for name, est in models.items():
        assert got.loc[name, "log_evidence"] == pytest.approx(est.log_marginal_likelihood())
        same = got["log_evidence"].sub(got.loc[name, "log_evidence"]).abs() < 1e-9
        assert [row for row in got.index[same] if row.startswith(name)] == [name]
    assert np.isclose(got["probability"].sum(), 1.0)
    assert (np.diff(got["log_evidence"].to_numpy()) <= 0).all()


def test_structures_rows_and_one_model(wine):
    X, y = wine
    qda = bg.QDA(cov_scale="auto").fit(X, y)
    got = bg.compare({"QDA": qda}, ic="evidence", candidates=True)
    structures = {s["structure"] for s in qda.prior_search_["structures"]}
    shown = {row.split("=")[1].rstrip("]") for row in got.index if "structure=" in row}
    assert shown and shown <= structures  # the fitted one (VVV here) is QDA's own row
    assert len(got) >= 1 + len(shown)


def test_candidates_need_the_evidence_and_one_model_needs_them(table):
    models, _ = table
    with pytest.raises(ValueError, match="candidates=True needs ic='evidence'"):
        bg.compare(models, ic="loo", candidates=True)
    with pytest.raises(ValueError, match="at least two"):
        bg.compare({"LDA": models["LDA"]}, ic="evidence")
