"""The privacy statement of a fitted private pipeline."""

from __future__ import annotations

__all__ = ["pipeline_report"]

_ACCOUNTANTS = {"pld": "privacy loss distributions (PLD, dp_accounting)", "rdp": "Renyi DP (RDP)"}


def pipeline_report(pipeline, plan, fitted: dict, free_steps) -> str:
    """Guarantee, split and each step's statement, indented under the pipeline's."""
    name = type(pipeline).__name__
    if not plan.is_private:
        lines = [
            f"{name}: guarantee NONE. privacy=(inf, 0) fits every step without noise; the "
            "fitted pipeline may reveal anything about any row."
        ]
    else:
        epsilon, delta = pipeline.privacy_spent_
        calibration = plan.calibration
        accountant = _ACCOUNTANTS.get(calibration.accountant, calibration.accountant)
        lines = [
            f"{name}: ({epsilon:.4g}, {delta:.3g})-differential privacy for everything the "
            "fitted pipeline releases (the statistics of every DP step and the model)",
            "  unit of privacy: one row; neighbouring datasets: add or remove one row",
            f"  accountant: {accountant}, composing every step's mechanisms (dp_event_)",
        ]
        if plan.extra_delta > 0:
            lines.append(
                f"  delta: {plan.extra_delta:.3g} of it is partition selection's (0, p) part "
                f"(categories kept only if frequent); the mechanisms are accounted at "
                f"delta'={plan.net_delta:.4g}"
            )
        if plan.steps:
            pre = plan.preprocessing_noise_multiplier
            share = (
                f"{plan.preprocessing_share:g} of the budget (in Gaussian-DP mu^2)"
                if plan.model is not None
                else "the whole budget"
            )
            lines.append(
                f"  split: the DP preprocessing gets {share}, one Gaussian mechanism of noise "
                f"multiplier {pre:.4g} in all, shared among {len(plan.steps)} step(s) by weight "
                + ", ".join(f"{p}: {w:g}" for p, w in plan.weights.items())
                + ("; the model is calibrated to use exactly the rest" if plan.model else "")
            )
    for path in plan.steps:
        step = fitted.get(path)
        lines.append(f"  step {path!r}:")
        if step is None:
            lines.append("    not fitted (e.g. no column selected): released nothing")
            continue
        lines += ["    " + line for line in step.privacy_report().splitlines()]
    if free_steps:
        lines.append(
            "  data-independent steps (learn nothing from the data, cost nothing): "
            + ", ".join(repr(p) for p in free_steps)
        )
    if plan.model is not None and plan.model.path in fitted:
        lines.append(f"  model {plan.model.path!r}:")
        lines += ["    " + line for line in fitted[plan.model.path].privacy_report().splitlines()]
    return "\n".join(lines)
