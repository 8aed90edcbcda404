"""Finite mixtures per class: p(x | y = k) = sum_m w_km f(x | theta_km).

Each class density is a mixture of components of a conjugate family (the Gaussian
families of LDA/QDA: :class:`bayesgen.families.mvn.family.MVNFamily` and its diagonal
form; BernoulliNB's and PoissonNB's families for binary and count data), with
Dirichlet weights. The component family is used only through its public hooks
(``param_dims``, ``stats``, ``prior``, ``map``, ``posterior``,
``conditional_posterior``, ``draw``, ``log_lik``, ``log_predictive``, ``log_prior``,
``sample``, ``to_user``): a component is a "class" of the component family fitted with
the rows' responsibilities as weights.

- :mod:`.family`: :class:`~.family.MixtureFamily`, the family protocol for a mixture
  (padded (class, component) parameters; the mixture log-density).
- :mod:`.em`: EM for the posterior mode (MAP) of one class's mixture, k-means++ starts,
  BIC.
- :mod:`.predictive`: the conditional posterior predictive at the EM mode (each
  component's conjugate posterior of its responsibility-weighted rows; Student-t).
- :mod:`.gibbs`: data augmentation (component labels, then the conjugate update) and
  the relabeling of draws against a pivot.
- :mod:`.pymc`: the PyMC model with the component labels marginalised (``model_``, and
  the per-row likelihood and start of ``method="mcmc"``'s NUTS).

May import: :mod:`bayesgen.families` (the component families' modules through their
instances), :mod:`bayesgen.data`, :mod:`bayesgen.utils`.
"""
