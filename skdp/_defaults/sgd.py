"""The 'auto' rules every DP-SGD estimator shares: batch size, iterate averaging, and the
step-size schedule. Pure functions of public quantities."""

from __future__ import annotations

import math

import numpy as np

from .registry import Rule, register

__all__ = [
    "AUTO_BATCH_FRACTION",
    "AUTO_BATCH_MAX",
    "AUTO_BATCH_MIN",
    "DEFAULT_AVERAGE_FRACTION",
    "PARAM_BATCH_FACTOR",
    "auto_batch_size",
    "noise_damped_step",
    "resolve_average",
    "resolve_learning_rate",
]

# Defaults measured on Adult and diamonds with the public preprocessing
# (benchmarks/tune_defaults.py; docs/benchmarks/tune_defaults.md and averaging.md): large batches
# favour DP (noise per example falls as 1/batch), and
# averaging the last iterates removes much of the remaining noise at no privacy cost.
# Averaging the last tenth of the iterates was the best tail length, or within 0.0002 of it, at
# every epsilon on both data sets (benchmarks/tune_averaging.py); longer tails lag behind the
# iterate at small noise, shorter ones cancel less noise at large noise.
DEFAULT_AVERAGE_FRACTION = 0.1
AUTO_BATCH_FRACTION = 1 / 32  # expected batch ~ 3% of the rows ...
AUTO_BATCH_MIN, AUTO_BATCH_MAX = 64, 4096  # ... within these limits (and never above n)
#: The linear models' batch is also at least this times sqrt(number of parameters): the noise
#: on a mean gradient grows as sqrt(p) / batch, and on small data with many parameters the
#: floor of 64 rows drowned every step (digits, 1,347 rows x 650 parameters: 61.8% -> 74.2% at
#: epsilon 0.5, 79.8% -> 86.4% at 1 with batch 204; ames, held out, +0.001 R^2). Above about
#: 2,000 rows n / 32 is larger for every linear model measured (docs/benchmarks/batch_floor.md).
PARAM_BATCH_FACTOR = 8.0


def auto_batch_size(n_samples: int, n_params: int | None = None) -> int:
    """``batch_size='auto'``: ``n / 32`` within ``[m, 4096]``, with ``m`` 64, or
    ``8 sqrt(n_params)`` when the number of parameters is known and larger; never above ``n``."""
    floor = AUTO_BATCH_MIN
    if n_params is not None:
        floor = max(floor, math.ceil(PARAM_BATCH_FACTOR * math.sqrt(n_params)))
    batch_size = int(
        np.clip(round(n_samples * AUTO_BATCH_FRACTION), floor, max(floor, AUTO_BATCH_MAX))
    )
    return int(min(batch_size, n_samples))


def resolve_average(average) -> float:
    """``True`` -> the default tail fraction, ``False`` -> 0 (last iterate), a float as given."""
    if isinstance(average, bool | np.bool_):
        return DEFAULT_AVERAGE_FRACTION if average else 0.0
    return float(average)


def resolve_learning_rate(learning_rate: str, auto_schedule: str) -> str:
    """``'auto'``: the optimizer's own schedule (``auto_learning_rate``: decaying steps,
    ``'invscaling'``, for ADP-SGD, whose noise is shaped to its step sizes; ``'constant'``
    otherwise); a named schedule as given."""
    return auto_schedule if learning_rate == "auto" else learning_rate


def noise_damped_step(
    step: float, noise_multiplier: float, batch_size: float, damping: float
) -> float:
    """``step / (1 + damping z / b)``: a measured step shrunk by the noise per coordinate.

    ``z / b`` is the standard deviation of the noise on each coordinate of a mean gradient
    relative to the clipping bound: public (the calibrated noise multiplier and the expected
    batch size). Where it is large the fit is noise-limited and a smaller step averages more of
    the noise away; where it is small the step is nearly the measured one.
    """
    return step / (1.0 + damping * noise_multiplier / batch_size)


register(Rule(
    "sgd.batch_size", "batch_size='auto'",
    ("DPLogisticRegression", "DPRidge", "DPMLPClassifier", "DPMLPRegressor"),
    "n * AUTO_BATCH_FRACTION within [m, AUTO_BATCH_MAX], m = max(AUTO_BATCH_MIN, "
    "PARAM_BATCH_FACTOR sqrt(p)) for the linear models (p parameters; n alone inside a private "
    "pipeline, whose plan does not know the columns), never above n; every row for full-batch "
    "optimizers (diff2).",
    {"AUTO_BATCH_FRACTION": AUTO_BATCH_FRACTION, "AUTO_BATCH_MIN": AUTO_BATCH_MIN,
     "AUTO_BATCH_MAX": AUTO_BATCH_MAX, "PARAM_BATCH_FACTOR": PARAM_BATCH_FACTOR},
    "benchmarks/tune_defaults.py (Adult, diamonds; results/tune_defaults.json, "
    "docs/benchmarks/tune_defaults.md); the parameter floor: a probe on digits, checked on "
    "ames held out (results/batch_floor.json, docs/benchmarks/batch_floor.md)",
    auto_batch_size,
))
register(Rule(
    "sgd.average", "average=True",
    ("DPLogisticRegression", "DPRidge", "DPMLPClassifier", "DPMLPRegressor"),
    "release the average of the last DEFAULT_AVERAGE_FRACTION of the iterates "
    "(post-processing: it costs no privacy and cancels noise).",
    {"DEFAULT_AVERAGE_FRACTION": DEFAULT_AVERAGE_FRACTION},
    "benchmarks/tune_averaging.py (Adult, diamonds; every epsilon within 0.0002 of the best; "
    "results/averaging.json)",
    resolve_average,
))
register(Rule(
    "sgd.learning_rate", "learning_rate='auto'",
    ("DPLogisticRegression", "DPRidge", "DPMLPClassifier", "DPMLPRegressor"),
    "the optimizer's own schedule: 'invscaling' for adp_sgd (ADP-SGD as its paper defines it: "
    "decaying steps, noise shaped to them), 'constant' for the others.",
    function=resolve_learning_rate,
))
register(Rule(
    "sgd.noise_damped_step", "the damped steps of eta0 / learning_rate_init='auto'",
    ("DPLogisticRegression", "DPMLPClassifier", "DPMLPRegressor"),
    "step / (1 + damping z / b): a measured step shrunk by the calibrated noise per coordinate "
    "of a mean gradient (z the noise multiplier, b the expected batch size; both public).",
    function=noise_damped_step,
))
