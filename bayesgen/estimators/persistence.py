"""Save and load fitted estimators as one netCDF file (HDF5-based netCDF4, h5netcdf).

The groups of ``idata_`` stay at their usual places (``arviz.from_netcdf`` reads them;
nested estimators, e.g. a stack's members, are saved without their ``idata_``). The
group ``bayesgen_state`` holds every array of the state as ``v0, v1, ...`` with the
attributes ``schema`` (JSON: how they nest), ``root`` (the class), ``bayesgen_format``
(:data:`FORMAT_VERSION`), ``bayesgen_version`` and ``checksum``: ``"sha256:<hex>"`` over
the format, schema, class, every state array and every ``idata_`` variable with its
name, dims, dtype and shape (:func:`_digest`), recomputed by :func:`load`. Only
bayesgen's own classes are rebuilt and nothing is unpickled; a missing, truncated,
corrupt, foreign, modified or newer-format file is a ``ValueError`` naming the file
and the problem (``FileNotFoundError`` when missing).
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from bayesgen.utils.heavy import import_arviz

STATE_GROUP = "bayesgen_state"
#: version of the file layout written by :func:`save`; :func:`load` reads 0 (files
#: written before versioning, without checksum) up to this one
FORMAT_VERSION = 1
_SKIP = {"idata_", "model_", "_model"}


class _Encoder:
    """Turns nested Python/numpy state into (JSON schema, named arrays)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def encode(self, obj: Any, where: str) -> Any:
        if obj is None or isinstance(obj, bool | str):
            return {"t": "value", "v": obj}
        if isinstance(obj, int | float | np.integer | np.floating | np.bool_):
            value = obj.item() if isinstance(obj, np.generic) else obj
            if isinstance(value, float) and not np.isfinite(value):
                return self._array(np.asarray(value), where)
            return {"t": "value", "v": value}
        if isinstance(obj, np.ndarray):
            return self._array(obj, where)
        if isinstance(obj, dict):
            if not all(isinstance(k, str) for k in obj):
                raise ValueError(f"cannot save {where}: dict keys must be strings.")
            return {"t": "dict", "v": {k: self.encode(v, f"{where}.{k}") for k, v in obj.items()}}
        if isinstance(obj, list | tuple):
            return {
                "t": "list" if isinstance(obj, list) else "tuple",
                "v": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)],
            }
        if sparse.issparse(obj):  # sparse training X (count families): CSR parts
            csr = obj.tocsr()
            return {"t": "sparse", "array": isinstance(obj, sparse.sparray),
                    "shape": list(obj.shape),
                    "v": {k: self._array(np.asarray(getattr(csr, k)), f"{where}.{k}")
                          for k in ("data", "indices", "indptr")}}
        cls = type(obj)
        if cls.__module__.startswith("bayesgen."):  # nested estimators: no idata_/model
            state = {k: v for k, v in vars(obj).items() if k not in _SKIP}
            return {"t": "object", "module": cls.__module__, "class": cls.__qualname__,
                    "v": self.encode(state, where)}
        raise ValueError(
            f"cannot save {where}: values of type {cls.__name__} are not supported "
            "(use plain numbers, strings, arrays or an int random_state)."
        )

    def _array(self, arr: np.ndarray, where: str) -> dict:
        name = f"v{len(self.arrays)}"
        kind = "array"
        if arr.dtype == object:
            if all(isinstance(v, str) for v in arr.ravel()):
                arr = arr.astype(str)
                kind = "object_str"
            else:
                raise ValueError(f"cannot save {where}: object arrays must hold strings.")
        self.arrays[name] = arr
        return {"t": kind, "v": name}


