"""Checks of what a :class:`~skdp.budget.PrivacyBudget` is given, before any file is touched."""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import dp_accounting

from ..accounting._plan import NeighboringRelation

__all__ = ["absolute_path", "check_labels", "check_limits", "check_relation", "check_timeout"]


def absolute_path(path: str | os.PathLike[str]) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a string, a path-like object or None, got {path!r}")
    return os.path.abspath(os.fsdecode(path))


def check_limits(epsilon: Any, delta: Any) -> tuple[float, float]:
    """A budget's ``(epsilon, delta)`` as floats: epsilon positive and finite, delta in (0, 1)."""
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {value!r}")
    epsilon, delta = float(epsilon), float(delta)
    if not (0.0 < epsilon < math.inf):
        raise ValueError(f"a privacy budget needs a positive, finite epsilon, got {epsilon}")
    if not 0.0 < delta < 1.0:
        raise ValueError(
            f"delta must be in the open interval (0, 1), got {delta}; a common choice is 1e-5 "
            "or smaller than 1/n_samples"
        )
    return epsilon, delta


def check_relation(relation: Any) -> NeighboringRelation:
    """skdp's relation named by ``relation`` (skdp's, dp_accounting's, or its value)."""
    try:
        if isinstance(relation, dp_accounting.NeighboringRelation):
            return NeighboringRelation[relation.name]
        return NeighboringRelation(relation)
    except (KeyError, ValueError):
        options = ", ".join(repr(r.value) for r in NeighboringRelation)
        raise ValueError(
            f"neighboring_relation must be one of {options}, got {relation!r}"
        ) from None


def check_timeout(timeout: Any) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not (
        0.0 <= float(timeout) < math.inf
    ):
        raise ValueError(f"timeout must be a non-negative number of seconds, got {timeout!r}")
    return float(timeout)


def check_labels(estimator: Any, mechanism: Any) -> None:
    """What a charge records about its spender: a non-empty ``estimator``, a ``mechanism``
    string."""
    if not isinstance(estimator, str) or not estimator:
        raise TypeError(f"estimator must be a non-empty string, got {estimator!r}")
    if not isinstance(mechanism, str):
        raise TypeError(f"mechanism must be a string, got {mechanism!r}")
