"""An RDP curve: the spend of a mechanism that dp_accounting has no event for (the
last-iterate bound), stated as Renyi-DP at a set of orders."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

__all__ = ["RdpCurve"]


@dataclass(frozen=True)
class RdpCurve:
    """A spend stated as a Renyi-DP curve, for mechanisms that ``dp_accounting`` has no event for.

    The mechanism is ``(orders[i], rdp[i])``-RDP for every ``i``. The ledger evaluates the curve
    at its own RDP orders: at an order between two given orders it uses the value at the next
    larger given order (valid because Renyi divergences do not decrease with the order), and
    above the largest given order the curve is treated as infinite (no bound).

    Parameters
    ----------
    orders : sequence of float
        Renyi orders, each finite and > 1, strictly increasing.
    rdp : sequence of float
        The RDP epsilon at each order, >= 0 (``inf`` allowed: no bound at that order).
    """

    orders: tuple[float, ...]
    rdp: tuple[float, ...]

    def __post_init__(self) -> None:
        orders = _float_tuple(self.orders, "orders")
        rdp = _float_tuple(self.rdp, "rdp")
        if not orders or len(orders) != len(rdp):
            raise ValueError(
                "an RDP curve needs as many rdp values as orders, and at least one; got "
                f"{len(orders)} orders and {len(rdp)} values"
            )
        if not all(math.isfinite(a) and a > 1.0 for a in orders):
            raise ValueError(f"RDP orders must be finite and > 1, got {orders}")
        if any(b <= a for a, b in zip(orders[:-1], orders[1:], strict=True)):
            raise ValueError(f"RDP orders must be strictly increasing, got {orders}")
        if any(math.isnan(v) or v < 0.0 for v in rdp):
            raise ValueError(f"RDP values must be >= 0 (inf allowed), got {rdp}")
        object.__setattr__(self, "orders", orders)
        object.__setattr__(self, "rdp", rdp)


def _float_tuple(values, name: str) -> tuple[float, ...]:
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of numbers, got {values!r}") from None
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in items):
        raise TypeError(f"{name} must be a sequence of real numbers, got {values!r}")
    return tuple(float(v) for v in items)
