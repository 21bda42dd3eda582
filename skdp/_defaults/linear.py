"""Default step size and number of epochs of the linear models: public functions of (n, d,
the calibrated noise, the loss) only, never of the data's values.

Both assume rows on a known scale: with ``max_row_norm='auto'`` (the default) the fit trains on
rows of norm at most 1 (``skdp/_scale/public_scale.py``), so one rule holds for every scaling of the
data. The constants were chosen by leaving one data set out (``benchmarks/bench_defaults.py``;
``docs/benchmarks/defaults_study.md``).
"""

from __future__ import annotations

import math

from .._engine._losses import OutputLoss
from ..mechanisms._sgd.settings import steps_per_epoch
from .registry import Rule, register

__all__ = [
    "auto_step_size",
    "resolve_epochs",
    "non_private_epochs",
    "STEP_SCALE",
    "NOISE_DAMPING",
    "MIN_STEPS",
    "USER_SCALE_DAMPING",
]

#: Step size times the curvature bound of the loss on rows of norm <= 1 (with the intercept's
#: constant feature 1 counted in the row norm), by task: 1 is the classical 1/M step. Chosen by
#: leaving one data set out (benchmarks/bench_defaults.py, docs/benchmarks/defaults_study.md):
#: the log-losses' curvature bound (1/4, 1/2) is loose where predictions are confident, so
#: classification tolerates a larger step; the squared loss is at its bound.
STEP_SCALE = {"classification": 8.0, "regression": 1.0}
#: The step grows as ``(d / REFERENCE_FEATURES) ** FEATURE_EXPONENT`` with the number of features
#: ``d`` (public): on rows of norm <= 1 the coefficients a fit must reach grow with the number
#: of features that share the row's norm, and so does the distance the steps must travel
#: (measured: Fashion-MNIST's 784 pixels needed a 10-60x larger step than Adult's 105 columns;
#: classification chose exponent 1, regression 0).
FEATURE_EXPONENT = {"classification": 1.0, "regression": 0.0}
REFERENCE_FEATURES = 100
#: How fast the step shrinks as the noise grows: ``1 / (1 + NOISE_DAMPING * nu)``, with ``nu``
#: the norm of the noise on a mean gradient relative to the clipping bound.
NOISE_DAMPING = {"classification": 4.0, "regression": 4.0}
#: Epochs: at least this many steps (small data sets need many epochs to converge, and each of
#: their epochs is cheap; full-batch optimizers such as diff2 make one step per epoch) ...
MIN_STEPS = 1000
#: ... and at least this many epochs.
MIN_EPOCHS = 20

#: DPLogisticRegression's measured 20 epochs on its user's scale were tuned at epsilon 0.5-2; at
#: larger epsilon the noise allows more progress, and where the noise on a mean gradient is
#: small (``nu`` of the 20-epoch run at most ``QUIET_NOISE``) the fit is iteration-limited:
#: Fashion-MNIST gained 1.0-2.2 points, row-normalised Adult 0.7-1.1, at epsilon 2-8 with
#: ``20 epsilon^EPOCH_GROWTH`` epochs. Where the noise is larger (digits, wine, breast cancer:
#: nu 0.12-0.48) more epochs lost up to 2 points, so they stay at 20
#: (docs/benchmarks/epoch_growth.md).
EPOCH_GROWTH = 0.8
QUIET_NOISE = 0.1
MAX_GROWN_EPOCHS = 100


def grown_epochs(epochs: int, epsilon: float, nu: float) -> int:
    """``epochs`` (the measured default) grown with ``epsilon > 1`` where the noise level ``nu``
    of that default run is at most ``QUIET_NOISE``; at most ``MAX_GROWN_EPOCHS``, which is also
    the limit without privacy (no noise: nothing but iterations limits the fit)."""
    if epsilon <= 1.0 or nu > QUIET_NOISE:
        return epochs
    if math.isinf(epsilon):
        return max(epochs, MAX_GROWN_EPOCHS)
    return int(min(MAX_GROWN_EPOCHS, max(epochs, round(epochs * epsilon**EPOCH_GROWTH))))


#: DPLogisticRegression's ``(eta0, epochs)`` for mini-batch runs on the user's own row scale
#: (``max_row_norm`` None or a float): measured on eight data sets (the step) and on Adult and
#: Fashion-MNIST (the epochs); the scale-free rule was up to 3 points behind there, and the
#: 1000-step rule up to 38 points behind on small sets (wine, breast cancer) at the same privacy.
LOGISTIC_USER_SCALE = (4.0, 20)
#: Without privacy nothing is clipped, and the former 2.0 measured 0.1-0.2 points ahead of 4.0
#: on Fashion-MNIST, digits and fertility.
LOGISTIC_NON_PRIVATE_STEP = 2.0

