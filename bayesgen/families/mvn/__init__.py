"""The multivariate normal families of LDA (tied covariance) and QDA (per class).

:mod:`.family` is the full-covariance family (Normal-Inverse-Wishart prior);
:mod:`.diagonal` the diagonal and spherical structures (Inverse-Gamma priors, reusing
the full family's likelihood code); :mod:`.choice` chooses or averages the three by the
evidence (``cov_structure="auto"``/``"average"``). The other modules are the full
family's topics: linear algebra, checks and draws, missing-value patterns and marginals,
EM and data augmentation with gaps, the Normal-Inverse-Wishart evidence, the evidence of
mclust's structures, OAS shrinkage, and the PyMC pieces.
"""
