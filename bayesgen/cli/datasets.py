"""The demo's data sets: scikit-learn's bundled sets as named train/test splits."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.model_selection import train_test_split

#: Training rows kept per class in the small-sample data set (breast cancer has d = 30).
SMALL_N_PER_CLASS = 20


class Split(NamedTuple):
    """A named train/test split."""

    name: str
    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray



def split(name: str, X: np.ndarray, y: np.ndarray, seed: int) -> Split:
    """Stratified 70/30 split."""
    parts = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
    return Split(name, *parts)


def breast_cancer(seed: int) -> Split:
    X, y = load_breast_cancer(return_X_y=True)
    return split("breast cancer", X, y, seed)


def wine(seed: int) -> Split:
    X, y = load_wine(return_X_y=True)
    return split("wine", X, y, seed)


def breast_cancer_small(seed: int) -> Split:
    """Breast cancer with only ``SMALL_N_PER_CLASS`` training rows per class (n_k < d)."""
    full = breast_cancer(seed)
    rng = np.random.default_rng(seed)
    keep = np.concatenate(
        [
            rng.choice(np.flatnonzero(full.y_train == k), SMALL_N_PER_CLASS, replace=False)
            for k in np.unique(full.y_train)
        ]
    )
    name = f"breast cancer, {SMALL_N_PER_CLASS}/class"
    return Split(name, full.X_train[keep], full.X_test, full.y_train[keep], full.y_test)


def digits(seed: int) -> Split:
    X, y = load_digits(return_X_y=True)
    return split("digits (counts 0-16)", X, y, seed)
