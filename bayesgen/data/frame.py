"""The per-feature affine frame of the real-valued families.

Every Gaussian, multivariate normal and kernel computation runs in internal coordinates
``z_j = (x_j - c_j) / s_j`` chosen at fit (:func:`choose`), so results are invariant
under x -> a x + b per feature and NUTS sees unit-scale parameters. For a real column
with median m and robust spread r (IQR / 1.349; the range where that is 0; |m| or 1 for
a constant column):

- ``s`` is r rounded to a power of two (exact division and back-transforms);
- ``c`` is m rounded to a multiple of s;
- a well-scaled column (2^-4 <= r <= 2^4) keeps ``s = 1``, one whose median lies within
  16 s of 0 keeps ``c = 0``;
- a constant column has ``c = m`` exactly, so rows merged later keep full precision;
- discrete columns (MixedNB's count/binary/categorical parts) keep ``c = 0, s = 1``.

Joint densities in user units subtract sum_j log s_j. Far rows (some |z_j| > :data:`FAR`
= 2^52) are split as ``z = t u + z_N`` with ``t = 2^E`` and ``|u| < 1``, so a Gaussian
log-density is ``t^2 a2 + t a1 + a0`` with moderate coefficients (:func:`far_scores`),
with no overflow up to +-1.8e308.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.data import missing, sparse

#: |z| above which a row is evaluated in the split form t u + z_N (2^52: beyond it the
#: class means no longer change z - mu in float64)
FAR = 2.0**52
#: robust spreads within [2^-BAND, 2^BAND] keep s = 1; medians within 2^BAND s keep c = 0
BAND = 4
#: the quantiles of a column that choose() uses: lower quartile, median, upper quartile
_QUARTILES = (0.25, 0.5, 0.75)
_LN2 = float(np.log(2.0))


class Frame:
    """Location ``loc`` (d,) and power-of-two scale ``scale`` (d,) per feature.

    ``real`` (d,) marks the columns that are transformed (and may be far); the others
    have ``loc = 0, scale = 1``. Plain attributes (saved by ``bayesgen.save``).
    """

    def __init__(self, loc: np.ndarray, scale: np.ndarray, real: np.ndarray) -> None:
        self.loc = np.asarray(loc, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.real = np.asarray(real, dtype=bool)

    @property
    def is_identity(self) -> bool:
        return bool(np.all(self.loc == 0.0) and np.all(self.scale == 1.0))

    @property
    def log_jacobian(self) -> float:
        """sum_j log s_j: log p(x) = log p(z) - this."""
        return float(np.sum(np.log(self.scale)))

    def sub(self, columns: np.ndarray) -> Frame:
        """The frame of a subset of the columns (a MixedNB part)."""
        return Frame(self.loc[columns], self.scale[columns], self.real[columns])

    def internal(self, X: np.ndarray) -> np.ndarray:
        """z = (x - c) / s, (n, d); +-inf only where |z| exceeds the float range.

        Sparse X (MixedNB with count parts): the moved columns (real ones with c != 0
        or s != 1) are densified and transformed, the others stay as stored."""
        if self.is_identity:
            return X
        if sparse.is_sparse(X):
            moved = np.flatnonzero(self.real & ((self.loc != 0.0) | (self.scale != 1.0)))
            if not moved.size:
                return X
            sub = Frame(self.loc[moved], self.scale[moved], self.real[moved])
            return sparse.with_columns(X, moved, sub.internal(X[:, moved].toarray()))
        with np.errstate(over="ignore", invalid="ignore"):
            Z = (X - self.loc) / self.scale
            bad = ~np.isfinite(Z)
            if bad.any():  # x - c overflowed (|x|, |c| near 1.8e308): halve first
                Z = np.where(bad, ((X * 0.5 - self.loc * 0.5) / self.scale) * 2.0, Z)
        return Z

    def user(self, Z: np.ndarray) -> np.ndarray:
        """x = c + s z (samples drawn in the internal frame), broadcasting over rows."""
        if self.is_identity:
            return Z
        with np.errstate(over="ignore"):
            return self.loc + self.scale * Z

    def user_loc(self, value: np.ndarray) -> np.ndarray:
        """A location parameter (..., d) in user units: c + s mu."""
        return self.user(value)

    def internal_loc(self, value: np.ndarray) -> np.ndarray:
        """A user-unit location (d,) (a prior mean) in the internal frame."""
        return self.internal(np.asarray(value, dtype=np.float64)[None, :])[0]

    def user_var(self, value: np.ndarray) -> np.ndarray:
        """Variances (..., d) in user units: s^2 var."""
        with np.errstate(over="ignore"):
            return value * self.scale**2

    def internal_var(self, value: np.ndarray) -> np.ndarray:
        """User-unit variances (..., d) in the internal frame: var / s^2."""
        with np.errstate(over="ignore", under="ignore"):
            return value / self.scale / self.scale

    def user_cov(self, value: np.ndarray) -> np.ndarray:
        """Covariances (..., d, d) in user units: S cov S, S = diag(s)."""
        with np.errstate(over="ignore"):
            return value * self.scale[:, None] * self.scale[None, :]

    def internal_cov(self, value: np.ndarray) -> np.ndarray:
        """User-unit covariances (..., d, d) in the internal frame: S^-1 cov S^-1."""
        with np.errstate(over="ignore", under="ignore"):
            return value / self.scale[:, None] / self.scale[None, :]


def identity(d: int, real: np.ndarray | None = None) -> Frame:
    """The frame that changes nothing (``real`` defaults to no real column)."""
    real = np.zeros(d, dtype=bool) if real is None else real
    return Frame(np.zeros(d), np.ones(d), real)


def _pow2(value: np.ndarray) -> np.ndarray:
    """The power of two nearest to each positive finite value (log scale)."""
    mant, expo = np.frexp(value)  # value = mant 2^expo, 0.5 <= mant < 1
    expo = expo - (mant < np.sqrt(0.5)).astype(int)
    return np.ldexp(1.0, np.clip(expo, -1074, 1023))  # within the float range


def _spread(q1: float, q3: float, low: float, high: float, median: float) -> float:
    """Robust spread of one column from its quartiles, extremes and median, finite and
    > 0 (see the module docstring)."""
    spread = (q3 * 0.5 - q1 * 0.5) * (2.0 / 1.349)  # halves: no overflow near 1.8e308
    if not spread > 0:
        spread = high * 0.5 - low * 0.5
    if not spread > 0:
        spread = abs(median)
    if not (spread > 0 and np.isfinite(spread)):
        spread = 1.0
    return float(spread)


def _order_stats(V: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Lower quartile, median, upper quartile, minimum and maximum of the finite
    entries of each column of V (m, p), (5, p); NaN for a column without one.

    The quartiles are inverted-CDF quantiles weighted by w (m,) (integer weights act as
    repeated rows; None or equal weights: unweighted, the same values).
    """
    if V.size == 0:
        return np.full((5, V.shape[1]), np.nan)
    finite = np.isfinite(V)
    if finite.all() and (w is None or np.all(w == w[0])):
        return _by_partition(V)
    out = np.full((5, V.shape[1]), np.nan)
    for j in range(V.shape[1]):
        keep = finite[:, j]
        v = V[keep, j]
        if v.size:
            out[:3, j] = np.quantile(v, _QUARTILES, method="inverted_cdf",
                                     weights=None if w is None else w[keep])
            out[3, j], out[4, j] = v.min(), v.max()
    return out


