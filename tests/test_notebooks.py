"""Execute the example notebooks in ``notebooks/`` with nbclient (quick mode: 200 draws).

A cell that raises fails the test. The stored notebooks must also match their
generator, ``notebooks/build.py``, so that they are reproducible from source.

Executing them takes minutes: those tests are marked ``ci_step``, which the default
pytest run deselects; ``.ci/run`` runs them once, as a step of its own
(``pytest --ci-steps tests/test_notebooks.py``).
"""

import importlib.util
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def _build_module():
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = _build_module()
NAMES = sorted(BUILD.NOTEBOOKS)


def test_every_notebook_is_listed_in_build():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_stored_notebook_matches_build_source(name):
    stored = nbformat.read(NOTEBOOKS / name, as_version=4)
    generated = BUILD.make_notebook(BUILD.NOTEBOOKS[name])
    assert [(c.cell_type, c.source) for c in stored.cells] == [
        (c.cell_type, c.source) for c in generated.cells
    ], f"{name} is stale: run `python notebooks/build.py {name}`"
    code = [c for c in stored.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code), f"{name} is stored without outputs"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{name} is stored with an error output"


@pytest.mark.slow
@pytest.mark.ci_step  # .ci/run's notebooks step (`pytest --ci-steps tests/test_notebooks.py`)
@pytest.mark.parametrize("name", NAMES)
def test_notebook_executes(name, monkeypatch):
    monkeypatch.setenv("BAYESGEN_NB_DRAWS", "200")
    monkeypatch.setenv("BAYESGEN_NB_TUNE", "200")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    BUILD.execute(nb, timeout=600)  # raises CellExecutionError when a cell fails
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    first = "".join(o.get("text", "") for o in code[0].outputs)
    assert "draws = 200" in first, "the notebook must read BAYESGEN_NB_DRAWS"
