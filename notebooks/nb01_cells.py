"""Cells of notebook 1, ``01_fit_with_uncertainty.ipynb``: ``(kind, source)`` pairs,
``kind`` in {"md", "code"} (see ``build.py``)."""

from nb_setup import SETUP

NB01 = [
    ("md", """\
# 1. Fitting with uncertainty

The posterior methods of bayesgen (`method="conjugate"`: exact i.i.d. draws from the
closed-form posterior; `method="mcmc"`: PyMC NUTS) give, besides a prediction, the
uncertainty of the class probabilities. This notebook

1. fits QDA, LDA and Gaussian naive Bayes to the breast cancer data with the conjugate
   posterior,
2. samples one model with MCMC and checks its diagnostics (R-hat, ESS, trace plots),
3. shows credible intervals of the class probabilities for a few hard test points,
4. draws decision regions with their uncertainty on two iris features,
5. makes decisions under an asymmetric loss (missing a malignant tumour costs 10 times a
   false alarm)."""),
    ("code", SETUP + """
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.metrics import accuracy_score, confusion_matrix, log_loss
from sklearn.model_selection import train_test_split"""),
    ("md", """\
## Breast cancer: three generative classifiers with their posterior

569 tumours, 30 features, classes `0` = malignant and `1` = benign. A stratified 70/30
split; every model draws `chains x draws` exact samples from its conjugate posterior, and
`predict_proba` is the posterior predictive p(y | x, data)."""),
    ("code", """\
data = load_breast_cancer()
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.3, stratify=data.target, random_state=SEED)
models = {
    name: cls(method="conjugate", draws=N_DRAWS, random_state=SEED).fit(X_train, y_train)
    for name, cls in [("QDA", bg.QDA), ("LDA", bg.LDA), ("GaussianNB", bg.GaussianNB)]
}
pd.DataFrame({
    name: {"accuracy": accuracy_score(y_test, m.predict(X_test)),
           "log loss": log_loss(y_test, m.predict_proba(X_test))}
    for name, m in models.items()
}).T"""),
    ("md", """\
## MCMC and its diagnostics

`method="mcmc"` samples the same generative model with NUTS (numpyro when installed).
The first fit in a process compiles the model with JAX, which takes several seconds. We
sample QDA on the four iris features, where the exact conjugate posterior is available
to check the sampler against. After sampling, bayesgen checks R-hat <= 1.01, bulk and
tail ESS >= 400 and divergences, and warns if they fail (with few draws, as in a quick
run, the ESS check can warn)."""),
    ("code", """\
iris = load_iris()
X_iris, y_iris = iris.data, iris.target
nuts = bg.QDA(method="mcmc", draws=N_DRAWS, tune=N_TUNE, progressbar=False,
              random_state=SEED).fit(X_iris, y_iris)
exact = bg.QDA(method="conjugate", draws=N_DRAWS, random_state=SEED).fit(X_iris, y_iris)
summ = nuts.summary()
print(f"max R-hat {summ['r_hat'].max():.3f}, min bulk ESS {summ['ess_bulk'].min():.0f}, "
      f"min tail ESS {summ['ess_tail'].min():.0f}, "
      f"divergences {int(nuts.idata_.sample_stats['diverging'].sum())}")
summ.head(8)"""),
    ("md", """\
The NUTS posterior should agree with the exact conjugate one up to Monte Carlo error.
Posterior means and standard deviations of the class means `mu` from both:"""),
    ("code", """\
mu_nuts = nuts.idata_.posterior["mu"]
mu_exact = exact.idata_.posterior["mu"]
pd.DataFrame({
    "mean (NUTS)": mu_nuts.mean(("chain", "draw")).values.ravel(),
    "mean (exact)": mu_exact.mean(("chain", "draw")).values.ravel(),
    "sd (NUTS)": mu_nuts.std(("chain", "draw")).values.ravel(),
    "sd (exact)": mu_exact.std(("chain", "draw")).values.ravel(),
}, index=pd.MultiIndex.from_product(
    [nuts.classes_, [f"x{j}" for j in range(4)]], names=["class", "feature"])).head(8)"""),
    ("md", """\
Trace plots (`bg.plots.trace`, i.e. `az.plot_trace`) of the class proportions and the
class means: overlapping chains with no trend are what a converged sampler looks like."""),
    ("code", """\
axes = bg.plots.trace(nuts, var_names=["pi", "mu"], compact=True)"""),
    ("md", """\
## Credible intervals for hard points

For the four test tumours with the least confident QDA posterior predictive (the
probability of the predicted class closest to 0.5), `predict_proba_interval`
gives the 94% HDI of p(y = k | x, theta) over the posterior draws, and
`probability_forest` draws it. The posterior predictive (the first column) is a single
number; the interval shows how much the class probability moves with the parameters."""),
    ("code", """\
qda = models["QDA"]
p_test = qda.predict_proba(X_test)
hard = np.argsort(np.abs(p_test[:, 1] - 0.5))[:4]
hdi = qda.predict_proba_interval(X_test[hard])
pd.DataFrame({
    "true class": y_test[hard],
    "p(malignant)": p_test[hard, 0],
    "94% HDI lower": hdi.sel({"class": 0, "hdi": "lower"}).values,
    "94% HDI upper": hdi.sel({"class": 0, "hdi": "higher"}).values,
})"""),
    ("code", """\
fig, ax = plt.subplots(figsize=(7, 4))
bg.plots.probability_forest(qda, X_test[hard], ax=ax);"""),
    ("md", """\
## Decision regions with uncertainty

On two iris features (sepal length and width), where the classes versicolor and
virginica overlap: the colours are the predicted classes of the conjugate QDA posterior,
the grey shading the width of the 94% HDI of the probability of the predicted class
(darker = more uncertain), and the lines the MLE and MAP boundaries."""),
    ("code", """\
X2 = X_iris[:, :2]
post2 = bg.QDA(method="conjugate", draws=N_DRAWS, random_state=SEED).fit(X2, y_iris)
fig, ax = plt.subplots(figsize=(8, 6))
bg.plots.decision_regions(
    post2, X2, y_iris, resolution=120, ax=ax,
    compare={"MLE": bg.QDA(method="mle").fit(X2, y_iris),
             "MAP": bg.QDA(method="map").fit(X2, y_iris)})
ax.set(xlabel=iris.feature_names[0], ylabel=iris.feature_names[1]);"""),
    ("md", """\
## Decisions under an asymmetric loss

Predicting the most probable class minimises the error rate, i.e. it assumes every
mistake costs the same. Here a missed malignant tumour (truth 0, predicted 1) costs 10
and a false alarm (truth 1, predicted 0) costs 1. `loss[i, j]` is the cost of predicting
class j when the truth is class i; with `loss=` set, `predict` returns the class of
minimum posterior expected loss, which for this matrix means predicting malignant
whenever p(malignant | x) > 1/11."""),
    ("code", """\
loss = np.array([[0.0, 10.0],   # truth malignant: predicting benign costs 10
                 [1.0, 0.0]])   # truth benign: predicting malignant costs 1
plain = models["LDA"]
costly = bg.LDA(method="conjugate", draws=N_DRAWS, random_state=SEED,
                loss=loss).fit(X_train, y_train)
rows = {}
for name, model in [("argmax (threshold 0.5)", plain), ("minimum expected loss", costly)]:
    pred = model.predict(X_test)
    cm = confusion_matrix(y_test, pred, labels=[0, 1])
    rows[name] = {"missed malignant": cm[0, 1], "false alarms": cm[1, 0],
                  "accuracy": accuracy_score(y_test, pred),
                  "total cost": (cm * loss).sum()}
p_malignant = costly.predict_proba(X_test)[:, 0]
assert np.array_equal(costly.predict(X_test), np.where(p_malignant > 1 / 11, 0, 1))
pd.DataFrame(rows).T.astype({"missed malignant": int, "false alarms": int})"""),
    ("md", """\
The table counts, on the 171 test tumours, the missed malignant cases and the false
alarms of both rules, and their total cost under the loss matrix. The assertion checks
that the loss-based decision is the threshold rule p(malignant | x) > 1/11. Which rule is
preferable is decided by the costs, not by accuracy: the minimum-expected-loss rule
trades false alarms for fewer missed malignant cases."""),
]