def _by_partition(V: np.ndarray) -> np.ndarray:
    """:func:`_order_stats` of a finite V (m, p) with equal weights, (5, p).

    The inverted-CDF q-quantile is the value at position ``ceil(q m) - 1`` in sorted order,
    found by three single-kth partitions of a transposed copy (median, then the quartiles
    on either side): 9 ms of CPU against ``np.quantile``'s 27 to 43 ms on a 30,000 x 30
    sample (``benchmarks/README.md``).
    """
    m = V.shape[0]
    rows = np.array(V.T, dtype=np.float64, order="C")  # a copy, whatever V's layout
    i1, i2, i3 = (max(int(np.ceil(q * m)) - 1, 0) for q in _QUARTILES)
    rows.partition(i2, axis=1)
    if i1 < i2:
        rows[:, :i2].partition(i1, axis=1)
    if i3 > i2:
        rows[:, i2 + 1 :].partition(i3 - i2 - 1, axis=1)
    return np.stack([rows[:, i1], rows[:, i2], rows[:, i3], rows[:, : i1 + 1].min(axis=1),
                     rows[:, i3:].max(axis=1)])


def choose(X: np.ndarray, real: np.ndarray, w: np.ndarray | None = None) -> Frame:
    """The frame of the training data X (n, d) for the columns marked ``real``.

    The quantiles are weighted by the sample weights w (n,), so a row of integer weight
    k gives the frame of k copies of the row. Rows of weight 0 are ignored (when any row
    has positive weight), and so are non-finite entries (missing values), column by
    column.
    """
    d = X.shape[1]
    loc, scale = np.zeros(d), np.ones(d)
    positive = None if w is None else w > 0
    weights = None if w is None or not positive.any() else np.asarray(w, dtype=float)
    rows = X
    if weights is not None and not positive.all():  # rows of weight 0 are ignored
        rows, weights = X[positive], weights[positive]
    columns = np.flatnonzero(real)
    if sparse.is_sparse(rows):  # MixedNB with count parts: its real columns, dense
        rows = rows[:, columns].toarray()
        columns_of_rows = rows
    else:
        columns_of_rows = rows if columns.size == d else rows[:, columns]
    stats = _order_stats(columns_of_rows, weights)
    for i, j in enumerate(columns):
        q1, median, q3, low, high = stats[:, i]
        if np.isnan(median):  # no observed value in the column
            continue
        spread = _spread(q1, q3, low, high, median)
        s = 1.0 if 2.0**-BAND <= spread <= 2.0**BAND else float(_pow2(np.array(spread)))
        if low == high:  # constant: its value is the location (z = 0 exactly)
            c = median
        else:
            c = 0.0 if abs(median) <= 2.0**BAND * s else float(np.round(median / s) * s)
        loc[j], scale[j] = c, s
    return Frame(loc, scale, real)


