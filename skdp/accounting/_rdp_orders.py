"""The RDP orders skdp evaluates its curves at, and the check of orders a caller passes."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant

__all__ = ["DEFAULT_ORDERS", "as_orders"]

#: The RDP orders of the curves skdp computes and of a new budget ledger: dp_accounting's default
#: grid, so that a curve composed with dp_accounting's RdpAccountant lines up order for order. A
#: ledger stores its orders, so that a later change of the defaults cannot change how its past
#: spends compose.
DEFAULT_ORDERS: tuple[float, ...] = tuple(
    float(a) for a in rdp_privacy_accountant.DEFAULT_RDP_ORDERS
)


def as_orders(orders: float | Sequence[float] | None) -> tuple[float, ...]:
    """``orders`` as a tuple of floats (:data:`DEFAULT_ORDERS` for ``None``).

    Raises
    ------
    ValueError
        If there are none, or one is not finite or not above 1.
    """
    if orders is None:
        return DEFAULT_ORDERS
    if np.ndim(orders) == 0:
        values: tuple[float, ...] = (float(orders),)  # type: ignore[arg-type]
    else:
        values = tuple(float(a) for a in orders)  # type: ignore[union-attr]
    if not values or not all(a > 1.0 and math.isfinite(a) for a in values):
        raise ValueError(f"RDP orders must be finite and > 1, got {orders!r}")
    return values
