"""Dask input: fit by a tree reduction of per-chunk statistics equals the NumPy fit to
1e-10 for every estimator and method, on the threaded scheduler and on a LocalCluster;
predict methods return lazy Dask arrays equal to the NumPy results."""

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

import bayesgen as bg
from bayesgen.inference.rows import kept as kept_rows
from bayesgen.scale import dask_input
from tests.streaming_helpers import CASES, assert_close, assert_same_model, data, make

# tiny NUTS runs: agreement with the in-memory fit is checked, not convergence
pytestmark = pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning")

dask = pytest.importorskip("dask")  # the optional extra bayesgen[dask]
distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

PREDICT = ("predict_joint_log_proba", "predict_proba", "predict_log_proba",
           "decision_function", "predict")


@pytest.fixture
def threads():
    with dask.config.set(scheduler="threads"):
        yield


@pytest.fixture(scope="module")
def client():
    """One small cluster of two worker processes for the module."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        yield c


def _dask_data(name: str, seed: int = 0):
    """NumPy data and the same as Dask arrays cut into uneven row and column chunks."""
    _, X, y = data(name, seed)
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=y.size)
    rows = (7, 30, 1, 25, y.size - 63)
    Xd = da.from_array(X, chunks=(rows, (2, X.shape[1] - 2)))
    return X, y, w, Xd, da.from_array(y, chunks=(rows,)), da.from_array(w, chunks=(rows,))


def _check_predictions(est, ref, X, Xd) -> None:
    """Every predict method: lazy on Dask X, equal to the NumPy result."""
    for method in PREDICT:
        lazy = getattr(est, method)(Xd)
        assert isinstance(lazy, da.Array), method
        expected = getattr(ref, method)(X)
        if method == "predict":
            np.testing.assert_array_equal(lazy.compute(), expected)
        else:
            assert_close(lazy.compute(), expected, method)


# ------------------------------------------------------------ threaded scheduler
@pytest.mark.parametrize(("name", "method"), CASES)
def test_fit_equals_numpy(threads, name, method):
    X, y, w, Xd, yd, wd = _dask_data(name)
    ref = make(name, method).fit(X, y, sample_weight=w)
    est = make(name, method).fit(Xd, yd, sample_weight=wd)
    assert kept_rows(est) is None  # fitted from statistics: no rows
    assert est.method_ == method
    assert_same_model(est, ref, X)
    _check_predictions(est, ref, X, Xd)
    assert est.score(Xd, yd) == pytest.approx(ref.score(X, y), abs=1e-12)


@pytest.mark.parametrize("name", ["LDA", "CategoricalNB"])
def test_partial_fit_with_dask_batches(threads, name):
    X, y, _, Xd, yd, _ = _dask_data(name)
    est = make(name, "conjugate")
    est.partial_fit(Xd[:40], yd[:40], classes=[0, 1, 2])
    est.partial_fit(X[40:60], y[40:60])  # NumPy and Dask batches mix
    est.partial_fit(Xd[60:], yd[60:])
    assert_same_model(est, make(name, "conjugate").fit(X, y), X)


def test_dataframes_with_names_and_string_labels(threads):
    _, X, y = data("MixedNB")
    columns = ["g1", "g2", "b1", "b2", "p1", "p2"]
    frame = pd.DataFrame(X, columns=columns)
    labels = pd.Series(np.array(["ant", "bee", "cow"])[y], name="label")
    families = [("gaussian", ["g1", "g2"]), ("bernoulli", ["b1", "b2"]),
                ("poisson", ["p1", "p2"])]
    ref = bg.MixedNB(families=families).fit(frame, labels)
    est = bg.MixedNB(families=families).fit(dd.from_pandas(frame, npartitions=4),
                                            dd.from_pandas(labels, npartitions=4))
    assert list(est.feature_names_in_) == columns
    assert list(est.classes_) == ["ant", "bee", "cow"]
    assert_same_model(est, ref, frame)
    proba = est.predict_proba(dd.from_pandas(frame, npartitions=3))
    assert isinstance(proba, da.Array)
    assert_close(proba.compute(), ref.predict_proba(frame))
    with pytest.raises(ValueError, match="feature names"):  # checked in every partition
        bg.MixedNB(families=families).partial_fit(
            dd.from_pandas(frame, npartitions=2), labels.to_numpy(), classes=["ant", "bee", "cow"]
        ).partial_fit(dd.from_pandas(frame.rename(columns={"p2": "q"}), npartitions=2),
                      labels.to_numpy())


def test_mixed_inputs_unknown_chunks_and_empty_chunks(threads):
    X, y, w, Xd, yd, wd = _dask_data("GaussianNB")
    ref = make("GaussianNB", "map").fit(X, y, sample_weight=w)
    # in-memory X with Dask y (X is cut into y's chunks), Dask X with NumPy y
    assert_same_model(make("GaussianNB", "map").fit(X, yd, sample_weight=w), ref, X)
    assert_same_model(make("GaussianNB", "map").fit(Xd, y, sample_weight=wd), ref, X)
    # chunks of unknown size (boolean indexing), two of them empty
    keep = da.from_array(np.r_[np.ones(37, bool), np.zeros(30, bool), np.ones(y.size - 67, bool)],
                         chunks=(7, 30, 1, 25, y.size - 63))
    Xk, yk, wk = Xd[keep], yd[keep], wd[keep]
    assert np.isnan(Xk.shape[0])
    mask = keep.compute()
    ref_k = make("GaussianNB", "map").fit(X[mask], y[mask], sample_weight=w[mask])
    assert_same_model(make("GaussianNB", "map").fit(Xk, yk, sample_weight=wk), ref_k, X)
    # a chunk of zero weight contributes nothing
    w0 = np.where(np.arange(y.size) < 37, 0.0, w)
    ref_0 = make("GaussianNB", "map").fit(X, y, sample_weight=w0)
    est_0 = make("GaussianNB", "map").fit(Xd, yd, sample_weight=da.from_array(w0, chunks=wd.chunks))
    assert_same_model(est_0, ref_0, X)


def test_predict_proba_draws_and_transform_are_lazy(threads):
    X, y, _, Xd, yd, _ = _dask_data("LDA")
    ref = make("LDA", "conjugate").fit(X, y)
    est = make("LDA", "conjugate").fit(Xd, yd)
    draws = est.predict_proba_draws(Xd)
    assert isinstance(draws.data, da.Array) and draws.dims == ref.predict_proba_draws(X).dims
    assert_close(draws.values, ref.predict_proba_draws(X).values)
    interval = est.predict_proba_interval(Xd, hdi_prob=0.9)
    assert isinstance(interval.data, da.Array)
    expected = ref.predict_proba_interval(X, hdi_prob=0.9)
    assert interval.dims == expected.dims
    assert_close(interval.values, expected.values)
    point = make("LDA", "map").fit(Xd, yd)
    projected = point.transform(Xd)
    assert isinstance(projected, da.Array)
    assert_close(projected.compute(), make("LDA", "map").fit(X, y).transform(X))


def test_fit_never_gathers_X_and_predict_is_lazy(threads, monkeypatch):
    X, y, _, Xd, yd, _ = _dask_data("QDA")

    def refuse(*args, **kwargs):
        raise AssertionError("X was gathered on the client")

    for attribute in ("__array__", "compute", "persist"):
        monkeypatch.setattr(da.Array, attribute, refuse)
    est = make("QDA", "map").fit(Xd, yd)  # only the statistics come back
    monkeypatch.undo()
    def never(block):
        raise AssertionError("computed")

    untouched = Xd.map_blocks(never, dtype=float)
    for method in PREDICT:
        assert isinstance(getattr(est, method)(untouched), da.Array)  # nothing computed


def test_errors(threads):
    X, y, _, Xd, yd, _ = _dask_data("GaussianNB")
    with pytest.raises(ValueError, match="only one class"):
        make("GaussianNB", "map").fit(Xd, da.zeros(y.size, chunks=yd.chunks, dtype=int))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        make("GaussianNB", "map").fit(Xd, y[:-1])
    with pytest.raises(ValueError, match="2-D"):
        make("GaussianNB", "map").fit(Xd[:, 0], yd)
    with pytest.raises(NotFittedError):
        make("GaussianNB", "map").predict(Xd)
    est = make("GaussianNB", "map").fit(Xd, yd)
    with pytest.raises(ValueError, match=r"3 features.*expecting 4"):
        est.predict_proba(Xd[:, :3])  # eagerly, before anything is computed
    with pytest.raises(ValueError, match=r"label\(s\) \['9'\]"):
        make("GaussianNB", "map").partial_fit(Xd, da.where(yd == 2, 9, yd), classes=[0, 1, 2])


@pytest.mark.slow
def test_mcmc_samples_the_same_target(threads):
    """NUTS needs only the statistics: the Dask fit and the NumPy fit give the same
    statistics model, hence (same seed) the same draws up to rounding."""
    X, y, _, Xd, yd, _ = _dask_data("GaussianNB")
    kwargs = {"draws": 200, "tune": 200, "chains": 2}
    ref = make("GaussianNB", "mcmc", **kwargs).fit(X, y)
    est = make("GaussianNB", "mcmc", **kwargs).fit(Xd, yd)
    stream = make("GaussianNB", "mcmc", **kwargs)
    stream.partial_fit(X[:45], y[:45], classes=[0, 1, 2]).partial_fit(X[45:], y[45:])
    for other in (est, stream):
        assert_close(other.class_count_, ref.class_count_)
        for var in ("mu", "var"):
            a = other.idata_.posterior[var].values
            b = ref.idata_.posterior[var].values
            sd = b.std(axis=(0, 1))
            # same target: posterior means agree within Monte Carlo error (and the
            # chains typically coincide, the statistics differing only by rounding)
            assert np.all(np.abs(a.mean(axis=(0, 1)) - b.mean(axis=(0, 1))) < 0.5 * sd)


# ---------------------------------------------------------------- LocalCluster
@pytest.mark.parametrize(("name", "method"), CASES)
def test_fit_on_local_cluster(client, name, method):
    X, y, w, Xd, yd, wd = _dask_data(name)
    ref = make(name, method).fit(X, y, sample_weight=w)
    with dask.config.set(scheduler=client), distributed.get_task_stream(client) as tasks:
        est = make(name, method).fit(Xd, yd, sample_weight=wd)
        proba = est.predict_proba(Xd).compute()
    assert {t["worker"] for t in tasks.data}  # the work ran on the cluster's workers
    assert_same_model(est, ref, X)
    assert_close(proba, ref.predict_proba(X))


def test_dataframe_partial_fit_and_merge_on_local_cluster(client):
    _, X, y = data("PoissonNB")
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    with dask.config.set(scheduler=client):
        shard = make("PoissonNB", "conjugate").partial_fit(
            dd.from_pandas(frame.iloc[:50], npartitions=3), y[:50], classes=[0, 1, 2])
        other = make("PoissonNB", "conjugate").fit(dd.from_pandas(frame.iloc[50:], npartitions=2),
                                                   y[50:])
        merged = bg.merge(shard, other)
        labels = merged.predict(dd.from_pandas(frame, npartitions=2)).compute()
    ref = make("PoissonNB", "conjugate").fit(frame, y)
    assert_same_model(merged, ref, frame)
    np.testing.assert_array_equal(labels, ref.predict(frame))


def test_is_dask_does_not_import_dask():
    assert not dask_input.is_dask(np.zeros(3), None, [1, 2])
    assert dask_input.is_dask(None, da.zeros(3))
