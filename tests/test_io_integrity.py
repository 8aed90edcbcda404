"""Saved files: identical round trips, and a clear ValueError for every broken file."""

import warnings

import h5py
import numpy as np
import pytest
import xarray as xr

import bayesgen as bg
from bayesgen.estimators import persistence
from tests.conftest import CLASSIFIERS, SMALL_NUTS, make_data


def _methods(name: str) -> list[str]:
    return [m for m in ("mle", "map", "conjugate") if m in CLASSIFIERS[name][0]()._methods]


def _data(name: str):
    """Rows of a family's support with string labels (labels go through the file too)."""
    _, kind = CLASSIFIERS[name]
    X, y = make_data(kind, n_per_class=12)
    return X, np.array(["ham", "eggs", "spam"])[y]


def _fit(name: str, method: str, **kwargs):
    factory, _ = CLASSIFIERS[name]
    X, labels = _data(name)
    # SMALL_NUTS's draws and chains: a NUTS fit shares its compiled program with other files
    clf = factory(method=method, draws=SMALL_NUTS["draws"], chains=SMALL_NUTS["chains"],
                  random_state=0, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)  # tiny MCMC runs
        return clf.fit(X, labels), X


def _assert_same(a, b) -> None:
    """Equal values, recursively (arrays exactly, NaN equal to NaN)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for u, v in zip(a, b, strict=True):
            _assert_same(u, v)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype or a.dtype.kind in "OU"
    elif hasattr(a, "__dict__") and type(a).__module__.startswith("bayesgen."):
        assert type(a) is type(b)
        _assert_same(vars(a), vars(b))
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b


def _assert_round_trip(clf, X, tmp_path) -> None:
    path = tmp_path / "model.nc"
    clf.save(path)
    loaded = bg.load(path)
    assert type(loaded) is type(clf)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    np.testing.assert_array_equal(loaded.predict_joint_log_proba(X),
                                  clf.predict_joint_log_proba(X))
    skip = {"idata_", "_model"}
    _assert_same({k: v for k, v in vars(clf).items() if k not in skip},
                 {k: v for k, v in vars(loaded).items() if k not in skip})
    if hasattr(clf, "idata_"):
        assert set(loaded.idata_.groups()) == set(clf.idata_.groups())
        for group in clf.idata_.groups():
            a, b = clf.idata_[group], loaded.idata_[group]
            assert set(a.variables) == set(b.variables)
            for name in a.variables:
                np.testing.assert_array_equal(a[name].values, b[name].values)


@pytest.mark.parametrize(
    ("name", "method"),
    [(name, method) for name in sorted(CLASSIFIERS) for method in _methods(name)],
)
def test_round_trip_is_identical(name, method, tmp_path):
    clf, X = _fit(name, method)
    _assert_round_trip(clf, X, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_round_trip_is_identical_mcmc(name, tmp_path):
    clf, X = _fit(name, "mcmc", tune=SMALL_NUTS["tune"], progressbar=False)
    _assert_round_trip(clf, X, tmp_path)


def test_round_trip_with_posterior_predictive_group(tmp_path):
    clf, X = _fit("QDA", "conjugate")
    clf.sample_posterior_predictive(random_state=1)
    _assert_round_trip(clf, X, tmp_path)


@pytest.mark.slow
def test_round_trip_with_prior_groups(tmp_path):
    clf, X = _fit("GaussianNB", "map")  # idata_ created by the prior predictive
    _, labels = _data("GaussianNB")  # a point fit keeps no rows: pass them
    clf.sample_prior_predictive(draws=20, random_state=2, X=X, y=labels)
    _assert_round_trip(clf, X, tmp_path)


def test_file_records_format_and_checksum(tmp_path):
    clf, _ = _fit("GaussianNB", "conjugate")
    path = clf.save(tmp_path / "m.nc")
    with h5py.File(path, "r") as f:
        attrs = f[persistence.STATE_GROUP].attrs
        assert np.asarray(attrs["bayesgen_format"]).item() == persistence.FORMAT_VERSION
        checksum = attrs["checksum"]
        checksum = checksum.decode() if isinstance(checksum, bytes) else str(checksum)
    assert checksum.startswith("sha256:") and len(checksum) == len("sha256:") + 64
    # no temporary file is left next to the target
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.nc"]


# -------------------------------------------------------------- broken files
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Bytes of a saved conjugate GaussianNB (with idata_), the model and its data."""
    clf, X = _fit("GaussianNB", "conjugate")
    path = tmp_path_factory.mktemp("saved") / "m.nc"
    clf.save(path)
    return path.read_bytes(), clf, X


