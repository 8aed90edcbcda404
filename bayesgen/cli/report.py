"""The demo's summary over splits, its text table and its headlines (no fitting here)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesgen.cli.datasets import SMALL_N_PER_CLASS

#: the data set on which the demo states the posterior predictive against the MAP plug-in
SMALL = f"breast cancer, {SMALL_N_PER_CLASS}/class"

SCORES = ("accuracy", "log_loss", "ece")


def is_peer(method: str) -> bool:
    """True for the rows of scikit-learn peers (their method label names scikit-learn)."""
    return method.startswith("sklearn")


def _convergence(rows: pd.DataFrame) -> str:
    """The worst convergence over the splits: largest R-hat, total divergences, smallest
    bulk ESS; 'exact draws' for the conjugate posterior."""
    if (rows["convergence"] == "exact draws").any():
        return "exact draws"
    if "r_hat" not in rows or rows["r_hat"].isna().all():
        return ""
    rhat, div, ess = rows["r_hat"].max(), int(rows["divergences"].sum()), rows["ess"].min()
    flag = "ok" if (rows["convergence"].str.endswith(" ok")).all() else "CHECK"
    return f"R-hat <= {rhat:.3f}, {div} div, min ESS {ess:.0f} {flag}"


def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over the splits of every (data, classifier, method).

    Parameters
    ----------
    table : DataFrame
        The per-split table of :func:`bayesgen.cli.demo.run`.

    Returns
    -------
    DataFrame with columns data, classifier, method, splits (fits that succeeded),
    accuracy, accuracy_sd, log_loss, log_loss_sd, ece, ece_sd (sample standard
    deviations over the splits, ddof = 1; NaN with one split), fit_predict_ms (median),
    convergence and note (the distinct notes of the splits), in the table's order.
    """
    if "r_hat" not in table:
        parsed = table["convergence"].str.extract(
            r"R-hat (?P<r_hat>[\d.]+), (?P<divergences>\d+) div, min ESS (?P<ess>\d+)")
        table = pd.concat([table, parsed.astype(float)], axis=1)
    rows = []
    for (data, clf, method), part in table.groupby(["data", "classifier", "method"],
                                                   sort=False):
        ok = part["accuracy"].notna()
        row = {"data": data, "classifier": clf, "method": method, "splits": int(ok.sum())}
        for score in SCORES:
            values = part.loc[ok, score].to_numpy(dtype=float)
            row[score] = values.mean() if values.size else np.nan
            row[f"{score}_sd"] = values.std(ddof=1) if values.size > 1 else np.nan
        times = part.loc[ok, "fit_predict_ms"].to_numpy(dtype=float)
        row["fit_predict_ms"] = float(np.median(times)) if times.size else np.nan
        row["convergence"] = _convergence(part[ok]) if ok.any() else ""
        notes = [n for n in dict.fromkeys(part["note"].fillna("")) if n]
        row["note"] = "; ".join(notes)
        rows.append(row)
    return pd.DataFrame(rows)


def _mean_sd(mean: float, sd: float, digits: int = 3) -> str:
    if np.isnan(mean):
        return "-"
    return f"{mean:.{digits}f}" + ("" if np.isnan(sd) else f" ({sd:.{digits}f})")


def format_table(summary: pd.DataFrame) -> str:
    """The summary as fixed-width text: mean (sd) of each score, median time; failed
    fits show '-'."""
    header = ["data", "classifier", "method", "accuracy", "log loss", "ECE",
              "time (ms)", "convergence", "note"]
    numeric = [False, False, False, True, True, True, True, False, False]
    cells = []
    previous = None
    for r in summary.to_dict("records"):
        cells.append([
            r["data"] if r["data"] != previous else "",
            r["classifier"],
            r["method"],
            _mean_sd(r["accuracy"], r["accuracy_sd"]),
            _mean_sd(r["log_loss"], r["log_loss_sd"]),
            _mean_sd(r["ece"], r["ece_sd"]),
            "-" if np.isnan(r["fit_predict_ms"]) else f"{r['fit_predict_ms']:.0f}",
            r["convergence"],
            r["note"],
        ])
        previous = r["data"]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric, strict=True)).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(c) for c in cells)])


