"""Sphinx configuration of the bayesgen API reference.

Build from the repository root (``pip install -e ".[docs]"`` first)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The notebooks are rendered from their stored, executed outputs (``nb_execution_mode =
"off"``): building the site never runs a model.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # autodoc imports bayesgen.plots; no display is needed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document this checkout, not another installed copy
os.environ.setdefault("PYTENSOR_FLAGS", "cxx=")  # importing PyMC must not compile C

import bayesgen  # noqa: E402

project = "bayesgen"
author = "bayesgen developers"
copyright = "2026, bayesgen developers"
version = release = bayesgen.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "README.md", "img/*.png", "**.ipynb_checkpoints"]
templates_path: list[str] = []

# ---------------------------------------------------------------- notebooks (myst-nb)
nb_execution_mode = "off"  # stored outputs only; tests/test_notebooks.py executes them
myst_enable_extensions = ["dollarmath", "amsmath"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# ---------------------------------------------------------------- API (autodoc, numpydoc)
autosummary_generate = False
autodoc_default_options = {"members": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False  # methods are listed by autodoc ``members``
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False


# ---------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"bayesgen {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list[str] = []


#: scikit-learn's metadata-routing and set_output methods: documented by scikit-learn, and
#: their docstrings refer to its own glossary
_SKLEARN_ROUTING = re.compile(r"^(set_\w+_request|get_metadata_routing|set_output)$")


def _skip_sklearn_routing(app, what, name, obj, skip, options):
    return True if _SKLEARN_ROUTING.match(name) else None


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_routing)
    return {"parallel_read_safe": True}
