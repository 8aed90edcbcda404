"""The default stack before and after ``mean_strength="auto"`` took the flat-m0 evidence.

``StackedClassifier()``'s member ``lda_shrunk_means`` is ``LDA(mean_strength="auto")``.
Its kappa0 was chosen by the evidence with the prior mean m0 plugged in (the overall
mean of the rows), bounded at d / 4; it is now chosen by the evidence with m0
integrated out under a flat prior (``bayesgen.families.mvn.niw_evidence``), unbounded
(``validation/small_n_mean_evidence.py`` for why). This script compares two runs of each
held-out page the small-n goal is judged on, ``validation/small_n.py`` (14 cells) and
``validation/stacking_holdout2.py`` (16 cells), with the same seeds and splits, one on
the library before the change and one after, from their ``--csv`` files.

Per cell: the stack's mean held-out log loss before and after, the best tuned
scikit-learn model's (the lowest mean of its Ledoit-Wolf LDA, CV-tuned QDA, GaussianNB
and logistic regression with C by CV; the same rows in both runs, so the same numbers),
the ratios, the paired difference after - before (mean and sd over the splits), and the
stack's sd over the splits (the spread the pages print). "worse beyond the spread": the
mean increase exceeds that sd. For ``small_n``, also the member alone and its ratio to
the class frequencies.

Run from the repository root, after the four page runs (commands in the page)::

    PYTHONPATH=. .venv/bin/python validation/flat_m0_stack.py \\
        --small-n BEFORE.csv AFTER.csv --holdout2 BEFORE.csv AFTER.csv \\
        --markdown validation/results_flat_m0_stack.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

#: the tuned scikit-learn models of each page (model names in its csv)
SK = {"small_n": ["sk LDA shrinkage", "sk QDA tuned", "sk GaussianNB", "sk logistic CV"],
      "holdout2": ["sk LDA shrinkage", "sk QDA tuned", "sk GaussianNB", "sk logistic"]}


def _load(path: Path, page: str) -> pd.DataFrame:
    """Rows (data, n, split, model, log_loss) of one run's csv."""
    frame = pd.read_csv(path)
    if page == "holdout2":
        frame = frame.rename(columns={"n_per_class": "n"})
    return frame[["data", "n", "split", "model", "log_loss"]]


def compare(before: pd.DataFrame, after: pd.DataFrame, page: str) -> pd.DataFrame:
    """One row per cell: before / after means, best sk, ratios, paired difference."""
    rows = []
    for (data, n), cell in before.groupby(["data", "n"], sort=False):
        later = after[(after["data"] == data) & (after["n"] == n)]

        def per_split(frame, model):
            return frame[frame["model"] == model].set_index("split")["log_loss"]

        sk = {m: per_split(cell, m).mean() for m in SK[page]}
        best_name = min(sk, key=sk.get)
        sb, sa = per_split(cell, "bg stacked"), per_split(later, "bg stacked")
        diff = (sa - sb).dropna()
        row = {"data": data, "n": n, "stack before": sb.mean(), "stack after": sa.mean(),
               "best sk": sk[best_name], "best sk model": best_name,
               "before / best": sb.mean() / sk[best_name],
               "after / best": sa.mean() / sk[best_name],
               "diff mean": diff.mean(), "diff sd": diff.std(ddof=1),
               "stack sd": sb.std(ddof=1), "splits": diff.size}
        if page == "small_n":
            mb = per_split(cell, "bg member lda_shrunk_means")
            ma = per_split(later, "bg member lda_shrunk_means")
            freq = per_split(cell, "class frequencies").mean()
            row.update({"auto before": mb.mean(), "auto after": ma.mean(),
                        "auto before / freq": mb.mean() / freq,
                        "auto after / freq": ma.mean() / freq})
        rows.append(row)
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame, name: str) -> list[str]:
    """Counts: at or below best before / after, cells better / worse, worst ratio."""
    better = int((table["diff mean"] < 0).sum())
    worse = int((table["diff mean"] > 0).sum())
    beyond = table[table["diff mean"] > table["stack sd"]]
    lines = [f"**{name}** ({len(table)} cells, {int(table['splits'].min())} splits each):",
             "",
             f"- stack at or below the best tuned scikit-learn model: "
             f"{int((table['before / best'] <= 1).sum())} before, "
             f"{int((table['after / best'] <= 1).sum())} after; within 1.1x: "
             f"{int((table['before / best'] <= 1.1).sum())} before, "
             f"{int((table['after / best'] <= 1.1).sum())} after",
             f"- worst ratio to the best: {table['before / best'].max():.3f} before "
             f"({_where(table, 'before / best')}), {table['after / best'].max():.3f} after "
             f"({_where(table, 'after / best')})",
             f"- median ratio: {table['before / best'].median():.3f} before, "
             f"{table['after / best'].median():.3f} after; mean log loss over the cells: "
             f"{table['stack before'].mean():.4f} before, {table['stack after'].mean():.4f} "
             "after",
             f"- geometric mean over the cells of the stack's after / before: "
             f"{float(np.exp(np.mean(np.log(table['stack after'] / table['stack before'])))):.4f}"
             + (f"; of LDA(mean_strength=\"auto\") alone: "
                f"{float(np.exp(np.mean(np.log(auto['auto after'] / auto['auto before'])))):.4f}"
                if len(auto := table.dropna(subset=['auto after']) if 'auto after' in table
                       else table.iloc[:0]) else ""),
             f"- cells where the stack got better / worse / equal: {better} / {worse} / "
             f"{len(table) - better - worse}; worse by more than the stack's sd over the "
             f"splits: {len(beyond)}"
             + (" (" + ", ".join(f"{r.data} n={r.n}" for r in beyond.itertuples()) + ")"
                if len(beyond) else "")]
    if "auto after / freq" in table:
        lines.append(
            f"- LDA(mean_strength=\"auto\") alone, worst ratio to the class frequencies: "
            f"{table['auto before / freq'].max():.2f} before, "
            f"{table['auto after / freq'].max():.2f} after; cells above 1.05x: "
            f"{int((table['auto before / freq'] > 1.05).sum())} before, "
            f"{int((table['auto after / freq'] > 1.05).sum())} after")
    return [*lines, ""]


