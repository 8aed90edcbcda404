"""Save and load fitted estimators as one netCDF file.

Layout of the file (HDF5-based netCDF4, written with h5netcdf):

- the groups of ``idata_`` (``posterior``, ``log_likelihood``, ``observed_data``, ...)
  at their usual places, so ``arviz.from_netcdf`` can read the posterior directly;
- a group ``bayesgen_state`` holding every array of the estimator's state (constructor
  parameters, fitted attributes, family parameters, sufficient statistics) as variables
  ``v0, v1, ...``, and in its attribute ``schema`` a JSON description of how they nest.

Only bayesgen's own classes are rebuilt on load; nothing is unpickled.
"""

from __future__ import annotations

import json
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np

STATE_GROUP = "bayesgen_state"
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
        cls = type(obj)
        if cls.__module__.startswith("bayesgen."):
            return {"t": "object", "module": cls.__module__, "class": cls.__qualname__,
                    "v": self.encode(dict(vars(obj)), where)}
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
        return {k: _decode(v, arrays) for k, v in node["v"].items()}
    if kind in ("list", "tuple"):
        items = [_decode(v, arrays) for v in node["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "object":
        if not node["module"].startswith("bayesgen."):
            raise ValueError(f"refusing to build {node['module']}.{node['class']}.")
        cls = getattr(import_module(node["module"]), node["class"])
        obj = cls.__new__(cls)
        vars(obj).update(_decode(node["v"], arrays))
        return obj
    raise ValueError(f"unknown entry {kind!r} in the saved schema.")


def save(estimator: Any, path: str | Path) -> Path:
    """Write a fitted estimator to one netCDF file (see the module docstring).

    Parameters
    ----------
    estimator : fitted bayesgen estimator
    path : str or Path
        Target file (overwritten).
    """
    import xarray as xr
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "params_")
    path = Path(path)
    enc = _Encoder()
    state = {k: v for k, v in vars(estimator).items() if k not in _SKIP}
    schema = enc.encode(state, type(estimator).__name__)
    root = {"module": type(estimator).__module__, "class": type(estimator).__qualname__}
    idata = getattr(estimator, "idata_", None)
    if path.exists():
        path.unlink()
    mode = "w"
    if idata is not None:
        idata.to_netcdf(str(path), engine="h5netcdf")
        mode = "a"
    data = {
        name: xr.DataArray(arr, dims=[f"{name}_d{i}" for i in range(arr.ndim)])
        for name, arr in enc.arrays.items()
    }
    ds = xr.Dataset(data, attrs={"schema": json.dumps(schema), "root": json.dumps(root)})
    ds.to_netcdf(str(path), mode=mode, group=STATE_GROUP, engine="h5netcdf")
    return path


def load(path: str | Path):
    """Read an estimator written by :func:`save`; it predicts exactly as the original."""
    import arviz as az
    import h5netcdf
    import xarray as xr

    path = Path(path)
    with h5netcdf.File(str(path), "r") as f:
        groups = [g for g in f.groups if g != STATE_GROUP]
        if STATE_GROUP not in f.groups:
            raise ValueError(f"{path} was not written by bayesgen.save (no {STATE_GROUP} group).")
    with xr.open_dataset(str(path), group=STATE_GROUP, engine="h5netcdf") as ds:
        ds.load()
        arrays = {name: ds[name].values for name in ds.data_vars}
        schema = json.loads(ds.attrs["schema"])
        root = json.loads(ds.attrs["root"])
    if not root["module"].startswith("bayesgen."):
        raise ValueError(f"refusing to build {root['module']}.{root['class']}.")
    cls = getattr(import_module(root["module"]), root["class"])
    estimator = cls.__new__(cls)
    vars(estimator).update(_decode(schema, arrays))
    estimator._model = None
    if groups:
        loaded = {}
        for g in groups:
            with xr.open_dataset(str(path), group=g, engine="h5netcdf") as ds:
                loaded[g] = ds.load()
        estimator.idata_ = az.InferenceData(**loaded)
    return estimator
