"""
Regression with DPRidge on diamonds
===================================

:class:`~skdp.linear_model.DPRidge` minimises scikit-learn's
:class:`~sklearn.linear_model.Ridge` objective with DP-SGD. On the bundled diamonds data we
regress the log price, scaled by public constants (:func:`~skdp.datasets.scale_diamonds_target`),
at several privacy levels and compare with the non-private fit.
"""

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from skdp.datasets import diamonds_preprocessor, load_diamonds, scale_diamonds_target
from skdp.linear_model import DPRidge

FAST = os.environ.get("SKDP_GALLERY_FAST", "") not in ("", "0")
EPSILONS = [0.1, 1.0] if FAST else [0.05, 0.1, 0.5, 1.0, 4.0]

X, price = load_diamonds(return_X_y=True)
y = scale_diamonds_target(price)  # public constants: free
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

baseline = make_pipeline(diamonds_preprocessor(), Ridge(alpha=1.0)).fit(X_train, y_train)
baseline_r2 = baseline.score(X_test, y_test)

scores = {}
for epsilon in EPSILONS:
    model = make_pipeline(
        diamonds_preprocessor(), DPRidge(privacy=(epsilon, 1e-5), random_state=0)
    ).fit(X_train, y_train)
    scores[epsilon] = model.score(X_test, y_test)
    print(f"epsilon={epsilon:<5g} test R^2 {scores[epsilon]:.4f}  "
          f"noise multiplier {model[-1].noise_multiplier_:.3g}")
print(f"non-private      test R^2 {baseline_r2:.4f}")

# %%
# R^2 against epsilon, and the predictions of the most private model
# -------------------------------------------------------------------
private = make_pipeline(
    diamonds_preprocessor(), DPRidge(privacy=(EPSILONS[0], 1e-5), random_state=0)
).fit(X_train, y_train)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
ax1.plot(list(scores), list(scores.values()), "o-", label="skdp DPRidge")
ax1.axhline(baseline_r2, color="k", ls="--", label="scikit-learn Ridge, no privacy")
ax1.set_xscale("log")
ax1.set_xlabel("epsilon (delta = 1e-5)")
ax1.set_ylabel("test R^2")
ax1.legend(loc="lower right")
rows = np.random.default_rng(0).choice(len(y_test), size=2000, replace=False)
ax2.scatter(y_test[rows], private.predict(X_test[rows]), s=3, alpha=0.4)
lims = [y_test.min(), y_test.max()]
ax2.plot(lims, lims, "k--", lw=1)
ax2.set_xlabel("scaled log price")
ax2.set_ylabel(f"prediction at epsilon={EPSILONS[0]:g}")
fig.tight_layout()

# %%
print(private[-1].privacy_report())
