"""Renamed parameters: the old name accepted for one release, with a ``FutureWarning``.

As scikit-learn: the old name stays in the signature with the default ``"deprecated"``
and ``fit`` (or the method) resolves it (:func:`renamed`); both names set is a
``ValueError``. Renamed in 0.2, removed in 0.3: ``predict_set``'s ``alpha`` (now
``confidence_level = 1 - alpha``), LDA's and QDA's ``cov_prior`` (now ``cov_target``)
and ``covariance_prior`` (now ``cov_prior_form``).
"""

from __future__ import annotations

from typing import Any

from bayesgen.exceptions import warn

#: default of a deprecated parameter: "not given" (scikit-learn's convention)
DEPRECATED = "deprecated"
#: the release that renamed the parameters, and the one that removes the old names
RENAMED_IN, REMOVED_IN = "0.2", "0.3"


class DefaultFloat(float):
    """A float default told apart (by identity) from the same value given by the caller,
    so that a deprecated name together with an explicit new value is an error even when
    that value equals the default."""


#: ``predict_set``'s default ``confidence_level``
DEFAULT_CONFIDENCE_LEVEL = DefaultFloat(0.9)


def given(value: Any) -> bool:
    """Whether a deprecated parameter was set (its value is not the sentinel)."""
    return not (isinstance(value, str) and value == DEPRECATED)


def renamed(who: str, old: str, old_value: Any, new: str, new_value: Any,
            new_is_default: bool, *, warn_now: bool = True, use: str | None = None) -> Any:
    """The value in force of a renamed parameter.

    Parameters
    ----------
    who : str
        The estimator or function, for the messages (e.g. ``"QDA"``).
    old, new : str
        The deprecated and the new name.
    old_value, new_value : Any
        Their values; ``old_value`` is :data:`DEPRECATED` when not given.
    new_is_default : bool
        Whether ``new_value`` is the new parameter's default (not set by the caller).
    warn_now : bool, default=True
        Emit the ``FutureWarning`` (False where the value is only read again, e.g.
        scikit-learn's tags, after ``fit`` has warned).
    use : str, optional
        How to write the old value with the new name, when it is not the same value
        (e.g. ``"confidence_level=1 - alpha"``); default ``"{new}=..."``.

    Returns
    -------
    Any
        ``new_value`` when the old name is not given, else ``old_value`` (the caller
        converts it when the new parameter means something else, e.g. ``1 - alpha``).

    Raises
    ------
    ValueError
        Both names given.
    """
    if not given(old_value):
        return new_value
    if not new_is_default:
        raise ValueError(f"{who}: {old}= is the deprecated name of {new}=; both are given "
                         f"({old}={old_value!r}, {new}={new_value!r}): give {new}= only.")
    if warn_now:
        warn(f"{who}: {old}= is deprecated since bayesgen {RENAMED_IN} and will be removed "
             f"in {REMOVED_IN}; use {use or f'{new}={old_value!r}'} instead.", FutureWarning)
    return old_value
