"""Issue 16 (speed): ``import bayesgen`` is light, and the fast paths give the same
results as the general ones."""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from bayesgen.utils.logspace import _logsumexp_rows, fast_logsumexp, normalise, normalised_proba

HEAVY = ("sklearn", "scipy", "pandas", "numpy", "pymc", "arviz", "jax", "matplotlib")


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip().splitlines()[-1]


def test_import_bayesgen_loads_no_dependency():
    code = f"import sys, bayesgen; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    assert _fresh(code) == "[]"


def test_lazy_public_names_resolve_in_a_fresh_process():
    code = (
        "import json, bayesgen as bg\n"
        "from bayesgen import QDA\n"
        "from bayesgen.diagnostics import plot_compare  # imports bayesgen.diagnostics.compare\n"
        "names = {n: type(getattr(bg, n)).__name__ for n in bg.__all__}\n"
        "print(json.dumps({'names': names, 'dir': sorted(set(bg.__all__) - set(dir(bg))),\n"
        "                  'qda': QDA is bg.QDA, 'module': bg.QDA.__module__}))\n"
    )
    out = json.loads(_fresh(code))
    assert out["dir"] == []
    assert out["qda"] and out["module"] == "bayesgen.estimators.discriminant"
    names = out["names"]
    for cls in ("LDA", "QDA", "GaussianNB", "BernoulliNB", "CategoricalNB", "KernelNB",
                "MixedNB", "MultinomialNB", "PoissonNB", "ExponentialNB"):
        assert names[cls] == "ABCMeta" or names[cls] == "type", (cls, names[cls])
    for fn in ("compare", "load", "merge", "plot_ppc", "ppc_pvalues", "plot_compare"):
        assert names[fn] == "function", (fn, names[fn])  # bg.compare stays the function
    assert names["diagnostics"] == names["plots"] == "module"


def test_pickle_and_load_across_fresh_processes(tmp_path):
    path, saved = tmp_path / "m.pkl", tmp_path / "m.bg"
    X = np.random.default_rng(0).normal(size=(30, 2)).tolist()
    code = (
        "import pickle, numpy as np, bayesgen as bg\n"
        f"m = bg.GaussianNB().fit(np.array({X}), [0, 1, 2] * 10)\n"
        f"pickle.dump(m, open({str(path)!r}, 'wb')); m.save({str(saved)!r})\n"
        "print(m.predict_proba(np.array([[0.1, 0.2]])).tolist())\n"
    )
    expected = _fresh(code)
    code = (  # a fresh process: unpickling imports the estimator module itself
        f"import pickle; m = pickle.load(open({str(path)!r}, 'rb'))\n"
        f"import numpy as np, bayesgen as bg; m2 = bg.load({str(saved)!r})\n"
        "x = np.array([[0.1, 0.2]])\n"
        "print(m.predict_proba(x).tolist() == m2.predict_proba(x).tolist(),"
        " m.predict_proba(x).tolist())\n"
    )
    assert _fresh(code) == f"True {expected}"


@pytest.mark.parametrize("K", [2, 3, 5, 9, 32, 33])
def test_row_logsumexp_matches_the_reduction(K):
    rng = np.random.default_rng(K)
    a = rng.normal(size=(500, K)) * 40
    a[3] = -np.inf
    a[5, 1] = np.inf
    a[7, 0] = np.nan
    a[9, : K - 1] = -np.inf
    a[11] = 1e308
    with np.errstate(invalid="ignore"):
        got, ref = _logsumexp_rows(a), fast_logsumexp(a, axis=1, keepdims=True)
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=0)  # NaN, +-inf positions equal


@pytest.mark.parametrize("K", [2, 5, 40])
def test_normalised_proba_is_exp_of_normalise(K):
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(400, K)) * 30 + 1e6 * rng.integers(0, 2, size=(400, 1))
    prior = np.log(np.full(K, 1.0 / K))
    p = normalised_proba(scores, prior, "T")
    np.testing.assert_allclose(p, np.exp(normalise(scores, prior, "T")), rtol=1e-9,
                               atol=1e-300)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-14)


def test_normalised_proba_keeps_the_general_path_for_impossible_and_nan_rows():
    from bayesgen.exceptions import DataWarning

    scores = np.log(np.random.default_rng(1).uniform(size=(100, 4)))
    prior = np.log([0.1, 0.2, 0.3, 0.4])
    scores[7] = -np.inf
    with pytest.warns(DataWarning, match="zero likelihood"):
        p = normalised_proba(scores, prior, "T")
    np.testing.assert_allclose(p[7], [0.1, 0.2, 0.3, 0.4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        np.testing.assert_allclose(p, np.exp(normalise(scores, prior, "T")), rtol=1e-12)
    scores[9, 2] = np.nan
    with pytest.raises(FloatingPointError, match="non-finite"):
        normalised_proba(scores, prior, "T")
