"""``n_jobs`` on every estimator: scikit-learn's semantics through joblib, threads only for
large arrays, the same results whatever the number of threads."""

import inspect

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.base import clone

import bayesgen as bg
from bayesgen.estimators.base import GenerativeClassifier
from bayesgen.utils import threads

#: every public estimator class (the names bayesgen exports lazily)
ESTIMATORS = [getattr(bg, name) for name in sorted(bg._LAZY)
              if inspect.isclass(getattr(bg, name))
              and issubclass(getattr(bg, name), GenerativeClassifier)]


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_every_estimator_takes_n_jobs_none_by_default(Estimator):
    assert inspect.signature(Estimator).parameters["n_jobs"].default is None
    clf = Estimator(n_jobs=2)
    assert clf.get_params()["n_jobs"] == 2
    assert clone(clf).n_jobs == 2
    assert "n_jobs : int or None, default=None" in Estimator.__doc__


@pytest.mark.parametrize("bad", [0, 1.5, "2"])
def test_n_jobs_zero_or_not_an_integer_is_a_named_error(bad):
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match="'n_jobs' parameter of LDA"):
        bg.LDA(n_jobs=bad).fit(X, y)


def test_threads_follow_joblib():
    large = threads.PARALLEL_MIN_SIZE
    assert threads.n_threads(large) == 1  # None: 1 outside any joblib context
    with threads.jobs(2):
        assert threads.n_threads(large) == 2
        assert threads.n_threads(large - 1) == 1  # small arrays: one thread
    with parallel_config(n_jobs=3):
        assert threads.n_threads(large) == 3
        with threads.jobs(None):  # the estimator's None keeps the user's context
            assert threads.n_threads(large) == 3
        with threads.jobs(1):
            assert threads.n_threads(large) == 1
    from joblib import cpu_count

    with threads.jobs(-1):
        assert threads.n_threads(large) == cpu_count()


def test_map_threads_runs_every_task_and_raises():
    assert threads.map_threads(lambda i: i * i, 5) == [0, 1, 4, 9, 16]
    assert threads.map_threads(lambda i: i, 1) == [0]

    def fail(i):
        if i == 2:
            raise RuntimeError("task 2")
        return i

    with pytest.raises(RuntimeError, match="task 2"):
        threads.map_threads(fail, 4)


@pytest.mark.parametrize("Estimator", [bg.GaussianNB, bg.LDA, bg.QDA])
def test_n_jobs_gives_the_same_results_on_threads(Estimator, monkeypatch):
    """Above the parallel size the statistics and the scores run on n_jobs threads
    (the spy sees them), and the fit and the probabilities equal those of one thread
    (blocks merged in order, rows scored independently)."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((80_000, 30)) * 3.0 + 10.0  # 2.4 million entries
    y = rng.integers(0, 4, size=X.shape[0])
    serial = Estimator(method="map").fit(X, y)
    expected = serial.predict_proba(X)
    counts = []

    class Pool(threads.ThreadPoolExecutor):
        def __init__(self, max_workers, **kwargs):
            counts.append(max_workers)
            super().__init__(max_workers, **kwargs)

    monkeypatch.setattr(threads, "ThreadPoolExecutor", Pool)
    parallel = Estimator(method="map", n_jobs=2).fit(X, y)
    proba = parallel.predict_proba(X)
    assert 2 in counts
    for name, value in serial._params.items():
        np.testing.assert_array_equal(parallel._params[name], value)
    np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-14)
    counts.clear()
    with parallel_config(n_jobs=2):  # the same through joblib's context
        np.testing.assert_allclose(Estimator(method="map").fit(X, y).predict_proba(X),
                                   expected, rtol=0, atol=1e-14)
    assert 2 in counts
