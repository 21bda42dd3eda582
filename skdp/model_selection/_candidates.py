"""Candidates of a private search: the parameter space and its draws, the DP step, public
preprocessing.

Everything here is public: it depends on the estimator and the parameter space, never on data
(the draws use the search's public coins).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline

from .._fit.estimator import BaseDPEstimator
from ..pipeline import NotPrivateError, PrivatePipeline
from ..pipeline._layout import iter_dp_steps, layout_of

__all__ = [
    "MANAGED_PARAMS", "SearchSpace", "SearchTarget", "check_data_independent", "check_space",
    "search_target", "support",
]

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
    target = search_target(estimator)
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
            if target.managed(key):
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


@dataclass(frozen=True)
class SearchSpace:
    """A checked parameter space and every candidate in it (``candidates``, in grid order).

    The draws use public coins only; the plan bounds every trial by the worst of
    ``candidates``, so a draw may return any of them and nothing else.
    """

    grids: list[dict[str, list]]
    candidates: list[dict]

    @classmethod
    def checked(cls, space, name: str, estimator) -> SearchSpace:
        """``space`` (the search's ``name`` parameter) checked against ``estimator``."""
        grids = check_space(space, name, estimator)
        return cls(grids, support(grids))

    def every_candidate(self) -> list[dict]:
        """Every candidate once, in grid order (copies: a trial never edits the space)."""
        return [dict(c) for c in self.candidates]

    def draw_point(self, rng: np.random.Generator) -> dict:
        """One candidate drawn uniformly from the grid's points."""
        return dict(self.candidates[int(rng.integers(len(self.candidates)))])

    def draw_by_parameter(self, rng: np.random.Generator) -> dict:
        """One candidate drawn as ``RandomizedSearchCV`` draws from lists: a dict of the space
        uniformly, then each parameter (in sorted order) uniformly from its list."""
        chosen = self.grids[int(rng.integers(len(self.grids)))]
        return {key: values[int(rng.integers(len(values)))]
                for key, values in sorted(chosen.items())}


@dataclass(frozen=True)
class SearchTarget:
    """Where a search sets what it manages on a candidate estimator.

    ``model`` is the DP estimator that trains and ``model_prefix`` the prefix of its parameter
    names (accountant, classes, verbose); ``privacy_prefix`` is where ``privacy`` and
    ``budget`` live (the private pipeline itself, or the model); ``seed_params`` are the
    ``random_state`` parameters of every DP step, which get fresh seeds in every trial (reusing
    a seed across fits on overlapping rows would correlate their noise).
    """

    model: BaseDPEstimator
    model_prefix: str
    privacy_prefix: str
    seed_params: tuple[str, ...]

    def managed(self, key: str) -> bool:
        """Whether the search sets parameter ``key`` itself."""
        if key in self.seed_params:
            return True
        for prefix in {self.model_prefix, self.privacy_prefix}:
            if key.startswith(prefix) and key[len(prefix):] in MANAGED_PARAMS:
                return True
        return False


def search_target(estimator) -> SearchTarget:
    """The :class:`SearchTarget` of ``estimator``: a skdp estimator, a private pipeline, or a
    scikit-learn ``Pipeline`` whose steps before the final skdp estimator learn nothing from the
    data (checked)."""
    if isinstance(estimator, BaseDPEstimator):
        return SearchTarget(estimator, "", "", ("random_state",))
    if isinstance(estimator, PrivatePipeline):
        layout = layout_of(list(estimator.steps), input_is_sparse=False)
        if layout.model is None:
            raise TypeError(
                "the private pipeline of a search must end in an skdp estimator that is scored"
            )
        seeds = tuple(f"{path}__random_state" for path, _ in iter_dp_steps(estimator, "", False))
        return SearchTarget(layout.model.step, f"{layout.model.path}__", "", seeds)
    if isinstance(estimator, Pipeline):
        for name, step in estimator.steps[:-1]:
            check_data_independent(step, name)
        name, final = estimator.steps[-1]
        inner = search_target(final)
        prefix = f"{name}__{inner.model_prefix}"
        return SearchTarget(inner.model, prefix, prefix, (f"{prefix}random_state",))
    raise TypeError(
        "the estimator of a private search must be an skdp estimator (e.g. DPLogisticRegression),"
        " a private pipeline (skdp.pipeline.make_private_pipeline) or a Pipeline ending in one, "
        f"got {type(estimator).__name__}"
    )


def check_data_independent(step, name: str) -> None:
    """Refuse a preprocessing step that learns from the data it is fitted on.

    Each trial fits its pipeline on private rows, so every step of a plain ``Pipeline`` before
    the DP estimator must be data-independent (the rules of :mod:`skdp.pipeline`'s layout:
    ``FunctionTransformer``, encoders with public categories, stateless transformers, and
    containers of these). DP transformers belong in a private pipeline, whose budget the search
    accounts.
    """
    try:
        layout = layout_of([(name, step)], input_is_sparse=False)
    except NotPrivateError as exc:
        raise ValueError(
            f"{exc} Each trial of the search would fit it on private rows outside the "
            "accounting: use data-independent preprocessing, or skdp's DP transformers inside "
            "skdp.pipeline.make_private_pipeline (the search accounts their budget)."
        ) from None
    if layout.transformers or layout.model is not None:
        raise ValueError(
            f"step {name!r} holds skdp DP steps inside a plain Pipeline, where each would spend "
            "its own privacy outside the search's accounting; build the pipeline with "
            "skdp.pipeline.make_private_pipeline instead"
        )
