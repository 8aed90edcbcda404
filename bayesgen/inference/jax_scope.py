"""bayesgen's JAX work, leaving the user's JAX as it found it.

PyTensor's JAX backend sets JAX's global ``jax_enable_x64`` and PyMC's JAX module sets
``XLA_FLAGS`` when first imported. :func:`imports` imports both once and puts back what
they changed (``jax.config.update`` only to restore the user's value), and
:func:`scope` runs bayesgen's JAX work in float64 through the thread-local
``jax.enable_x64(True)``. A fit leaves ``jax.config.values`` and ``os.environ`` as it
found them and clears no cache (bayesgen's programs live in its own bounded cache,
:data:`bayesgen.inference.jax_nuts.MAX_PROGRAMS`). bayesgen turns on no persistent
compilation cache; JAX's own (``JAX_COMPILATION_CACHE_DIR``) stores the NUTS programs too.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

_LOCK = threading.Lock()
_IMPORTED = False

#: JAX settings that the imports of :func:`imports` are known to change
_SETTINGS = ("jax_enable_x64",)


def imports() -> None:
    """Import PyTensor's JAX backend and PyMC's JAX registrations (once), undoing what
    their import changes outside them (``XLA_FLAGS``, ``jax_enable_x64``).

    The work runs in a thread of its own, where no thread-local JAX setting (a user's
    ``with jax.enable_x64(...)``) hides the global values it puts back.
    """
    global _IMPORTED
    if _IMPORTED:
        return
    with _LOCK:
        if _IMPORTED:
            return
        errors: list[BaseException] = []

        def work() -> None:
            try:
                _import_and_restore()
            except BaseException as err:  # re-raised in the caller's thread
                errors.append(err)

        thread = threading.Thread(target=work, name="bayesgen-jax-imports")
        thread.start()
        thread.join()
        if errors:
            raise errors[0]
        _IMPORTED = True


def _import_and_restore() -> None:
    import jax

    before = {name: jax.config.values[name] for name in _SETTINGS}
    flags = os.environ.get("XLA_FLAGS")
    try:
        import pymc.sampling.jax  # noqa: F401  (JAX versions of PyMC's Assert ops)
        import pytensor.link.jax.dispatch  # noqa: F401
    finally:
        if flags is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = flags
        for name, value in before.items():
            if jax.config.values[name] != value:
                jax.config.update(name, value)  # the user's value, back


@contextlib.contextmanager
def scope() -> Iterator[None]:
    """Run the block's JAX work (tracing, compiling, running) in float64, a setting of
    this thread only (``jax.enable_x64(True)``); the imports of :func:`imports` done."""
    imports()
    import jax

    with jax.enable_x64(True):
        yield
