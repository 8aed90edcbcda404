"""The scikit-learn estimator shared by every classifier.

A classifier is a class prior pi plus one likelihood *family* (see
:mod:`bayesgen.families`). This base class does the bookkeeping that is the same for
all of them: input validation, label encoding, sufficient statistics, dispatch on
``method``, the Bayes rule in log space, loss-based decisions and sampling from the
fitted generative model. Subclasses only say which family they use.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from bayesgen.data import missing
from bayesgen.data.validation import (
    POSTERIOR_METHODS,
    check_concentration,
    check_loss,
)
from bayesgen.estimators import streaming
from bayesgen.estimators.params import check_params
from bayesgen.estimators.sklearn_names import checked_init
from bayesgen.inference import (
    classprior,
    conjugate,
    density,
    evidence,
    loglik,
    posterior,
    predictive,
    rows,
    sampling,
    scoring,
    statistics,
)
from bayesgen.inference.fitted import Fit
from bayesgen.scale import dask_input
from bayesgen.semi import unlabeled
from bayesgen.utils.deprecation import DEFAULT_CONFIDENCE_LEVEL, DEPRECATED
from bayesgen.utils.heavy import import_arviz
from bayesgen.utils.logspace import decide, normalise, normalised_proba
from bayesgen.utils.threads import jobs, no_spin


def predicting(kind: str, **dask_options: Callable[[Any], Any]) -> Callable:
    """Decorate a predict method ``method(self, X, *args)``: Dask X gives the lazy Dask
    result (:func:`bayesgen.scale.dask_input.predict_lazily` of kind ``kind``, with
    ``dask_options`` computed from the estimator); in-memory X runs the method with the
    estimator's ``n_jobs`` threads (:func:`bayesgen.utils.threads.jobs`), X scanned once
    (:func:`bayesgen.data.missing.scan_scope`)."""
    def decorate(method: Callable) -> Callable:
        @functools.wraps(method)
        def run(self, X: Any, *args: Any, **kwargs: Any):
            if dask_input.is_dask(X):  # a lazy Dask array, computed chunk by chunk
                check_is_fitted(self, "_params")
                return dask_input.predict_lazily(
                    self, method.__name__, X, kind, args, kwargs,
                    **{k: option(self) for k, option in dask_options.items()})
            with jobs(getattr(self, "n_jobs", None)), missing.scan_scope():
                return method(self, X, *args, **kwargs)
        return run
    return decorate


class GenerativeClassifier(ClassifierMixin, BaseEstimator):
    """Base class: y ~ Categorical(pi), pi ~ Dirichlet(class_alpha), x | y ~ family.

    Subclasses define ``_make_family(self, columns=None)``, returning a configured
    family object (``columns``: the record of the training columns,
    :class:`bayesgen.data.tables.Columns`, given at fit time only), and set
    ``_methods`` (the ``method`` values they support).
    """

    _methods: tuple[str, ...] = ("mle", "map", "conjugate", "mcmc")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap each subclass's own ``__init__`` so that a scikit-learn-only or unknown
        parameter name is a ``TypeError`` naming the public estimator and the bayesgen
        equivalent (:mod:`bayesgen.estimators.sklearn_names`)."""
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = checked_init(cls.__dict__["__init__"])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        family = self._make_family()
        caps = family.capabilities
        tags.input_tags.positive_only = bool(family.positive_only)
        tags.classifier_tags.poor_score = caps.poor_score
        tags.input_tags.sparse = caps.sparse
        tags.input_tags.allow_nan = caps.missing
        # X holds category codes (CategoricalNB; not a MixedNB with a categorical part,
        # whose other columns are real): scikit-learn's checks then pass integer codes
        tags.input_tags.categorical = caps.learns_categories and not caps.composite
        return tags

    # -------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None):
        """Fit the generative model.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)
            Or a Dask array / DataFrame (also y, sample_weight): fitted from per-chunk
            statistics by a tree reduction on the active scheduler (``bayesgen.scale.dask_input``).
        y : array-like of shape (n,)
            Class labels (any hashable values, strings included).
        sample_weight : array-like of shape (n,), optional
            Non-negative weights. For ``"map"``, ``"conjugate"`` and ``"mcmc"`` a weight
            is a replication count (weight 2 is a duplicated row; the prior weighs
            against the total weight). ``"mle"`` depends only on relative weights: a
            common factor changes nothing.

        Returns
        -------
        self
        """
        if dask_input.is_dask(X, y, sample_weight):  # tree reduction of per-chunk statistics
            return streaming.fit_dask(self, X, y, sample_weight)
        method = self._check_params()
        family, batch = statistics.read_batch(self, X, y, sample_weight, method,
                                              make_family=streaming.make_family)
        self._columns = batch.columns
        self._fit_batch(method, family, batch)  # unlabeled rows: bayesgen.semi
        rows.keep_weights(self, batch.weights)  # with the rows a posterior fit kept, if any
        return self

    def partial_fit(self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None):
        """Update the model with one batch of rows (scikit-learn's ``partial_fit``).

        The batch's statistics are added to the earlier ones and the model is refitted
        from the sum, so any sequence of batches equals one ``fit`` on their
        concatenation (to rounding; ``"mcmc"`` re-runs NUTS after every batch: stream
        with a point method or "conjugate" and set ``method="mcmc"`` before the last
        batch). Memory is that of the statistics (KernelNB keeps every point). The model
        keeps no rows (:mod:`bayesgen.estimators.streaming`). Until statistics allow a
        fit (``"mle"`` or KernelNB with a class not seen yet, QDA's MLE with fewer than
        d + 1 rows in a class) they are kept with a ``DataWarning`` and the estimator
        stays unfitted.

        Parameters
        ----------
        X : array-like, DataFrame, or Dask array / DataFrame of shape (n, d)
        y : array-like of shape (n,)
            Labels, each one of ``classes``; a batch may hold any subset of them.
        classes : array-like of shape (K,), optional
            Every label of the stream; required on the first call, later None or the same.
        sample_weight : array-like of shape (n,), optional
            As in ``fit``.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``classes`` missing or changed, an unknown label, other features or column
            dtypes than earlier batches, or an invalid row; the estimator is unchanged.
        """
        return streaming.partial_fit(self, X, y, classes, sample_weight)

    def _fit_batch(self, method: str, family, batch) -> None:
        """The second half of ``fit``: :meth:`_fit_statistics`, or a semi-supervised fit
        when the batch has unlabeled rows (:mod:`bayesgen.semi.unlabeled`)."""
        unl = batch.unlabeled
        for stale in ("n_iter_", "em_objective_", "unlabeled_X_", "n_unlabeled_"):
            self.__dict__.pop(stale, None)  # from an earlier fit
        train = (batch.X, batch.y_index)
        if unl is None:
            with no_spin() if method in ("mle", "map") else nullcontext():  # d x d algebra
                self._fit_statistics(method, family, batch.classes, batch.stats,
                                     batch.counts, train=train)
            return
        from bayesgen.semi import augmentation, em, kernel, nuts

        unlabeled.check_labeled(batch.counts, batch.classes)
        self.n_unlabeled_ = int(unl.Z.shape[0])  # set only when there are some
        lam = unlabeled.check_weight(self.unlabeled_weight, method)
        start = em.start_stats(family, batch, lam)
        # the prior resolved from all rows, given to every fit below (None: lambda = 0)
        prior = em.resolve_prior(self, family, batch, start, lam)
        if method == "mcmc":  # NUTS with the unlabeled rows' mixture likelihood
            self._fit_statistics(method, family, batch.classes, start, batch.counts,
                                 train=train, prior=prior,
                                 extra=nuts.extra_likelihood(unl.Z, unl.w, lam))
            return
        if method == "conjugate" and lam > 0.0:
            augmentation.check_supported(self, family, batch.stats, unl.Z)
        kernel_em = family.capabilities.kernel_density
        try:  # the labeled-only fit: every fitted attribute, and where EM / chains start
            self._fit_statistics(method, family, batch.classes, start, batch.counts,
                                 train=train, prior=prior)
        except ValueError:
            if method != "mle" or lam == 0.0 or kernel_em:
                raise
            # too few labeled rows for the MLE (e.g. QDA with N_k <= d): start at the MAP
            self._fit_statistics("map", family, batch.classes, start, batch.counts,
                                 train=train, prior=prior)
        if method == "conjugate":
            if lam > 0.0:
                self._store_augmentation(augmentation.run(
                    self._fitted(), batch, lam, self.tune, self.random_state))
            return
        result = (kernel.run if kernel_em else em.run)(self._fitted(), method, family,
                                                       batch, lam)
        if result.params is not None:  # EM's estimates replace the labeled-only fit's
            self._stats, self.class_count_ = result.stats, result.counts
            self._params = result.params
            self._set_point_attributes(result.pi, result.params)
            self._after_fit()
        self.n_iter_, self.em_objective_ = result.n_iter, result.objective

    def _store_augmentation(self, result) -> None:
        """The posterior of data augmentation (:class:`bayesgen.semi.augmentation.Result`)
        in place of the labeled-only one: draws, ``idata_`` and the point attributes."""
        self._posterior, self.class_count_ = result.posterior, result.counts
        self._store_draws(result.log_pi, result.params, {"lp": result.lp})
        self._after_fit()

    def _check_params(self) -> str:
        """Validate the constructor parameters (:func:`.params.check_params`) and return
        the method of the coming fit; streaming and Dask fits call it too."""
        return check_params(self)

    def _fit_statistics(self, method: str, family, classes: np.ndarray, stats: dict,
                        counts: np.ndarray, train: tuple | None, extra=None,
                        prior: dict | None = None) -> None:
        """Fit from sufficient statistics: prior, then MLE/MAP, conjugate draws or NUTS.

        ``train``: ``(X, y_index)`` of the training rows, or None (streamed, merged or
        Dask fits). ``extra``: an :class:`bayesgen.inference.model.ExtraLikelihood` for
        ``"mcmc"``, or None. ``prior``: a resolved prior to use instead of
        ``family.prior(stats)`` (:func:`bayesgen.semi.em.resolve_prior`), or None.
        """
        n_classes = classes.size
        class_alpha = check_concentration(self.class_alpha, n_classes, "class_alpha", "class")
        self._fixed_pi = classprior.check_fixed(getattr(self, "class_prior", None), n_classes)
        self._loss = check_loss(getattr(self, "loss", None), n_classes)
        # from an earlier fit (``_train``, ``_train_weights``: files of earlier versions)
        for stale in ("idata_", "_posterior", "_log_pi_draws", "_train", "_train_weights"):
            self.__dict__.pop(stale, None)
        self.method_ = method  # what predictions follow, whatever set_params does later
        self.classes_ = classes
        self.class_count_ = counts
        self._model = None  # model_, built on first access from the kept rows
        family = family.learned(stats)  # e.g. the categories of a categorical family
        self._family = family
        self._frame = scoring.frame_of(family)  # the internal coordinates' frame
        self._stats = stats
        self._prior = family.prior(stats) if prior is None else prior
        self.class_alpha_ = class_alpha
        if method == "conjugate":  # i.i.d. draws, or data augmentation (missing entries)
            log_pi, params, self._posterior, sample_stats = conjugate.fit(
                self._fitted(), counts, class_alpha)
            self._hyper_draws = {}
            self._store_draws(log_pi, params, sample_stats, train)
        elif method in POSTERIOR_METHODS:
            from bayesgen.inference import mcmc

            log_pi, params, sample_stats, self._hyper_draws = mcmc.sample_posterior(
                self, self._fitted(), extra)
            self._store_draws(log_pi, params, sample_stats, train)
        else:
            params = family.mle(stats) if method == "mle" else family.map(stats, self._prior)
            self._params = params
            log_pi = classprior.log_point(method, counts, class_alpha, self._fixed_pi)
            self._set_point_attributes(np.exp(log_pi), params, log_pi=log_pi)
        self._after_fit()

    def _after_fit(self) -> None:
        """Hook for attributes derived from the fitted model (LDA's projection)."""

    def _set_point_attributes(self, pi: np.ndarray, params: dict, *,
                              log_pi: np.ndarray | None = None) -> None:
        """``class_prior_``, ``class_log_prior_`` (``log_pi`` when given: it stays
        finite where pi underflows) and the family's attributes."""
        self.class_prior_ = pi
        if log_pi is None:
            with np.errstate(divide="ignore"):
                log_pi = np.log(pi)
        self.class_log_prior_ = log_pi
        fit = self._fitted()
        attributes = {**fit.family.attributes(scoring.user_params(fit, params)),
                      **fit.family.stats_attributes(fit.stats)}
        scoring.check_user_attributes(fit, attributes)
        for name, value in attributes.items():
            setattr(self, name, value)

    def _store_draws(self, log_pi: np.ndarray, params: dict, sample_stats,
                     train: tuple | None = None) -> None:
        """The posterior draws as ``_log_pi_draws``, ``_params``, ``idata_`` (Markov chains,
        ``sample_stats`` not None: checked for convergence) and the point attributes (the
        posterior means)."""
        self._params, self._log_pi_draws = params, log_pi
        self._build_idata(sample_stats, train)
        if sample_stats is not None:  # NUTS or data augmentation: Markov chains
            from bayesgen.inference import mcmc

            mcmc.warn_if_not_converged(self.idata_, self._var_names(), type(self).__name__)
        mean = posterior.posterior_mean(params, self._family.param_dims)
        self._set_point_attributes(classprior.mean(log_pi, self._fixed_pi), mean)

    def _posterior_size(self) -> tuple[int, int]:
        """(chains, draws): of the fitted posterior (``idata_``) once there is one, so
        that ``set_params`` changes the next fit only; else the validated parameters."""
        idata = vars(self).get("idata_")
        if "_log_pi_draws" in vars(self) and idata is not None and "posterior" in idata.groups():
            sizes = idata.posterior.sizes
            return int(sizes["chain"]), int(sizes["draw"])
        for name in ("draws", "chains"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}.")
        return int(self.chains), int(self.draws)

    def _feature_names(self) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(n) for n in names]
        return [f"x{j}" for j in range(self.n_features_in_)]

    def _build_idata(self, sample_stats, train: tuple | None = None) -> None:
        """``idata_`` of the posterior draws, with the rows ``train`` ``(X, y_index)`` or
        those kept (:mod:`bayesgen.inference.rows`, :mod:`bayesgen.inference.loglik`)."""
        if train is None:
            kept = rows.kept(self)
            train = None if kept is None else (kept.X, kept.y)
        # the draws' shape: of the parameters, not of an idata_ about to be replaced
        self.__dict__.pop("idata_", None)
        chains, draws = self._posterior_size()
        family = self._family
        coords = posterior.coords_for(self.classes_, self._feature_names(), family, self._params)
        # None: no rows (fitted from statistics) or too large for fit time, see loglik
        log_lik = None if train is None else loglik.at_fit(self._fitted(), *train)
        X, y_index = (None, None) if train is None else train  # rows: kept at every n
        self.idata_ = posterior.build_idata(
            log_pi=self._log_pi_draws, params=scoring.user_params(self._fitted(), self._params),
            param_dims=family.param_dims,
            chains=chains, draws=draws, coords=coords, log_lik=log_lik, X=X, y=y_index,
            sample_stats=sample_stats,
            attrs={"bayesgen_estimator": type(self).__name__, "bayesgen_method": self.method_},
        )
        hyper = vars(self).get("_hyper_draws") or {}
        if hyper:  # sampled hyper-parameters (LDA/QDA "sample"): scalars per draw
            self.idata_.posterior = self.idata_.posterior.assign(
                {name: (("chain", "draw"), value) for name, value in hyper.items()})

    # ------------------------------------------------------------ prediction
    def _check_X_predict(self, X: Any) -> np.ndarray:
        return statistics.validate_predict(self, X)  # NaN: a missing value

    def _scores(self, X: np.ndarray, full: bool) -> np.ndarray:
        """log p(x, y=k) (full=True) or the discriminant scores (full=False), (n, K);
        posterior methods: the posterior predictive joint (:func:`.scoring.scores`)."""
        return scoring.scores(self._fitted(), X, full)

    @predicting("proba")
    def predict_joint_log_proba(self, X: Any) -> np.ndarray:
        """log p(x, y=k) for every row and class, shape (n, K).

        Point methods: plug-in log pi_k + log p(x | theta_k). Posterior methods: the
        posterior predictive log p(x, y=k | data), in closed form for
        ``method="conjugate"`` and estimated with log-mean-exp over draws for "mcmc".
        """
        return self._scores(self._check_X_predict(X), full=True)

    @predicting("decision")
    def decision_function(self, X: Any) -> np.ndarray:
        """Discriminant functions delta_k(x): log p(x, y=k) up to terms equal across classes.

        For LDA ``x^T Sigma^-1 mu_k - mu_k^T Sigma^-1 mu_k / 2 + log pi_k``; for QDA
        ``-log|Sigma_k|/2 - (x - mu_k)^T Sigma_k^-1 (x - mu_k)/2 + log pi_k``; for
        posterior methods the posterior predictive log p(x, y=k | data).
        Returns (n, K), or (n,) = delta_1 - delta_0 for two classes (as scikit-learn).
        """
        X = self._check_X_predict(X)
        scores = self._scores(X, full=False)
        if scores.shape[1] == 2:
            impossible = np.isneginf(scores).all(axis=1)  # as predict_proba: the prior
            with np.errstate(invalid="ignore"):
                diff = scores[:, 1] - scores[:, 0]
            diff[impossible] = self.class_log_prior_[1] - self.class_log_prior_[0]
            return diff
        return scoring.user_discriminant(self._fitted(), X, scores)

    @predicting("proba")
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """log p(y=k | x), (n, K), normalised with log-sum-exp. Never NaN.

        Posterior methods: the log posterior predictive, i.e. the posterior mean of the
        joint p(x, y=k | theta) normalised over classes (not a mean of per-draw
        conditionals); exact for ``method="conjugate"``.
        """
        scores = self._scores(self._check_X_predict(X), full=False)
        return normalise(scores, self.class_log_prior_, type(self).__name__,
                         advice=self._zero_likelihood_advice())

    @predicting("proba")
    def predict_proba(self, X: Any) -> np.ndarray:
        """p(y=k | x), (n, K); rows sum to 1, columns in the order of ``classes_``."""
        scores = self._scores(self._check_X_predict(X), full=False)
        return normalised_proba(scores, self.class_log_prior_, type(self).__name__,
                                overwrite=True, advice=self._zero_likelihood_advice())

    def _zero_likelihood_advice(self) -> str | None:
        """What removes zero fitted probabilities for this fit
        (:func:`bayesgen.inference.scoring.zero_likelihood_advice`)."""
        return scoring.zero_likelihood_advice(self.method_, getattr(self, "alpha", None))

    score = dask_input.score

    @predicting("score")
    def score_samples(self, X: Any) -> np.ndarray:
        """log p(x) = log sum_k p(x, y=k), (n,): the density of x (posterior predictive
        for posterior methods; missing entries integrated out), for novelty detection
        (see :mod:`bayesgen.inference.density`)."""
        return density.log_marginal(self._scores(self._check_X_predict(X), full=True))

    def log_marginal_likelihood(self, X: Any = None, y: Any = None,
                                sample_weight: Any = None) -> float:
        """Exact log p(X, y) of the training data under the prior (conjugate families;
        formulas and conventions in :mod:`bayesgen.inference.evidence`).

        Parameters
        ----------
        X, y, sample_weight : optional
            The training rows, needed only for count features (MultinomialNB,
            PoissonNB, MixedNB with such parts: the multinomial coefficient and log x!
            terms are sums over rows) when the fit did not keep them.
        """
        return evidence.log_marginal_likelihood(self, X, y, sample_weight)

    @predicting("label")
    def _predict_labels(self, X: Any) -> np.ndarray:
        """``predict`` without a reject option (Dask X: a lazy array)."""
        proba = self.predict_proba(X)  # first: NotFittedError before fit
        return self.classes_[decide(proba, self._loss)]

    def predict(self, X: Any, *, reject_cost: float | None = None,
                coverage: float | None = None, reject_label: Any = None) -> np.ndarray:
        """The Bayes decision: most probable class, or minimum expected ``loss``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)
        reject_cost : float, optional
            Reject option by Chow's rule: abstain on a row when the expected loss of
            its best decision exceeds ``reject_cost`` (0-1 loss without ``loss``:
            when the largest class probability is below ``1 - reject_cost``).
        coverage : float in (0, 1], optional
            Reject option by a coverage target: answer the ``ceil(coverage * n)`` rows
            of X with the smallest expected loss, abstain on the others. At most one
            of ``reject_cost`` and ``coverage`` (:mod:`bayesgen.decide.reject`).
        reject_label : optional
            The label of abstentions; default: a ``numpy.ma.MaskedArray`` whose masked
            entries are the abstentions.

        Returns
        -------
        ndarray of shape (n,)
            Labels from ``classes_`` (masked or ``reject_label`` where abstaining, when
            a reject option is given). Dask X (no reject option): a lazy Dask array.
        """
        if reject_cost is None and coverage is None:
            return self._predict_labels(X)
        if dask_input.is_dask(X):
            raise ValueError("The reject option (reject_cost, coverage) needs in-memory X: "
                             "compute the Dask array first, or call predict_proba and "
                             "bayesgen.decide.reject.reject_decisions.")
        proba = self.predict_proba(X)
        from bayesgen.decide import reject

        decision, accepted = reject.reject_decisions(proba, self._loss, reject_cost=reject_cost,
                                                     coverage=coverage)
        return reject.labels_with_reject(self.classes_, decision, accepted, reject_label)

    def predict_set(self, X: Any, alpha: Any = DEPRECATED, *,
                    confidence_level: Any = DEFAULT_CONFIDENCE_LEVEL, calibration: str = "split",
                    X_calib: Any = None, y_calib: Any = None,
                    score: str = "lac", mondrian: bool = False, randomize: bool = False,
                    random_state: Any = None) -> np.ndarray:
        """Conformal prediction sets with coverage >= ``confidence_level``.

        ``confidence_level`` (default 0.9; MAPIE's name): a number in (0, 1), or a
        sequence of them for one set per level; alpha = 1 - confidence_level below.
        ``alpha``: deprecated since 0.2 and removed in 0.3 (FutureWarning), the
        miscoverage 1 - confidence_level, given after X in earlier releases.
        ``calibration="split"`` (every method): ``X_calib``, ``y_calib`` are labeled
        rows held out of the fit. ``calibration="loo"`` (``method="conjugate"``): no
        split, the training rows (``X_calib``, ``y_calib``, optional when the fit kept
        them) scored by the exact closed-form leave-one-out predictive.
        ``calibration="jackknife+"``: as ``"loo"``, and X is also scored by the
        posterior without each training row (closed form, no refit): coverage
        >= 1 - 2 alpha guaranteed, about 1 - alpha in practice. ``score``
        ``"lac"`` (1 - p_k) or ``"aps"``; ``mondrian=True``: coverage within every
        class; ``randomize=True``: smoothed p-values (coverage exactly 1 - alpha in
        expectation, smaller sets; uniforms from ``random_state``). Formulas and
        guarantees: :mod:`bayesgen.decide.conformal`.

        Returns
        -------
        ndarray of bool
            (n, K) (``out[i, k]``: ``classes_[k]`` is in row i's set), or
            (n, K, len(confidence_level)) for a sequence of levels.
        """
        check_is_fitted(self, "_params")
        from bayesgen.decide import conformal

        return conformal.predict_set(self, X, alpha=alpha,  # deprecated alpha, until 0.3
                                     confidence_level=confidence_level,
                                     calibration=calibration, X_calib=X_calib,
                                     y_calib=y_calib, score=score, mondrian=mondrian,
                                     randomize=randomize, random_state=random_state)

    def predict_uncertainty(self, X: Any, *, max_draws: int | None = None,
                            as_dataset: bool = True):
        """Per row: total predictive entropy = aleatoric (expected entropy) + epistemic
        (mutual information between the label and the parameters), in nats.

        Posterior methods only (``ValueError`` otherwise). Returns an
        ``xarray.Dataset`` with ``total``, ``aleatoric``, ``epistemic`` (dims ``obs``)
        and ``proba`` (``obs``, ``class``), or with ``as_dataset=False`` a named tuple
        of arrays; ``max_draws`` thins the draws. See
        :func:`bayesgen.decide.uncertainty.decompose_uncertainty`.
        """
        from bayesgen.decide import uncertainty

        self._check_posterior("predict_uncertainty")
        return uncertainty.decompose_uncertainty(self, X, max_draws=max_draws,
                                                 as_dataset=as_dataset)

    # ------------------------------------------------------- posterior extras
    def _check_posterior(self, what: str) -> None:
        posterior.check_posterior(self, what)

    @predicting("draws", posterior_size=lambda self: self._posterior_size())
    def predict_proba_draws(self, X: Any):
        """p(y=k | x, theta_s) for every posterior draw.

        Returns
        -------
        xarray.DataArray
            Dims ``("chain", "draw", "obs", "class")``, ``class`` coordinate =
            ``classes_``. Memory is chains x draws x n x K doubles.
        """
        self._check_posterior("predict_proba_draws")
        values = scoring.proba_draws(self._fitted(), self._check_X_predict(X))
        chains, draws = self._posterior_size()
        return posterior.as_dataarray(values, chains, draws, self.classes_)

    def add_log_likelihood(self, X: Any = None, y: Any = None, sample_weight: Any = None):
        """Add the ``log_likelihood`` group to ``idata_`` when fit left it out.

        The group holds log p(x_n, y_n | theta_s) of every training row, dims ``(chain, draw,
        obs)``. Fit stores it up to ``bayesgen.inference.loglik.AT_FIT_MAX_VALUES`` (4,000,000)
        values and otherwise warns, naming this method (opt-in where large, as PyMC's
        ``compute_log_likelihood``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d), optional
        y : array-like of shape (n,), optional
            The training rows; needed only when the fit did not keep them (``partial_fit``,
            ``bayesgen.merge``, Dask input). Other rows than the fit's are a ``ValueError``.
        sample_weight : array-like of shape (n,), optional
            The fit's weights, if it had any (only to recognise the training rows).

        Returns
        -------
        arviz.InferenceData
            ``idata_``, unchanged when it has the group already.
        """
        self._check_posterior("add_log_likelihood")
        return loglik.add(self, self._fitted(), X, y, sample_weight)

    @predicting("interval")
    def predict_proba_interval(self, X: Any, hdi_prob: float = 0.94):
        """Highest-density credible intervals of p(y=k | x, theta) (``az.hdi``).

        Returns
        -------
        xarray.DataArray
            Dims ``("obs", "class", "hdi")`` with ``hdi`` = ``["lower", "higher"]``.
        """
        if not 0 < hdi_prob < 1:
            raise ValueError(f"hdi_prob must be in (0, 1); got {hdi_prob!r}.")
        draws = self.predict_proba_draws(X)
        return import_arviz().hdi(draws.to_dataset(name="p"), hdi_prob=hdi_prob)["p"]

    # -------------------------------------------------------------- sampling
    def sample(self, n: int, classes: Any = None, random_state: Any = None):
        """Draw ``(X_new, y_new)`` from the fitted generative model.

        Point methods sample the plug-in model; posterior methods sample the posterior
        predictive (a posterior draw per row, then y and x given it).

        Parameters
        ----------
        n : int
            Number of rows.
        classes : label, sequence of labels, or None
            None draws y from the class prior; one label gives n rows of that class;
            a sequence of n labels fixes y row by row.
        random_state : int, Generator or None

        Returns
        -------
        X_new : ndarray (n, d); a DataFrame holding the values of text columns, if
            fitted on any
        y_new : ndarray (n,) of labels from ``classes_``
        """
        return sampling.sample(self.fitted_, self.class_prior_, n, classes, random_state)

    # ------------------------------------------------------------ PyMC model
    @property
    def model_(self):
        """The PyMC generative model of this classifier with the training rows it kept.

        As :meth:`build_model`, with the rows a posterior fit keeps in
        ``idata_.observed_data``; built on first access and cached.

        Raises
        ------
        AttributeError
            When the fit kept no rows (point methods, ``partial_fit``, ``bayesgen.merge``,
            Dask input) or PyMC cannot observe them, with the remedy
            (``build_model(X, y)``); ``NotFittedError`` before ``fit``.
        """
        check_is_fitted(self, "_params")
        if getattr(self, "_model", None) is None:
            kept = rows.kept(self)
            if kept is None:
                raise AttributeError(rows.missing_message(
                    self, "model_ (the PyMC model with its observed rows)", "build_model(X, y)"))
            from bayesgen.inference.model import build_model

            try:
                self._model = build_model(self._fitted(), kept.X, kept.y)
            except ValueError as err:  # rows PyMC cannot observe: model_ is absent
                raise AttributeError(str(err)) from err
        return self._model

    def build_model(self, X: Any, y: Any):
        """The PyMC generative model of this classifier with observed rows ``X``, ``y``.

        ``pi ~ Dirichlet(class_alpha)`` (or the fixed ``class_prior``), observed
        ``y ~ Categorical(pi)``, the family's conjugate prior (the fit's resolved
        ``_prior``, in the units of X) and observed features ``x`` given the class;
        coords ``class``, ``feature`` and ``obs``. Missing entries of X are integrated
        out. ``method="mcmc"`` samples an equivalent model written on the sufficient
        statistics (see :mod:`bayesgen.inference.model`).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n, d)
            Rows read as at fit (the training rows, typically); rows whose label is
            missing (unlabeled) are left out.
        y : array-like of shape (n,)
            Labels, each one of ``classes_``.

        Returns
        -------
        pymc.Model
            A new model (not cached; ``model_`` is the one of the rows a fit kept).
        """
        check_is_fitted(self, "_params")
        from bayesgen.inference.model import build_model

        data = rows.training_rows(self, X, y, what="build_model", how="build_model(X, y)",
                                  check=False)
        return build_model(self._fitted(), data.X, data.y)

    def __getstate__(self) -> dict:
        """Pickle without the cached PyMC model (rebuilt on demand from the kept rows)."""
        state = super().__getstate__()
        state.pop("_model", None)
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if "_params" in state:
            self._model = None

    def _var_names(self) -> list[str]:
        return classprior.var_names(self._fitted())

    def summary(self, **kwargs: Any):
        """``az.summary`` of the posterior of pi (unless ``class_prior`` fixes it) and the
        family parameters (mean, sd, HDI, MCSE, ESS, R-hat); kwargs go to ``az.summary``."""
        az = import_arviz()

        self._check_posterior("summary")
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # constant (padding) entries
            return az.summary(self.idata_, var_names=self._var_names(), **kwargs)

    def sample_prior_predictive(self, draws: int = 500, random_state: Any = None, *,
                                X: Any = None, y: Any = None):
        """Forward-sample the PyMC model: adds groups ``prior`` (pi and the parameters)
        and ``prior_predictive`` (``y`` and ``x``, shaped like the rows) to ``idata_``
        (created for point methods, with the rows as ``observed_data``).

        Parameters
        ----------
        draws : int, default=500
        random_state : int, Generator or None
        X : array-like or DataFrame of shape (n, d), optional
        y : array-like of shape (n,), optional
            The rows the samples are shaped like (``build_model(X, y)``); needed
            unless the fit kept its rows (``model_``).

        Returns
        -------
        arviz.InferenceData
            ``idata_``.
        """
        groups, new = predictive.prior_predictive(self, draws, random_state, X, y)
        if new:  # a point fit: idata_ holds these groups and the rows
            self.idata_ = groups
        else:
            self.idata_.extend(groups, join="right")
        return self.idata_

    def sample_posterior_predictive(self, random_state: Any = None, *, X: Any = None,
                                    y: Any = None, sample_weight: Any = None):
        """Replicate the training data once per posterior draw: adds group
        ``posterior_predictive`` with ``y`` (chain, draw, obs), ``x`` (chain, draw, obs,
        feature) and per class ``x_class_<label>`` (x ~ p(x | y = k, theta_s) for each
        row of class k; :mod:`bayesgen.inference.class_layout`), over every posterior
        draw, so ``az.loo_pit(idata_, y="y")`` and ``az.plot_ppc`` work on ``idata_``.
        More than 500,000,000 values is a ``ValueError``.

        Parameters
        ----------
        random_state : int, Generator or None
        X : array-like or DataFrame of shape (n, d), optional
        y : array-like of shape (n,), optional
            The training rows; needed when the fit did not keep them (then also added
            to ``idata_`` as ``observed_data``, which ArviZ's checks compare with).
            Rows other than the fit's (other weighted class counts) are a
            ``ValueError``.
        sample_weight : array-like of shape (n,), optional
            The fit's weights, if it had any (kept with the rows in ``constant_data``).

        Returns
        -------
        arviz.InferenceData
            ``idata_``.
        """
        self._check_posterior("sample_posterior_predictive")
        return predictive.posterior_predictive(self, random_state, X, y, sample_weight)

    def save(self, path: Any):
        """Write this fitted estimator (parameters, fitted state, ``idata_``) to one
        netCDF file; ``bayesgen.load(path)`` returns an estimator that predicts
        identically."""
        from bayesgen.estimators.persistence import save

        return save(self, path)

    @property
    def fitted_(self) -> Fit:
        """The fit as one immutable value (:class:`bayesgen.inference.fitted.Fit`): the
        configured family, statistics, prior, estimates or posterior draws, classes and
        frame. What the lower layers (and advanced users) compute from; a refit makes a
        new one. ``NotFittedError`` before ``fit``."""
        check_is_fitted(self, "_params")
        return self._fitted()

    def _fitted(self) -> Fit:
        """:class:`Fit` of the current fitted state (also mid-fit, where the entries not
        computed yet are None)."""
        state = vars(self)
        return Fit(
            who=type(self).__name__, method=state.get("method_"), family=state.get("_family"),
            classes=state.get("classes_"), class_count=state.get("class_count_"),
            class_alpha=state.get("class_alpha_"), fixed_pi=state.get("_fixed_pi"),
            stats=state.get("_stats"), prior=state.get("_prior"), params=state.get("_params"),
            log_pi_draws=state.get("_log_pi_draws"), posterior=state.get("_posterior"),
            class_log_prior=state.get("class_log_prior_"), frame=state.get("_frame"),
            class_prior=state.get("class_prior_"),
            feature_names=self._feature_names(), n_features=state.get("n_features_in_", 0),
            posterior_size=(self._posterior_size() if state.get("method_") in POSTERIOR_METHODS
                            else (1, 1)), loss=state.get("_loss"),
            columns=state.get("_columns"), hyper_draws=state.get("_hyper_draws") or {},
            n_unlabeled=state.get("n_unlabeled_", 0),
            n_jobs=getattr(self, "n_jobs", None), random_state=getattr(self, "random_state", None),
            tune=getattr(self, "tune", None))

    @property
    def _is_posterior(self) -> bool:
        """Whether the fit (``method_``) produced a posterior."""
        return self.method_ in POSTERIOR_METHODS
