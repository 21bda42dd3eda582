"""Human-readable privacy statements."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._plan import Sampling

if TYPE_CHECKING:
    from ._calibration import Calibration
    from ._last_iterate_calibration import LastIterateCalibration

__all__ = ["fact_lines", "guarantee_lines", "last_iterate_lines", "privacy_statement",
           "standard_lines"]

_ACCOUNTANT_NAMES = {
    "pld": "privacy loss distributions (PLD, dp_accounting; tight)",
    "rdp": "Renyi DP (RDP, dp_accounting; a valid but looser bound)",
}


def guarantee_lines(calibration: Calibration) -> list[str]:
    """The report's "guarantee" and "accountant" lines of a private calibration."""
    interval = (
        f", value discretisation {calibration.pld_interval:g}"
        if calibration.pld_interval is not None
        else ""
    )
    return [
        f"  guarantee: ({calibration.epsilon:.4g}, {calibration.delta:.3g})-differential privacy",
        f"  accountant: {_ACCOUNTANT_NAMES.get(calibration.accountant, calibration.accountant)}"
        + interval,
    ]


def privacy_statement(
    calibration: Calibration | LastIterateCalibration,
    *,
    estimator: str,
    mechanism: str,
    clip_bound: float,
    n_samples: int,
    public_facts: list[str] | None = None,
    training_facts: list[str] | None = None,
    mechanism_lines: list[str] | None = None,
) -> str:
    """A short statement of what a fit proves, for ``privacy_report()``.

    ``training_facts`` are lines about how the model was trained that the guarantee relies on
    or that a reader needs (row rescaling, projection), listed under "training".
    ``mechanism_lines`` replace the generic description of the clipped, noised sums (and of the
    noise multipliers) for optimizers whose releases differ (adaclip, diff2).
    """
    lines = [f"{estimator}, trained with {mechanism}"]
    if not calibration.is_private:
        lines.append(
            "  guarantee: NONE. privacy=(inf, 0) trains without clipping or noise; the model may "
            "reveal anything about any row."
        )
        return "\n".join(lines)
    lines += calibration.statement_lines(
        clip_bound=clip_bound,
        n_samples=n_samples,
        public_facts=public_facts,
        training_facts=training_facts,
        mechanism_lines=mechanism_lines,
    )
    return "\n".join(lines)


def standard_lines(
    calibration: Calibration,
    *,
    clip_bound: float,
    n_samples: int,
    public_facts: list[str] | None = None,
    training_facts: list[str] | None = None,
    mechanism_lines: list[str] | None = None,
) -> list[str]:
    """The statement of a run accounted on its whole trajectory (PLD or RDP)."""
    plan = calibration.plan
    lines = [
        *guarantee_lines(calibration),
        "  unit of privacy: one row (its features and label); neighbouring datasets: "
        f"{plan.neighboring_relation.describe()}",
    ]
    if mechanism_lines is not None:
        lines += [f"  {line}" for line in mechanism_lines]
    else:
        lines += [
            f"  mechanism: Gaussian noise added to the sum of per-example gradients, each "
            f"clipped to L2 norm {clip_bound:.4g}",
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
    lines += fact_lines(n_samples, public_facts, training_facts)
    lines.append(
        "  all intermediate iterates may be released: the guarantee covers the whole training "
        "trajectory"
    )
    return lines


def fact_lines(n_samples: int, public_facts, training_facts) -> list[str]:
    """The "training:" lines, then what the guarantee treats as public."""
    facts = [f"the number of rows (n={n_samples})"] + list(public_facts or [])
    return [f"  training: {fact}" for fact in training_facts or []] + [
        "  treated as public: " + "; ".join(facts)
    ]


def last_iterate_lines(
    calibration: LastIterateCalibration,
    *,
    clip_bound: float,
    n_samples: int,
    public_facts: list[str] | None = None,
    training_facts: list[str] | None = None,
    mechanism_lines: list[str] | None = None,
) -> list[str]:
    """The statement of a last iterate accounted by Altschuler & Talwar's bound."""
    guarantee = calibration.guarantee
    assert guarantee is not None
    run = calibration.run
    if guarantee.binding == "last_iterate":
        binding = (
            "the last-iterate bound (tighter here than composing all steps, which gives "
            f"epsilon={guarantee.composition_epsilon:.4g})"
        )
    else:
        binding = (
            "the standard composition of all steps (the run is still within the burn-in of the "
            "last-iterate bound, which does not improve on it)"
        )
    equation = "B.3, strongly convex" if run.contraction < 1.0 else "B.2, convex"
    if run.full_batch:
        equation += ", and B.1 (full batch)"
    if run.full_batch:
        sampling = "full batch (every row in every step)"
    else:
        sampling = (
            f"fixed-size batches of exactly {run.batch_size} distinct rows drawn uniformly at "
            f"random, independently at every step;\n    sums divided by {run.batch_size}"
        )
    curvature = f"smoothness M={run.smoothness:.4g}"
    if run.strong_convexity > 0:
        curvature += f", strong convexity m={run.strong_convexity:.4g}"
    lines = [
        f"  guarantee: ({guarantee.epsilon:.4g}, {guarantee.delta:.3g})-differential privacy of "
        "the released (last) iterate",
        "  accountant: last-iterate bound of projected noisy SGD on convex losses, per Altschuler "
        f"& Talwar (2022), eq. {equation};\n    per-order minimum with the standard composition "
        "bound (Renyi DP, converted with dp_accounting)",
        f"  binding bound: {binding}",
        "  unit of privacy: one row (its features and label); neighbouring datasets: replace "
        "one row",
        f"  mechanism: Gaussian noise added to the sum of per-example gradients, each clipped to "
        f"L2 norm {clip_bound:.4g}",
        f"  noise multiplier: {guarantee.noise_multiplier:.4g} (noise std "
        f"{guarantee.noise_std:.4g} per coordinate of the clipped sum)",
        f"  steps: {run.n_steps} at constant step size {run.learning_rate:.4g} (at most 2/M = "
        f"{_two_over(run.smoothness)});\n    {sampling}",
        "  projection: every step ends with the projection of all parameters onto the L2 ball "
        f"of radius {run.radius:.4g}",
        f"  losses: convex, {curvature} for every possible row; {_burn_in(run)}",
    ]
    lines += fact_lines(n_samples, public_facts, training_facts)
    lines.append(
        "  ONLY the last iterate is covered: intermediate iterates, averages of iterates or "
        "losses during training are not released and not protected by this guarantee"
    )
    return lines


def _burn_in(run) -> str:
    if run.contraction < 1.0:
        return f"each step contracts distances by a factor {run.contraction:.6g}"
    epochs = run.burn_in_steps * run.batch_size / run.n_samples
    return (
        f"burn-in D n / (L eta) = {run.burn_in_steps} steps ({epochs:.4g} epochs), after "
        "which privacy stops growing"
    )


def _two_over(smoothness: float) -> str:
    return f"{2.0 / smoothness:.4g}" if smoothness > 0 else "inf"
