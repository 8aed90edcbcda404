"""Cells of notebook 4, ``04_priors_by_the_evidence.ipynb``: ``(kind, source)`` pairs,
``kind`` in {"md", "code"} (see ``build.py``)."""

from nb_setup import SETUP

NB04 = [
    ("md", """\
# 4. Priors chosen by the evidence

LDA's and QDA's Normal-Inverse-Wishart prior has three knobs besides its target S0 (the
pooled within-class variances): the strength `cov_dof` (nu0), the scale `cov_scale` of
the prior mean s S0, and the shrinkage `mean_strength` (kappa0) of the class means. Each
can be `"auto"`: type-II maximum likelihood of the exact marginal likelihood p(X | y),
computed from the sufficient statistics. The strength can also come from the Oracle
Approximating Shrinkage intensity (`cov_dof="oas"`, LDA's default), and QDA's class
covariances can be pooled towards LDA's (`cov_target="pooled"`). This notebook

1. shows what the search records (`prior_search_`: candidates and covariance
   structures with their evidence),
2. compares MLE, MAP and the posterior predictive under each prior on few rows,
3. puts the held-out log loss next to scikit-learn's Ledoit-Wolf shrinkage LDA over
   repeated splits, where the evidence and held-out log loss agree and where not."""),
    ("code", SETUP + """
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics import log_loss


def split(y, n_per_class, rng):
    train = np.concatenate([rng.choice(np.flatnonzero(y == k), n_per_class, replace=False)
                            for k in np.unique(y)])
    return train, np.setdiff1d(np.arange(y.size), train)"""),
    ("md", """\
## What the search records

Wine (13 features, 3 classes) with 8 rows per class. Each candidate prior is at its own
optimum; differences of `log_evidence` are log Bayes factors."""),
    ("code", """\
X, y = load_wine(return_X_y=True)
train, test = split(y, 8, np.random.default_rng(SEED))
qda = bg.QDA(cov_scale="auto", mean_strength="auto").fit(X[train], y[train])
pd.DataFrame(qda.prior_search_["candidates"])"""),
    ("md", """\
The `structures` entry scores mclust's covariance structures on the same rows:
spherical (EII, VII), diagonal (EEI, VVI: naive Bayes) and full (EEE: LDA, VVV: QDA),
shared (E) or per class (V)."""),
    ("code", """\
pd.DataFrame(qda.prior_search_["structures"]).set_index("structure")"""),
    ("md", """\
## Each covariance structure: MLE, MAP, posterior predictive and evidence

`cov_structure` fits any of them: `"full"` (the default), `"diag"` and `"spherical"`
(LDA: EEE, EEI, EII; QDA: VVV, VVI, VII), `"auto"` (the structure of largest evidence)
and `"average"` (Bayesian model averaging of the three by their posterior
probabilities). Held-out log loss of each method, and the exact log evidence
log p(X | y) of the structure's prior (the MLE has none); the MLE of a full covariance
needs more rows per class than features:"""),
    ("code", """\
rows = []
for estimator in (bg.LDA, bg.QDA):
    for structure in ("spherical", "diag", "full", "auto", "average"):
        row = {"model": estimator.__name__, "cov_structure": structure}
        for method in ("mle", "map", "conjugate"):
            try:
                clf = estimator(cov_structure=structure, method=method, draws=N_DRAWS,
                                chains=2, random_state=SEED).fit(X[train], y[train])
                row[method] = log_loss(y[test], clf.predict_proba(X[test]))
            except ValueError:
                row[method] = np.nan  # a full covariance's MLE with 8 rows in 13 dims
            if method == "map":
                row["structure"] = clf.prior_search_["structure"]
                row["log evidence"] = clf.log_marginal_likelihood()
        rows.append(row)
pd.DataFrame(rows).set_index(["model", "cov_structure"]).round(3)"""),
    ("md", """\
On these 24 rows the evidence prefers the full covariances (EEE for LDA, VVV for QDA)
by Bayes factors of about e^4 (LDA) and e^10 (QDA) over the next structure, so
`"auto"` and `"average"` fit the full structure, and the average gives the others
weights below 1e-3 (its log evidence is the average's, log of the mean of the three
evidences). Under `method="mle"`, which has no prior, `"auto"` scores by BIC and picks
a diagonal or spherical structure. The MLE of the diagonal and spherical structures
exists with 8 rows per class; the posterior predictive beats the MAP plug-in under
every structure, and the MLE everywhere but QDA's spherical structure."""),
    ("md", """\
## MLE, MAP and the posterior predictive under each prior

QDA's MLE needs more rows per class than features; the MAP and the posterior
predictive do not. Held-out log loss on the rest of wine:"""),
    ("code", """\
priors = {"default (cov_dof=auto)": {}, "cov_scale=auto": {"cov_scale": "auto"},
          "mean_strength=auto": {"mean_strength": "auto"},
          "cov_dof=oas": {"cov_dof": "oas"}, "cov_target=pooled": {"cov_target": "pooled"}}
rows = []
for name, kwargs in priors.items():
    for method in ("mle", "map", "conjugate"):
        try:
            clf = bg.QDA(method=method, draws=N_DRAWS, chains=2, random_state=SEED,
                         **kwargs).fit(X[train], y[train])
            loss = log_loss(y[test], clf.predict_proba(X[test]))
        except ValueError:
            loss = np.nan  # the MLE with 8 rows per class in 13 dimensions
        rows.append({"prior": name, "method": method, "log loss": loss})
pd.DataFrame(rows).pivot(index="prior", columns="method", values="log loss")"""),
    ("md", """\
## Against Ledoit-Wolf shrinkage LDA, over repeated splits

LDA's posterior predictive under its default (`cov_dof="oas"`), under the evidence's
choices, and scikit-learn's
`LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")`, mean held-out log loss
over 5 random splits (the full study, with more data sets and splits, is
`validation/prior_study.py`)."""),
    ("code", """\
cases = {"wine": (load_wine, 10), "breast cancer": (load_breast_cancer, 20),
         "digits": (load_digits, 20)}
lda_priors = {"default (oas)": {}, "cov_dof=auto": {"cov_dof": "auto"},
              "cov_scale=auto": {"cov_dof": "auto", "cov_scale": "auto"},
              "mean_strength=auto": {"cov_dof": "auto", "mean_strength": "auto"}}
rows = []
for data, (load, n) in cases.items():
    X, y = load(return_X_y=True)
    rng = np.random.default_rng(SEED)
    for rep in range(5):
        train, test = split(y, n, rng)
        models = {f"bg LDA {name}": bg.LDA(method="conjugate", draws=50, chains=1,
                                           random_state=rep, **kwargs)
                  for name, kwargs in lda_priors.items()}
        models["sk LDA shrinkage"] = LinearDiscriminantAnalysis(solver="lsqr",
                                                                shrinkage="auto")
        for name, clf in models.items():
            proba = clf.fit(X[train], y[train]).predict_proba(X[test])
            rows.append({"data": f"{data} ({n}/class)", "model": name,
                         "log loss": log_loss(y[test], proba, labels=np.unique(y))})
results = pd.DataFrame(rows)
summary = results.groupby(["data", "model"])["log loss"].agg(["mean", "std"]).unstack("model")
fig, ax = plt.subplots(figsize=(9, 3.6), layout="constrained")
models = list(summary["mean"].columns)
width = 0.8 / len(models)
for j, model in enumerate(models):
    ax.bar(np.arange(len(summary)) + (j - (len(models) - 1) / 2) * width,
           summary["mean"][model], width, yerr=summary["std"][model], capsize=3, label=model,
           hatch="//" if model.startswith("sk") else None)
ax.set(xticks=np.arange(len(summary)), xticklabels=summary.index, yscale="log",
       ylabel="held-out log loss (log scale)",
       title="LDA's posterior predictive under each prior against Ledoit-Wolf LDA: "
             "mean and sd over 5 splits")
ax.legend(fontsize="small")
plt.show()
summary["mean"]"""),
    ("md", """\
Reading the table:

- LDA's default, the OAS strength, is at or below Ledoit-Wolf's plug-in on these data:
  the same kind of shrinkage intensity, with the Student-t posterior predictive on top.
- `cov_dof="auto"` and `cov_scale="auto"`: on strongly collinear features (breast
  cancer, digits) the evidence prefers a weak covariance prior whatever the target's
  scale, while held-out log loss prefers far stronger shrinkage.
- `mean_strength="auto"` pulls the class means towards the overall mean. Where the
  classes are many and their means noisy (digits, 64 features, 10 classes) the evidence
  and held-out log loss agree; on breast cancer the evidence of p(X | y) can prefer
  equal class means, which makes the classifier useless.

The evidence scores the fit of p(x | y); a classifier is judged on p(y | x). Where they
disagree, compare priors by held-out log loss (for conjugate fits `bg.compare` gives
exact leave-one-out). The evidence is the better guide when the features really are
strongly correlated Gaussians (`validation/results_priors.md`), which is why QDA keeps
`cov_dof="auto"` and LDA's default is `cov_dof="oas"`."""),
    ("md", """\
## Stacking: LDA and QDA weighted by exact leave-one-out

`bg.StackedClassifier()` fits LDA, QDA, QDA with the isotropic target and QDA with
spherical class covariances (all `method="conjugate"`) and averages their class
probabilities with the weights that maximise the exact leave-one-out log score of the
training labels, sum_n log sum_m a_m p_m(y_n | x_n, D without row n), under a weak
Dirichlet prior on the weights. The leave-one-out probabilities come from the
conjugate downdate of each row: no refit. Same splits as above, against LDA's and QDA's
defaults and Ledoit-Wolf LDA:"""),
    ("code", """\
rows, weights = [], []
draws = {"draws": max(N_DRAWS // 4, 10), "chains": 1}  # the predictive is closed form
for data, (load, n) in cases.items():
    X, y = load(return_X_y=True)
    rng = np.random.default_rng(SEED)
    for rep in range(5):
        train, test = split(y, n, rng)
        models = {"bg stacked": bg.StackedClassifier(),
                  "bg LDA default": bg.LDA(method="conjugate", **draws),
                  "bg QDA default": bg.QDA(method="conjugate", **draws),
                  "sk LDA shrinkage": LinearDiscriminantAnalysis(solver="lsqr",
                                                                 shrinkage="auto")}
        for name, clf in models.items():
            proba = clf.fit(X[train], y[train]).predict_proba(X[test])
            rows.append({"data": f"{data} ({n}/class)", "model": name,
                         "log loss": log_loss(y[test], proba, labels=np.unique(y))})
        stack = models["bg stacked"]
        weights.append(pd.Series(stack.weights_, index=stack.loo_.index,
                                 name=f"{data} ({n}/class)"))
stacked = pd.DataFrame(rows).groupby(["data", "model"])["log loss"].agg(["mean", "std"])
display(stacked["mean"].unstack("model").round(3))
pd.DataFrame(weights).groupby(level=0).mean().round(2)  # mean weights over the splits"""),
    ("md", """\
The stack is at or below every single model here, and on digits far below: LDA and
the isotropic QDA make their confident mistakes on different images, and the mixture
hedges both. The weights show which covariance model the leave-one-out predictive
prefers on each data set. The validation study (`validation/results_priors.md`) has
the same comparison on 17 cells against the best of scikit-learn's generative
classifiers, and `validation/results_stacking_holdout2.md` on data sets the study
never used."""),
]
