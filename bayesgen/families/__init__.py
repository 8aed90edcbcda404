"""Likelihood families: one small module (or subpackage) per p(x | y = k).

A family is a plain class whose instance holds its prior hyper-parameters as the user
gave them (data-aware defaults are resolved in ``prior``). Everything outside this
package (estimators, conjugate posterior, NUTS, ``idata_``, exact LOO, evidence, far
rows, predictive checks, plots) reaches a family only through the typed interface of
:mod:`bayesgen.families.protocol`: the hooks of :class:`~bayesgen.families.protocol.Family`
(statistics, prior, MLE/MAP, conjugate posterior and draws, log-likelihood and
predictive, evidence, leave-one-out downdates, sampling, the PyMC pieces) and the
optional abilities each family declares in its
:class:`~bayesgen.families.protocol.Capabilities` (missing entries, sparse input, the
affine frame of real-valued columns, far rows, data augmentation, ...), never its name.

Adding a family is writing one module that keeps the protocol and registering its class
once in :data:`REGISTRY`; ``tests/test_family_protocol.py`` then checks its hooks and
exercises every capability it declares. ``MixedFamily`` (:mod:`bayesgen.families.mixed`)
is the composite of other families on column groups.

Shared pieces: :mod:`.gaussian_stats` and :mod:`.class_moments` (centred statistics),
:mod:`.dirichlet` (Beta/Dirichlet/Gamma helpers), :mod:`.masked` (missing entries of the
factorised families), :mod:`.far` (frame helpers and far rows), :mod:`.pymc_gaps`
(missing entries in PyMC models), :mod:`.semi_hooks` (the defaults of the
hooks of fits with unlabeled rows, :class:`.semi_hooks.UnlabeledHooks`).

May import: :mod:`bayesgen.data`, :mod:`bayesgen.utils`, :mod:`bayesgen.exceptions`.
"""

from __future__ import annotations

from importlib import import_module

from bayesgen.families.protocol import Family

#: registry name -> (module, class) of every family, imported on first use
REGISTRY: dict[str, tuple[str, str]] = {
    "gaussian": ("bayesgen.families.gaussian", "GaussianFamily"),
    "mvn": ("bayesgen.families.mvn.family", "MVNFamily"),
    "mvn_diagonal": ("bayesgen.families.mvn.diagonal", "DiagonalMVNFamily"),
    "mvn_choice": ("bayesgen.families.mvn.choice", "StructureChoiceFamily"),
    "bernoulli": ("bayesgen.families.bernoulli", "BernoulliFamily"),
    "multinomial": ("bayesgen.families.multinomial.family", "MultinomialFamily"),
    "categorical": ("bayesgen.families.categorical.family", "CategoricalFamily"),
    "poisson": ("bayesgen.families.poisson", "PoissonFamily"),
    "exponential": ("bayesgen.families.exponential", "ExponentialFamily"),
    "kernel": ("bayesgen.families.kernel.family", "KernelFamily"),
}


def get_family(name: str) -> type[Family]:
    """The family class registered under ``name``; ``ValueError`` for an unknown name."""
    if name not in REGISTRY:
        raise ValueError(f"Unknown family {name!r}; choose one of {sorted(REGISTRY)}.")
    module, cls = REGISTRY[name]
    return getattr(import_module(module), cls)


def family_names() -> list[str]:
    """Names of all registered families."""
    return list(REGISTRY)
