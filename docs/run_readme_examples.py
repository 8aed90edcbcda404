"""Run every ``python`` code block of the README, in order, as a user would.

The blocks share one namespace (like the cells of a notebook: later blocks use the
estimators fitted by earlier ones) and run in a temporary working directory, so files
they write (``qda.nc``, plots) do not land in the repository. A block is skipped only
when the line just before its opening fence is an HTML comment
``<!-- readme-examples: skip (reason) -->`` (e.g. one that needs a Dask cluster).

A block fails on any exception and on any warning a user would see (Python's default
warning filters; bayesgen's own warnings are always shown). Matplotlib draws off screen
(``Agg``). Exit status 0 when every block ran clean, 1 otherwise::

    python docs/run_readme_examples.py            # README.md of this repository
    python docs/run_readme_examples.py --list     # the blocks and their first lines
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.S | re.M)
SKIP = re.compile(r"<!--\s*readme-examples:\s*skip\s*\((.+?)\)\s*-->\s*$")


def blocks(text: str) -> list[dict]:
    """The python blocks of ``text``: ``code``, first ``line`` (1-based) and ``skip``
    (the reason, or None)."""
    out = []
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        out.append({"code": match.group(1), "line": line,
                    "skip": skip.group(1) if skip else None})
    return out


def run(readme: Path) -> int:
    """Run the blocks of ``readme``; print one line per block; return the failures."""
    import matplotlib

    matplotlib.use("Agg")
    namespace: dict = {"__name__": "__main__"}
    failures = 0
    shown: list[str] = []

    def show(message, category, filename, lineno, file=None, line=None):
        shown.append(f"{category.__name__}: {message} ({filename}:{lineno})")

    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for i, block in enumerate(blocks(readme.read_text()), 1):
                where = f"block {i} (README line {block['line']})"
                if block["skip"]:
                    print(f"{where}: skipped ({block['skip']})")
                    continue
                shown.clear()
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.showwarning = show
                    try:
                        exec(compile(block["code"], f"README.md:{block['line']}", "exec"),
                             namespace)
                        error = None
                    except Exception:
                        error = traceback.format_exc(limit=-3)
                seconds = time.perf_counter() - start
                ok = error is None and not shown
                failures += not ok
                print(f"{where}: {'ok' if ok else 'FAILED'} in {seconds:.1f} s")
                for message in shown:
                    print(f"    warning shown: {message}")
                if error:
                    print("    " + error.replace("\n", "\n    "))
                import matplotlib.pyplot as plt

                plt.close("all")
        finally:
            os.chdir(cwd)
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readme", nargs="?", default=ROOT / "README.md", type=Path)
    parser.add_argument("--list", action="store_true", help="list the blocks and exit")
    args = parser.parse_args(argv)
    if args.list:
        for i, block in enumerate(blocks(args.readme.read_text()), 1):
            first = block["code"].strip().splitlines()[0]
            print(f"{i:2d} line {block['line']:4d} {'skip ' if block['skip'] else ''}{first}")
        return 0
    failures = run(args.readme)
    print(f"{failures} block(s) failed" if failures else "every README example ran clean")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
