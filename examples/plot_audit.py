"""
Auditing a claim: canary scores and an empirical lower bound
============================================================

An audit *measures* a lower bound on epsilon: it trains many models with and without a canary
row and tests, from each released model alone, whether the canary was in. If the test succeeds
more often than (epsilon, delta)-DP allows, the claim is refuted, whatever the proof says. It can
refute a claim, never prove one (:doc:`/user_guide/audit`).

We audit :class:`~skdp.linear_model.DPLogisticRegression` at two claimed epsilons on small
synthetic data (the auditor's own data, never private data), and plot the canary's score under
the "in" and "out" models with the resulting bound.
"""

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from skdp.audit import audit_multi_run
from skdp.linear_model import DPLogisticRegression

FAST = os.environ.get("SKDP_GALLERY_FAST", "") not in ("", "0")
N_RUNS = 200 if FAST else 600

rng = np.random.default_rng(0)
X = rng.normal(size=(50, 3)) / 3
y = (X[:, 0] > 0).astype(int)

results = {}
for epsilon in (1.0, 8.0):
    # full batches and few steps: cheap fits, the most sensitive setting for the audit
    clf = DPLogisticRegression(privacy=(epsilon, 1e-3), batch_size=50, max_iter=3)
    results[epsilon] = audit_multi_run(clf, X, y, n_runs=N_RUNS, random_state=0)
    print(results[epsilon])

# %%
# Score histograms
# ----------------
# The canary's score is its log-likelihood under the released model (relative to a reference
# input). Models trained with it score it higher; the noise makes the two distributions
# overlap, more at a smaller epsilon.
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
for ax, result in zip(axes, results.values(), strict=True):
    scores_in, scores_out = result.details["in_scores"], result.details["out_scores"]
    bins = np.histogram_bin_edges(np.concatenate([scores_in, scores_out]), bins=30)
    ax.hist(scores_out, bins=bins, alpha=0.6, label="canary out")
    ax.hist(scores_in, bins=bins, alpha=0.6, label="canary in")
    ax.axvline(result.details["threshold"], color="k", ls="--", lw=1, label="test threshold")
    ax.set_title(f"claimed epsilon {result.epsilon_claimed:.3g}")
    ax.set_xlabel("canary score")
axes[0].set_ylabel("models")
axes[0].legend(fontsize=8)
fig.tight_layout()

# %%
# Lower bound against the claim
# -----------------------------
# A valid claim keeps the measured lower bound below it (with 95% confidence). The bound can
# never exceed about ``log(n_runs)``, so small audits cannot say much about large epsilons.
fig, ax = plt.subplots(figsize=(5, 3.5))
x = np.arange(len(results))
ax.bar(x - 0.2, [r.epsilon_claimed for r in results.values()], width=0.4, label="claimed")
ax.bar(x + 0.2, [r.epsilon_lower for r in results.values()], width=0.4,
       label="audit lower bound (95%)")
ax.set_xticks(x, [f"privacy=({e:g}, 1e-3)" for e in results])
ax.set_ylabel("epsilon")
ax.legend()
fig.tight_layout()
