"""Smoke test of the small-data predictive study tool (validation/predictive_study.py)."""

import numpy as np
from sklearn import discriminant_analysis as skda
from sklearn.datasets import load_iris
from sklearn.metrics import log_loss

from validation.predictive_study import run, split, summarise


def test_split_takes_n_per_class_and_leaves_the_rest():
    y = np.repeat([0, 1, 2], 30)
    train, test = split(y, 10, np.random.default_rng(0))
    assert np.all(np.bincount(y[train]) == 10)
    assert np.intersect1d(train, test).size == 0 and train.size + test.size == y.size


def test_study_rows_match_a_direct_computation():
    results = run(splits=2, sizes=[10], draws=100, with_mcmc=False, seed=0, datasets=["iris"])
    table = summarise(results)
    assert {"bg QDA conjugate", "sk LDA", "sk QDA reg 0.5"} <= set(table["model"])
    # recompute one scikit-learn row independently
    X, y = load_iris(return_X_y=True)
    train, test = split(y, 10, np.random.default_rng(0))
    ref = skda.LinearDiscriminantAnalysis().fit(X[train], y[train])
    row = results[(results["model"] == "sk LDA") & (results["split"] == 0)]
    assert row["log_loss"].item() == log_loss(y[test], ref.predict_proba(X[test]))
