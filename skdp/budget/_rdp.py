"""Per-order RDP of the ledger's spends: curves at the ledger's orders, and their epsilon.

RDP applies when every spend has an RDP bound at the ledger's orders: a DpEvent that
``dp_accounting``'s ``RdpAccountant`` supports, or an :class:`RdpCurve`. Per-order RDP adds up
under composition, so the composed curve is the sum of the spends' curves. Under replace-one,
the RDP accountant gets the event equivalent to the one the PLD accountant reads (see
:mod:`skdp.accounting._relations`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant

from ..accounting._gaussian_rdp import VectorisedRdpAccountant
from ..accounting._plan import NeighboringRelation
from ..accounting._relations import rdp_equivalent
from ._codec import encode_spend
from ._records import RdpCurve
from ._sync import Memo

__all__ = ["RdpCurves", "curve_epsilon", "curve_on_orders"]

_MEMO_SIZE = 4096


def curve_on_orders(curve: RdpCurve, orders: Sequence[float]) -> np.ndarray:
    """The RDP curve as an upper bound at ``orders``.

    At an order ``a`` the bound is the curve's value at its smallest order ``>= a`` (Renyi
    divergences do not decrease with the order), and ``inf`` above the curve's largest order.
    """
    given = np.asarray(curve.orders, dtype=np.float64)
    values = np.asarray(curve.rdp, dtype=np.float64)
    index = np.searchsorted(given, np.asarray(orders, dtype=np.float64), side="left")
    out = np.full(len(orders), np.inf)
    inside = index < len(given)
    out[inside] = values[index[inside]]
    return out


def curve_epsilon(orders: np.ndarray, rdp: np.ndarray | None, delta: float) -> float:
    """The epsilon at ``delta`` of the curve ``rdp`` (``inf``: no curve, or no delta left)."""
    if rdp is None or delta <= 0.0:  # no bound, or the extra deltas leave nothing
        return math.inf
    epsilon, _ = rdp_privacy_accountant.compute_epsilon(orders, rdp, delta)
    return float(epsilon)


class RdpCurves:
    """The RDP curves of DpEvents at one ledger's orders, memoised per process.

    Memos are keyed by the events' canonical JSON: repeated plans (grid search, CV folds) and
    spends already seen are computed once.
    """

    def __init__(self, neighboring_relation: NeighboringRelation, orders: np.ndarray) -> None:
        self.neighboring_relation = neighboring_relation
        self.orders = orders
        self._probe = self._new_accountant()
        self._memo: Memo[str, np.ndarray | None] = Memo(_MEMO_SIZE)

    def of_event(self, event: dp_accounting.DpEvent, key: str) -> np.ndarray | None:
        """The curve of ``event`` (canonical encoding ``key``), ``None`` if ``RdpAccountant``
        does not support it."""
        found, rdp = self._memo.get(key)
        if not found:
            supported = self._probe.supports(event)
            rdp = self.curve(event) if supported else None
            self._memo.put(key, rdp)
        return rdp

    def curve(self, event: dp_accounting.DpEvent, key: str | None = None) -> np.ndarray:
        """Per-order RDP of a supported event, as ``RdpAccountant`` adds it up.

        Compositions are split as the accountant splits them (``count`` times the inner event,
        the sum over a list), and each part is memoised: plans that differ only in their number
        of steps (a grid over ``max_iter``) share the expensive part.
        """
        if key is not None:
            found, rdp = self._memo.get(key)
            if found and rdp is not None:
                return rdp
        if isinstance(event, dp_accounting.SelfComposedDpEvent):
            rdp = event.count * self.curve(event.event, encode_spend(event.event))
        elif isinstance(event, dp_accounting.ComposedDpEvent):
            rdp = np.zeros_like(self.orders)
            for part in event.events:
                rdp = rdp + self.curve(part, encode_spend(part))
        else:
            rdp = self._leaf_curve(event)
        if key is not None:
            self._memo.put(key, rdp)
        return rdp

    def _leaf_curve(self, event: dp_accounting.DpEvent) -> np.ndarray:
        # Under replace-one, the RDP accountant must read the event as the PLD one does.
        equivalent = rdp_equivalent(event, self.neighboring_relation)
        # The accountant computes the (Poisson-sampled) Gaussian, DP-SGD's step, with numpy
        # (VectorisedRdpAccountant: dp_accounting's values, tests/accounting/test_gaussian_rdp.py).
        accountant = self._new_accountant().compose(equivalent)
        # dp_accounting has no public accessor for the per-order RDP; `_rdp` has held it since
        # the first release. The tests compare the ledger with fresh accountants, so a change
        # there is caught.
        rdp = getattr(accountant, "_rdp", None)
        if not isinstance(rdp, np.ndarray) or rdp.shape != self.orders.shape:
            raise RuntimeError(
                "this version of dp_accounting does not expose per-order RDP as skdp expects; "
                "please report it to skdp"
            )
        return np.array(rdp, dtype=np.float64)

    def _new_accountant(self) -> VectorisedRdpAccountant:
        return VectorisedRdpAccountant(
            orders=list(self.orders),
            neighboring_relation=self.neighboring_relation.to_dp_accounting(),
        )
