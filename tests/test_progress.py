"""Progress bars only where a person watches: ``progressbar="auto"`` (default) draws
them in a terminal or a notebook and nowhere else; True forces them, False silences."""

import json
import os
import pty
import subprocess
import sys
import types
from pathlib import Path

import pytest
from sklearn.base import clone

import bayesgen as bg
from bayesgen.utils import progress

ROOT = Path(__file__).resolve().parents[1]

#: fit a small GaussianNB with NUTS once per case [progressbar, sampler, output file];
#: each case's stdout and stderr (file descriptors 1 and 2) go to its file, or stay
#: as they are when the file is null; warnings are ignored (only progress output is
#: under test), and "default" leaves progressbar unset
_CHILD = """
import json, os, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import bayesgen as bg
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 2)) + np.repeat([[0.0, 0.0], [2.0, 2.0]], 20, axis=0)
y = np.repeat([0, 1], 20)
for progressbar, sampler, path in json.loads(sys.argv[1]):
    kw = {} if progressbar == "default" else {"progressbar": progressbar}
    clf = bg.GaussianNB(method="mcmc", sampler=sampler, chains=1, draws=100, tune=100,
                        random_state=0, **kw)
    if path is None:
        clf.fit(X, y)
        continue
    sys.stdout.flush(); sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1); os.dup2(fd, 2)
    try:
        clf.fit(X, y)
    finally:
        sys.stdout.flush(); sys.stderr.flush()
        os.dup2(saved[0], 1); os.dup2(saved[1], 2); os.close(fd)
print("done")
"""


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def redirected(tmp_path_factory):
    """Output of each case with stdout/stderr going to a file (not a terminal)."""
    folder = tmp_path_factory.mktemp("progress")
    cases = {
        "default numpyro": ("default", "auto"),
        "default pymc": ("default", "pymc"),
        "auto pymc": ("auto", "pymc"),
        "False pymc": (False, "pymc"),
        "True pymc": (True, "pymc"),
    }
    args = [[pb, sampler, str(folder / f"{i}.txt")]
            for i, (pb, sampler) in enumerate(cases.values())]
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(args)], env=_env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return {name: (folder / f"{i}.txt").read_text() for i, name in enumerate(cases)}


@pytest.mark.slow
@pytest.mark.parametrize("case", ["default numpyro", "default pymc", "auto pymc",
                                  "False pymc"])
def test_nothing_printed_when_output_is_not_a_terminal(redirected, case):
    assert redirected[case] == ""


@pytest.mark.slow
def test_true_forces_the_bar_when_output_is_not_a_terminal(redirected):
    text = redirected["True pymc"]
    assert "Draw" in text and "Sampling" in text


@pytest.mark.slow
def test_auto_draws_the_bar_in_a_terminal():
    """stderr on a pseudo-terminal: the default shows PyMC's bar, False does not."""
    out = {}
    for progressbar in ("default", False):
        master, slave = pty.openpty()
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, json.dumps([[progressbar, "pymc", None]])],
            env=_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        assert child.wait(timeout=600) == 0
        out[progressbar] = b"".join(chunks).decode(errors="replace")
    assert "Draw" in out["default"]
    assert "Draw" not in out[False] and "Sampling" not in out[False]


def test_show_progress_values(monkeypatch):
    assert progress.show_progress(True) is True
    assert progress.show_progress(False) is False
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: False)
    monkeypatch.setattr(progress, "in_notebook", lambda: False)
    assert progress.show_progress("auto") is False
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    assert progress.show_progress("auto") is True
    monkeypatch.setattr(progress, "in_notebook", lambda: False)
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    assert progress.show_progress("auto") is True
    with pytest.raises(ValueError, match="progressbar"):
        progress.show_progress("yes")


def test_stderr_is_terminal_follows_the_stream(monkeypatch):
    class Stream:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            if self.tty is None:
                raise ValueError("I/O operation on closed file")
            return self.tty

    for tty, expected in ((True, True), (False, False), (None, False)):
        monkeypatch.setattr(sys, "stderr", Stream(tty))
        assert progress.stderr_is_terminal() is expected


def test_in_notebook_detects_an_ipython_kernel(monkeypatch):
    class ZMQInteractiveShell:  # the shell class of ipykernel
        kernel = object()

    class TerminalInteractiveShell:
        pass

    fake = types.ModuleType("IPython")
    monkeypatch.setitem(sys.modules, "IPython", fake)
    for shell, expected in ((ZMQInteractiveShell(), True),
                            (TerminalInteractiveShell(), False), (None, False)):
        fake.get_ipython = lambda shell=shell: shell
        assert progress.in_notebook() is expected
    monkeypatch.delitem(sys.modules, "IPython")
    assert progress.in_notebook() is False


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA, bg.GaussianNB, bg.BernoulliNB,
                                 bg.MultinomialNB, bg.CategoricalNB, bg.PoissonNB,
                                 bg.ExponentialNB, bg.MixedNB, bg.KernelNB])
def test_default_is_auto_and_clone_keeps_the_value(cls):
    assert cls().get_params()["progressbar"] == "auto"
    for value in ("auto", True, False):
        assert clone(cls(progressbar=value)).get_params()["progressbar"] == value


@pytest.mark.parametrize("value", ["yes", "AUTO", 2, None])
def test_bad_progressbar_is_rejected_at_fit(value):
    import numpy as np

    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    with pytest.raises(ValueError, match="progressbar"):
        bg.GaussianNB(progressbar=value).fit(X, [0, 0, 1, 1])


# ---------------------------------------------------------------- the demo's text bar
def test_progress_bar_draws_counts_labels_and_erases_itself():
    import io

    stream = io.StringIO()
    bar = progress.ProgressBar(4, show=True, width=8, stream=stream, tick=60)
    bar.start("first")
    bar.advance()
    bar.start("second")
    bar.advance(2)
    assert bar.line().startswith("[######..] 3/4") and bar.line().endswith("s  second")
    bar.close()
    text = stream.getvalue()
    frames = text.split("\r")[1:]
    assert frames[0].startswith("[........] 0/4")
    assert any(f.startswith("[##......] 1/4") and "first" in f for f in frames)
    assert any(f.startswith("[######..] 3/4") and "second" in f for f in frames)
    # the last frame is blank: the bar erased what it drew, and close() is idempotent
    assert text.endswith("\r") and frames[-2].strip() == "" and frames[-1] == ""
    bar.close()
    assert stream.getvalue() == text


def test_progress_bar_clock_runs_during_a_long_step():
    import io
    import time

    stream = io.StringIO()
    with progress.ProgressBar(2, show=True, stream=stream, tick=0.01) as bar:
        bar.start("long")
        time.sleep(0.2)
        assert bar._thread is not None and bar._thread.is_alive()
    assert bar._thread is None  # the clock's thread is joined on exit
    assert stream.getvalue().count("long") >= 5  # redrawn while nothing advanced


def test_progress_bar_silent_unless_shown(monkeypatch):
    import io

    stream = io.StringIO()
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: False)
    monkeypatch.setattr(progress, "in_notebook", lambda: False)
    for show in (False, "auto"):
        with progress.ProgressBar(3, show=show, stream=stream) as bar:
            bar.start("x")
            bar.advance(5)
        assert bar.done == 3 and bar._thread is None  # counted, capped, no thread
    assert stream.getvalue() == ""
    for total in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="total must be a positive integer"):
            progress.ProgressBar(total, show=False)
