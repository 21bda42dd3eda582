"""The fit flow of ``DPRidge(optimizer='ssp')``: plan, calibrate, charge, release, record.

The same flow as every skdp fit (DESIGN §2; :meth:`skdp._base.BaseDPEstimator._private_fit`),
for a mechanism that is not DP-SGD: three Gaussian releases of sufficient statistics
(:mod:`skdp.accounting._ssp`) and one ridge solve (:mod:`skdp._engine._ssp`). It charges a
budget with the shared ``_charge_budget``, works as a private pipeline's model (its releases are
calibrated jointly with the pipeline's preprocessing) and under ``planned_spend``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._engine._device import FitRandomness, resolve_device
from .._engine._glm import rescale_rows
from .._engine._optimizer_params import parse_optimizer_params
from .._engine._ssp import (
    SSPNoise,
    SSPParams,
    clip_targets,
    draw_standard_normals,
    eig_shift,
    eta,
    run_ssp,
    sufficient_statistics,
)
from .._fit.allocation import ModelAllocation, take_allocation
from .._fit.column_scales import warn_if_columns_unbalanced
from .._fit.estimator import _PLAN_ONLY, PlannedSpend, _model_share
from .._fit.leaks import warn_if_preprocessed_without_dp
from .._scale.public_scale import search_needs
from .._utils.validation import check_privacy, warn_if_delta_large
from ..accounting import Calibration
from ..accounting._report import _fact_lines, guarantee_lines
from ..accounting._ssp import SSPPlan, calibrate_ssp, ssp_sensitivities

__all__ = ["SSPBounds", "fit_ssp"]

MECHANISM = "optimizer='ssp' (AdaSSP: noisy sufficient statistics, one ridge solve)"


@dataclass(frozen=True)
class SSPBounds:
    """Public bounds: ``row`` on the L2 norm of the rows of X (B_x), ``target`` on
    ``|y - target_center|`` (B_y; on the L2 norm of each row of centred y for several targets).
    ``None`` only without privacy. The centre is public (the middle of ``target_bound``'s
    range): subtracting it is a per-row map, and it is added back to the intercept."""

    row: float | None
    target: float | None
    target_center: float = 0.0


BoundsFunction = Callable[..., SSPBounds]


def _calibrate(plan: SSPPlan, epsilon: float, delta: float, accountant: str) -> Calibration:
    if math.isinf(epsilon):
        return Calibration.non_private(plan)  # type: ignore[arg-type]
    return calibrate_ssp(plan, epsilon, delta, accountant)


def _noise(calibration: Calibration, sensitivities, d_tilde: int, rho: float, delta: float):
    if not calibration.is_private:
        return SSPNoise(0.0, 0.0, 0.0, 0.0, 0.0)
    m = calibration.plan.without_priors().noise_multipliers(calibration.noise_multiplier)
    s_lambda, s_gram, s_cross = (
        mi * di for mi, di in zip(m, sensitivities.as_tuple(), strict=True)
    )
    return SSPNoise(
        s_lambda, s_gram, s_cross, eig_shift(delta) * s_lambda, eta(s_gram, d_tilde, rho)
    )


def fit_ssp(estimator, X, targets: np.ndarray, bounds_fn: BoundsFunction):
    """Fit ``estimator`` (a DPRidge) by AdaSSP; returns ``(coef, intercept)`` in float64 with
    coef of shape (n_targets, n_features) and intercept of shape (n_targets,).

    ``bounds_fn(estimator, X, targets, private=...)`` gives the public bounds as numbers; it is
    asked before anything is charged, so a missing bound refuses the fit with nothing spent.
    """
    allocation = take_allocation(estimator)
    if allocation is not None:
        if not isinstance(allocation, ModelAllocation):  # pragma: no cover - a pipeline bug
            raise RuntimeError("DPRidge was given a DP transformer's allocation (bug)")
        epsilon, delta = allocation.epsilon, allocation.delta
    else:
        epsilon, delta = check_privacy(estimator.privacy)
        if not _PLAN_ONLY.get():
            warn_if_preprocessed_without_dp(estimator)
    private = not math.isinf(epsilon)
    n_samples, n_features = X.shape
    n_targets = targets.shape[1]
    if estimator.accountant not in ("pld", "rdp"):
        raise ValueError(
            f"optimizer='ssp' releases noisy statistics once, with no iterates: use "
            f"accountant='pld' (exact) or 'rdp', not accountant={estimator.accountant!r}"
        )
    params = parse_optimizer_params(SSPParams, estimator.optimizer_params, "ssp")
    # max_row_norm='auto': the bounds come from a DP search for a public scale, planned now
    # (public n and privacy) and run after the charge; the statistics are then released on that
    # scale, where rows have norm <= 1 and targets lie in [-1, 1].
    # Without privacy nothing is clipped and the solve is scikit-learn's Ridge: no scale needed.
    scale_noise = (
        estimator._scale_noise_multiplier(
            epsilon, delta, n_samples, n_targets, warn=False, centre_only=False
        )
        if estimator.max_row_norm == "auto" and private else None
    )
    if estimator.max_row_norm == "auto" and scale_noise is None and private:
        needs = search_needs(
            epsilon, delta, n_samples, estimator._scale_search_outputs(n_targets)
        )
        raise ValueError(
            f"optimizer='ssp' with n={n_samples} rows and this privacy cannot find a public "
            f"scale for the data (max_row_norm='auto'; {needs}); pass public bounds "
            "max_row_norm and target_bound, or use optimizer='noisy_sgd'"
        )
    own_priors = (scale_noise,) if scale_noise else ()
    bounds = (
        SSPBounds(1.0, 1.0) if scale_noise is not None
        else bounds_fn(estimator, X, targets, private=private)
    )
    if private and allocation is None:
        warn_if_delta_large(delta, n_samples)
    if not private and not _PLAN_ONLY.get():  # looking at X is free only here
        warn_if_columns_unbalanced(X, type(estimator).__name__)

    # 1. Plan (public): the augmented row bound and the sensitivities of the three releases.
    c = None
    if estimator.fit_intercept:
        c = bounds.row if bounds.row is not None else 1.0  # c = B_x (spec §6)
    row_bound = None if bounds.row is None else math.hypot(bounds.row, c or 0.0)
    plan = SSPPlan(params.weights)
    if allocation is not None or own_priors:
        pipeline_priors = allocation.prior_noise_multipliers if allocation is not None else ()
        plan = plan.with_priors((*pipeline_priors, *own_priors))

    # 2. Calibrate (no data read), 3. charge, before the data is touched.
    calibration = _calibrate(plan, epsilon, delta, estimator.accountant)
    spend = calibration.dp_event
    if _PLAN_ONLY.get():
        raise PlannedSpend(calibration, spend)
    facts = _facts(bounds, c, n_targets, private)
    # Settings that can still fail are checked before the ledger is charged.
    device = resolve_device(estimator.device)
    if allocation is None:
        estimator._charge_budget(calibration, spend, MECHANISM)
    else:
        calibration, facts = _model_share(calibration, allocation, facts, own_priors)
        spend = calibration.dp_event
    scale = None
    if scale_noise is not None:
        X, targets, scale_facts = estimator._apply_public_scale(
            X, targets, scale_noise, private=private
        )
        scale = estimator._take_fit_scale()
        facts = [*scale_facts, *facts]
    d_tilde = n_features + (c is not None)
    sens = ssp_sensitivities(row_bound, bounds.target) if private else None
    noise = _noise(calibration, sens, d_tilde, params.rho, delta)

    # 4. Release and solve, in float64.
    center = bounds.target_center if private else 0.0  # without privacy nothing is clipped
    if private:
        X = rescale_rows(X, float(bounds.row))
        targets = clip_targets(targets - center, float(bounds.target))
    S, b = sufficient_statistics(X, targets, c, device)
    randomness = FitRandomness(estimator.random_state, device)
    draws = draw_standard_normals(randomness.noise, d_tilde, n_targets, device)
    # alpha is on the user's scale (scikit-learn's objective); on rows divided by B it is
    # alpha / B^2 (the targets' scale divides out).
    alpha = float(estimator.alpha) / (scale.row_bound**2 if scale is not None else 1.0)
    result = run_ssp(
        S, b, noise, draws, alpha=alpha, intercept=c is not None,
        symmetric=params.symmetric_noise, n_samples=n_samples, eigen_floor=params.eigen_floor,
    )
    del S, b  # the exact statistics are never kept
    W = result.weights.cpu().numpy().astype(np.float64)
    if not np.isfinite(W).all():  # post-processing of the releases
        raise FloatingPointError("the SSP solve is not finite; check the bounds and alpha")

    # 5. Record.
    estimator.privacy_spent_ = (calibration.epsilon, calibration.delta)
    estimator.dp_event_ = spend
    estimator.noise_multiplier_ = calibration.noise_multiplier
    estimator.noise_std_ = {
        "lambda_min": noise.sigma_lambda, "gram": noise.sigma_gram, "cross": noise.sigma_cross
    }
    estimator.lambda_min_released_ = result.lambda_min_released
    estimator.adaptive_lambda_ = result.adaptive_lambda
    estimator.solver_fallback_ = result.solver_fallback
    estimator.device_ = str(device)
    estimator.n_iter_ = 1  # one pass over the data, no iterations
    estimator._privacy_report = ssp_statement(
        calibration, type(estimator).__name__, params, noise, sens, n_samples, facts,
        alpha=float(estimator.alpha), result=result, public=estimator._public_facts(),
    )
    coef = W[:n_features].T
    intercept = c * W[n_features] if c is not None else np.zeros(n_targets)
    intercept = intercept + center
    if scale is not None:
        coef, intercept = scale.to_user_units(coef, intercept)
        estimator.row_norm_bound_ = scale.row_bound
    return coef, intercept


def _facts(bounds: SSPBounds, c, n_targets: int, private: bool) -> list[str]:
    if not private:
        return []
    target = (
        f"y clipped to [-{bounds.target:g}, {bounds.target:g}]"
        if n_targets == 1
        else f"each row of y ({n_targets} targets) clipped to L2 norm {bounds.target:g}"
    )
    facts = [
        f"rows of X with L2 norm above B_x={bounds.row:g} scaled down to it; {target} "
        "(per row, before the statistics; predictions use rows as given)"
    ]
    if c is not None:
        facts.append(
            f"a constant column c={c:g} appended for the intercept (not centred by sample "
            f"means), so rows released have norm at most {math.hypot(bounds.row, c):.4g}"
        )
    return facts


def _ridge_use(eigen_floor: float | None, lam: float) -> str:
    if eigen_floor is None or lam <= 0.0:
        return "added to every eigenvalue of the noisy X^T X"
    return (f"applied as a floor: eigenvalues of the noisy X^T X below {eigen_floor:g} x lambda "
            f"= {eigen_floor * lam:.4g} raised to it")


def ssp_statement(
    calibration: Calibration, estimator: str, params: SSPParams, noise: SSPNoise, sens,
    n_samples: int, facts: list[str], *, alpha: float, result, public: list[str],
) -> str:
    """``privacy_report()`` of an SSP fit, in the shape of :func:`privacy_statement`."""
    lines = [f"{estimator}, trained with {MECHANISM}"]
    if not calibration.is_private:
        lines.append(
            "  guarantee: NONE. privacy=(inf, 0) solves the exact ridge system without clipping "
            "or noise; the model may reveal anything about any row."
        )
        return "\n".join(lines)
    m = calibration.plan.without_priors().noise_multipliers(calibration.noise_multiplier)
    shape = {"goe": "symmetric GOE noise: diagonal std as given, off-diagonal std / sqrt(2)",
             "mirror": "symmetric noise: iid upper triangle, mirrored"}[params.symmetric_noise]
    lines += [
        *guarantee_lines(calibration),
        "  unit of privacy: one row (its features and label); neighbouring datasets: add or "
        "remove one row (equivalently zero-out)",
        "  mechanism: three Gaussian releases of statistics of the clipped rows, composed "
        f"exactly (one joint calibration, noise multipliers split {params.split_name}):",
        f"    smallest eigenvalue of X^T X: sensitivity {sens.lambda_min:.4g}, noise multiplier "
        f"{m[0]:.4g}, std {noise.sigma_lambda:.4g}",
        f"    X^T X ({shape}): sensitivity {sens.gram:.4g}, noise multiplier {m[1]:.4g}, std "
        f"{noise.sigma_gram:.4g}",
        f"    X^T y: sensitivity {sens.cross:.4g}, noise multiplier {m[2]:.4g}, std "
        f"{noise.sigma_cross:.4g}",
        f"  ridge (post-processing): released lambda_min {result.lambda_min_released:.4g} "
        f"(shifted down by {noise.shift:.4g}), adaptive lambda {result.adaptive_lambda:.4g} "
        f"(eta {noise.eta:.4g}, rho={params.rho:g}), "
        + _ridge_use(params.eigen_floor, result.adaptive_lambda)
        + f", plus alpha={alpha:g}; "
        + (f"solver fallback: {result.solver_fallback}" if result.solver_fallback
           else "solved by Cholesky"),
        "  data read once: no sampling, no iterations",
    ]
    lines += _fact_lines(n_samples, ["the bounds B_x and B_y", *public], facts)
    return "\n".join(lines)
