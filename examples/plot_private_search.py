"""
Private hyperparameter search against untuned choices
=====================================================

Choosing the best of several fits by a score computed on private data leaks too, so tuning
must be paid for. :class:`~skdp.model_selection.DPRandomizedSearchCV` spends *one* total
budget on a random, hidden number of DP trials (each a DP fit and a noisy validation score),
the selection and the refit of the winner (Papernot & Steinke's bound; see
:doc:`/user_guide/private_search`).

We compare, at the same total epsilon on Adult:

- the search over a grid of step sizes, epochs and clipping bounds;
- *untuned* choices: grid points picked without looking at the data, each given the whole
  budget (what you get when you guess);
- skdp's defaults, given the whole budget. They were chosen (non-privately) on this very
  data set (:doc:`/benchmarks/tune_defaults`), so they are a ceiling more than a baseline here.
"""

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import ParameterGrid

from skdp.datasets import adult_preprocessor, load_adult
from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import DPRandomizedSearchCV

FAST = os.environ.get("SKDP_GALLERY_FAST", "") not in ("", "0")
PRIVACY = (1.0, 1e-5)
GRID = {"eta0": [0.5, 1.0, 2.0, 4.0, 8.0], "max_iter": [5, 20], "max_grad_norm": [0.5, 1.0]}
N_GUESSES = 3 if FAST else 6
N_SEARCHES = 1 if FAST else 2

X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
pre = adult_preprocessor().fit(X_train)  # public constants: free
X_train, X_test = pre.transform(X_train), pre.transform(X_test)

# %%
# The search: one budget for everything
# -------------------------------------
searched = []
for seed in range(N_SEARCHES):
    search = DPRandomizedSearchCV(DPLogisticRegression(), GRID, privacy=PRIVACY, n_iter=10,
                                  random_state=seed).fit(X_train, y_train)
    searched.append(search.score(X_test, y_test))
    print(f"search {seed}: picked {search.best_params_}, test accuracy {searched[-1]:.4f}, "
          f"spent {search.privacy_spent_[0]:.3f} in all; each trial's fit got epsilon "
          f"{search.trial_privacy_[0]:.3f}")
print(search.privacy_report())

# %%
# Untuned: guesses from the same grid, each with the whole budget
# ---------------------------------------------------------------
rng = np.random.default_rng(0)
points = list(ParameterGrid(GRID))
guessed = []
for i in rng.choice(len(points), size=N_GUESSES, replace=False):
    clf = DPLogisticRegression(privacy=PRIVACY, random_state=int(i), **points[i])
    guessed.append(clf.fit(X_train, y_train).score(X_test, y_test))
    print(f"guess {points[i]}: test accuracy {guessed[-1]:.4f}")
default = DPLogisticRegression(privacy=PRIVACY, random_state=0).fit(X_train, y_train)
default_accuracy = default.score(X_test, y_test)
print(f"skdp defaults: test accuracy {default_accuracy:.4f}")

# %%
# Side by side
# ------------
fig, ax = plt.subplots(figsize=(6, 3.5))
groups = [("untuned guesses", guessed), ("DPRandomizedSearchCV", searched),
          ("skdp defaults\n(tuned on Adult)", [default_accuracy])]
for x, (_name, values) in enumerate(groups):
    ax.scatter(np.full(len(values), x), values, s=30, zorder=3)
    ax.hlines(np.mean(values), x - 0.25, x + 0.25, color="k")
ax.set_xticks(range(len(groups)), [name for name, _ in groups])
ax.set_ylabel("test accuracy")
ax.set_title(f"Adult, total epsilon = {PRIVACY[0]:g} for each method")
fig.tight_layout()
