"""bayesgen.decide: uncertainty decomposition, conformal sets, abstention, active learning,
over every estimator and method (one small fit per estimator and method serves every
assertion)."""

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats

import bayesgen as bg
from bayesgen.decide import active, conformal, reject, uncertainty
from bayesgen.inference import exact_loo
from tests.conftest import CLASSIFIERS, SMALL_NUTS, make_data

POSTERIOR_CASES = [pytest.param((name, "conjugate"), id=f"{name}-conjugate")
                   for name in sorted(CLASSIFIERS) if name != "KernelNB"]
MCMC_CASES = [pytest.param((name, "mcmc"), marks=pytest.mark.slow, id=f"{name}-mcmc")
              for name in sorted(CLASSIFIERS)]


def _fit(name, method, n_per_class=15):
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind, n_per_class=n_per_class)
    kwargs = {"draws": 30, "chains": 2, "random_state": 0}
    if method == "mcmc":
        kwargs = {**SMALL_NUTS, "random_state": 0}  # programs shared with other files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: convergence warnings
        est = factory(method=method, **kwargs).fit(X, y)
    return est, X, y


@pytest.fixture(scope="module", params=POSTERIOR_CASES + MCMC_CASES)
def posterior_fit(request):
    name, method = request.param
    return _fit(name, method)


@pytest.fixture(scope="module", params=sorted(CLASSIFIERS))
def point_fit(request):
    return _fit(request.param, "map")


# ------------------------------------------------------------ decomposition
def test_decomposition_on_every_posterior(posterior_fit):
    est, X, y = posterior_fit
    ds = est.predict_uncertainty(X)
    total, alea, epi = (ds[v].values for v in ("total", "aleatoric", "epistemic"))
    np.testing.assert_allclose(total, alea + epi, rtol=0, atol=1e-12)
    assert np.all(alea >= 0) and np.all(total <= np.log(est.classes_.size) + 1e-12)
    np.testing.assert_allclose(ds["proba"].values, est.predict_proba(X), rtol=0, atol=1e-12)
    assert ds["proba"].dims == ("obs", "class")
    assert list(ds["class"].values) == list(est.classes_)
    assert ds.attrs["bayesgen_method"] == est.method_
    if est.method_ == "mcmc":  # total is the weighted mean of the draws: Jensen, exactly
        assert np.all(epi >= -1e-12)
    arrays = bg.decompose_uncertainty(est, X[:7], as_dataset=False)
    np.testing.assert_allclose(arrays.epistemic, epi[:7], rtol=0, atol=1e-12)
    thin = est.predict_uncertainty(X[:7], max_draws=5, as_dataset=False)
    np.testing.assert_allclose(thin.total, thin.aleatoric + thin.epistemic, rtol=0, atol=1e-12)


def test_decomposition_needs_a_posterior(point_fit):
    est, X, _ = point_fit
    with pytest.raises(ValueError, match="needs a posterior"):
        est.predict_uncertainty(X)
    with pytest.raises(ValueError, match="needs a posterior"):
        bg.acquisition_scores(est, X, "bald")


