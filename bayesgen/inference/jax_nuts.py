"""numpyro's NUTS on the statistics model, compiled once per model structure and shape.

The log-density graph of the statistics model is rewritten with its float constants
as explicit inputs (:mod:`bayesgen.inference.graph_inputs`), converted to JAX, and the
whole run (start, warm-up, draws, the map back to the model variables) is one jitted
program, cached in process under the graph's structure key plus ``(chains, tune, draws,
target_accept, chain method)``: a refit of the same shapes only samples
(:mod:`bayesgen.inference.jax_scope` keeps JAX's settings as the user left them).

NUTS (``numpyro.infer.hmc.hmc``, PyMC's ``target_accept``, tree depth 10) runs on
whitened coordinates, so the geometry does not change with N:

1. **The mode**: Newton's method on the unconstrained log density, from PyMC's initial
   point or a caller's start (``ExtraLikelihood.start``), Hessian by central
   differences of the compiled gradient (:mod:`bayesgen.inference.laplace`).
2. **The whitening**: z = mode + W x with W W^T the Laplace covariance; the posterior
   has unit scale in x at every N (``benchmarks/bench_flat_in_n.py``). Models of more
   than :data:`MAX_WHITENED` unconstrained dimensions are not whitened (W = I).
3. **The start**: x = uniform(-1, 1) per coordinate (:data:`JITTER`), or the mode
   where that point has a non-finite density.
4. **The warm-up**: ``tune`` iterations of numpyro's windowed adaptation of the step
   size and a diagonal mass matrix on x, the same program whatever the data.

Each draw's step size is the adapted one times uniform(0.8, 1.2) (:data:`STEP_JITTER`):
a fixed step resonates on an isotropic posterior (iris QDA, 4 x (500 + 500), seeds 1-4:
max R-hat 1.011, 1.006, 1.008, 1.012 without, 1.007, 1.007, 1.007, 1.005 with).
``sample_stats``' ``step_size`` is in the whitened coordinates and ``lp`` the log
density at z. ``chain_method`` (numpyro's names, documented on the estimators):
"sequential" (``jax.lax.map``), "vectorized" (``jax.vmap``), "parallel" (``jax.pmap``,
one chain per XLA device; fewer devices than chains is a ``ValueError``).
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict

import numpy as np

from bayesgen.inference import jax_scope

#: compiled programs kept in memory (least recently used dropped first); a model
#: structure takes two (the search for the mode, the NUTS run)
MAX_PROGRAMS = 16
#: how chains run (the estimators' ``chain_method``; module docstring)
CHAIN_METHODS = ("sequential", "parallel", "vectorized")

_PROGRAMS: OrderedDict = OrderedDict()
_LOCK = threading.Lock()

#: each chain starts at the mode plus uniform(-JITTER, JITTER) in every whitened
#: coordinate (posterior standard deviations)
JITTER = 1.0
#: after the warm-up each draw's step size is the adapted one times
#: uniform(1 - STEP_JITTER, 1 + STEP_JITTER)
STEP_JITTER = 0.2
#: the largest number of unconstrained dimensions whitened (a dense D x D Hessian from
#: 2 D gradients in one batch); above it NUTS samples the unconstrained coordinates
#: from the start (PyMC's initial point, jittered by +-1, or a caller's, by
#: +-GIVEN_START_JITTER) as before the whitening
MAX_WHITENED = 400
GIVEN_START_JITTER = 0.1

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


def _once(make):
    """``make()`` on the first call, the same object after: the search for the mode and
    the NUTS run of one fit share one conversion of the log density to JAX (PyTensor's
    rewrites of the graph, about a second), whichever of their programs is built."""
    made = []

    def get():
        if not made:
            made.append(make())
        return made[0]

    return get


def _build_program(value_vars, lifted, jax_logp, targets, shapes, *, chains: int, tune: int,
                   draws: int, target_accept: float, chain_method: str, jitter: float):
    """The jitted run ``(keys (C,), center (D,), W (D, D), data) -> (constrained draws,
    stats)``: NUTS on the whitened coordinates x, z = center + W x (module docstring),
    each chain started at x = uniform(-jitter, jitter) (x = 0 when that point has a
    non-finite density), ``tune`` warm-up iterations adapting the step size and a
    diagonal mass matrix on x, then ``draws`` draws, in one loop over one copy of the
    NUTS kernel. ``jax_logp``: returns the log density as a JAX function of the value
    variables and ``lifted`` (:func:`_once`); ``shapes``: the value variables' shapes
    (z unravelled)."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer.hmc import hmc

    logp_fn = jax_logp()
    out_fn = _jaxify(value_vars + lifted, targets)
    unravel = _unraveller(shapes)

    def to_z(center, W, x):  # W (D, D) whitens; W () when not whitened (W = 1)
        return center + (W @ x if jnp.ndim(W) == 2 else W * x)

    def potential_gen(center, W, data):
        return lambda x: -logp_fn(*unravel(to_z(center, W, x)), *data)[0]

    def one_chain(key, center, W, data):
        init_kernel, sample_kernel = hmc(potential_fn_gen=potential_gen, algo="NUTS")
        key_jitter, key_run, key_steps = jax.random.split(key, 3)
        args = (center, W, data)
        jittered = jax.random.uniform(key_jitter, center.shape, dtype=center.dtype,
                                      minval=-jitter, maxval=jitter)
        finite = jnp.isfinite(potential_gen(*args)(jittered))
        x0 = jnp.where(finite, jittered, jnp.zeros_like(jittered))
        state = init_kernel(
            x0, tune, target_accept_prob=target_accept, trajectory_length=None,
            max_tree_depth=10, model_args=args, rng_key=key_run,
        )
        step_keys = jax.random.split(key_steps, draws)

        def record(s):  # a draw: the model variables (constrained) and the statistics
            return (tuple(out_fn(*unravel(to_z(center, W, s.z)), *data)),
                    (s.diverging, s.num_steps, -s.potential_energy, s.energy,
                     s.adapt_state.step_size, s.accept_prob))

        # the warm-up and the draws are one loop of tune + draws iterations over one
        # copy of the NUTS kernel (numpyro's kernel adapts while its counter is below
        # ``tune``), so XLA compiles the kernel once, not once per phase; the draws go
        # into buffers carried by the loop
        buffers = jax.tree_util.tree_map(
            lambda a: jnp.zeros((draws, *a.shape), a.dtype), jax.eval_shape(record, state))

        def step(i, carry):
            s, base, out = carry
            # after the warm-up each draw's step size is the adapted one (``base``,
            # kept at the first draw) times uniform(1 - STEP_JITTER, 1 + STEP_JITTER):
            # on a whitened (isotropic) posterior a fixed step makes NUTS's
            # trajectories resonate (x -> -x, x^2 unchanged), which slows the mixing
            # of the tails (folded R-hat, tail ESS)
            sampling = i >= tune
            base = jnp.where(i == tune, s.adapt_state.step_size, base)
            k = jnp.maximum(i - tune, 0)
            scale = jax.random.uniform(step_keys[k], (), dtype=base.dtype,
                                       minval=1.0 - STEP_JITTER, maxval=1.0 + STEP_JITTER)
            size = jnp.where(sampling, base * scale, s.adapt_state.step_size)
            s = s._replace(adapt_state=s.adapt_state._replace(step_size=size))
            s = sample_kernel(s, model_args=args)
            out = jax.lax.cond(
                sampling,
                lambda o: jax.tree_util.tree_map(
                    lambda b, v: jax.lax.dynamic_update_index_in_dim(b, v, k, 0),
                    o, record(s)),
                lambda o: o, out)
            return s, base, out

        base0 = state.adapt_state.step_size
        _, _, out = jax.lax.fori_loop(0, tune + draws, step, (state, base0, buffers))
        return out

    if chain_method == "parallel":  # one chain per device (checked by the caller)
        run = jax.pmap(one_chain, in_axes=(0, None, None, None))
    elif chain_method == "vectorized":
        run = jax.jit(jax.vmap(one_chain, in_axes=(0, None, None, None)))
    else:  # "sequential": one chain after the other, in one program
        run = jax.jit(lambda keys, center, W, data: jax.lax.map(
            lambda key: one_chain(key, center, W, data), keys))
    return run


