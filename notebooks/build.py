"""Generate the example notebooks from their cell sources and execute them.

Usage (from the repository root)::

    .venv/bin/python notebooks/build.py                 # write + execute all, default draws
    .venv/bin/python notebooks/build.py --draws 200     # quick run (sets BAYESGEN_NB_DRAWS)
    .venv/bin/python notebooks/build.py --no-execute    # write the notebooks without outputs

Each notebook is a list of ``(kind, source)`` cells, ``kind`` in {"md", "code"}, in its
own module beside this file (``nb01_cells.py`` to ``nb06_cells.py``;
the first code cell, shared, in ``nb_setup.py``). The
notebooks read ``BAYESGEN_NB_DRAWS`` (and ``BAYESGEN_NB_TUNE``) in their first code cell,
so CI can run them with few posterior draws; ``tests/test_notebooks.py`` executes them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the cell modules beside this file, also when it is
    sys.path.insert(0, str(HERE))  # loaded by path (tests/test_notebooks.py)

from nb01_cells import NB01  # noqa: E402
from nb02_cells import NB02  # noqa: E402
from nb03_cells import NB03  # noqa: E402
from nb04_cells import NB04  # noqa: E402
from nb05_cells import NB05  # noqa: E402
from nb06_cells import NB06  # noqa: E402

NOTEBOOKS = {
    "01_fit_with_uncertainty.ipynb": NB01,
    "02_mle_vs_map_priors.ipynb": NB02,
    "03_posterior_predictive_checks.ipynb": NB03,
    "04_priors_by_the_evidence.ipynb": NB04,
    "05_uncertainty_in_action.ipynb": NB05,
    "06_mixture_da.ipynb": NB06,
}


def make_notebook(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    """A notebook (nbformat 4, kernel ``python3``) from ``(kind, source)`` cells."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, (kind, source) in enumerate(cells):
        if kind not in ("md", "code"):
            raise ValueError(f"cell kind must be 'md' or 'code'; got {kind!r}.")
        new = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
        cell = new(source)
        cell["id"] = f"cell-{i:02d}"  # stable ids keep regenerated notebooks diff-friendly
        nb.cells.append(cell)
    return nb


def execute(nb: nbformat.NotebookNode, timeout: int = 600) -> nbformat.NotebookNode:
    """Run ``nb`` in place with nbclient (kernel ``python3``, working dir ``notebooks/``).

    jupyter_client starts the ``python3`` kernel with ``sys.executable`` (this
    interpreter, e.g. the project's virtualenv) because its kernel spec says ``python``.
    Raises ``nbclient.exceptions.CellExecutionError`` when a cell fails.
    """
    from nbclient import NotebookClient

    os.environ.setdefault("MPLBACKEND", "Agg")
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(HERE)}})
    client.execute()
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=None,
                        help="posterior draws (sets BAYESGEN_NB_DRAWS; default: 1000)")
    parser.add_argument("--no-execute", action="store_true", help="write without outputs")
    parser.add_argument("names", nargs="*", help="notebooks to build (default: all)")
    args = parser.parse_args(argv)
    if args.draws is not None:
        os.environ["BAYESGEN_NB_DRAWS"] = str(args.draws)
    names = args.names or list(NOTEBOOKS)
    for name in names:
        nb = make_notebook(NOTEBOOKS[name])
        if not args.no_execute:
            start = time.perf_counter()
            execute(nb)
            print(f"{name}: executed in {time.perf_counter() - start:.1f} s", flush=True)
        nbformat.validate(nb)
        nbformat.write(nb, HERE / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
