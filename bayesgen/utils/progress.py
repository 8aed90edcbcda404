"""Whether to show progress bars (``progressbar=True`` / ``False`` / ``"auto"``), and a
plain one-line bar for long loops (:class:`ProgressBar`).

``"auto"`` (the default) shows them only where a person watches: an interactive
terminal (standard error is a TTY) or a Jupyter notebook (an IPython kernel). With
output redirected to a file or a pipe (CI logs, batch jobs) bars would only flood the
log, so none are drawn; ``True`` draws them anyway, ``False`` never does. The samplers
pass the decision to PyMC's bars; :class:`ProgressBar` draws its own for loops of known
length, such as the command line demo's fits.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TextIO

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
def quiet_logger(name: str) -> Iterator[None]:
    """Raise logger ``name`` to at least WARNING for the block: PyMC reports progress at
    INFO ("Sampling: [...]", "Initializing NUTS ..."); its warnings still pass."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def quiet_pymc_log(show: bool) -> AbstractContextManager:
    """While ``pm.sample`` runs without bars (``show`` False), hide PyMC's INFO lines
    (:func:`quiet_logger`): they are progress reports too; with ``show`` True nothing
    changes."""
    return nullcontext() if show else quiet_logger("pymc")


class ProgressBar:
    """A one-line text progress bar on standard error for a loop of ``total`` steps.

    The line reads ``[#######.................]  7/54  12 s  wine QDA conjugate``: the
    steps done, the seconds since the bar started and the label of the step under way.
    While ``show`` is true, a background thread redraws the line every ``tick`` seconds,
    so the clock runs during a long step (a first NUTS fit compiling its program); the
    line is rewritten in place with a carriage return and cleared by :meth:`close`, so
    what the program prints afterwards starts on a clean line. With ``show`` false
    nothing is written and no thread starts.

    Parameters
    ----------
    total : int
        Number of steps (at least 1).
    show : bool or "auto", default="auto"
        As the estimators' ``progressbar`` (:func:`show_progress`).
    width : int, default=24
        Characters of the bar between the brackets.
    stream : text stream, optional
        Where to draw (default: ``sys.stderr`` at construction).
    tick : float, default=0.5
        Seconds between redraws of the running clock.

    Examples
    --------
    >>> with ProgressBar(3, show=False) as bar:
    ...     for name in ("a", "b", "c"):
    ...         bar.start(name)  # the step under way
    ...         bar.advance()    # one step done
    """

    def __init__(self, total: int, *, show: Any = AUTO, width: int = 24,
                 stream: TextIO | None = None, tick: float = 0.5) -> None:
        if isinstance(total, bool) or not isinstance(total, int) or total < 1:
            raise ValueError(f"total must be a positive integer; got {total!r}.")
        self.total = total
        self.show = show_progress(show)
        self.width = int(width)
        self.stream = sys.stderr if stream is None else stream
        self.tick = float(tick)
        self.done = 0
        self.label = ""
        self._t0 = time.perf_counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._shown = 0  # characters of the line last drawn
        self._thread: threading.Thread | None = None
        if self.show:
            self._draw()
            self._thread = threading.Thread(target=self._run, name="bayesgen-progress",
                                            daemon=True)
            self._thread.start()

    def line(self) -> str:
        """The bar's current text (without the carriage return)."""
        filled = self.width * min(self.done, self.total) // self.total
        seconds = time.perf_counter() - self._t0
        count = f"{self.done:>{len(str(self.total))}}/{self.total}"
        return (f"[{'#' * filled}{'.' * (self.width - filled)}] {count}  "
                f"{seconds:4.0f} s  {self.label}").rstrip()

    def start(self, label: str) -> None:
        """Name the step now under way (shown at the end of the line)."""
        self.label = str(label)
        self._draw()

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more steps done."""
        self.done = min(self.done + int(steps), self.total)
        self._draw()

    def close(self) -> None:
        """Stop the clock and erase the line (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.show and self._shown:
            with self._lock:
                self.stream.write("\r" + " " * self._shown + "\r")
                self.stream.flush()
                self._shown = 0

    def _draw(self) -> None:
        if not self.show or self._stop.is_set():
            return
        with self._lock:
            text = self.line()
            pad = max(self._shown - len(text), 0)
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
            self._shown = len(text)

    def _run(self) -> None:
        while not self._stop.wait(self.tick):
            self._draw()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
