"""Cells of notebook 2, ``02_mle_vs_map_priors.ipynb``: ``(kind, source)`` pairs,
``kind`` in {"md", "code"} (see ``build.py``)."""

from nb_setup import SETUP

NB02 = [
    ("md", """\
# 2. MLE vs MAP: what the priors fix

The maximum-likelihood (MLE) fit of a generative classifier breaks where data are thin:
a word never seen in a class gets probability exactly 0, and QDA's covariance is
singular when a class has no more rows than features. bayesgen's default
`method="map"` is the posterior mode under a weakly informative conjugate prior, and
`method="conjugate"` averages over the whole posterior. This notebook shows

1. Dirichlet (Laplace) smoothing of word probabilities and of the class prior on
   simulated word counts with rare words,
2. the Normal-Inverse-Wishart prior of QDA with fewer rows per class than features,
3. a small cross-validated comparison of MLE, MAP and the conjugate posterior across
   prior strengths and training sizes."""),
    ("code", SETUP + """
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split"""),
    ("md", """\
## Word counts with rare words

Simulated "documents" of about 15 words from a 60-word vocabulary, 3 topics, a vocabulary in which
the last 20 words are rare (expected count per document below 0.05). The training set
has 30 documents per topic, the test set 200 per topic."""),
    ("code", """\
rng = np.random.default_rng(SEED)
n_words, n_topics = 60, 3
weights = rng.gamma(0.7, size=(1, n_words)) * rng.gamma(4.0, 0.25, size=(n_topics, n_words))
weights[:, 40:] *= 0.02  # rare words
theta = weights / weights.sum(axis=1, keepdims=True)

def documents(n_per_topic):
    y = np.repeat(np.arange(n_topics), n_per_topic)
    lengths = rng.poisson(12, size=y.size) + 3
    X = np.stack([rng.multinomial(m, theta[k]) for m, k in zip(lengths, y)]).astype(float)
    return X, y

X_train, y_train = documents(30)
X_test, y_test = documents(200)
zero = (bg.MultinomialNB(method="mle").fit(X_train, y_train).feature_count_ == 0)
print(f"(topic, word) pairs never seen in training: {zero.sum()} of {zero.size}")"""),
    ("md", """\
Under the MLE, a word never seen in topic k has theta_kw = 0, so any test document
containing it gets p(y = k | x) = 0, however strongly the other words point to k; if no
topic has seen it, bayesgen falls back to the class prior and warns. The MAP with
`alpha=2` (Laplace smoothing) and the conjugate posterior (Dirichlet posterior
predictive) give such words a small positive probability."""),
    ("code", """\
fits = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", bg.DataWarning)
    fits["MLE (alpha=1)"] = bg.MultinomialNB(method="mle").fit(X_train, y_train)
    p_mle = fits["MLE (alpha=1)"].predict_proba(X_test)
for w in caught:
    print(f"{w.category.__name__}:", str(w.message)[:160], "...")
fits["MAP (alpha=2)"] = bg.MultinomialNB(method="map", alpha=2.0).fit(X_train, y_train)
fits["conjugate (alpha=2)"] = bg.MultinomialNB(
    method="conjugate", alpha=2.0, draws=N_DRAWS, random_state=SEED).fit(X_train, y_train)
probas = {"MLE (alpha=1)": p_mle}
probas.update({n: m.predict_proba(X_test) for n, m in fits.items() if n not in probas})
pd.DataFrame({
    name: {"accuracy": accuracy_score(y_test, p.argmax(axis=1)),
           "test rows with p(true class) = 0": int((p[np.arange(len(y_test)), y_test] == 0).sum()),
           "log loss": log_loss(y_test, p, labels=[0, 1, 2])}
    for name, p in probas.items()
}).T.astype({"test rows with p(true class) = 0": int})"""),
    ("md", """\
scikit-learn's `log_loss` clips probabilities away from 0, so the MLE's log loss above
is finite only because of the clipping; its exact value is infinite whenever a test row
gets probability 0 for its true class. The shrinkage plot compares the fitted word
probabilities: the MAP and posterior-mean estimates are pulled away from the MLE, most
visibly for the words with zero or small counts."""),
    ("code", """\
fig, ax = plt.subplots(figsize=(5.5, 5.5))
bg.plots.shrinkage(fits, ax=ax);"""),
    ("md", """\
### The class prior

The class proportions have the same Dirichlet rule: with `class_alpha=a`, the MAP is
(N_k + a - 1) / (N + K(a - 1)). With one topic seen only twice, `class_alpha=1` (the
MLE) and `class_alpha=2` (Laplace) give:"""),
    ("code", """\
few = np.r_[np.flatnonzero(y_train == 0), np.flatnonzero(y_train == 1),
            np.flatnonzero(y_train == 2)[:2]]
pd.DataFrame({
    f"class_alpha={a}": bg.MultinomialNB(class_alpha=a).fit(
        X_train[few], y_train[few]).class_prior_
    for a in (1.0, 2.0, 5.0)
}, index=pd.Index([0, 1, 2], name="topic")).T"""),
    ("md", """\
## QDA with fewer rows per class than features

The breast cancer data have 30 features. With 20 training rows per class, every class
covariance matrix of the MLE is singular and `method="mle"` refuses to fit. The MAP
under the Normal-Inverse-Wishart prior exists for any sample size. Its strength is set
by `mean_strength` (kappa0, prior pseudo-rows for the class means, default 0.01) and
`cov_dof` (nu0, degrees of freedom of the inverse-Wishart: the larger, the more the
covariances are pulled towards the diagonal prior scale). Its default `"auto"` is the
empirical-Bayes nu0 that maximises the marginal likelihood of the training data;
`cov_dof=None` is the fixed d + 2 = 32 (mclust's default)."""),
    ("code", """\
bc = load_breast_cancer()
Xb_train, Xb_test, yb_train, yb_test = train_test_split(
    bc.data, bc.target, test_size=0.4, stratify=bc.target, random_state=SEED)
small = np.r_[np.flatnonzero(yb_train == 0)[:20], np.flatnonzero(yb_train == 1)[:20]]
try:
    bg.QDA(method="mle").fit(Xb_train[small], yb_train[small])
except ValueError as err:
    print("MLE:", str(err)[:200])

d = bc.data.shape[1]
nu0_grid = ("auto", d + 2, 2 * d, 4 * d)  # columns in this order: "auto", then increasing
rows = []
for kappa0 in (0.01, 1.0, 10.0):
    for nu0 in nu0_grid:
        m = bg.QDA(method="map", mean_strength=kappa0, cov_dof=nu0).fit(
            Xb_train[small], yb_train[small])
        p = m.predict_proba(Xb_test)
        if nu0 == "auto":
            print(f"mean_strength={kappa0}: cov_dof='auto' chose nu0 = {m._prior['nu0']:.1f}")
        rows.append({"mean_strength": kappa0, "cov_dof": str(nu0),
                     "accuracy": accuracy_score(yb_test, p.argmax(axis=1)),
                     "log loss": log_loss(yb_test, p)})
(pd.DataFrame(rows).pivot(index="mean_strength", columns="cov_dof", values="log loss")
 [[str(nu0) for nu0 in nu0_grid]])"""),
    ("md", """\
The table is the held-out log loss of the MAP for each prior setting (rows
`mean_strength`, columns `cov_dof`, "auto" first, then nu0 increasing; the lines above
give the nu0 "auto" chose), fitted on 40 rows. Every setting fits, but the default
`"auto"` has about three times the log loss of `cov_dof=120`. Why?

### Why the empirical-Bayes nu0 makes the worst MAP here

"auto" maximises the marginal likelihood p(X | y) (`log_marginal_likelihood()`), and
it does so correctly; the problem is what the MAP does with the nu0 it picks. The
table below takes `mean_strength=0.01` and, for each nu0, gives the log evidence of
the training features, the MAP's held-out log loss, how many of its 228 test rows get
probability below 1e-6 for their true class, the median squared Mahalanobis distance
of test rows to their own class under the MAP covariance (about d = 30 if the
covariance were right), and the held-out log loss of the conjugate posterior
predictive at the same prior."""),
    ("code", """\
X_small, y_small = Xb_train[small], yb_train[small]
diagnosis = {}
for nu0 in nu0_grid:
    m = bg.QDA(method="map", cov_dof=nu0).fit(X_small, y_small)
    post = bg.QDA(method="conjugate", cov_dof=nu0, draws=N_DRAWS,
                  random_state=SEED).fit(X_small, y_small)
    p = m.predict_proba(Xb_test)
    p_true = p[np.arange(len(yb_test)), yb_test]
    own = np.searchsorted(m.classes_, yb_test)
    diff = Xb_test - m.means_[own]
    maha = np.einsum("ni,nij,nj->n", diff, np.linalg.inv(m.covariance_)[own], diff)
    diagnosis[str(nu0)] = {
        "nu0": m._prior["nu0"],
        "log evidence": post.log_marginal_likelihood(),
        "MAP log loss": log_loss(yb_test, p),
        "test rows p(true) < 1e-6": int((p_true < 1e-6).sum()),
        "median Mahalanobis^2": np.median(maha),
        "posterior predictive log loss": log_loss(yb_test, post.predict_proba(Xb_test)),
    }
pd.DataFrame(diagnosis)"""),
    ("md", """\
Read with seed 0 (the MAP and evidence columns do not depend on the draws):

- **The evidence really prefers nu0 = 32.4**, just above its floor d + 1 = 31: the log
  evidence is about 512 there against 226 at nu0 = 60 and 103 at nu0 = 120 (a factor
  of e^400). The default prior scale S0 is diagonal (the pooled within-class
  variances), while the breast cancer features are almost collinear (radius, perimeter
  and area: the eigenvalues of their correlation matrix run from 1e-4 to 13.5). A
  large nu0 says "the class covariances are close to that diagonal", which the data
  flatly contradict, so the evidence asks for the weakest prior. This is not a bug of
  the search (the evidence falls on both sides of 32.4), and it is not a small-class
  effect of one class: both classes have 20 rows and share the one nu0.
- **The MAP plug-in is what fails.** With 20 rows, each class's scatter matrix has
  rank 19 < 30; in the 11 directions it does not span, the MAP covariance is
  (nu0 - d - 1) S0 / (nu0 + N_k + d + 2) = 1.37 / 84.4, under 2% of the prior
  variance. Test rows deviate in those directions by their usual amount, so their
  median squared Mahalanobis distance to their own class is about 120 instead of
  about 30 (22 at nu0 = 120),
  and 24 of the 228 test rows get probability below 1e-6 for their true class. Each
  such row costs up to 36 nats (scikit-learn clips probabilities at 2.2e-16): those
  24 rows make 2.9 of the mean 3.1. A strong prior (nu0 = 120) keeps the
  covariance near S0 in every direction, so the plug-in is less overconfident (1.14),
  although the evidence finds it far less probable.
- **The posterior predictive uses the evidence's choice well**: integrating over
  Sigma gives a multivariate Student-t whose scale divides by nu0 + N_k - d + 1 = 23.4
  instead of 84.4, with heavy tails, and at nu0 = "auto" it has the lowest log loss of
  all the settings here (about 0.54, against 0.63 at nu0 = 60 and 0.70 at 120).

Two checks: the same comparison with 120 training rows per class (more rows than
features), and at 20 rows per class with a prior scale that has the features'
correlations (`cov_target=` LDA's pooled covariance matrix instead of the diagonal)."""),
    ("code", """\
more = np.r_[np.flatnonzero(yb_train == 0)[:120], np.flatnonzero(yb_train == 1)[:120]]
pooled = bg.LDA(method="map").fit(X_small, y_small).covariance_
cases = {"120 rows/class": (Xb_train[more], yb_train[more], {}),
         "20 rows/class, full cov_target": (X_small, y_small, {"cov_target": pooled})}
checks = {}
for case, (X_fit, y_fit, options) in cases.items():
    for nu0 in ("auto", 2 * d, 4 * d):
        m = bg.QDA(method="map", cov_dof=nu0, **options).fit(X_fit, y_fit)
        post = bg.QDA(method="conjugate", cov_dof=nu0, draws=N_DRAWS, random_state=SEED,
                      **options).fit(X_fit, y_fit)
        checks[(case, str(nu0))] = {
            "nu0": m._prior["nu0"],
            "MAP log loss": log_loss(yb_test, m.predict_proba(Xb_test)),
            "posterior predictive log loss": log_loss(yb_test, post.predict_proba(Xb_test)),
        }
pd.DataFrame(checks).T"""),
    ("md", """\
With 120 rows per class "auto" still picks nu0 = 31.6, and there a fixed nu0 = 60
gives a lower held-out log loss for both the MAP (about 0.11 against 0.43) and the
posterior predictive (about 0.10 against 0.20): the evidence scores how well the
model explains the features x given y (skewed, nearly collinear features under a
diagonal prior scale), not the class probabilities, and the two criteria disagree
on these data. With a full `cov_target` the conflict goes away: the evidence picks a
strong prior (nu0 = 163 at 20 rows per class), with MAP log loss 1.20 and posterior
predictive 0.53, better than either fixed value.

So with fewer rows per class than features, prefer `method="conjugate"` (with the
default `cov_dof="auto"`) to the MAP plug-in; where a point estimate is needed, pick
`cov_dof` by cross-validated log loss (`GridSearchCV(..., scoring="neg_log_loss")`) or
give a `cov_target` with the features' correlations."""),
    ("md", """\
## Cross-validated comparison: MLE vs MAP vs posterior

On the wine data (13 features, 3 classes), QDA trained on n rows per class for three
sizes n, with the empirical-Bayes `cov_dof="auto"` and three fixed prior strengths,
tested on the remaining rows;
three random splits per size. The MLE needs n > 13 and is missing for n = 10. The
conjugate posterior uses 2 chains x `min(N_DRAWS, 500)` draws to keep this quick."""),
    ("code", """\
X_w, y_w = load_wine(return_X_y=True)
d_w = X_w.shape[1]
split_rng = np.random.default_rng(SEED)
records = []
for n in (10, 20, 40):
    for split in range(3):
        train = np.concatenate([split_rng.choice(np.flatnonzero(y_w == k), n, replace=False)
                                for k in range(3)])
        test = np.setdiff1d(np.arange(len(y_w)), train)
        candidates = {("MLE", "-"): bg.QDA(method="mle")} if n > d_w else {}
        for nu0 in ("auto", d_w + 2, 2 * d_w, 4 * d_w):
            candidates[("MAP", nu0)] = bg.QDA(method="map", cov_dof=nu0)
            candidates[("conjugate", nu0)] = bg.QDA(
                method="conjugate", cov_dof=nu0, draws=min(N_DRAWS, 500), chains=2,
                random_state=SEED)
        for (method, nu0), model in candidates.items():
            p = model.fit(X_w[train], y_w[train]).predict_proba(X_w[test])
            records.append({"n per class": n, "method": method, "cov_dof": nu0,
                            "log loss": log_loss(y_w[test], p, labels=[0, 1, 2]),
                            "accuracy": accuracy_score(y_w[test], p.argmax(axis=1))})
dof_order = {"-": -2, "auto": -1}  # cov_dof rows: MLE's "-", "auto", then increasing
cv = (pd.DataFrame(records)
      .groupby(["n per class", "method", "cov_dof"], sort=False)[["log loss", "accuracy"]]
      .mean()
      .sort_index(key=lambda level: level.map(lambda v: dof_order.get(v, v))
                  if level.name == "cov_dof" else level))
cv.unstack("n per class")"""),
    ("code", """\
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
flat = cv.reset_index()
for (method, nu0), part in flat.groupby(["method", "cov_dof"], sort=False):
    style = {"MLE": "k-o", "MAP": "--s", "conjugate": "-^"}[method]
    label = method if method == "MLE" else f"{method}, cov_dof={nu0}"
    for ax, metric in zip(axes, ["log loss", "accuracy"]):
        ax.plot(part["n per class"], part[metric], style, label=label)
axes[0].set(xlabel="training rows per class", ylabel="held-out log loss", yscale="log")
axes[1].set(xlabel="training rows per class", ylabel="held-out accuracy")
axes[1].legend(fontsize="small", bbox_to_anchor=(1.02, 1), loc="upper left")
fig.suptitle("QDA on wine: mean over 3 random splits")
fig.tight_layout()"""),
    ("md", """\
The table and plot give, per training size, the mean held-out log loss and accuracy
over the three splits. Read them for: how far the MLE (where it exists) is from the
MAP, how the conjugate posterior predictive compares with the MAP plug-in at the same
prior, and whether the gaps shrink as n grows. The differences between prior strengths
are largest at the smallest training size, where the prior carries the most weight."""),
    ("md", """\
## The predictive study: posterior predictive vs scikit-learn at small n

`validation/predictive_study.py` repeats this comparison at scale: iris, wine, breast
cancer and digits, 10, 20 and 50 training rows per class, 20 random splits each, the
default priors, against scikit-learn's LDA, QDA (reg_param 0 and 0.5) and GaussianNB,
with Ledoit-Wolf shrinkage LDA/QDA as stronger references. It takes about 15 minutes,
so this notebook shows its stored results (regenerate them with
`python validation/predictive_study.py --splits 20 --mcmc --out validation/img
--markdown validation/results_predictive.md`), then reruns a 3-split version on iris
and wine live."""),
    ("code", """\
from pathlib import Path
from IPython.display import Image, Markdown, display

validation = Path("..") / "validation"
display(Markdown((validation / "results_predictive.md").read_text()))
display(Image(filename=str(validation / "img" / "predictive_study.png")))"""),
    ("code", """\
import sys

sys.path.insert(0, "..")  # the repository root, for validation/
from validation.predictive_study import goal_table, run, summarise

quick = run(splits=3, sizes=[10, 20], draws=100, with_mcmc=False, seed=SEED,
            datasets=["iris", "wine"])
goal_table(summarise(quick), quick, splits=3)[
    ["data", "n_per_class", "classifier", "conjugate", "sk LDA", "sk QDA",
     "sk QDA reg 0.5", "sk GaussianNB", "goal"]].round(3)"""),
    ("md", """\
The stored table is the full study; the live one is a quick rerun on 3 splits, and
its numbers move with the splits: where the 20-split means differ by about one
standard error (iris at 20 rows per class) three splits can flip the verdict. NaN
marks a scikit-learn model that cannot fit: its QDA needs more rows per class than
features even with `reg_param`. Where a
counterpart fits, the goal asks the conjugate posterior predictive for a lower mean
held-out log loss at 10 and 20 rows per class and no worse at 50."""),
]
