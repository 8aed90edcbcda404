"""The command line demo (`python -m bayesgen demo`): its table over splits against
scikit-learn's peers, its headlines, its files, and its calibration metric.

The tests of the demo's run (those using the ``demo_run`` fixture) are ``ci_step`` tests
(tests/conftest.py): the default pytest run deselects them, and ``.ci/run`` runs them
once, as its demo step (``pytest --ci-steps tests/test_demo.py``)."""

import contextlib
import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sknb
from sklearn.metrics import accuracy_score, log_loss

import bayesgen as bg
from bayesgen.__main__ import main
from bayesgen.cli import datasets, demo, peers, report

SPLITS = 2


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """Run ``main(["demo", "--out", DIR, "--splits", 2])`` once: (exit code, stdout,
    out folder). Slow: the demo samples three models with NUTS on every split."""
    out = tmp_path_factory.mktemp("demo")
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["demo", "--out", str(out), "--splits", str(SPLITS)])
    return code, stdout.getvalue(), out


def n_models() -> int:
    return sum(sum(len(c.methods) for c in cs) + len(ps) for _, cs, ps in demo.DEMO)


def read(out, name):
    return pd.read_csv(out / name, keep_default_na=True).fillna({"note": "",
                                                                 "convergence": ""})


@pytest.mark.slow
def test_demo_prints_the_table_with_every_model_and_peer(demo_run):
    code, text, out = demo_run
    assert code == 0
    for column in ("classifier", "method", "accuracy", "log loss", "ECE", "time (ms)"):
        assert column in text
    summary = read(out, "summary.csv")
    assert len(summary) == n_models()
    for name in ("LDA", "QDA", "GaussianNB", "MultinomialNB", "BernoulliNB(binarize=7)",
                 "LogisticRegression"):
        assert (summary["classifier"] == name).any()
    for label in ("sklearn shrinkage", "sklearn tuned by CV", "sklearn alpha=1"):
        assert (summary["method"] == label).any()
    assert f"over {SPLITS} stratified 70/30 split(s)" in text
    assert "mean (standard deviation)" in text
    assert str(out / "log_loss.png") in text


@pytest.mark.slow
def test_results_have_one_row_per_model_and_split_and_an_honest_time_column(demo_run):
    _, _, out = demo_run
    results = read(out, "results.csv")
    assert len(results) == n_models() * SPLITS
    assert "fit_predict_ms" in results and "fit_ms" not in results
    assert sorted(results["split"].unique()) == list(range(SPLITS))
    ok = results["accuracy"].notna()
    assert (results.loc[ok, "fit_predict_ms"] > 0).all()
    assert results.loc[ok, "accuracy"].between(0, 1).all()
    assert (results.loc[ok, "log_loss"] > 0).all()
    assert results.loc[ok, "ece"].between(0, 1).all()


@pytest.mark.slow
def test_summary_is_the_mean_and_sd_of_the_splits(demo_run):
    _, _, out = demo_run
    results, summary = read(out, "results.csv"), read(out, "summary.csv")
    keys = ["data", "classifier", "method"]
    expected = results.groupby(keys, sort=False)["log_loss"].agg(["mean", "std"])
    got = summary.set_index(keys)
    ok = expected["mean"].notna()
    np.testing.assert_allclose(got.loc[expected.index[ok], "log_loss"],
                               expected.loc[ok, "mean"], rtol=1e-9)
    np.testing.assert_allclose(got.loc[expected.index[ok], "log_loss_sd"],
                               expected.loc[ok, "std"], rtol=1e-9)
    times = results.groupby(keys, sort=False)["fit_predict_ms"].median()
    np.testing.assert_allclose(got.loc[times.index[ok], "fit_predict_ms"], times[ok])


@pytest.mark.slow
def test_small_sample_qda_mle_is_reported_not_raised(demo_run):
    _, text, out = demo_run
    assert "MLE: singular (n_k <= d)" in text
    results = read(out, "results.csv")
    failed = results[results["accuracy"].isna()]
    assert set(zip(failed["data"], failed["classifier"], failed["method"], strict=True)) == {
        (report.SMALL, "QDA", "mle")}  # only QDA's MLE with n_k < d fails, on every split
    summary = read(out, "summary.csv").set_index(["data", "classifier", "method"])
    assert summary.loc[(report.SMALL, "QDA", "map"), "accuracy"] > 0.63  # majority: 0.63


