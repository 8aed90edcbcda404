"""Shared helpers of the property-based tests (tests/test_properties*.py): the
(estimator, method) cases, the rows to predict, and the tolerances on log-probabilities.

The properties are split over three files so that pytest-xdist (``--dist loadfile``)
runs them on different workers: ``test_properties.py`` (invariances),
``test_properties_predictions.py`` (probabilities, decisions, scores) and
``test_properties_save_load.py`` (object labels, save/load). See the docstring of
``tests/test_properties.py`` for what they test and how to run them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings

from tests.strategies import CASES, DataSet

#: what a rounding of the inputs at the data's resolution may do to a log-probability
#: (class means shifted by the resolution, test points up to ~20 sd away, 5 features)
AMPLIFICATION = 1e3
#: examples of the tests that write files (a quarter of the profile's)
SLOW_EXAMPLES = max(2, settings.default.max_examples // 4)
LOG_FLOOR = np.log(1e-300)  # probabilities below this may underflow differently


def _case_id(case: tuple[str, str]) -> str:
    return "-".join(case)


def _cases(only=None, methods=None) -> list:
    """The (estimator, method) cases as pytest params; ``only``/``methods`` restrict the
    estimators/methods."""
    return [pytest.param(case, id=_case_id(case)) for case in CASES
            if (only is None or case[0] in only) and (not methods or case[1] in methods)]


def _points(ds: DataSet, unit: bool = False) -> np.ndarray:
    """Rows to predict: fresh test rows (one an outlier) and the training rows."""
    return np.vstack([ds.unit_test, ds.unit] if unit else [ds.X_test, ds.X])


def _values(ds: DataSet) -> list:
    """The training labels as a plain list, row by row."""
    return [ds.labels[i] for i in ds.y_index]


def assert_log_close(lp: np.ndarray, ref: np.ndarray, tol: float, what: str) -> None:
    """|log p - log ref| <= tol max(1, |log ref|): relative error ``tol`` on probabilities
    that matter, relative error ``tol`` on the log of the improbable ones (p = 1e-80 is
    the difference of scores of size ~200, each rounded). Where both probabilities are
    below 1e-300 (underflow territory) they only need to stay there; -inf must match."""
    lp, ref = np.asarray(lp, dtype=float), np.asarray(ref, dtype=float)
    assert lp.shape == ref.shape, f"{what}: shapes {lp.shape} and {ref.shape}"
    tiny = (lp < LOG_FLOOR) & (ref < LOG_FLOOR)
    with np.errstate(invalid="ignore"):
        diff = np.where(tiny, 0.0, np.abs(lp - ref))
        allowed = tol * np.maximum(1.0, np.abs(ref))
        excess = np.nan_to_num(diff / allowed, nan=np.inf)
    if not np.all(excess <= 1.0):
        worst = np.unravel_index(np.argmax(excess), diff.shape)
        raise AssertionError(
            f"{what}: |log p - log p_ref| = {diff[worst]:.3g} > {allowed[worst]:.3g} at "
            f"(row, class) {tuple(int(i) for i in worst)} (log p = {lp[worst]!r}, "
            f"log p_ref = {ref[worst]!r}); tolerance {tol:.3g} x max(1, |log p_ref|)"
        )


def assert_tree_close(a, b, rtol: float, where: str = "_posterior") -> None:
    """Nested dicts/lists of arrays equal to relative ``rtol`` (elementwise)."""
    if isinstance(a, dict):
        assert set(a) == set(b), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_tree_close(a[key], b[key], rtol, f"{where}[{key!r}]")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_tree_close(x, y, rtol, f"{where}[{i}]")
    elif isinstance(a, str) or a is None:
        assert a == b, where
    else:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        assert x.shape == y.shape, f"{where}: shapes {x.shape} and {y.shape}"
        np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-300, err_msg=where)


def _tolerance(ds: DataSet, base: float) -> float:
    return base + AMPLIFICATION * ds.resolution


def _discrete_mle(ds: DataSet) -> bool:
    """MLE with a discrete part: a zero probability (log -inf) is the right answer."""
    return ds.method == "mle" and any(c.kind != "real" for c in ds.columns)