def test_decomposition_equals_brute_force():
    """GaussianNB: per-draw Normal densities from idata_ (scipy), weights p(x | theta_s)
    (MCMC); a conjugate fit's exact decomposition is checked against brute force in
    tests/test_uncertainty_exact.py."""
    X, y = make_data("real", n_per_class=12, seed=3)
    X_new = make_data("real", n_per_class=4, seed=4)[0]
    for method in ("conjugate", "mcmc"):
        kwargs = {"tune": 50} if method == "mcmc" else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = bg.GaussianNB(method=method, draws=40, chains=2, random_state=1,
                                **kwargs).fit(X, y)
        post = est.idata_.posterior.stack(s=("chain", "draw"))
        pi = post["pi"].transpose("s", "class").values
        mu = post["mu"].transpose("s", "class", "feature").values
        sd = np.sqrt(post["var"].transpose("s", "class", "feature").values)
        total, alea, ws = [], [], []
        for x in X_new:
            joint = np.log(pi) + stats.norm.logpdf(x, mu, sd).sum(axis=-1)  # (S, K)
            px = np.exp(joint).sum(axis=1)
            w = px / px.sum()
            ws.append(w)
            p = np.exp(joint) / px[:, None]
            alea.append(np.sum(w * stats.entropy(p, axis=1)))
            total.append(stats.entropy(w @ p))
        with warnings.catch_warnings():
            # X_new (other class centres) lies far from the training rows: few effective
            # draws of the MCMC weights, which the brute force reproduces all the same
            warnings.simplefilter("ignore", bg.DataWarning)
            got = est.predict_uncertainty(X_new, as_dataset=False)
        if method == "mcmc":
            np.testing.assert_allclose(got.aleatoric, alea, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(got.total, total, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(got.ess, 1 / np.sum(np.square(ws), axis=1),
                                       rtol=1e-9)
        else:  # the closed-form predictive; exact draws given the row, none weighted
            np.testing.assert_allclose(got.total, stats.entropy(est.predict_proba(X_new),
                                                                axis=1), atol=1e-12)
            np.testing.assert_array_equal(got.ess, 80)


def test_epistemic_shrinks_as_n_grows():
    X_all, y_all = make_data("real", n_per_class=520, seed=2)
    test = np.arange(len(y_all)) % 520 >= 500  # 20 rows per class
    means = []
    for n in (5, 50, 500):
        train = np.arange(len(y_all)) % 520 < n
        est = bg.GaussianNB(method="conjugate", draws=1000, chains=2, random_state=0)
        est.fit(X_all[train], y_all[train])
        epi = est.predict_uncertainty(X_all[test], as_dataset=False).epistemic
        means.append(np.abs(epi).mean())
    assert means[0] > means[1] > means[2]
    assert means[2] < 0.05 * means[0]


def test_dataframe_index_is_the_obs_coordinate():
    pd = pytest.importorskip("pandas")
    X, y = make_data("real", n_per_class=10)
    frame = pd.DataFrame(X, columns=list("abcd"), index=[f"r{i}" for i in range(len(y))])
    est = bg.LDA(method="conjugate", draws=20, chains=1, random_state=0).fit(frame, y)
    ds = est.predict_uncertainty(frame.iloc[:5])
    assert list(ds["obs"].values) == ["r0", "r1", "r2", "r3", "r4"]


# ----------------------------------------------------------------- conformal
def test_nonconformity_scores_and_quantile():
    p = np.array([[0.5, 0.3, 0.2], [0.4, 0.4, 0.2]])
    np.testing.assert_allclose(conformal.nonconformity(np.log(p), "lac"), -np.log(p))
    # APS = 1 - (mass strictly below): [[0.5, 0.8, 1], [0.8, 0.8, 1]], as -log(mass below)
    np.testing.assert_allclose(conformal.nonconformity(np.log(p), "aps"),
                               [[-np.log(0.5), -np.log(0.2), np.inf],
                                [-np.log(0.2), -np.log(0.2), np.inf]])
    # probabilities whose 1 - p round to 1.0 keep their order
    tiny = np.log([[1 - 2e-30, 1e-30, 1e-30], [1 - 2e-40, 1e-40, 1e-40]])
    lac = conformal.nonconformity(tiny, "lac")
    assert lac[0, 1] < lac[1, 1] and np.isfinite(lac).all()
    scores = np.arange(1.0, 10.0)  # n = 9
    assert conformal.conformal_quantile(scores, 0.1) == 9.0  # rank ceil(10 * 0.9) = 9
    assert conformal.conformal_quantile(scores, 0.3) == 7.0
    assert conformal.conformal_quantile(scores, 0.05) == np.inf  # rank 10 > n
    with pytest.raises(ValueError, match="score must be one of"):
        conformal.nonconformity(p, "hinge")


def _check_sets(est, X, y, calibration):
    kw = {"X_calib": X, "y_calib": y}
    sets = est.predict_set(X[:9], confidence_level=[0.95, 0.8, 0.5], calibration=calibration, **kw)
    assert sets.shape == (9, est.classes_.size, 3) and sets.dtype == bool
    assert np.all(sets[..., 0] >= sets[..., 1]) and np.all(sets[..., 1] >= sets[..., 2])
    one = est.predict_set(X[:9], confidence_level=0.8, calibration=calibration, score="aps",
                          mondrian=True, **kw)
    assert one.shape == (9, est.classes_.size)
    # rank > n: every class
    tiny = est.predict_set(X[:3], confidence_level=0.999, calibration=calibration, **kw)
    assert tiny.all()


def test_split_sets_on_every_posterior(posterior_fit):
    _check_sets(*posterior_fit, "split")


def test_split_sets_on_every_point_fit(point_fit):
    est, X, y = point_fit
    _check_sets(est, X, y, "split")
    with pytest.raises(ValueError, match="X_calib and y_calib"):
        est.predict_set(X, confidence_level=0.9)
    with pytest.raises(ValueError, match="not in classes_"):
        est.predict_set(X, confidence_level=0.9, X_calib=X, y_calib=y + 7)
    with pytest.raises(ValueError, match="confidence_level must be"):
        est.predict_set(X, confidence_level=1.5, X_calib=X, y_calib=y)
    with pytest.raises(ValueError, match="exact leave-one-out"):
        est.predict_set(X, confidence_level=0.9, calibration="loo", X_calib=X, y_calib=y)


def test_loo_sets_where_the_exact_loo_exists(posterior_fit):
    est, X, y = posterior_fit
    if exact_loo.supports(est):
        _check_sets(est, X, y, "loo")
        # the rows the fit kept
        kept = est.predict_set(X[:5], confidence_level=0.8, calibration="loo")
        np.testing.assert_array_equal(kept, est.predict_set(
            X[:5], confidence_level=0.8, calibration="loo", X_calib=X, y_calib=y))
    else:
        with pytest.raises(ValueError, match="exact leave-one-out"):
            est.predict_set(X, confidence_level=0.9, calibration="loo", X_calib=X, y_calib=y)


def test_loo_probabilities_equal_refits():
    """BernoulliNB's prior does not depend on the data: refitting without row n gives
    the exact leave-one-out predictive of every class."""
    X, y = make_data("binary", n_per_class=6, seed=5)
    est = bg.BernoulliNB(method="conjugate", draws=5, chains=1, random_state=0).fit(X, y)
    log_joint, y_index = exact_loo.loo_log_joint(est, X, y)
    loo = np.exp(log_joint - np.logaddexp.reduce(log_joint, axis=1, keepdims=True))
    for n in range(len(y)):
        keep = np.arange(len(y)) != n
        refit = bg.BernoulliNB(method="conjugate", draws=5, chains=1, random_state=0)
        refit.fit(X[keep], y[keep])
        np.testing.assert_allclose(loo[n], refit.predict_proba(X[n:n + 1])[0], atol=1e-12)
        np.testing.assert_allclose(log_joint[n], refit.predict_joint_log_proba(X[n:n + 1])[0],
                                   atol=1e-10)
    np.testing.assert_array_equal(y_index, y)


def _coverage_runs(calibration, mondrian=False, runs=60, level=0.9, score="lac",
                   randomize=False):
    rng = np.random.default_rng(0)
    X, y = make_data("real", n_per_class=80, seed=11)
    X = X + rng.normal(scale=2.0, size=X.shape)  # overlapping classes
    covered, per_class, sizes = [], [], []
    for _ in range(runs):
        perm = rng.permutation(len(y))
        fit_rows, cal_rows, test_rows = perm[:60], perm[60:120], perm[120:]
        if calibration == "loo":
            fit_rows = cal_rows = perm[:120]
        est = bg.GaussianNB(method="conjugate", draws=2, chains=1, random_state=0)
        est.fit(X[fit_rows], y[fit_rows])
        sets = est.predict_set(X[test_rows], confidence_level=level, calibration=calibration,
                               X_calib=X[cal_rows], y_calib=y[cal_rows], score=score,
                               mondrian=mondrian, randomize=randomize, random_state=rng)
        hit = sets[np.arange(test_rows.size), y[test_rows]]
        covered.append(hit.mean())
        per_class.append([hit[y[test_rows] == k].mean() for k in range(3)])
        sizes.append(sets.sum(axis=1).mean())
    return np.mean(covered), np.mean(per_class, axis=0), np.mean(sizes)


@pytest.mark.parametrize("score", ["lac", "aps"])
def test_split_coverage_over_random_splits(score):
    coverage, _, size = _coverage_runs("split", score=score)
    assert 0.88 <= coverage <= 0.94  # 1 - alpha <= E coverage <= 1 - alpha + 1 / (n + 1)
    assert 1.0 <= size < 3.0


def test_randomized_sets_cover_exactly_and_are_smaller():
    """Smoothed p-values: mean coverage 1 - alpha (not above it by up to 1/(n + 1)), sets
    no larger than the non-randomised ones on the same splits."""
    coverage, _, size = _coverage_runs("split", randomize=True)
    assert 0.87 <= coverage <= 0.925
    assert size <= _coverage_runs("split")[2] + 1e-12


def test_smoothed_pvalues_against_counting():
    """The p-value formula against a direct count, with ties, and the non-randomised
    set as its U = 1 limit."""
    rng = np.random.default_rng(3)
    cal = rng.integers(0, 5, size=(30, 3)).astype(float)  # many ties
    y_index = rng.integers(0, 3, size=30)
    test = rng.integers(0, 6, size=(7, 3)).astype(float)
    got = conformal.smoothed_pvalues(cal, y_index, test, np.random.default_rng(1))
    u = np.random.default_rng(1).uniform(size=test.shape)
    true = cal[np.arange(30), y_index]
    want = np.array([[((true > t).sum() + u[i, k] * ((true == t).sum() + 1)) / 31
                      for k, t in enumerate(row)] for i, row in enumerate(test)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    # U = 1: p > alpha exactly where the score is at most the conformal quantile
    ones = (np.array([[(true >= t).sum() + 1 for t in row] for row in test]) / 31)
    for alpha in (0.05, 0.1, 0.3):
        q = conformal.conformal_quantile(true, alpha)
        np.testing.assert_array_equal(ones > alpha, test <= q)


def test_mondrian_coverage_per_class():
    _, per_class, _ = _coverage_runs("split", mondrian=True)
    assert np.all(per_class >= 0.87)


def test_loo_coverage_and_size():
    coverage, _, size = _coverage_runs("loo")
    assert 0.87 <= coverage <= 0.94
    assert size <= _coverage_runs("split")[2] + 0.05


# ---------------------------------------------------------------- abstention
def _check_reject(est, X):
    proba = est.predict_proba(X)
    half = est.predict(X, coverage=0.5)
    assert isinstance(half, np.ma.MaskedArray)
    kept = ~np.ma.getmaskarray(half)
    assert kept.sum() == int(np.ceil(0.5 * len(X)))
    assert proba.max(axis=1)[kept].min() >= proba.max(axis=1)[~kept].max() - 1e-12
    np.testing.assert_array_equal(half.data, est.predict(X))
    chow = est.predict(X, reject_cost=0.2, reject_label="?")
    np.testing.assert_array_equal(chow == "?", proba.max(axis=1) < 0.8)
    with pytest.raises(ValueError, match="exactly one"):
        est.predict(X, coverage=0.5, reject_cost=0.1)
    with pytest.raises(ValueError, match="coverage"):
        est.predict(X, coverage=1.5)


def test_reject_option_on_every_posterior(posterior_fit):
    _check_reject(*posterior_fit[:2])


def test_reject_option_on_every_point_fit(point_fit):
    _check_reject(*point_fit[:2])


def test_chow_rule_under_a_loss_matrix():
    proba = np.array([[0.7, 0.3], [0.55, 0.45], [0.1, 0.9]])
    loss = np.array([[0.0, 1.0], [5.0, 0.0]])  # missing class 1 costs 5
    decision, accepted = reject.reject_decisions(proba, loss, reject_cost=0.6)
    # expected losses: predict 0 -> 5 p1, predict 1 -> p0
    np.testing.assert_array_equal(decision, [1, 1, 1])
    np.testing.assert_array_equal(accepted, [False, True, True])


def test_risk_coverage_curve():
    proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]])
    y = np.array([0, 1, 0, 1])  # errors: row 1 only
    curve = bg.risk_coverage_curve(y, proba)
    np.testing.assert_allclose(curve["coverage"], [0.25, 0.5, 0.75, 1.0])
    # answered in order rows 0, 1, 3 (p 0.7), 2 (p 0.6)
    np.testing.assert_allclose(curve["risk"], [0.0, 0.5, 1 / 3, 0.25])
    assert curve["aurc"] == pytest.approx(np.mean([0.0, 0.5, 1 / 3, 0.25]))


def test_risk_coverage_plot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    est, X, y = _fit("GaussianNB", "conjugate")
    ax = bg.plots.risk_coverage(y, {"conjugate": est.predict_proba(X)}, classes=est.classes_)
    assert "AURC" in ax.get_legend().get_texts()[0].get_text()
    assert ax.get_xlabel().startswith("coverage")
    plt.close("all")


# ----------------------------------------------------------- active learning
def _check_acquisition(est, X, strategies):
    for strategy in strategies:
        idx = bg.select_queries(est, X, 4, strategy, random_state=0)
        assert idx.shape == (4,) and np.unique(idx).size == 4
    np.testing.assert_allclose(bg.acquisition_scores(est, X, "entropy"),
                               uncertainty.entropy(est.predict_proba(X)))
    margin = bg.acquisition_scores(est, X, "margin")
    assert np.all(margin <= 0) and np.all(margin >= -1)


def test_acquisition_on_every_posterior(posterior_fit):
    est, X, _ = posterior_fit
    _check_acquisition(est, X, active.STRATEGIES + active.BATCH_STRATEGIES)
    bald = bg.acquisition_scores(est, X, "bald", max_draws=None)
    weighted = uncertainty.decompose_rows(est, est._check_X_predict(X), exact=False,
                                          warn_ess=False)
    np.testing.assert_allclose(bald, weighted.epistemic)
    if est.method_ == "mcmc":  # the decomposition weights MCMC draws too
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bg.DataWarning)  # SMALL_NUTS: few draws, low ESS
            got = est.predict_uncertainty(X, as_dataset=False).epistemic
        np.testing.assert_allclose(bald, got)


