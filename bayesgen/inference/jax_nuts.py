"""numpyro's NUTS on the statistics model, compiled once per model structure and shape.

``pm.sample(nuts_sampler="numpyro")`` bakes the model's numbers (here the sufficient
statistics and the prior) into the jitted program, so every fit compiles anew (several
seconds, and JAX kept every such program in memory). Here the log-density graph of
the statistics model is rewritten with its float constants as explicit inputs
(:mod:`bayesgen.inference.graph_inputs`), converted to JAX with PyTensor's JAX backend, and the
whole run (jittered start, warm-up, draws, the map back to the constrained model
variables) is one jitted program, kept in an in-process cache under the graph's
structure key plus ``(chains, tune, draws, target_accept, chain method)``. A refit on
new data of the same shapes (cross-validation, bootstrap, a re-run notebook) reuses it
and only samples; JAX's persistent compilation cache, when the user turns it on, serves
a new process (:mod:`bayesgen.inference.jax_scope`, which also keeps JAX's global
settings as the user left them).

The sampler is numpyro's NUTS kernel (``numpyro.infer.hmc.hmc``) with PyMC's settings
for it: diagonal mass matrix and step size adapted during ``tune`` iterations (numpyro's
windowed schedule), ``target_accept``, maximum tree depth 10, each chain started at
PyMC's initial point (the prior's support point, in the unconstrained space) plus
uniform(-1, 1) jitter (the point without jitter when the jittered one has a non-finite
density). A caller's start (``ExtraLikelihood.start`` of :mod:`bayesgen.inference.model`:
a semi-supervised fit's) replaces it, with uniform(-0.1, 0.1) jitter.

How the chains run is the estimators' ``chain_method`` (numpyro's names), one compiled
program either way:

- ``"sequential"`` (the default): one chain after the other (``jax.lax.map``) on one
  device. Each chain runs its own trajectories, so no chain waits for another; the
  time is the sum of the chains'. The cheapest program to compile, and compiling is
  most of a first fit.
- ``"vectorized"``: all chains in one batched program (``jax.vmap``) on one device.
  Every NUTS step costs the longest trajectory among the chains, on one core. Its
  program takes longer to compile, and then samples small models faster (the batch
  shares the loop's overhead): it pays off for refits of the same shapes
  (cross-validation, bootstraps), which reuse the compiled program.
- ``"parallel"``: one chain per XLA device (``jax.pmap``), so on a CPU the chains run
  on separate cores. JAX has one CPU device unless told otherwise before it starts:
  set ``XLA_FLAGS=--xla_force_host_platform_device_count=<chains>`` in the environment
  (or call ``numpyro.set_host_device_count(chains)``) before JAX's first use; with
  fewer devices than chains the fit raises ``ValueError``. bayesgen never sets it:
  the number of devices is the user's choice, not an effect of the order of imports.
  Measured in ``benchmarks/README.md``.
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict

import numpy as np

from bayesgen.inference import jax_scope

#: compiled programs kept in memory (least recently used dropped first)
MAX_PROGRAMS = 8
#: how chains run (the estimators' ``chain_method``; module docstring)
CHAIN_METHODS = ("sequential", "parallel", "vectorized")

_PROGRAMS: OrderedDict = OrderedDict()
_LOCK = threading.Lock()

#: NUTS statistics kept in ``sample_stats`` (PyMC's names)
STAT_NAMES = ("diverging", "n_steps", "tree_depth", "lp", "energy", "step_size",
              "acceptance_rate")


def _jaxify(inputs: list, outputs: list):
    """PyTensor graph -> JAX function (PyMC's rewrites for JAX, then ``jax_funcify``).

    Random generators among the graph's roots (an initial point's ``rv.shape`` refers to
    the random variable) must vanish in the rewrites (shape inference), else ValueError.
    """
    from pytensor.compile import SharedVariable, mode
    from pytensor.graph.fg import FunctionGraph
    from pytensor.graph.traversal import graph_inputs
    from pytensor.link.jax.dispatch import jax_funcify  # imported by jax_scope.imports

    rngs = [v for v in graph_inputs(outputs) if isinstance(v, SharedVariable)]
    fgraph = FunctionGraph(inputs=[*inputs, *rngs], outputs=outputs, clone=True)
    mode.JAX.optimizer.rewrite(fgraph)
    if rngs:
        if any(fgraph.clients[v] for v in fgraph.inputs[len(inputs):]):
            raise ValueError("the graph draws random numbers")
        fgraph = FunctionGraph(inputs=fgraph.inputs[: len(inputs)], outputs=fgraph.outputs,
                               clone=True)
    return jax_funcify(fgraph)


def _build_program(value_vars, lifted, logp, targets, starts, *, chains: int, tune: int,
                   draws: int, target_accept: float, chain_method: str,
                   given_start: bool = False, jitter: float = 1.0):
    """The jitted run ``(keys (C,), start, data) -> (constrained draws, stats)`` and
    None when it computes the initial point itself (then ``start`` is ``()``), else the
    host function of the lifted values computing it (``start`` then holds the
    unconstrained initial values with a leading chain dim). With ``given_start`` the
    caller passes ``start`` (and the host function is None). Each chain starts at
    ``start`` plus uniform(-jitter, jitter)."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer.hmc import hmc

    logp_fn = _jaxify(value_vars + lifted, [logp])
    out_fn = _jaxify(value_vars + lifted, targets)
    start_fn, start_host = (None, None) if given_start else _start_function(lifted, starts)
    n_values = len(value_vars)

    def potential_gen(*data):
        return lambda z: -logp_fn(*z, *data)[0]

    def one_chain(key, start, data):
        if start_fn is not None:
            start = tuple(jnp.asarray(v, dtype=z.dtype)
                          for v, z in zip(start_fn(*data), value_vars, strict=True))
        init_kernel, sample_kernel = hmc(potential_fn_gen=potential_gen, algo="NUTS")
        key_jitter, key_run = jax.random.split(key)
        jitter_keys = jax.random.split(key_jitter, n_values)
        jittered = tuple(
            s + jax.random.uniform(k, jnp.shape(s), dtype=s.dtype, minval=-jitter,
                                       maxval=jitter)
            for s, k in zip(start, jitter_keys, strict=True)
        )
        finite = jnp.isfinite(potential_gen(*data)(jittered))
        z0 = tuple(jnp.where(finite, j, s) for j, s in zip(jittered, start, strict=True))
        state = init_kernel(
            z0, tune, target_accept_prob=target_accept, trajectory_length=None,
            max_tree_depth=10, model_args=data, rng_key=key_run,
        )
        state = jax.lax.fori_loop(
            0, tune, lambda i, s: sample_kernel(s, model_args=data), state
        )

        def draw(s, _):
            s = sample_kernel(s, model_args=data)
            stats = (s.diverging, s.num_steps, -s.potential_energy, s.energy,
                     s.adapt_state.step_size, s.accept_prob)
            return s, (tuple(out_fn(*s.z, *data)), stats)

        _, out = jax.lax.scan(draw, state, None, length=draws)
        return out

    if chain_method == "parallel":  # one chain per device (checked by the caller)
        run = jax.pmap(one_chain, in_axes=(0, 0, None))
    elif chain_method == "vectorized":
        run = jax.jit(jax.vmap(one_chain, in_axes=(0, 0, None)))
    else:  # "sequential": one chain after the other, in one program
        run = jax.jit(lambda keys, start, data: jax.lax.map(
            lambda chain: one_chain(chain[0], chain[1], data), (keys, start)))
    return run, start_host


