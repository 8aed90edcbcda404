"""The runner of the documentation's examples (docs/run_readme_examples.py): which files
and blocks it runs, how it checks the output a page shows, and what makes a block fail.
CI runs the examples themselves (.ci/run, step 4)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("run_readme_examples",
                                               ROOT / "docs" / "run_readme_examples.py")
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)

PAGE = """# A page

```python
x = 6 * 7
print(x, 0.97777)
```

```text
42 0.978
```

Some prose.

<!-- readme-examples: skip (needs a cluster) -->
```python
raise RuntimeError("never run")
```

```python
print("not checked")
```
"""


def test_blocks_pair_code_with_the_output_shown_after_it():
    found = runner.blocks(PAGE)
    assert [b["line"] for b in found] == [3, 15, 19]
    assert found[0]["expected"] == "42 0.978\n"
    assert found[1]["skip"] == "needs a cluster"
    assert found[2]["expected"] is None and found[2]["skip"] is None


@pytest.mark.parametrize(("shown", "printed"), [
    ("0.978", "0.9777777"),                 # to the precision shown
    ("0.978", "0.979"),                     # one unit of the last digit (rounding)
    ("[[0.391 0.609]]", "[[0.39130435 0.60869565]]"),
    ("41 -226.55", "41   -226.5512"),       # runs of white space
    ("QDA needs ...", "QDA needs more than d = 13 samples"),
    ("... qda.nc ...", "ValueError: the file qda.nc is corrupt"),
    ("1e-3", "0.0012"),
])
def test_output_that_matches(shown, printed):
    assert runner.output_mismatch(shown, printed) is None


@pytest.mark.parametrize(("shown", "printed", "reason"), [
    ("0.978", "0.93", "number 0.93 where the page shows 0.978"),
    ("41", "42", "number 42 where the page shows 41"),     # integers exactly
    ("3", "3.4", "number 3.4 where the page shows 3"),
    ("True", "False", "expected 'True'"),
    ("a 1", "a 1\nb 2", "the output goes on after what the page shows"),
    ("a ...\nend", "a lot", "expected 'end'"),
])
def test_output_that_does_not_match(shown, printed, reason):
    assert runner.output_mismatch(shown, printed) == reason


def _page(tmp_path, code: str, output: str | None = None) -> Path:
    text = f"```python\n{code}\n```\n"
    if output is not None:
        text += f"\n```text\n{output}\n```\n"
    path = tmp_path / "page.md"
    path.write_text(text)
    return path


def test_a_clean_page_passes_and_writes_nothing_here(tmp_path, capsys):
    page = _page(tmp_path, "open('out.txt', 'w').write('x')\nprint(round(2 / 3, 3))", "0.667")
    assert runner.run_file(page) == 0
    assert not (tmp_path / "out.txt").exists()  # blocks run in a temporary directory
    assert "ok in" in capsys.readouterr().out


@pytest.mark.parametrize(("code", "output", "message"), [
    ("print(1)", "2", "output differs"),
    ("import warnings\nwarnings.warn('careful', UserWarning)", None, "warning shown"),
    ("1 / 0", None, "ZeroDivisionError"),
])
def test_a_block_fails_on_wrong_output_a_warning_or_an_error(tmp_path, capsys, code, output,
                                                             message):
    assert runner.run_file(_page(tmp_path, code, output)) == 1
    assert message in capsys.readouterr().out


def test_the_default_files_are_the_readme_and_every_page():
    files = runner.default_files()
    assert files[0] == ROOT / "README.md"
    pages = set(files[1:])
    assert ROOT / "docs" / "README.md" not in pages
    guide = set((ROOT / "docs" / "guide").glob("*.md"))
    assert guide and guide <= pages
    assert ROOT / "docs" / "index.md" in pages
