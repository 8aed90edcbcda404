"""The specification of :class:`bayesgen.families.mixed.MixedFamily`: validation of
``families=[(name, columns[, options]), ...]`` and the configured part families."""

from __future__ import annotations

import inspect
import numbers
from typing import Any

import numpy as np

from bayesgen.families import get_family

NAMES = ("gaussian", "bernoulli", "multinomial", "categorical", "poisson", "kernel")
DISCRETE = ("bernoulli", "multinomial", "categorical")
USAGE = "families=[(name, columns), ...] or [(name, columns, options), ...]"


def entries(family) -> list[tuple[str, Any, dict]]:
    """The validated ``(name, columns, options)`` triples of ``families``."""
    spec = family.families
    if not isinstance(spec, (list, tuple)) or len(spec) == 0:
        raise ValueError(
            f"MixedNB needs {USAGE}, with every column in exactly one part; got {spec!r}."
        )
    out = []
    for p, entry in enumerate(spec):
        if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3):
            raise ValueError(
                f"families[{p}] must be (name, columns[, options]); got {entry!r}."
            )
        name, columns = entry[0], entry[1]
        options = entry[2] if len(entry) == 3 else None
        if not isinstance(name, str) or name not in NAMES:
            raise ValueError(
                f"families[{p}]: unknown family {name!r}; choose one of {list(NAMES)}."
            )
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise ValueError(f"families[{p}]: options must be a dict; got {options!r}.")
        out.append((name, columns, dict(options)))
    return out

def instances(family) -> list[tuple[str, Any]]:
    """One configured family instance per part, as ``(name, family)``."""
    parts = []
    for p, (name, _, options) in enumerate(entries(family)):
        cls = get_family(name)
        accepted = [
            q.name
            for q in inspect.signature(cls).parameters.values()
            if q.kind == q.KEYWORD_ONLY
        ]
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise ValueError(
                f"families[{p}] ({name!r}): unknown option(s) {unknown}; the {name} "
                f"family accepts {accepted}."
            )
        if name in DISCRETE and "alpha" not in options:
            options["alpha"] = family.alpha
        parts.append((name, cls(**options)))
    return parts

def column(family, c: Any, p: int, n_features: int) -> int:
    """Position of one column given as an integer position or a column name."""
    if isinstance(c, (numbers.Integral, np.integer)) and not isinstance(c, (bool, np.bool_)):
        if not 0 <= int(c) < n_features:
            raise ValueError(
                f"families[{p}]: column position {int(c)} is out of range; X has "
                f"{n_features} columns (0..{n_features - 1})."
            )
        return int(c)
    if isinstance(c, str):
        if family.feature_names is None:
            raise ValueError(
                f"families[{p}]: column name {c!r} needs X to be a DataFrame with "
                "string column names; use integer positions otherwise."
            )
        if c not in family.feature_names:
            raise ValueError(
                f"families[{p}]: unknown column {c!r}; X has columns {family.feature_names}."
            )
        return family.feature_names.index(c)
    raise ValueError(f"families[{p}]: a column must be an int position or a name; got {c!r}.")

def describe(family, positions) -> list:
    names = family.feature_names
    return [names[j] if names is not None else int(j) for j in positions]