def _where(table: pd.DataFrame, column: str) -> str:
    row = table.loc[table[column].idxmax()]
    return f"{row['data']}, n = {row['n']}"


def markdown_table(table: pd.DataFrame) -> list[str]:
    cols = ["stack before", "stack after", "best sk", "before / best", "after / best",
            "diff mean", "diff sd", "stack sd"]
    extra = ["auto before", "auto after", "auto before / freq", "auto after / freq"]
    cols += [c for c in extra if c in table]
    head = "| data | n | " + " | ".join(cols) + " | best sk model |"
    lines = [head, "|" + "---|" * (len(cols) + 3)]
    for r in table.to_dict("records"):
        cells = [f"{r[c]:+.4f}" if c == "diff mean" else f"{r[c]:.3f}" for c in cols]
        lines.append(f"| {r['data']} | {r['n']} | " + " | ".join(cells)
                     + f" | {r['best sk model']} |")
    return [*lines, ""]


def main() -> None:
    """Command line: ``--small-n BEFORE AFTER``, ``--holdout2 BEFORE AFTER``,
    ``--markdown PATH``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small-n", nargs=2, type=Path, required=True)
    parser.add_argument("--holdout2", nargs=2, type=Path, required=True)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    lines = ["# The default stack with the flat-m0 kappa0 of LDA(mean_strength=\"auto\")",
             "", "Generated by `validation/flat_m0_stack.py` from the `--csv` files of "
             "two runs of each page (its docstring gives the design; the commands are "
             "below). Lower log loss is better; ratios divide by the best tuned "
             "scikit-learn model of the cell (logistic regression included).", ""]
    tables = {}
    for page, (b, a) in (("small_n", args.small_n), ("holdout2", args.holdout2)):
        tables[page] = compare(_load(b, page), _load(a, page), page)
    both = pd.concat(tables.values(), ignore_index=True)
    lines += ["## Summary", ""]
    lines += summary(tables["small_n"], "validation/small_n.py")
    lines += summary(tables["holdout2"], "validation/stacking_holdout2.py")
    lines += summary(both, "both pages")
    for page, title in (("small_n", "validation/small_n.py"),
                        ("holdout2", "validation/stacking_holdout2.py")):
        lines += [f"## {title}", "", *markdown_table(tables[page])]
    text = "\n".join(lines)
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
