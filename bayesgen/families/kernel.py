"""Kernel-density naive Bayes: a weighted Gaussian KDE per class and feature.

Model, per class k and feature j, with the training points i of class k::

    p(x_j | y = k) = sum_i w_i N(x_j; x_ij, h_kj^2) / W_k,     W_k = sum_i w_i

The bandwidths h_kj are the only parameters; the training points are fixed data.

Estimation maximises, for every (k, j) at once, the weighted leave-one-out (LOO)
log-likelihood over t = log h::

    LOO(h) = sum_i w_i log( sum_l v_il N(x_ij; x_lj, h^2) / (W_k - u_i) )
    v_il = w_l (l != i),   v_ii = w_i - u_i,   u_i = min(w_i, 1)

Leaving out one *unit* of weight (``u_i``) rather than the whole point makes a
sample weight of 2 the same as a duplicated row; with unit weights this is the
usual ``sum_{l != i}`` criterion. MAP adds the log-normal prior
``log h_kj ~ Normal(log s_kj, bandwidth_sd^2)`` centred on Silverman's rule of thumb
``s_kj = 0.9 min(sd, IQR / 1.34) W_k^(-1/5)`` (weighted population sd, weighted
inverted-CDF quartiles; sd alone when the IQR is 0) and maximises the posterior
density of log h.

The search runs over the bracket ``[s_kj / 1000, 10 s_kj]``: a grid of 13 points in
log h, then golden-section refinement around the best grid point, vectorised over
features (one loop over classes). When the LOO objective is unbounded as h -> 0
(every value of the class has a duplicate) the answer is the lower end ``s_kj / 1000``.
A class/feature with zero spread gets ``s_kj = 1e-3`` times the feature's overall sd
(``1e-9`` times the largest sd over features if the feature is constant), so every
bracket is scale-aware: rescaling a feature rescales its bandwidths and leaves the
predictions unchanged. There is no conjugate prior, hence no closed-form posterior.

MCMC (``method="mcmc"``) samples the posterior of the same model: the MAP's prior
``log h_kj ~ Normal(log s_kj, bandwidth_sd^2)`` times exp(LOO(h)), the weighted LOO
likelihood written in PyTensor on per-class pairwise constants (O(n_k^2 d) memory and
work per gradient, refused above ~200 MB). A KDE on the data themselves is no
distribution PyMC can observe, so ``model_`` holds it as ``pm.Potential("x_loglik")``
and has no ``x`` variable; predictive x are drawn with :meth:`KernelFamily.sample`
given the bandwidth draws and the training points (:meth:`KernelFamily.fixed_params`).

Cost: each objective evaluation is O(n_k^2 d) (all pairs of points of a class, in
blocks of bounded memory) and a fit takes about 50 evaluations per class; prediction
is O(n_test n_train d). Measured: 2 classes x 2000 points x 10 features fit in ~20 s.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bayesgen.families import _gaussian_stats as gstats

LOG_2PI = np.log(2.0 * np.pi)
_BUDGET = 4_000_000  # doubles per temporary block (~32 MB)
_GRID = 13
_GOLDEN_STEPS = 34
_INVPHI = (np.sqrt(5.0) - 1.0) / 2.0
_LOW, _HIGH = np.log(1e-3), np.log(10.0)
NO_CONJUGATE = (
    "KernelNB has no conjugate prior; use method='mcmc' for posterior inference on the "
    "bandwidths (or method='mle'/'map' for point estimates)."
)


def _fixed(params: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training points (n, d), classes (n,) and weights (n,), from row 0 of any leading dims.

    The fixed data entries may have been broadcast to leading (draw or row) dims by
    the caller; they are the same in every row, so the first one is used.
    """
    points = np.asarray(params["points"])
    cls = np.asarray(params["point_class"])
    w = np.asarray(params["point_weight"])
    return (
        points.reshape(-1, *points.shape[-2:])[0],
        cls.reshape(-1, cls.shape[-1])[0].astype(np.intp),
        w.reshape(-1, w.shape[-1])[0],
    )


