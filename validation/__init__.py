"""Validation studies of bayesgen (not part of the installed package).

- :mod:`validation.sbc`: simulation-based calibration of the conjugate posteriors.
"""
