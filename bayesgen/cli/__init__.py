"""The command line and its demo (top layer; internal).

Owns ``python -m bayesgen`` / the ``bayesgen`` script: the demo that fits every
classifier on scikit-learn's bundled data sets and writes its table and figures.

May import: the public API (:mod:`bayesgen`) and anything below it. Nothing imports it
except :mod:`bayesgen.__main__`.
"""
