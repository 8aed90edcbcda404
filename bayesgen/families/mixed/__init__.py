"""MixedNB's family: disjoint column groups, each with its own family
(:mod:`.family`), their specification and their PyMC pieces.
"""
