"""Refusing input a private pipeline's steps would refuse, before the pipeline charges its budget.

A standalone skdp estimator validates its input (missing or infinite values, non-numeric
columns) before it charges anything. In a pipeline the model's input is what the preprocessing
makes of ``X``: a ``NaN`` in a column no step imputes reaches the model only after the DP
transformers have released their statistics, so the budget would be spent on a traceback.

So before charging, a copy of the preprocessing is fitted without noise on ``X`` and thrown
away, and the model's own validation is run on what it outputs. Only whether that raises is
used, and that depends on which values are missing or infinite and on the columns' types (what
a standalone estimator's validation reveals as well), not on the statistics the copy computes:
skdp's transformers keep, fill or encode a missing value the same way with or without noise.
"""

from __future__ import annotations

import warnings

from sklearn.base import clone
from sklearn.compose import TransformedTargetRegressor
from sklearn.pipeline import Pipeline

from .._fit.allocation import StepAllocation, attach_allocation
from ._layout import iter_dp_steps

__all__ = ["check_input_before_charging"]


def _before_model(steps: list[tuple[str, object]]) -> tuple[list[tuple[str, object]], object]:
    """``(steps that transform X before the model, the model)``: the pipeline's steps but the
    last, and those of a ``Pipeline`` (possibly inside a ``TransformedTargetRegressor``) that
    is the last step."""
    *before, (_, last) = steps
    if isinstance(last, TransformedTargetRegressor):
        last = last.regressor
    if isinstance(last, Pipeline):
        inner, model = _before_model(list(last.steps))
        return [*before, *inner], model
    return before, last


def check_input_before_charging(steps: list[tuple[str, object]], has_model: bool, X, y) -> None:
    """Raise what the pipeline's fit would raise on ``(X, y)`` for its input, before anything is
    charged: a DP transformer's refusal, or the model's refusal of the preprocessed ``X``.

    ``steps`` are the pipeline's ``(name, step)``; ``has_model``: whether the last one holds a
    DP model. The copy fitted here is exact (each DP transformer gets a non-private share) and
    discarded; nothing of it is released but whether it raised.
    """
    before, model = _before_model(steps) if has_model else (steps, None)
    if before:
        copy = clone(Pipeline(before))
        for path, step in iter_dp_steps(copy, "", fitted=False):
            attach_allocation(step, StepAllocation(path, 0.0, 0.0, 0.0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the real fit warns; the copy must not twice
            X = copy.fit_transform(X, y)
    if model is not None:
        clone(model)._validate_input(X)