# ----------------------------------------------------------------- far rows
class FarRows:
    """Rows with some |z_j| > :data:`FAR`, written as z = t u + z_N.

    Attributes
    ----------
    rows : ndarray (m,)
        Their positions in X.
    log_t : ndarray (m,)
        log t = E log 2 per row (t itself may exceed the float range).
    U : ndarray (m, d)
        The far entries divided by t (|u| < 1), 0 elsewhere.
    ZN : ndarray (m, d)
        The moderate entries (z itself), 0 at the far ones.
    far : ndarray (m, d) bool
        Which entries are far.
    """

    def __init__(self, rows, log_t, U, ZN, far) -> None:
        self.rows, self.log_t, self.U, self.ZN, self.far = rows, log_t, U, ZN, far

    def inv_t(self, value: np.ndarray) -> np.ndarray:
        """value / t for every row, (m, ...) (exact, underflowing to 0 for huge t)."""
        expo = np.rint(self.log_t / _LN2).astype(int)
        return np.ldexp(value, -expo.reshape(-1, *([1] * (np.ndim(value) - 1))))

    def take(self, index: np.ndarray) -> FarRows:
        """A subset of the far rows (positions among them)."""
        return FarRows(self.rows[index], self.log_t[index], self.U[index], self.ZN[index],
                       self.far[index])

    def columns(self, columns: np.ndarray) -> FarRows:
        """The same rows restricted to some columns (a MixedNB part); same t."""
        return FarRows(self.rows, self.log_t, self.U[:, columns], self.ZN[:, columns],
                       self.far[:, columns])


def within(Z: np.ndarray) -> float:
    """max |z| over the non-missing entries of Z (0 for none): the test for far rows.

    Z's maximum and minimum (:func:`bayesgen.data.missing.extremes`; no pass when Z, or
    X itself for an identity frame, was scanned before inside the current
    :func:`bayesgen.data.missing.scan_scope`); with NaN, the NaN-skipping ``np.fmax``
    and ``np.fmin`` reductions.
    Sparse Z (MixedNB with count parts): its stored values (the implicit zeros do not
    change max(high, -low, 0)).
    """
    if sparse.is_sparse(Z):
        Z = Z.data
    if Z.size == 0:
        return 0.0
    high, low = missing.extremes(Z)
    if np.isnan(high):
        high, low = np.fmax.reduce(Z, axis=None), np.fmin.reduce(Z, axis=None)
        if np.isnan(high):  # only NaN
            return 0.0
    return float(max(high, -low, 0.0))


