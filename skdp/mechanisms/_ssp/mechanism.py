"""optimizer='ssp': AdaSSP (Wang 2018) as a mechanism of the shared fit flow.

Three Gaussian releases of sufficient statistics of the clipped rows (``X^T X``, ``X^T y`` and
the smallest eigenvalue of ``X^T X``; :mod:`skdp.accounting._ssp` plans and calibrates them
jointly) and one ridge solve in float64 (:mod:`.solve`). The flow plans, calibrates, charges
and records it as it does every other mechanism; the estimator (DPRidge) supplies the public
bounds, and its scale search when they come from one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..._engine.rows.host import block_row_norms, clip_factors_to, rescale_rows
from ...accounting import Calibration
from ...accounting._ssp import SSPPlan, calibrate_ssp, ssp_sensitivities
from .._base import Release, RunInput, StatementFacts
from .._params import parse_optimizer_params
from .report import ssp_statement
from .solve import (
    SSPNoise,
    SSPParams,
    clip_targets,
    draw_standard_normals,
    eig_shift,
    eta,
    run_ssp,
    sufficient_statistics,
)

__all__ = ["LABEL", "SSP", "SSPBounds"]

#: How reports and ledger records name the mechanism.
LABEL = "optimizer='ssp' (AdaSSP: noisy sufficient statistics, one ridge solve)"


@dataclass(frozen=True)
class SSPBounds:
    """Public bounds: ``row`` on the L2 norm of the rows of X (B_x), ``target`` on
    ``|y - target_center|`` (B_y; on the L2 norm of each row of centred y for several targets).
    ``None`` only without privacy. The centre is public (the middle of ``target_bound``'s
    range): subtracting it is a per-row map, and it is added back to the intercept."""

    row: float | None
    target: float | None
    target_center: float = 0.0


class SSP:
    """AdaSSP for a ridge regression with ``n_features`` columns and ``n_targets`` targets.

    Parameters
    ----------
    params : SSPParams
        Its hyperparameters (:meth:`parse_params` of the estimator's ``optimizer_params``).
    bounds : SSPBounds
        The public bounds, as numbers (``SSPBounds(1, 1)`` on the unit scale a scale search
        found).
    alpha : float
        The ridge penalty on the user's scale (scikit-learn's ``Ridge(alpha)``).
    fit_intercept : bool
        Whether a constant column ``c = B_x`` is appended for the intercept.
    private : bool
        Whether the fit is private (without privacy nothing is clipped: scikit-learn's Ridge).
    """

    description = "AdaSSP: noisy sufficient statistics, one ridge solve"

    @staticmethod
    def parse_params(optimizer_params, accountant: str) -> SSPParams:
        """The estimator's ``optimizer_params`` and ``accountant``, checked (before anything
        else is planned)."""
        if accountant not in ("pld", "rdp"):
            raise ValueError(
                f"optimizer='ssp' releases noisy statistics once, with no iterates: use "
                f"accountant='pld' (exact) or 'rdp', not accountant={accountant!r}"
            )
        return parse_optimizer_params(SSPParams, optimizer_params, "ssp")

    def __init__(self, params: SSPParams, bounds: SSPBounds, *, alpha: float,
                 fit_intercept: bool, private: bool) -> None:
        self.params = params
        self.bounds = bounds
        self.alpha = float(alpha)
        self.private = private
        # c = B_x (spec §6); 1 without a bound (no privacy: nothing is clipped)
        self.c = (bounds.row if bounds.row is not None else 1.0) if fit_intercept else None
        self.row_bound = (
            None if bounds.row is None else math.hypot(bounds.row, self.c or 0.0)
        )

    def training_facts(self, n_targets: int) -> list[str]:
        """What the guarantee relies on about the rows released: clipping and the intercept."""
        bounds, c = self.bounds, self.c
        if not self.private:
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

    def plan(self) -> SSPPlan:
        return SSPPlan(self.params.weights)

    def calibrate(self, plan: SSPPlan, epsilon: float, delta: float, accountant: str):
        if math.isinf(epsilon):
            return Calibration.non_private(plan)  # type: ignore[arg-type]
        return calibrate_ssp(plan, epsilon, delta, accountant)

    def _noise(self, calibration: Calibration, sensitivities, d_tilde: int) -> SSPNoise:
        if not calibration.is_private:
            return SSPNoise(0.0, 0.0, 0.0, 0.0, 0.0)
        m = calibration.plan.without_priors().noise_multipliers(calibration.noise_multiplier)
        s_lambda, s_gram, s_cross = (
            mi * di for mi, di in zip(m, sensitivities.as_tuple(), strict=True)
        )
        return SSPNoise(
            s_lambda, s_gram, s_cross, eig_shift(calibration.delta) * s_lambda,
            eta(s_gram, d_tilde, self.params.rho),
        )

    def run(self, data: RunInput, calibration) -> Release:
        """Release the three statistics and solve, in float64."""
        bounds, private, c = self.bounds, self.private, self.c
        X, targets = data.X, data.targets
        n_samples, n_features = X.shape
        n_targets = targets.shape[1]
        d_tilde = n_features + (c is not None)
        sens = ssp_sensitivities(self.row_bound, bounds.target) if private else None
        noise = self._noise(calibration, sens, d_tilde)
        center = bounds.target_center if private else 0.0  # without privacy nothing is clipped
        scale = data.scale  # the public scale of a search (rows not yet on it), or None
        if private:
            targets = clip_targets(targets - center, float(bounds.target))
        if sp.issparse(X):  # sparse rows are small: transformed as a whole
            X = scale.rows(X) if scale is not None else X
            X = rescale_rows(X, float(bounds.row)) if private else X
            S, b = sufficient_statistics(X, targets, c, data.device)
        else:
            S, b = sufficient_statistics(
                X, targets, c, data.device, rows=self._rows_on_scale(scale))
        randomness = data.randomness()
        draws = draw_standard_normals(randomness.noise, d_tilde, n_targets, data.device)
        # alpha is on the user's scale (scikit-learn's objective); on rows divided by B it is
        # alpha / B^2 (the targets' scale divides out).
        alpha = self.alpha / (scale.row_bound**2 if scale is not None else 1.0)
        p = self.params
        result = run_ssp(
            S, b, noise, draws, alpha=alpha, intercept=c is not None,
            symmetric=p.symmetric_noise, n_samples=n_samples, eigen_floor=p.eigen_floor,
        )
        del S, b  # the exact statistics are never kept
        W = result.weights.cpu().numpy().astype(np.float64)
        if not np.isfinite(W).all():  # post-processing of the releases
            raise FloatingPointError("the SSP solve is not finite; check the bounds and alpha")
        intercept = c * W[n_features] if c is not None else np.zeros(n_targets)
        # The linear model's flat layout: coefficients (n_features x n_targets), intercepts.
        params = np.concatenate([W[:n_features].ravel(), intercept + center])
        return Release(
            params,
            attributes={
                "noise_std_": {"lambda_min": noise.sigma_lambda, "gram": noise.sigma_gram,
                               "cross": noise.sigma_cross},
                "lambda_min_released_": result.lambda_min_released,
                "adaptive_lambda_": result.adaptive_lambda,
                "solver_fallback_": result.solver_fallback,
                "n_iter_": 1,  # one pass over the data, no iterations
            },
            details={"noise": noise, "sensitivities": sens, "result": result},
        )

    def _rows_on_scale(self, scale):
        """The per-block transformation of dense rows: onto the public scale (if a search found
        one), then clipped to ``B_x`` (private fits); ``None`` when rows are used as given."""
        bound = float(self.bounds.row) if self.private else None
        if scale is None and bound is None:
            return None

        def rows(block: np.ndarray) -> np.ndarray:
            # One norm per row and one multiplication: the scale's factor, then the clip of
            # the scaled row (whose norm is the row's times that factor).
            norms = block_row_norms(block)
            factors = np.ones_like(norms)
            if scale is not None:
                factors = scale.row_factors(norms)
                norms = norms * factors
            if bound is not None:
                factors *= clip_factors_to(norms, bound)
            block *= factors[:, None]
            return block

        return rows

    def statement(self, calibration, release: Release, facts: StatementFacts) -> str:
        details = release.details
        return ssp_statement(
            calibration, facts.estimator, self.params, details["noise"],
            details["sensitivities"], facts.n_samples, facts.training, alpha=self.alpha,
            result=details["result"], public=facts.public, label=facts.label,
        )
