"""Turn the numbers baked into a PyTensor graph into inputs, and key the graph by structure.

Every float constant of the graph (statistics, prior hyper-parameters) becomes an
explicit input ("lifted"), so one compiled program serves all data of the same shapes:
:func:`lift_constants` returns the rewritten outputs, the new inputs, their values and
a structure key, equal exactly when two graphs differ at most in their float
constants. Integer and boolean constants (shapes, axes, indices, static in JAX) stay
constants and are part of the key; shared variables are replaced by constants first.
"""

from __future__ import annotations

import hashlib

import numpy as np


def _freeze_shared(outputs: list) -> list:
    """``outputs`` with every shared variable (random generators aside) replaced by a
    constant of its value."""
    import pytensor.tensor as pt
    from pytensor.compile import SharedVariable
    from pytensor.graph.replace import clone_replace
    from pytensor.graph.traversal import graph_inputs

    shared = [v for v in graph_inputs(outputs)
              if isinstance(v, SharedVariable) and not _is_rng(v)]
    if not shared:
        return list(outputs)
    if any(getattr(v, "default_update", None) is not None for v in shared):
        raise ValueError("the model graph holds shared variables with updates")
    return clone_replace(outputs, replace={v: pt.constant(v.get_value(borrow=True))
                                           for v in shared})


def _fold(inputs: list, outputs: list) -> tuple[list, list]:
    """Constant-fold every subgraph whose inputs are all constants (shapes, index
    vectors, PyMC's structural arrays) before lifting, so that what becomes an input is
    a whole folded array, not the pieces of a structure JAX needs (PyMC's own JAX path
    folds them the same way, later). Returns clones of ``inputs`` and ``outputs``.
    """
    from pytensor.graph.fg import FunctionGraph
    from pytensor.graph.traversal import graph_inputs
    from pytensor.tensor.rewriting.basic import topo_unconditional_constant_folding

    rngs = [v for v in graph_inputs(outputs) if _is_rng(v) and v not in inputs]
    fgraph = FunctionGraph(inputs=[*inputs, *rngs], outputs=outputs, clone=True)
    topo_unconditional_constant_folding.rewrite(fgraph)
    return fgraph.inputs[: len(inputs)], list(fgraph.outputs)


def _is_rng(var) -> bool:
    from pytensor.tensor.random.type import RandomType

    return isinstance(var.type, RandomType)


def _op_token(op):
    """A hashable stand-in for ``op``, equal for ops that compute the same thing.

    Ops compare by their ``__props__`` *and* their class; PyMC creates a new class for
    every ``CustomDist`` (and others), so the class is represented by its name here.
    Ops without props compare by identity (a new such op is a new program, never a
    wrong one).
    """
    if getattr(op, "__props__", None) is None:
        return op
    token = (type(op).__module__, type(op).__qualname__,
             tuple(getattr(op, name) for name in op.__props__))
    try:
        hash(token)
    except TypeError:
        return op
    return token


def _is_lifted(const) -> bool:
    dtype = getattr(const.type, "dtype", None)
    return dtype is not None and np.issubdtype(np.dtype(dtype), np.floating)


def _constant_token(const) -> tuple:
    """A non-lifted constant: its type and a digest of its value."""
    data = np.asarray(const.data)
    digest = hashlib.sha1(np.ascontiguousarray(data).tobytes()).hexdigest()
    return ("const", str(const.type), data.dtype.str, data.shape, digest)


def lift_constants(inputs: list, outputs: list):
    """Lift the float constants of ``outputs`` (a function of ``inputs``) to inputs.

    Parameters
    ----------
    inputs : list of TensorVariable
        The graph's real inputs (PyMC's value variables).
    outputs : list of TensorVariable

    Returns
    -------
    new_inputs : list of TensorVariable
        Clones of ``inputs`` (the graph is copied, then constant-folded).
    new_outputs : list of TensorVariable
        The outputs as functions of ``new_inputs + lifted``.
    lifted : list of TensorVariable
        One new input per float constant, in a canonical order (first use in a
        topological sort of the graph).
    values : list of ndarray
        The constants' values, same order (the arguments of a compiled program).
    key : tuple
        Hashable structure key (see the module docstring).
    """
    from pytensor.graph.basic import Constant
    from pytensor.graph.replace import clone_replace
    from pytensor.graph.traversal import io_toposort

    inputs, outputs = _fold(inputs, _freeze_shared(outputs))
    ids: dict = {v: ("in", i) for i, v in enumerate(inputs)}
    consts: list = []
    nodes = []
    for n_node, node in enumerate(io_toposort(inputs, outputs)):
        refs = []
        for var in node.inputs:
            if var not in ids:
                if isinstance(var, Constant) and _is_lifted(var):
                    ids[var] = ("lift", len(consts), str(var.type))
                    consts.append(var)
                elif isinstance(var, Constant):
                    ids[var] = _constant_token(var)
                elif _is_rng(var):  # only feeds shapes once rewritten (initial points)
                    ids[var] = ("rng", str(var.type))
                else:
                    raise ValueError(f"the model graph has a free input {var!r}")
            refs.append(ids[var])
        nodes.append((_op_token(node.op), tuple(refs)))
        for j, out in enumerate(node.outputs):
            ids[out] = ("node", n_node, j)
    out_refs = []
    for out in outputs:
        if out not in ids:  # an output that is itself a constant or an input
            if isinstance(out, Constant) and _is_lifted(out):
                ids[out] = ("lift", len(consts), str(out.type))
                consts.append(out)
            elif isinstance(out, Constant):
                ids[out] = _constant_token(out)
        out_refs.append(ids[out])
    key = (tuple(str(v.type) for v in inputs), tuple(nodes), tuple(out_refs))
    lifted = [c.type() for c in consts]
    for i, var in enumerate(lifted):
        var.name = f"lifted_{i}"
    new_outputs = clone_replace(outputs, replace=dict(zip(consts, lifted, strict=True)))
    values = [np.asarray(c.data) for c in consts]
    return inputs, new_outputs, lifted, values, key