def test_acquisition_on_every_point_fit(point_fit):
    est, X, _ = point_fit
    _check_acquisition(est, X, ("entropy", "margin", "random"))
    with pytest.raises(ValueError, match="needs a posterior"):
        bg.select_queries(est, X, 3, "batchbald")


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_labeling_loop_on_every_estimator(name):
    est, X, y = _fit(name, "map")
    pool = np.arange(len(y))
    for _ in range(2):  # select -> label -> partial_fit
        pick = bg.select_queries(est, X[pool], 3, "margin", random_state=0)
        est.partial_fit(X[pool[pick]], y[pool[pick]])
        pool = np.delete(pool, pick)
    assert est.class_count_.sum() == len(y) + 6


def test_labeling_loop_with_a_posterior():
    est, X, y = _fit("MultinomialNB", "conjugate")
    before = est.class_count_.sum()
    pick = bg.select_queries(est, X, 5, "bald", random_state=0)
    est.partial_fit(X[pick], y[pick])
    assert est.class_count_.sum() == before + 5
    assert est.predict_uncertainty(X, as_dataset=False).epistemic.shape == (len(y),)


def test_batch_avoids_near_duplicates():
    est, X, y = _fit("GaussianNB", "conjugate")
    best = np.argmax(bg.acquisition_scores(est, X, "bald"))
    copies = X[best] + 1e-6 * np.arange(1, 6)[:, None]  # five near-copies of the top row
    pool = np.vstack([copies, X])
    group = set(range(5)) | {5 + int(best)}
    top = bg.select_queries(est, pool, 3, "bald", min_distance=0, random_state=0)
    assert set(top.tolist()) <= group  # the copies win on score alone
    diverse = bg.select_queries(est, pool, 3, "bald", random_state=0)
    assert len(set(diverse.tolist()) & group) == 1
    with pytest.raises(ValueError, match="n_queries"):
        bg.select_queries(est, pool, 0)
    with pytest.raises(ValueError, match="strategy"):
        bg.acquisition_scores(est, pool, "variance")


