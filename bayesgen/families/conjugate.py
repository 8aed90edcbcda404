"""One conjugate algebra: predictive, evidence and leave-one-out, written once.

Every conjugate family here is an exponential family p(x | theta) = h(x) exp(eta . t(x)
- A(theta)) whose conjugate prior has natural hyper-parameters tau with normaliser
Z(tau); a posterior is tau_post = tau_0 + sum_n w_n t(x_n) and everything else is one
formula on Z::

    evidence       log Z(tau_post) - log Z(tau_0) + sum_n w_n log h(x_n)
    predictive     log p(x | tau) = log Z(tau + t(x)) - log Z(tau) + log h(x)
    leave-one-out  the predictive of x_n at tau_(-n) = tau_post - w_n t(x_n)   (subtract)
    LOO at others  the predictive of other rows at tau_(-n)
    merge          add

A family supplies t, log h and log Z (an :class:`Entrywise` or :class:`Joint` algebra);
the functions below handle, once for every family, sample weights, missing entries (NaN:
a factorised family drops the entry's factor), scipy.sparse CSR X without densifying it,
temporaries bounded by :data:`BLOCK` values, and non-finite results
(:func:`check_overflow`). The leading axis of every ``post`` array indexes the
"classes" L of a call: the K classes, or the n_b posteriors of a block of training rows
without each of them (the leave-one-out at other rows).

**Factorised families** (:class:`Entrywise`: Beta-Bernoulli, Gamma-Poisson,
Gamma-exponential, Dirichlet-categorical, Dirichlet-multinomial): post arrays are (L, d)
(or (L, d, C) for a categorical feature); log Z is a sum over entries of log z (plus,
for :attr:`Entrywise.total`, a coupling term g(sum_j tau_lj)), so the predictive sums
the increments step_lj(x) = log z(tau_lj + t(x)) - log z(tau_lj). Sparse X: the zero
entries' increments are computed once per (class, feature); finite supports tabulate
step at every level (:meth:`Entrywise.table`).

**Joint families** (:class:`Joint`: the Normal-Inverse-Wishart): a row's statistics
are added to each class's whole posterior (:meth:`Joint.update`); predictive and
leave-one-out default to differences of :meth:`Joint.log_z`, and a family may give
closed forms (rank-one steps: :class:`bayesgen.families.mvn.niw.NIW`), which it must
when the classes share a block (LDA's covariance: :meth:`Joint.loo`, :meth:`Joint.loo_at`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from bayesgen.data import missing, sparse
from bayesgen.data.validation import check_finite
from bayesgen.utils import logspace

#: values per temporary block (rows x classes x width), 16 MB of float64
BLOCK = 2**21


# ------------------------------------------------------------------ protocol
class Entrywise(ABC):
    """The algebra of a factorised conjugate family: one factor per (class, feature).

    Subclasses give :meth:`log_z` and ``t(x) -> dict`` (the statistics of entry values x
    (..., d) per key of ``post``; not needed when :meth:`step`, :meth:`downdate` and
    :meth:`loo_step` are all given) and may override :meth:`step` (give the closed form:
    the default difference cancels for huge tau), :meth:`downdate`, :meth:`log_h`.
    :attr:`total` needs ``total_log_z(T)``; :attr:`tabled` needs ``table(post)`` ((L, d, C))
    and, unless :attr:`binary`, ``codes(X)``. Every method is element-wise over the leading
    dims."""

    #: the family's name in messages (``ValueError`` naming X)
    who: str = "model"
    #: :meth:`log_h` is not 0: the evidence needs the training rows
    needs_rows: bool = False
    #: the key of ``post`` whose sum over the observed features couples them (the
    #: Dirichlet over features: log Z adds ``total_log_z`` of that sum), or None
    total: str | None = None
    #: True when ``table`` and ``codes`` are given: the support of each entry is
    #: finite (levels 0..C-1) and the predictive is a one-hot product with the table
    tabled: bool = False
    #: with ``tabled``: the levels are the values 0 and 1 themselves (X is its own
    #: code), so X (dense or sparse) multiplies the table directly
    binary: bool = False

    @abstractmethod
    def log_z(self, post: dict) -> np.ndarray:
        """log z(tau) per entry, (..., d) (trailing entry dims reduced)."""
        ...

    def step(self, post: dict, x: np.ndarray) -> np.ndarray:
        """log z(tau + t(x)) - log z(tau) per entry, (..., d), without log h."""
        return self.log_z(add(post, self.t(x))) - self.log_z(post)

    def downdate(self, post: dict, x: np.ndarray, w: np.ndarray) -> dict:
        """tau - w t(x) per entry (w = 0 leaves an entry in place)."""
        return add(post, self.t(x), -w)

    def loo_step(self, post: dict, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """step(downdate(tau, x, w), x) per entry."""
        return self.step(self.downdate(post, x, w), x)

    def log_h(self, X: Any) -> np.ndarray | None:
        """log h(x) per row, (n,) (missing entries read as 0); None when h = 1."""
        return None

    def total_step(self, total: np.ndarray, x_total: np.ndarray) -> np.ndarray:
        """g(T + s) - g(T) for a row whose entries sum to s (with :attr:`total`)."""
        return self.total_log_z(total + x_total) - self.total_log_z(total)


class Joint(ABC):
    """The algebra of a family whose statistics do not split by feature.

    Subclasses give :meth:`log_z` and either ``t(X) -> dict`` (read by the default
    :meth:`update`) or :meth:`update` itself. :meth:`update`, :meth:`step` and
    :meth:`downdate` pair ``post`` and rows leading dim by leading dim; :meth:`predict`,
    :meth:`loo` and :meth:`loo_at` default to those pairings, and must be given in closed
    form when a block of ``post`` is shared by the classes."""

    who: str = "model"
    needs_rows: bool = False

    @abstractmethod
    def log_z(self, post: dict) -> np.ndarray:
        """log Z(tau) over the leading dims of ``post``."""
        ...

    def log_h(self, X: np.ndarray) -> np.ndarray | None:
        """log h(x_n) per row, (n,); None when h = 1."""
        return None

    def update(self, post: dict, X: np.ndarray, w: Any = 1.0) -> dict:
        """tau_n + w_n t(x_n), ``post`` (n, ...) paired with rows X (n, d) (w < 0 removes)."""
        return add(post, self.t(X), w)

    def step(self, post: dict, X: np.ndarray) -> np.ndarray:
        """log Z(tau_n + t(x_n)) - log Z(tau_n), (n,), paired."""
        return self.log_z(self.update(post, X)) - self.log_z(post)

    def downdate(self, post: dict, X: np.ndarray, w: np.ndarray) -> dict:
        """tau_n - w_n t(x_n), ``post`` (n, ...) paired with rows X (n, d), w (n,)."""
        return self.update(post, X, -np.asarray(w, dtype=np.float64))

    def predict(self, post: dict, X: np.ndarray) -> np.ndarray:
        """log Z(tau_l + t(x_n)) - log Z(tau_l), (n, L), in blocks of rows."""
        n = X.shape[0]
        L = _n_classes(post)
        size = max(1, sum(v[0].size for v in post.values()))
        rows = max(1, BLOCK // max(1, L * size))
        out = np.empty((n, L))
        for s in range(0, n, rows):
            Xb = X[s:s + rows]
            b = Xb.shape[0]
            pairs = {k: np.broadcast_to(v[None], (b, *v.shape)).reshape(b * L, *v.shape[1:])
                     for k, v in post.items()}
            out[s:s + b] = self.step(pairs, np.repeat(Xb, L, axis=0)).reshape(b, L)
        return out

    def loo(self, post: dict, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The step of each row at its class's posterior without it, (n,) (without log h)."""
        out = np.empty(y.size)
        size = max(1, sum(v[0].size for v in post.values()))
        rows = max(1, BLOCK // size)
        for s in range(0, y.size, rows):
            e = s + rows
            out[s:e] = self.step(self.downdate(take(post, y[s:e]), X[s:e], w[s:e]), X[s:e])
        return out

    def loo_at(self, post: dict, X: np.ndarray, y: np.ndarray, w: np.ndarray,
               X_test: np.ndarray | None = None) -> np.ndarray:
        """:func:`loo_log_predictive_at` (with log h): only class y_i changes."""
        return _own_class_at(self, X, y, w, post, X_test)


class Hooks(ABC):
    """The closed-form hooks ``log_predictive``, ``log_evidence``, ``loo_log_predictive``
    and ``loo_log_predictive_at`` of :class:`bayesgen.families.protocol.Family`, each one call
    of this module's functions. A family gives :meth:`algebra`, :meth:`natural_prior` and
    ``posterior``; :meth:`encode` maps rows to what the algebra reads."""

    @abstractmethod
    def algebra(self, post: dict) -> Entrywise | Joint:
        """The family's algebra for posteriors shaped like ``post``."""
        ...

    @abstractmethod
    def natural_prior(self, prior: dict) -> dict:
        """The resolved prior as a posterior with no data (keys of ``posterior``'s)."""
        ...

    def encode(self, X: Any) -> Any:
        """Rows X (n, d) as the algebra reads them (NaN: missing)."""
        return X

    def log_predictive(self, X: Any, post: dict) -> np.ndarray:
        """:func:`log_predictive`."""
        return log_predictive(self.algebra(post), self.encode(X), post)

    def log_evidence(self, stats: dict, prior: dict, rows: Any, *, method: str,
                     who: str) -> float:
        """:func:`log_evidence`; ``rows()`` is read only when the family has an h."""
        post = self.posterior(stats, prior)
        alg = self.algebra(post)
        X, w = rows() if alg.needs_rows else (None, None)
        return log_evidence(alg, self.natural_prior(prior), post,
                            None if X is None else self.encode(X), w)

    def loo_log_predictive(self, Z: Any, y: np.ndarray, w: np.ndarray,
                           post: dict) -> np.ndarray:
        """:func:`loo_log_predictive`."""
        return loo_log_predictive(self.algebra(post), self.encode(Z), y, w, post)

    def loo_log_predictive_at(self, Z: Any, y: np.ndarray, w: np.ndarray, post: dict,
                              Z_test: Any = None) -> np.ndarray:
        """:func:`loo_log_predictive_at`."""
        test = None if Z_test is None else self.encode(Z_test)
        return loo_log_predictive_at(self.algebra(post), self.encode(Z), y, w, post, test)


def add(post: dict, inc: dict, w: Any = 1.0) -> dict:
    """tau + w inc per key (w < 0 removes; ``w`` broadcasts over trailing dims)."""
    w = np.asarray(w, dtype=np.float64)
    out = dict(post)
    for key, value in inc.items():
        value = np.asarray(value, dtype=np.float64)
        scale = w.reshape(w.shape + (1,) * (value.ndim - w.ndim)) if w.ndim else w
        out[key] = post[key] + scale * value
    return out


def gamma_log_z(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """lgamma(a) - a log b, the Gamma(a, rate b) log normaliser (+inf at b = 0)."""
    with np.errstate(divide="ignore"):
        return gammaln(a) - a * np.log(b)


def log_rising(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """lgamma(a + x) - lgamma(a), lgamma(a) on a's own shape; Stirling's series
    (:func:`bayesgen.utils.logspace.log_rising`) when some a is large."""
    a = np.asarray(a, dtype=np.float64)
    if a.size and np.max(a) < 1e4:
        return gammaln(a + x) - gammaln(a)
    return logspace.log_rising(a, x)


def take(post: dict, index: Any) -> dict:
    """The posteriors ``post[key][index]`` (classes or entries) of every key."""
    return {key: value[index] for key, value in post.items()}


# ----------------------------------------------------------------- predictive
def log_predictive(alg: Entrywise | Joint, X: Any, post: dict) -> np.ndarray:
    """Posterior predictive log p(x_n | tau_l) + log h(x_n), (n, L), for rows X (n, d)
    (dense or CSR, NaN missing) and posteriors with leading dim L; ``ValueError`` naming X
    when a value is not finite."""
    if isinstance(alg, Joint):
        out = alg.predict(post, X)
        h = alg.log_h(X)
        return check_overflow(out if h is None else out + h[:, None], X, alg.who)
    M = missing.mask(X)
    X0 = X if M is None else missing.filled(X)
    if alg.tabled:
        out = _tabled(alg, X0, M, post)
    elif sparse.is_sparse(X0):
        out = _sparse_entries(alg, X0, M, post)
    else:
        out = _dense_entries(alg, X0, M, post)
    if alg.total is not None:
        out += _total_terms(alg, X0, M, post[alg.total])
    h = alg.log_h(X0)
    if h is not None:
        with np.errstate(over="ignore", invalid="ignore"):  # see check_overflow
            out += h[:, None]
    return check_overflow(out, X, alg.who)


def _n_classes(post: dict) -> int:
    return next(iter(post.values())).shape[0]


def _observed_sum(M, D: np.ndarray, n: int) -> np.ndarray:
    """sum over the observed features of D (L, d) per row: ``O @ D^T``, (n, L)."""
    if M is None:
        return np.broadcast_to(D.sum(axis=-1)[None, :], (n, D.shape[0])).copy()
    if sparse.is_sparse(M):
        return D.sum(axis=-1)[None, :] - np.asarray(M @ D.T)
    return (~M).astype(np.float64) @ D.T


def _dense_entries(alg: Entrywise, X: np.ndarray, M, post: dict) -> np.ndarray:
    """Sum over the observed features of step(tau_l, x_nj), blocks of rows."""
    n = X.shape[0]
    L = _n_classes(post)
    out = np.empty((n, L))
    lead = {key: value[None] for key, value in post.items()}  # (1, L, d, ...)
    size = max(1, next(iter(post.values()))[0].size)
    rows = max(1, BLOCK // max(1, L * size))
    for s in range(0, n, rows):
        terms = alg.step(lead, X[s:s + rows, None, :])  # (b, L, d)
        if M is not None:
            terms = np.where(M[s:s + rows, None, :], 0.0, terms)
        out[s:s + rows] = terms.sum(axis=-1)
    return out


def _entries(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, column and value of every stored entry of CSR X (duplicates summed)."""
    X = sp.csr_array(sparse.canonical(X))
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    return rows, X.indices, X.data


def _sparse_entries(alg: Entrywise, X, M, post: dict) -> np.ndarray:
    """The zero entries' D0 (L, d) summed once per row; stored entries add step - D0,
    in blocks of at most :data:`BLOCK` / L entries."""
    n, d = X.shape
    D0 = alg.step(post, np.zeros(d))  # (L, d)
    out = _observed_sum(M, D0, n)
    zero = not np.any(D0)
    X = sp.csr_array(sparse.canonical(X))
    indptr = X.indptr
    cap = max(1, BLOCK // max(1, _n_classes(post)))
    r0 = 0
    while r0 < n:
        r1 = min(n, max(r0 + 1, int(np.searchsorted(indptr, indptr[r0] + cap, "right")) - 1))
        s, e = indptr[r0], indptr[r1]
        if e > s:
            c = X.indices[s:e]
            terms = alg.step(take(post, (slice(None), c)), X.data[s:e])
            if not zero:
                terms -= D0[:, c]
            rows = sp.csr_array((np.ones(e - s), np.arange(e - s), indptr[r0:r1 + 1] - s),
                                shape=(r1 - r0, e - s))
            out[r0:r1] += rows @ terms.T
        r0 = r1
    return out


def _tabled(alg: Entrywise, X, M, post: dict) -> np.ndarray:
    """One-hot products with the table of steps (L, d, C)."""
    T = alg.table(post)
    n = X.shape[0]
    if alg.binary:  # levels 0 and 1: O @ T0 + X @ (T1 - T0)
        T0, T1 = T[..., 0], T[..., 1]
        return _observed_sum(M, T0, n) + sparse.matmul_t(X, T1 - T0)
    return onehot_matmul(alg.codes(X), M, T)


def onehot_matmul(codes: np.ndarray, M, T: np.ndarray) -> np.ndarray:
    """sum over the observed j of T[l, j, code_nj], (n, L), for integer ``codes`` (n, d),
    missing mask ``M`` (n, d) or None and tables ``T`` (..., d, C) (L = the leading dims
    flattened): one sparse one-hot product."""
    n, d = codes.shape
    C = T.shape[-1]
    cols = (np.arange(d) * C + codes).ravel()
    ones = np.ones(n * d) if M is None else (~M).ravel().astype(np.float64)
    onehot = sp.csr_array((ones, cols, np.arange(0, n * d + 1, d)), shape=(n, d * C))
    return np.asarray(onehot @ T.reshape(-1, d * C).T)


def _total_terms(alg: Entrywise, X, M, tau: np.ndarray) -> np.ndarray:
    """g(T_l + s_n) - g(T_l) (T_l over the row's observed features); 0 for s_n = 0."""
    n = X.shape[0]
    s = sparse.row_sum(X)
    T = _observed_sum(M, tau, n)  # (n, L)
    out = np.zeros(T.shape)
    some = s > 0
    out[some] = alg.total_step(T[some], s[some, None])
    return out


# ------------------------------------------------------------------- evidence
def log_evidence(alg: Entrywise | Joint, prior: dict, post: dict, X: Any = None,
                 w: np.ndarray | None = None) -> float:
    """sum_l [log Z(tau_post,l) - log Z(tau_0)] + sum_n w_n log h(x_n); ``prior``
    broadcasts against ``post``; the rows are read only when h is not 1; ``ValueError`` for
    an improper prior."""
    prior = {key: np.broadcast_to(prior[key], post[key].shape) for key in post}
    z0 = alg.log_z(prior)
    if not np.all(np.isfinite(z0)):
        raise ValueError(
            f"{alg.who}: the prior is improper (its normaliser is infinite), so there "
            "is no marginal likelihood; give a proper prior (e.g. alpha > 1)."
        )
    out = float(np.sum(alg.log_z(post) - z0))  # differences first: no cancellation
    total = getattr(alg, "total", None)
    if total is not None:  # the coupling term g(sum_j tau_j) per class
        out += float(np.sum(alg.total_log_z(post[total].sum(axis=-1))
                            - alg.total_log_z(prior[total].sum(axis=-1))))
    if X is not None:
        h = alg.log_h(missing.filled(X) if missing.has_missing(X) else X)
        if h is not None:
            out += float(np.asarray(w, dtype=np.float64) @ h)
    return out


# -------------------------------------------------------------- leave-one-out
def downdate(alg: Entrywise | Joint, post: dict, X: Any, y: np.ndarray,
             w: np.ndarray) -> dict:
    """The posterior of each row's class without the row, leading dim n (a missing
    entry stays)."""
    own = take(post, y)
    if isinstance(alg, Joint):
        return alg.downdate(own, X, w)
    X = X.toarray() if sparse.is_sparse(X) else X
    M = np.isnan(X)
    return alg.downdate(own, np.where(M, 0.0, X), np.where(M, 0.0, w[:, None]))


def loo_log_predictive(alg: Entrywise | Joint, X: Any, y: np.ndarray, w: np.ndarray,
                       post: dict) -> np.ndarray:
    """log p(x_n | y_n, D without row n), (n,); CSR X visits only its stored entries."""
    if isinstance(alg, Joint):
        out = alg.loo(post, X, y, w)
        h = alg.log_h(X)
        return out if h is None else out + h
    if sparse.is_sparse(X):
        return _sparse_loo(alg, X, y, w, post)
    n = X.shape[0]
    out = np.empty(n)
    size = max(1, next(iter(post.values()))[0].size)
    rows = max(1, BLOCK // size)
    for s in range(0, n, rows):
        Xb = X[s:s + rows]
        M = np.isnan(Xb)
        x = np.where(M, 0.0, Xb)
        we = np.where(M, 0.0, w[s:s + rows, None])
        own = take(post, y[s:s + rows])
        out[s:s + rows] = np.where(M, 0.0, alg.loo_step(own, x, we)).sum(axis=-1)
        if alg.total is not None:  # the coupling sum over the observed, less w x
            tot = x.sum(axis=-1)
            T = np.where(M, 0.0, own[alg.total]).sum(axis=-1) - w[s:s + rows] * tot
            some = tot > 0
            out[s:s + rows][some] += alg.total_step(T[some], tot[some])
        h = alg.log_h(x)
        if h is not None:
            out[s:s + rows] += h
    return out


def _sparse_loo(alg: Entrywise, X, y: np.ndarray, w: np.ndarray, post: dict) -> np.ndarray:
    """:func:`loo_log_predictive` of CSR X: zero entries per (class, weight), stored
    entries one by one (a stored NaN is missing)."""
    n, d = X.shape
    zero = np.zeros(d)
    free = all(not np.any(v) for v in alg.t(zero).values())  # t(0) = 0: w is irrelevant
    if free:
        D0 = alg.step(post, zero)  # (K, d)
        out = D0.sum(axis=-1)[y]
    else:
        uniq, inverse = np.unique(np.column_stack([y, w]), axis=0, return_inverse=True)
        uy, uw = uniq[:, 0].astype(np.intp), uniq[:, 1]
        zero_sum = np.empty(uy.size)
        size = max(1, next(iter(post.values()))[0].size)
        step = max(1, BLOCK // size)
        for s in range(0, uy.size, step):
            own = take(post, uy[s:s + step])
            zero_sum[s:s + step] = alg.loo_step(own, zero, uw[s:s + step, None] * np.ones(d)
                                                ).sum(axis=-1)
        out = zero_sum[inverse.ravel()]
    rows, cols, vals = _entries(X)
    obs = ~np.isnan(vals)
    v = np.where(obs, vals, 0.0)
    chunk = max(1, BLOCK // 8)
    for s in range(0, vals.size, chunk):
        r, c, vs, ob = rows[s:s + chunk], cols[s:s + chunk], v[s:s + chunk], obs[s:s + chunk]
        own = take(post, (y[r], c))
        base = D0[y[r], c] if free else alg.loo_step(own, np.zeros(vs.shape), w[r])
        term = alg.loo_step(own, vs, w[r])
        out += np.bincount(r, weights=np.where(ob, term, 0.0) - base, minlength=n)
    if alg.total is not None:
        tau = post[alg.total]
        T = tau.sum(axis=-1)[y]
        if not obs.all():  # missing stored entries leave the coupling sum
            T = T - np.bincount(rows[~obs], weights=tau[y[rows[~obs]], cols[~obs]],
                                minlength=n)
        tot = np.bincount(rows, weights=v, minlength=n)
        T = T - w * tot
        some = tot > 0
        out[some] += alg.total_step(T[some], tot[some])
    h = alg.log_h(missing.filled(X) if not obs.all() else X)
    return out if h is None else out + h


def loo_log_predictive_at(alg: Entrywise | Joint, X: Any, y: np.ndarray, w: np.ndarray,
                          post: dict, X_test: Any = None) -> np.ndarray:
    """log p(x_test_j | y = k, D without training row i), (n, m, K); ``X_test=None``:
    (n, K) at the training rows. Classes independent: only column y_i changes, the n_b
    downdated posteriors of a block scored as the "classes" of one :func:`log_predictive`
    call; cost O(n m d), memory the output plus :data:`BLOCK`."""
    if isinstance(alg, Joint):
        return alg.loo_at(post, X, y, w, X_test)
    return _own_class_at(alg, X, y, w, post, X_test)


def _own_class_at(alg: Entrywise | Joint, X: Any, y: np.ndarray, w: np.ndarray,
                  post: dict, X_test: Any = None) -> np.ndarray:
    """:func:`loo_log_predictive_at` when only class y_i changes."""
    if X_test is None:
        out = np.array(log_predictive(alg, X, post), dtype=np.float64)
        out[np.arange(y.size), y] = loo_log_predictive(alg, X, y, w, post)
        return out
    full = log_predictive(alg, X_test, post)  # (m, K)
    n, (m, n_classes) = y.size, full.shape
    out = np.empty((n, m, n_classes))
    out[:] = full
    width = max(1, sum(v[0].size for v in post.values()))
    n_b, m_b = blocks(n, m, width)
    for start in range(0, n, n_b):
        rows = np.arange(start, min(start + n_b, n))
        X_rows = X[rows]
        if sparse.is_sparse(X_rows):
            X_rows = X_rows.toarray()
        p = downdate(alg, post, X_rows, y[rows], w[rows])
        for first in range(0, m, m_b):
            cols = np.arange(first, min(first + m_b, m))
            out[rows[:, None], cols[None, :], y[rows][:, None]] = log_predictive(
                alg, X_test[first:cols[-1] + 1], p).T
    return out


def blocks(n: int, m: int, width: int) -> tuple[int, int]:
    """Training rows n_b and test rows m_b per block, n_b m_b width <= :data:`BLOCK`."""
    width = max(1, int(width))
    m_b = min(max(m, 1), max(1, BLOCK // width))
    n_b = min(max(n, 1), max(1, BLOCK // (m_b * width)))
    return n_b, m_b


# ----------------------------------------------------------------- numerics
def check_overflow(out: np.ndarray, X: Any, who: str) -> np.ndarray:
    """``out`` if finite, else ``ValueError``: X too large for float64 (or inf in X)."""
    if np.all(np.isfinite(out)):
        return out
    data = sparse.values(X)
    if not np.all(np.isfinite(data[~np.isnan(data)])):
        check_finite(data[~np.isnan(data)], who)
    raise ValueError(
        f"{who}: the log-likelihood overflows float64 for some rows: X holds values up "
        f"to {float(np.nanmax(data, initial=0.0)):.3g}, too large for log p(x) to be "
        "represented. Rescale X (e.g. divide the counts by a common factor)."
    )
