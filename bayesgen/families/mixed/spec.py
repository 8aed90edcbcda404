"""The specification of :class:`bayesgen.families.mixed.family.MixedFamily`: validation of
``families=[(name, columns[, options]), ...]`` and the configured part families."""

from __future__ import annotations

import inspect
import numbers
from typing import Any

import numpy as np

from bayesgen.families import get_family

NAMES = ("gaussian", "bernoulli", "multinomial", "categorical", "poisson", "exponential",
         "kernel")
DISCRETE = ("bernoulli", "multinomial", "categorical")
USAGE = "families=[(name, columns), ...] or [(name, columns, options), ...]"


#: family chosen by ``families="auto"`` for each column kind (see :mod:`bayesgen.data.tables`)
AUTO = {"float": "gaussian", "int": "gaussian", "bool": "bernoulli", "category": "categorical"}


def entries(family) -> list[tuple[str, Any, dict]]:
    """The validated ``(name, columns, options)`` triples of ``families``."""
    spec = family.families
    overrides = family.overrides
    if isinstance(spec, str) and spec == "auto":
        return auto_entries(family)
    if overrides is not None:
        raise ValueError(
            "overrides is only used with families='auto'; with an explicit families=[...] "
            "put each column in the part of its family there."
        )
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


def auto_entries(family) -> list[tuple[str, list, dict]]:
    """``families="auto"``: one part per family, in the order of their first column,
    each column's family chosen from its kind (:data:`AUTO`: float and integer
    columns Gaussian, booleans Bernoulli, text and categories categorical) unless
    ``overrides`` names it.

    ``overrides`` is a dict ``{column: family name}`` with columns given by name
    (DataFrames) or integer position. Columns are listed by name when X had string
    column names, else by position.
    """
    n_features = family.n_features
    kinds = family.kinds
    if kinds is None:
        if n_features is None:
            raise ValueError("MixedNB(families='auto') chooses families when fitted on X.")
        kinds = ["float"] * n_features
    chosen = [AUTO[k] for k in kinds]
    overrides = family.overrides
    if overrides is not None and not isinstance(overrides, dict):
        raise ValueError(
            "overrides must be a dict {column: family name}, e.g. {'visits': 'poisson'}; "
            f"got {overrides!r}."
        )
    for key, name in (overrides or {}).items():
        j = column(family, key, f"overrides[{key!r}]", len(kinds))
        if not isinstance(name, str) or name not in NAMES:
            raise ValueError(
                f"overrides[{key!r}]: unknown family {name!r}; choose one of {list(NAMES)}."
            )
        chosen[j] = name
    names = family.feature_names
    parts: dict[str, list] = {}
    for j, name in enumerate(chosen):
        parts.setdefault(name, []).append(names[j] if names is not None else j)
    return [(name, columns, {}) for name, columns in parts.items()]


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


def column(family, c: Any, p: int | str, n_features: int) -> int:
    """Position of one column given as an integer position or a column name; ``p`` is
    the part's position in ``families`` (or a label such as ``"overrides['a']"``)."""
    where = f"families[{p}]" if isinstance(p, int) else p
    if isinstance(c, (numbers.Integral, np.integer)) and not isinstance(c, (bool, np.bool_)):
        if not 0 <= int(c) < n_features:
            raise ValueError(
                f"{where}: column position {int(c)} is out of range; X has "
                f"{n_features} columns (0..{n_features - 1})."
            )
        return int(c)
    if isinstance(c, str):
        if family.feature_names is None:
            raise ValueError(
                f"{where}: column name {c!r} needs X to be a DataFrame with "
                "string column names; use integer positions otherwise."
            )
        if c not in family.feature_names:
            raise ValueError(
                f"{where}: unknown column {c!r}; X has columns {family.feature_names}."
            )
        return family.feature_names.index(c)
    raise ValueError(f"{where}: a column must be an int position or a name; got {c!r}.")


def describe(family, positions) -> list:
    """Columns by name (X had string column names) or position."""
    names = family.feature_names
    return [names[j] if names is not None else int(j) for j in positions]


def column_families(family, names: list[str] | None, kinds: list[str]) -> list:
    """The part family (instance) modelling each column under ``family``'s
    specification for a table with these column ``names`` and ``kinds``; ``ValueError``
    for an invalid one."""
    probe = type(family)(family.families, alpha=family.alpha, feature_names=names,
                         n_features=len(kinds), overrides=family.overrides, kinds=kinds)
    out: list = [None] * len(kinds)
    for part in probe.resolve(len(kinds)):
        for j in part["columns"]:
            out[j] = part["family"]
    return out


def part_names(names: list[str]) -> list[str]:
    """Stable names of the parts whose families are ``names`` (in ``families`` order):
    the family's name for its first part, ``f"{name}_{i}"`` for its i-th (i >= 2), e.g.
    ``["gaussian", "bernoulli", "gaussian_2"]``; unchanged by moving parts of other
    families."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return out


def fitted(family) -> list[tuple[str, list]]:
    """``families_``: ``[(name, columns), ...]`` of the resolved parts, columns by name
    (X had string column names) or position."""
    return [(q["name"], describe(family, q["columns"])) for q in family.parts_]


def parts(mixed, n_features: int) -> list[dict]:
    """Validate ``mixed.families`` against the n_features columns of X and build the
    parts: ``[{"name", "part", "prefix", "family", "columns"}, ...]``, one per entry,
    with ``part`` the part's name (:func:`part_names`), ``prefix = f"{name}{position}"``
    (the namespace of its parameters and attributes) and ``columns`` an intp array of
    positions.

    Raises ``ValueError`` naming the entry for columns that are not a list, an empty
    part, and naming the columns that are in more than one part or in none.
    """
    out = []
    pairs = zip(entries(mixed), instances(mixed), strict=True)
    for p, ((name, columns, _), (_, family)) in enumerate(pairs):
        if isinstance(columns, (str, numbers.Integral, np.integer)):
            columns = [columns]
        try:
            items = list(columns)
        except TypeError:
            raise ValueError(
                f"families[{p}]: columns must be a list of positions or names; got {columns!r}."
            ) from None
        if not items:
            raise ValueError(f"families[{p}] ({name!r}) has no columns; give it at least one.")
        cols = np.array([column(mixed, c, p, n_features) for c in items], dtype=np.intp)
        out.append({"name": name, "prefix": f"{name}{p}", "family": family, "columns": cols})
    for q, part in zip(out, part_names([q["name"] for q in out]), strict=True):
        q["part"] = part
    used = np.bincount(np.concatenate([q["columns"] for q in out]), minlength=n_features)
    if np.any(used > 1):
        raise ValueError(
            f"Columns {describe(mixed, np.flatnonzero(used > 1))} are in more than one part "
            "of families; every column must be in exactly one part."
        )
    if np.any(used == 0):
        raise ValueError(
            f"Columns {describe(mixed, np.flatnonzero(used == 0))} are in no part of "
            "families; every column must be in exactly one part."
        )
    return out