def split(frame: Frame | None, X: np.ndarray, Z: np.ndarray) -> FarRows | None:
    """The far rows of X (user units) with internal coordinates Z, or None if none
    (the common case costs :func:`within`'s two reductions over Z)."""
    if frame is None or not frame.real.any():
        return None
    if not within(Z) > FAR:
        return None
    with np.errstate(invalid="ignore"):
        far = (np.abs(Z) > FAR) & frame.real  # NaN (a missing value) is not far
    rows = np.flatnonzero(far.any(axis=1))
    if rows.size == 0:
        return None
    far = far[rows]
    # z = (x/2 - c/2) * 2 / s exactly: num = mant 2^e, s = 2^e_s -> |z| < 2^(e + 1 - e_s)
    num = X[rows] * 0.5 - frame.loc * 0.5
    mant, e = np.frexp(num)
    e_s = np.frexp(frame.scale)[1] - 1
    expo = e + 1 - e_s
    E = np.where(far, expo, np.iinfo(np.int64).min).max(axis=1)
    U = np.where(far, np.ldexp(mant, np.where(far, expo - E[:, None], 0)), 0.0)
    ZN = np.where(far, 0.0, Z[rows])
    return FarRows(rows, E * _LN2, U, ZN, far)


def _exp_sum(log_a: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """sign * exp(log_a) with overflow to +-inf (no warning)."""
    with np.errstate(over="ignore"):
        return sign * np.exp(log_a)


def far_scores(log_t: np.ndarray, a2: np.ndarray, a1: np.ndarray, a0: np.ndarray, *,
               relative: bool, axes: tuple[int, ...] = (-1,)) -> np.ndarray:
    """log p = t^2 a2 + t a1 + a0 of far rows, (..., m, K), with ``a2 < 0``.

    ``log_t`` (m,). ``relative=False``: the value itself, -inf where it is below the
    float range. ``relative=True``: the value minus a reference that is the same over
    ``axes`` (classes; also draws for a posterior mixture), i.e. valid discriminant
    scores: the reference is the largest a2 over ``axes`` (ties: the largest a1 among
    them), so the winner's t^2 and t terms cancel exactly and the others' are <= 0.
    """
    lt = log_t.reshape(-1, 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if not relative:
            quad = _exp_sum(2.0 * lt + np.log(-a2), -1.0)
            lin = _exp_sum(lt + np.log(np.abs(a1)), np.sign(a1))
            out = quad + lin + a0
            return np.where(np.isnan(out) | (quad == -np.inf), -np.inf, out)
        m2 = a2.max(axis=axes, keepdims=True)
        d2 = a2 - m2
        m1 = np.where(d2 == 0.0, a1, -np.inf).max(axis=axes, keepdims=True)
        d1 = a1 - m1
        quad = _exp_sum(2.0 * lt + np.log(-d2), -1.0)
        lin = _exp_sum(lt + np.log(np.abs(d1)), np.sign(d1))
        out = quad + lin + a0
    out = np.where(np.isnan(out), -np.inf, out)
    return np.minimum(out, np.finfo(np.float64).max / 4)


def check_finite_user(values: dict[str, Any], who: str) -> None:
    """Warn when fitted attributes overflow (inf) or underflow (a variance, covariance
    diagonal or bandwidth of 0) in user units."""
    from bayesgen.exceptions import DataWarning, warn

    over, under = [], []
    for name, value in values.items():
        try:  # lists of arrays of one shape; ragged lists (families_) are not numbers
            arr = np.asarray(value) if isinstance(value, (np.ndarray, list)) else None
        except ValueError:
            continue
        if arr is None or arr.dtype.kind != "f" or "log_prob" in name:
            continue  # log probabilities of -inf (MLE of an unseen category) are exact
        if not np.all(np.isfinite(arr)):
            over.append(name)
        elif name.endswith(("var_", "bandwidth_", "covariance_")):
            spread = np.diagonal(arr, axis1=-2, axis2=-1) if name.endswith("covariance_") else arr
            if np.any(spread <= 0):
                under.append(name)
    if over or under:
        what = " and ".join(
            f"{kind} float64 in the units of X ({names})"
            for kind, names in (("overflow", over), ("underflow", under)) if names
        )
        warn(
            f"{who}: the fitted attribute(s) {what}: the features are of extreme scale "
            "(variances beyond the float range). Predictions use the internal "
            "standardised parameters and are unaffected; rescale the features to read "
            "the parameters.",
            DataWarning,
        )
