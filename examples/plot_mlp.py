"""
A private neural network: DPMLPClassifier
=========================================

:class:`~skdp.neural_network.DPMLPClassifier` is scikit-learn's
:class:`~sklearn.neural_network.MLPClassifier` trained with DP-SGD. Per-example gradient norms
are computed exactly per layer from one forward and one backward pass ("ghost clipping"), so a
private epoch costs about as much as a non-private one. There is no ``loss_curve_`` and no early
stopping: both would read the private data without noise.

On Adult, we compare it with the private linear model and with scikit-learn's non-private MLP.
"""

# %%
import os
import time

import matplotlib.pyplot as plt
from sklearn.neural_network import MLPClassifier

from skdp.datasets import adult_preprocessor, load_adult
from skdp.linear_model import DPLogisticRegression
from skdp.neural_network import DPMLPClassifier

FAST = os.environ.get("SKDP_GALLERY_FAST", "") not in ("", "0")
EPSILONS = [0.5, 2.0] if FAST else [0.25, 0.5, 1.0, 4.0]

X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
pre = adult_preprocessor().fit(X_train)  # public constants: free
X_train, X_test = pre.transform(X_train), pre.transform(X_test)

start = time.perf_counter()
mlp = MLPClassifier(hidden_layer_sizes=(100,), max_iter=20, random_state=0)
baseline = mlp.fit(X_train, y_train).score(X_test, y_test)
print(f"scikit-learn MLPClassifier (no privacy): {baseline:.4f} "
      f"({time.perf_counter() - start:.1f} s)")

scores = {"DPMLPClassifier (100 hidden units)": [], "DPLogisticRegression": []}
for epsilon in EPSILONS:
    for name, model in [
        ("DPMLPClassifier (100 hidden units)",
         DPMLPClassifier(privacy=(epsilon, 1e-5), hidden_layer_sizes=(100,), random_state=0)),
        ("DPLogisticRegression", DPLogisticRegression(privacy=(epsilon, 1e-5), random_state=0)),
    ]:
        start = time.perf_counter()
        scores[name].append(model.fit(X_train, y_train).score(X_test, y_test))
        print(f"epsilon={epsilon:<4g} {name:<36} {scores[name][-1]:.4f} "
              f"({time.perf_counter() - start:.1f} s)")

# %%
# Accuracy against epsilon
# ------------------------
fig, ax = plt.subplots(figsize=(6, 3.5))
for (name, values), marker in zip(scores.items(), "os", strict=True):
    ax.plot(EPSILONS, values, marker=marker, label=name)
ax.axhline(baseline, color="k", ls="--", label="scikit-learn MLP, no privacy")
ax.set_xscale("log")
ax.set_xlabel("epsilon (delta = 1e-5)")
ax.set_ylabel("test accuracy")
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()

# %%
# The fitted network is numpy only (``coefs_``, ``intercepts_``, as in scikit-learn):
net = DPMLPClassifier(privacy=(1.0, 1e-5), random_state=0).fit(X_train, y_train)
print([w.shape for w in net.coefs_])
print(net.privacy_report())