def _overlapping_classes():
    """GaussianNB(conjugate) on 18 rows of three overlapping 2-D classes, and 12 pool rows
    from the same distribution (BALD scores between 0.07 and 0.35 nats)."""
    rng = np.random.default_rng(5)
    y_all = np.repeat(np.arange(3), 10)
    X_all = np.array([[0, 0], [1.5, 0], [0, 1.5]])[y_all] + rng.normal(size=(30, 2))
    train = np.arange(30) % 10 < 6
    est = bg.GaussianNB(method="conjugate", draws=1000, chains=1, random_state=1)
    return est.fit(X_all[train], y_all[train]), X_all[~train]


def _brute_joint_mi(est, rows):
    """I(y_1..y_b; theta | x_1..x_b, D) from idata_'s draws, weights prod_j p(x_j | theta_s),
    the joint entropy summed over all K^b label configurations."""
    post = est.idata_.posterior.stack(s=("chain", "draw"))
    pi = post["pi"].transpose("s", "class").values
    mu = post["mu"].transpose("s", "class", "feature").values
    sd = np.sqrt(post["var"].transpose("s", "class", "feature").values)
    joint = np.log(pi)[:, None, :] + stats.norm.logpdf(
        rows[None, :, None, :], mu[:, None], sd[:, None]).sum(axis=-1)  # (S, b, K)
    log_px = np.logaddexp.reduce(joint, axis=2)  # (S, b)
    p = np.exp(joint - log_px[..., None])
    w = np.exp(log_px.sum(axis=1) - log_px.sum(axis=1).max())
    w /= w.sum()
    b, K = p.shape[1:]
    P = np.array([w @ np.prod(p[:, np.arange(b), list(c)], axis=1)
                  for c in itertools.product(range(K), repeat=b)])
    return stats.entropy(P) - np.sum(w * stats.entropy(p, axis=2).sum(axis=1))