def _unraveller(shapes: list[tuple[int, ...]]):
    """flat (D,) -> tuple of arrays of ``shapes`` (row-major, in order)."""
    sizes = [int(np.prod(s)) for s in shapes]
    cuts = np.cumsum([0, *sizes])

    def unravel(flat):
        return tuple(flat[a:b].reshape(s)
                     for a, b, s in zip(cuts[:-1], cuts[1:], shapes, strict=True))

    return unravel


def _build_laplace(lifted, jax_logp, starts, *, given_start: bool):
    """The programs the search for the mode needs: ``(start, batched, start_host)``.

    ``batched(shapes)`` returns the jitted ``(X (B, D), data) -> (log densities (B,),
    gradients (B, D))`` over a batch of points, the value variables (of ``shapes``)
    flattened; ``start`` is the jitted ``data -> PyMC's initial point``
    (unconstrained), or None when the caller gives the start (``given_start``) or
    PyTensor's JAX backend cannot trace it: then ``start_host`` computes it on the
    host (else it is None)."""
    import jax

    logp_fn = jax_logp()
    start_fn, start_host = (None, None) if given_start else _start_function(lifted, starts)
    compiled: dict = {}

    def batched(shapes):
        key = tuple(shapes)
        if key not in compiled:  # one per structure: the shapes follow from it
            unravel = _unraveller(list(shapes))
            vg = jax.value_and_grad(lambda x, data: logp_fn(*unravel(x), *data)[0])
            compiled[key] = jax.jit(jax.vmap(vg, in_axes=(0, None)))
        return compiled[key]

    start = None if start_fn is None else jax.jit(lambda data: start_fn(*data))
    return start, batched, start_host


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
           init: dict | None = None, jitter: float = JITTER):
    """NUTS draws of the model variables ``names`` (constrained) and NUTS statistics.

    ``chain_method``: one of :data:`CHAIN_METHODS` (module docstring). ``init`` (value
    variable name -> unconstrained value) replaces PyMC's initial point as where the
    search for the mode starts (:func:`laplace`); ``jitter`` is the half-width of the
    uniform jitter of each chain's start around the mode, in posterior standard
    deviations (whitened coordinates). JAX's global settings are left as they were
    (:func:`bayesgen.inference.jax_scope.scope`).

    Returns
    -------
    draws : dict
        ``name -> ndarray (chains, draws, *shape)``.
    sample_stats : dict
        ``diverging``, ``n_steps``, ``tree_depth``, ``lp`` (log density, unconstrained,
        Jacobian included), ``energy``, ``step_size`` (in the whitened coordinates),
        ``acceptance_rate``, each (chains, draws).
    """
    with jax_scope.scope():
        check_chain_method(chain_method, chains)
        return _sample(model, names, chains=chains, tune=tune, draws=draws,
                       target_accept=target_accept, seed=seed, chain_method=chain_method,
                       init=init, jitter=jitter)


