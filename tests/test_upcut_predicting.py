"""The shared predict-method decorator, the shared logger guard and the HDI of the
probability forest: signatures kept, keywords passed on, errors unchanged."""

import inspect
import logging

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import bayesgen as bg
from bayesgen.utils.progress import quiet_logger, quiet_pymc_log


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 3)) + y[:, None]
    return X, y, rng.normal(size=(7, 3))


@pytest.fixture(scope="module")
def posterior(data):
    X, y, _ = data
    return bg.QDA(method="conjugate", draws=40, chains=2, random_state=0).fit(X, y)


@pytest.mark.parametrize("name", ["predict_proba", "predict_log_proba", "predict_joint_log_proba",
                                  "decision_function", "score_samples", "predict_proba_draws",
                                  "predict_proba_interval"])
def test_signature_and_docstring_are_the_methods(name):
    method = getattr(bg.QDA, name)
    assert method.__name__ == name
    assert method.__doc__ and "Dask X gives" not in method.__doc__
    assert next(iter(inspect.signature(method).parameters)) == "self"


def test_transform_signature_and_interval_keyword():
    assert list(inspect.signature(bg.LDA.transform).parameters) == ["self", "X"]
    params = inspect.signature(bg.QDA.predict_proba_interval).parameters
    assert params["hdi_prob"].default == 0.94


def test_interval_keyword_positional_and_default_agree(posterior, data):
    Xt = data[2]
    a = posterior.predict_proba_interval(Xt, hdi_prob=0.5).values
    b = posterior.predict_proba_interval(Xt, 0.5).values
    np.testing.assert_array_equal(a, b)
    wide = posterior.predict_proba_interval(Xt).values  # 0.94
    assert np.all(wide[..., 0] <= a[..., 0] + 1e-15) and np.all(wide[..., 1] >= a[..., 1] - 1e-15)
    with pytest.raises(ValueError, match=r"hdi_prob must be in \(0, 1\); got 1.5"):
        posterior.predict_proba_interval(Xt, hdi_prob=1.5)


def test_dask_results_equal_in_memory_ones(posterior, data):
    da = pytest.importorskip("dask.array")
    Xt = data[2]
    dXt = da.from_array(Xt, chunks=3)
    for name in ["predict_proba", "predict_log_proba", "decision_function", "score_samples",
                 "predict"]:
        lazy = getattr(posterior, name)(dXt)
        assert hasattr(lazy, "compute"), name
        eager = getattr(posterior, name)(Xt)
        if name == "predict":
            np.testing.assert_array_equal(lazy.compute(), eager)
        else:
            np.testing.assert_allclose(lazy.compute(), eager, rtol=1e-12)
    interval = posterior.predict_proba_interval(dXt, hdi_prob=0.5)
    np.testing.assert_allclose(interval.values, posterior.predict_proba_interval(Xt, 0.5).values)


def test_unfitted_dask_calls_are_not_fitted_errors(data):
    da = pytest.importorskip("dask.array")
    dXt = da.from_array(data[2], chunks=3)
    with pytest.raises(NotFittedError):
        bg.LDA().transform(dXt)
    with pytest.raises(NotFittedError):
        bg.QDA().predict_proba_draws(dXt)
    with pytest.raises(NotFittedError):
        bg.LDA().transform(data[2])


def test_probability_forest_draws_the_hdi_of_predict_proba_interval(posterior, data):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayesgen import plots

    Xt = data[2][:2]
    ax = plots.probability_forest(posterior, Xt, hdi_prob=0.8)
    interval = posterior.predict_proba_interval(Xt, 0.8).values  # (m, K, 2)
    segments = np.concatenate([np.asarray(c.get_segments()) for c in ax.collections])
    drawn = np.sort(segments[:, :, 0], axis=1)
    expected = np.sort(np.concatenate([interval[:, k] for k in range(interval.shape[1])]),
                       axis=1)
    np.testing.assert_allclose(np.sort(drawn, axis=0), np.sort(expected, axis=0))
    # the dots: posterior means of the draws
    means = posterior.predict_proba_draws(Xt).values.reshape(-1, *interval.shape[:2]).mean(0)
    dots = np.concatenate([line.get_xdata() for line in ax.lines])
    np.testing.assert_allclose(np.sort(dots), np.sort(means.T.ravel()), rtol=1e-12)
    plt.close("all")
    with pytest.raises(ValueError, match=r"hdi_prob must be in \(0, 1\)"):
        plots.probability_forest(posterior, Xt, hdi_prob=0.0)


def test_quiet_logger_raises_to_warning_and_restores():
    logger = logging.getLogger("pymc.sampling.forward")
    for before in (logging.NOTSET, logging.INFO, logging.ERROR):
        logger.setLevel(before)
        with quiet_logger("pymc.sampling.forward"):
            assert logger.level == max(before, logging.WARNING)
        assert logger.level == before
    logger.setLevel(logging.NOTSET)
    pymc_logger = logging.getLogger("pymc")
    level = pymc_logger.level
    with quiet_pymc_log(True):
        assert pymc_logger.level == level
    with quiet_pymc_log(False):
        assert pymc_logger.level == max(level, logging.WARNING)
    assert pymc_logger.level == level


@pytest.mark.parametrize("name", ["predict", "predict_proba", "decision_function",
                                  "score_samples", "predict_joint_log_proba"])
def test_unfitted_in_memory_calls_are_not_fitted_errors(name, data):
    with pytest.raises(NotFittedError):
        getattr(bg.GaussianNB(), name)(data[2])