def test_batchbald_of_one_row_is_bald(posterior_fit):
    est, X, _ = posterior_fit
    for seed in range(3):
        np.testing.assert_array_equal(
            bg.select_queries(est, X, 1, "batchbald", random_state=seed),
            bg.select_queries(est, X, 1, "bald", random_state=seed))
    bald = bg.acquisition_scores(est, X, "bald")
    idx, mi = active.batchbald(est, est._check_X_predict(X), 2, rng=0)
    assert mi[0] == bald[idx[0]] == bald.max()


def test_batchbald_equals_brute_force(monkeypatch):
    est, pool = _overlapping_classes()
    Xv = est._check_X_predict(pool)
    idx, mi = active.batchbald(est, Xv, 4, max_draws=None, rng=0)  # exact: 3^4 <= 1000
    with monkeypatch.context() as patch:  # the pool's terms recomputed at every step
        patch.setattr(active, "_CACHE_BUDGET", 0)
        again = active.batchbald(est, Xv, 4, max_draws=None, rng=0)
    np.testing.assert_array_equal(again[0], idx)
    np.testing.assert_allclose(again[1], mi, rtol=1e-12)
    np.testing.assert_allclose(mi[0], bg.acquisition_scores(est, pool, max_draws=None)[idx[0]])
    brute = [_brute_joint_mi(est, pool[idx[:i + 1]]) for i in range(4)]
    np.testing.assert_allclose(mi[1:], brute[1:], rtol=1e-9)
    # greedy: the second row maximises the pair's joint mutual information
    pairs = [_brute_joint_mi(est, pool[[idx[0], j]]) if j != idx[0] else -np.inf
             for j in range(len(pool))]
    assert idx[1] == np.argmax(pairs)
    # sampled configurations (one per draw: 1,000) from the second row on
    idx, mi = active.batchbald(est, Xv, 4, max_draws=None, n_configurations=2, rng=0)
    brute = [_brute_joint_mi(est, pool[idx[:i + 1]]) for i in range(1, 4)]
    np.testing.assert_allclose(mi[1:], brute, atol=0.05)
    assert not np.allclose(mi[1:], brute, atol=1e-6)  # an estimate, not the exact sum
    with pytest.raises(ValueError, match="n_configurations"):
        bg.select_queries(est, pool, 2, "batchbald", n_configurations=0)
    with pytest.raises(ValueError, match="select_queries"):
        bg.acquisition_scores(est, pool, "batchbald")