def _write(tmp_path, data: bytes, name: str = "broken.nc"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _refused(path, *patterns: str) -> str:
    with pytest.raises(ValueError) as info:
        bg.load(path)
    message = str(info.value)
    assert str(path) in message, message
    for pattern in patterns:
        assert pattern in message, message
    return message


def test_state_value_changed_fails_the_checksum(saved, tmp_path):
    data, clf, _ = saved
    target = np.ascontiguousarray(clf._stats["m2"]).tobytes()  # stored uncompressed
    at = data.find(target)
    assert at > 0
    broken = bytearray(data)
    broken[at + 3] ^= 0x10
    _refused(_write(tmp_path, bytes(broken)), "corrupt", "checksum")


def test_state_value_changed_in_place_with_h5py_fails_the_checksum(saved, tmp_path):
    data, _, _ = saved
    path = _write(tmp_path, data)
    with h5py.File(path, "r+") as f:
        group = f[persistence.STATE_GROUP]
        variables = [k for k in group if "_d" not in k]  # v0, v1, ... (not dimensions)
        name = next(k for k in variables if group[k].dtype.kind == "f" and group[k].size > 1)
        values = group[name][...]
        values.flat[0] += 1.0
        group[name][...] = values
    _refused(path, "checksum")


def test_flipped_bytes_anywhere_never_give_a_raw_error(saved, tmp_path):
    """Every flip either leaves the model intact (unused bytes) or is refused."""
    data, clf, X = saved
    expected = clf.predict_proba(X)
    rng = np.random.default_rng(0)
    refused = 0
    for at in rng.choice(len(data), size=16, replace=False):
        broken = bytearray(data)
        broken[at] ^= 0xFF
        path = _write(tmp_path, bytes(broken), f"flip{at}.nc")
        try:
            loaded = bg.load(path)
        except ValueError as err:
            assert str(path) in str(err)
            refused += 1
            continue
        np.testing.assert_array_equal(loaded.predict_proba(X), expected)
    assert refused > 0


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.5, 0.99])
def test_truncated_file(saved, tmp_path, fraction):
    data, _, _ = saved
    path = _write(tmp_path, data[: int(len(data) * fraction)])
    _refused(path, "bayesgen.load")


def test_garbage_file(tmp_path):
    data = np.random.default_rng(0).integers(0, 256, size=5000, dtype=np.uint8).tobytes()
    _refused(_write(tmp_path, data), "not a netCDF4/HDF5 file")


def test_text_file(tmp_path):
    _refused(_write(tmp_path, b"hello, world\n" * 100, "notes.txt"), "not a netCDF4/HDF5 file")


def test_foreign_netcdf(tmp_path):
    path = tmp_path / "other.nc"
    xr.Dataset({"a": ("x", np.arange(3.0))}).to_netcdf(path, engine="h5netcdf")
    _refused(path, "not a bayesgen model")


def test_inference_data_file_points_to_arviz(saved, tmp_path):
    _, clf, _ = saved
    path = tmp_path / "idata.nc"
    clf.idata_.to_netcdf(str(path), engine="h5netcdf")
    _refused(path, "not a bayesgen model", "arviz.from_netcdf")


def test_foreign_hdf5(tmp_path):
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("values", data=np.arange(10))
        f.create_group("stuff")
    _refused(path, "not a bayesgen model")


def test_newer_format(saved, tmp_path):
    data, _, _ = saved
    path = _write(tmp_path, data)
    with h5py.File(path, "r+") as f:
        f[persistence.STATE_GROUP].attrs["bayesgen_format"] = persistence.FORMAT_VERSION + 1
        f[persistence.STATE_GROUP].attrs["bayesgen_version"] = "99.0"
    _refused(path, "newer", "99.0", "upgrade bayesgen")


@pytest.mark.parametrize("written", ["999", "0.2.0", 999])
def test_newer_bayesgen_same_format(saved, tmp_path, written):
    """A file whose writer is newer than this bayesgen is refused even in a format this
    one reads (its state may hold fields this version cannot interpret); the message
    names the file and both versions."""
    data, _, _ = saved
    path = _write(tmp_path, data)
    with h5py.File(path, "r+") as f:
        f[persistence.STATE_GROUP].attrs["bayesgen_version"] = written
    _refused(path, "newer than this bayesgen", str(written), bg.__version__,
             str(path.name), "upgrade bayesgen")


def test_unreadable_bayesgen_version(saved, tmp_path):
    data, _, _ = saved
    path = _write(tmp_path, data)
    with h5py.File(path, "r+") as f:
        f[persistence.STATE_GROUP].attrs["bayesgen_version"] = "not a version"
    _refused(path, "unreadable bayesgen version")


def test_missing_checksum(saved, tmp_path):
    data, _, _ = saved
    path = _write(tmp_path, data)
    with h5py.File(path, "r+") as f:
        del f[persistence.STATE_GROUP].attrs["checksum"]
    _refused(path, "checksum")


def test_broken_schema_is_refused(saved, tmp_path):
    data, _, _ = saved
    path = _write(tmp_path, data)
    with h5py.File(path, "r+") as f:
        del f[persistence.STATE_GROUP].attrs["schema"]
    _refused(path, "schema")


def test_file_without_version_loads_as_format_0(saved, tmp_path):
    """Files written before versioning (no format, no checksum) still load."""
    data, clf, X = saved
    path = _write(tmp_path, data)
    with h5py.File(path, "r+") as f:
        for key in ("bayesgen_format", "checksum", "bayesgen_version"):
            del f[persistence.STATE_GROUP].attrs[key]
    np.testing.assert_array_equal(bg.load(path).predict_proba(X), clf.predict_proba(X))


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothing\.nc"):
        bg.load(tmp_path / "nothing.nc")


def test_failed_save_leaves_no_file(tmp_path):
    clf, _ = _fit("GaussianNB", "map")
    clf.random_state = np.random.default_rng(0)  # not storable
    with pytest.raises(ValueError, match="not supported"):
        clf.save(tmp_path / "m.nc")
    assert list(tmp_path.iterdir()) == []
