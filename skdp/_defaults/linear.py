"""Default step size and number of epochs of the linear models: public functions of (n, d,
the calibrated noise, the loss) only, never of the data's values.

Both assume rows on a known scale: with ``max_row_norm='auto'`` (the default) the fit trains on
rows of norm at most 1 (``skdp/_public_scale.py``), so one rule holds for every scaling of the
data. The constants were chosen by leaving one data set out (``benchmarks/bench_defaults.py``;
``docs/benchmarks.md``, "Defaults on data they were not tuned on").
"""

from __future__ import annotations

import math

from .._engine._losses import OutputLoss
from ..mechanisms._sgd.settings import steps_per_epoch

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
#: leaving one data set out (benchmarks/bench_defaults.py, docs/benchmarks.md): the log-losses'
#: curvature bound (1/4, 1/2) is loose where predictions are confident, so classification
#: tolerates a larger step; the squared loss is at its bound.
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
#: (docs/benchmarks.md, "More epochs at larger epsilon").
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


#: DPLogisticRegression's step on the user's scale is ``4.0 / (1 + USER_SCALE_DAMPING mu)``
#: (the 4.0 is ``_USER_SCALE_DEFAULTS``), with ``mu = z / b`` the standard deviation of the
#: noise on each coordinate of a mean gradient relative to the clipping bound (public: the
#: calibrated noise multiplier and the batch size). Where ``mu`` is large (small data, small
#: epsilon: wine, breast cancer, digits) the fit is noise-limited and a smaller step averages
#: more of the noise away (+6 to +14 points on wine at epsilon 0.1-1 against the former
#: undamped 2.0); where it is small (Adult, Fashion-MNIST at epsilon >= 0.5: mu <= 0.006) the
#: fit is iteration-limited and takes a step of 2.8-4 (Fashion-MNIST +0.6 to +1.0 points at
#: epsilon 0.5-1, row-normalised Adult +0.3 to +0.6). The pair (4.0, 80) was chosen by leaving
#: one data set out among eight (benchmarks/tune_user_scale_damping.py; docs/benchmarks.md,
#: "Damping the user-scale step by the noise per coordinate"); the noise norm ``nu = mu
#: sqrt(p)`` did not separate the sets that want damping from those that do not.
USER_SCALE_DAMPING = 80.0


#: Scale-free mini-batch runs without privacy (max_row_norm='auto', max_iter='auto'): no noise,
#: so only iterations limit the fit, and ``MIN_STEPS`` left DPRidge up to 0.016 R^2 short of
#: scikit-learn's Ridge. Without clipping, 300 epochs of the usual 32 steps brought diamonds,
#: rand_hie, ames and diabetes within 0.004 R^2 (100 epochs: ames 0.013 short); classification
#: keeps the user-scale rule's limit (``MAX_GROWN_EPOCHS`` epochs of 32 steps). In steps, so
#: that a larger batch (``PARAM_BATCH_FACTOR``) does not cut the iterations.
#: docs/benchmarks.md, "DPRidge without privacy".
NON_PRIVATE_STEPS = {"classification": 32 * MAX_GROWN_EPOCHS, "regression": 32 * 300}


def non_private_epochs(epochs: int, per_epoch: int, loss: OutputLoss) -> int:
    """Epochs of a mini-batch run of the rules (``max_iter='auto'`` where the measured
    user-scale defaults do not apply) without privacy: enough for the task's
    ``NON_PRIVATE_STEPS``; full-batch runs (one step per epoch) keep ``epochs``."""
    if per_epoch <= 1:
        return epochs
    task = "regression" if OutputLoss(loss) is OutputLoss.SQUARED else "classification"
    return max(epochs, math.ceil(NON_PRIVATE_STEPS[task] / per_epoch))


# Upper bounds on the second derivative of each loss in the logit (prediction), per unit of
# squared row norm: binary log-loss 1/4, softmax 1/2, half squared error 1.
_CURVATURE = {OutputLoss.LOGISTIC: 0.25, OutputLoss.SOFTMAX: 0.5, OutputLoss.SQUARED: 1.0}


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
    task = "regression" if loss is OutputLoss.SQUARED else "classification"
    smoothness = _CURVATURE[loss] * squared_norm + l2
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
    points behind noisy_sgd on Adult, 1000 within 0.05 (docs/benchmarks.md).
    """
    if max_iter != "auto":
        return int(max_iter)
    per_epoch = steps_per_epoch(n_samples, batch_size)
    if mini_batch_epochs is not None and per_epoch > 1:
        return int(mini_batch_epochs)
    return int(max(MIN_EPOCHS, math.ceil(MIN_STEPS / per_epoch)))
