"""Merging the column records of two pieces of statistics (:mod:`bayesgen.scale.pieces`).

A DataFrame's text, boolean and category columns modelled as categorical reach the
family as *codes*: positions among the column's levels (:mod:`bayesgen.data.tables`).
Each piece (a ``partial_fit`` batch, a Dask chunk, a fitted estimator) has its own
record of the columns (``Piece.columns``) and so its own levels: a chunk read on its own has
the sorted values it saw; a later batch has the earlier levels with its new values
appended. Before their statistics are merged, :func:`unite` gives both pieces the
sorted union of the levels and re-codes their categorical statistics to it, so the
result is what one fit on all the rows records (the levels, ``categories_`` and the
category counts in sorted order), whatever the pieces saw.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from bayesgen.data import categories as cats


def unite(ta: Any, tb: Any, family, sa: dict, sb: dict) -> tuple[Any, dict, dict]:
    """The record of both pieces' columns and their statistics re-coded to it.

    Parameters
    ----------
    ta, tb : bayesgen.data.tables.Columns or None
        The pieces' column records (None: a piece without one, e.g. an estimator saved
        before records existed; the other's is kept).
    family : family object
        Of the estimator's configuration (MixedNB: with its parts resolved).
    sa, sb : dict
        The pieces' statistics.

    Raises
    ------
    ValueError
        A column modelled by different families in the two pieces (e.g. an ``object``
        column read as text in one chunk and as numbers in another).
    """
    if ta is None or tb is None:
        return (tb if ta is None else ta), sa, sb
    fa, fb = ta.families, tb.families
    if fa is not None and fb is not None and not np.array_equal(fa, fb):
        differ = [_name(ta, j) for j in np.flatnonzero(np.asarray(fa) != np.asarray(fb))]
        raise ValueError(
            f"Column(s) {differ} are read differently in the pieces merged (families "
            f"{[str(fa[j]) for j in np.flatnonzero(fa != fb)]} vs "
            f"{[str(fb[j]) for j in np.flatnonzero(fa != fb)]}): a column of one dtype in "
            "some batches or partitions and another (e.g. text and numbers) in others. "
            "Give every piece the same dtypes."
        )
    if not ta.levels and not tb.levels:
        return ta, sa, sb
    levels = {}
    for key in sorted(set(ta.levels) | set(tb.levels), key=int):
        la, lb = ta.levels.get(key), tb.levels.get(key)
        if la is None or lb is None:
            raise ValueError(
                f"Column {_name(ta, int(key))!r} holds category values in one piece "
                "merged and numbers in the other; give every piece the same dtypes."
            )
        union = cats.levels(np.concatenate([la.astype(object), lb.astype(object)]),
                            f"Column {_name(ta, int(key))!r}, over the pieces merged "
                            "(batches, partitions or estimators),")
        sa = _recode(family, sa, int(key), cats.lookup(la, union))
        sb = _recode(family, sb, int(key), cats.lookup(lb, union))
        levels[key] = union
    return replace(ta, levels=levels), sa, sb


def _name(table: Any, j: int) -> str:
    return str(table.names[j]) if table.names is not None else f"x{j}"


def _recode(family, stats: dict, column: int, position: np.ndarray) -> dict:
    """Statistics whose codes of ``column`` (code c -> level c) become ``position[c]``."""
    if np.array_equal(position, np.arange(position.size)):
        return stats
    if "parts" in stats:  # MixedNB: the categorical part holding the column
        for p, part in enumerate(family.parts_):
            local = np.flatnonzero(part["columns"] == column)
            if local.size:
                parts = list(stats["parts"])
                parts[p] = _recode(part["family"], parts[p], int(local[0]), position)
                return dict(stats, parts=parts)
    if "categories" not in stats:
        raise ValueError(f"column {column} has levels but no categorical statistics.")
    table = stats["categories"].copy()
    counts = stats["category_count"].copy()
    n = int(stats["n_seen"][column])
    if n:
        codes = position[table[column, :n].astype(np.intp)]
        order = np.argsort(codes, kind="stable")
        table[column, :n] = codes[order]
        table[column, n:] = codes[order][-1]  # the padding repeats the last entry
        counts[:, column, :n] = counts[:, column, :n][:, order]
    return dict(stats, categories=table, category_count=counts)
