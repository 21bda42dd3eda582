"""Human-readable privacy statements."""

from __future__ import annotations

from ._calibration import Calibration
from ._plan import Sampling

__all__ = ["privacy_statement"]

_ACCOUNTANT_NAMES = {
    "pld": "privacy loss distributions (PLD, dp_accounting; tight)",
    "rdp": "Renyi DP (RDP, dp_accounting; a valid but looser bound)",
}


def privacy_statement(
    calibration: Calibration,
    *,
    estimator: str,
    mechanism: str,
    clip_bound: float,
    n_samples: int,
    public_facts: list[str] | None = None,
) -> str:
    """A short statement of what a fit proves, for ``privacy_report()``."""
    lines = [f"{estimator}, trained with {mechanism}"]
    if not calibration.is_private:
        lines.append(
            "  guarantee: NONE. privacy=(inf, 0) trains without clipping or noise; the model may "
            "reveal anything about any row."
        )
        return "\n".join(lines)
    plan = calibration.plan
    lines += [
        f"  guarantee: ({calibration.epsilon:.4g}, {calibration.delta:.3g})-differential privacy",
        f"  accountant: {_ACCOUNTANT_NAMES.get(calibration.accountant, calibration.accountant)}"
        + (
            f", value discretisation {calibration.pld_interval:g}"
            if calibration.pld_interval is not None
            else ""
        ),
        "  unit of privacy: one row (its features and label); neighbouring datasets: "
        f"{plan.neighboring_relation.describe()}",
        f"  mechanism: Gaussian noise added to the sum of per-example gradients, each clipped to "
        f"L2 norm {clip_bound:.4g}",
        f"  noise multiplier: {calibration.noise_multiplier:.4g} (noise std "
        f"{calibration.noise_multiplier * clip_bound:.4g} per coordinate of the clipped sum)",
    ]
    for count, sigma in plan.step_noise_multipliers(calibration.noise_multiplier):
        if len(plan.groups) > 1:
            lines.append(f"    {count} steps at noise multiplier {sigma:.4g}")
    rate = max(group.sampling_rate for group in plan.groups)
    if plan.sampling is Sampling.POISSON:
        sampling = (
            f"Poisson sampling, each row in each step with probability {rate:.4g}\n"
            f"    (expected batch {rate * n_samples:.1f}); sums divided by the expected batch size"
        )
    else:
        sampling = "full batch (every row in every step)"
    lines.append(f"  steps: {plan.n_steps}; {sampling}")
    facts = [f"the number of rows (n={n_samples})"] + list(public_facts or [])
    lines.append("  treated as public: " + "; ".join(facts))
    lines.append(
        "  all intermediate iterates may be released: the guarantee covers the whole training "
        "trajectory"
    )
    return "\n".join(lines)
