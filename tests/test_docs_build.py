"""The Sphinx site (docs/) builds without a single warning (``-W``), as CI builds it.

Output and doctrees go to a temporary directory; the notebooks are rendered from their
stored outputs (``nb_execution_mode = "off"``), so the build runs no model.

Marked ``ci_step``: the default pytest run deselects it, and ``.ci/run`` runs it once, as
its docs step (``pytest --ci-steps tests/test_docs_build.py``), which is CI's only
Sphinx build."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MISSING = [m for m in ("sphinx", "numpydoc", "myst_nb", "pydata_sphinx_theme")
           if importlib.util.find_spec(m) is None]


@pytest.mark.slow
@pytest.mark.ci_step  # .ci/run's docs step (`pytest --ci-steps tests/test_docs_build.py`)
@pytest.mark.skipif(bool(MISSING), reason=f"the docs extra is not installed (missing: "
                    f"{', '.join(MISSING)}); pip install -e '.[docs]'")
def test_sphinx_build_is_warning_free(tmp_path):
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
           "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "html")]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"sphinx-build failed:\n{run.stdout[-3000:]}\n{run.stderr}"
    html = tmp_path / "html"
    api = (html / "api" / "classifiers.html").read_text()
    for name in ("QDA", "LDA", "GaussianNB", "KernelNB", "MixedNB", "ExponentialNB"):
        assert f'id="bayesgen.{name}"' in api and f'id="bayesgen.{name}.predict_proba"' in api
    plots = (html / "api" / "plots.html").read_text()
    assert 'id="bayesgen.plots.decision_regions"' in plots
    assert 'id="bayesgen.diagnostics.plot_ppc"' in (html / "api" / "diagnostics.html").read_text()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = html / "notebooks" / f"{nb.stem}.html"
        assert page.exists(), f"notebook {nb.name} was not rendered"
        assert "<img" in page.read_text(), f"{nb.name}: stored figures missing"
