"""Simulation-based calibration (SBC, Talts et al. 2018) of bayesgen's conjugate posteriors.

If theta ~ p(theta), data ~ p(data | theta) and theta_1..theta_L ~ p(theta | data) are
exact posterior draws, then for any scalar summary f the rank

    r = #{l : f(theta_l) < f(theta)}  in 0..L

is uniform on {0, ..., L}. Each replication draws the true parameters from the *same
explicit prior* the estimator is given (so nothing in the prior depends on the data),
simulates ``n_obs`` rows (y ~ Categorical(pi), x | y from the family), fits
``method="conjugate"`` with ``draws=L, chains=1`` and records the rank of every summary
among ``est.idata_.posterior``. Non-uniform ranks mean a wrong posterior: a U shape is
a posterior that is too narrow, a hump one that is too wide, a slope a biased one.

A replication in which a class gets no row is discarded together with its theta (the
estimator only knows the classes it sees). Conditioning the joint draw (theta, data)
on an event of the data leaves p(theta | data) unchanged, so the ranks stay uniform;
redrawing only the data for a fixed theta would not.

Uniformity is tested per summary with a chi-square test on ``n_bins`` equal bins of the
ranks and a Kolmogorov-Smirnov test on u = (r + U) / (L + 1), U ~ Uniform(0, 1), which
is exactly Uniform(0, 1) under the null.

``inflate=c`` turns the check on itself: every summary's posterior draws are scaled
about their mean by sqrt(c) (posterior variance x c), a deliberately wrong posterior
whose ranks pile up in the middle.

Run::

    .venv/bin/python -m validation.sbc --family gaussian --reps 500 --out validation/img
    .venv/bin/python -m validation.sbc --all --reps 500 --out validation/img \
        --markdown validation/results_conjugate.md
    .venv/bin/python -m validation.sbc --all --method mcmc --reps 100 --n-obs 30 \
        --out validation/img --markdown validation/results_mcmc.md
    .venv/bin/python -m validation.sbc --family mvn_lda_diag --misspecified --reps 200

``--misspecified`` is the other control: the estimator keeps the spec's prior while the
truth is drawn from another one (``MISSPECIFIED`` in :mod:`validation.sbc_specs`), so
the (co)variance ranks must fail.

With ``--method mcmc`` every replication runs NUTS on the statistics model (2 chains,
``--tune`` steps, draws thinned by ``--thin`` to about independent ones); divergent
replications are kept (dropping them would bias the ranks) and counted.
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass
from pathlib import Path

import arviz as az
import numpy as np
from scipy import stats

from validation.sbc_specs import (
    CLASS_ALPHA,
    MISSPECIFIED,
    N_CLASSES,
    N_FEATURES,
    SPECS,
    FamilySpec,
    misspecified,
)

__all__ = ["CLASS_ALPHA", "MISSPECIFIED", "N_CLASSES", "N_FEATURES", "SPECS", "FamilySpec",
           "SBCResult", "configure_method", "main", "misspecified", "posterior_draws",
           "run_sbc", "summarize", "uniformity"]


# ------------------------------------------------------------------- engine
@dataclass
class SBCResult:
    """Ranks of one SBC run: ``ranks[name]`` (n_reps,) integers in 0..n_draws."""

    family: str
    ranks: dict
    n_draws: int
    n_discarded: int
    inflate: float
    method: str = "conjugate"
    n_diverged: int = 0  #: MCMC replications with a divergent transition (kept)
    max_rhat: float = float("nan")  #: worst R-hat over all MCMC replications


def _check_prior(spec: FamilySpec, est) -> None:
    """The fitted prior must be the explicit one the truth was drawn from.

    The fitted ``est._prior`` lives in the estimator's internal frame z = (x - c) / s,
    which moves a feature whose spread or median is far from unit scale (as a truth
    drawn from a mis-specified prior can make it); the comparison is in the units of X
    (``scoring.user_prior``)."""
    from bayesgen.inference.scoring import user_prior

    fitted = user_prior(est)
    for key, value in spec.prior.items():
        got = np.asarray(fitted[key], dtype=float)
        if got.shape != np.shape(value) or not np.allclose(got, value):
            raise RuntimeError(
                f"SBC {spec.name}: the fitted prior's {key!r} = {got!r} differs from the "
                f"prior the truth was drawn from ({value!r}); SBC needs a data-independent "
                "prior."
            )
    if not np.allclose(est.class_alpha_, CLASS_ALPHA):
        raise RuntimeError(f"SBC {spec.name}: class_alpha_ = {est.class_alpha_!r}.")


def posterior_draws(est, *, thin: int = 1, n_draws: int | None = None) -> dict:
    """``est.idata_.posterior`` variables as arrays with one leading draw dim (S, ...).

    ``thin`` keeps every ``thin``-th draw of each chain (MCMC draws are autocorrelated;
    SBC's uniformity assumes roughly independent draws), then the chains are stacked and
    the first ``n_draws`` kept (all when None).
    """
    post = est.idata_.posterior.isel(draw=slice(thin - 1, None, thin))
    out = {name: v.values.reshape(-1, *v.shape[2:]) for name, v in post.data_vars.items()}
    if n_draws is not None:
        out = {name: v[:n_draws] for name, v in out.items()}
    return out


def configure_method(est, method: str, n_draws: int, *, thin: int = 5, tune: int = 500,
                     chains: int = 2):
    """Set ``est`` up for ``method``: ``"conjugate"`` keeps the spec's ``chains=1,
    draws=n_draws``; ``"mcmc"`` runs NUTS with ``chains`` chains long enough to leave
    ``n_draws`` draws after thinning by ``thin``."""
    if method == "conjugate":
        return est
    if method != "mcmc":
        raise ValueError(f"method must be 'conjugate' or 'mcmc'; got {method!r}.")
    per_chain = -(-n_draws // chains) * thin
    return est.set_params(method="mcmc", chains=chains, draws=per_chain, tune=tune,
                          progressbar=False)


def run_sbc(spec: FamilySpec, *, n_reps: int = 500, n_obs: int = 40, n_draws: int = 99,
            seed: int = 0, inflate: float = 1.0, max_discard: int = 10_000,
            method: str = "conjugate", thin: int = 5, tune: int = 500) -> SBCResult:
    """Run SBC for one family.

    Parameters
    ----------
    spec : FamilySpec
    n_reps : int
        Replications (each: theta ~ prior, data, fit, ranks).
    n_obs : int
        Rows per simulated data set.
    n_draws : int
        Posterior draws L per fit; ranks lie in 0..L.
    seed : int
        Seed of the simulation (the fits get seeds drawn from it).
    inflate : float
        1 = the estimator's posterior; c != 1 scales each summary's draws about their
        mean by sqrt(c) (a deliberately wrong posterior, variance x c).
    max_discard : int
        Give up after this many replications discarded for a class with no rows.
    method : {"conjugate", "mcmc"}
        The posterior under test: exact draws, or NUTS on the statistics model (2
        chains after ``tune`` tuning steps, thinned by ``thin``; replications with
        divergences are kept and counted in ``SBCResult.n_diverged``, since
        discarding them would bias the ranks).

    Returns
    -------
    SBCResult
    """
    rng = np.random.default_rng(seed)
    ranks = {name: np.empty(n_reps, dtype=np.int64) for name in spec.summaries}
    discarded = diverged = 0
    worst_rhat = 1.0
    rep = 0
    while rep < n_reps:
        truth = spec.draw_truth(rng)
        truth["pi"] = rng.dirichlet(np.full(N_CLASSES, CLASS_ALPHA))
        y = rng.choice(N_CLASSES, size=n_obs, p=truth["pi"])
        if np.bincount(y, minlength=N_CLASSES).min() == 0:
            discarded += 1
            if discarded > max_discard:
                raise RuntimeError(f"SBC {spec.name}: too many data sets miss a class.")
            continue
        X = spec.simulate(truth, y, rng)
        est = configure_method(spec.make_estimator(n_draws, int(rng.integers(2**31))),
                               method, n_draws, thin=thin, tune=tune)
        with warnings.catch_warnings():
            # short chains always fall under the ESS >= 400 warning; divergences and
            # R-hat are recorded below instead
            warnings.filterwarnings("ignore", message=".*may not have converged.*")
            est.fit(X, y)
        if method == "mcmc":
            diverged += bool(est.idata_.sample_stats["diverging"].any())
            with np.errstate(invalid="ignore"):  # constant entries (a diagonal cov's zeros)
                rhat = az.rhat(est.idata_.posterior)  # have an undefined R-hat, NaN
            worst_rhat = max(worst_rhat, max(float(rhat[v].max()) for v in rhat.data_vars))
        _check_prior(spec, est)
        draws = (posterior_draws(est) if method == "conjugate"
                 else posterior_draws(est, thin=thin, n_draws=n_draws))
        for name, f in spec.summaries.items():
            values = f(draws)
            if inflate != 1.0:
                values = values.mean() + np.sqrt(inflate) * (values - values.mean())
            ranks[name][rep] = int(np.sum(values < f(truth)))
        rep += 1
    return SBCResult(spec.name, ranks, n_draws, discarded, inflate, method, diverged,
                     worst_rhat if method == "mcmc" else float("nan"))


def uniformity(ranks: np.ndarray, n_draws: int, *, n_bins: int = 20,
               seed: int = 0) -> tuple[float, float]:
    """p-values (chi-square, KS) of the hypothesis that ``ranks`` are uniform on 0..n_draws.

    The chi-square test uses ``n_bins`` bins of equal width in u = (r + U) / (L + 1)
    (exact bins of ranks when L + 1 is a multiple of ``n_bins``); the KS test compares
    u, U ~ Uniform(0, 1) jitter, with Uniform(0, 1).
    """
    ranks = np.asarray(ranks)
    if ranks.min() < 0 or ranks.max() > n_draws:
        raise ValueError(f"ranks must lie in 0..{n_draws}.")
    u = (ranks + np.random.default_rng(seed).random(ranks.size)) / (n_draws + 1)
    if (n_draws + 1) % n_bins == 0:
        bins = ranks * n_bins // (n_draws + 1)
    else:
        bins = np.minimum((u * n_bins).astype(int), n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    return float(stats.chisquare(counts).pvalue), float(stats.kstest(u, "uniform").pvalue)


def summarize(result: SBCResult, *, n_bins: int = 20, level: float = 0.01) -> list[dict]:
    """One row per summary: family, summary, chi2 p, KS p, pass (both p > ``level``)."""
    rows = []
    for name, r in result.ranks.items():
        p_chi2, p_ks = uniformity(r, result.n_draws, n_bins=n_bins)
        rows.append({"family": result.family, "method": result.method, "summary": name,
                     "chi2_p": p_chi2, "ks_p": p_ks, "n_reps": r.size,
                     "n_diverged": result.n_diverged, "max_rhat": result.max_rhat,
                     "pass": bool(min(p_chi2, p_ks) > level)})
    return rows


def format_table(rows: list[dict], *, markdown: bool = False) -> str:
    """Rows of :func:`summarize` as a plain or Markdown table."""
    head = ["family", "method", "summary", "reps", "chi2 p", "KS p", "pass (p > 0.01)"]
    body = [[r["family"], r["method"], r["summary"], str(r["n_reps"]), f"{r['chi2_p']:.3g}",
             f"{r['ks_p']:.3g}", "pass" if r["pass"] else "FAIL"] for r in rows]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    return "\n".join("  ".join(x.ljust(w) for x, w in zip(line, widths, strict=True))
                     for line in [head, *body])


def plot_ranks(result: SBCResult, path: str | Path, *, n_bins: int = 20) -> Path:
    """Rank histograms, one panel per summary, with the 99% band of a uniform histogram.

    The band is the 0.5%..99.5% quantile range of Binomial(n_reps, 1 / n_bins), the
    count of one bin under uniformity.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result.ranks)
    ncols = min(3, len(names))
    nrows = -(-len(names) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.4 * ncols, 2.7 * nrows), squeeze=False)
    n_reps = next(iter(result.ranks.values())).size
    lo, hi = stats.binom(n_reps, 1.0 / n_bins).ppf([0.005, 0.995])
    edges = np.linspace(0, result.n_draws + 1, n_bins + 1)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax, name in zip(axes.flat, names, strict=False):
        ax.axhspan(lo, hi, color="0.85", zorder=0)
        ax.axhline(n_reps / n_bins, color="0.5", lw=1, zorder=1)
        ax.hist(result.ranks[name] + 0.5, bins=edges, color="C0", edgecolor="white", zorder=2)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(f"rank (0..{result.n_draws})")
    for ax in axes[:, 0]:
        ax.set_ylabel("replications")
    tag = "" if result.inflate == 1.0 else f", posterior variance x {result.inflate:g} (wrong)"
    fig.suptitle(f"SBC {result.family} ({result.method}): {n_reps} reps{tag}", fontsize=11)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> list[dict]:
    """Command line: run SBC for one or all families, print the table, write PNGs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--family", choices=sorted(SPECS), nargs="+")
    which.add_argument("--all", action="store_true", help="every conjugate family")
    parser.add_argument("--method", choices=("conjugate", "mcmc"), default="conjugate")
    parser.add_argument("--thin", type=int, default=5, help="MCMC: keep every thin-th draw")
    parser.add_argument("--tune", type=int, default=500, help="MCMC: tuning steps per chain")
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--n-obs", type=int, default=40)
    parser.add_argument("--draws", type=int, default=99)
    parser.add_argument("--bins", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--inflate", type=float, default=1.0,
                        help="scale posterior variance (a deliberately wrong posterior)")
    parser.add_argument("--misspecified", action="store_true",
                        help="draw the truth from another prior than the estimator's "
                             f"(a deliberately wrong SBC; one of {', '.join(MISSPECIFIED)})")
    parser.add_argument("--out", type=Path, default=None, help="folder for rank histograms")
    parser.add_argument("--markdown", type=Path, default=None, help="write the table here")
    args = parser.parse_args(argv)
    names = list(SPECS) if args.all else args.family
    if args.misspecified and args.all:
        parser.error("--misspecified needs --family (one of its controls)")
    rows = []
    for name in names:
        spec = misspecified(name) if args.misspecified else SPECS[name]()
        result = run_sbc(spec, n_reps=args.reps, n_obs=args.n_obs,
                         n_draws=args.draws, seed=args.seed, inflate=args.inflate,
                         method=args.method, thin=args.thin, tune=args.tune)
        rows += summarize(result, n_bins=args.bins)
        print(f"{spec.name} ({args.method}): {args.reps} reps, {result.n_discarded} discarded "
              f"for an empty class; MCMC: {result.n_diverged} with divergences, worst R-hat "
              f"{result.max_rhat:.3f}", flush=True)
        if args.out is not None:
            suffix = "" if args.method == "conjugate" else f"_{args.method}"
            suffix += "" if args.inflate == 1.0 else f"_inflate{args.inflate:g}"
            plot_ranks(result, args.out / f"sbc_{spec.name}{suffix}.png", n_bins=args.bins)
    print(format_table(rows))
    if args.markdown is not None:
        args.markdown.write_text(format_table(rows, markdown=True) + "\n")
    return rows


if __name__ == "__main__":
    main()
