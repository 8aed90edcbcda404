"""Shared test data: one small data set per classifier's support; the test session's
JAX compilation cache; the ``ci_step`` tests that ``.ci/run`` runs as steps of their own.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings

import bayesgen as bg

ROOT = Path(__file__).resolve().parent.parent

# --- JAX's persistent compilation cache, for the tests only ------------------------------
# Most of a cold test run is XLA compiling NUTS programs (seconds each). bayesgen keeps its
# compiled programs in memory per process (bayesgen.inference.jax_nuts), so every xdist
# worker, every test subprocess and every new run compiled them again. JAX's own
# persistent cache (on disk, keyed by the program's HLO, in which bayesgen's NUTS programs
# carry no data: the data are arguments) serves them across workers, subprocesses and runs.
# Set through JAX's environment variables, before JAX's first import here, so that the
# subprocesses the tests start (tests/test_hidden_state.py, notebooks, the demo) inherit
# it. The library itself never sets it (tests/test_hidden_state.py checks that a fit leaves
# jax.config as it found it, and that the package has no jax.config.update but one).
# Thresholds off: small programs are kept too (most of the tests' models are small).
# A value already in the environment wins.
JAX_CACHE_DIR = ROOT / ".jax_cache"  # ignored by git (.gitignore)
JAX_CACHE_SETTINGS = {
    "jax_compilation_cache_dir": str(JAX_CACHE_DIR),
    "jax_persistent_cache_min_compile_time_secs": 0.0,
    "jax_persistent_cache_min_entry_size_bytes": -1,
}
for _name, _value in JAX_CACHE_SETTINGS.items():
    os.environ.setdefault(_name.upper(), str(_value))
if "jax" in sys.modules:  # imported before this file (by a plugin): it read no variable
    import jax

    for _name, _value in JAX_CACHE_SETTINGS.items():
        jax.config.update(_name, type(_value)(os.environ[_name.upper()]))
# ----------------------------------------------------------------------------------------

# --- Hypothesis profiles (tests/test_properties.py) -------------------------------------
# "ci" (default): derandomised, the same examples every run, about 2 minutes for the
# property file on 2 cores; it reports a failing example as found (shrinking one can take
# Hypothesis up to 5 minutes per test). "long": ~10x the examples, random, and failures
# shrunk to minimal examples (kept in .hypothesis/ to replay):
#   HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties.py
# Neither runs the "explain" phase: its tracing slows these numeric tests many times.
settings.register_profile(
    "ci", max_examples=12, derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.too_slow], print_blob=True,
    phases=[Phase.explicit, Phase.generate],
)
settings.register_profile(
    "long", max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    print_blob=True, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
# ----------------------------------------------------------------------------------------

#: NUTS settings of the tests that need *a* posterior of every classifier on make_data's
#: data (tests/test_decide.py, tests/test_io_integrity.py), not an accurate one: bayesgen
#: compiles one NUTS program per model structure and (chains, tune, draws, ...), so tests
#: that share these settings share their programs through JAX's persistent cache
SMALL_NUTS = {"draws": 40, "tune": 50, "chains": 2}

MIXED_FAMILIES = [("gaussian", [0, 1]), ("bernoulli", [2, 3]), ("poisson", [4, 5])]

# name -> (factory of a default estimator, kind of data)
CLASSIFIERS = {
    "LDA": (lambda **kw: bg.LDA(**kw), "real"),
    "QDA": (lambda **kw: bg.QDA(**kw), "real"),
    "GaussianNB": (lambda **kw: bg.GaussianNB(**kw), "real"),
    "KernelNB": (lambda **kw: bg.KernelNB(**kw), "real"),
    "BernoulliNB": (lambda **kw: bg.BernoulliNB(**kw), "binary"),
    "MultinomialNB": (lambda **kw: bg.MultinomialNB(**kw), "count"),
    "PoissonNB": (lambda **kw: bg.PoissonNB(**kw), "count"),
    "ExponentialNB": (lambda **kw: bg.ExponentialNB(**kw), "positive"),
    "CategoricalNB": (lambda **kw: bg.CategoricalNB(**kw), "categorical"),
    "MixedNB": (lambda **kw: bg.MixedNB(families=MIXED_FAMILIES, **kw), "mixed"),
}


def make_data(kind: str, n_per_class: int = 40, n_classes: int = 3, seed: int = 0):
    """Separable-ish data of the given support, labels 0..K-1 in blocks."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), n_per_class)
    n = y.size
    if kind == "real":
        centres = rng.normal(scale=3.0, size=(n_classes, 4))
        X = centres[y] + rng.normal(size=(n, 4)) * (1 + 0.3 * y[:, None])
    elif kind == "binary":
        p = rng.uniform(0.1, 0.9, size=(n_classes, 6))
        X = (rng.uniform(size=(n, 6)) < p[y]).astype(float)
    elif kind == "count":
        lam = rng.uniform(0.5, 6.0, size=(n_classes, 6))
        X = rng.poisson(lam[y]).astype(float)
    elif kind == "positive":  # durations: exponential with a mean per class and feature
        mean = np.exp(rng.uniform(np.log(0.3), np.log(10.0), size=(n_classes, 5)))
        X = rng.exponential(mean[y])
    elif kind == "categorical":
        X = np.column_stack([(rng.integers(0, 3, n) + y) % 4 for _ in range(4)]).astype(float)
    elif kind == "mixed":
        real = rng.normal(size=(n, 2)) + 2.0 * y[:, None]
        binary = (rng.uniform(size=(n, 2)) < (0.2 + 0.3 * y[:, None])).astype(float)
        counts = rng.poisson(1.0 + 2.0 * y[:, None], size=(n, 2)).astype(float)
        X = np.column_stack([real, binary, counts])
    else:
        raise ValueError(kind)
    return X, y


