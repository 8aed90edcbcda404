"""ArviZ's once-a-day notice on its first import (ArviZ 0.2x) does not reach bayesgen's
users: bayesgen imports ArviZ and PyMC through ``bayesgen.utils.heavy``, which silences that
one message during the first import only."""

import subprocess
import sys
import textwrap

import pytest

#: fit and summarise with every warning recorded; print the ArviZ notices seen
_FIT = textwrap.dedent("""
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        import bayesgen as bg
        from sklearn.datasets import load_iris
        X, y = load_iris(return_X_y=True)
        clf = bg.GaussianNB(method="conjugate", draws=50, chains=1, random_state=0)
        clf.fit(X, y)
        clf.summary()
        clf.predict_proba_interval(X[:3])
        import arviz, pymc  # both imported by now
    print(sum("ArviZ is undergoing" in str(w.message) for w in seen))
""")

#: the control: ArviZ imported directly, in the same kind of fresh cache
_PLAIN = textwrap.dedent("""
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        import arviz
    print(sum("ArviZ is undergoing" in str(w.message) for w in seen))
""")


def _notices(code: str, cache) -> int:
    # a fresh cache directory: ArviZ keeps the date of its last notice there
    env = {"XDG_CACHE_HOME": str(cache), "PATH": "/usr/bin:/bin", "HOME": str(cache)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1])


def test_first_fit_in_a_fresh_cache_shows_no_arviz_notice(tmp_path):
    plain = _notices(_PLAIN, tmp_path / "plain")
    if plain == 0:
        pytest.skip("this ArviZ version has no daily notice")
    assert _notices(_FIT, tmp_path / "fit") == 0


def test_later_imports_return_the_loaded_modules():
    from bayesgen.utils.heavy import import_arviz, import_pymc

    assert import_arviz() is sys.modules["arviz"]
    assert import_pymc() is sys.modules["pymc"]
