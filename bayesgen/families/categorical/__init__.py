"""The categorical family of CategoricalNB: :mod:`.family` and its PyMC
pieces.
"""
