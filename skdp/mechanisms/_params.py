"""``optimizer_params``: the hyperparameters that belong to one optimizer.

Each optimizer with its own hyperparameters declares them as a frozen dataclass whose fields
have defaults and whose ``__post_init__`` validates them; :func:`parse_optimizer_params` builds
it from the estimator's ``optimizer_params`` dict with errors that say what is accepted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from numbers import Real
from typing import Any

__all__ = ["parse_optimizer_params", "check_unit_interval", "check_positive"]


def parse_optimizer_params(params_class, given: Mapping[str, Any] | None, optimizer: str):
    """``params_class(**given)``, refusing unknown names with the list of accepted ones.

    ``params_class=None`` means the optimizer takes no parameters of its own.
    """
    given = {} if given is None else given
    if not isinstance(given, Mapping):
        raise TypeError(
            f"optimizer_params must be a dict or None, got {type(given).__name__}"
        )
    accepted = (
        [] if params_class is None else [f.name for f in dataclasses.fields(params_class)]
    )
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        what = f"accepts {accepted}" if accepted else "takes no optimizer_params"
        raise ValueError(
            f"optimizer={optimizer!r} {what}; got unknown optimizer_params {unknown}"
        )
    return None if params_class is None else params_class(**given)


def is_number(value) -> bool:
    # numbers.Real admits numpy scalars (from np.linspace grids); bool is not a setting.
    return isinstance(value, Real) and not isinstance(value, bool)


def check_unit_interval(name: str, value: float, *, open_low: bool = False) -> None:
    low_ok = is_number(value) and (value > 0.0 if open_low else value >= 0.0)
    if not (low_ok and value <= 1.0):
        interval = "(0, 1]" if open_low else "[0, 1]"
        raise ValueError(f"optimizer_params[{name!r}] must be in {interval}, got {value!r}")


def check_positive(name: str, value: float) -> None:
    if not (is_number(value) and 0.0 < value < float("inf")):
        raise ValueError(
            f"optimizer_params[{name!r}] must be a positive finite number, got {value!r}"
        )
