"""The kernel-density family of KernelNB: :mod:`.family`, its density sums
(:mod:`.kde`), bandwidth estimation, missing entries and PyMC pieces.
"""
