"""The command line demo (`python -m bayesgen demo`) and its calibration metric."""

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

from bayesgen.__main__ import main
from bayesgen.cli import datasets, demo

pytestmark = pytest.mark.slow  # the demo samples three models with NUTS


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """Run ``main(["demo", "--out", DIR])`` once: (exit code, stdout, out folder)."""
    out = tmp_path_factory.mktemp("demo")
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["demo", "--out", str(out)])
    return code, stdout.getvalue(), out


def demo_methods() -> set[str]:
    return {m for _, cs in demo.DEMO for c in cs for m in c.methods}


def test_demo_prints_the_table(demo_run):
    code, text, out = demo_run
    assert code == 0
    for column in ("classifier", "method", "accuracy", "log loss", "ECE", "time (ms)"):
        assert column in text
    expected_rows = sum(len(c.methods) for _, cs in demo.DEMO for c in cs)
    table_lines = [
        line for line in text.splitlines() if any(f" {m} " in line for m in demo_methods())
    ]
    assert len(table_lines) == expected_rows
    for name in ("LDA", "QDA", "GaussianNB", "MultinomialNB", "BernoulliNB"):
        assert any(f" {name}" in line for line in table_lines)
    assert str(out / "log_loss.png") in text


def test_small_sample_qda_mle_is_reported_not_raised(demo_run):
    _, text, out = demo_run
    small = [line for line in text.splitlines() if line.startswith("breast cancer, ")]
    qda = {
        m: [line for line in small if " QDA " in line and f" {m} " in line] for m in ("mle", "map")
    }
    assert len(qda["mle"]) == 1 and "MLE: singular (n_k <= d)" in qda["mle"][0]
    assert len(qda["map"]) == 1 and "singular" not in qda["map"][0]
    table = pd.read_csv(out / "results.csv")
    row = table[table["data"].str.startswith("breast cancer, ") & (table["classifier"] == "QDA")]
    accuracy = row.set_index("method")["accuracy"]
    assert np.isnan(accuracy["mle"])
    assert 0.63 < accuracy["map"] <= 1.0  # MAP fits and beats the majority class (0.63)


def test_demo_writes_png_and_csv(demo_run):
    _, _, out = demo_run
    png = (out / "log_loss.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    table = pd.read_csv(out / "results.csv")
    ok = table["accuracy"].notna()
    assert (~ok).sum() == 1  # only the small-sample QDA MLE fails
    assert table.loc[ok, "accuracy"].between(0, 1).all()
    assert (table.loc[ok, "log_loss"] > 0).all()
    assert table.loc[ok, "ece"].between(0, 1).all()
    assert (table.loc[ok, "fit_ms"] > 0).all()
    for name in ("reliability.png", "decision_regions.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_mcmc_rows_report_convergence_and_agree_with_the_exact_posterior(demo_run):
    """On wine every Gaussian classifier is also sampled with NUTS: its convergence is
    reported, and its held-out log loss is close to the exact conjugate posterior's."""
    _, _, out = demo_run
    table = pd.read_csv(out / "results.csv").fillna("")
    wine = table[table["data"] == "wine"]
    for name in ("LDA", "QDA", "GaussianNB"):
        rows = wine[wine["classifier"] == name].set_index("method")
        assert rows.loc["mcmc", "convergence"].startswith("R-hat")
        assert rows.loc["conjugate", "convergence"] == "exact draws"
        assert abs(rows.loc["mcmc", "log_loss"] - rows.loc["conjugate", "log_loss"]) < 0.02


@pytest.mark.parametrize(
    ("loader", "name", "reference"),
    [
        (datasets.breast_cancer, "LDA", skda.LinearDiscriminantAnalysis()),
        (datasets.wine, "QDA", skda.QuadraticDiscriminantAnalysis()),
        (datasets.wine, "GaussianNB", sknb.GaussianNB(var_smoothing=0.0)),
    ],
)
def test_mle_rows_match_scikit_learn(demo_run, loader, name, reference):
    """The MLE rows equal scikit-learn's (MLE) estimators scored on the same split."""
    _, _, out = demo_run
    table = pd.read_csv(out / "results.csv")
    data = loader(0)
    row = table[(table["data"] == data.name) & (table["classifier"] == name)]
    row = row[row["method"] == "mle"].iloc[0]
    proba = reference.fit(data.X_train, data.y_train).predict_proba(data.X_test)
    assert row["accuracy"] == pytest.approx(
        accuracy_score(data.y_test, reference.predict(data.X_test))
    )
    assert row["log_loss"] == pytest.approx(log_loss(data.y_test, proba), rel=1e-6)


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


def test_python_dash_m_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "bayesgen", "demo", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "--out" in result.stdout and "--seed" in result.stdout


def test_posterior_predictive_helps_at_small_n(demo_run):
    """On 20 rows per class (< d = 30) the conjugate posterior predictive has a lower
    held-out log loss than the MAP plug-in for LDA and QDA."""
    _, text, _ = demo_run
    small = [line for line in text.splitlines() if line.startswith("breast cancer, 20/class")]
    for name in ("LDA", "QDA"):
        loss = {
            line.split()[4]: float(line.split()[6])
            for line in small
            if f" {name} " in line and "singular" not in line
        }
        assert loss["conjugate"] < loss["map"], name