def _lifted(model, names: list[str]):
    """The model's log density, the variables ``names`` and PyMC's initial point, with
    their float constants lifted (:func:`bayesgen.inference.graph_inputs.lift_constants`):
    ``(value_vars, logp, targets, starts, lifted, values, structure)``."""
    from bayesgen.inference.graph_inputs import lift_constants

    with warnings.catch_warnings():
        # the C backend's missing BLAS does not matter here: the program runs in JAX
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        logp = model.logp()
        targets = model.replace_rvs_by_values([model[name] for name in names])
        starts = _start_expressions(model)
        value_vars, outs, lifted, values, structure = lift_constants(
            list(model.value_vars), [logp, *targets, *starts]
        )
    n_targets = len(targets)
    return (value_vars, outs[0], outs[1:1 + n_targets], outs[1 + n_targets:], lifted,
            values, structure)


def _laplace(model, lifted_graph, init: dict | None, jax_logp=None):
    """The start (arrays in ``model.value_vars`` order) and the mode and whitening
    (:class:`bayesgen.inference.laplace.Laplace`) of ``model``'s log density."""
    from bayesgen.inference.laplace import Laplace, newton_mode

    value_vars, logp, _, starts, lifted, values, structure = lifted_graph
    if jax_logp is None:
        jax_logp = _once(lambda: _jaxify(value_vars + lifted, [logp]))
    given_start = init is not None
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        start_fn, batched, start_host = _program(
            ("laplace", structure, given_start),
            lambda: _build_laplace(lifted, jax_logp, starts,
                                   given_start=given_start))
    import jax

    data = tuple(jax.device_put(v) for v in values)  # moved once for every call
    if given_start:
        given = [init[v.name] for v in model.value_vars]  # value_vars keep this order
    elif start_fn is not None:
        given = start_fn(data)
    else:
        given = start_host(*values)
    start = [np.asarray(v, dtype=z.dtype) for v, z in zip(given, value_vars, strict=True)]
    x0 = np.concatenate([v.ravel() for v in start])
    if x0.size > MAX_WHITENED:  # no dense Hessian: the start, unwhitened (W = 1)
        return start, Laplace(x0, x0, np.ones(()), False, 0)
    program = batched(tuple(v.shape for v in start))
    return start, newton_mode(lambda X: program(X, data), x0)