@pytest.mark.slow
def test_demo_writes_its_figures(demo_run):
    _, _, out = demo_run
    for name in ("log_loss.png", "reliability.png", "decision_regions.png"):
        png = (out / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


@pytest.mark.slow
def test_mcmc_rows_report_convergence_and_agree_with_the_exact_posterior(demo_run):
    """On wine GaussianNB is also sampled with NUTS (the default ``--nuts one``; no
    other NUTS fit): its convergence is reported, and its held-out log loss is close to
    the exact conjugate posterior's."""
    _, text, out = demo_run
    results = read(out, "results.csv")
    assert set(zip(*results.loc[results["method"] == "mcmc", ["data", "classifier"]].T.values,
                   strict=True)) == {("wine", "GaussianNB")}
    wine = results[(results["data"] == "wine") & (results["classifier"] == "GaussianNB")]
    mcmc = wine[wine["method"] == "mcmc"].set_index("split")
    exact = wine[wine["method"] == "conjugate"].set_index("split")
    assert len(mcmc) == SPLITS
    assert mcmc["convergence"].str.startswith("R-hat").all()
    assert (exact["convergence"] == "exact draws").all()
    assert (abs(mcmc["log_loss"] - exact["log_loss"]) < 0.02).all()
    assert "compiling NUTS for GaussianNB on wine" in text
    assert demo.NUTS_SCOPES["one"] in text


@pytest.mark.slow
@pytest.mark.parametrize(
    ("loader", "name", "method", "reference"),
    [
        (datasets.breast_cancer, "LDA", "mle", skda.LinearDiscriminantAnalysis()),
        (datasets.wine, "QDA", "mle", skda.QuadraticDiscriminantAnalysis()),
        (datasets.wine, "GaussianNB", "mle", sknb.GaussianNB(var_smoothing=0.0)),
        (datasets.breast_cancer_small, "LDA", "sklearn shrinkage",
         skda.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")),
        (datasets.digits, "MultinomialNB", "sklearn alpha=1", sknb.MultinomialNB(alpha=1.0)),
    ],
)
def test_rows_match_scikit_learn_on_the_same_split(demo_run, loader, name, method, reference):
    """The MLE rows equal scikit-learn's estimators, and the peer rows are the peers,
    scored on the same split."""
    _, _, out = demo_run
    results = read(out, "results.csv")
    for split in range(SPLITS):
        data = loader(split)
        row = results[(results["data"] == data.name) & (results["classifier"] == name)
                      & (results["method"] == method) & (results["split"] == split)].iloc[0]
        proba = reference.fit(data.X_train, data.y_train).predict_proba(data.X_test)
        assert row["accuracy"] == pytest.approx(
            accuracy_score(data.y_test, reference.predict(data.X_test)))
        assert row["log_loss"] == pytest.approx(log_loss(data.y_test, proba), rel=1e-6)


@pytest.mark.slow
def test_headlines_state_the_lowest_models_from_the_summary(demo_run):
    """The printed headlines name, per data set, the bayesgen and scikit-learn models
    with the lowest mean log loss in summary.csv, and the right winner."""
    _, text, out = demo_run
    summary = read(out, "summary.csv")
    for data, part in summary.groupby("data", sort=False):
        fitted = part[part["log_loss"].notna()]
        peer = fitted["method"].map(report.is_peer)
        ours, theirs = fitted[~peer], fitted[peer]
        a = ours.loc[ours["log_loss"].idxmin()]
        b = theirs.loc[theirs["log_loss"].idxmin()]
        line = next(x for x in text.splitlines() if x.startswith(f"  {data}: "))
        assert f"bayesgen {a['classifier']} {a['method']}" in line
        assert f"scikit-learn {b['classifier']}" in line
        winner = "bayesgen lower" if a["log_loss"] < b["log_loss"] else "scikit-learn lower"
        assert f"({winner};" in line


@pytest.mark.slow
def test_posterior_predictive_helps_at_small_n(demo_run):
    """On 20 rows per class (< d = 30) the conjugate posterior predictive has a lower
    mean held-out log loss than the MAP plug-in for LDA and QDA."""
    _, _, out = demo_run
    summary = read(out, "summary.csv").set_index(["data", "classifier", "method"])
    for name in ("LDA", "QDA"):
        assert (summary.loc[(report.SMALL, name, "conjugate"), "log_loss"]
                < summary.loc[(report.SMALL, name, "map"), "log_loss"]), name


# ---------------------------------------------------------------- fast: no demo run
def _table() -> pd.DataFrame:
    """A per-split table of two models and a peer on two data sets, two splits."""
    rows = []
    for data, losses in {"a": (0.5, 0.7, 0.3, 0.4, 0.2, 0.9), "b": (1.0, 1.2, 2.0, 2.2,
                                                                     1.5, 0.1)}.items():
        models = [("LDA", "map"), ("LDA", "conjugate"), ("LDA", "sklearn shrinkage")]
        for i, (clf, method) in enumerate(models):
            for split in range(2):
                rows.append({"data": data, "classifier": clf, "method": method,
                             "split": split, "accuracy": 0.9, "log_loss": losses[2 * i + split],
                             "ece": 0.05, "fit_predict_ms": 10.0 + split,
                             "convergence": "exact draws" if method == "conjugate" else "",
                             "note": ""})
    return pd.DataFrame(rows)


def test_summarise_gives_mean_sd_and_median_time():
    summary = report.summarise(_table())
    row = summary[(summary["data"] == "a") & (summary["method"] == "map")].iloc[0]
    assert row["log_loss"] == pytest.approx(0.6)
    assert row["log_loss_sd"] == pytest.approx(np.std([0.5, 0.7], ddof=1))
    assert row["fit_predict_ms"] == pytest.approx(10.5)
    assert row["splits"] == 2
    text = report.format_table(summary)
    assert "0.600 (0.141)" in text


def test_headlines_pick_the_lowest_and_count_the_splits():
    table = _table()
    lines = report.headlines(report.summarise(table), table)
    a = next(x for x in lines if x.startswith("  a: "))
    # a: bayesgen best is LDA conjugate (0.35), peer 0.55: bayesgen lower on 1 of 2 splits
    assert "bayesgen LDA conjugate 0.350" in a and "scikit-learn LDA (shrinkage) 0.550" in a
    assert "(bayesgen lower; bayesgen lower on 1 of 2 splits; accuracy 0.900 vs 0.900)" in a
    b = next(x for x in lines if x.startswith("  b: "))
    assert "bayesgen LDA map 1.100" in b and "(scikit-learn lower; bayesgen lower on 1 of 2" in b
    # b: the peer's 0.8 is below bayesgen's best 1.1: the one data set where bayesgen loses
    assert "bayesgen loses (a peer has the lower log loss) on 1 of 2 data sets: b (0.800 " \
           "against 1.100)" in lines


def test_headlines_of_one_split_count_no_splits_and_say_where_bayesgen_loses():
    """With one split there is nothing to count over splits; the losses are listed, and
    a data set where bayesgen wins everywhere gives 0 losses."""
    table = _table()
    one = table[table["split"] == 0]
    lines = report.headlines(report.summarise(one), one)
    assert not any("of 1 splits" in x for x in lines)
    assert "  a: bayesgen LDA conjugate 0.300 vs scikit-learn LDA (shrinkage) 0.200 " \
           "(scikit-learn lower; accuracy 0.900 vs 0.900)" in lines
    assert lines[-1].startswith("bayesgen loses (a peer has the lower log loss) on 1 of 2 data "
                                "sets: a (0.200 against 0.300)")
    wins = one[one["data"] == "b"]
    assert report.headlines(report.summarise(wins), wins)[-1] == (
        "bayesgen loses (a peer has the lower log loss) on 0 of 1 data sets")


def test_headlines_say_when_the_posterior_predictive_is_worse():
    table = _table()
    table = table[(table["data"] == "a") & (table["split"] == 0)].assign(data=report.SMALL)
    lines = report.headlines(report.summarise(table), table)
    assert any("LDA: map 0.500, conjugate 0.300 (1.7x lower" in x for x in lines)
    worse = table.copy()
    worse.loc[worse["method"] == "conjugate", "log_loss"] = 1.0
    lines = report.headlines(report.summarise(worse), worse)
    assert any("(2.0x higher with the posterior predictive" in x for x in lines)


def test_compile_seconds_is_the_first_split_above_the_others():
    table = pd.DataFrame({"data": "wine", "classifier": "QDA", "method": "mcmc",
                          "split": [0, 1, 2], "fit_predict_ms": [9000.0, 2000.0, 2200.0]})
    assert demo.compile_seconds(table) == {"QDA on wine": pytest.approx(6.9)}


def test_quiet_grid_search_picks_a_candidate_that_fits():
    """scikit-learn's QDA with reg_param cannot fit 20 rows per class in 30 features;
    the tuned peer falls back on its Ledoit-Wolf candidate instead of failing."""
    data = datasets.breast_cancer_small(0)
    model = peers.tuned_qda(0).fit(data.X_train, data.y_train)
    best = model.estimator.best_params_
    assert best["quadraticdiscriminantanalysis__solver"] == "eigen"
    assert model.predict_proba(data.X_test).shape == (len(data.y_test), 2)


def test_ece_hand_computed_example():
    # conf 0.95 (bin (0.9, 1]): one right, one wrong -> |0.5 - 0.95| * 2/4 = 0.225
    # conf 0.65 (bin (0.6, 0.7]): right            -> |1 - 0.65| * 1/4   = 0.0875
    # conf 0.58 (bin (0.5, 0.6]): wrong            -> |0 - 0.58| * 1/4   = 0.145
    proba = np.array([[0.95, 0.05], [0.95, 0.05], [0.35, 0.65], [0.58, 0.42]])
    y = np.array(["a", "b", "b", "b"])
    ece = demo.expected_calibration_error(y, proba, np.array(["a", "b"]))
    assert ece == pytest.approx(0.225 + 0.0875 + 0.145)


def test_ece_calibrated_and_overconfident():
    rng = np.random.default_rng(0)
    n = 200_000
    conf = rng.uniform(0.5, 1.0, n)
    proba = np.column_stack([conf, 1 - conf])
    calibrated = np.where(rng.uniform(size=n) < conf, 0, 1)
    assert demo.expected_calibration_error(calibrated, proba, [0, 1]) < 0.01
    # always 90% sure, right half of the time: ECE = |0.5 - 0.9| = 0.4
    proba = np.tile([0.9, 0.1], (n, 1))
    coin = rng.integers(0, 2, n)
    assert demo.expected_calibration_error(coin, proba, [0, 1]) == pytest.approx(0.4, abs=0.01)
    assert demo.expected_calibration_error(np.zeros(n), proba, [0, 1]) == pytest.approx(0.1)


def test_cli_requires_a_command():
    with pytest.raises(SystemExit) as info, contextlib.redirect_stderr(io.StringIO()):
        main([])
    assert info.value.code == 2


def test_plan_samples_nuts_where_asked():
    """``--nuts one`` (the default): GaussianNB on wine; ``all``: LDA, QDA and GaussianNB
    on wine; ``none``: no NUTS fit; every other model is the same in all three."""
    def nuts_fits(entries):
        return {(load(0).name, c.name) for load, cs, _ in entries for c in cs
                if "mcmc" in c.methods}

    assert demo.DEMO == demo.plan() == demo.plan("one")
    assert nuts_fits(demo.plan("one")) == {("wine", "GaussianNB")}
    assert nuts_fits(demo.plan("all")) == {("wine", n) for n in ("LDA", "QDA", "GaussianNB")}
    assert nuts_fits(demo.plan("none")) == set()

    def without_nuts(entries):
        return [(load, [(c.name, tuple(m for m in c.methods if m != "mcmc")) for c in cs], ps)
                for load, cs, ps in entries]

    assert without_nuts(demo.plan("one")) == without_nuts(demo.plan("all")) == without_nuts(
        demo.plan("none"))
    assert demo.N_SPLITS == 1
    with pytest.raises(ValueError, match="nuts must be one of"):
        demo.plan("some")


def _tiny_plan(nuts="none"):
    """wine with LDA's MLE and MAP, GaussianNB's MAP labeled "mcmc" (a stand-in for a
    NUTS fit: only the label matters to the notes), and one peer."""
    lda = demo.Classifier("LDA", lambda m, s: bg.LDA(method=m, random_state=s), ("mle", "map"))
    fake = demo.Classifier("GaussianNB", lambda m, s: bg.GaussianNB(method="map"), ("mcmc",))
    return [(datasets.wine, [lda, fake], peers.GAUSSIAN_PEERS[:1])]


def test_one_split_notes_that_a_nuts_time_includes_compiling():
    one = demo.run(0, 1, _tiny_plan())
    two = demo.run(0, 2, _tiny_plan())
    assert len(one) == 4 and len(two) == 8
    note = one.set_index("method").loc["mcmc", "note"]
    assert note == demo.COMPILE_NOTE
    assert (one.loc[one["method"] != "mcmc", "note"] == "").all()
    assert (two["note"] == "").all()  # with more splits compile_seconds takes it out


def test_main_on_a_tiny_demo_prints_writes_and_draws_a_bar(monkeypatch, tmp_path, capsys):
    """The whole of ``main`` on a tiny plan (no start-up fits, the regions figure left
    out): the one-split header, the NUTS scope, the files, and a progress bar on
    standard error when forced."""
    monkeypatch.setattr(demo, "plan", _tiny_plan)
    monkeypatch.setattr(demo, "warm_up", lambda nuts=False: 0.0)
    # the decision-regions figure (a posterior on a grid) is drawn by the full run
    def no_regions(seed, path):
        path.write_bytes(b"")
        return path

    monkeypatch.setattr(demo, "regions", no_regions)
    table = demo.main(out=tmp_path, n_splits=1, nuts="none", progress=True)
    out, err = capsys.readouterr()
    assert len(table) == 4
    assert "held-out scores over 1 stratified 70/30 split(s) (seed 0); --splits 5 gives" in out
    assert "no NUTS fit; --nuts one or all adds NUTS fits on wine" in out
    assert "bayesgen loses (a peer has the lower log loss) on" in out
    for name in ("results.csv", "summary.csv", "log_loss.png", "reliability.png",
                 "decision_regions.png"):
        assert (tmp_path / name).exists() and str(tmp_path / name) in out
    steps = 1 + 4 + 3  # start-up, the fits, the figures
    assert f"] {steps}/{steps} " in err and "wine: LDA mle" in err
    assert err.endswith("\r")  # the bar erased itself before the table was printed
    assert "\r" not in out
    demo.main(out=tmp_path, n_splits=1, nuts="none", progress=False)
    assert capsys.readouterr().err == ""


def test_python_dash_m_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "bayesgen", "demo", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    for option in ("--out", "--seed", "--splits", "--nuts", "--no-progress"):
        assert option in result.stdout


def test_demo_refuses_zero_splits(tmp_path):
    with pytest.raises(ValueError, match="n_splits must be at least 1"):
        demo.main(out=tmp_path, n_splits=0)


def test_log_loss_figure_shares_a_log_axis_and_shows_tiny_losses():
    """One log scale for every panel, a 0.000 loss drawn and labeled, error bars from
    the standard deviation, one legend entry for all scikit-learn peers."""
    from bayesgen.cli import figures

    summary = report.summarise(_table().assign(
        log_loss=lambda t: t["log_loss"].where(t["method"] != "map", 2e-5)))
    fig = figures.log_loss_figure(summary)
    a, b = fig.axes[:2]
    assert a.get_yscale() == b.get_yscale() == "log"
    assert a.get_ylim() == b.get_ylim()
    assert a.get_ylim()[0] == figures.FLOOR
    labels = [t.get_text() for t in a.texts]
    assert "<0.001" in labels and "0.350" in labels
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["map", "conjugate", "scikit-learn peer\n(see the table)"]


def test_reliability_figure_pools_the_splits_in_equal_count_bins():
    """The reliability figure of the small breast cancer set: one curve per model from
    bins of equal count over the held-out rows of every split, and a linear count axis
    below."""
    from bayesgen.cli import figures

    rows = []
    for split in range(2):
        y = datasets.breast_cancer_small(split).y_test
        noise = 0.05 * np.random.default_rng(split).standard_normal(y.size)
        p = np.clip(0.8 * y + 0.1 + noise, 0, 1)
        for clf, method in [("LDA", "map"), ("LDA", "sklearn shrinkage")]:
            rows.append({"data": report.SMALL, "classifier": clf, "method": method,
                         "split": split, "proba": np.column_stack([1 - p, p])})
    fig = figures.reliability_figure(pd.DataFrame(rows), n_bins=5)
    top, bottom = fig.axes
    assert bottom.get_yscale() == "linear" and top.get_yscale() == "linear"
    curves = [line for line in top.get_lines() if line.get_marker() == "o"]
    assert len(curves) == 2 and all(len(c.get_xdata()) == 5 for c in curves)
    legend = [t.get_text() for t in top.get_legend().get_texts()]
    assert legend[1:] == ["bayesgen LDA map", "scikit-learn LDA (shrinkage)"]
    n = 2 * len(datasets.breast_cancer_small(0).y_test)
    assert f"{n} forecasts pooled over 2 split(s), 5 bins of equal count" in top.get_title()
    assert bottom.get_ylim()[1] <= n  # the count axis fits the counts
