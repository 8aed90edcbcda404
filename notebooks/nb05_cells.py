"""Cells of notebook 5, ``05_uncertainty_in_action.ipynb``: ``(kind, source)`` pairs,
``kind`` in {"md", "code"} (see ``build.py``)."""

from nb_setup import SETUP

NB05 = [
    ("md", """\
# 5. Uncertainty in action: labels to buy, sets to trust, rows to skip

A posterior says not only which class is likely but how sure the model is and why.
This notebook turns that into three decisions:

1. **which rows to label next**: a labeling budget spent by BALD (the epistemic part
   of the uncertainty) against entropy and random sampling;
2. **which classes a row may have**: conformal prediction sets with guaranteed
   coverage, split and no-split, on a small data set;
3. **when to abstain**: Chow's reject rule, a coverage target and the risk-coverage
   curve.

Only scikit-learn's bundled data sets are used."""),
    ("code", SETUP),
    ("md", """\
## Aleatoric and epistemic uncertainty

Wine, 3 labeled rows per class. `predict_uncertainty` splits each row's predictive
entropy into the expected entropy under the posterior (aleatoric: overlap of the
classes) and the mutual information between label and parameters (epistemic: what more
labels would resolve). With few labels most of the uncertainty is epistemic; with all
of them little is left, and what is left is mostly aleatoric."""),
    ("code", """\
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.model_selection import train_test_split

X, y = load_wine(return_X_y=True)
X_pool, X_test, y_pool, y_test = train_test_split(X, y, test_size=0.3, random_state=SEED,
                                                  stratify=y)
rng = np.random.default_rng(SEED)
start = np.concatenate([rng.choice(np.flatnonzero(y_pool == k), 3, replace=False)
                        for k in range(3)])

def conjugate_nb():
    return bg.GaussianNB(method="conjugate", draws=N_DRAWS, chains=2, random_state=SEED)

few = conjugate_nb().fit(X_pool[start], y_pool[start])
full = conjugate_nb().fit(X_pool, y_pool)
table = pd.DataFrame({
    name: {part: float(clf.predict_uncertainty(X_test)[part].mean())
           for part in ("total", "aleatoric", "epistemic")}
    for name, clf in [("9 labeled rows", few), (f"{len(y_pool)} labeled rows", full)]})
table.round(3)"""),
    ("md", """\
## A labeling budget: BALD against entropy and random

Start from the 9 labeled rows, then buy 25 labels one at a time; after each, record the
held-out accuracy and log loss. `bg.select_queries` ranks the pool, `partial_fit` adds
the new label. BALD asks for the rows whose label the posterior draws disagree on;
entropy sampling for the rows with the most uncertain prediction, whether the
uncertainty is reducible or not."""),
    ("code", """\
from sklearn.metrics import log_loss

def learning_curve(strategy, seed, steps=25):
    clf = conjugate_nb().fit(X_pool[start], y_pool[start])
    pool = np.setdiff1d(np.arange(len(y_pool)), start)
    rs = np.random.default_rng(seed)
    acc, loss = [], []
    for step in range(steps + 1):
        proba = clf.predict_proba(X_test)
        acc.append(np.mean(proba.argmax(axis=1) == y_test))
        loss.append(log_loss(y_test, proba, labels=clf.classes_))
        if step < steps:
            pick = bg.select_queries(clf, X_pool[pool], 1, strategy, random_state=rs)
            clf.partial_fit(X_pool[pool[pick]], y_pool[pool[pick]])
            pool = np.delete(pool, pick)
    return np.array(acc), np.array(loss)

curves = {s: [learning_curve(s, seed) for seed in range(3)]
          for s in ("bald", "entropy", "random")}
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
for s, runs in curves.items():
    labels = 9 + np.arange(26)
    axes[0].plot(labels, np.mean([a for a, _ in runs], axis=0), label=s)
    axes[1].plot(labels, np.mean([ll for _, ll in runs], axis=0), label=s)
axes[0].set(xlabel="labels spent", ylabel="held-out accuracy", title="Accuracy (mean of 3 seeds)")
axes[1].set(xlabel="labels spent", ylabel="held-out log loss", title="Log loss (mean of 3 seeds)")
axes[0].legend()
pd.DataFrame({s: {"AULC accuracy": np.mean([a.mean() for a, _ in runs]),
                  "AULC log loss": np.mean([ll.mean() for _, ll in runs])}
              for s, runs in curves.items()}).round(3)"""),
    ("md", """\
`validation/active_learning.py` repeats this over 10 seeds on three data sets
(`validation/results_active_learning.md`).

## Conformal prediction sets on a small data set

Breast cancer with 40 labeled rows. Split conformal fits on 20 and calibrates on the
other 20; the no-split version fits on all 40 and calibrates with their exact
leave-one-out predictive, which a conjugate posterior gives in closed form (no refit).
Over 50 random splits, both cover about 90 % of the test rows (`confidence_level=0.9`);
the no-split sets are smaller because the model saw twice as many rows."""),
    ("code", """\
Xb, yb = load_breast_cancer(return_X_y=True)
level = 0.9
rows = []
rs = np.random.default_rng(SEED)
for _ in range(50):
    perm = rs.permutation(len(yb))
    lab, test = perm[:40], perm[40:]
    half, other = lab[:20], lab[20:]
    split_clf = bg.GaussianNB(method="conjugate", draws=20, chains=1).fit(Xb[half], yb[half])
    full_clf = bg.GaussianNB(method="conjugate", draws=20, chains=1).fit(Xb[lab], yb[lab])
    for name, sets in [
        ("split", split_clf.predict_set(Xb[test], confidence_level=level,
                                        X_calib=Xb[other], y_calib=yb[other])),
        ("no split (exact LOO)", full_clf.predict_set(Xb[test], confidence_level=level,
                                                       calibration="loo",
                                                       X_calib=Xb[lab], y_calib=yb[lab])),
    ]:
        rows.append({"scheme": name, "coverage": sets[np.arange(len(test)), yb[test]].mean(),
                     "set size": sets.sum(axis=1).mean()})
pd.DataFrame(rows).groupby("scheme").mean().round(3)"""),
    ("md", """\
`validation/conformal.py` compares these sets with MAPIE and crepes over 200 splits of
four data sets (`validation/results_conformal.md`).

## Abstaining: Chow's rule, a coverage target, the risk-coverage curve

Back to wine with the 9-row model and the full one. `predict(X, coverage=0.7)` answers
the 70 % most confident test rows and masks the others; `reject_cost=c` abstains where
the expected loss of the best decision exceeds c. The risk-coverage curve shows the
error of the answered rows for every threshold: a good ranking of rows by confidence
keeps it low until most rows are answered."""),
    ("code", """\
answered = few.predict(X_test, coverage=0.7)
print("answered", answered.count(), "of", len(y_test),
      "- accuracy on them", round(np.mean(answered.compressed() == y_test[~answered.mask]), 3),
      "- on all rows", round(few.score(X_test, y_test), 3))
chow = few.predict(X_test, reject_cost=0.1, reject_label=-1)
print("Chow's rule, cost 0.1: abstains on", int(np.sum(chow == -1)), "rows")
probas = {"9 labeled rows": few.predict_proba(X_test),
          f"{len(y_pool)} labeled rows": full.predict_proba(X_test)}
ax = bg.plots.risk_coverage(y_test, probas)"""),
    ("md", """\
The user guide page *Acting on uncertainty* lists every option (APS scores,
class-conditional coverage, loss matrices, batch selection)."""),
]