def test_batchbald_skips_an_exact_duplicate():
    est, pool = _overlapping_classes()
    best = int(np.argmax(bg.acquisition_scores(est, pool, "bald")))
    pool = np.vstack([pool, pool[best]])  # row 12 repeats the best row
    twins = {best, len(pool) - 1}
    top = bg.select_queries(est, pool, 2, "bald", min_distance=0, random_state=0)
    assert set(top.tolist()) == twins
    for seed in range(3):  # the pair (best, twin): 0.55 nats; (best, row 11): 0.66
        batch = bg.select_queries(est, pool, 2, "batchbald", random_state=seed)
        assert len(set(batch.tolist()) & twins) == 1  # one of the tied twins first


def test_semi_supervised_posterior():
    """Unlabeled rows in the fit (a Rao-Blackwellised mixture posterior): the
    decomposition and split sets work; the exact leave-one-out does not exist."""
    X, y = make_data("real", n_per_class=15)
    y_semi = y.astype(float)
    y_semi[::3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bg.GaussianNB(method="conjugate", draws=20, chains=2, random_state=0)
        est.fit(X, y_semi)
    out = est.predict_uncertainty(X, as_dataset=False)
    np.testing.assert_allclose(out.total, out.aleatoric + out.epistemic, rtol=0, atol=1e-12)
    assert est.predict_set(X, confidence_level=0.8, X_calib=X, y_calib=y).shape == (len(y), 3)
    with pytest.raises(ValueError, match="exact leave-one-out"):
        est.predict_set(X, confidence_level=0.8, calibration="loo", X_calib=X, y_calib=y)


def test_reject_option_needs_in_memory_rows():
    da = pytest.importorskip("dask.array")
    est, X, _ = _fit("GaussianNB", "map")
    lazy = da.from_array(X, chunks=(20, X.shape[1]))
    np.testing.assert_array_equal(est.predict(lazy).compute(), est.predict(X))
    with pytest.raises(ValueError, match="in-memory"):
        est.predict(lazy, coverage=0.5)