#: DPLogisticRegression's step on the user's scale is ``4.0 / (1 + USER_SCALE_DAMPING mu)``
#: (the 4.0 is ``LOGISTIC_USER_SCALE``), with ``mu = z / b`` the standard deviation of the
#: noise on each coordinate of a mean gradient relative to the clipping bound (public: the
#: calibrated noise multiplier and the batch size). Where ``mu`` is large (small data, small
#: epsilon: wine, breast cancer, digits) the fit is noise-limited and a smaller step averages
#: more of the noise away (+6 to +14 points on wine at epsilon 0.1-1 against the former
#: undamped 2.0); where it is small (Adult, Fashion-MNIST at epsilon >= 0.5: mu <= 0.006) the
#: fit is iteration-limited and takes a step of 2.8-4 (Fashion-MNIST +0.6 to +1.0 points at
#: epsilon 0.5-1, row-normalised Adult +0.3 to +0.6). The pair (4.0, 80) was chosen by leaving
#: one data set out among eight (benchmarks/tune_user_scale_damping.py;
#: docs/benchmarks/user_scale_step.md); the noise norm ``nu = mu
#: sqrt(p)`` did not separate the sets that want damping from those that do not.
USER_SCALE_DAMPING = 80.0


#: Scale-free mini-batch runs without privacy (max_row_norm='auto', max_iter='auto'): no noise,
#: so only iterations limit the fit, and ``MIN_STEPS`` left DPRidge up to 0.016 R^2 short of
#: scikit-learn's Ridge. Without clipping, 300 epochs of the usual 32 steps brought diamonds,
#: rand_hie, ames and diabetes within 0.004 R^2 (100 epochs: ames 0.013 short); classification
#: keeps the user-scale rule's limit (``MAX_GROWN_EPOCHS`` epochs of 32 steps). In steps, so
#: that a larger batch (``PARAM_BATCH_FACTOR``) does not cut the iterations.
#: docs/benchmarks/ridge_non_private.md.
NON_PRIVATE_STEPS = {"classification": 32 * MAX_GROWN_EPOCHS, "regression": 32 * 300}


def non_private_epochs(epochs: int, per_epoch: int, loss: OutputLoss) -> int:
    """Epochs of a mini-batch run of the rules (``max_iter='auto'`` where the measured
    user-scale defaults do not apply) without privacy: enough for the task's
    ``NON_PRIVATE_STEPS``; full-batch runs (one step per epoch) keep ``epochs``."""
    if per_epoch <= 1:
        return epochs
    return max(epochs, math.ceil(NON_PRIVATE_STEPS[OutputLoss(loss).task] / per_epoch))


def noise_level(noise_multiplier: float, n_params: int, batch_size: int) -> float:
    """``nu``: the expected norm of the noise on one mean gradient divided by the clipping bound,
    ``z sqrt(p) / b`` (0 without privacy). Public: it depends on the calibrated noise only."""
    return noise_multiplier * math.sqrt(n_params) / batch_size


def auto_step_size(
    row_bound: float | None,
    fit_intercept: bool,
    noise_multiplier: float,
    n_params: int,
    batch_size: int,
    loss: OutputLoss,
    l2: float = 0.0,
    n_features: int | None = None,
) -> float:
    """``eta0='auto'``: ``STEP_SCALE / (curvature R^2 + l2) / (1 + NOISE_DAMPING nu)``, with the
    constants of the task (classification or regression).

    ``curvature R^2 + l2`` bounds the smoothness of every per-example loss, with ``R^2 =
    row_bound^2 + 1`` with an intercept (its constant feature), ``row_bound^2`` without.
    Without a row bound (``max_row_norm=None``) rows are taken to have norm ~2, the scale the
    former constant defaults were tuned on. The clipping bound does not enter: the noise is
    proportional to it, and so is the clipped signal.
    """
    bound = 2.0 if row_bound is None else row_bound
    squared_norm = bound**2 + (1.0 if fit_intercept else 0.0)
    loss = OutputLoss(loss)
    task = loss.task
    smoothness = loss.curvature * squared_norm + l2
    nu = noise_level(noise_multiplier, n_params, batch_size)
    width = 1.0 if n_features is None else (n_features / REFERENCE_FEATURES) ** (
        FEATURE_EXPONENT[task]
    )
    return STEP_SCALE[task] * width / smoothness / (1.0 + NOISE_DAMPING[task] * nu)


