"""Independent categorical features (categorical naive Bayes) with Dirichlet priors.

The categories of feature j are the distinct values observed in training (codes
0..C_j - 1 in sorted order, :mod:`bayesgen.data.categories`) plus the codes
0..m_j - 1 declared by ``min_categories``; never the range 0..max(x_j). Model, per
class k and feature j::

    theta_kj ~ Dirichlet(alpha_j, ..., alpha_j)        (C_j categories)
    x_nj | y_n = k ~ Categorical(theta_kj)

Declared categories never seen get the prior's share; a value that is not a category
at predict time raises ``ValueError``. Statistics: N_k, the observed categories
(``categories`` (d, Cs) padded, ``n_seen`` (d,); merged by union) and the counts
c_kjc (K, d, Cs). MLE c / N_k; MAP (c + alpha - 1) / (N_k + C_j (alpha - 1));
posterior Dirichlet(c_kj + alpha_j) (:class:`DirichletCategorical`). Parameters are
padded to (..., K, d, Cmax) with probability 0 beyond C_j. In PyMC the features with
equal C_j share one Dirichlet variable ``theta_c{C_j}`` (:mod:`.pymc`)."""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np
from scipy.special import gammaln, xlogy

from bayesgen.data import categories as cats
from bayesgen.data import missing
from bayesgen.data.validation import check_nonnegative
from bayesgen.families import conjugate
from bayesgen.families import dirichlet as dr
from bayesgen.families.categorical import pymc as _pymc
from bayesgen.families.protocol import Capabilities, Configurable
from bayesgen.families.semi_hooks import UnlabeledHooks

WHO = "CategoricalNB"