@pytest.fixture(params=sorted(CLASSIFIERS), scope="module")
def classifier_case(request):
    """(name, factory, X, y) for every classifier."""
    factory, kind = CLASSIFIERS[request.param]
    X, y = make_data(kind)
    return request.param, factory, X, y


# --- ci_step: tests that .ci/run runs once, as steps of their own ------------------------
# The Sphinx build (tests/test_docs_build.py), the notebooks' execution
# (tests/test_notebooks.py) and the demo's run (every test of tests/test_demo.py that uses
# its demo_run fixture) take minutes and run whole programs. The default pytest run
# deselects them; `pytest --ci-steps FILE` runs only them (.ci/run does, one step each).
#: fixtures whose tests are ci_step tests without a marker of their own
CI_STEP_FIXTURES = frozenset({"demo_run"})


def pytest_addoption(parser):
    parser.addoption(
        "--ci-steps", action="store_true", default=False,
        help="run only the tests marked ci_step (the docs build, the notebooks, the demo, "
             "MixtureDA's NUTS estimator checks), "
             "which the default run deselects; .ci/run runs them as steps of their own",
    )


def pytest_report_header(config):
    if config.getoption("--ci-steps"):
        return "ci_step tests only (--ci-steps)"
    return ("tests marked ci_step (docs build, notebooks, demo, MixtureDA NUTS checks) "
            "deselected: "
            "`pytest --ci-steps FILE` runs them (.ci/run does)")


def pytest_collection_modifyitems(config, items):
    steps = config.getoption("--ci-steps")
    keep, drop = [], []
    for item in items:
        if CI_STEP_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.ci_step)
        is_step = item.get_closest_marker("ci_step") is not None
        (keep if is_step == steps else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    items.sort(key=_longest_first)  # stable: a file's tests keep their order


# --- the longest files first -------------------------------------------------------------
# With --dist loadfile each worker runs whole files, handed out in the order of the
# collection (pyproject.toml's addopts pass --no-loadscope-reorder, which would otherwise
# order them by their number of tests). A long file handed out last runs alone at the
# end while the other worker idles, so the files that took longest in a measured run come
# first (longest processing time first), the rest after them in their usual order. The
# order changes no test and no result; a file missing here only risks a longer tail.
# Measured: summed test time per file of the whole cold run on the merged tree (pytest
# --junitxml, 2 workers, idle machine: 889 s wall, 1,753 s CPU), the ten longest first;
# then, in their earlier order, the files measured on a loaded machine before.
LONGEST_FILES = (
    "test_sbc.py",  # 113
    "test_decide.py",  # 95
    "test_estimator_checks.py",  # 92 (less since mean_strength="auto" searches faster)
    "test_estimator_checks_mcmc.py",  # 90
    "test_mcmc_mvn.py",  # 83
    "test_prior_search.py",  # 65
    "test_mcmc_discrete.py",  # 62
    "test_class_prior.py",  # 61
    "test_mixture_da.py",  # 56
    # test_io_integrity's NUTS fits share their programs with test_decide's (SMALL_NUTS):
    # it comes well after test_decide, so that JAX's persistent cache serves them instead
    # of both workers compiling them at once
    "test_io_integrity.py",  # 54
    "test_cov_structure.py",
    "test_hidden_state.py",
    "test_jackknife_plus.py",
    "test_sparse.py",
    "test_properties_save_load.py",
    "test_mcmc_kernel_mixed.py",
    "test_mcmc_gaussian.py",
    "test_semi_mcmc_start.py",
    "test_hyper_sampling.py",
    "test_numerics_mcmc.py",
    "test_semi_mcmc_rows.py",
    "test_predictive_study.py",
    "test_ppc_layout.py",
    "test_nuts_laplace.py",
    "test_warnings.py",
    "test_stacking.py",
    "test_dask.py",
    "test_loo_refit.py",
    "test_properties_predictions.py",
    "test_missing.py",
    "test_properties.py",
    "test_estimator_checks_conjugate.py",
    "test_conjugate.py",
    "test_family_protocol.py",
)
_RANK = {name: rank for rank, name in enumerate(LONGEST_FILES)}


def _longest_first(item) -> int:
    return _RANK.get(item.path.name, len(_RANK))
