"""Threads: the estimators' ``n_jobs``, and one BLAS thread for point fits and predictions.

``n_jobs`` (scikit-learn's semantics, documented on the estimators) splits a pass over
an array of at least :data:`PARALLEL_MIN_SIZE` entries by rows. An estimator whose
``n_jobs`` is not None runs inside ``joblib.parallel_config(n_jobs=n_jobs)``
(:func:`jobs`) and the passes read the number of threads from there (:func:`n_threads`).
Each pass starts its own ``ThreadPoolExecutor`` and shuts it down before returning, so
no thread outlives the call (safe to fork); NumPy releases the GIL in these passes.

Point fits and predictions run with one BLAS thread (:func:`no_spin`, threadpoolctl,
the user's setting restored on return; :func:`one_blas_thread` for loops of small
products): threaded BLAS on (d, d) algebra costs more than it saves, and busy-waiting
threads stall on a loaded machine (``benchmarks/bench_point_split.py``, 300,000 x 30,
five classes, load 14 on two cores: QDA fit 181 ms of CPU without, 97 with).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

#: arrays with fewer entries than this are processed by one thread (starting threads
#: and splitting the work cost more than they save below about 2 million entries)
PARALLEL_MIN_SIZE = 2**21

_CONTROLLER: Any = None


def jobs(n_jobs: int | None) -> AbstractContextManager:
    """The context of an estimator's fit or prediction: ``joblib.parallel_config(
    n_jobs=n_jobs)``, or no change when ``n_jobs`` is None (then the caller's own
    joblib context, if any, applies)."""
    if n_jobs is None:
        return nullcontext()
    from joblib import parallel_config

    return parallel_config(n_jobs=n_jobs)


def n_threads(size: int) -> int:
    """Threads for a pass over ``size`` entries: 1 below :data:`PARALLEL_MIN_SIZE`,
    else ``joblib.effective_n_jobs()`` in the current context (None = 1, -1 = all
    cores)."""
    if size < PARALLEL_MIN_SIZE:
        return 1
    from joblib import effective_n_jobs

    return max(1, int(effective_n_jobs(None)))


def one_blas_thread() -> AbstractContextManager:
    """A context in which the BLAS libraries loaded by NumPy/SciPy use one thread
    (threadpoolctl; the previous setting is restored on exit). The libraries are looked
    up once per process (one :class:`threadpoolctl.ThreadpoolController`: a new lookup
    costs about 1 ms, as much as the small products it would guard)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def no_spin() -> AbstractContextManager:
    """One BLAS thread for a whole point fit or prediction (:func:`one_blas_thread`;
    see the module docstring for why and what it measured)."""
    return one_blas_thread()


def map_threads(fn: Callable[[int], Any], count: int) -> list:
    """``[fn(i) for i in range(count)]``, on ``count`` threads of a pool of this call
    when ``count`` > 1 (BLAS limited to one thread meanwhile); ``fn`` must be
    thread-safe, and its exceptions propagate."""
    if count < 2:
        return [fn(i) for i in range(count)]
    with one_blas_thread(), ThreadPoolExecutor(max_workers=count,
                                               thread_name_prefix="bayesgen") as pool:
        return list(pool.map(fn, range(count)))


def over_row_blocks(fn: Callable[..., None], n_rows: int, *, size: int,
                    block: int = 8192, scratch: Callable[[], Any] | None = None) -> None:
    """Call ``fn(start, stop)`` for consecutive row ranges of at most ``block`` rows
    covering ``range(n_rows)``, on :func:`n_threads` ``(size)`` threads, each taking one
    run of consecutive ranges (:func:`map_threads`). ``fn`` writes its own rows only
    (in-place NumPy work on row slices). ``scratch``: a factory of a work buffer, made
    once per thread and passed as ``fn(start, stop, buffer)``."""
    starts = list(range(0, n_rows, block))
    count = max(1, min(n_threads(size), len(starts)))
    edges = np.linspace(0, len(starts), count + 1).astype(int)

    def run(c: int) -> None:
        extra = () if scratch is None else (scratch(),)
        for start in starts[edges[c] : edges[c + 1]]:
            fn(start, min(start + block, n_rows), *extra)

    map_threads(run, count)