def _start_function(lifted: list, starts: list):
    """The initial point as a JAX function of the lifted inputs, or, where PyTensor's
    JAX backend cannot trace it (an LKJ support point), as a PyTensor function compiled
    once (Python implementations). Returns ``(jax_fn, None)`` or ``(None, host_fn)``."""
    import jax
    import pytensor

    try:
        start_fn = _jaxify(lifted, starts)
        jax.eval_shape(start_fn, *(jax.ShapeDtypeStruct(v.type.shape, v.type.dtype)
                                   for v in lifted))
        return start_fn, None
    except Exception:  # any failure: compute it on the host instead
        host = pytensor.function(lifted, starts, mode="FAST_COMPILE",
                                 on_unused_input="ignore")
        return None, host


def check_chain_method(chain_method: str, chains: int) -> None:
    """``ValueError`` for an unknown ``chain_method``, or "parallel" with fewer XLA
    devices than chains (JAX's backend starts here if it has not yet)."""
    if chain_method not in CHAIN_METHODS:
        raise ValueError(f"chain_method must be one of {CHAIN_METHODS}; got {chain_method!r}.")
    if chain_method != "parallel" or chains == 1:
        return
    import jax

    devices = jax.local_device_count()
    if devices < chains:
        raise ValueError(
            f"chain_method='parallel' runs each of the {chains} chains on an XLA device of "
            f"its own, but JAX has {devices}. Set the environment variable XLA_FLAGS="
            f"--xla_force_host_platform_device_count={chains} (or call "
            f"numpyro.set_host_device_count({chains})) before JAX's first use in the "
            "process, or use chain_method='sequential' or 'vectorized'."
        )


def _program(key, build):
    with _LOCK:
        if key in _PROGRAMS:
            _PROGRAMS.move_to_end(key)
            return _PROGRAMS[key]
    program = build()
    with _LOCK:
        _PROGRAMS[key] = program
        while len(_PROGRAMS) > MAX_PROGRAMS:
            _PROGRAMS.popitem(last=False)
    return program


def clear_programs() -> None:
    """Drop every compiled NUTS program of this module (they are rebuilt on demand)."""
    with _LOCK:
        _PROGRAMS.clear()


