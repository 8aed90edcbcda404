"""Independent categorical features (categorical naive Bayes) with Dirichlet priors.

Features hold integer category codes 0..C_j - 1. Model, per class k and feature j::

    theta_kj ~ Dirichlet(alpha_j, ..., alpha_j)        (C_j categories)
    x_nj | y_n = k ~ Categorical(theta_kj)

C_j = max(max code of feature j in training + 1, min_categories_j): categories never
seen in training get the prior's share. Sufficient statistics: weighted class counts
N_k and category counts c_kjc = sum_n w_n [x_nj = c], stored padded as (K, d, Cs)
together with ``n_seen`` (d,) = max code + 1 (merged by maximum). With N_k the total
of every feature in class k:

- MLE: theta_kjc = c_kjc / N_k
- MAP: theta_kjc = (c_kjc + alpha_j - 1) / (N_k + C_j (alpha_j - 1))
- posterior: theta_kj | data ~ Dirichlet(c_kj + alpha_j) over its C_j categories

Parameters are stored padded as (..., K, d, Cmax), Cmax = max_j C_j, with probability
0 for categories c >= C_j, so that the log-likelihood is one sparse matrix product.

In PyMC (``model_``, ``method="mcmc"``) the features with the same C_j share one
Dirichlet variable ``theta_c{C_j}`` (as many model variables as distinct C_j, not one
per feature); they are padded and put back in feature order as the deterministic
``theta`` (K, d, Cmax). The observed codes are one ``pm.CustomDist`` named ``x``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from bayesgen._validation import check_nonnegative
from bayesgen.families import _dirichlet as dr

WHO = "CategoricalNB"


class CategoricalFamily:
    """Factorised categorical likelihood with a symmetric Dirichlet per class/feature.

    Parameters
    ----------
    alpha : float or array-like of shape (d,)
        Dirichlet concentration (> 0; >= 1 for MAP). 1 is the MLE, 2 Laplace smoothing.
    min_categories : int, array-like of shape (d,) or None
        Known number of categories per feature; C_j is the larger of this and the
        largest training code + 1.

    Notes
    -----
    :meth:`prior` resolves ``n_categories_`` (d,), which :meth:`check_X` then uses to
    reject codes >= C_j at predict time. The family keeps the statistics it was
    fitted on (``fitted_stats_``) for ``category_count_``.
    """

    name = "categorical"
    param_dims: ClassVar[dict[str, tuple[str, ...]]] = {"theta": ("class", "feature", "category")}
    positive_only = True
    #: scikit-learn's ``poor_score`` classifier tag (as its discrete naive Bayes)
    poor_score = True

    def __init__(self, *, alpha: Any = 2.0, min_categories: Any = None) -> None:
        self.alpha = alpha
        self.min_categories = min_categories
        self.labels: np.ndarray | None = None
        self.n_categories_: np.ndarray | None = None
        self.fitted_stats_: dict | None = None

    # ------------------------------------------------------------------ data
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Non-negative integer codes; after fitting also codes < C_j."""
        check_nonnegative(X, who)
        if X.size and not np.array_equal(X, np.floor(X)):
            raise ValueError(
                f"{who} needs integer category codes 0, 1, 2, ... in X; found non-integer "
                "values. Encode categories with sklearn.preprocessing.OrdinalEncoder."
            )
        if self.n_categories_ is not None and X.size:
            too_big = X >= self.n_categories_
            if too_big.any():
                row, j = np.argwhere(too_big)[0]
                c, n_cat = int(X[row, j]), int(self.n_categories_[j])
                raise ValueError(
                    f"{who}: feature {j} has category code {c}, but the model was fitted "
                    f"with C_j = {n_cat} categories (codes 0..{n_cat - 1}) for it. Refit "
                    "with min_categories set to the known number of categories."
                )
        return X

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """Class counts (K,), category counts (K, d, Cs) and ``n_seen`` (d,).

        One weighted ``bincount`` over the flat index ``(y_n d + j) Cs + x_nj``.
        """
        n, d = X.shape
        codes = X.astype(np.intp)
        n_seen = codes.max(axis=0) + 1 if n else np.zeros(d, dtype=np.intp)
        width = int(n_seen.max()) if d else 0
        flat = (y[:, None] * d + np.arange(d)) * width + codes
        counts = np.bincount(flat.ravel(), weights=np.repeat(w, d), minlength=n_classes * d * width)
        return {
            "count": np.bincount(y, weights=w, minlength=n_classes),
            "category_count": counts.reshape(n_classes, d, width),
            "n_seen": n_seen,
        }

    def merge(self, a: dict, b: dict) -> dict:
        """Sum the (zero-padded) counts; ``n_seen`` is the maximum."""
        width = max(a["category_count"].shape[2], b["category_count"].shape[2])
        return {
            "count": a["count"] + b["count"],
            "category_count": _pad(a["category_count"], width) + _pad(b["category_count"], width),
            "n_seen": np.maximum(a["n_seen"], b["n_seen"]),
        }

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict) -> dict:
        """``alpha`` (d,) and ``n_categories`` C_j (d,), also kept as ``n_categories_``."""
        self.fitted_stats_ = stats
        alpha = dr.check_alpha(self.alpha, stats["n_seen"].shape[0])
        return {"alpha": alpha, "n_categories": self._n_categories(stats)}

    def _n_categories(self, stats: dict) -> np.ndarray:
        """C_j = max(n_seen_j, min_categories_j), (d,); stored as ``n_categories_``."""
        d = stats["n_seen"].shape[0]
        n_cat = np.maximum(stats["n_seen"], self._min_categories(d)).astype(np.intp)
        self.n_categories_ = n_cat
        return n_cat

    def _min_categories(self, d: int) -> np.ndarray:
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
        return m.astype(np.intp)

    # -------------------------------------------------------------- estimates
    def _padded(self, stats: dict, prior: dict, add: np.ndarray) -> np.ndarray:
        """Counts padded to Cmax with ``add`` (K, d, Cmax) on the valid categories."""
        n_cat = prior["n_categories"]
        width = int(n_cat.max())
        valid = np.arange(width) < n_cat[:, None]  # (d, Cmax)
        counts = _pad(stats["category_count"], width)
        return np.where(valid, counts + add, 0.0)

    def mle(self, stats: dict) -> dict:
        """theta_kjc = c_kjc / N_k (0 for categories unseen in class k)."""
        self.fitted_stats_ = stats
        prior = {"n_categories": self._n_categories(stats)}
        numer = self._padded(stats, prior, np.zeros(1))
        denom = stats["count"][:, None, None]
        return {"theta": dr.mode(numer, denom, self.labels, WHO)}

    def map(self, stats: dict, prior: dict) -> dict:
        """theta_kjc = (c_kjc + alpha_j - 1) / (N_k + C_j (alpha_j - 1)), alpha >= 1."""
        self.fitted_stats_ = stats
        alpha = prior["alpha"]
        dr.require_mode_alpha(alpha, WHO)
        numer = self._padded(stats, prior, (alpha - 1.0)[:, None])
        self.n_categories_ = prior["n_categories"]
        denom = stats["count"][:, None, None] + (prior["n_categories"] * (alpha - 1.0))[:, None]
        return {"theta": dr.mode(numer, denom, self.labels, WHO)}

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Dirichlet concentration ``c + alpha`` (K, d, Cmax), 0 on the padding."""
        self.fitted_stats_ = stats
        conc = self._padded(stats, prior, prior["alpha"][:, None])
        self.n_categories_ = prior["n_categories"]
        return {"concentration": conc}

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` i.i.d. draws ``theta`` (size, K, d, Cmax); exact 0 only on padding."""
        return {"theta": np.exp(dr.log_dirichlet(post["concentration"], size, rng))}

    def log_predictive(self, X: np.ndarray, post: dict) -> np.ndarray:
        """Closed-form posterior predictive log p(x | y=k, data), shape (n, K).

        Dirichlet-categorical: p(x_j = c | data) = a_kjc / sum_c a_kjc, the posterior
        mean, and features are independent a posteriori, so this is :meth:`log_lik`
        at the posterior mean.
        """
        conc = post["concentration"]
        return self.log_lik(X, {"theta": conc / conc.sum(axis=-1, keepdims=True)})

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """sum_j log theta_{k, j, x_nj} for every row and class.

        Parameters
        ----------
        X : ndarray of shape (n, d)
            Codes that passed :meth:`check_X` (0 <= x_nj < C_j).
        params : dict
            ``theta`` of shape (..., K, d, Cmax); leading dims are posterior draws.
        full : bool
            Ignored: there is no term that is equal across classes.

        Returns
        -------
        ndarray of shape (..., n, K)
            The one-hot (sparse, n x d Cmax) encoding of X times log theta flattened
            to (d Cmax, ... K): one sparse matrix product for all draws, no loop.
            ``-inf`` where a code has probability 0 in a class (MLE).
        """
        theta = params["theta"]
        n, d = X.shape
        width = theta.shape[-1]
        lead = theta.shape[:-3]
        n_classes = theta.shape[-3]
        cols = (np.arange(d) * width + X.astype(np.intp)).ravel()
        onehot = sparse.csr_matrix(
            (np.ones(n * d), cols, np.arange(0, n * d + 1, d)), shape=(n, d * width)
        )
        with np.errstate(divide="ignore"):
            log_theta = np.log(theta)
        flat = np.moveaxis(log_theta.reshape(-1, n_classes, d * width), -1, 0)
        out = onehot @ flat.reshape(d * width, -1)  # (n, lead * K)
        out = np.asarray(out).reshape(n, -1, n_classes)
        return np.moveaxis(out, 0, -2).reshape(*lead, n, n_classes)

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One code per feature and row given class ``y`` (n,), params (n, K, d, Cmax).

        Inverse-CDF sampling on the cumulative probabilities of each feature.
        """
        theta = params["theta"][np.arange(y.shape[0]), y]  # (n, d, Cmax)
        return _inverse_cdf(theta, rng).astype(np.float64)

    def attributes(self, params: dict) -> dict:
        """``n_categories_`` (d,), and lists of d arrays (K, C_j) like scikit-learn:
        ``feature_log_prob_`` (log theta) and ``category_count_``."""
        theta = params["theta"]
        n_cat = self.n_categories_
        if n_cat is None:
            n_cat = np.full(theta.shape[-2], theta.shape[-1], dtype=np.intp)
        with np.errstate(divide="ignore"):
            log_theta = np.log(theta)
        out = {
            "n_categories_": n_cat,
            "feature_log_prob_": [log_theta[..., j, :c] for j, c in enumerate(n_cat)],
        }
        if self.fitted_stats_ is not None:
            counts = _pad(self.fitted_stats_["category_count"], int(n_cat.max()))
            out["category_count_"] = [counts[:, j, :c] for j, c in enumerate(n_cat)]
        return out

    # ------------------------------------------------------------------ PyMC
    def coords(self, dims: dict | None = None) -> dict:
        """Coordinates of the extra dims, known once :meth:`prior` has resolved C_j.

        With ``feature, category`` the last two dims of ``dims["theta"]`` (default
        ``"feature", "category"``): ``{category: 0..Cmax-1}`` for the padded ``theta``
        and, for every distinct number of categories C among the features (the blocks
        of the PyMC model), ``{f"{feature}_c{C}": positions j with C_j = C,
        f"{category}_c{C}": 0..C-1}``. Empty before fitting.
        """
        if self.n_categories_ is None:
            return {}
        return _category_coords(self.n_categories_, *(dims or self.param_dims)["theta"][1:])

    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """Dirichlet priors in the current PyMC model, in blocks of equal C_j (ragged).

        The features with C_j = C share one variable ``prefix + f"theta_c{C}"`` ~
        Dirichlet(alpha_j * ones(C)) with dims (class, ``feature_cC``, ``category_cC``):
        one Dirichlet per class and feature, but only as many model variables as
        distinct C_j. The blocks are padded with 0 to Cmax = max_j C_j and put back in
        feature order as ``prefix + "theta"`` (``pm.Deterministic``, dims
        ``dims["theta"]`` = (class, feature, category), shape (K, d, Cmax)), as the
        conjugate parameters. Coordinates missing from the model (see :meth:`coords`)
        are added. Returns ``{"theta": ...}``.
        """
        import pymc as pm
        import pytensor.tensor as pt

        dims = dims or self.param_dims
        class_dim, feature, category = dims["theta"]
        n_cat, alpha = prior["n_categories"], prior["alpha"]
        model = pm.modelcontext(None)
        for name, values in _category_coords(n_cat, feature, category).items():
            if name not in model.coords:
                model.add_coord(name, values)
        width = int(n_cat.max())
        blocks, order = [], []
        for c in np.unique(n_cat):
            features = np.flatnonzero(n_cat == c)
            block = pm.Dirichlet(
                f"{prefix}theta_c{c}",
                a=np.repeat(alpha[features, None], c, axis=1),
                dims=(class_dim, f"{feature}_c{c}", f"{category}_c{c}"),
            )
            if c < width:
                block = pt.concatenate(
                    [block, pt.zeros((block.shape[0], features.size, width - c))], axis=2
                )
            blocks.append(block)
            order.append(features)
        stacked = pt.concatenate(blocks, axis=1) if len(blocks) > 1 else blocks[0]
        inverse = np.argsort(np.concatenate(order))
        if np.any(inverse != np.arange(inverse.size)):
            stacked = stacked[:, inverse, :]
        theta = pm.Deterministic(f"{prefix}theta", stacked, dims=dims["theta"])
        return {"theta": theta}

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """Observed rows: ``x_nj ~ Categorical(theta[y_n, j, :C_j])`` for every feature.

        One ``pm.CustomDist`` named ``prefix + "x"`` with dims (obs, feature) over all
        codes (log-density sum_nj log theta[y_n, j, x_nj], forward sampler by inverse
        CDF), so that ``pm.sample_prior_predictive`` draws the whole of x at once.
        """
        import pymc as pm

        feature = (dims or self.param_dims)["theta"][1]
        pm.CustomDist(
            f"{prefix}x", params["theta"], y, logp=_rows_logp, random=_rows_random,
            signature="(k,d,c),(n)->(n,d)", dtype="int64",
            observed=np.asarray(X).astype(np.int64), dims=("obs", feature),
        )

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum_kjc c_kjc log theta_kjc: the categorical log-likelihood of all (weighted)
        rows, exact. Entries with c_kjc = 0 (the padding among them) contribute 0: theta
        is replaced by 1 there, so that 0 log 0 never makes a NaN value or gradient."""
        import pytensor.tensor as pt

        counts = stats["category_count"]
        theta = params["theta"][:, :, : counts.shape[-1]]
        return pt.sum(counts * pt.log(pt.switch(counts > 0, theta, 1.0)))


