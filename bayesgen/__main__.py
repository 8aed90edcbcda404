"""Command line: ``python -m bayesgen [--version] demo [--out DIR] [--seed N] [--splits S]
[--nuts {one,all,none}] [--no-progress]`` (also ``bayesgen ...`` once installed).

Parsing the arguments, ``--help`` and ``--version`` import nothing beyond the standard
library and the ``bayesgen`` package itself: the demo's modules (scikit-learn, PyMC,
JAX, matplotlib) are imported only when the ``demo`` command runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

DESCRIPTION = """\
bayesgen: Bayesian generative classifiers (LDA, QDA and Gaussian, Bernoulli,
multinomial, categorical, Poisson, mixed and kernel naive Bayes), scikit-learn
compatible, fitted by maximum likelihood ("mle"), posterior mode ("map"), exact
conjugate posterior draws ("conjugate") or PyMC NUTS ("mcmc").

The command line runs the demo; the library is used from Python
(import bayesgen as bg; bg.QDA(method="conjugate").fit(X, y))."""

DEMO_DESCRIPTION = """\
Fit bayesgen's classifiers and the scikit-learn models a user would pick instead on
scikit-learn's bundled data sets (no download), on one stratified 70/30 split by
default (--splits 5: five, with standard deviations), and score them on the
held-out rows:

  breast cancer             LDA, QDA, GaussianNB   mle, map, conjugate
  wine                      LDA, QDA               mle, map, conjugate
                            GaussianNB             mle, map, conjugate, mcmc
  breast cancer, 20/class   LDA, QDA, GaussianNB   mle, map, conjugate
  digits (counts 0-16)      MultinomialNB,         mle, map, conjugate
                            BernoulliNB(binarize=7)

and on the first three StackedClassifier (conjugate): LDA with and without
evidence-shrunk class means, QDA, QDA with the isotropic target, QDA with spherical
class covariances and the class frequencies, their posterior predictives stacked by
exact leave-one-out. NUTS ("mcmc", 4 chains x (1000 tuning steps + 1000 draws))
samples GaussianNB on wine only: --nuts all samples LDA and QDA on wine
too, --nuts none skips it.

scikit-learn peers on the same splits: LinearDiscriminantAnalysis(solver="lsqr",
shrinkage="auto"); QuadraticDiscriminantAnalysis on standardised features with
reg_param or shrinkage chosen by cross-validation; GaussianNB(); LogisticRegression
on standardised features with C chosen by cross-validation; on digits
MultinomialNB(alpha=1), BernoulliNB(alpha=1, binarize=7) and the logistic regression.

It prints a table (accuracy, log loss and expected calibration error, as mean and
standard deviation when there are several splits, the median time of fit +
predict_proba, convergence of the posterior draws, notes such as QDA's singular MLE
with 20 rows per class), then which model has the lowest log loss on each data set
and where bayesgen loses, and writes to DIR:

  results.csv             one row per model and split
  summary.csv             the table: mean and standard deviation over the splits
  log_loss.png            held-out log loss by data set, classifier and method
  reliability.png         calibration on breast cancer with 20 training rows per
                          class: LDA's MAP and posterior predictive, QDA's posterior
                          predictive, scikit-learn's shrinkage LDA and logistic
                          regression, pooled over the splits
  decision_regions.png    QDA's posterior on wine's first two features, fitted on
                          the training rows of the first split, with the MLE and MAP
                          boundaries and the held-out rows

How long it takes on 2 cores, imports and compiling NUTS included (CPU time,
measured on a busy machine; on an idle one the wall time is about the same or less):
about 35 s with the defaults, of which about 13 s for the NUTS fit (mostly compiling
it); --splits 5 about 95 s; --splits 5 --nuts all about 320 s. A progress bar on
standard error shows the fit under way (in a terminal or a notebook)."""


def _version() -> str:
    """``bayesgen.__version__`` (the package is already imported to run this module)."""
    import bayesgen

    return bayesgen.__version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesgen",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run 'bayesgen demo --help' for the demo's options.",
    )
    parser.add_argument(
        "--version", action="version", version=f"bayesgen {_version()}",
        help="print 'bayesgen <version>' and exit",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="fit MLE, MAP, exact-posterior and NUTS classifiers on bundled data sets "
        "and write a table and plots (about 35 s on 2 cores)",
        description=DEMO_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Example: bayesgen demo --out results --seed 1 --splits 5 --nuts all",
    )
    demo.add_argument(
        "--out",
        default="bayesgen-demo",
        metavar="DIR",
        help="folder for results.csv, summary.csv and the three PNG plots; created if missing "
        "(default: %(default)s)",
    )
    demo.add_argument(
        "--seed", type=int, default=0, metavar="N",
        help="seed of the first train/test split, its 20/class subsample and its "
        "posterior draws; split i uses N + i (default: %(default)s)",
    )
    demo.add_argument(
        "--splits", type=int, default=1, metavar="S",
        help="number of train/test splits the scores are averaged over; with more than "
        "one the table gives standard deviations (default: %(default)s)",
    )
    demo.add_argument(
        "--nuts", choices=("one", "all", "none"), default="one",
        help="which models NUTS samples, on wine: 'one' GaussianNB, 'all' LDA, QDA and "
        "GaussianNB (slower: each compiles its own program), 'none' (default: "
        "%(default)s)",
    )
    demo.add_argument(
        "--no-progress", action="store_true",
        help="no progress bar (by default one is drawn on standard error in a terminal "
        "or a notebook, never into a file or a pipe)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the command and return the exit code."""
    args = _parser().parse_args(argv)
    if args.command == "demo":
        from bayesgen.cli import demo

        demo.main(out=args.out, seed=args.seed, n_splits=args.splits, nuts=args.nuts,
                  progress=False if args.no_progress else "auto")
    return 0


if __name__ == "__main__":
    sys.exit(main())
