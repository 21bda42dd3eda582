"""The privacy statement of an AdaSSP fit, in the shape of every other report."""

from __future__ import annotations

from ...accounting import Calibration
from ...accounting._report import fact_lines, guarantee_lines
from .solve import SSPNoise, SSPParams

__all__ = ["ssp_statement"]


def _ridge_use(eigen_floor: float | None, lam: float) -> str:
    if eigen_floor is None or lam <= 0.0:
        return "added to every eigenvalue of the noisy X^T X"
    return (f"applied as a floor: eigenvalues of the noisy X^T X below {eigen_floor:g} x lambda "
            f"= {eigen_floor * lam:.4g} raised to it")


def ssp_statement(
    calibration: Calibration, estimator: str, params: SSPParams, noise: SSPNoise, sens,
    n_samples: int, facts: list[str], *, alpha: float, result, public: list[str], label: str,
) -> str:
    """``privacy_report()`` of an SSP fit, in the shape of :func:`privacy_statement`."""
    lines = [f"{estimator}, trained with {label}"]
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
    lines += fact_lines(n_samples, ["the bounds B_x and B_y", *public], facts)
    return "\n".join(lines)
