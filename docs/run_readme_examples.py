"""Run every ``python`` code block of the README and of the documentation pages, as a
user would, and check the output they show.

Each file runs on its own: its blocks share one namespace, in order (like the cells of
a notebook: later blocks use what earlier ones defined), in a temporary working
directory, so files they write (``qda.nc``, plots) do not land in the repository. A
block is skipped only when the line just before its opening fence is an HTML comment
``<!-- readme-examples: skip (reason) -->`` (e.g. one that needs a Dask cluster).

**Shown output is checked.** A fenced ``text`` block that follows a python block (blank
lines only between them) is what that block prints. The printed output must match it:
text equal up to runs of white space, integers equal, decimal numbers equal to the
precision shown (within one unit of the last digit shown: 0.978 accepts 0.9777 and
0.9786, not 0.93), and
``...`` standing for any text (for long messages). Output claims belong in such
blocks, not in comments.

A block fails on any exception, on output that does not match, and on any warning a
user would see (Python's default warning filters; bayesgen's own warnings are always
shown). Matplotlib draws off screen (``Agg``). Exit status 0 when every block of every
file ran clean, 1 otherwise::

    python docs/run_readme_examples.py                      # README.md and docs/**/*.md
    python docs/run_readme_examples.py docs/guide/missing.md
    python docs/run_readme_examples.py --list               # the blocks and first lines
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```[ \t]*\n(?:[ \t]*\n)*(?:^```text\n(.*?)^```[ \t]*$)?",
                   flags=re.S | re.M)
SKIP = re.compile(r"<!--\s*readme-examples:\s*skip\s*\((.+?)\)\s*-->\s*$")
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
#: pages of docs/ that are not part of the user-facing site
NOT_PAGES = {"README.md"}


def default_files() -> list[Path]:
    """README.md, then every Markdown page of ``docs/`` (sorted), as CI runs them."""
    pages = sorted(p for p in (ROOT / "docs").rglob("*.md")
                   if p.name not in NOT_PAGES and "_build" not in p.parts)
    return [ROOT / "README.md", *pages]


def blocks(text: str) -> list[dict]:
    """The python blocks of ``text``: ``code``, first ``line`` (1-based), ``skip`` (the
    reason, or None) and ``expected`` (the text block shown as its output, or None)."""
    out = []
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        out.append({"code": match.group(1), "line": line,
                    "skip": skip.group(1) if skip else None, "expected": match.group(2)})
    return out


def _pattern(segment: str) -> tuple[str, list[str]]:
    """A regex for one ``...``-free piece of expected output: literal text with any run
    of white space matching any run, numbers captured; and the expected numbers."""
    parts, numbers, pos = [], [], 0
    for match in NUMBER.finditer(segment):
        parts.append(_literal(segment[pos:match.start()]))
        parts.append(f"({NUMBER.pattern})")
        numbers.append(match.group())
        pos = match.end()
    parts.append(_literal(segment[pos:]))
    return "".join(parts), numbers


def _literal(text: str) -> str:
    return r"\s+".join(re.escape(word) for word in re.split(r"\s+", text)) if text else ""


def _close(shown: str, got: str) -> bool:
    """``got`` equals the number ``shown`` to the precision shown: an integer exactly, a
    decimal number within one unit of its last digit (rounding in another BLAS or
    platform may move that digit by one)."""
    lower = shown.lower()
    if "." not in lower and "e" not in lower:
        return got.lstrip("+") == shown.lstrip("+")
    mantissa, _, exponent = lower.partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    unit = 10.0 ** (int(exponent or 0) - decimals)
    return abs(float(got) - float(shown)) <= unit * (1 + 1e-9) + 1e-12 * abs(float(shown))


def _regex(segments: list[str]) -> tuple[re.Pattern, list[str]]:
    """One regex for the ``...``-separated pieces, anchored at both ends of the output."""
    parts, numbers = [], []
    for segment in segments:
        pattern, shown = _pattern(segment.strip())
        parts.append(pattern)
        numbers += shown
    return re.compile(r"\A\s*" + r".*?".join(parts), flags=re.S), numbers


def output_mismatch(expected: str, actual: str) -> str | None:
    """None when ``actual`` matches the ``expected`` output block, else the reason."""
    segments = expected.strip().split("...")
    got = actual.strip()
    for k in range(1, len(segments) + 1):  # the first piece that does not match
        regex, _ = _regex(segments[:k])
        if regex.match(got) is None:
            return f"expected {segments[k - 1].strip()[:70]!r}"
    regex, numbers = _regex(segments)
    whole = re.compile(regex.pattern + r"\s*\Z", flags=re.S).match(got)
    if whole is None:
        return "the output goes on after what the page shows"
    for shown, value in zip(numbers, whole.groups(), strict=True):
        if not _close(shown, value):
            return f"number {value} where the page shows {shown}"
    return None


def run_file(path: Path) -> int:
    """Run the blocks of ``path``; print one line per block; return the failures."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    namespace: dict = {"__name__": "__main__"}
    failures = 0
    shown: list[str] = []
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path

    def show(message, category, filename, lineno, file=None, line=None):
        shown.append(f"{category.__name__}: {message} ({filename}:{lineno})")

    cwd = os.getcwd()
    start_file = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for i, block in enumerate(blocks(path.read_text()), 1):
                where = f"{name} block {i} (line {block['line']})"
                if block["skip"]:
                    print(f"{where}: skipped ({block['skip']})")
                    continue
                shown.clear()
                stdout = io.StringIO()
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.showwarning = show
                    try:
                        with contextlib.redirect_stdout(stdout):
                            exec(compile(block["code"], f"{name}:{block['line']}", "exec"),
                                 namespace)
                        error = None
                    except Exception:
                        error = traceback.format_exc(limit=-3)
                seconds = time.perf_counter() - start
                mismatch = (None if error or block["expected"] is None
                            else output_mismatch(block["expected"], stdout.getvalue()))
                ok = error is None and not shown and mismatch is None
                failures += not ok
                checked = ", output checked" if block["expected"] is not None else ""
                print(f"{where}: {'ok' if ok else 'FAILED'} in {seconds:.1f} s{checked}",
                      flush=True)
                for message in shown:
                    print(f"    warning shown: {message}")
                if mismatch:
                    print(f"    output differs: {mismatch}")
                    print("    printed:\n        "
                          + stdout.getvalue().rstrip().replace("\n", "\n        "))
                if error:
                    print("    " + error.replace("\n", "\n    "))
                plt.close("all")
        finally:
            os.chdir(cwd)
    print(f"{name}: {time.perf_counter() - start_file:.1f} s")
    return failures


def run(readme: Path) -> int:
    """Run the blocks of one file (kept for callers of the single-file runner)."""
    return run_file(readme)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path,
                        help="Markdown files (default: README.md and docs/**/*.md)")
    parser.add_argument("--list", action="store_true", help="list the blocks and exit")
    args = parser.parse_args(argv)
    files = [f.resolve() for f in args.files] or default_files()
    if args.list:
        for path in files:
            for i, block in enumerate(blocks(path.read_text()), 1):
                first = block["code"].strip().splitlines()[0]
                flags = ("skip " if block["skip"] else "") + (
                    "[output] " if block["expected"] is not None else "")
                print(f"{path.name}:{block['line']:<5d} {i:2d} {flags}{first}")
        return 0
    start = time.perf_counter()
    failures = sum(run_file(path) for path in files)
    total = sum(len(blocks(p.read_text())) for p in files)
    print(f"{len(files)} file(s), {total} block(s) in {time.perf_counter() - start:.1f} s: "
          + (f"{failures} failed" if failures else "every example ran clean"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
