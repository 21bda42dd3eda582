"""
Your own data: a raw DataFrame through a private pipeline
=========================================================

Real tables have numeric columns on their own scales, string categories and missing values.
scikit-learn's ``StandardScaler``, ``OneHotEncoder`` and ``SimpleImputer`` learn means,
variances and the categories present from the rows, outside any accounting.
:func:`~skdp.pipeline.make_private_pipeline` with skdp's DP transformers learns every one of
those statistics under differential privacy, inside *one* budget with the model, and its report
covers everything the fitted pipeline releases (:doc:`/user_guide/preprocessing`).
"""

# %%
import os

import matplotlib.pyplot as plt
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdp.datasets import load_adult
from skdp.linear_model import DPLogisticRegression
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import DPOneHotEncoder, DPSimpleImputer, DPStandardScaler

FAST = os.environ.get("SKDP_GALLERY_FAST", "") not in ("", "0")
EPSILONS = [0.5, 2.0] if FAST else [0.1, 0.25, 0.5, 1.0, 4.0]

X_train, X_test, y_train, y_test = load_adult(return_X_y=True, as_frame=True)
print(X_train.head())
print("missing values per column:", X_train.isna().sum()[lambda s: s > 0].to_dict())
numeric = X_train.select_dtypes("number").columns.tolist()  # the schema is public
categorical = [c for c in X_train.columns if c not in numeric]

# %%
# scikit-learn's usual pipeline (not private)
# -------------------------------------------
leaky = make_pipeline(
    ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(), StandardScaler()), numeric),
        ("cat", OneHotEncoder(handle_unknown="ignore"), categorical),
    ]),
    LogisticRegression(max_iter=1000),
)
baseline = leaky.fit(X_train, y_train).score(X_test, y_test)
print(f"scikit-learn, no privacy: {baseline:.4f}")


# %%
# The private pipeline
# --------------------
# The same shape with DP steps. The scaler finds column bounds privately, the encoder keeps
# only categories frequent enough to pass a noisy threshold, the imputer's means are noisy.
# A share of the budget (0.3 by default) goes to the preprocessing; the model is calibrated to
# use exactly the rest.
def private_pipeline(epsilon):
    pre = ColumnTransformer([
        ("num", make_pipeline(DPSimpleImputer(), DPStandardScaler()), numeric),
        ("cat", DPOneHotEncoder(), categorical),
    ])
    return make_private_pipeline(pre, DPLogisticRegression(), privacy=(epsilon, 1e-5),
                                 random_state=0)


scores = []
for epsilon in EPSILONS:
    model = private_pipeline(epsilon).fit(X_train, y_train)
    scores.append(model.score(X_test, y_test))
    print(f"epsilon={epsilon:<5g} accuracy {scores[-1]:.4f}, spent "
          f"{model.privacy_spent_[0]:.4f} for everything")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(EPSILONS, scores, "o-", label="skdp private pipeline (raw table)")
ax.axhline(baseline, color="k", ls="--", label="scikit-learn pipeline, no privacy")
ax.set_xscale("log")
ax.set_xlabel("epsilon of the whole pipeline (delta = 1e-5)")
ax.set_ylabel("test accuracy")
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()

# %%
# What the last pipeline learned, and how it was protected
# --------------------------------------------------------
print(model.privacy_report())

# %%
# In a notebook the fitted pipeline shows its privacy statement as a table, one row per DP
# step, under scikit-learn's diagram:
model  # noqa: B018