def _weighted_sd(P: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted population sd per column, (d,): sqrt(sum w (x - mean)^2 / W)."""
    W = w.sum()
    mean = w @ P / W
    return np.sqrt(np.maximum(w @ (P - mean) ** 2 / W, 0.0))


def silverman(stats: dict) -> np.ndarray:
    """Silverman's rule-of-thumb bandwidth per class and feature, (K, d), all > 0.

    ``0.9 min(sd, IQR / 1.34) W_k^(-1/5)`` with the weighted population sd and the
    weighted inverted-CDF quartiles (both consistent with duplicated rows); the sd
    alone where the IQR is 0. Zero spread (or an empty class) is floored at 1e-3
    times the feature's overall weighted sd; a constant feature at 1e-9 times the
    largest overall sd (1 if every feature is constant).
    """
    X, y, w = stats["X"], stats["y"], stats["w"]
    K, d = stats["count"].shape[0], X.shape[1]
    overall = _weighted_sd(X, w) if X.shape[0] else np.zeros(d)
    positive = overall[overall > 0]
    overall = np.where(overall > 0, overall, 1e-9 * positive.max() if positive.size else 1.0)
    h = np.zeros((K, d))
    for k in range(K):
        rows = y == k
        if not rows.any():
            continue
        P, wk = X[rows], w[rows]
        sd = _weighted_sd(P, wk)
        q = np.quantile(P, [0.25, 0.75], axis=0, weights=wk, method="inverted_cdf")
        iqr = (q[1] - q[0]) / 1.34
        spread = np.where(iqr > 0, np.minimum(sd, iqr), sd)
        h[k] = 0.9 * spread * wk.sum() ** -0.2
    return np.where(h > 0, h, 1e-3 * overall)


def _logsumexp_last(a: np.ndarray) -> np.ndarray:
    """log sum exp over the last axis, overwriting ``a`` (shifted by the row maximum).

    Rows that are ``-inf`` throughout give ``-inf`` (never NaN).
    """
    top = a.max(axis=-1)
    top = np.where(np.isfinite(top), top, 0.0)
    a -= top[..., None]
    np.exp(a, out=a)
    with np.errstate(divide="ignore"):
        return np.log(a.sum(axis=-1)) + top


def _loo(Pt: np.ndarray, w: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Weighted LOO log-likelihood of one class for log-bandwidths ``t`` (d,); returns (d,).

    ``Pt`` (d, n) points of the class (features first), weights ``w`` (n,) > 0. Each
    term is a log-sum-exp over the points, so tiny bandwidths neither underflow nor
    give NaN. Rows are processed in chunks of at most ``_BUDGET`` doubles.
    """
    d, n = Pt.shape
    u = np.minimum(w, 1.0)
    W = w.sum()
    log_w = np.log(w)
    unit = bool(np.all(w == 1.0))
    with np.errstate(divide="ignore"):
        log_self = np.log(w - u)
    log_norm = np.log(W - u)
    half_prec = (0.5 * np.exp(-2.0 * t))[:, None, None]
    total = np.zeros(d)
    step = max(1, _BUDGET // (n * d))
    for start in range(0, n, step):
        idx = np.arange(start, min(n, start + step))
        a = Pt[:, idx, None] - Pt[:, None, :]  # (d, c, n)
        a *= a
        a *= -half_prec
        if not unit:
            a += log_w
        a[:, np.arange(idx.size), idx] = log_self[idx]  # v_ii = w_i - u_i
        terms = _logsumexp_last(a) - log_norm[idx]  # (d, c)
        total += terms @ w[idx]
    return total - W * (t + 0.5 * LOG_2PI)


def _maximise(objective, centre: np.ndarray) -> np.ndarray:
    """Maximise ``objective(t) -> (d,)`` over t in [log c + log 1e-3, log c + log 10] per entry.

    A grid of ``_GRID`` points, then golden-section search between the best grid
    point's neighbours, vectorised over the d entries. Returns the maximiser (d,).
    """
    grid = np.log(centre) + np.linspace(_LOW, _HIGH, _GRID)[:, None]
    values = np.stack([objective(t) for t in grid])
    cols = np.arange(centre.size)
    best = values.argmax(axis=0)
    t_best, f_best = grid[best, cols], values[best, cols]
    a = grid[np.maximum(best - 1, 0), cols]
    b = grid[np.minimum(best + 1, _GRID - 1), cols]
    c, e = b - _INVPHI * (b - a), a + _INVPHI * (b - a)
    fc, fe = objective(c), objective(e)
    for _ in range(_GOLDEN_STEPS):
        left = fc >= fe  # the maximum lies in [a, e]
        b = np.where(left, e, b)
        a = np.where(left, a, c)
        new = np.where(left, b - _INVPHI * (b - a), a + _INVPHI * (b - a))
        f_new = objective(new)
        c, fc, e, fe = (
            np.where(left, new, e),
            np.where(left, f_new, fe),
            np.where(left, c, new),
            np.where(left, fc, f_new),
        )
    t = np.where(fc >= fe, c, e)
    f = np.maximum(fc, fe)
    return np.where(f >= f_best, t, t_best)


class KernelFamily:
    """Per-class, per-feature Gaussian KDE whose bandwidths are the parameters.

    Parameters
    ----------
    bandwidth_sd : float
        Prior sd of log h_kj around log of Silverman's bandwidth (MAP), > 0.
    """

    name = "kernel"
    param_dims: ClassVar[dict] = {"bandwidth": ("class", "feature")}
    positive_only = False

    def __init__(self, *, bandwidth_sd: float = 1.0) -> None:
        self.bandwidth_sd = bandwidth_sd
        self.labels: np.ndarray | None = None

    # ------------------------------------------------------------------ data
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Real-valued features: nothing beyond finiteness (checked by the caller)."""
        return X

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """The data themselves: ``X`` (n, d), class index ``y`` (n,), weight ``w`` (n,).

        Rows of weight 0 are dropped (they add nothing to any KDE). ``count`` (K,) is
        the weighted class count.
        """
        keep = w > 0
        y = np.asarray(y, dtype=np.intp)[keep]
        w = np.asarray(w, dtype=np.float64)[keep]
        return {
            "count": np.bincount(y, weights=w, minlength=n_classes).astype(np.float64),
            "X": np.array(X[keep], dtype=np.float64),
            "y": y,
            "w": w,
        }

    def merge(self, a: dict, b: dict) -> dict:
        """Statistics of the union: the points of both sets, counts added."""
        return {
            "count": a["count"] + b["count"],
            "X": np.concatenate([a["X"], b["X"]]),
            "y": np.concatenate([a["y"], b["y"]]),
            "w": np.concatenate([a["w"], b["w"]]),
        }

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict) -> dict:
        """``centre`` (K, d): Silverman's bandwidths; ``sd``: prior sd of log h."""
        try:
            sd = float(self.bandwidth_sd)
        except (TypeError, ValueError):
            sd = np.nan
        if not (np.isfinite(sd) and sd > 0):
            raise ValueError(
                f"bandwidth_sd must be a finite number > 0; got {self.bandwidth_sd!r}."
            )
        return {"centre": silverman(stats), "sd": sd}

    # -------------------------------------------------------------- estimates
    def _require_points(self, stats: dict, what: str) -> None:
        """Every class must keep positive weight when one unit of weight is left out."""
        y, w = stats["y"], stats["w"]
        for k, total in enumerate(stats["count"]):
            wk = w[y == k]
            if wk.size == 0 or total - min(wk.max(), 1.0) <= 0:
                raise ValueError(
                    f"{what} needs at least 2 samples in every class (the leave-one-out "
                    f"likelihood of a single point is undefined); class "
                    f"{gstats.label(self.labels, k)} has {total:g}."
                )

    def _fit(self, stats: dict, centre: np.ndarray, sd: float | None) -> dict:
        X, y, w = stats["X"], stats["y"], stats["w"]
        h = np.empty_like(centre)
        for k in range(centre.shape[0]):
            P, wk = np.ascontiguousarray(X[y == k].T), w[y == k]
            log_c = np.log(centre[k])
            if sd is None:
                h[k] = np.exp(_maximise(lambda t, P=P, wk=wk: _loo(P, wk, t), centre[k]))
            else:

                def objective(t, P=P, wk=wk, log_c=log_c):
                    return _loo(P, wk, t) - 0.5 * ((t - log_c) / sd) ** 2

                h[k] = np.exp(_maximise(objective, centre[k]))
        return {"bandwidth": h, "points": X, "point_class": y, "point_weight": w}

    def mle(self, stats: dict) -> dict:
        """Bandwidths maximising the weighted LOO log-likelihood, (K, d), plus the data."""
        self._require_points(stats, "KernelNB")
        return self._fit(stats, silverman(stats), None)

    def map(self, stats: dict, prior: dict) -> dict:
        """Mode in log h of LOO(h) + log Normal(log h; log centre, sd^2), (K, d)."""
        self._require_points(stats, "KernelNB")
        return self._fit(stats, prior["centre"], prior["sd"])

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Not available: the bandwidth prior is not conjugate (always raises ValueError)."""
        raise ValueError(NO_CONJUGATE)

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """Not available: there is no conjugate posterior (always raises ValueError)."""
        raise ValueError(NO_CONJUGATE)

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """sum_j log( sum_i w_i N(x_nj; x_ij, h_kj^2) / W_k ) for every row and class.

        Parameters
        ----------
        X : ndarray of shape (n, d)
        params : dict
            ``bandwidth`` (..., K, d), leading dims are posterior draws; ``points``,
            ``point_class``, ``point_weight``: the training data (see :func:`_fixed`).
        full : bool
            False drops ``-d/2 log(2 pi)`` (the same for every class).

        Returns
        -------
        ndarray of shape (..., n, K)
            Log-sum-exp over the training points of class k; test rows and draws are
            processed in blocks of at most ``_BUDGET`` doubles.
        """
        P, cls, w = _fixed(params)
        h = np.asarray(params["bandwidth"], dtype=np.float64)
        lead, (K, d) = h.shape[:-2], h.shape[-2:]
        H = h.reshape(-1, K, d)
        S, n = H.shape[0], X.shape[0]
        Xt = np.ascontiguousarray(X.T)
        out = np.zeros((S, n, K))
        for k in range(K):
            rows = cls == k
            Pt, log_w = np.ascontiguousarray(P[rows].T), np.log(w[rows])
            log_norm = np.log(H[:, k]).sum(-1) + np.log(w[rows].sum()) * d  # (S,)
            half_prec = 0.5 / H[:, k] ** 2  # (S, d)
            m = Pt.shape[1]
            step = max(1, min(n, _BUDGET // max(1, m * d)))
            for start in range(0, n, step):
                stop = min(n, start + step)
                sq = Xt[:, start:stop, None] - Pt[:, None, :]  # (d, c, m)
                sq *= sq
                s_step = max(1, _BUDGET // sq.size)
                for s0 in range(0, S, s_step):
                    s1 = min(S, s0 + s_step)
                    a = sq * -half_prec[s0:s1, :, None, None]  # (s, d, c, m)
                    a += log_w
                    out[s0:s1, start:stop, k] = _logsumexp_last(a).sum(axis=1)
            out[:, :, k] -= log_norm[:, None]
        if full:
            out -= 0.5 * d * LOG_2PI
        return out.reshape(*lead, n, K)

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row: per feature, a training point of class y_n (chosen with
        probability proportional to its weight) plus N(0, h^2) noise.

        ``bandwidth`` is (n, K, d) (one row per sample); the fixed data entries may be
        broadcast to (n, ...) and only their first row is used.
        """
        P, cls, w = _fixed(params)
        rows = np.arange(y.shape[0])
        h = np.asarray(params["bandwidth"])[rows, y]  # (n, d)
        d = P.shape[1]
        centre = np.empty((y.shape[0], d))
        for k in np.unique(y):
            mine = np.flatnonzero(y == k)
            Pk, wk = P[cls == k], w[cls == k]
            pick = rng.choice(Pk.shape[0], size=(mine.size, d), p=wk / wk.sum())
            centre[mine] = Pk[pick, np.arange(d)]
        return centre + h * rng.standard_normal(centre.shape)

    def attributes(self, params: dict) -> dict:
        """``bandwidth_`` (K, d): the fitted bandwidths."""
        return {"bandwidth_": params["bandwidth"]}

    # ------------------------------------------------------------------ PyMC
    def fixed_params(self, stats: dict) -> dict:
        """The non-random ``params`` entries, as the point fits store them: the training
        ``points`` (n, d), ``point_class`` (n,) and ``point_weight`` (n,) (rows of weight > 0)."""
        return {"points": stats["X"], "point_class": stats["y"], "point_weight": stats["w"]}

    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """The MAP's prior in the current PyMC model, dims (class, feature).

        ``log h_kj ~ Normal(log centre_kj, sd)`` (variable ``prefix + "bandwidth_log"``)
        and ``h = exp(log h)`` as the Deterministic ``prefix + "bandwidth"``.
        """
        import pymc as pm
        import pytensor.tensor as pt

        dim = (dims or self.param_dims)["bandwidth"]
        log_h = pm.Normal(
            f"{prefix}bandwidth_log", mu=np.log(prior["centre"]), sigma=prior["sd"], dims=dim
        )
        return {"bandwidth": pm.Deterministic(f"{prefix}bandwidth", pt.exp(log_h), dims=dim)}

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """``model_``'s feature term: the unit-weight LOO likelihood of the rows of X.

        A KDE whose kernels sit on the data themselves is no distribution PyMC can
        observe, so the term is ``pm.Potential(prefix + "x_loglik", ...)`` (the same
        expression as :meth:`pymc_stats_loglik` on the unit-weight statistics of X, y)
        and no variable ``x`` exists: predictive x are drawn with :meth:`sample`.
        ``y`` is the observed class variable (its data are used) or an integer array.
        """
        import pymc as pm

        model = pm.modelcontext(None)
        value = model.rvs_to_values.get(y, y)
        y_index = np.asarray(getattr(value, "data", value), dtype=np.intp)
        n_classes = len(model.coords[(dims or self.param_dims)["bandwidth"][0]])
        stats = self.stats(np.asarray(X, dtype=np.float64), y_index, np.ones(y_index.size),
                           n_classes)
        pm.Potential(f"{prefix}x_loglik", self.pymc_stats_loglik(params, stats))

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """The weighted LOO log-likelihood ``sum_kj LOO_kj(h_kj)`` (module docstring), exactly
        the objective of ``mle``/``map``, all classes and features at once.

        Constants: per class the squared differences (x_ij - x_lj)^2 of its points, padded
        to the largest class, (K, d, n_max, n_max), and log v_il (K, n_max, n_max). Each
        term is a max-shifted log-sum-exp (the shift carries no gradient), so no bandwidth
        underflows to -inf. Cost O(K n_max^2 d) per gradient, memory about 3 times the
        constants; refuses (ValueError) when the constants would exceed ~200 MB.
        """
        import pytensor.tensor as pt
        from pytensor.gradient import disconnected_grad

        sq, log_v, w, const = (pt.as_tensor(c) for c in _pair_constants(stats, self))
        h = params["bandwidth"]
        a = log_v[:, None] - sq * (0.5 / h**2)[:, :, None, None]  # (K, d, n, n)
        top = disconnected_grad(pt.max(a, axis=-1, keepdims=True))
        lse = pt.log(pt.sum(pt.exp(a - top), axis=-1)) + top[..., 0]  # (K, d, n)
        return pt.sum(lse * w[:, None, :]) - pt.sum(w.sum(1)[:, None] * pt.log(h)) + const


#: refuse MCMC when the pairwise constants of the LOO likelihood exceed this many bytes
MAX_PAIR_BYTES = 200_000_000
_LOG_ZERO = -1e30  # log 0 as a finite constant: exp underflows to 0, no NaN gradient


def _pair_constants(stats: dict, family: KernelFamily):
    """Padded per-class constants of the weighted LOO likelihood.

    Returns ``sq`` (K, d, m, m) squared differences within each class, ``log_v``
    (K, m, m) with log w_l off the diagonal, log(w_i - u_i) on it and log 0 (finite
    ``_LOG_ZERO``) for padding, ``w`` (K, m) weights (0 for padding) and the scalar
    ``-d sum_k sum_i w_i log(W_k - u_i) - W d/2 log(2 pi)``; m = largest class size.
    """
    family._require_points(stats, "KernelNB")
    X, y, w = stats["X"], stats["y"], stats["w"]
    K, d = stats["count"].shape[0], X.shape[1]
    sizes = np.bincount(y, minlength=K)
    m = int(sizes.max())
    need = 8 * K * m * m * (d + 1)
    if need > MAX_PAIR_BYTES:
        cap = int(np.sqrt(MAX_PAIR_BYTES / (8 * K * (d + 1))))
        raise ValueError(
            f"KernelNB's PyMC likelihood (method='mcmc', model_) needs the pairwise "
            f"differences within each class "
            f"({K} classes x {m}^2 pairs x {d} features, {need / 1e6:.0f} MB; the limit is "
            f"{MAX_PAIR_BYTES / 1e6:.0f} MB). Use method='map', or subsample the training "
            f"data to at most about {cap} rows per class."
        )
    sq = np.zeros((K, d, m, m))
    log_v = np.full((K, m, m), _LOG_ZERO)
    wk_pad = np.zeros((K, m))
    const = -0.5 * LOG_2PI * d * w.sum()
    for k in range(K):
        P, wk = X[y == k], w[y == k]
        n = wk.size
        diff = P.T[:, :, None] - P.T[:, None, :]
        sq[k, :, :n, :n] = diff * diff
        u = np.minimum(wk, 1.0)
        with np.errstate(divide="ignore"):
            block = np.broadcast_to(np.log(wk), (n, n)).copy()
            self_term = np.log(wk - u)
        block[np.arange(n), np.arange(n)] = np.maximum(self_term, _LOG_ZERO)
        log_v[k, :n, :n] = block
        wk_pad[k, :n] = wk
        const -= d * (wk @ np.log(wk.sum() - u))
    return sq, log_v, wk_pad, const
