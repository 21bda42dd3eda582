"""Public noise shapes: how the noise of a run varies from step to step.

A schedule fixes only the *shape* of the noise, a positive relative level per step; the scale
is set by the accountant so that the whole run spends exactly the budget (Hong, Wang & Zhou's
normalisation, done with the real accountant instead of their zCDP sum; see
``docs/specs/noise_schedules.md``). Everything here is a function of public hyperparameters
only (number of steps, steps per epoch, the schedule's name and its decay), never of the data.

Shapes are quantised down to a few levels before accounting: the run then *uses* the quantised
levels, so the accounting is exact for what is run, and calibrating a plan of a few dozen step
groups stays fast.
"""

from __future__ import annotations

import math

import numpy as np

from ._plan import NeighboringRelation, PrivacyPlan, Sampling, StepGroup

__all__ = [
    "NOISE_SCHEDULES",
    "noise_shape",
    "adp_noise_shape",
    "quantize_shape",
    "plan_from_shape",
    "zcdp_rho",
    "zcdp_noise_schedule",
]

NOISE_SCHEDULES = ("constant", "exp_decay", "step_decay", "time_decay", "poly_decay")
# At most this many distinct noise levels per run. Consecutive levels differ by the ratio
# (max / min) ** (1 / (MAX_LEVELS - 1)): 1.166 for a tenfold range, a piecewise-constant
# approximation of the smooth shape that is itself a public, exactly accounted schedule.
MAX_LEVELS = 16
POLY_DECAY_POWER = 3.0  # the exponent of 'poly_decay' (the authors' PolyDecaySch default)


def _progress(n_steps: int) -> np.ndarray:
    """``u_t = t / (T - 1)`` for t = 0..T-1: 0 at the first step, 1 at the last."""
    if n_steps == 1:
        return np.zeros(1)
    return np.arange(n_steps, dtype=np.float64) / (n_steps - 1)


def noise_shape(
    schedule: str, n_steps: int, steps_per_epoch: int, noise_decay: float
) -> np.ndarray:
    """Relative noise level of every step, 1 at the first step and ``noise_decay`` at the last.

    Parameters
    ----------
    schedule : {'constant', 'exp_decay', 'step_decay', 'time_decay', 'poly_decay'}
        ``'constant'``: 1 throughout. With ``r = noise_decay`` and ``u`` the progress of the run
        from 0 (first step) to 1 (last step):

        - ``'exp_decay'``: ``r ** u`` (geometric decay, Yu et al.'s exponential schedule);
        - ``'step_decay'``: ``r ** (e / (E - 1))`` with ``e`` the epoch of the step out of
          ``E``: constant within an epoch, geometric across epochs;
        - ``'time_decay'``: ``1 / (1 + k u)`` with ``k = 1 / r - 1``;
        - ``'poly_decay'``: ``(1 - r) (1 - u) ** 3 + r``.
    n_steps : int
        Steps of the run.
    steps_per_epoch : int
        Steps per epoch (used by ``'step_decay'``).
    noise_decay : float in (0, 1]
        Noise at the last step relative to the first. 1 is the constant schedule.

    Returns
    -------
    shape : ndarray of shape (n_steps,)
        Positive relative levels; only their ratios matter.
    """
    if schedule not in NOISE_SCHEDULES:
        raise ValueError(f"noise_schedule must be one of {NOISE_SCHEDULES}, got {schedule!r}")
    if not 0.0 < noise_decay <= 1.0:
        raise ValueError(f"noise_decay must be in (0, 1], got {noise_decay!r}")
    u = _progress(n_steps)
    r = float(noise_decay)
    if schedule == "constant" or r == 1.0:
        return np.ones(n_steps)
    if schedule == "exp_decay":
        return r**u
    if schedule == "step_decay":
        epoch = np.arange(n_steps) // max(1, steps_per_epoch)
        n_epochs = int(epoch[-1]) + 1
        return r ** (epoch / max(1, n_epochs - 1))
    if schedule == "time_decay":
        return 1.0 / (1.0 + (1.0 / r - 1.0) * u)
    return (1.0 - r) * (1.0 - u) ** POLY_DECAY_POWER + r


