"""Random states: ``random_state`` may be None, an int in [0, 2**32 - 1], a
``numpy.random.RandomState`` or a ``numpy.random.Generator`` for every method.

:func:`rng_from` (conjugate draws), :func:`seed_from` (PyMC's seed for MCMC) and
:func:`legacy_rng` (``sample`` and the predictive samplers) turn it into what each
consumer needs, with one error message naming the parameter.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.utils import check_random_state


def _checked(random_state: Any, name: str) -> Any:
    """``random_state`` if it is None, an int in [0, 2**32 - 1], a RandomState or a
    Generator (scikit-learn's ``check_random_state`` plus Generators), else a
    ``ValueError`` naming ``name``."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    try:
        check_random_state(random_state)
    except (ValueError, TypeError) as err:
        raise ValueError(
            f"{name} must be None, an int in [0, 2**32 - 1], a numpy.random.RandomState "
            f"or a numpy.random.Generator; got {random_state!r}."
        ) from err
    return random_state


def rng_from(random_state: Any, name: str = "random_state") -> np.random.Generator:
    """A ``numpy.random.Generator`` for ``random_state``.

    None: fresh entropy; int s: ``default_rng(s)``; Generator: itself (its state
    advances, as scikit-learn does with RandomState instances); RandomState: a
    Generator seeded from one draw of it.
    """
    random_state = _checked(random_state, name)
    if random_state is None or isinstance(random_state, np.random.Generator):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral):
        return np.random.default_rng(int(random_state))
    return np.random.default_rng(random_state.randint(2**31))


def seed_from(random_state: Any, name: str = "random_state") -> int | None:
    """An int seed (or None) for ``random_state``: ints pass through, a Generator or
    RandomState gives one draw in [0, 2**31)."""
    random_state = _checked(random_state, name)
    if random_state is None:
        return None
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**31))
    return int(random_state.randint(2**31))


def legacy_rng(random_state: Any, name: str = "random_state") -> np.random.Generator:
    """``default_rng(check_random_state(random_state).randint(2**31))`` (the stream
    ``sample`` and the predictive samplers always used), or the Generator itself."""
    random_state = _checked(random_state, name)
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(check_random_state(random_state).randint(2**31))