def _inverse_cdf(theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One code per entry of ``theta`` (..., Cmax) (probabilities on the last axis):
    the number of cumulative probabilities <= u, with u ~ Uniform(0, total)."""
    cdf = np.cumsum(theta, axis=-1)
    u = rng.uniform(size=(*theta.shape[:-1], 1)) * cdf[..., -1:]
    return (cdf <= u).sum(axis=-1)


def _category_coords(n_categories: np.ndarray, feature: str, category: str) -> dict:
    """``{category: 0..Cmax-1}`` and, per distinct C, ``{feature_cC: positions j with
    C_j = C, category_cC: 0..C-1}`` (see :meth:`CategoricalFamily.coords`)."""
    out = {category: list(range(int(n_categories.max())))}
    for c in np.unique(n_categories):
        out[f"{feature}_c{c}"] = np.flatnonzero(n_categories == c).tolist()
        out[f"{category}_c{c}"] = list(range(int(c)))
    return out


def _rows_logp(value, theta, y):
    """PyMC log-density of the observed codes ``value`` (n, d) given the padded
    ``theta`` (K, d, Cmax) and class indices ``y`` (n,): sum_nj log theta[y_n, j, x_nj]."""
    import pytensor.tensor as pt

    features = pt.arange(theta.shape[-2])
    return pt.sum(pt.log(theta[y[:, None], features[None, :], value]))


def _rows_random(theta, y, rng=None, size=None):
    """Forward sampler of the observed codes for ``pm.CustomDist``: (*size, n, d) int64
    given ``theta`` (..., K, d, Cmax) and ``y`` (..., n) (inverse CDF, vectorised)."""
    batch = tuple(size) if size is not None else np.broadcast_shapes(theta.shape[:-3], y.shape[:-1])
    theta = np.broadcast_to(theta, (*batch, *theta.shape[-3:]))
    y = np.broadcast_to(y, (*batch, y.shape[-1]))
    rows = np.take_along_axis(theta, y[..., :, None, None], axis=-3)  # (*batch, n, d, Cmax)
    return _inverse_cdf(rows, rng).astype(np.int64)


def _pad(counts: np.ndarray, width: int) -> np.ndarray:
    """Zero-pad the category axis (last) of ``counts`` to ``width``."""
    extra = width - counts.shape[-1]
    if extra <= 0:
        return counts
    return np.pad(counts, [(0, 0)] * (counts.ndim - 1) + [(0, extra)])
