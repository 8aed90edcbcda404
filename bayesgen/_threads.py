"""BLAS threads for loops of small matrix products.

A threaded BLAS call synchronises its threads; for a product of a few megaflops that
costs more than it saves, and on a machine whose cores are busy with other processes
a descheduled BLAS thread stalls every call (measured here: the blocked class
statistics of :mod:`bayesgen.families._class_moments`, 150 products of 2048 x 30
blocks, took 2.2 s of CPU with OpenBLAS's two threads and 0.06 s with one while other
processes kept the load average at 10). Loops of small products therefore run with one
BLAS thread; single large products keep the user's setting.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

_CONTROLLER: Any = None


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
