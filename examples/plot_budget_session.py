"""
A privacy budget spent across a session
=======================================

A :class:`~skdp.budget.PrivacyBudget` is a ledger of everything released about one data set:
every fit charges it *before* it reads the data, and a fit that would exceed it is refused
without recording anything. Spends compose tightly (privacy loss distributions or per-order
Renyi DP), so the total is well below the sum of the spends' epsilons.

Here an analyst works on Adult with a total budget of epsilon = 1.8: a first model, a few
variations, an MLP, until the ledger refuses.
"""

# %%
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from skdp import BudgetExceededError, PrivacyBudget
from skdp.datasets import adult_preprocessor, load_adult
from skdp.linear_model import DPLogisticRegression
from skdp.neural_network import DPMLPClassifier

FAST = os.environ.get("SKDP_GALLERY_FAST", "") not in ("", "0")

X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
pre = adult_preprocessor().fit(X_train)  # public constants: free
X_train, X_test = pre.transform(X_train), pre.transform(X_test)
if FAST:  # CI's quick build: fewer rows (n is public, so this is just a smaller data set)
    X_train, y_train = X_train[:8000], y_train[:8000]

path = Path(tempfile.mkdtemp()) / "adult.skdp"  # the ledger is a file: it survives restarts
budget = PrivacyBudget(epsilon=1.8, delta=1e-5, path=path)

# %%
# The session
# -----------
# Each fit names the budget (``budget=``; ``with budget:`` works too). We note the composed
# total after each spend, to plot it.
session = [
    ("logistic, eps 0.5", DPLogisticRegression(privacy=(0.5, 1e-5))),
    ("logistic, eps 0.5, C=0.1", DPLogisticRegression(privacy=(0.5, 1e-5), C=0.1)),
    ("logistic, eps 0.3, 40 epochs", DPLogisticRegression(privacy=(0.3, 1e-5), max_iter=40)),
    ("MLP, eps 1", DPMLPClassifier(privacy=(1.0, 1e-5), max_iter=5 if FAST else 10)),
    ("logistic, eps 0.8", DPLogisticRegression(privacy=(0.8, 1e-5))),
    ("logistic, eps 1", DPLogisticRegression(privacy=(1.0, 1e-5))),
    ("logistic, eps 0.2", DPLogisticRegression(privacy=(0.2, 1e-5))),
]
labels, own, composed = [], [], []
for i, (label, model) in enumerate(session):
    model.set_params(budget=budget, random_state=i)
    try:
        model.fit(X_train, y_train)
    except BudgetExceededError as error:
        print(f"{label}: REFUSED, nothing recorded\n    {error}")
        continue
    labels.append(label)
    own.append(model.privacy_spent_[0])
    composed.append(budget.spent()[0])
    print(f"{label}: accuracy {model.score(X_test, y_test):.4f}, spent {own[-1]:.3f}; "
          f"ledger total {composed[-1]:.3f} of {budget.epsilon:g}")

# %%
# Where the budget went
# ---------------------
# Bars: each spend's epsilon on its own. Solid line: the ledger's composed total. Dashed: what
# adding up the epsilons would claim (a valid but loose bound).
x = np.arange(len(labels))
fig, ax = plt.subplots(figsize=(7, 4))
ax.bar(x, own, color="#9ecae1", label="epsilon of the spend alone")
ax.plot(x, composed, "o-", color="#08519c", label="ledger total (composed)")
ax.plot(x, np.cumsum(own), "s--", color="#cb181d", label="sum of epsilons")
ax.axhline(budget.epsilon, color="k", lw=1, label="budget")
ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
ax.set_ylabel("epsilon (delta = 1e-5)")
ax.legend(loc="upper left", fontsize=8)
fig.tight_layout()

# %%
# The ledger
# ----------
# ``history()`` lists every recorded spend; in a notebook the budget draws itself as a bar of
# spent against total with its spends listed (below). Another Python process opening the same
# file sees the same spends.
for record in budget.history():
    print(f"#{record.id} {record.estimator:<22} {record.mechanism:<34} eps {record.epsilon:.3f}")
print("spent", budget.spent(), "remaining", round(budget.remaining(), 3))
budget  # noqa: B018