def resolve_epochs(
    max_iter, n_samples: int, batch_size: int, mini_batch_epochs: int | None = None
) -> int:
    """``max_iter='auto'``: enough epochs for ``MIN_STEPS`` steps, and at least ``MIN_EPOCHS``;
    an int as given.

    ``mini_batch_epochs`` (an estimator's measured number of epochs, e.g. DPLogisticRegression's
    20) replaces that rule when an epoch has several steps; full-batch runs (one step, a round of
    diff2, per epoch) still make ``MIN_STEPS`` steps: 20 full-batch rounds left diff2 2.8-7.3
    points behind noisy_sgd on Adult, 1000 within 0.05 (docs/benchmarks/diff2_rounds.md).
    """
    if max_iter != "auto":
        return int(max_iter)
    per_epoch = steps_per_epoch(n_samples, batch_size)
    if mini_batch_epochs is not None and per_epoch > 1:
        return int(mini_batch_epochs)
    return int(max(MIN_EPOCHS, math.ceil(MIN_STEPS / per_epoch)))


# --- the registry ------------------------------------------------------------------------------
_LINEAR = ("DPLogisticRegression", "DPRidge")
register(Rule(
    "linear.eta0.scale_free", "eta0='auto' (rows on a public scale)", _LINEAR,
    "eta0 = STEP_SCALE[task] * (d / REFERENCE_FEATURES)^FEATURE_EXPONENT[task] / "
    "(c R^2 + l2) / (1 + NOISE_DAMPING[task] nu), with c the loss's curvature (1/4 logistic, "
    "1/2 softmax, 1 squared), R^2 = max_row_norm^2 (+1 with an intercept; rows of norm ~2 "
    "without a bound), nu = z sqrt(p) / b the noise norm on a mean gradient relative to the "
    "clipping bound, and the task (classification or regression) given by the loss; times the "
    "optimizer's auto_step_factor (diff2: 1/2, it diverged at the full step on Adult at "
    "epsilon 0.5).",
    {"STEP_SCALE": STEP_SCALE, "FEATURE_EXPONENT": FEATURE_EXPONENT,
     "REFERENCE_FEATURES": REFERENCE_FEATURES, "NOISE_DAMPING": NOISE_DAMPING},
    "benchmarks/bench_defaults.py (leave one data set out; results/defaults_study.json)",
    auto_step_size,
))
register(Rule(
    "linear.eta0.user_scale", "eta0='auto' (DPLogisticRegression, rows as given)",
    ("DPLogisticRegression",),
    "mini-batch runs on the user's own row scale (max_row_norm None or a float): "
    "LOGISTIC_USER_SCALE = (step, epochs); eta0 = step / (1 + USER_SCALE_DAMPING z / b) with "
    "z / b the calibrated noise per coordinate of a mean gradient relative to the clipping "
    "bound, LOGISTIC_NON_PRIVATE_STEP without privacy (nothing is clipped). Full-batch runs and "
    "runs on the scale max_row_norm='auto' finds use the scale-free rule.",
    {"LOGISTIC_USER_SCALE": LOGISTIC_USER_SCALE, "USER_SCALE_DAMPING": USER_SCALE_DAMPING,
     "LOGISTIC_NON_PRIVATE_STEP": LOGISTIC_NON_PRIVATE_STEP},
    "benchmarks/tune_user_scale_damping.py (eight data sets, leave one out; "
    "results/user_scale_step.json); epochs: benchmarks/tune_defaults.py",
))
register(Rule(
    "linear.max_iter", "max_iter='auto'", _LINEAR,
    "enough epochs for MIN_STEPS steps and at least MIN_EPOCHS; DPLogisticRegression on its "
    "user's scale: 20 epochs, grown to 20 epsilon^EPOCH_GROWTH (at most MAX_GROWN_EPOCHS) at "
    "epsilon > 1 where the 20-epoch run's noise norm nu is at most QUIET_NOISE; without "
    "privacy, mini-batch runs make NON_PRIVATE_STEPS[task] steps (only iterations limit them). "
    "Full-batch diff2 makes one step (a round) per epoch.",
    {"MIN_STEPS": MIN_STEPS, "MIN_EPOCHS": MIN_EPOCHS, "EPOCH_GROWTH": EPOCH_GROWTH,
     "QUIET_NOISE": QUIET_NOISE, "MAX_GROWN_EPOCHS": MAX_GROWN_EPOCHS,
     "NON_PRIVATE_STEPS": NON_PRIVATE_STEPS},
    "benchmarks/bench_defaults.py (MIN_STEPS, MIN_EPOCHS; results/defaults_study.json); "
    "benchmarks/bench_epoch_growth.py (growth; results/epoch_growth.json); "
    "benchmarks/tune_diff2_rounds.py (diff2 rounds; results/diff2_rounds.json); "
    "NON_PRIVATE_STEPS: results/ridge_non_private.json",
    resolve_epochs,
))
register(Rule(
    "linear.eta0.last_iterate", "eta0='auto' with accountant='last_iterate'", _LINEAR,
    "1 / M, half the largest step the last-iterate bound allows (2 / M, M the smoothness of "
    "every per-example loss): every per-example step is then a contraction.",
))