def _name(row: pd.Series) -> str:
    if is_peer(row["method"]):
        return f"scikit-learn {row['classifier']} ({row['method'].removeprefix('sklearn ')})"
    return f"bayesgen {row['classifier']} {row['method']}"


def _wins(table: pd.DataFrame, data: str, a: pd.Series, b: pd.Series) -> tuple[int, int]:
    """Splits where model ``a`` has a lower log loss than ``b``, and splits where both fit."""
    part = table[table["data"] == data]

    def losses(row):
        sel = (part["classifier"] == row["classifier"]) & (part["method"] == row["method"])
        return part[sel].set_index("split")["log_loss"]

    both = pd.concat([losses(a), losses(b)], axis=1, keys=["a", "b"]).dropna()
    return int((both["a"] < both["b"]).sum()), len(both)


def headlines(summary: pd.DataFrame, table: pd.DataFrame | None = None) -> list[str]:
    """What the table says, in sentences, measured on the same splits.

    Per data set: the bayesgen model with the lowest mean held-out log loss against the
    scikit-learn peer with the lowest, with their standard deviations, their accuracies
    and, when the per-split ``table`` holds more than one split, the number of splits
    each is lower on; then the data sets where bayesgen's best is not lower (where it
    loses). On :data:`SMALL` also the posterior predictive (``"conjugate"``) against the
    MAP plug-in of the same classifier.
    """
    lines = ["Lowest mean held-out log loss per data set, bayesgen against scikit-learn:"]
    losses = []
    n_data = 0
    for data, part in summary.groupby("data", sort=False):
        fitted = part[part["log_loss"].notna()]
        ours = fitted[~fitted["method"].map(is_peer)]
        theirs = fitted[fitted["method"].map(is_peer)]
        if ours.empty or theirs.empty:
            continue
        n_data += 1
        a = ours.loc[ours["log_loss"].idxmin()]
        b = theirs.loc[theirs["log_loss"].idxmin()]
        lower = a["log_loss"] < b["log_loss"]
        verdict = "bayesgen lower" if lower else "scikit-learn lower"
        if not lower:
            losses.append(f"{data} ({b['log_loss']:.3f} against {a['log_loss']:.3f})")
        if table is not None:
            wins, n = _wins(table, data, a, b)
            if n > 1:
                verdict += f"; bayesgen lower on {wins} of {n} splits"
        lines.append(f"  {data}: {_name(a)} {_mean_sd(a['log_loss'], a['log_loss_sd'])} vs "
                     f"{_name(b)} {_mean_sd(b['log_loss'], b['log_loss_sd'])} ({verdict}; "
                     f"accuracy {a['accuracy']:.3f} vs {b['accuracy']:.3f})")
    if n_data:
        lines.append(
            f"bayesgen loses (a peer has the lower log loss) on {len(losses)} of {n_data} data "
            "sets" + (": " + ", ".join(losses) if losses else ""))
    small = summary[summary["data"] == SMALL].set_index(["classifier", "method"])
    pairs = [c for c in dict.fromkeys(small.index.get_level_values(0))
             if (c, "map") in small.index and (c, "conjugate") in small.index]
    if pairs:
        lines.append(f"Posterior predictive against the MAP plug-in on {SMALL} "
                     "(held-out log loss):")
        for clf in pairs:
            plug, post = small.loc[(clf, "map")], small.loc[(clf, "conjugate")]
            if np.isnan(plug["log_loss"]) or np.isnan(post["log_loss"]):
                continue
            ratio = plug["log_loss"] / post["log_loss"]
            change = (f"{ratio:.1f}x lower" if ratio >= 1 else f"{1 / ratio:.1f}x higher")
            lines.append(f"  {clf}: map {_mean_sd(plug['log_loss'], plug['log_loss_sd'])}, "
                         f"conjugate {_mean_sd(post['log_loss'], post['log_loss_sd'])} "
                         f"({change} with the posterior predictive"
                         + (", mean over splits)" if post["splits"] > 1 else ")"))
    return lines