class CategoricalFamily(conjugate.Hooks, UnlabeledHooks):
    """Factorised categorical likelihood with a symmetric Dirichlet per class/feature.

    Parameters
    ----------
    alpha : float or array-like of shape (d,)
        Dirichlet concentration (> 0; >= 1 for MAP). 1 is the MLE, 2 Laplace smoothing.
    min_categories : int, array-like of shape (d,) or None
        Declared categories: codes 0..m_j - 1 are categories of feature j in addition
        to the observed values (those never seen get the prior's share).
    """

    name = "categorical"
    param_dims: ClassVar[dict[str, tuple[str, ...]]] = {"theta": ("class", "feature", "category")}
    positive_only = True
    #: NaN in X is a missing value, integrated out (counts of the observed entries; a
    #: missing x_j drops its term); text, boolean and category columns enter as codes of
    #: their ``levels``; the PyMC model has one multivariate observed value (hence
    #: ``pymc_rows_loglik``) and a ``category`` dim (hence ``coords``); the categories are
    #: the values seen in training (and ``min_categories``)
    capabilities = Capabilities(missing=True, poor_score=True, coords=True,
                                levels=True,
                                learns_categories=True)
    #: ``categories_`` is configured by :meth:`learned`
    SETTINGS = Configurable.SETTINGS | {"categories_", "n_categories_"}

    def __init__(self, *, alpha: Any = 2.0, min_categories: Any = None) -> None:
        self.alpha = alpha
        self.min_categories = min_categories
        self.labels: np.ndarray | None = None
        #: per feature, the category values (levels) behind the codes of a text,
        #: boolean or categorical DataFrame column, or None (set by the estimator,
        #: see :mod:`bayesgen.data.tables`); reported as ``categories_``
        self.levels: list[np.ndarray | None] | None = None
        self.categories_: list[np.ndarray] | None = None
        self.n_categories_: np.ndarray | None = None

    # ------------------------------------------------------------------ data
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Non-negative integer codes; after fitting also known categories only."""
        check_nonnegative(X, who)
        if X.size and not np.array_equal(X, np.floor(X), equal_nan=True):
            raise ValueError(
                f"{who} needs integer category codes 0, 1, 2, ... in X; found non-integer "
                "values. Encode categories with sklearn.preprocessing.OrdinalEncoder."
            )
        if self.categories_ is not None and X.size:
            cats.encode(X, self.categories_, who)
        return X

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """Class counts (K,), the observed categories per feature and their weighted
        counts (K, d, Cs) by one ``bincount``; missing entries count nowhere (then
        ``observed`` N_kj (K, d))."""
        n, d = X.shape
        M = missing.mask(X)
        found = [cats.observed(X[:, j]) for j in range(d)] if M is None else [
            cats.observed_masked(X[:, j], M[:, j]) for j in range(d)]
        n_seen = np.array([v.size for v, _ in found], dtype=np.intp)
        width = int(n_seen.max()) if d else 0
        codes = np.column_stack([c for _, c in found]) if d else np.zeros((n, 0), np.intp)
        flat = (y[:, None] * d + np.arange(d)) * width + codes
        with np.errstate(over="ignore", invalid="ignore"):  # reported by check_stats
            weights = np.repeat(w, d) if M is None else np.where(M, 0.0, w[:, None]).ravel()
            counts = np.bincount(flat.ravel(), weights=weights,
                                 minlength=n_classes * d * width)
        if width == 0:  # every entry missing (a Dask chunk or batch): no category yet
            counts = np.zeros(0)
        out = {
            "count": np.bincount(y, weights=w, minlength=n_classes),
            "category_count": counts.reshape(n_classes, d, width),
            "categories": cats.table([v for v, _ in found], width),
            "n_seen": n_seen,
        }
        if M is not None:
            out["observed"] = out["category_count"].sum(axis=-1)
        return dr.check_stats({k: out[k] for k in ("count", "category_count")}, X, WHO) | out

    def merge(self, a: dict, b: dict) -> dict:
        """Union of the categories per feature; counts summed over it."""
        ca = cats.from_table(a["categories"], a["n_seen"])
        cb = cats.from_table(b["categories"], b["n_seen"])
        union = [cats.union(u, v) for u, v in zip(ca, cb, strict=True)]
        width = max((u.size for u in union), default=0)
        counts = np.zeros((a["count"].shape[0], len(union), width))
        for j, u in enumerate(union):
            counts[:, j, : u.size] = cats.reindex(a["category_count"][:, j], ca[j], u)
            counts[:, j, : u.size] += cats.reindex(b["category_count"][:, j], cb[j], u)
        out = {
            "count": a["count"] + b["count"],
            "category_count": counts,
            "categories": cats.table(union, width),
            "n_seen": np.array([u.size for u in union], dtype=np.intp),
        }
        return missing.merge_observed(out, a, b)

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """``alpha`` (d,) and ``n_categories`` C_j (d,) of :meth:`categories`."""
        alpha = dr.check_alpha(self.alpha, stats["n_seen"].shape[0])
        return {"alpha": alpha, "n_categories": _sizes(self.categories(stats))}

    def prior_uses_data(self) -> bool:
        """False: leave-one-out keeps the fit's categories."""
        return False

    def categories(self, stats: dict) -> list[np.ndarray]:
        """The categories of every feature: the values observed in ``stats`` united with
        0..min_categories_j - 1 and, for a family already :meth:`learned`, with its
        ``categories_`` (a function of the statistics and the configuration). So a
        leave-one-out refit keeps the fit's categories, as the closed-form downdates do:
        a category seen in one training row only stays a category without that row."""
        observed = cats.from_table(stats["categories"], stats["n_seen"])
        minimum = self._min_categories(observed, stats["count"].shape[0])
        out = [cats.union(o, np.arange(m, dtype=o.dtype)) if m else o
               for o, m in zip(observed, minimum, strict=True)]
        if self.categories_ is None:
            return out
        return [cats.union(o, c) for o, c in zip(out, self.categories_, strict=True)]

    def learned(self, stats: dict) -> CategoricalFamily:
        """A copy configured with the :meth:`categories` of ``stats`` (``categories_``,
        ``n_categories_``), which the hooks without statistics (``log_lik``, ...) read."""
        categories = self.categories(stats)
        return self.configured(categories_=categories, n_categories_=_sizes(categories))

    def _min_categories(self, observed: list, n_classes: int) -> np.ndarray:
        """m_j (d,); 0 for features with levels; ``ValueError`` when the tables cannot fit
        in memory (:func:`_check_table_memory`)."""
        d = len(observed)
        if self.min_categories is None:
            return np.zeros(d, dtype=np.intp)
        m = np.asarray(self.min_categories)
        ok = m.dtype.kind in "iu" or (m.dtype.kind == "f" and np.all(m == np.round(m)))
        if m.ndim == 0:
            m = np.full(d, m)
        if not ok or m.shape != (d,) or np.any(m < 1):
            raise ValueError(
                "min_categories must be a positive integer or one positive integer per "
                f"feature (shape ({d},)); got {self.min_categories!r}."
            )
        m = m.astype(float)
        for j, level in enumerate(self.levels or []):
            if level is not None:
                m[j] = 0
        _check_table_memory(n_classes, observed, m)
        return m.astype(np.intp)

    # -------------------------------------------------------------- estimates
    def _aligned(self, stats: dict, categories: list | None = None) -> np.ndarray:
        """Category counts over ``categories`` (default :meth:`categories` of ``stats``)
        (K, d, Cmax), zero-padded."""
        observed = cats.from_table(stats["categories"], stats["n_seen"])
        categories = self.categories(stats) if categories is None else categories
        width = max((c.size for c in categories), default=0)
        out = np.zeros((stats["count"].shape[0], len(observed), width))
        for j, (o, c) in enumerate(zip(observed, categories, strict=True)):
            out[:, j, : c.size] = cats.reindex(stats["category_count"][:, j], o, c)
        return out

    def _padded(self, stats: dict, add: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Counts over the :meth:`categories` of ``stats`` plus ``add`` on the valid
        categories, 0 on the padding, and C_j (d,)."""
        categories = self.categories(stats)
        n_cat = _sizes(categories)
        counts = self._aligned(stats, categories)
        valid = np.arange(counts.shape[-1]) < n_cat[:, None]  # (d, Cmax)
        return np.where(valid, counts + add, 0.0), n_cat

    def mle(self, stats: dict) -> dict:
        """theta_kjc = c_kjc / N_kj (``ValueError`` for a feature never observed)."""
        numer, _ = self._padded(stats, np.zeros(1))
        if "observed" in stats:
            missing.require_observed(stats["observed"], self.labels, WHO)
        denom = missing.observed_count(stats)[..., None]
        return {"theta": dr.mode(numer, denom, self.labels, WHO)}

    def map(self, stats: dict, prior: dict) -> dict:
        """theta_kjc = (c_kjc + alpha_j - 1) / (N_k + C_j (alpha_j - 1)), alpha >= 1."""
        alpha = prior["alpha"]
        dr.require_mode_alpha(alpha, WHO)
        numer, n_cat = self._padded(stats, (alpha - 1.0)[:, None])
        denom = (missing.observed_count(stats)[..., None]
                 + (n_cat * (alpha - 1.0))[:, None])
        return {"theta": dr.mode(numer, denom, self.labels, WHO)}

    def log_prior(self, params: dict, prior: dict) -> float:
        """sum_kjc (alpha_j - 1) log theta_kjc over the C_j categories: log p(theta) up to a
        constant."""
        theta = params["theta"]  # (K, d, Cmax), zero padding beyond C_j
        valid = np.arange(theta.shape[-1])[None, :] < np.asarray(prior["n_categories"])[:, None]
        a = np.where(valid, (prior["alpha"] - 1.0)[:, None], 0.0)
        return float(np.sum(xlogy(a, theta)))

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Dirichlet concentration ``c + alpha`` (K, d, Cmax), 0 on the padding."""
        return {"concentration": self._padded(stats, prior["alpha"][:, None])[0]}

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` i.i.d. draws ``theta`` (size, K, d, Cmax); exact 0 only on padding."""
        return {"theta": np.exp(dr.log_dirichlet(post["concentration"], size, rng))}

    # ------------------------------------------ predictive, evidence, LOO
    def algebra(self, post: dict) -> conjugate.Entrywise:
        """:class:`DirichletCategorical` on the category codes (:meth:`encode`)."""
        return DirichletCategorical(post["concentration"].shape[-1])

    def natural_prior(self, prior: dict) -> dict:
        """Dirichlet(alpha_j) over the C_j categories, 0 on the padding, (d, Cmax)."""
        n_cat = prior["n_categories"]
        valid = np.arange(max(int(n_cat.max(initial=0)), 1)) < n_cat[:, None]
        return {"concentration": np.where(valid, prior["alpha"][:, None], 0.0)}

    def encode(self, X: np.ndarray) -> np.ndarray:
        """The category codes of X (n, d) as float64, NaN where an entry is missing."""
        codes = cats.encode(X, self.categories_, WHO).astype(np.float64)
        M = missing.mask(X)
        return codes if M is None else np.where(M, np.nan, codes)

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """sum_j log theta_{k, j, code(x_nj)}, (..., n, K) for ``theta`` (..., K, d, Cmax):
        one sparse one-hot product for all draws (a missing entry has weight 0); ``-inf`` at a
        category of probability 0; ``full`` is ignored."""
        theta = params["theta"]
        n, lead, n_classes = X.shape[0], theta.shape[:-3], theta.shape[-3]
        with np.errstate(divide="ignore"):
            log_theta = np.log(theta)
        out = conjugate.onehot_matmul(cats.encode(X, self.categories_, WHO), missing.mask(X),
                                      log_theta).reshape(n, -1, n_classes)
        return np.moveaxis(out, 0, -2).reshape(*lead, n, n_classes)

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One value per feature and row by inverse CDF, as category values."""
        theta = params["theta"][np.arange(y.shape[0]), y]  # (n, d, Cmax)
        codes = cats.inverse_cdf(theta, rng)
        values = cats.table(self.categories_, theta.shape[-1])
        return values[np.arange(codes.shape[1]), codes].astype(np.float64)

    def attributes(self, params: dict) -> dict:
        """``categories_``, ``n_categories_`` (d,) and ``feature_log_prob_``, a list of d
        arrays (K, C_j), like scikit-learn's."""
        theta = params["theta"]
        n_cat = self.n_categories_
        with np.errstate(divide="ignore"):
            log_theta = np.log(theta)
        out = {
            "categories_": self._user_categories(),
            "n_categories_": n_cat,
            "feature_log_prob_": [log_theta[..., j, :c] for j, c in enumerate(n_cat)],
        }
        return out

    def stats_attributes(self, stats: dict) -> dict:
        """``category_count_``: a list of d arrays (K, C_j) over the categories."""
        categories = self.categories(stats)
        counts = self._aligned(stats, categories)
        return {"category_count_": [counts[:, j, :c.size]
                                    for j, c in enumerate(categories)]}

    def _user_categories(self) -> list[np.ndarray]:
        """``categories_`` in the user's values: the levels of text/boolean/categorical
        columns (whose codes are the family's categories), the values otherwise."""
        levels = self.levels or [None] * len(self.categories_)
        return [c if level is None else level[c.astype(np.intp)]
                for c, level in zip(self.categories_, levels, strict=True)]

    # ------------------------------------------------------------------ PyMC
    def coords(self, dims: dict | None = None) -> dict:
        """Coordinates of ``category`` and of the blocks of equal C_j
        (:func:`.pymc.category_coords`); empty before fitting."""
        if self.n_categories_ is None:
            return {}
        return _pymc.category_coords(self.n_categories_, *(dims or self.param_dims)["theta"][1:])

    pymc_params = _pymc.pymc_params
    pymc_observed = _pymc.observed
    pymc_rows_loglik = _pymc.rows_loglik

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum_kjc c_kjc log theta_kjc (theta replaced by 1 where c = 0: no NaN gradient)."""
        import pytensor.tensor as pt

        counts = self._aligned(stats)
        theta = params["theta"][:, :, : counts.shape[-1]]
        return pt.sum(counts * pt.log(pt.switch(counts > 0, theta, 1.0)))


def _sizes(categories: list[np.ndarray]) -> np.ndarray:
    """C_j (d,) of the categories of every feature."""
    return np.array([c.size for c in categories], dtype=np.intp)


class DirichletCategorical(conjugate.Entrywise):
    """The Dirichlet-categorical algebra on category codes: t(c) = one-hot of c over
    C levels, log z = sum_c lgamma(a_c) - lgamma(sum_c a_c), step(c) = log a_c - log sum_c
    a_c, tabulated at every code."""

    who = WHO
    tabled = True

    def __init__(self, width: int) -> None:
        self.width = width

    def t(self, x: np.ndarray) -> dict:
        return {"concentration": (np.arange(self.width) == x[..., None]).astype(np.float64)}

    def log_z(self, post: dict) -> np.ndarray:
        a = post["concentration"]
        valid = a > 0
        return (np.where(valid, gammaln(np.where(valid, a, 1.0)), 0.0).sum(axis=-1)
                - gammaln(a.sum(axis=-1)))

    def step(self, post: dict, x: np.ndarray) -> np.ndarray:
        a = post["concentration"]
        hit = np.where(np.arange(a.shape[-1]) == x[..., None], a, 0.0).sum(axis=-1)
        return np.log(hit) - np.log(a.sum(axis=-1))

    def loo_step(self, post: dict, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        a = post["concentration"]
        hit = np.take_along_axis(a, x.astype(np.intp)[..., None], axis=-1)[..., 0]
        return np.log(hit - w) - np.log(a.sum(axis=-1) - w)

    def table(self, post: dict) -> np.ndarray:
        a = post["concentration"]
        valid = a > 0
        return np.where(valid, np.log(np.where(valid, a, 1.0))
                        - np.log(a.sum(axis=-1, keepdims=True)), 0.0)

    def codes(self, X: np.ndarray) -> np.ndarray:
        return X.astype(np.intp)


def _check_table_memory(n_classes: int, observed: list, minimum: np.ndarray) -> None:
    """``ValueError`` before allocating when the tables (2 x K x d x C_max float64) that
    ``min_categories`` asks for exceed the machine's physical memory."""
    sizes = np.maximum([o.size for o in observed], minimum).astype(float)
    if sizes.size == 0:
        return
    needed = 8.0 * (2.0 * n_classes * sizes.size * sizes.max() + sizes.sum())
    try:  # bytes of physical memory (2**40 where the OS does not say)
        available = int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        available = 2**40
    if needed > available:
        raise ValueError(
            f"min_categories={minimum.max():.6g} would need category tables of about "
            f"{needed / 2**30:.3g} GiB (2 x {n_classes} classes x {sizes.size} features x "
            f"{sizes.max():.6g} categories of float64), more than this machine's "
            f"{available / 2**30:,.1f} GiB of memory. Declare only the categories that can "
            "occur (min_categories = the number of codes 0..m-1 of each feature)."
        )
