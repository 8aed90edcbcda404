"""Command line: ``python -m bayesgen [--version] demo [--out DIR] [--seed N]``
(also ``bayesgen ...`` once installed).

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
Fit classifiers on scikit-learn's bundled data sets (70/30 stratified split; no
download) and score them on the held-out rows:

  breast cancer             LDA, QDA, GaussianNB   mle, map, conjugate
  wine                      LDA, QDA, GaussianNB   mle, map, conjugate, mcmc
  breast cancer, 20/class   LDA, QDA, GaussianNB   mle, map, conjugate
  digits (counts 0-16)      MultinomialNB,         mle, map, conjugate
                            BernoulliNB(binarize=7)

It prints a table (accuracy, log loss, expected calibration error, fit +
predict_proba time, convergence of the posterior draws, notes such as QDA's
singular MLE with 20 rows per class) and writes to DIR:

  results.csv             the table
  log_loss.png            held-out log loss by data set, classifier and method
  reliability.png         calibration of QDA's methods on wine
  decision_regions.png    QDA's posterior on wine's first two features, with the
                          MLE and MAP boundaries

It takes about a minute; most of it is NUTS (method="mcmc") on wine, which
compiles a JAX program the first time."""


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
        "and write a table and plots",
        description=DEMO_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Example: bayesgen demo --out results --seed 1",
    )
    demo.add_argument(
        "--out",
        default="bayesgen-demo",
        metavar="DIR",
        help="folder for results.csv and the three PNG plots; created if missing "
        "(default: %(default)s)",
    )
    demo.add_argument(
        "--seed", type=int, default=0, metavar="N",
        help="seed of the train/test split, the 20/class subsample and the posterior "
        "draws (default: %(default)s)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the command and return the exit code."""
    args = _parser().parse_args(argv)
    if args.command == "demo":
        from bayesgen.cli import demo

        demo.main(out=args.out, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
