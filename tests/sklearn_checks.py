"""What the scikit-learn estimator checks run on (tests/test_estimator_checks*.py): the
estimators with ``method="map"`` and ``method="conjugate"`` (KernelNB has no conjugate
prior), the stacks, and the expected failures, each with the reason scikit-learn's check
cannot apply and the test beside it that checks what the check means.

The checks are in three files so that pytest-xdist (``--dist loadfile``) runs them on
different workers: ``test_estimator_checks.py`` (``method="map"``, the stacks, and the
tests of what the expected failures mean), ``test_estimator_checks_conjugate.py`` and
``test_estimator_checks_mcmc.py``.
"""

import bayesgen as bg
from bayesgen.estimators.stacking import default_estimators

_NEGATIVE_BLOBS = (
    "the check scores make_blobs data that contain negative values and does not apply the "
    "positive_only input tag these estimators declare (scikit-learn's own positive-only "
    "classifiers, MultinomialNB and CategoricalNB, have no decision_function, so they "
    "never meet this check), and negative values are outside the support of a count, "
    "duration or category likelihood; test_positive_only_tag checks the tag and "
    "test_decision_function_ranks_as_predict_proba runs this check on data in the support"
)
_NOT_CODES = (
    "the check draws real-valued X and does not apply the categorical input tag "
    "CategoricalNB declares, and real values are not category codes: CategoricalNB "
    "refuses them with a ValueError naming OrdinalEncoder (scikit-learn's CategoricalNB "
    "truncates them to integers silently); test_categorical_checks_on_codes runs the "
    "check's logic on category codes"
)
_NAN_AT_FIT_ONLY = (
    "the stack predicts with missing entries (its members integrate them out), but "
    "members such as LDA, QDA and MultinomialNB have no exact leave-one-out with missing "
    "entries, so fit refuses NaN (a ValueError naming it) while predict accepts it: "
    "scikit-learn's single allow_nan tag cannot say 'missing values at predict, not at "
    "fit'; the fit half of the check is test_stack_fit_refuses_nan_and_inf, and "
    "test_stack_allow_nan_tag_is_what_fit_does checks the tag"
)
_FEW_DRAWS = {"draws": 20, "chains": 1}  # exact i.i.d. draws; predictions are closed-form
_MCMC_WEIGHTS = (
    "weights and repeated rows give sufficient statistics equal up to rounding, but NUTS "
    "trajectories amplify rounding-level differences (the chains diverge), so the two "
    "fits' Monte Carlo estimates differ by Monte Carlo error, far above the check's 1e-7; "
    "the exact conjugate posterior passes this check"
)

ALL = [bg.LDA, bg.QDA, bg.GaussianNB, bg.BernoulliNB, bg.MultinomialNB, bg.CategoricalNB,
       bg.PoissonNB, bg.ExponentialNB, bg.KernelNB, bg.MixedNB]
SUPPORT_LIMITED = (bg.MultinomialNB, bg.PoissonNB, bg.ExponentialNB, bg.CategoricalNB)


def _make(cls, method: str, **extra):
    kw = {"method": method, "random_state": 0, **extra}
    if method == "conjugate":
        kw.update(_FEW_DRAWS)
    if cls is bg.MixedNB:
        kw["families"] = "auto"  # each column's family from its dtype
    return cls(**kw)


def _stacks():
    """The stack at its defaults, and two whose tags come from other members: missing
    entries and positive X (GaussianNB, ExponentialNB), sparse positive counts
    (PoissonNB, MultinomialNB)."""
    few = {"method": "conjugate", "random_state": 0, **_FEW_DRAWS}
    return [bg.StackedClassifier(),
            bg.StackedClassifier([("gnb", bg.GaussianNB(**few)),
                                  ("exp", bg.ExponentialNB(**few))]),
            bg.StackedClassifier([("pois", bg.PoissonNB(**few)),
                                  ("mult", bg.MultinomialNB(**few))])]


def _checked_stacks():
    """The stacks that run every scikit-learn check (tests/test_estimator_checks.py):
    the default members but ``lda_shrunk_means``, and the two stacks of :func:`_stacks`
    with other members.

    The default stack itself runs one check, ``check_classifiers_train``
    (``test_default_stack_passes_check_classifiers_train``): its ``lda_shrunk_means``
    member chooses its mean strength by the evidence at every leave-one-out row, which
    made the default stack's ~60 checks about a fifth of the whole test run. Without that
    member the stack runs the same code (the stack treats every member alike through its
    fit, leave-one-out and predict_proba) with the same tags (checked by
    ``test_checked_stack_has_the_default_stacks_tags``); LDA's checks run at the default
    mean strength, and tests/test_prior_search.py tests the evidence's choice of it.
    """
    members = [(name, est) for name, est in default_estimators()
               if name != "lda_shrunk_means"]
    return [bg.StackedClassifier(members), *_stacks()[1:]]


def _map_instances():
    return [_make(cls, "map") for cls in ALL]


def _conjugate_instances():
    return [_make(cls, "conjugate") for cls in ALL if cls is not bg.KernelNB]


def _mixture_instances():
    """MixtureDA (methods "map" and "gibbs", no conjugate posterior), with fewer
    candidates and starts than its defaults (the checks test the API): checked in
    tests/test_mixture_da.py."""
    return [bg.MixtureDA(max_components=3, n_init=2, random_state=0),
            bg.MixtureDA(method="gibbs", max_components=2, n_init=1, draws=20, tune=10,
                         chains=2, random_state=0)]


def _instances():
    return _map_instances() + _conjugate_instances() + _stacks() + _mixture_instances()



def _expected_failures(estimator):
    failures = {}
    if isinstance(estimator, bg.StackedClassifier):
        from sklearn.utils import get_tags

        if not get_tags(estimator).input_tags.allow_nan:
            failures["check_estimators_nan_inf"] = _NAN_AT_FIT_ONLY
        return failures
    if isinstance(estimator, SUPPORT_LIMITED):
        failures["check_decision_proba_consistency"] = _NEGATIVE_BLOBS
    if isinstance(estimator, bg.CategoricalNB):
        failures["check_sample_weight_equivalence_on_dense_data"] = _NOT_CODES
        failures["check_classifiers_one_label_sample_weights"] = _NOT_CODES
    if estimator.method == "mcmc":
        failures["check_sample_weight_equivalence_on_dense_data"] = _MCMC_WEIGHTS
    return failures
