"""Import ArviZ and PyMC on first use, without ArviZ's daily notice.

The estimators import ArviZ and PyMC (which imports ArviZ) only when a method needs
them, so that ``import bayesgen`` stays light. ArviZ 0.2x warns once a day, on its
first import, that ArviZ 1.0 will change its API; bayesgen pins ``arviz<1`` and keeps
its own API stable, so that notice says nothing to bayesgen's users. These helpers
silence that one message, and only during the first import: later calls return the
module from :data:`sys.modules` without touching the warning filters (which are
process-wide, so they are left alone while other threads may run).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType

#: ArviZ's notice (its text starts with a newline)
_ARVIZ_NOTICE = r"\s*ArviZ is undergoing a major refactor"


def _import_quietly(name: str) -> ModuleType:
    module = sys.modules.get(name)
    if module is not None:
        return module
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_ARVIZ_NOTICE, category=FutureWarning)
        return importlib.import_module(name)


def import_arviz() -> ModuleType:
    """Return the ``arviz`` module, importing it without ArviZ's daily notice."""
    return _import_quietly("arviz")


def import_pymc() -> ModuleType:
    """Return the ``pymc`` module (which imports ArviZ), without ArviZ's daily notice."""
    return _import_quietly("pymc")
