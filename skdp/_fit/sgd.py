"""Glue between the estimators and the DP-SGD optimizers: the optimizer an estimator's
parameters name, the batch size and schedules they resolve to, and the recipe of its fit."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._defaults.sgd import auto_batch_size, resolve_learning_rate
from ..mechanisms._registry import is_full_batch_only, optimizer_class, optimizer_factory
from ..mechanisms._sgd.settings import SGDSettings
from ..mechanisms._sgd.tuned import TunedSGD
from .flow import FitRecipe

__all__ = ["resolve_batch_size", "schedule_settings", "sgd_recipe"]


def resolve_batch_size(
    batch_size, n_samples: int, optimizer: str | None = None, n_params: int | None = None
) -> int:
    """``'auto'`` -> :func:`~skdp._defaults.sgd.auto_batch_size`; an int is capped at n (full
    batch).

    A full-batch optimizer (diff2) trains on every row: ``'auto'`` is then ``n``, and a smaller
    explicit batch size is refused rather than ignored.
    """
    if optimizer is not None and is_full_batch_only(optimizer):
        if batch_size != "auto" and batch_size < n_samples:
            raise ValueError(
                f"optimizer={optimizer!r} is full-batch gradient descent: every round uses "
                f"every row, so batch_size={batch_size!r} (< n_samples={n_samples}) cannot be "
                "honoured; use batch_size='auto'"
            )
        return int(n_samples)
    if batch_size == "auto":
        return auto_batch_size(n_samples, n_params)
    return int(min(batch_size, n_samples))


def schedule_settings(estimator) -> dict:
    """The :class:`SGDSettings` fields of the estimator's step-size and noise schedules."""
    auto = getattr(optimizer_class(estimator.optimizer), "auto_learning_rate", "constant")
    return dict(
        learning_rate_schedule=resolve_learning_rate(estimator.learning_rate, auto),
        power_t=float(estimator.power_t),
        noise_schedule=estimator.noise_schedule,
        noise_decay=float(estimator.noise_decay),
    )


def sgd_recipe(
    estimator,
    settings: SGDSettings,
    tune: Callable,
    *,
    model,
    label_suffix: str = "",
    scale_noise: float | None = None,
    training_facts: list[str] | None = None,
) -> FitRecipe:
    """The recipe of a DP-SGD fit: the estimator's optimizer (in the variant its accountant
    can account) with ``settings``, re-tuned by ``tune`` once the noise is calibrated."""
    factory = optimizer_factory(estimator.optimizer, estimator.accountant)
    mechanism = TunedSGD(factory, settings, tune)
    return FitRecipe(
        mechanism,
        label=f"optimizer={estimator.optimizer!r} ({mechanism.description}{label_suffix})",
        model=model,
        target_dtype=model.loss.target_dtype,
        scale_noise=scale_noise,
        training_facts=list(training_facts or []),
        rows_dtype=np.float32,  # the engine trains in float32: the scaled rows' one copy
        work=float(settings.batch_size) * model.n_params,
    )
