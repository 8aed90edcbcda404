"""The covariance structure chosen or averaged by the evidence
(``cov_structure="auto"`` / ``"average"`` of LDA and QDA).

The candidates are the estimator's three structures, spherical, diagonal and full
(LDA: mclust's EII, EEI, EEE; QDA: VII, VVI, VVV), each a family of its own
(:class:`.diagonal.DiagonalMVNFamily`, :class:`.family.MVNFamily`) with its prior's
hyper-parameters resolved as the estimator's options say (``cov_dof``, ``cov_scale``,
``mean_strength``). All of them use the full family's statistics, so one pass over X
serves every candidate, and the search runs on the statistics only.

With equal prior probabilities 1/3, the posterior probability of structure s is
w_s = p(X | y, s) / sum_r p(X | y, r), from the exact evidences (log Bayes factors). Then

- ``"auto"`` fits the structure of largest evidence: every method is that family's;
- ``"average"`` is Bayesian model averaging: the posterior predictive is the mixture
  p(x | y = k, D) = sum_s w_s p_s(x | y = k, D), posterior draws come from structure s
  with probability w_s, the evidence is log sum_s p(X | y, s) / 3, and the exact
  leave-one-out predictive re-weights the structures without the row,
  w_s^(-i) ~ w_s / p_s(x_i | y_i, D without i) for a row of weight 1, so that
  p(x_i | y_i, D without i) = 1 / sum_s w_s / p_s(x_i | y_i, D without i) (a row of
  another weight: w_s^(-i) ~ p_s(X without i) from the downdated statistics).
  The point methods use the structure of largest weight (a mixture has no single
  mode), and NUTS cannot sample the discrete structure (``method="mcmc"`` raises).

``method="mle"`` has no prior, hence no evidence: the structures are then scored by
BIC = 2 max log-likelihood - p log N (mclust's rule, larger is better; p the number of
free parameters of the covariances: 1, K, d, K d, d (d + 1) / 2 or K d (d + 1) / 2),
and w_s is proportional to exp(BIC_s / 2).

With missing entries the diagonal and spherical evidences stay exact, the full one is
that of the EM-completed statistics (as ``cov_dof="auto"`` uses), so ``"auto"`` is then
approximate; ``"average"`` needs complete rows.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import logsumexp

from bayesgen.families import far as _far
from bayesgen.families.mvn import em
from bayesgen.families.mvn.diagonal import DiagonalMVNFamily
from bayesgen.families.mvn.family import MVNFamily
from bayesgen.families.mvn.niw_evidence import log_marginal_likelihood as niw_evidence
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks

#: candidate structures in order, per tying
NAMES = {True: ("EII", "EEI", "EEE"), False: ("VII", "VVI", "VVV")}


class StructureChoiceFamily(UnlabeledHooks):
    """The estimator's three covariance structures, chosen (``average=False``) or
    averaged by the evidence; ``tied``: LDA; ``**options``: the prior options of
    :class:`.family.MVNFamily`, given to every candidate."""

    name = "mvn_choice"
    positive_only = False

    def __init__(self, *, tied: bool, average: bool = False, **options: Any) -> None:
        self.tied = bool(tied)
        self.average = bool(average)
        self.options = dict(options)
        self.members = [DiagonalMVNFamily(tied=tied, spherical=True, **options),
                        DiagonalMVNFamily(tied=tied, spherical=False, **options),
                        MVNFamily(tied=tied, **options)]
        self.param_dims = self.members[-1].param_dims
        self._labels = None
        self._frame = None

    # ------------------------------------------------------------ plumbing
    @property
    def labels(self):
        """Class labels (``configured(labels=...)`` gives them to every candidate)."""
        return self._labels

    @property
    def frame(self):
        """The frame of the internal coordinates (``configured(frame=...)`` gives it to
        every candidate)."""
        return self._frame

    def _settle(self, settings: dict) -> None:
        """The settings of this new copy and of new candidates
        (:meth:`bayesgen.families.protocol.Configurable.configured`)."""
        own = {"labels": "_labels", "frame": "_frame"}
        for name, value in settings.items():
            if name == "divisor":  # the candidates' option
                self.options = dict(self.options, divisor=value)
            else:
                setattr(self, own.get(name, name), value)
        self.members = [member.configured(**settings) for member in self.members]

    @property
    def capabilities(self) -> Capabilities:
        """The full family's abilities (the widest of the candidates)."""
        return Capabilities(missing=True, real_valued=True, far_rows=True,
                            augmentation=True, linear_discriminant=self.tied,
                            continuous=True, correlated=True)

    @staticmethod
    def chosen(value: dict) -> int:
        """The index of the structure of largest weight in a prior or posterior (its
        ``log_weights``): the one "auto" fits and the point methods use."""
        return int(np.argmax(value["log_weights"]))

    def _recorded(self) -> int:
        """The index of the structure the last :meth:`prior` or :meth:`mle` recorded in
        ``search_`` (the full one before any), for the hooks that get no prior."""
        found = getattr(self, "search_", None)
        return NAMES[self.tied].index(found["structure"]) if found else len(self.members) - 1

    @property
    def who(self) -> str:
        return self.members[-1].who

    def real_columns(self, n_features: int) -> np.ndarray:
        """Every column is real-valued (the full family's answer)."""
        return self.members[-1].real_columns(n_features)

    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Options that only the full structure has, and ``"average"`` under NUTS:
        ``ValueError`` saying why."""
        option = "average" if self.average else "auto"
        if self.average and method == "mcmc":
            raise ValueError(
                f"{who}: cov_structure='average' mixes the structures by their posterior "
                "probabilities, a discrete choice NUTS cannot sample. Use "
                "method='conjugate' (exact i.i.d. draws of the mixture), or "
                "cov_structure='auto' to sample the structure of largest evidence.")
        bad = [name for name in ("cov_dof", "cov_scale")
               if self.options.get(name) == "sample"]
        cov_target = self.options.get("cov_target")
        if bad or self.options.get("cov_prior_form", "niw") != "niw" or (
                isinstance(cov_target, str) and cov_target == "pooled"):
            raise ValueError(
                f"{who}: cov_structure={option!r} compares structures whose priors are "
                "conjugate; cov_dof/cov_scale='sample', cov_prior_form='lkj' and "
                "cov_target='pooled' exist for the full structure only "
                "(cov_structure='full').")
        return X

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """The full family's statistics, which every candidate reads."""
        return self.members[-1].stats(X, y, w, n_classes)

    def merge(self, a: dict, b: dict) -> dict:
        """The full family's merge."""
        return self.members[-1].merge(a, b)

    # ----------------------------------------------------------------- prior
    def _log_evidences(self, stats: dict, priors: list[dict]) -> np.ndarray:
        """log p(X | y, s) of each candidate in the units of X (the full structure with
        missing entries: of the EM-completed statistics)."""
        out = []
        for member, prior in zip(self.members, priors, strict=True):
            if isinstance(member, DiagonalMVNFamily) or "groups" not in stats:
                out.append(member.log_evidence(stats, prior, lambda: None, method="map",
                                               who=self.who))
                continue
            S0 = prior["Psi0"] / (prior["nu0"] - prior["m0"].size - 1.0)
            completed = em.evidence_stats(member, stats, prior["m0"], prior["kappa0"], S0,
                                          prior["nu0"])
            d = prior["m0"].size
            out.append(niw_evidence(completed, prior, tied=self.tied)
                       - _far.log_jacobian(self.frame, np.full(d, stats["count"].sum())))
        return np.asarray(out)

    def _bic(self, stats: dict) -> np.ndarray:
        """BIC of each candidate's maximum-likelihood fit (``method="mle"``)."""
        if "groups" in stats:
            raise ValueError(
                f"{self.who} method='mle' with cov_structure="
                f"{'average' if self.average else 'auto'!r} scores the structures by BIC, "
                "which needs complete rows; use method='map' (the evidence handles missing "
                "entries) or fix cov_structure.")
        K, d = stats["mean"].shape
        N = stats["count"].sum()
        n_params = {"EII": 1, "VII": K, "EEI": d, "VVI": K * d, "EEE": d * (d + 1) / 2,
                    "VVV": K * d * (d + 1) / 2}
        out = []
        for member, name in zip(self.members, NAMES[self.tied], strict=True):
            cov = member.mle(stats)["cov"]
            out.append(2.0 * _max_log_lik(stats, cov, self.tied)
                       - (n_params[name] + K * d) * np.log(N))
        jac = _far.log_jacobian(self.frame, np.full(d, N))
        return np.asarray(out) - 2.0 * jac

    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """Every candidate's prior, log evidence and posterior probability:
        ``{"members": priors, "log_weights": (3,)}``. Records ``search_``: the chosen
        candidate's own record, ``structure`` (mclust's name) and ``structures`` (one dict per
        candidate with ``structure``, ``cov_structure``, its hyper-parameters, ``log_evidence``
        in the units of X and ``weight``; with ``method="mle"`` set at :meth:`mle` by BIC)."""
        if self.average and "groups" in stats:
            raise ValueError(
                f"{self.who} cov_structure='average' needs complete rows: the full "
                "structure's posterior with missing entries is not closed form. Use "
                "cov_structure='auto', or fill the gaps.")
        priors = [member.prior(stats, record=record) for member in self.members]
        log_ev = self._log_evidences(stats, priors)
        if record:
            self._record(log_ev, {"log_evidence": log_ev})
        if record and self.average:  # the model's own evidence: log sum_s p(X | y, s) / 3
            self.search_["log_evidence"] = float(logsumexp(log_ev) - np.log(log_ev.size))
        return {"members": priors, "log_weights": log_ev - logsumexp(log_ev)}

    def prior_uses_data(self) -> bool:
        """True: the structure's weights are its evidence on the data."""
        return True

    def _record(self, scores: np.ndarray, columns: dict[str, np.ndarray]) -> int:
        """Choose by ``scores`` (log evidences, or BIC / 2), set ``search_`` with one row
        per candidate holding ``columns`` and ``weight`` (from ``scores``) and return the
        chosen index."""
        log_w = scores - logsumexp(scores)
        chosen = int(np.argmax(scores))
        rows = []
        for s, (member, name, option) in enumerate(zip(
                self.members, NAMES[self.tied], ("spherical", "diag", "full"), strict=True)):
            found = member.search_
            rows.append({"structure": name, "cov_structure": option,
                         "mean_strength": found.get("mean_strength"),
                         "cov_dof": found.get("cov_dof"), "cov_scale": found.get("cov_scale"),
                         **{key: float(value[s]) for key, value in columns.items()},
                         "weight": float(np.exp(log_w[s]))})
        self.search_ = {**copy.deepcopy(self.members[chosen].search_),
                        "structure": NAMES[self.tied][chosen], "structures": rows}
        return chosen

    # -------------------------------------------------------------- estimates
    def mle(self, stats: dict) -> dict:
        """The maximum-likelihood fit of the structure of largest BIC."""
        bic = self._bic(stats)
        log_ev = np.array([row["log_evidence"] for row in self.search_["structures"]])
        chosen = self._record(bic / 2.0, {"log_evidence": log_ev, "bic": bic})
        self.search_["log_evidence"] = None  # the fit has no prior: nothing to compare
        return self.members[chosen].mle(stats)

    def map(self, stats: dict, prior: dict) -> dict:
        """The posterior mode of the structure of largest evidence."""
        s = self.chosen(prior)
        return self.members[s].map(stats, prior["members"][s])

    def log_prior(self, params: dict, prior: dict) -> float:
        """The chosen structure's log prior density."""
        s = self.chosen(prior)
        return self.members[s].log_prior(params, prior["members"][s])

    def likelihood_maximiser(self) -> StructureChoiceFamily:
        """``self``, or with ``divisor="unbiased"`` a copy whose candidates divide by N."""
        if self.options.get("divisor", "n") == "n":
            return self
        return self.configured(divisor="n")

    def posterior(self, stats: dict, prior: dict) -> dict:
        """``posts`` (each candidate's conjugate posterior; "auto": the chosen one's
        only, the others None) and ``log_weights``."""
        out = self._posts(prior, lambda member, p: member.posterior(stats, p))
        if self.average:  # the exact LOO of weighted rows re-scores the evidences
            out["priors"] = prior["members"]
        return out

    def _posts(self, prior: dict, each: Callable) -> dict:
        """``each(member, its prior)`` of the live candidates (all for "average", the
        chosen one for "auto"; None for the others) and ``log_weights``."""
        chosen = self.chosen(prior)
        return {"posts": [each(member, p) if self.average or s == chosen else None
                          for s, (member, p) in enumerate(zip(self.members, prior["members"],
                                                              strict=True))],
                "log_weights": self._log_weights(prior)}

    def _log_weights(self, prior: dict) -> np.ndarray:
        if self.average:
            return np.asarray(prior["log_weights"])
        with np.errstate(divide="ignore"):
            return np.log(np.eye(len(self.members))[self.chosen(prior)])

    def _live(self, post: dict) -> list[int]:
        return [s for s, p in enumerate(post["posts"]) if p is not None]

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` i.i.d. draws of the mixture: the number from structure s is
        multinomial with probabilities w_s, then the order is shuffled."""
        live = self._live(post)
        weights = np.exp(post["log_weights"][live])
        counts = rng.multinomial(size, weights / weights.sum())
        parts = [self.members[s].draw(post["posts"][s], int(c), rng)
                 for s, c in zip(live, counts, strict=True) if c > 0]
        order = rng.permutation(size)
        return {key: np.concatenate([part[key] for part in parts])[order]
                for key in parts[0]}

    def _mix(self, values: list[np.ndarray], post: dict) -> np.ndarray:
        """log sum_s w_s exp(values_s) over the live structures."""
        live = self._live(post)
        stacked = np.stack([values[i] + post["log_weights"][s]
                            for i, s in enumerate(live)])
        return logsumexp(stacked, axis=0)

    def log_predictive(self, X: np.ndarray, post: dict) -> np.ndarray:
        """log sum_s w_s p_s(x | y = k, D), (n, K)."""
        return self._mix([self.members[s].log_predictive(X, post["posts"][s])
                          for s in self._live(post)], post)

    # ----------------------------------------------------- model comparison
    def log_evidence(self, stats: dict, prior: dict, rows: Callable[[], tuple], *,
                     method: str, who: str) -> float:
        """"auto": the chosen structure's exact log p(X | y); "average": the
        model-averaged log sum_s p(X | y, s) / 3."""
        if not self.average:
            s = self.chosen(prior)
            return self.members[s].log_evidence(stats, prior["members"][s], rows,
                                                method=method, who=who)
        values = [member.log_evidence(stats, p, rows, method=method, who=who)
                  for member, p in zip(self.members, prior["members"], strict=True)]
        return float(logsumexp(values) - np.log(len(values)))

    def _loo_weights(self, Z, y, w, post) -> tuple[list[int], np.ndarray, np.ndarray]:
        """The live structures, log p_s(z_i | y_i, D without i) and log w_s^(-i), (S, n)
        each: w_s / p_s(z_i | ...) for a row of weight 1 (module docstring); for another weight
        p_s(X without i) from each structure's evidence of the downdated statistics."""
        live = self._live(post)
        own = np.stack([self.members[s].loo_log_predictive(Z, y, w, post["posts"][s])
                        for s in live])
        log_w = post["log_weights"][live][:, None] - own
        weighted = np.flatnonzero(np.asarray(w, dtype=np.float64) != 1.0)
        if weighted.size and len(live) > 1:
            log_w[:, weighted] = self._downdated_evidences(Z, y, w, post, live, weighted)
        return live, own, log_w - logsumexp(log_w, axis=0)

    def _downdated_evidences(self, Z, y, w, post, live, rows) -> np.ndarray:
        """log p_s(X without row i) of the live structures at ``rows``, (S, rows.size),
        under the fit's priors (complete rows: ``"average"`` refuses missing entries)."""
        K = post["posts"][live[0]]["m"].shape[0]
        full = self.stats(Z, y, w, K)
        out = np.empty((len(live), rows.size))
        for col, i in enumerate(rows):
            one = {"count": np.zeros(K), "mean": np.zeros_like(full["mean"]),
                   "scatter": np.zeros_like(full["scatter"]), "rows": np.zeros(K)}
            one["count"][y[i]], one["rows"][y[i]] = -w[i], -1.0
            one["mean"][y[i]] = Z[i]
            if "loc" in full:  # Z is in the statistics' frame already
                one["loc"], one["scale"] = full["loc"], full["scale"]
            rest = self.merge(full, one)  # Chan's update with a negative weight: a downdate
            out[:, col] = [self.members[s].log_evidence(rest, post["priors"][s], lambda: None,
                                                        method="conjugate", who=self.who)
                           for s in live]
        return out

    def loo_log_predictive(self, Z: np.ndarray, y: np.ndarray, w: np.ndarray,
                           post: dict) -> np.ndarray:
        """log p(z_n | y_n, D without row n) = log sum_s w_s^(-n) p_s(z_n | y_n, D without
        n), (n,) (for a row of weight 1: -log sum_s w_s / p_s(z_n | y_n, D without n),
        module docstring)."""
        _, own, log_w = self._loo_weights(Z, y, w, post)
        return logsumexp(log_w + own, axis=0)

    def loo_log_predictive_at(self, Z: np.ndarray, y: np.ndarray, w: np.ndarray, post: dict,
                              Z_test: np.ndarray | None = None) -> np.ndarray:
        """log sum_s w_s^(-i) p_s(z_test | y = k, D without i), (n, m, K) or (n, K), with
        the structures re-weighted without row i (module docstring)."""
        live, _, log_w = self._loo_weights(Z, y, w, post)
        out = None
        for i, s in enumerate(live):
            at = self.members[s].loo_log_predictive_at(Z, y, w, post["posts"][s], Z_test)
            shift = log_w[i].reshape((-1,) + (1,) * (at.ndim - 1))
            out = at + shift if out is None else np.logaddexp(out, at + shift)
        return out

    # --------------------------------------------------- parameters (full)
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """The Gaussian log-density of ``params`` (diagonal covariances included)."""
        return self.members[-1].log_lik(X, params, full=full)

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row (the full family's sampler)."""
        return self.members[-1].sample(params, y, rng)

    def attributes(self, params: dict) -> dict:
        """``means_``, ``covariance_`` and ``prior_search_`` (with ``structures``)."""
        out = self.members[self._recorded()].attributes(params)
        if hasattr(self, "search_"):
            out["prior_search_"] = copy.deepcopy(self.search_)
        return out

    def to_user(self, params: dict) -> dict:
        """Parameters in the units of X."""
        return self.members[-1].to_user(params)

    def prior_to_user(self, prior: dict) -> dict:
        """Every candidate's prior in the units of X."""
        return dict(prior, members=[member.prior_to_user(p) for member, p in
                                    zip(self.members, prior["members"], strict=True)])

    def user_discriminant(self, scores: np.ndarray, Z: np.ndarray, params: dict):
        """LDA's discriminant in the units of X (the full family's)."""
        return self.members[-1].user_discriminant(scores, Z, params)

    def far_terms(self, far, params: dict):
        """(a2, a1, a0) of far rows (the full family's)."""
        return self.members[-1].far_terms(far, params)

    def far_log_predictive(self, far, post: dict) -> np.ndarray:
        """The mixture's predictive of far rows, (m, K)."""
        return self._mix([self.members[s].far_log_predictive(far, post["posts"][s])
                          for s in self._live(post)], post)

    # ----------------------------------------- augmentation and unlabeled rows
    def needs_augmentation(self, stats: dict) -> bool:
        """Whether the chosen structure needs data augmentation (the full one with
        missing entries)."""
        return self.members[self._recorded()].needs_augmentation(stats)

    def augment(self, stats: dict, prior: dict, **kwargs):
        """The chosen structure's data-augmentation draws, its posterior wrapped."""
        s = self.chosen(prior)
        params, post, sample_stats = self.members[s].augment(stats, prior["members"][s],
                                                             **kwargs)
        posts: list = [None] * len(self.members)
        posts[s] = post
        with np.errstate(divide="ignore"):
            log_w = np.log(np.eye(len(self.members))[s])
        return params, {"posts": posts, "log_weights": log_w}, sample_stats

    def conditional_posterior(self, stats: dict, params: dict, prior: dict,
                              rng: np.random.Generator) -> dict:
        """Each live structure's conditional posterior (the chosen one's for "auto")."""
        return self._posts(prior, lambda member, p: member.conditional_posterior(
            stats, params, p, rng))

    def can_augment_labels(self, stats: dict, Z_u: Any) -> bool:
        """The chosen structure's answer."""
        return self.members[self._recorded()].can_augment_labels(stats, Z_u)

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """The chosen structure's prior (``"average"`` under NUTS is refused at
        ``check_X``; ``model_`` of an averaged point fit shows the structure of largest
        weight)."""
        s = self.chosen(prior)
        return self.members[s].pymc_params(prior["members"][s], prefix=prefix, dims=dims)

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """Observed rows (the full family's multivariate normal)."""
        self.members[-1].pymc_observed(params, X, y, prefix=prefix, dims=dims)

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """The chosen structure's likelihood on the statistics."""
        return self.members[self._recorded()].pymc_stats_loglik(params, stats)

    def pymc_rows_loglik(self, params: dict, Z: np.ndarray, *, stats: dict, observed,
                         prefix: str = "", dims: dict | None = None):
        """The chosen structure's rows' log-likelihood."""
        return self.members[-1].pymc_rows_loglik(params, Z, stats=stats,
                                                 observed=observed, prefix=prefix, dims=dims)


def _max_log_lik(stats: dict, cov: np.ndarray, tied: bool) -> float:
    """log-likelihood of complete-data statistics at the class means and covariance(s)
    ``cov``: -1/2 sum_g [N_g log|2 pi Sigma_g| + tr(Sigma_g^-1 S_g)] (internal frame)."""
    count = stats["count"]
    scatter = stats["scatter"]
    covs, scatters, counts = ((cov[None], scatter[None], np.array([count.sum()])) if tied
                              else (cov, scatter, count))
    total = 0.0
    for c, s, n in zip(covs, scatters, counts, strict=True):
        if n <= 0:
            continue
        _, logdet = np.linalg.slogdet(2.0 * np.pi * c)
        total += -0.5 * (n * logdet + np.trace(np.linalg.solve(c, s)))
    return float(total)