def _decode(node: Any, arrays: dict[str, np.ndarray]) -> Any:
    kind = node["t"]
    if kind == "value":
        return node["v"]
    if kind == "array":
        return arrays[node["v"]]
    if kind == "object_str":
        return arrays[node["v"]].astype(object)
    if kind == "dict":
        return _renamed_keys({k: _decode(v, arrays) for k, v in node["v"].items()})
    if kind in ("list", "tuple"):
        items = [_decode(v, arrays) for v in node["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "sparse":
        parts = {k: _decode(v, arrays) for k, v in node["v"].items()}
        cls = sparse.csr_array if node["array"] else sparse.csr_matrix
        return cls((parts["data"], parts["indices"], parts["indptr"]), shape=tuple(node["shape"]))
    if kind == "object":
        if not node["module"].startswith("bayesgen."):
            raise ValueError(f"refusing to build {node['module']}.{node['class']}.")
        cls = _class(node["module"], node["class"])
        obj = cls.__new__(cls)
        vars(obj).update(_decode(node["v"], arrays))
        return obj
    raise ValueError(f"unknown entry {kind!r} in the saved schema.")


def save(estimator: Any, path: str | Path) -> Path:
    """Write a fitted estimator to one netCDF file (see the module docstring).

    The file is written next to ``path`` under a temporary name and then renamed, so an
    interrupted save never leaves a truncated file at ``path``.

    Parameters
    ----------
    estimator : fitted bayesgen estimator
    path : str or Path
        Target file (overwritten).

    Returns
    -------
    Path
    """
    import xarray as xr
    from sklearn.utils.validation import check_is_fitted

    from bayesgen._version import __version__

    # a generative classifier is fitted when it has parameters; an ensemble of them
    # (StackedClassifier) says so itself
    check_is_fitted(estimator, None if hasattr(estimator, "__sklearn_is_fitted__")
                    else "_params")
    path = Path(path)
    enc = _Encoder()
    state = {k: v for k, v in vars(estimator).items() if k not in _SKIP}
    schema = json.dumps(enc.encode(state, type(estimator).__name__))
    root = json.dumps({"module": type(estimator).__module__, "class": type(estimator).__qualname__})
    idata = getattr(estimator, "idata_", None)
    groups = {} if idata is None else {g: idata[g] for g in idata.groups()}
    checksum = _digest(FORMAT_VERSION, schema, root, enc.arrays, groups)
    data = {
        name: xr.DataArray(arr, dims=[f"{name}_d{i}" for i in range(arr.ndim)])
        for name, arr in enc.arrays.items()
    }
    attrs = {"schema": schema, "root": root, "bayesgen_format": FORMAT_VERSION,
             "bayesgen_version": __version__, "checksum": checksum}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        mode = "w"
        if idata is not None:
            idata.to_netcdf(str(tmp), engine="h5netcdf")
            mode = "a"
        xr.Dataset(data, attrs=attrs).to_netcdf(
            str(tmp), mode=mode, group=STATE_GROUP, engine="h5netcdf"
        )
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


class _Invalid(Exception):
    """A problem with the file found by :func:`load` (reported as ``ValueError``)."""


def load(path: str | Path):
    """Read an estimator written by :func:`save`; it predicts exactly as the original.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    estimator
        The fitted bayesgen estimator, with ``idata_`` when it had one.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        The file is truncated or corrupt (unreadable, or its checksum does not match
        its content), is not a bayesgen model (e.g. another netCDF/HDF5 file), or was
        written by a newer bayesgen (a format above :data:`FORMAT_VERSION`, or a newer
        bayesgen version than this one). The message names the file and both versions.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"bayesgen.load: no file {str(path)!r}.")
    try:
        return _read(path)
    except _Invalid as err:
        raise ValueError(f"bayesgen.load({str(path)!r}): {err}") from None
    except Exception as err:
        raise ValueError(
            f"bayesgen.load({str(path)!r}): the file cannot be read as a bayesgen model; "
            f"it is truncated, corrupt or not a bayesgen file ({type(err).__name__}: {err})."
        ) from err


def _read(path: Path):
    az = import_arviz()
    import h5netcdf
    import xarray as xr

    try:
        with h5netcdf.File(str(path), "r") as f:
            names = list(f.groups)
    except OSError as err:
        raise _Invalid(
            "not a netCDF4/HDF5 file, or a truncated or corrupt one "
            f"(h5py: {err}). bayesgen models are written by estimator.save(path)."
        ) from None
    if STATE_GROUP not in names:
        raise _Invalid(
            f"a netCDF/HDF5 file but not a bayesgen model (no {STATE_GROUP!r} group; it "
            f"has groups {names}). An InferenceData file is read with arviz.from_netcdf."
        )
    with xr.open_dataset(str(path), group=STATE_GROUP, engine="h5netcdf") as ds:
        ds.load()
        arrays = {name: ds[name].values for name in ds.data_vars}
        attrs = dict(ds.attrs)
    version = _format_version(attrs)
    groups = {}
    for g in (g for g in names if g != STATE_GROUP):
        with xr.open_dataset(str(path), group=g, engine="h5netcdf") as ds:
            groups[g] = ds.load()
    if version >= 1:
        expected = attrs.get("checksum")
        actual = _digest(version, attrs["schema"], attrs["root"], arrays, groups)
        if expected != actual:
            raise _Invalid(
                "the file is corrupt: its content does not match the checksum written "
                "with it (it was modified or damaged after bayesgen saved it)."
            )
    schema = json.loads(attrs["schema"])
    root = json.loads(attrs["root"])
    if not root["module"].startswith("bayesgen."):
        raise _Invalid(f"refusing to build {root['module']}.{root['class']}.")
    cls = _class(root["module"], root["class"])
    estimator = cls.__new__(cls)
    vars(estimator).update(_renamed(_decode(schema, arrays)))
    _upgrade(estimator)
    estimator._model = None
    if groups:
        estimator.idata_ = az.InferenceData(**groups)
    return estimator


def _upgrade(estimator) -> None:
    """State of a file written by an earlier version, as this version has it: the
    training rows it kept (``_train``, ``_train_weights``) dropped, constructor
    parameters added since at their defaults (``method_``: :func:`_renamed`)."""
    import inspect

    state = vars(estimator)
    for legacy in ("_train", "_train_weights"):
        state.pop(legacy, None)
    signature = inspect.signature(type(estimator).__init__)
    for name in estimator._get_param_names():
        default = signature.parameters[name].default
        if name not in state and default is not inspect.Parameter.empty:
            state[name] = default


#: fitted state that earlier versions kept under public-looking names
_LEGACY_NAMES = {"params_": "_params", "prior_": "_prior", "stats_": "_stats",
                 "family_": "_family", "frame_": "_frame", "posterior_": "_posterior",
                 "log_pi_draws_": "_log_pi_draws", "method": "method"}


#: classes that moved to another module since files were written: (module, class) ->
#: today's module (GaussianNB: from the discriminant module to the naive Bayes one, 0.2)
_MOVED = {("bayesgen.estimators.discriminant", "GaussianNB"): "bayesgen.estimators.naive_bayes"}

#: keys renamed in 0.2 (constructor parameters, the families' attributes and options):
#: old -> new, applied to a file that predates the rename (it has the old key only)
_RENAMED_KEYS = {"cov_prior": "cov_target",  # deprecated names, files before 0.2
                 "covariance_prior": "cov_prior_form"}  # deprecated name, files before 0.2


def _class(module: str, name: str) -> type:
    """The class a file names, where it is today (:data:`_MOVED`)."""
    return getattr(import_module(_MOVED.get((module, name), module)), name)


def _renamed_keys(state: dict) -> dict:
    """A dict of a file written before the renames of 0.2 under today's keys; a file
    written since keeps both (a deprecated parameter is then a value of its own)."""
    for old, new in _RENAMED_KEYS.items():
        if old in state and new not in state:
            state = {(new if k == old else k): v for k, v in state.items()}
    return state


def _renamed(state: dict) -> dict:
    """The state of a file written before the internal-frame state became private
    (``params_`` -> ``_params``, ...), and before ``method_`` existed, under today's
    names."""
    out = {_LEGACY_NAMES.get(k, k): v for k, v in state.items()}
    if "method_" not in out and "method" in out:
        out["method_"] = out["method"]
    return out


def _format_version(attrs: dict) -> int:
    """The file's format version (0 if written before versioning); newer ones refused."""
    from bayesgen._version import __version__

    raw = attrs.get("bayesgen_format", 0)
    try:
        version = int(np.asarray(raw).item())
    except (TypeError, ValueError):
        raise _Invalid(f"unreadable format version {raw!r}; the file is corrupt.") from None
    if version > FORMAT_VERSION:
        written = attrs.get("bayesgen_version", "a newer version")
        raise _Invalid(
            f"written by bayesgen {written} in file format {version}, but this bayesgen "
            f"({__version__}) reads formats up to {FORMAT_VERSION}; upgrade bayesgen."
        )
    if "schema" not in attrs or "root" not in attrs:
        raise _Invalid(f"the {STATE_GROUP!r} group lacks its schema; the file is corrupt.")
    # a file written by a newer bayesgen, even in a format this one reads, may hold
    # state this version cannot interpret; a file without the attribute (format 0) passes
    written = attrs.get("bayesgen_version")
    if written is None:
        return version
    from packaging.version import InvalidVersion, Version

    written = str(np.asarray(written).item())
    try:
        newer = Version(written) > Version(__version__)
    except InvalidVersion:
        raise _Invalid(f"unreadable bayesgen version {written!r}; the file is corrupt.") from None
    if newer:
        raise _Invalid(
            f"written by bayesgen {written} (file format {version}), which is newer than "
            f"this bayesgen ({__version__}, file formats up to {FORMAT_VERSION}); upgrade "
            "bayesgen to read it."
        )
    return version


def _digest(version: int, schema: str, root: str, arrays: dict, groups: dict) -> str:
    """``"sha256:<hex>"`` of the format version, schema, class, state arrays and idata
    groups (see the module docstring).

    Values are hashed in a form that survives the netCDF round trip: strings (numpy
    unicode, bytes or object arrays) as their UTF-8 text, every NaN as the canonical
    NaN (xarray's fill-value decoding rewrites NaN payloads), other arrays as their
    raw bytes after their dtype and shape.
    """
    h = hashlib.sha256()
    h.update(f"bayesgen-format:{version}\0".encode())
    h.update(schema.encode() + b"\0" + root.encode() + b"\0")
    for name in sorted(arrays):
        _feed(h, f"state/{name}", (), arrays[name])
    for group in sorted(groups):
        ds = groups[group]
        for name in sorted(map(str, ds.variables)):
            var = ds.variables[name]
            _feed(h, f"{group}/{name}", var.dims, var.values)
    return "sha256:" + h.hexdigest()


def _feed(h: Any, name: str, dims: tuple, values: Any) -> None:
    a = np.asarray(values)
    h.update(f"{name}|{','.join(map(str, dims))}|{a.shape}|".encode())
    if a.dtype.kind in "OUS":
        text = [v.decode() if isinstance(v, bytes) else str(v) for v in a.ravel()]
        h.update(b"text|" + json.dumps(text).encode())
        return
    if a.dtype.kind in "fc":
        a = np.where(np.isnan(a), np.nan, a).astype(a.dtype)
    h.update(a.dtype.str.encode() + b"|")
    h.update(np.ascontiguousarray(a).tobytes())