def laplace(model, init: dict | None = None) -> dict:
    """The posterior mode of ``model`` in the unconstrained space and the Laplace
    covariance there: what the NUTS chains start from and are whitened with.

    Newton's method on the log density (unconstrained, Jacobian included) from
    ``init`` (value variable name -> unconstrained value) or PyMC's initial point
    (:func:`bayesgen.inference.laplace.newton_mode`; the log density at a batch of
    points compiled once per model structure and shape). Above
    :data:`MAX_WHITENED` unconstrained dimensions no Hessian is formed: the mode is
    the start and the covariance the identity.

    Returns
    -------
    dict
        ``start`` and ``mode``: value variable name -> unconstrained value (where the
        search started, where it ended); ``cov`` (D, D): the inverse of the negative
        Hessian of the log density at the mode (eigenvalues made positive), over the
        value variables flattened in ``model.value_vars`` order (D their total size);
        ``ok``: the mode is finite and the Hessian there negative definite;
        ``iterations``: Newton steps taken.
    """
    with jax_scope.scope():
        start, result = _laplace(model, _lifted(model, []), init)
    names = [v.name for v in model.value_vars]
    cuts = np.cumsum([0, *(s.size for s in start)])
    return {
        "start": dict(zip(names, start, strict=True)),
        "mode": {n: result.mode[a:b].reshape(s.shape)
                 for n, a, b, s in zip(names, cuts[:-1], cuts[1:], start, strict=True)},
        "cov": result.cov,
        "ok": result.ok,
        "iterations": result.iterations,
    }


def _sample(model, names: list[str], *, chains: int, tune: int, draws: int,
            target_accept: float, seed: int | None, chain_method: str,
            init: dict | None, jitter: float):
    import jax

    graph = _lifted(model, names)
    value_vars, logp, targets, _, lifted, values, structure = graph
    jax_logp = _once(lambda: _jaxify(value_vars + lifted, [logp]))
    start, result = _laplace(model, graph, init, jax_logp)
    center, W = result.mode, result.W
    whitened = W.ndim == 2  # a structural property (the number of dimensions)
    if not whitened and init is not None:
        jitter = min(jitter, GIVEN_START_JITTER)  # unwhitened: near the caller's mode
    shapes = [tuple(np.shape(s)) for s in start]
    key = (structure, chains, tune, draws, float(target_accept), chain_method,
           float(jitter), whitened)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        program = _program(key, lambda: _build_program(
            value_vars, lifted, jax_logp, targets, shapes, chains=chains, tune=tune,
            draws=draws, target_accept=float(target_accept), chain_method=chain_method,
            jitter=float(jitter),
        ))
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    keys = jax.random.split(jax.random.PRNGKey(seed), chains)
    outs, stats = program(keys, center, W, tuple(values))
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
