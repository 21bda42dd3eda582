"""The fit flow every DP estimator shares: plan, calibrate, charge, run, record (DESIGN §2).

An estimator validates its input, then hands the flow a recipe: the mechanism that trains it
(:class:`~skdp.mechanisms.Mechanism`) and the public facts around it, decided from public
quantities only once the privacy target is known. The flow does the rest, the same way for
every mechanism and estimator, and never asks which mechanism it holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .._defaults.threads import fit_threads
from .._engine._device import resolve_device
from .._utils.config import get_config
from .._utils.threads import limited_threads
from .._utils.validation import check_privacy, warn_if_delta_large
from ..mechanisms._base import (
    Mechanism,
    PlanNotComposable,
    Release,
    RunInput,
    StatementFacts,
)
from .allocation import ModelAllocation, take_allocation
from .charging import charge_budget, resolve_budget
from .column_scales import warn_if_columns_unbalanced
from .leaks import warn_if_preprocessed_without_dp
from .planned import PlannedSpend, plan_only

__all__ = ["FitRecipe", "PrivacyTarget", "private_fit"]


@dataclass(frozen=True)
class PrivacyTarget:
    """The ``(epsilon, delta)`` a fit calibrates to: the estimator's ``privacy``, or its share
    of a private pipeline (``in_pipeline``)."""

    epsilon: float
    delta: float
    in_pipeline: bool = False

    @property
    def private(self) -> bool:
        return not math.isinf(self.epsilon)


@dataclass
class FitRecipe:
    """What an estimator decides from public quantities before its fit is planned.

    Attributes
    ----------
    mechanism : Mechanism
        What trains the model.
    label : str
        How reports and ledger records name it (``"optimizer='noisy_sgd' (DP-SGD)"``).
    model : object or None
        The model the mechanism trains (``None`` for closed-form mechanisms).
    target_dtype : torch.dtype
        The dtype of the targets the model's loss takes.
    scale_noise : float or None
        The noise multiplier of the estimator's own search for a public scale of the data
        (one Gaussian mechanism on the same rows, composed with the training), or ``None``.
    apply_scale : bool
        Whether the estimator puts the data on a public scale after the charge (with a search,
        or from a public target range alone).
    training_facts : list of str
        How the data is trained on, where the guarantee relies on it (for the report).
    scale_rows : bool
        Whether the flow puts the rows on the public scale before the run (``False``: the
        mechanism applies ``RunInput.scale`` itself, e.g. block by block in one pass).
    rows_dtype : numpy dtype
        The dtype of the scaled rows (the mechanism's compute dtype: one working copy).
    work : float or None
        The size of one step's computation, in multiply-adds (rows per step times parameters
        for DP-SGD, one pass for sufficient statistics), from which ``n_threads='auto'`` picks
        the fit's threads; ``None``: unknown (one thread).
    """

    mechanism: Mechanism
    label: str
    model: Any = None
    target_dtype: torch.dtype = torch.float32
    scale_noise: float | None = None
    apply_scale: bool = True
    training_facts: list[str] = field(default_factory=list)
    scale_rows: bool = True
    rows_dtype: Any = np.float64
    work: float | None = None


def private_fit(
    estimator, X, targets: np.ndarray, build: Callable[[PrivacyTarget], FitRecipe]
) -> Release:
    """Plan, calibrate, charge, run and record ``estimator``'s fit; returns the release.

    ``X`` and ``targets`` are validated; ``build`` makes the recipe from the privacy target
    (public quantities only). Records ``privacy_spent_``, ``dp_event_``, ``noise_multiplier_``,
    ``device_``, the release's attributes and the privacy report on ``estimator``.
    """
    name = type(estimator).__name__
    # Inside a private pipeline the pipeline has planned and charged the whole fit, and hands
    # this step its target (skdp/_fit/allocation.py).
    allocation = take_allocation(estimator)
    if allocation is not None:
        if not isinstance(allocation, ModelAllocation):  # pragma: no cover - a pipeline bug
            raise RuntimeError(f"{name} was given a DP transformer's allocation (bug)")
        target = PrivacyTarget(allocation.epsilon, allocation.delta, in_pipeline=True)
    else:
        target = PrivacyTarget(*check_privacy(estimator.privacy))
        if not plan_only():
            warn_if_preprocessed_without_dp(estimator)
    device = resolve_device(estimator.device)
    recipe = build(target)
    if plan_only():  # no training: the caller's threads are left alone
        return _planned_fit(estimator, X, targets, recipe, target, allocation, device)
    with limited_threads(fit_threads(get_config()["n_threads"], recipe.work)):
        return _planned_fit(estimator, X, targets, recipe, target, allocation, device)


def _planned_fit(estimator, X, targets, recipe: FitRecipe, target: PrivacyTarget, allocation,
                 device) -> Release:
    """Steps 1-5 of :func:`private_fit` (with the fit's threads set)."""
    name = type(estimator).__name__
    mechanism = recipe.mechanism
    check_input = getattr(mechanism, "check_input", None)
    if check_input is not None:
        check_input(X, targets)
    if target.private and allocation is None:  # a pipeline warns with its own delta
        warn_if_delta_large(target.delta, X.shape[0])
    if not target.private and not plan_only():  # looking at X is free only here
        warn_if_columns_unbalanced(X, name)

    # 1. Plan, from public quantities only, composed after a pipeline's preprocessing and the
    # estimator's own scale search.
    plan = mechanism.plan()
    own_priors = (recipe.scale_noise,) if recipe.scale_noise else ()
    try:
        if allocation is not None:
            plan = plan.with_priors(allocation.prior_noise_multipliers)
        if own_priors:
            plan = plan.with_priors((*plan.prior_noise_multipliers, *own_priors))
    except PlanNotComposable as error:
        raise ValueError(f"{name} {error}") from None

    # 2. Calibrate the noise to the target (no data is read).
    calibration = mechanism.calibrate(plan, target.epsilon, target.delta, estimator.accountant)
    spend = calibration.spend
    if plan_only():
        raise PlannedSpend(calibration, spend)

    # 3. Charge: the ledger is asked before the data is touched; once charged, a fit stays
    # charged. A pipeline's model records what it alone released (the pipeline the composition).
    training_facts = list(recipe.training_facts)
    if allocation is None:
        _charge(estimator, calibration, spend, recipe.label)
    elif calibration.is_private:
        calibration = calibration.alone(own_priors)
        spend = calibration.spend
        training_facts = [_pipeline_line(allocation), *training_facts]

    # 4. Run, on the public scale (found now, after the charge).
    scale, scale_facts = None, []
    if recipe.apply_scale:
        X, targets, scale, scale_facts = estimator._apply_public_scale(
            X, targets, recipe.scale_noise, private=target.private, rows=recipe.scale_rows,
            dtype=recipe.rows_dtype,
        )
    data = RunInput(
        X, targets, recipe.model, recipe.target_dtype, device,
        random_state=estimator.random_state, scale=scale, verbose=estimator.verbose,
    )
    release = mechanism.run(data, calibration)

    # 5. Record. The statement is fixed at fit time, so a later set_params cannot make it wrong.
    facts = StatementFacts(
        estimator=name, label=recipe.label, n_samples=X.shape[0],
        public=estimator._public_facts(), training=[*scale_facts, *training_facts],
    )
    estimator._privacy_report = mechanism.statement(calibration, release, facts)
    estimator.privacy_spent_ = (calibration.epsilon, calibration.delta)
    estimator.dp_event_ = spend
    estimator.noise_multiplier_ = calibration.noise_multiplier
    for attribute, value in release.attributes.items():
        setattr(estimator, attribute, value)
    estimator.device_ = str(device)
    return release


def _charge(estimator, calibration, spend, label: str) -> None:
    params = {k: v for k, v in estimator.get_params(deep=False).items() if k != "budget"}
    charge_budget(
        resolve_budget(estimator.budget),
        spend,
        owner=type(estimator).__name__,
        params=params,
        mechanism=label,
        is_private=calibration.is_private,
        relation=calibration.neighboring_relation,
        relation_hint=f" with accountant={estimator.accountant!r}",
    )


def _pipeline_line(allocation: ModelAllocation) -> str:
    priors = ", ".join(f"{z:.4g}" for z in allocation.prior_noise_multipliers) or "none"
    return (
        f"a step of a private pipeline ({allocation.path!r}): its noise was calibrated so that "
        "the pipeline's preprocessing (Gaussian mechanisms, noise multiplier "
        f"{priors}) and this training together meet the pipeline's privacy; the guarantee "
        "stated for this model is this training's alone (the pipeline's privacy_report() "
        "states the composition)"
    )
