"""Mixed naive Bayes: different likelihood families on disjoint column groups.

Given parts ``(family_p, columns_p)`` that partition the features::

    log p(x | y = k) = sum_p log p_p(x[columns_p] | y = k)

Each part is an ordinary family instance (:mod:`bayesgen.families`) with its own
statistics, prior and parameters; the composite implements the family protocol
(:mod:`bayesgen.families.protocol`) by delegation, and its capabilities are those its
parts share. Naming, so that everything stays a flat dict of arrays whose keys are
valid netCDF variable names:

- part ``p`` (0-based position in ``families``) with family ``name`` has the name
  ``name`` (its family's first part) or ``f"{name}_{i}"`` (its i-th), by which the
  estimator's ``named_parts_`` reads it, and the prefix ``f"{name}{p}"``, e.g.
  ``"gaussian0"``, ``"bernoulli1"``;
- its parameters are ``f"{prefix}_{key}"`` (``"gaussian0_mu"``), with ``param_dims``
  renamed likewise except the shared ``"class"`` dim (``("class", "gaussian0_feature")``),
  because parts have different numbers of features; :meth:`MixedFamily.coords` gives the
  column names of every renamed ``feature`` dim;
- its fitted attributes are ``f"{prefix}_{attr}"`` (``"gaussian0_theta_"``), plus
  ``parts_``: one dict per part with ``name``, ``part``, ``prefix``, ``columns``
  (positions) and ``features`` (column names).

Statistics are ``{"count": (K,), "parts": [stats of each part]}``; priors and
conjugate posteriors are ``{"parts": [...]}``.

The PyMC hooks, the renamed coordinates and the pointwise log-likelihood of the
training rows live in :mod:`bayesgen.families.mixed.pymc`. The unlabeled-row hooks
(:mod:`bayesgen.families.semi_hooks`) are delegated to the parts likewise.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from bayesgen.data import sparse
from bayesgen.families.mixed import pymc, spec
from bayesgen.families.mixed.pymc import part_columns as _cols
from bayesgen.families.mixed.spec import DISCRETE, NAMES  # noqa: F401 (public names)
from bayesgen.families.protocol import Capabilities, Configurable


class MixedFamily(Configurable):
    """Composite family: one family per column group, log-likelihoods added.

    Parameters
    ----------
    families : list of tuples or None
        ``(name, columns)`` or ``(name, columns, options)``: ``name`` in
        :data:`NAMES`, ``columns`` integer positions or column names (a single one
        is allowed), ``options`` a dict of that family's hyper-parameters.
    alpha : float or array-like
        Concentration given to the discrete parts (``"bernoulli"``,
        ``"multinomial"``, ``"categorical"``) unless their options set ``alpha``;
        every other part keeps its standalone defaults.
    feature_names : array-like of str or None
        Column names of the training DataFrame, needed for string ``columns``.
    n_features : int or None
        Number of training columns, for information: positions are checked against
        the width of the X given to :meth:`check_X`.
    overrides : dict or None
        With ``families="auto"``: ``{column: family name}`` replacing the family
        chosen from a column's kind (see :func:`._mixed_spec.auto_entries`).
    kinds : list of str or None
        Kind of every training column (``"float"``, ``"int"``, ``"bool"``,
        ``"category"``; :mod:`bayesgen.data.tables`), from which ``families="auto"``
        chooses.
    levels : list or None
        Per column, the category values behind the codes of a text/boolean/categorical
        column (None elsewhere); given to the categorical parts.

    Notes
    -----
    The constructor never raises (scikit-learn builds it with ``families=None`` to
    read tags); the specification is validated by :meth:`check_X` at fit time.
    """

    name = "mixed"

    def __init__(self, families: Any, *, alpha: Any = 2.0, feature_names: Any = None,
                 n_features: int | None = None, overrides: Any = None,
                 kinds: list[str] | None = None,
                 levels: list[np.ndarray | None] | None = None) -> None:
        self.families = families
        self.alpha = alpha
        self.feature_names = None if feature_names is None else list(feature_names)
        self.n_features = n_features
        self.overrides = overrides
        self.kinds = kinds
        #: class labels (messages), levels per column and the frame, each given to the
        #: parts (their columns' levels and frame) by :meth:`configured`
        self.levels = levels
        self.labels: np.ndarray | None = None
        self.frame = None
        self.parts_: list[dict] | None = None

    # ------------------------------------------------------- specification
    @property
    def capabilities(self) -> Capabilities:
        """Those every part has (missing, conjugate, evidence, exact LOO) or some part
        has (sparse, ...); the structural hooks are delegated to the parts."""
        parts = [q["family"] for q in self.parts_] if self.parts_ is not None else None
        if parts is None:
            try:
                parts = [family for _, family in spec.instances(self)]
            except (ValueError, TypeError):
                parts = []

        flags = {f: all(getattr(q.capabilities, f) for q in parts)
                 for f in ("missing", "conjugate", "evidence", "exact_loo")}
        flags |= {f: any(getattr(q.capabilities, f) for q in parts)
                  for f in ("sparse", "learns_categories", "kernel_density")}
        return Capabilities(**flags, real_valued=True, far_rows=True, fixed_params=True,
                            train_log_lik=True, coords=True, levels=True, composite=True)

    @property
    def positive_only(self) -> bool:
        """True only when every part is positive-only (False if the spec is invalid)."""
        try:
            return all(bool(part.positive_only) for _, part in spec.instances(self))
        except (ValueError, TypeError):
            return False

    def column_families(self, names: list[str] | None, kinds: list[str]) -> list:
        """:func:`.spec.column_families`."""
        return spec.column_families(self, names, kinds)

    def _settle(self, settings: dict) -> None:
        """The settings of this copy, and each part's share on a new part family."""
        super()._settle(settings)
        if self.parts_ is not None:
            self.parts_ = _configured_parts(self.parts_, settings)

    def learned(self, stats: dict) -> MixedFamily:
        """A copy whose parts are each ``learned`` from their statistics."""
        new = copy.copy(self)
        new.parts_ = [dict(q, family=q["family"].learned(s))
                      for q, s in zip(self.resolved_parts(), stats["parts"], strict=True)]
        return new

    def real_columns(self, n_features: int) -> np.ndarray:
        """Columns of the real-valued parts (the others keep the identity frame)."""
        real = np.zeros(n_features, dtype=bool)
        for part in self.resolve(n_features):
            if part["family"].capabilities.real_valued:
                real[part["columns"]] = part["family"].real_columns(part["columns"].size)
        return real

    def resolve(self, n_features: int) -> list[dict]:
        """Validate the specification against ``n_features`` and build ``parts_`` (once)."""
        if self.parts_ is not None:
            return self.parts_
        self.parts_ = _configured_parts(spec.parts(self, n_features), {
            "labels": self.labels, "levels": self.levels, "frame": self.frame})
        return self.parts_

    def resolved_parts(self) -> list[dict]:
        """``parts_``; ``ValueError`` before the specification is resolved."""
        if self.parts_ is None:
            raise ValueError("MixedFamily is not resolved yet: call check_X(X, ...) first.")
        return self.parts_

    @property
    def param_dims(self) -> dict[str, tuple[str, ...]]:
        """``{prefix_key: ("class", "prefix_feature", ...)}`` (empty before resolving)."""
        out = {}
        for part in self.parts_ or []:
            pre = part["prefix"]
            for key, dims in part["family"].param_dims.items():
                out[f"{pre}_{key}"] = tuple(pymc.rename(pre, d) for d in dims)
        return out

    def part_features(self, part: dict) -> list:
        """Column names of one part: the DataFrame's, or ``x{j}`` for plain arrays."""
        names = self.feature_names
        return [names[j] if names is not None else f"x{j}" for j in part["columns"]]

    # ------------------------------------------------------------------ data
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Resolve the specification, then each part's checks on its columns (X with each
        column group transformed, in the original order)."""
        parts = self.resolve(X.shape[1])
        if sparse.is_sparse(X):  # the count parts keep their columns sparse
            blocks = [q["family"].check_X(_cols(X, q), method=method,
                                          who=f"{who} part {q['prefix']}") for q in parts]
            return sparse.assemble(blocks, [q["columns"] for q in parts], X.shape[1])
        out = np.empty_like(X, dtype=np.float64)
        for part in parts:
            cols = part["columns"]
            out[:, cols] = part["family"].check_X(
                X[:, cols], method=method, who=f"{who} part {part['prefix']}"
            )
        return out

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """``count`` (K,) and the statistics of every part on its columns."""
        parts = self.resolve(X.shape[1])
        return {
            "count": np.bincount(y, weights=w, minlength=n_classes).astype(np.float64),
            "parts": [q["family"].stats(_cols(X, q), y, w, n_classes) for q in parts],
        }

    def merge(self, a: dict, b: dict) -> dict:
        """Part-wise merge."""
        parts = self.resolved_parts()
        return {
            "count": a["count"] + b["count"],
            "parts": [
                q["family"].merge(sa, sb)
                for q, sa, sb in zip(parts, a["parts"], b["parts"], strict=True)
            ],
        }

    # -------------------------------------------------------------- estimates
    def namespaced(self, per_part: list[dict]) -> dict:
        """The parts' dicts merged, each key prefixed by its part's prefix."""
        out = {}
        for part, params in zip(self.resolved_parts(), per_part, strict=True):
            out.update({f"{part['prefix']}_{key}": value for key, value in params.items()})
        return out

    def split(self, params: dict) -> list[dict]:
        """The inverse of :meth:`namespaced`: each part's entries, prefix removed."""
        out = []
        for part in self.resolved_parts():
            pre = part["prefix"] + "_"
            out.append({k[len(pre) :]: v for k, v in params.items() if k.startswith(pre)})
        return out

    def _each(self, call: Callable, *per_part: list) -> list:
        """``call(family, cols, *entries)`` for every part: its family, ``cols(Z)`` its
        columns of rows Z (None stays None) and its entries of the per-part lists."""
        return [call(q["family"], lambda Z, q=q: None if Z is None else _cols(Z, q), *entries)
                for q, *entries in zip(self.resolved_parts(), *per_part, strict=True)]

    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """``{"parts": [resolved prior of each part]}``."""
        return {"parts": self._each(lambda f, _, s: f.prior(s, record=record), stats["parts"])}

    def prior_uses_data(self) -> bool:
        """Whether some part's prior reads the data."""
        return any(q["family"].prior_uses_data() for q in self.resolved_parts())

    def mle(self, stats: dict) -> dict:
        """Namespaced MLEs of the parts."""
        return self.namespaced(self._each(lambda f, _, s: f.mle(s), stats["parts"]))

    def map(self, stats: dict, prior: dict) -> dict:
        """Namespaced MAP estimates of the parts."""
        return self.namespaced(self._each(lambda f, _, s, pr: f.map(s, pr), stats["parts"],
                                          prior["parts"]))

    def log_prior(self, params: dict, prior: dict) -> float:
        """The sum of the parts' log prior densities (independent priors)."""
        return float(sum(self._each(lambda f, _, p, pr: f.log_prior(p, pr), self.split(params),
                                    prior["parts"])))

    def _require_conjugate(self) -> None:
        others = [q for q in self.resolved_parts() if not q["family"].capabilities.conjugate]
        if others:
            names = sorted({q["name"] for q in others})
            raise ValueError(
                f"MixedNB with a {' or '.join(map(repr, names))} part "
                f"({', '.join(q['prefix'] for q in others)}) has no conjugate posterior (its "
                "prior is not conjugate); use method='mcmc' (or 'mle'/'map')."
            )

    def posterior(self, stats: dict, prior: dict) -> dict:
        """``{"parts": [conjugate posterior of each part]}``; not with a kernel part."""
        self._require_conjugate()
        return {"parts": self._each(lambda f, _, s, pr: f.posterior(s, pr), stats["parts"],
                                    prior["parts"])}

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """Namespaced i.i.d. posterior draws of every part (leading dim ``size``)."""
        self._require_conjugate()
        return self.namespaced(self._each(lambda f, _, p: f.draw(p, size, rng), post["parts"]))

    def log_predictive(self, X: np.ndarray, post: dict) -> np.ndarray:
        """The sum of the parts' predictives on their columns (independent priors)."""
        self._require_conjugate()
        return sum(self._each(lambda f, cols, p: f.log_predictive(cols(X), p), post["parts"]))

    # ----------------------------------------------------- model comparison
    def log_evidence(self, stats: dict, prior: dict, rows: Callable[[], tuple], *,
                     method: str,
                     who: str) -> float:
        """The sum of the parts' evidences on their columns (``ValueError`` named
        ``"{who} part {prefix}"`` from a part without one)."""
        def part(f, cols, s, p, prefix) -> float:
            def sub() -> tuple:
                X, w = rows()
                return cols(X), w

            return f.log_evidence(s, p, sub, method=method, who=f"{who} part {prefix}")

        prefixes = [q["prefix"] for q in self.resolved_parts()]
        return sum(self._each(part, stats["parts"], prior["parts"], prefixes), 0.0)

    def loo_log_predictive(self, Z, y: np.ndarray, w: np.ndarray, post: dict) -> np.ndarray:
        """The sum of the parts' leave-one-out predictives on their columns."""
        self._require_conjugate()
        return sum(self._each(lambda f, cols, p: f.loo_log_predictive(cols(Z), y, w, p),
                              post["parts"]))

    def loo_log_predictive_at(self, Z, y: np.ndarray, w: np.ndarray, post: dict,
                              Z_test=None) -> np.ndarray:
        """The sum of the parts' leave-one-out predictives at other rows on their columns."""
        self._require_conjugate()
        return sum(self._each(lambda f, cols, p: f.loo_log_predictive_at(
            cols(Z), y, w, p, cols(Z_test)), post["parts"]))

    # ------------------------------------------------------- unlabeled rows
    def em_m_step(self, labeled: dict, completed: dict, Z_u: np.ndarray, A: np.ndarray,
                  prior: dict | None, params: dict) -> tuple[dict, dict]:
        """Every part's ``em_m_step`` on its columns."""
        out, used = zip(*self._each(
            lambda f, cols, s_l, s_c, pr, sub: f.em_m_step(s_l, s_c, cols(Z_u), A, pr, sub),
            labeled["parts"], completed["parts"],
            [None] * len(self.parts_) if prior is None else prior["parts"],  # None: MLE
            self.split(params)), strict=True)
        return self.namespaced(out), {"count": completed["count"], "parts": list(used)}

    def conditional_posterior(self, stats: dict, params: dict, prior: dict,
                              rng: np.random.Generator) -> dict:
        """Every part's ``conditional_posterior``; not with a kernel part."""
        self._require_conjugate()
        return {"parts": self._each(
            lambda f, _, s, sub, pr: f.conditional_posterior(s, sub, pr, rng),
            stats["parts"], self.split(params), prior["parts"])}

    def can_augment_labels(self, stats: dict, Z_u) -> bool:
        """Whether every part can, on its columns of ``Z_u``."""
        return all(self._each(lambda f, cols, s: f.can_augment_labels(s, cols(Z_u)),
                              stats["parts"]))

    def pymc_rows_loglik(self, params: dict, Z: np.ndarray, *, stats: dict, observed,
                         prefix: str = "", dims: dict | None = None):
        """The sum of the parts' ``pymc_rows_loglik`` on their columns, (m, K)."""
        return sum(
            part["family"].pymc_rows_loglik(sub, _cols(Z, part), stats=s,
                                            observed=observed, prefix=pre, dims=part_dims)
            for (part, sub, pre, part_dims), s in zip(
                pymc.part_hooks(self, params, dims, prefix), stats["parts"], strict=True)
        )

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """Sum of the parts' log-likelihoods on their columns, (..., n, K)."""
        return sum(self._each(lambda f, cols, sub: f.log_lik(cols(X), sub, full=full),
                              self.split(params)))

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row, each part filling its columns (original column order)."""
        parts = self.resolved_parts()
        n_features = sum(q["columns"].size for q in parts)
        out = np.empty((y.shape[0], n_features))
        for part, sub in zip(parts, self.split(params), strict=True):
            out[:, part["columns"]] = part["family"].sample(sub, y, rng)
        return out

    def sample_inputs(self, stats: dict) -> dict:
        """Namespaced :meth:`sample` inputs of the parts that need some."""
        return self.namespaced(self._each(lambda f, _, s: f.sample_inputs(s), stats["parts"]))

    def stats_attributes(self, stats: dict) -> dict:
        """Namespaced attributes of the parts' statistics (``multinomial0_feature_count_``)."""
        return self.namespaced(self._each(lambda f, _, s: f.stats_attributes(s),
                                          stats["parts"]))

    def attributes(self, params: dict) -> dict:
        """Namespaced part attributes (``gaussian0_theta_``, ...), ``families_`` (the
        fitted specification, :func:`.spec.fitted`) and ``parts_`` (module docstring)."""
        out: dict[str, Any] = self.namespaced(
            self._each(lambda f, _, sub: f.attributes(sub), self.split(params)))
        out["families_"] = spec.fitted(self)
        out["parts_"] = [
            {
                "name": q["name"],
                "part": q["part"],
                "prefix": q["prefix"],
                "columns": q["columns"].tolist(),
                "features": features,
            }
            for q, features in zip(self.resolved_parts(),
                                   map(self.part_features, self.resolved_parts()), strict=True)
        ]
        return out

    # ----------------------------------------------------------------- frame
    def to_user(self, params: dict) -> dict:
        """The parameters present in ``params`` in the units of X, part by part."""
        return self.namespaced(self._each(
            lambda f, _, sub: f.to_user(sub) if f.capabilities.real_valued else sub,
            self.split(params)))

    def prior_to_user(self, prior: dict) -> dict:
        """The resolved priors of the parts in the units of X (for ``model_``)."""
        return {"parts": self._each(
            lambda f, _, pr: f.prior_to_user(pr) if f.capabilities.real_valued else pr,
            prior["parts"])}

    def far_terms(self, far, params: dict):
        """(a2, a1, a0) of far rows, each summed over the parts; a part without
        ``far_rows`` gives a2 = a1 = 0 and a0 = its log-likelihood (its columns are
        never far)."""
        def part(f, _, sub, q):
            if f.capabilities.far_rows:
                return f.far_terms(far.columns(q["columns"]), sub)
            a0 = f.log_lik(far.ZN[:, q["columns"]], sub, full=True)
            return np.zeros_like(a0), np.zeros_like(a0), a0

        return tuple(map(sum, zip(*self._each(part, self.split(params), self.parts_),
                                  strict=True)))

    def far_log_predictive(self, far, post: dict) -> np.ndarray:
        """Closed-form predictive log-density of far rows, summed over the parts (the
        plain predictive for a part without ``far_rows``)."""
        self._require_conjugate()
        return sum(self._each(
            lambda f, _, p, q: f.far_log_predictive(far.columns(q["columns"]), p)
            if f.capabilities.far_rows else f.log_predictive(far.ZN[:, q["columns"]], p),
            post["parts"], self.parts_))

    # ------------------------------------------------------------------ PyMC
    pymc_params = pymc.pymc_params
    pymc_observed = pymc.observed
    pymc_stats_loglik = pymc.stats_loglik
    fixed_params = pymc.fixed_params
    coords = pymc.coords
    train_log_lik = pymc.train_log_lik


def _configured_parts(parts: list[dict], settings: dict) -> list[dict]:
    """The parts with families configured with their share of ``settings`` (labels,
    their columns' levels and frame)."""
    out = []
    for part in parts:
        family, share = part["family"], {}
        if "labels" in settings:
            share["labels"] = settings["labels"]
        levels = settings.get("levels")
        if "levels" in settings and family.capabilities.levels:
            share["levels"] = None if levels is None else [levels[j] for j in part["columns"]]
        frame = settings.get("frame")
        if "frame" in settings and family.capabilities.real_valued:
            share["frame"] = None if frame is None else frame.sub(part["columns"])
        out.append(dict(part, family=family.configured(**share)))
    return out
