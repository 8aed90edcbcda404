"""The command line and its demo (top layer; internal).

Owns ``python -m bayesgen`` / the ``bayesgen`` script: the demo that fits every
classifier and the scikit-learn models a user would pick instead (:mod:`.peers`) on
scikit-learn's bundled data sets (:mod:`.datasets`) over several splits
(:mod:`.demo`), summarises and states the result (:mod:`.report`) and draws its
figures (:mod:`.figures`).

May import: the public API (:mod:`bayesgen`) and anything below it. Nothing imports it
except :mod:`bayesgen.__main__`.
"""
