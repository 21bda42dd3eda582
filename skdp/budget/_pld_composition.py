"""Composed privacy-loss distributions of the ledger's spends.

PLD applies when ``dp_accounting``'s PLD accountant supports every spend. The spends are
composed one by one, in ledger order, as a fresh ``PLDAccountant`` fed the same events would
compose them, with a value discretisation chosen from the total (:func:`pld_interval_for`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import dp_accounting
from dp_accounting.pld import privacy_loss_distribution

from ..accounting._accountants import (
    FINEST_RELATIVE,
    make_accountant,
    pld_intervals,
    quiet_accounting_logs,
)
from ..accounting._connect_dots import compose as compose_plds
from ..accounting._plan import NeighboringRelation
from ._records import Spend
from ._states import PldState, RowMark
from ._sync import Memo

__all__ = ["PldComposer", "pld_interval_for"]

_MIN_INTERVAL_LOG2 = -20  # 2**-20 ~ 1e-6, the finest interval pld_intervals ever asks for
_MEMO_SIZE = 32  # a fine PLD can take about a megabyte

# A spend's PLD at one interval; None when the spend is not private (infinite epsilon).
_EventPld = privacy_loss_distribution.PrivacyLossDistribution | None


def pld_interval_for(reference_epsilon: float) -> float:
    """PLD value discretisation for composing a total of about ``reference_epsilon``.

    ``epsilon / 10^4`` (:func:`skdp.accounting._accountants.pld_intervals` with
    ``FINEST_RELATIVE``), rounded down to a power of two. A ledger composes the PLDs of up to
    thousands of separate spends, each adding its rounding, so it keeps this finer rule where
    calibrating one plan uses ``epsilon / 4000`` (at 1/4000 a ledger of 1,110 DP-SGD spends read
    116.4 instead of 96.2 at delta 0.5). Why relative to the total and not to
    the budget: the pessimistic rounding error adds up over every composed step, so the interval
    a budget of 10 would suggest (1e-3) overstates a total of 0.075 by a third (see
    ``pld_intervals``). Why a power of two: the interval only changes when the total doubles, so
    the composed state can be reused between spends, and every process picks the same interval
    for the same spends.
    """
    target = pld_intervals(max(reference_epsilon, 0.0), fine_relative=FINEST_RELATIVE)[1]
    return math.ldexp(1.0, max(math.floor(math.log2(target)), _MIN_INTERVAL_LOG2))


class PldComposer:
    """Composes PLDs for one ledger: its neighbouring relation, at its delta.

    The composed PLD is built as ``dp_accounting``'s ``PLDAccountant`` builds it, with one
    difference: each spend's own PLD is made once per process (by a one-spend ``PLDAccountant``)
    and memoised, because making a fine PLD costs far more than composing it. The result equals
    a fresh ``PLDAccountant`` fed the same events to about 1e-10 relative (the extra composition
    with the identity PLD truncates a further 1e-15 of tail mass).
    """

    def __init__(self, neighboring_relation: NeighboringRelation, delta: float) -> None:
        self.neighboring_relation = neighboring_relation
        self.delta = delta
        self._probe = make_accountant("pld", neighboring_relation)
        self._memo: Memo[tuple[str, float], _EventPld] = Memo(_MEMO_SIZE)

    def supports(self, event: dp_accounting.DpEvent) -> bool:
        """Whether ``dp_accounting``'s PLD accountant supports ``event``."""
        return self._probe.supports(event)

    def extend(
        self,
        pld_state: PldState | None,
        spends: Sequence[tuple[Spend, str]],
        interval: float,
        mark: RowMark,
    ) -> PldState:
        """``pld_state`` (``None``: no rows) composed with ``spends`` at ``interval``.

        ``spends`` are ``(spend, key)`` pairs of the inner spends (without extra delta), in
        ledger order.
        """
        if pld_state is None:
            pld = privacy_loss_distribution.identity(interval)
        elif pld_state.interval != interval:
            raise ValueError("a PLD state can only be extended at its own interval")
        else:
            pld = pld_state.pld
        with quiet_accounting_logs():
            for spend, key in spends:
                if pld is None:
                    break  # some earlier spend is not private: the total stays infinite
                event_pld = self.event_pld(spend, key, interval)
                # dp_accounting's compose, bit for bit, with numpy's tail truncation.
                pld = None if event_pld is None else compose_plds(pld, event_pld)
        return PldState(mark, interval, pld)

    def event_pld(self, spend: Spend, spend_key: str, interval: float) -> _EventPld:
        """The PLD of one spend at ``interval``, memoised (``None``: the spend is not
        private)."""
        key = (spend_key, interval)
        found, result = self._memo.get(key)
        if found:
            return result
        accountant = make_accountant("pld", self.neighboring_relation, pld_interval=interval)
        accountant.compose(spend)
        if not math.isfinite(accountant.get_epsilon(self.delta)):
            result = None  # not private (e.g. zero noise): no PLD can bound it
        else:
            # dp_accounting has no public accessor for an accountant's PLD either (see
            # RdpCurves, which reads `_rdp`).
            result = getattr(accountant, "_pld", None)
            if not isinstance(result, privacy_loss_distribution.PrivacyLossDistribution):
                raise RuntimeError(
                    "this version of dp_accounting does not expose its PLD as skdp expects; "
                    "please report it to skdp"
                )
        self._memo.put(key, result)
        return result
