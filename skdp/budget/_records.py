"""What the ledger stores and reports: RDP-curve spends, spend records and composed totals."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import dp_accounting

__all__ = ["RdpCurve", "Spend", "SpendRecord", "LedgerTotals"]


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


#: What one charge spends: a ``dp_accounting`` DpEvent, or an RDP curve.
Spend = dp_accounting.DpEvent | RdpCurve


@dataclass(frozen=True)
class SpendRecord:
    """One recorded spend, as returned by :meth:`PrivacyBudget.history`.

    Attributes
    ----------
    id : int
        Position in the ledger (increasing, never reused).
    timestamp : str
        When it was charged, UTC, ISO 8601.
    estimator : str
        Who spent it (usually the estimator's class name).
    params : dict
        The spender's parameters as stored (JSON values; ``repr()`` of anything else).
    event : DpEvent or RdpCurve
        What was spent.
    epsilon, delta : float
        The spend's own guarantee at the ledger's delta (composed alone).
    mechanism : str
        Free-text description given by the spender.
    """

    id: int
    timestamp: str
    estimator: str
    params: dict[str, Any]
    event: Spend
    epsilon: float
    delta: float
    mechanism: str = ""


@dataclass(frozen=True)
class LedgerTotals:
    """The composed guarantee of a set of spends, with how it was computed.

    Attributes
    ----------
    epsilon : float
        ``min(pld_epsilon, rdp_epsilon)``: both are valid upper bounds at ``delta``.
    delta : float
        The ledger's delta.
    n_spends : int
        Number of spends composed.
    pld_epsilon : float
        Epsilon from ``dp_accounting``'s PLD accountant (``inf`` if some spend is not supported).
    rdp_epsilon : float
        Epsilon from per-order RDP over the ledger's orders (``inf`` if some spend has no RDP
        bound).
    pld_interval : float or None
        The PLD value discretisation used (``None`` when the PLD accountant does not apply): a
        fresh ``PLDAccountant(value_discretization_interval=pld_interval)`` fed the same events
        in the same order reproduces ``pld_epsilon`` (to about 1e-10 relative).
    """

    epsilon: float
    delta: float
    n_spends: int
    pld_epsilon: float = math.inf
    rdp_epsilon: float = math.inf
    pld_interval: float | None = field(default=None)

    @property
    def accountant(self) -> str:
        """``'pld'`` or ``'rdp'``: which bound gave ``epsilon`` (``'none'`` when empty)."""
        if self.n_spends == 0:
            return "none"
        return "pld" if self.pld_epsilon <= self.rdp_epsilon else "rdp"
