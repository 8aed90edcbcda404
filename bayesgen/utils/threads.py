"""BLAS threads for loops of small matrix products; a shared pool for passes over
large arrays.

A threaded BLAS call synchronises its threads; for a product of a few megaflops that
costs more than it saves, and on a machine whose cores are busy with other processes
a descheduled BLAS thread stalls every call (measured here: the blocked class
statistics of :mod:`bayesgen.families.class_moments`, 150 products of 2048 x 30
blocks, took 2.2 s of CPU with OpenBLAS's two threads and 0.06 s with one while other
processes kept the load average at 10). Loops of small products therefore run with one
BLAS thread; single large products keep the user's setting.

Passes over a large array that NumPy runs without the GIL (reductions, gathers and
small products) are instead split between the cores by :func:`reduce_rows` and
:func:`map_tasks`: independent tasks with no barrier between them, so a busy core
delays only its own share.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

_CONTROLLER: Any = None
_POOL: ThreadPoolExecutor | None = None
#: arrays smaller than this (entries) are reduced in one call: threads cost ~50 us
PARALLEL_MIN_SIZE = 2**21


def one_blas_thread() -> AbstractContextManager:
    """A context in which the BLAS libraries loaded by NumPy/SciPy use one thread
    (threadpoolctl; the previous setting is restored on exit). The libraries are
    looked up once per process."""
    global _CONTROLLER
    if _CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER = ThreadpoolController()
        except Exception:  # no threadpoolctl, or an unreadable library: change nothing
            _CONTROLLER = False
    if _CONTROLLER is False:
        return nullcontext()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def no_spin() -> AbstractContextManager:
    """One BLAS thread for a whole point fit or prediction (:func:`one_blas_thread`).

    After a threaded call OpenBLAS's worker threads busy-wait for more work (about
    0.1 s), so the many small (d, d) products of a fit (priors, Cholesky factors,
    discriminants) kept a second core spinning, which took it from the row blocks that
    :func:`map_tasks` runs there: measured at 300,000 x 30, LDA fit + predict_proba
    took 140 ms with OpenBLAS's two threads and 80 ms with one. The parallel passes of
    bayesgen's own pool replace BLAS threads on these paths.
    """
    return one_blas_thread()


def workers() -> int:
    """Threads of the shared pool: the cores, at most 8."""
    return min(os.cpu_count() or 1, 8)


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="bayesgen")
    return _POOL


def _forget_pool() -> None:
    """In a forked child the pool's threads do not exist: start a new pool on demand
    (else the child's first parallel pass would wait for them forever)."""
    global _POOL
    _POOL = None


os.register_at_fork(after_in_child=_forget_pool)


def map_tasks(fn: Callable[[Any], Any], items: Iterable[Any], *,
              parallel: bool = True) -> list:
    """``[fn(item) for item in items]``, over the shared pool when ``parallel`` and
    there are several cores (``fn`` must be thread-safe; exceptions propagate)."""
    items = list(items)
    if not parallel or workers() < 2 or len(items) < 2:
        return [fn(item) for item in items]
    return list(_pool().map(fn, items))


def reduce_rows(ufunc: np.ufunc, X: np.ndarray):
    """``ufunc.reduce(X, axis=None)`` for a 2-d X, large ones split by rows over the
    cores (NumPy reduces without the GIL): maximum and minimum are exact, sums are
    summed in another order (use them only as finiteness tests)."""
    if X.size < PARALLEL_MIN_SIZE or X.ndim != 2 or workers() < 2:
        return ufunc.reduce(X, axis=None)
    bounds = np.linspace(0, X.shape[0], workers() + 1).astype(int)
    parts = map_tasks(lambda i: ufunc.reduce(X[bounds[i] : bounds[i + 1]], axis=None),
                      range(workers()))
    return ufunc.reduce(np.asarray(parts), axis=None)


#: entries of X per block of :func:`extremes`: 1 MB, so that the block's second
#: reduction reads it from the core's cache
EXTREMES_BLOCK = 2**17


def extremes(X: np.ndarray, *, skip_nan: bool = False) -> tuple[float, float]:
    """``(max, min)`` of all entries of X (1-d or 2-d, non-empty) in one pass over memory.

    Both reductions run on each cached block of rows in turn (two reductions over X
    would read it from memory twice), and large X is split by rows over the cores.
    NaN propagates (a NaN anywhere gives NaN for both), unless ``skip_nan``: then NaN
    entries are ignored (``fmax``/``fmin``), and an X of only NaN gives (-inf, inf).
    Exact: the same values as ``X.max()`` and ``X.min()`` (or ``nanmax``/``nanmin``).
    """
    high_of, low_of = (np.fmax, np.fmin) if skip_nan else (np.maximum, np.minimum)
    rows = max(1, EXTREMES_BLOCK // max(1, X.size // max(1, X.shape[0])))
    n_chunks = workers() if X.size >= PARALLEL_MIN_SIZE and X.ndim <= 2 else 1
    bounds = np.linspace(0, X.shape[0], n_chunks + 1).astype(int)

    def chunk(i: int) -> tuple[np.float64, np.float64]:
        high, low = np.float64(-np.inf), np.float64(np.inf)
        for start in range(bounds[i], bounds[i + 1], rows):
            block = X[start : min(start + rows, bounds[i + 1])]
            high = high_of(high, high_of.reduce(block, axis=None))
            low = low_of(low, low_of.reduce(block, axis=None))
        return high, low

    parts = map_tasks(chunk, range(n_chunks))
    high = high_of.reduce(np.asarray([h for h, _ in parts]))
    low = low_of.reduce(np.asarray([lo for _, lo in parts]))
    return float(high), float(low)


def over_row_blocks(fn: Callable[..., None], n_rows: int, *, size: int,
                    block: int = 8192, scratch: Callable[[], Any] | None = None) -> None:
    """Call ``fn(start, stop)`` for consecutive row ranges of at most ``block`` rows
    covering ``range(n_rows)``, over the cores when the array has ``size`` >=
    :data:`PARALLEL_MIN_SIZE` entries (each thread takes one run of consecutive
    ranges). ``fn`` writes its own rows only (in-place NumPy work on row slices of
    (n, K) arrays fits the cache and releases the GIL). ``scratch``: a factory of a
    work buffer, made once per thread and passed as ``fn(start, stop, buffer)``."""
    starts = list(range(0, n_rows, block))
    n_chunks = workers() if size >= PARALLEL_MIN_SIZE else 1
    edges = np.linspace(0, len(starts), n_chunks + 1).astype(int)

    def run(c: int) -> None:
        extra = () if scratch is None else (scratch(),)
        for start in starts[edges[c] : edges[c + 1]]:
            fn(start, min(start + block, n_rows), *extra)

    map_tasks(run, range(n_chunks))