def adp_noise_shape(learning_rates: np.ndarray) -> np.ndarray:
    """ADP-SGD's optimal relative noise for a fixed step-size schedule: ``1 / sqrt(eta_t)``.

    Wu et al. choose the per-step noise multiplier ``alpha_t`` with ``alpha_t^2`` proportional
    to ``1 / eta_t`` (Cauchy-Schwarz optimum of their utility bound). With a constant step size
    the shape is constant: ADP-SGD is then exactly DP-SGD.
    """
    rates = np.asarray(learning_rates, dtype=np.float64)
    if rates.size == 0 or not np.all(rates > 0) or not np.all(np.isfinite(rates)):
        raise ValueError("ADP-SGD needs positive, finite step sizes at every step")
    return np.sqrt(rates[0] / rates)


def quantize_shape(shape: np.ndarray, max_levels: int = MAX_LEVELS) -> np.ndarray:
    """Round every level *down* onto a geometric grid of at most ``max_levels`` values.

    Rounding down never lowers the accounted privacy loss below what is run, because the run
    uses the returned levels themselves; it only changes the (public) shape slightly.
    Constant shapes are returned unchanged.
    """
    shape = np.asarray(shape, dtype=np.float64)
    top, bottom = float(shape.max()), float(shape.min())
    if not bottom > 0.0:
        raise ValueError("noise levels must be positive")
    if top / bottom <= 1.0 + 1e-12:
        return np.full_like(shape, top)
    ratio = (top / bottom) ** (1.0 / (max_levels - 1))
    # Level index k >= 0 counts grid steps down from the top: level = top / ratio**k.
    k = np.ceil(np.log(top / shape) / math.log(ratio) - 1e-9)
    return top / ratio**k


def plan_from_shape(
    shape: np.ndarray,
    sampling_rate: float,
    sampling: Sampling = Sampling.POISSON,
    neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
) -> PrivacyPlan:
    """A plan with one step group per run of consecutive equal levels of ``shape``."""
    shape = np.asarray(shape, dtype=np.float64)
    groups: list[StepGroup] = []
    start = 0
    for t in range(1, shape.size + 1):
        if t == shape.size or shape[t] != shape[start]:
            groups.append(StepGroup(t - start, sampling_rate, float(shape[start])))
            start = t
    return PrivacyPlan(tuple(groups), sampling, neighboring_relation)


# --- The paper's zCDP normalisation (reference; skdp calibrates with PLD or RDP instead) -------
def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ``rho`` whose rho-zCDP implies ``(epsilon, delta)``-DP by Bun & Steinke's
    conversion ``epsilon = rho + 2 sqrt(rho ln(1/delta))``.

    Solving for ``rho`` gives ``(sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))^2``; the paper
    prints a ``+`` in its place, a sign error (the spec's erratum): ``zcdp_rho(4, 1e-8)`` is
    0.196352, the value its experiments use.
    """
    log_inv_delta = math.log(1.0 / delta)
    return (math.sqrt(log_inv_delta + epsilon) - math.sqrt(log_inv_delta)) ** 2


def zcdp_noise_schedule(shape: np.ndarray, rho: float) -> np.ndarray:
    """Full-batch noise multipliers ``sigma_t = c s_t`` with ``sum_t 1 / sigma_t^2 = 2 rho``.

    The paper's normalisation (budget ``R = 2 rho``), exact for full-batch Gaussian steps under
    zCDP; kept to check the spec's worked examples.
    """
    shape = np.asarray(shape, dtype=np.float64)
    scale_sq = float(np.sum(shape**-2.0)) / (2.0 * rho)
    return shape * math.sqrt(scale_sq)
