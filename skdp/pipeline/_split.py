"""Splitting one privacy budget among a pipeline's DP steps, before any data is read.

The rule (``docs/specs/dp_preprocessing.md`` §6), public and the same for every data set:

1. Partition selection (``DPOneHotEncoder(categories='auto')``, ``DPSimpleImputer(strategy=
   'most_frequent')``) needs a (0, p) part: ``p = 0.1 delta`` in all, split equally among the
   steps that use it; everything else is accounted at ``delta' = (delta - p) / (1 - p)``.
2. Take the Gaussian-DP ``mu`` of one Gaussian mechanism that is ``(epsilon, delta')``-DP. All
   DP preprocessing together gets ``preprocessing_share`` (default 0.3) of ``mu^2``, split
   among the DP transformers in proportion to ``step_weights`` (default: equally). Gaussian
   mechanisms compose exactly (``mu^2`` adds up), so the preprocessing is one Gaussian
   mechanism of noise multiplier ``1 / mu_pre``.
3. The model is calibrated by its accountant (PLD by default) so that the preprocessing and
   its training *together* are ``(epsilon, delta')``-DP: it gets exactly the rest. Without a
   model, the preprocessing gets everything.

Why 0.3 (measured, ``benchmarks/bench_pipeline.py``, ``docs/benchmarks/pipeline.md``): the
preprocessing releases a few statistics per column once, DP-SGD thousands of noisy gradients,
so the model loses little (its noise grows by 14% at (1, 1e-5), 1000 steps at rate 0.01,
against 3.8% with 0.1; spec §6.2). But the bounds search is the most expensive statistic, and
with 0.1 it could not resolve the tails of 29 columns at 15,000 rows (RAND HIE: -0.025 R^2 at
epsilon 1). On all five raw tables 0.3 was at least as good as 0.1 (better on RAND HIE, Adult
at small epsilon and Ames), and 0.5 worse than 0.3 on Ames.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import dp_accounting

from .._defaults.preprocessing import PARTITION_SELECTION_DELTA_SHARE
from .._fit.allocation import ModelAllocation, StepAllocation
from ..accounting import Calibration, PrivacyPlan, Sampling, UnreachablePrivacyTarget
from ..budget._records import events_delta
from ..preprocessing._base import calibrate_gaussian
from ._layout import PipelineLayout

__all__ = ["PipelinePlan", "plan_pipeline", "resolve_weights"]

@dataclass(frozen=True)
class PipelinePlan:
    """What a private pipeline will release, and each step's share.

    ``calibration`` is that of the whole (the model's, composed after the preprocessing's
    Gaussian mechanisms; or the preprocessing's alone), at ``net_delta``; ``event`` its
    DpEvent; ``extra_delta`` the (0, p) part. The guarantee is ``(calibration.epsilon, delta)``.
    """

    epsilon: float
    delta: float
    extra_delta: float
    net_delta: float
    calibration: Calibration
    event: dp_accounting.DpEvent
    preprocessing_noise_multiplier: float | None
    steps: Mapping[str, StepAllocation]
    model: ModelAllocation | None
    preprocessing_share: float
    weights: Mapping[str, float]

    @property
    def is_private(self) -> bool:
        return math.isfinite(self.epsilon)


def resolve_weights(layout: PipelineLayout, step_weights: Mapping | None) -> dict[str, float]:
    """Each DP transformer's weight: 1, or as given in ``step_weights`` (by path)."""
    paths = [s.path for s in layout.transformers]
    given = dict(step_weights or {})
    unknown = sorted(set(given) - set(paths))
    if unknown:
        raise ValueError(
            f"step_weights names {unknown}, which are not DP transformers of this pipeline; "
            f"its DP transformers are {paths}"
        )
    weights = {}
    for path in paths:
        w = given.get(path, 1.0)
        if isinstance(w, bool) or not isinstance(w, int | float) or not (0 < w < math.inf):
            raise ValueError(f"step_weights[{path!r}] must be a positive number, got {w!r}")
        weights[path] = float(w)
    return weights


def plan_pipeline(
    layout: PipelineLayout,
    privacy: tuple[float, float],
    preprocessing_share: float,
    step_weights: Mapping | None,
    plan_model: Callable[[ModelAllocation], Calibration],
) -> PipelinePlan:
    """Split ``privacy`` among the pipeline's DP steps and calibrate the whole.

    ``plan_model(allocation)`` returns the model's calibration for an allocation (it runs the
    model's fit as far as calibration, on no data).
    """
    epsilon, delta = privacy
    weights = resolve_weights(layout, step_weights)
    selecting = [s.path for s in layout.transformers if s.uses_partition_selection]
    private = math.isfinite(epsilon)
    extra = PARTITION_SELECTION_DELTA_SHARE * delta if (selecting and private) else 0.0
    per_selecting = extra / len(selecting) if selecting else 0.0
    net = events_delta(delta, extra, 0.0) if private else 0.0
    total_weight = sum(weights.values())

    def allocations(noise_total: float) -> dict[str, StepAllocation]:
        out = {}
        for step in layout.transformers:
            share = weights[step.path] / total_weight
            z = noise_total / math.sqrt(share) if noise_total > 0 else 0.0
            p = per_selecting if step.path in selecting else 0.0
            out[step.path] = StepAllocation(step.path, z, p, delta if private else 0.0)
        return out

    if not private:
        model = None
        if layout.model is not None:
            model = ModelAllocation(layout.model.path, math.inf, 0.0, ())
            calibration = plan_model(model)
        else:
            calibration = Calibration.non_private(PrivacyPlan.constant(1, 1.0, Sampling.FULL_BATCH))
        return PipelinePlan(
            epsilon, 0.0, 0.0, 0.0, calibration, dp_accounting.NonPrivateDpEvent(), None,
            allocations(0.0), model, preprocessing_share, weights,
        )

    if layout.model is None:
        calibration = calibrate_gaussian(epsilon, net)
        steps = allocations(calibration.noise_multiplier)
        return PipelinePlan(
            epsilon, delta, extra, net, calibration, calibration.dp_event,
            calibration.noise_multiplier if steps else None, steps, None, 1.0, weights,
        )

    pre_noise = None
    if layout.transformers:
        mu_total = 1.0 / calibrate_gaussian(epsilon, net).noise_multiplier
        pre_noise = 1.0 / (math.sqrt(preprocessing_share) * mu_total)
    model = ModelAllocation(
        layout.model.path, epsilon, net, (pre_noise,) if pre_noise is not None else ()
    )
    try:
        calibration = plan_model(model)
    except UnreachablePrivacyTarget as exc:
        raise UnreachablePrivacyTarget(
            f"privacy=({epsilon:g}, {delta:g}) is too small to split between this pipeline's "
            f"preprocessing ({len(layout.transformers)} DP step(s), "
            f"preprocessing_share={preprocessing_share:g}) and its model: {exc} Nothing was "
            "charged."
        ) from exc
    return PipelinePlan(
        epsilon, delta, extra, net, calibration, calibration.dp_event, pre_noise,
        allocations(pre_noise or 0.0), model, preprocessing_share, weights,
    )
