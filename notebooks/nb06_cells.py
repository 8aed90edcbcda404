"""Cells of notebook 6, ``06_mixture_da.ipynb``: ``(kind, source)`` pairs,
``kind`` in {"md", "code"} (see ``build.py``)."""

from nb_setup import SETUP

NB06 = [
    ("md", """\
# 6. Classes made of several groups: `MixtureDA`

QDA gives each class one Gaussian. When a class is several groups (styles,
speakers, production lines), one Gaussian cannot follow it. `bg.MixtureDA` gives each
class a Gaussian mixture, with QDA's conjugate prior on every component, the number of
components per class chosen by BIC (as R's `MclustDA`), and a posterior by data
augmentation (`method="gibbs"`).

1. **when a mixture helps**: interleaved blobs, QDA against MixtureDA;
2. **how many components**: the BIC of every candidate;
3. **the uncertainty it adds**: the EM mode's plug-in rule (the default), its
   posterior predictive (`predictive="posterior"`) and the posterior predictive of the
   Gibbs sampler."""),
    ("code", SETUP),
    ("md", """\
## 1. When a mixture helps

Two classes, each three blobs alternating along a line."""),
    ("code", """\
from sklearn.metrics import log_loss

def interleaved(n, seed, spread=0.5):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal([c, 0.0], spread, size=(n, 2)) for c in (0, 2, 4, 6, 8, 10)])
    y = np.repeat([0, 1, 0, 1, 0, 1], n)
    return X, y

X, y = interleaved(60, SEED)
X_test, y_test = interleaved(300, SEED + 1)
qda = bg.QDA().fit(X, y)
mix = bg.MixtureDA(random_state=SEED).fit(X, y)
pd.DataFrame({
    "accuracy": [qda.score(X_test, y_test), mix.score(X_test, y_test)],
    "log loss": [log_loss(y_test, qda.predict_proba(X_test)),
                 log_loss(y_test, mix.predict_proba(X_test))],
}, index=["QDA", "MixtureDA"])"""),
    ("code", """\
fig, ax = plt.subplots(figsize=(8, 2.5))
for k, colour in zip(mix.classes_, ["C0", "C1"]):
    ax.scatter(*X[y == k].T, s=8, color=colour, alpha=0.5, label=f"class {k}")
    ax.scatter(*mix.means_[k, : mix.n_components_[k]].T, marker="x", s=120, color=colour)
ax.set_title("training rows and the fitted component means (x)")
ax.legend(loc="upper right");"""),
    ("md", """\
## 2. How many components

`n_components="auto"` fits 1..5 components per class by EM and BIC proposes the
number with the largest value (`bic_`, one row per class). When it proposes more than
one somewhere, 5-fold cross-validated log loss of the labels checks it: a class keeps
its components only if going back to one would cost more than a standard error
(`cv_log_loss_`: with BIC's numbers, with the numbers kept). On classes that are one
Gaussian it keeps one component, and `MixtureDA` is then QDA exactly: its default
plug-in rule is `bg.QDA()`'s (and `predictive="posterior"` is QDA's closed-form
posterior predictive, `method="conjugate"`)."""),
    ("code", """\
print("cross-validated log loss per row (BIC's choice, kept):", mix.cv_log_loss_.round(3))
pd.DataFrame(mix.bic_, index=[f"class {k}" for k in mix.classes_],
             columns=[f"M={m}" for m in range(1, mix.bic_.shape[1] + 1)]).round(1)"""),
    ("code", """\
rng = np.random.default_rng(SEED)
Xg = np.vstack([rng.normal(0, 1, (150, 3)), rng.normal(1.5, 1.5, (150, 3))])
yg = np.repeat([0, 1], 150)
one = bg.MixtureDA(random_state=SEED).fit(Xg, yg)
print("components per class:", one.n_components_)
print("max |MixtureDA - QDA| in predict_proba:",
      np.abs(one.predict_proba(Xg) - bg.QDA().fit(Xg, yg).predict_proba(Xg)).max())"""),
    ("md", """\
## 3. The uncertainty it adds

With few, overlapping rows the components are uncertain. The default `method="map"`
plugs the mode in; with `predictive="posterior"` it integrates each component's
parameters out given the EM responsibilities (each component's conjugate posterior of
its share of the rows, a Student-t predictive). `method="gibbs"` draws the
posterior (component labels, then each component from its conjugate posterior);
`predict_proba` is then the posterior predictive, and `predict_proba_interval` gives a
credible interval of each class probability. Rows between blobs get wide intervals."""),
    ("code", """\
Xs, ys = interleaved(12, SEED, spread=0.8)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", bg.ConvergenceWarning)  # short chains in CI
    gibbs = bg.MixtureDA(n_components=3, method="gibbs", draws=N_DRAWS, tune=N_TUNE,
                         chains=2, random_state=SEED).fit(Xs, ys)
point = bg.MixtureDA(n_components=3, predictive="posterior", random_state=SEED).fit(Xs, ys)
plugin = bg.MixtureDA(n_components=3, random_state=SEED).fit(Xs, ys)
grid = np.c_[np.linspace(-1, 11, 7), np.zeros(7)]
hdi = gibbs.predict_proba_interval(grid, hdi_prob=0.9).sel({"class": 1})
pd.DataFrame({"x": grid[:, 0], "plug-in p(1|x)": plugin.predict_proba(grid)[:, 1],
              "MAP predictive p(1|x)": point.predict_proba(grid)[:, 1],
              "posterior p(1|x)": gibbs.predict_proba(grid)[:, 1],
              "90% lower": hdi.sel(hdi="lower").values,
              "90% upper": hdi.sel(hdi="higher").values}).round(3)"""),
    ("code", """\
pd.Series({"MAP plug-in (default)": log_loss(y_test, plugin.predict_proba(X_test)),
           "MAP predictive": log_loss(y_test, point.predict_proba(X_test)),
           "posterior predictive (gibbs)": log_loss(y_test, gibbs.predict_proba(X_test))},
          name="held-out log loss").round(3)"""),
    ("md", """\
With 12 rows per blob the three are close on held-out log loss (the plug-in a little
lower here, the two predictives together); the sampler also says how unsure each
probability is. The component prior matters here:
under mclust's weaker prior (`component_prior="mclust"`: nu0 = d + 2, nearly flat
means) the sampler lets a component widen over two blobs of its class while another
drifts, and the posterior predictive of this data set was much worse than the mode
(held-out log loss 0.47 against 0.19 when this notebook was written); the default
`component_prior="evidence"` resolves the components' prior from the components EM
found, which keeps the posterior on them. Check `az.loo` and its Pareto k on small
classes."""),
    ("code", """\
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Pareto k notes of the short chains
    print(az.loo(gibbs.idata_))"""),
    ("md", """\
## 4. The same posterior by NUTS: `method="mcmc"`

`method="mcmc"` samples the same model with NUTS on its PyMC form, the component labels
summed out of the likelihood (`pm.Mixture`), from the EM mode. The PyMC model is
`model_`; `idata_` also holds NUTS's statistics (divergences). Both samplers target the
same posterior, so their predictive probabilities and LOO agree within Monte Carlo
error."""),
    ("code", """\
with warnings.catch_warnings():
    warnings.simplefilter("ignore", bg.ConvergenceWarning)  # short chains in CI
    nuts = bg.MixtureDA(n_components=3, method="mcmc", draws=N_DRAWS, tune=N_TUNE,
                        chains=2, progressbar=False, random_state=SEED).fit(Xs, ys)
print(sorted(rv.name for rv in nuts.model_.free_RVs))
print("divergences:", int(nuts.idata_.sample_stats["diverging"].sum()))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Pareto k notes of the short chains
    table = bg.compare({"gibbs": gibbs, "mcmc": nuts})
table[["elpd_loo", "se", "p_loo"]].round(2)"""),
    ("code", """\
pd.Series({"gibbs": log_loss(y_test, gibbs.predict_proba(X_test)),
           "mcmc": log_loss(y_test, nuts.predict_proba(X_test)),
           "max |gibbs - mcmc| p(y|x)":
               np.abs(gibbs.predict_proba(X_test) - nuts.predict_proba(X_test)).max()},
          name="held-out").round(3)"""),
    ("md", """\
## 5. In a stack

`bg.StackedClassifier` takes a `MixtureDA` member next to conjugate ones. The stack
weighs members by leave-one-out class probabilities; the conjugate members' are exact,
a mixture's are estimated, and `loo_kind_` says how: 10-fold cross-validated refits
for `method="map"` (slightly pessimistic: each refit saw 90% of the rows),
PSIS-LOO from the draws for `"gibbs"` and `"mcmc"` (`pareto_k_` holds each row's
Pareto k)."""),
    ("code", """\
members = [("lda", bg.LDA(method="conjugate")), ("qda", bg.QDA(method="conjugate")),
           ("mixture", bg.MixtureDA(random_state=SEED))]
stack = bg.StackedClassifier(members).fit(X, y)
print(stack.loo_kind_)
print("held-out log loss of the stack:", round(log_loss(y_test, stack.predict_proba(X_test)), 3))
stack.loo_.round(3)"""),
    ("md", """\
## 6. Binary and count data: Bernoulli and Poisson components

`component="bernoulli"` (or `"poisson"`) makes every component a product of independent
binary (count) features with BernoulliNB's (PoissonNB's) conjugate prior; with
`n_components=1` it is `bg.BernoulliNB()` (`bg.PoissonNB()`). The features are independent
given the component, not given the class, so a mixture follows classes that come in
several styles. Below, class 0 has two styles (features 0-2 on, or 3-5 on) and class 1
the same feature frequencies without them: naive Bayes sees identical marginals and
guesses; the mixture finds the styles."""),
    ("code", """\
def two_styles(n, seed):
    rng = np.random.default_rng(seed)
    styles = np.array([[0.9, 0.9, 0.9, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.9, 0.9, 0.9]])
    X0 = rng.uniform(size=(n, 6)) < styles[rng.integers(0, 2, n)]
    X1 = rng.uniform(size=(n, 6)) < 0.5
    return np.vstack([X0, X1]).astype(float), np.repeat([0, 1], n)

Xb, yb = two_styles(200, SEED)
Xb_test, yb_test = two_styles(1000, SEED + 1)
nb = bg.BernoulliNB().fit(Xb, yb)
bern = bg.MixtureDA(component="bernoulli", random_state=SEED).fit(Xb, yb)
print("components per class:", bern.n_components_)
print(pd.DataFrame(bern.means_[0], index=["component 0", "component 1"]).round(2))
pd.DataFrame({"accuracy": [nb.score(Xb_test, yb_test), bern.score(Xb_test, yb_test)],
              "log loss": [log_loss(yb_test, nb.predict_proba(Xb_test)),
                           log_loss(yb_test, bern.predict_proba(Xb_test))]},
             index=["BernoulliNB", "MixtureDA bernoulli"]).round(3)"""),
    ("md", """\
The predictive and LOO do not depend on the order of the components (label switching);
parameter summaries do, so each draw is relabeled to the order of the EM mode before
`weights_`, `means_` and `summary()` are computed. See the guide page *Classes made of
several groups* and `benchmarks/results_mixture.md` for the comparison with R's
`MclustDA`."""),
]
