"""
Privacy-utility curves: skdp, Opacus, diffprivlib and scikit-learn
==================================================================

Test accuracy against epsilon for logistic regression on Adult, computed when this page was
built (not pasted numbers):

- skdp :class:`~skdp.linear_model.DPLogisticRegression` with its defaults;
- Opacus DP-SGD on the same linear model, with skdp's clipping bound, step size, epochs and
  expected batch size (its last iterate: Opacus does not average iterates);
- diffprivlib's ``LogisticRegression`` (objective perturbation, pure epsilon-DP), with a
  public bound on the row norm (``data_norm``) derived from the public scaling;
- scikit-learn's non-private ``LogisticRegression``.

A library that is not installed is skipped with a note (``pip install -e ".[benchmark]"``
installs both). ``benchmarks/bench_adult_logistic.py`` is the full benchmark (more seeds, timings,
each library's own accountant); its results are in :doc:`/benchmarks/adult_logistic`.
"""

# %%
import math
import os
import sys
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.linear_model import LogisticRegression

from skdp.datasets import ADULT_NUMERIC_SCALING, adult_preprocessor, load_adult
from skdp.linear_model import DPLogisticRegression

FAST = os.environ.get("SKDP_GALLERY_FAST", "") not in ("", "0")
EPSILONS = [0.5, 2.0] if FAST else [0.1, 0.5, 2.0]
SEEDS = [0] if FAST else [0, 1]
DELTA = 1e-5

X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
pre = adult_preprocessor().fit(X_train)  # public constants only: learns nothing
X_train, X_test = pre.transform(X_train), pre.transform(X_test)
X_train = np.asarray(X_train, dtype=np.float64)
X_test = np.asarray(X_test, dtype=np.float64)

try:
    import opacus  # noqa: F401
except ImportError:
    opacus = None
    print("Opacus is not installed: skipping it (pip install opacus)")



def import_diffprivlib():
    """diffprivlib's models, or None. diffprivlib 0.6.6 predates scikit-learn 1.8; in a checkout
    the benchmarks' compatibility shim (bookkeeping only, diffprivlib's fit unchanged) is used."""
    here = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
    if (here.parent / "benchmarks" / "_bench_common.py").is_file():
        sys.path.insert(0, str(here.parent / "benchmarks"))
        try:
            from _bench_common import import_diffprivlib as shim
        except ImportError as error:  # e.g. a benchmark dependency is missing
            print(f"benchmarks/_bench_common.py is not importable ({error})")
        else:
            found = shim()
            return found if found is None else found.LogisticRegression
    try:
        from diffprivlib.models import LogisticRegression as found
    except ImportError as error:
        print(f"diffprivlib is not importable ({error}): skipping it")
        return None
    return found


DPLLogisticRegression = import_diffprivlib()

# %%
# The public row-norm bound diffprivlib needs
# -------------------------------------------
# diffprivlib clips rows to ``data_norm``; it must not be read from the data. The public
# ranges of Adult's numeric columns (census documentation), mapped through the public
# scaling, and at most one 1 per one-hot block (8 categorical columns), bound it.
PUBLIC_RANGES = {"age": (17, 90), "fnlwgt": (1e4, 1.5e6), "education_num": (1, 16),
                 "capital_gain": (0, 99_999), "capital_loss": (0, 1e5),
                 "hours_per_week": (1, 99)}
transforms = {"linear": lambda v: v, "log": math.log, "log1p": math.log1p}
data_norm = math.sqrt(8 + sum(
    max(abs((transforms[kind](lo) - c) / s), abs((transforms[kind](hi) - c) / s)) ** 2
    for name, (kind, c, s) in ADULT_NUMERIC_SCALING.items()
    for lo, hi in [PUBLIC_RANGES[name]]
))
print(f"diffprivlib data_norm = {data_norm:.3f}")


# %%
# Opacus on the same model and schedule as skdp
# ---------------------------------------------
def fit_opacus(epsilon, seed, reference):
    """nn.Linear trained by Opacus DP-SGD with skdp's clipping, step size, epochs and batch."""
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(seed)
    n, d = X_train.shape
    model = torch.nn.Linear(d, 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    l2 = 1.0 / (reference.C * n)  # the same L2 penalty as skdp's C
    optimizer = torch.optim.SGD([{"params": [model.weight], "weight_decay": l2},
                                 {"params": [model.bias], "weight_decay": 0.0}],
                                lr=reference.learning_rate_)  # the step skdp used
    steps_per_epoch = reference.n_steps_ // reference.n_iter_
    data = TensorDataset(torch.as_tensor(X_train, dtype=torch.float32),
                         torch.as_tensor(y_train, dtype=torch.float32))
    loader = DataLoader(data, batch_size=math.ceil(n / steps_per_epoch))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus' notes about secure RNG and hooks
        model, optimizer, loader = PrivacyEngine(accountant="prv").make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader, target_epsilon=epsilon,
            target_delta=DELTA, epochs=reference.n_iter_, max_grad_norm=reference.max_grad_norm,
            poisson_sampling=True)
        loss_fn = torch.nn.BCEWithLogitsLoss()
        for _ in range(reference.n_iter_):
            for xb, yb in loader:
                optimizer.zero_grad(set_to_none=True)
                loss_fn(model(xb).squeeze(1), yb).backward()
                optimizer.step()
    with torch.no_grad():
        logits = model(torch.as_tensor(X_test, dtype=torch.float32)).squeeze(1).numpy()
    return float(((logits > 0).astype(int) == y_test).mean())


# %%
# Run
# ---
results = {"skdp": {}, "Opacus": {}, "diffprivlib": {}}
start = time.perf_counter()
for epsilon in EPSILONS:
    for seed in SEEDS:
        clf = DPLogisticRegression(privacy=(epsilon, DELTA), random_state=seed)
        clf.fit(X_train, y_train)
        results["skdp"].setdefault(epsilon, []).append(clf.score(X_test, y_test))
        if opacus is not None and seed == SEEDS[0]:  # Opacus is slower: one seed
            results["Opacus"].setdefault(epsilon, []).append(fit_opacus(epsilon, seed, clf))
        if DPLLogisticRegression is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                other = DPLLogisticRegression(epsilon=epsilon, data_norm=data_norm,
                                              random_state=seed).fit(X_train, y_train)
            results["diffprivlib"].setdefault(epsilon, []).append(other.score(X_test, y_test))
baseline = LogisticRegression(max_iter=1000).fit(X_train, y_train).score(X_test, y_test)
print(f"all fits: {time.perf_counter() - start:.1f} s")

print(f"{'epsilon':>8} " + " ".join(f"{name:>12}" for name in results))
for epsilon in EPSILONS:
    cells = [f"{np.mean(results[name][epsilon]):12.4f}" if results[name] else f"{'-':>12}"
             for name in results]
    print(f"{epsilon:8g} " + " ".join(cells))
print(f"scikit-learn, no privacy: {baseline:.4f}")

# %%
# The curves
# ----------
fig, ax = plt.subplots(figsize=(6.5, 4))
for (name, by_epsilon), marker in zip(results.items(), "osD", strict=True):
    if by_epsilon:
        means = [np.mean(by_epsilon[e]) for e in EPSILONS]
        ax.plot(EPSILONS, means, marker=marker, label=name)
ax.axhline(baseline, color="k", ls="--", label="scikit-learn, no privacy")
ax.set_xscale("log")
ax.set_xlabel("epsilon (delta = 1e-5; diffprivlib: delta = 0)")
ax.set_ylabel("test accuracy")
ax.set_title("Adult, logistic regression")
ax.legend(loc="lower right")
fig.tight_layout()
