"""What users do with a fit: uncertainty, conformal sets, abstention, active learning.

Owns the decisions taken from a fitted classifier's predictive distribution (public as
``bayesgen.decompose_uncertainty``, ``bayesgen.acquisition_scores``,
``bayesgen.select_queries`` and as the estimator methods ``predict_uncertainty``,
``predict_set`` and ``predict``'s reject option, thin wrappers in
:mod:`bayesgen.estimators`):

- :mod:`.uncertainty`: per row, total predictive entropy = aleatoric (expected
  entropy) + epistemic (mutual information between the label and the parameters);
- :mod:`.conformal`: conformal prediction sets with finite-sample marginal coverage
  (split conformal for every fit; a no-split version from the closed-form exact
  leave-one-out predictive of conjugate posteriors; class-conditional option);
- :mod:`.reject`: Chow's reject rule under the loss matrix or a coverage target,
  risk-coverage curves;
- :mod:`.active`: ranking an unlabeled pool for labeling (BALD, entropy, margin,
  random) and batch selection without near-duplicates.

Functions take a fitted estimator and rows; they read its fitted state through the
inference layer and keep nothing.

May import: :mod:`bayesgen.plots`, :mod:`bayesgen.inference`, :mod:`bayesgen.families`,
:mod:`bayesgen.data`, :mod:`bayesgen.utils`, :mod:`bayesgen.exceptions`. Not its peers
(:mod:`bayesgen.diagnostics`, :mod:`bayesgen.semi`, :mod:`bayesgen.scale`). Imported
only by :mod:`bayesgen.estimators` and :mod:`bayesgen`.
"""
