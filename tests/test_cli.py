"""The command line's help, --version and import cost (`python -m bayesgen`); the demo
itself runs in test_demo.py."""

import inspect
import json
import re
import subprocess
import sys

import pytest

import bayesgen
from bayesgen.__main__ import _parser, main
from bayesgen.cli import demo

#: modules --help and --version must not load (seconds of import time between them)
HEAVY = ("sklearn", "pymc", "pytensor", "arviz", "jax", "numpyro", "matplotlib")

#: run ``python -m bayesgen ARGS`` in this interpreter (as -m does, via runpy) and print
#: which of HEAVY it imported, as JSON; ``import bayesgen`` alone when ARGS is None
_PROBE = """
import json, runpy, sys
args, heavy = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if args is None:
    import bayesgen
else:
    sys.argv = ["bayesgen", *args]
    try:
        runpy.run_module("bayesgen", run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def _heavy_imported(args: list[str] | None) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(args), json.dumps(HEAVY)],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def package_imports() -> set[str]:
    """The heavy modules ``import bayesgen`` itself loads (before __main__ runs)."""
    return _heavy_imported(None)


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["demo", "--help"]])
def test_help_and_version_import_nothing_heavy_of_their_own(args, package_imports):
    assert _heavy_imported(args) <= package_imports


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_import_nothing_heavy(args, package_imports):
    if package_imports:
        pytest.skip(f"'import bayesgen' itself imports {sorted(package_imports)}")
    assert _heavy_imported(args) == set()


def test_version_flag():
    done = subprocess.run([sys.executable, "-m", "bayesgen", "--version"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert done.stdout.strip() == f"bayesgen {bayesgen.__version__}"
    assert re.fullmatch(r"bayesgen \d+\.\d+\.\d+\S*", done.stdout.strip())


def test_help_lists_commands_and_methods(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert "demo" in text and "--version" in text
    for method in ("mle", "map", "conjugate", "mcmc"):
        assert f'"{method}"' in text


def test_demo_help_matches_what_the_demo_does(capsys):
    """Every data set, classifier and method of ``demo.DEMO`` and every file that
    ``demo.main`` writes is named in ``bayesgen demo --help``."""
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for _, classifiers, peers in demo.DEMO:
        for clf in classifiers:
            assert clf.name in text
            assert ", ".join(clf.methods) in text
        for peer in peers:  # the scikit-learn model behind each peer is named
            assert _sklearn_name(peer.factory(0)) in text
    written = set(re.findall(r"(\w+\.(?:png|csv))", inspect.getsource(demo.main)))
    assert written == {"results.csv", "summary.csv", "log_loss.png", "reliability.png",
                       "decision_regions.png"}
    for filename in written:
        assert filename in text


def _sklearn_name(model) -> str:
    """Class name of the scikit-learn estimator inside a peer (through the demo's
    warning filter, a grid search and a pipeline)."""
    model = getattr(model, "estimator", model)  # the demo's Quiet wrapper
    model = getattr(model, "estimator", model)  # GridSearchCV
    model = model.steps[-1][1] if hasattr(model, "steps") else model
    return type(model).__name__


def test_demo_options_reach_the_demo(monkeypatch):
    """The defaults of ``bayesgen demo`` are the demo's (one split, NUTS for one model,
    the bar where a person watches), and every option is passed on."""
    calls = []
    monkeypatch.setattr(demo, "main", lambda **kw: calls.append(kw))
    assert main(["demo"]) == 0
    assert main(["demo", "--out", "x", "--seed", "3", "--splits", "5", "--nuts", "all",
                 "--no-progress"]) == 0
    assert calls == [
        {"out": "bayesgen-demo", "seed": 0, "n_splits": demo.N_SPLITS, "nuts": "one",
         "progress": "auto"},
        {"out": "x", "seed": 3, "n_splits": 5, "nuts": "all", "progress": False},
    ]
    nuts = next(a for a in _parser()._subparsers._group_actions[0].choices["demo"]._actions
                if a.dest == "nuts")
    assert tuple(nuts.choices) == tuple(demo.NUTS_SCOPES)


def test_demo_help_says_how_long_it_takes(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert re.search(r"How long it takes on 2 cores.*: about \d+ s with the defaults", text)
    assert re.search(r"--splits 5 about \d+ s", text)
    assert "--nuts all" in text and "progress bar" in text


def test_demo_data_set_names_are_those_in_the_help():
    """The data set names the help lists are those the loaders give (no fitting)."""
    names = {load(0).name for load, *_ in demo.DEMO}
    text = " ".join(_parser()._subparsers._group_actions[0].choices["demo"]
                    .format_help().split())
    assert all(name in text for name in names)


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main([])
    assert stop.value.code == 2
    assert "COMMAND" in capsys.readouterr().err