def _start_expressions(model) -> list:
    """PyTensor expressions of PyMC's initial point (unconstrained, no jitter)."""
    from pymc.initial_point import make_initial_point_expression

    return make_initial_point_expression(
        free_rvs=model.free_RVs, rvs_to_transforms=model.rvs_to_transforms,
        initval_strategies=model.rvs_to_initial_values, default_strategy="support_point",
        return_transformed=True,
    )


def sample(model, names: list[str], *, chains: int, tune: int, draws: int,
           target_accept: float, seed: int | None, chain_method: str,
           init: dict | None = None, jitter: float = 1.0):
    """NUTS draws of the model variables ``names`` (constrained) and NUTS statistics.

    ``chain_method``: one of :data:`CHAIN_METHODS` (module docstring). ``init`` (value
    variable name -> unconstrained value) replaces PyMC's initial point as the chains'
    start; ``jitter`` is the half-width of the uniform jitter added to the start of
    each chain. JAX's global settings are left as they were
    (:func:`bayesgen.inference.jax_scope.scope`).

    Returns
    -------
    draws : dict
        ``name -> ndarray (chains, draws, *shape)``.
    sample_stats : dict
        ``diverging``, ``n_steps``, ``tree_depth``, ``lp`` (log density, unconstrained,
        Jacobian included), ``energy``, ``step_size``, ``acceptance_rate``, each
        (chains, draws).
    """
    with jax_scope.scope():
        check_chain_method(chain_method, chains)
        return _sample(model, names, chains=chains, tune=tune, draws=draws,
                       target_accept=target_accept, seed=seed, chain_method=chain_method,
                       init=init, jitter=jitter)


def _sample(model, names: list[str], *, chains: int, tune: int, draws: int,
            target_accept: float, seed: int | None, chain_method: str,
            init: dict | None, jitter: float):
    import jax

    from bayesgen.inference.graph_inputs import lift_constants

    with warnings.catch_warnings():
        # the C backend's missing BLAS does not matter here: the program runs in JAX
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        logp = model.logp()
        targets = model.replace_rvs_by_values([model[name] for name in names])
        starts = _start_expressions(model)
        value_vars, new_outputs, lifted, values, structure = lift_constants(
            list(model.value_vars), [logp, *targets, *starts]
        )
        n_targets = len(targets)
        key = (structure, chains, tune, draws, float(target_accept), chain_method,
               init is not None, float(jitter))
        program, start_host = _program(key, lambda: _build_program(
            value_vars, lifted, new_outputs[0], new_outputs[1:1 + n_targets],
            new_outputs[1 + n_targets:], chains=chains, tune=tune, draws=draws,
            target_accept=float(target_accept), chain_method=chain_method,
            given_start=init is not None, jitter=float(jitter),
        ))
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    keys = jax.random.split(jax.random.PRNGKey(seed), chains)
    if init is not None:
        given = [init[v.name] for v in model.value_vars]  # value_vars keep this order
    else:
        given = None if start_host is None else start_host(*values)
    start = () if given is None else tuple(
        np.broadcast_to(np.asarray(v, dtype=z.dtype), (chains, *np.shape(v)))
        for v, z in zip(given, value_vars, strict=True)
    )
    outs, stats = program(keys, start, tuple(values))
    draws_out = {name: np.asarray(v) for name, v in zip(names, outs, strict=True)}
    diverging, n_steps, lp, energy, step_size, accept = (np.asarray(s) for s in stats)
    sample_stats = {
        "diverging": diverging.astype(bool),
        "n_steps": n_steps,
        "tree_depth": np.log2(np.maximum(n_steps, 1)).astype(int) + 1,
        "lp": lp,
        "energy": energy,
        "step_size": step_size,
        "acceptance_rate": accept,
    }
    return draws_out, sample_stats


def logp_and_grad(model):
    """``z -> (log density, gradient)`` of ``model`` (unconstrained, Jacobian included)
    at the value variables' values ``z`` (a list in ``model.value_vars`` order), as a
    jitted JAX function of the graph with its constants lifted: compiled once per
    model structure and shape and kept with the NUTS programs; every call runs in
    :func:`bayesgen.inference.jax_scope.scope`."""
    import jax

    from bayesgen.inference.graph_inputs import lift_constants

    with warnings.catch_warnings(), jax_scope.scope():
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        value_vars, outs, lifted, values, structure = lift_constants(
            list(model.value_vars), [model.logp()]
        )

        def build():
            logp_fn = _jaxify(value_vars + lifted, outs)
            return jax.jit(jax.value_and_grad(lambda z, data: logp_fn(*z, *data)[0]))

        fn = _program(("logp", structure), build)
    data = tuple(values)

    def value_and_grad(z):
        with jax_scope.scope():
            return fn(tuple(np.asarray(v, dtype=x.dtype) for v, x in
                            zip(z, value_vars, strict=True)), data)

    return value_and_grad
