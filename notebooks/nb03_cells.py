"""Cells of notebook 3, ``03_posterior_predictive_checks.ipynb``: ``(kind, source)``
pairs, ``kind`` in {"md", "code"} (see ``build.py``)."""

from nb_setup import SETUP

NB03 = [
    ("md", """\
# 3. Prior and posterior predictive checks, and LOO model comparison

A generative classifier is a model of the data, so it can be checked like one: simulate
data from it and compare with what was observed. This notebook

1. draws from the prior predictive (`sample_prior_predictive`) to see what the default
   prior implies before seeing data,
2. runs posterior predictive checks (`bg.ppc_pvalues`, `bg.plot_ppc`) for a
   well-specified model and for misspecified ones,
3. compares LDA, QDA and Gaussian naive Bayes by PSIS-LOO (`bg.compare`,
   `bg.plot_compare`).

All data are simulated, so we know which model is right."""),
    ("code", SETUP),
    ("md", """\
## Simulated data

Two classes, 150 rows each, two features. Within class 0 the features have correlation
+0.8, within class 1 correlation -0.5 and a larger spread: QDA (a full covariance per
class) is the true model; LDA (one shared covariance) and Gaussian naive Bayes
(independent features) are misspecified. A second data set adds a third feature that is
bimodal in class 1 (a mixture of two well separated normals)."""),
    ("code", """\
rng = np.random.default_rng(SEED)
n = 150
cov0 = np.array([[1.0, 0.8], [0.8, 1.0]])
cov1 = 2.0 * np.array([[1.0, -0.5], [-0.5, 1.0]])
X = np.vstack([rng.multivariate_normal([0.0, 0.0], cov0, n),
               rng.multivariate_normal([2.0, 1.0], cov1, n)])
y = np.repeat([0, 1], n)
bimodal = np.r_[rng.normal(0.0, 1.0, n), rng.choice([-3.0, 3.0], n) + rng.normal(0.0, 0.5, n)]
X_bi = np.column_stack([X, bimodal])
X.shape, X_bi.shape"""),
    ("md", """\
## Prior predictive

Every fit has a PyMC generative model (`build_model(X, y)`); `sample_prior_predictive`
forward-samples it: pi, the class parameters and then a data set of the observed size,
from the prior alone. A point fit keeps its parameters, not its rows, so it is given
them (`X=X, y=y`). The default prior is centred on the overall mean with the pooled within-class
variance as its prior scale, but is weak (`mean_strength=0.01`), so the class means it
generates spread far beyond the data. The table compares quantiles of feature x0
under the prior predictive with the observed ones."""),
    ("code", """\
qda_map = bg.QDA().fit(X, y)
prior_idata = qda_map.sample_prior_predictive(draws=200, random_state=SEED, X=X, y=y)
x_prior = prior_idata.prior_predictive["x"].sel(feature="x0").values.ravel()
qs = [0.01, 0.25, 0.5, 0.75, 0.99]
pd.DataFrame({"prior predictive": np.quantile(x_prior, qs),
              "observed": np.quantile(X[:, 0], qs)}, index=pd.Index(qs, name="quantile")).T"""),
    ("code", """\
fig, ax = plt.subplots(figsize=(7, 3.5))
lo, hi = np.quantile(x_prior, [0.005, 0.995])
ax.hist(x_prior, bins=np.linspace(lo, hi, 80), density=True, alpha=0.5,
        label="prior predictive x0")
ax.hist(X[:, 0], bins=30, density=True, alpha=0.7, label="observed x0")
ax.set(xlabel="x0", ylabel="density", title="Prior predictive vs observed (QDA default prior)")
ax.legend();"""),
    ("md", """\
## Posterior predictive checks

`bg.ppc_pvalues` replicates the training data once per posterior draw and compares, per
class and feature, test statistics (mean, sd, min, max, class frequency and, with
`correlation=True`, the pairwise correlations) of replicated and observed data. The
Bayesian p-value is P(T_rep > T_obs); a row is flagged when it is below 0.025 or above
0.975. With many statistics a few flags can occur by chance; a systematic misfit shows
as p-values at 0 or 1.

**Well-specified: QDA on the Gaussian data.**"""),
    ("code", """\
qda = bg.QDA(method="conjugate", draws=N_DRAWS, random_state=SEED).fit(X, y)
gnb = bg.GaussianNB(method="conjugate", draws=N_DRAWS, random_state=SEED).fit(X, y)
lda = bg.LDA(method="conjugate", draws=N_DRAWS, random_state=SEED).fit(X, y)
table_qda = bg.ppc_pvalues(qda, random_state=SEED)
print(f"QDA: {int(table_qda.flagged.sum())} of {len(table_qda)} statistics flagged")
table_qda"""),
    ("md", """\
**Misspecified: Gaussian naive Bayes on the same data.** Naive Bayes assumes the
features are independent within a class; the correlation statistics test exactly
that."""),
    ("code", """\
table_gnb = bg.ppc_pvalues(gnb, correlation=True, random_state=SEED)
print(f"GaussianNB: {int(table_gnb.flagged.sum())} of {len(table_gnb)} statistics flagged")
table_gnb[table_gnb.statistic.str.startswith("corr")]"""),
    ("md", """\
**Misspecified: QDA on the data with a bimodal feature.** A normal fitted to a bimodal
feature has a large variance; its replicated data reach further out than the observed
data, which the min and max statistics pick up."""),
    ("code", """\
qda_bi = bg.QDA(method="conjugate", draws=N_DRAWS, random_state=SEED).fit(X_bi, y)
table_bi = bg.ppc_pvalues(qda_bi, random_state=SEED)
print(f"QDA, bimodal feature: {int(table_bi.flagged.sum())} of {len(table_bi)} flagged")
table_bi[table_bi.flagged]"""),
    ("md", """\
`bg.plot_ppc` shows the same comparison as densities: the observed feature distribution
of each class (black) against 50 replicated data sets. For class 1 the bimodal x2 is
plotted against the unimodal replications."""),
    ("code", """\
axes = bg.plot_ppc(qda_bi, random_state=SEED)"""),
    ("md", """\
## LOO model comparison

`bg.compare` runs `az.compare` (PSIS-LOO) on the joint log-likelihood log p(x_n, y_n |
theta) of each model: the expected log predictive density of a held-out (x, y) pair.
Higher `elpd_loo` is better; `elpd_diff` and `dse` are the difference to the best model
and its standard error. `warning=True` means some Pareto k values are high, so
that model's LOO estimate is less reliable."""),
    ("code", """\
models = {"LDA": lda, "QDA": qda, "GaussianNB": gnb}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # ArviZ notes on the LOO scale
    table = bg.compare(models)
table"""),
    ("code", """\
fig, ax = plt.subplots(figsize=(7, 2.8))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    bg.plot_compare(models, ax=ax)"""),
    ("md", """\
## Choosing a model from the checks

- The **prior predictive** shows what the prior allows before any data: bayesgen's
  default prior is deliberately weak, so it covers the data with a wide margin. Choose
  stronger `mean_strength` / `cov_dof` only if such draws are implausible for the
  problem and data are scarce.
- **Posterior predictive checks** find *how* a model is wrong: flagged correlations
  point to the naive-Bayes independence assumption (use LDA or QDA), flagged min/max on
  one feature point to a non-normal feature (transform it, or model it with `KernelNB`
  or a `MixedNB` part). A check that passes says the statistic is reproduced, not that
  the model is right.
- **LOO** ranks models by predictive accuracy on the joint (x, y). It is only
  meaningful within models of the same data; compare `elpd_diff` with its standard
  error `dse` before preferring one model. Here the tables above show the ranking for
  the simulated data, where QDA is the true model.
- For classification alone, the held-out log loss of `predict_proba` (notebook 2) is
  the direct criterion; LOO on the joint also rewards modelling x well."""),
]
