"""The multivariate normal family of LDA (tied covariance) and QDA (per class).

:mod:`.family` is the family; the other modules are its topics: linear algebra,
checks and draws, missing-value patterns and marginals, EM and data augmentation with
gaps, the Normal-Inverse-Wishart evidence, and the PyMC pieces.
"""
