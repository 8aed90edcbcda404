"""Command line: ``python -m bayesgen demo [--out DIR] [--seed N]`` (also ``bayesgen demo``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesgen", description="Bayesian generative classifiers (LDA, QDA, naive Bayes)."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="compare MLE and MAP fits on scikit-learn's bundled data sets",
        description="Fit LDA, QDA and naive Bayes classifiers with method='mle' and 'map' on "
        "scikit-learn's bundled data sets, print accuracy, log loss, calibration error "
        "and fit time, and write a log-loss plot and the table (CSV) to --out.",
    )
    demo.add_argument(
        "--out",
        default="bayesgen-demo",
        metavar="DIR",
        help="folder for log_loss.png and results.csv (default: %(default)s)",
    )
    demo.add_argument(
        "--seed", type=int, default=0, help="seed of the train/test split (default: %(default)s)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the command and return the exit code."""
    args = _parser().parse_args(argv)
    if args.command == "demo":
        from bayesgen import demo

        demo.main(out=args.out, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
