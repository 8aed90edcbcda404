"""Shared by test_streaming.py and test_dask.py: data whose frame is not the identity,
and the comparison of two fitted estimators to a relative 1e-10."""

import numpy as np

from tests.conftest import CLASSIFIERS, make_data

#: fitted state that is internal (other frame, same model) or not a number
INTERNAL = {"_family", "_stats", "_prior", "_params", "_posterior", "_log_pi_draws", "idata_",
            "_frame", "class_alpha_", "parts_", "scalings_"}
TOL = 1e-10

#: (estimator name, method) for every estimator and every method except MCMC
CASES = [
    (name, method)
    for name in sorted(CLASSIFIERS)
    for method in ("mle", "map", "conjugate")
    if not (name == "KernelNB" and method == "conjugate")
]


def data(name: str, seed: int = 0):
    """Shuffled data of the estimator's support; real-valued columns moved to 1e6 and
    scaled by 1e-3, so the affine frame is not the identity (and batches differ in it)."""
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind, n_per_class=30, seed=seed)
    perm = np.random.default_rng(seed + 1).permutation(y.size)
    X, y = X[perm], y[perm]
    if kind == "real":
        X = X * 1e-3 + 1e6
    elif kind == "mixed":
        X[:, :2] = X[:, :2] * 1e-3 + 1e6
    return factory, X, y


def make(name: str, method: str, **kwargs):
    factory = CLASSIFIERS[name][0]
    options = {"draws": 30, "chains": 2, "random_state": 0, "progressbar": False, **kwargs}
    return factory(method=method, **options)


def assert_close(a, b, where: str = "") -> None:
    """Numbers, arrays and nested lists/dicts equal to a relative TOL."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            assert_close(u, v, f"{where}[{i}]")
    elif isinstance(a, np.ndarray | float | np.floating | int | np.integer):
        u, v = np.asarray(a), np.asarray(b)
        if u.dtype.kind in "fc":
            scale = np.max(np.abs(v[np.isfinite(v)]), initial=0.0)  # log 0 = -inf too
            np.testing.assert_allclose(u, v, rtol=TOL, atol=TOL * scale, err_msg=where)
        else:
            np.testing.assert_array_equal(u, v, err_msg=where)
    elif hasattr(a, "__array__") or isinstance(a, str):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=where)


def assert_same_model(a, b, X) -> None:
    """Same fitted attributes (user units) and the same predictions on X."""
    names = {k for k in vars(b) if k.endswith("_") and not k.startswith("_")} - INTERNAL
    assert names <= set(vars(a)), names - set(vars(a))
    for name in sorted(names):
        assert_close(getattr(a, name), getattr(b, name), name)
    if hasattr(b, "scalings_"):  # the kept directions (the others span a null space)
        n = b.explained_variance_ratio_.size
        assert_close(np.abs(a.scalings_[:, :n]), np.abs(b.scalings_[:, :n]), "scalings_")
    for method in ("predict_joint_log_proba", "predict_proba", "decision_function"):
        assert_close(getattr(a, method)(X), getattr(b, method)(X), method)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    if getattr(b, "idata_", None) is not None:  # conjugate draws: same random numbers
        for var in b.idata_.posterior.data_vars:
            assert_close(a.idata_.posterior[var].values, b.idata_.posterior[var].values, var)
