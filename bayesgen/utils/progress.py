"""Whether to show samplers' progress bars: ``progressbar=True`` / ``False`` / ``"auto"``.

``"auto"`` (the default) shows them only where a person watches: an interactive
terminal (standard error is a TTY) or a Jupyter notebook (an IPython kernel). With
output redirected to a file or a pipe (CI logs, batch jobs) bars would only flood the
log, so none are drawn; ``True`` draws them anyway, ``False`` never does.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: the values ``progressbar`` accepts besides booleans
AUTO = "auto"


def in_notebook() -> bool:
    """True inside a Jupyter/IPython kernel (without importing IPython if not loaded)."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    if shell is None:
        return False
    return getattr(shell, "kernel", None) is not None or type(shell).__name__ == (
        "ZMQInteractiveShell"
    )


def stderr_is_terminal() -> bool:
    """True when ``sys.stderr`` (where progress bars are drawn) is a TTY."""
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (ValueError, OSError):  # a closed or detached stream
        return False


def show_progress(progressbar: Any) -> bool:
    """The estimator's ``progressbar`` as a boolean: ``"auto"`` is True only in an
    interactive terminal or a notebook (:func:`stderr_is_terminal`, :func:`in_notebook`);
    True and False are themselves."""
    if isinstance(progressbar, str):
        if progressbar != AUTO:
            raise ValueError(f"progressbar must be True, False or 'auto'; got {progressbar!r}.")
        return stderr_is_terminal() or in_notebook()
    return bool(progressbar)


@contextmanager
def quiet_pymc_log(show: bool) -> Iterator[None]:
    """While ``pm.sample`` runs without bars (``show`` False), hide PyMC's INFO lines
    ("Initializing NUTS ...", "Sequential sampling ...", "Sampling ... took N seconds"):
    they are progress reports too. Its warnings still pass; with ``show`` True nothing
    changes."""
    if show:
        yield
        return
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)
