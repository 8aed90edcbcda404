"""The package's layering, checked from the source: every import (module level or
inside a function: a deferred import is still a tie) runs down the layers, no import
circle joins modules, and no capability dispatches on a family's name outside
``bayesgen/families``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "bayesgen"

#: subpackages (and leaf modules) from the top layer down; a module may import only
#: from its own package or from a package of a lower layer. Packages on one line are
#: peers and do not import each other.
LAYERS: list[tuple[str, ...]] = [
    ("bayesgen.__main__",),
    ("bayesgen.cli",),
    ("bayesgen",),
    ("bayesgen.estimators",),
    ("bayesgen.decide", "bayesgen.diagnostics", "bayesgen.semi", "bayesgen.scale"),
    ("bayesgen.plots",),
    ("bayesgen.inference",),
    ("bayesgen.families",),
    ("bayesgen.data",),
    ("bayesgen.utils",),
    ("bayesgen.exceptions", "bayesgen._version"),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _unit(module: str) -> str:
    """The layer unit of a module: the longest prefix listed in LAYERS."""
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        prefix = ".".join(parts[:k])
        if prefix in RANK:
            return prefix
    raise AssertionError(f"{module} belongs to no layer of tests/test_architecture.py")


def _imports(name: str, path: Path) -> set[str]:
    """Every bayesgen module imported anywhere in the file (functions included)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                       for alias in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant):
                targets = [node.args[0].value]
        out.update(t for t in targets if t.startswith("bayesgen") and t in MODULES and t != name)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def test_every_module_has_a_layer():
    for name in MODULES:
        _unit(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_down_the_layers(name):
    unit = _unit(name)
    bad = []
    for target in sorted(GRAPH[name]):
        other = _unit(target)
        if other == unit or target == unit:
            continue
        if RANK[other] <= RANK[unit]:
            bad.append(f"{target} ({other})")
    assert not bad, f"{name} ({unit}) imports from its own layer or above: {bad}"


def test_no_import_circles():
    """Tarjan's strongly connected components of the module graph: all of size one."""
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not circles, f"import circles: {circles}"


def _name_dispatches(path: Path) -> list[str]:
    """Comparisons of a ``.name`` attribute with a string (``family.name == "mvn"``,
    ``_family.name in ("gaussian", ...)``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = any(isinstance(s, ast.Attribute) and s.attr == "name" for s in sides)
        strings = any((isinstance(s, ast.Constant) and isinstance(s.value, str))
                      or (isinstance(s, (ast.Tuple, ast.List, ast.Set))
                      and any(isinstance(e, ast.Constant) for e in s.elts)) for s in sides)
        if named and strings:
            found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    return found


def test_no_family_name_dispatch_outside_families():
    found = [hit for name, path in MODULES.items()
             if not name.startswith("bayesgen.families") for hit in _name_dispatches(path)]
    assert not found, f"family-name dispatch outside bayesgen/families: {found}"
