"""Candidates of a private search: the parameter space, the DP step, public preprocessing.

Everything here is public: it depends on the estimator and the parameter space, never on data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.utils import get_tags

from .._base import BaseDPEstimator

__all__ = ["MANAGED_PARAMS", "check_space", "dp_step", "sample_candidate"]

# Set by the search on every trial and refit; not searchable.
MANAGED_PARAMS = ("privacy", "budget", "random_state", "accountant", "classes", "verbose")


def check_space(space, name: str, estimator) -> list[dict[str, list]]:
    """``space`` as a list of ``{param: list of values}``, checked against ``estimator``.

    Only finite lists are accepted: the per-trial privacy bound is the worst case over every
    value a trial may draw, which must be enumerable.
    """
    if isinstance(space, Mapping):
        space = [space]
    if not isinstance(space, Sequence) or isinstance(space, str) or not space:
        raise TypeError(f"{name} must be a dict or a non-empty list of dicts, got {space!r}")
    valid = set(estimator.get_params(deep=True))
    _, managed_prefix = dp_step(estimator)
    checked = []
    for grid in space:
        if not isinstance(grid, Mapping) or not grid:
            raise TypeError(f"{name} must hold non-empty dicts, got {grid!r}")
        out = {}
        for key, values in grid.items():
            if key not in valid:
                raise ValueError(
                    f"invalid parameter {key!r} in {name} for estimator "
                    f"{type(estimator).__name__}; valid parameters are "
                    f"{sorted(valid)}"
                )
            bare = key[len(managed_prefix):] if key.startswith(managed_prefix) else None
            if bare in MANAGED_PARAMS:
                raise ValueError(
                    f"{key!r} cannot be searched: the search sets it on every trial (privacy "
                    "from the search's own total budget, accountant='rdp', no budget, seeds "
                    "from the search's random_state)"
                )
            if hasattr(values, "rvs"):
                raise ValueError(
                    f"{name}[{key!r}] is a distribution; a private search needs a finite list "
                    "of values, because each trial's privacy cost is bounded by the worst "
                    "candidate, which must be enumerable. Pass e.g. "
                    "np.geomspace(low, high, 8) instead."
                )
            if isinstance(values, str) or not isinstance(values, Sequence | np.ndarray):
                raise TypeError(
                    f"{name}[{key!r}] must be a list of values, got {values!r}"
                )
            values = list(values)
            if not values:
                raise ValueError(f"{name}[{key!r}] is empty")
            out[key] = values
        checked.append(out)
    return checked


def support(space: list[dict[str, list]]) -> list[dict]:
    """Every candidate the search may try (the grid of each dict, concatenated)."""
    return list(ParameterGrid(space))


def sample_candidate(space: list[dict[str, list]], rng: np.random.Generator,
                     grid: list[dict] | None) -> dict:
    """One candidate drawn with public coins: uniformly from ``grid`` if given (grid search),
    else a dict of ``space`` uniformly, then each parameter uniformly from its list."""
    if grid is not None:
        return dict(grid[int(rng.integers(len(grid)))])
    chosen = space[int(rng.integers(len(space)))]
    return {key: values[int(rng.integers(len(values)))] for key, values in sorted(chosen.items())}


def dp_step(estimator) -> tuple[BaseDPEstimator, str]:
    """``(step, prefix)``: the DP estimator that trains, and the prefix of its parameter names.

    ``estimator`` is a skdp estimator, or a :class:`~sklearn.pipeline.Pipeline` whose final step
    is one and whose other steps learn nothing from the data (checked).
    """
    if isinstance(estimator, BaseDPEstimator):
        return estimator, ""
    if isinstance(estimator, Pipeline):
        for name, step in estimator.steps[:-1]:
            check_data_independent(step, name)
        name, final = estimator.steps[-1]
        step, prefix = dp_step(final)
        return step, f"{name}__{prefix}"
    raise TypeError(
        "the estimator of a private search must be an skdp estimator (e.g. DPLogisticRegression)"
        f" or a Pipeline ending in one, got {type(estimator).__name__}"
    )


def check_data_independent(step, name: str) -> None:
    """Refuse a preprocessing step that learns from the data it is fitted on.

    Each trial fits its pipeline on private rows, outside the accounting, so every step before
    the DP estimator must be data-independent: ``'passthrough'``, a ``FunctionTransformer``,
    a ``OneHotEncoder`` with public ``categories``, stateless transformers (scikit-learn tag
    ``requires_fit=False``, e.g. ``Normalizer``), and ``ColumnTransformer``/``Pipeline`` made of
    these (such as :func:`skdp.datasets.adult_preprocessor`).
    """
    if step is None or (isinstance(step, str) and step in ("passthrough", "drop")):
        return
    if isinstance(step, FunctionTransformer):
        return
    if isinstance(step, OneHotEncoder):
        if (
            not (isinstance(step.categories, str) and step.categories == "auto")
            and step.min_frequency is None
            and step.max_categories is None
            and step.handle_unknown != "error"
        ):
            return
        raise ValueError(
            f"step {name!r}: a OneHotEncoder fitted on private data learns the categories "
            "present (or raises on unknown ones); give public categories=..., "
            "handle_unknown='ignore' and no min_frequency/max_categories"
        )
    if isinstance(step, ColumnTransformer):
        for sub_name, sub, _ in step.transformers:
            check_data_independent(sub, f"{name}/{sub_name}")
        check_data_independent(step.remainder, f"{name}/remainder")
        return
    if isinstance(step, Pipeline):
        for sub_name, sub in step.steps:
            check_data_independent(sub, f"{name}/{sub_name}")
        return
    if not get_tags(step).requires_fit:
        return
    raise ValueError(
        f"step {name!r} ({type(step).__name__}) learns from the data it is fitted on (e.g. a "
        "StandardScaler's means and variances), which each trial would do on private rows "
        "outside the privacy accounting. Use data-independent preprocessing (public constants: "
        "FunctionTransformer, OneHotEncoder with public categories, skdp.datasets' "
        "preprocessors), or fit the step on public data and pass the transformed data."
    )
