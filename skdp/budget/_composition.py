"""Tight composition of a ledger's spends: PLD when it applies, per-order RDP otherwise.

The composed epsilon of a set of spends is ``min(PLD, RDP)``, both from ``dp_accounting``: the
PLD part is made by :class:`~._pld_composition.PldComposer` (when the PLD accountant supports
every spend), the RDP part by :class:`~._rdp.RdpCurves` (when every spend has an RDP bound at
the ledger's orders). :class:`Composer` combines them for one ledger.

A spend with an extra delta (:class:`WithExtraDelta`) contributes its inner spend to both, and
its extra delta to a running product: with ``P_a = 1 - prod(1 - p_k)`` over the atoms and
``H = 1 - prod(1 - p_j)`` over the additive terms, both epsilons are taken at
``delta' = (delta - H - P_a) / (1 - P_a)`` (infinite when ``H + P_a >= delta``); see
:class:`WithExtraDelta` for why. The products are kept as sums of ``log1p(-p)``, which keeps
small extra deltas exact and makes an extended state equal a fresh composition.

The RDP part (:class:`~._states.ComposedState`) is extended at every charge in microseconds; it
decides a charge on its own whenever its RDP bound stays within the budget. The PLD part
(:class:`~._states.PldState`) is extended only when needed: by reads, and by charges near the
limit.

Under replace-one, events are read as ``dp_accounting``'s PLD accountant reads them (a noise
multiplier relative to one record's contribution, so replacing a record doubles the
sensitivity); the RDP accountant gets the equivalent event (see :mod:`._relations`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import dp_accounting
import numpy as np

from ..accounting._accountants import quiet_accounting_logs
from ..accounting._plan import NeighboringRelation
from ..accounting._rdp_orders import DEFAULT_ORDERS
from ._codec import encode_spend
from ._pld import epsilon_for_delta
from ._pld_composition import PldComposer, pld_interval_for
from ._rdp import RdpCurves, curve_epsilon, curve_on_orders
from ._records import LedgerTotals, RdpCurve, Spend, WithExtraDelta, events_delta
from ._states import ComposedState, Contribution, PldState, RowMark, cache_format
from ._sync import Memo

__all__ = ["Composer", "UnsupportedSpendError"]

_INTERVAL_FLOOR = 1e-3  # the interval is never finer than for a total of budget / 1000
_ALONE_MEMO_SIZE = 4096


class UnsupportedSpendError(ValueError):
    """No accountant can compose this spend (alone, or with the ledger's other spends)."""


class Composer:
    """Composes spends for one ledger: its neighbouring relation, delta, epsilon and orders.

    Parameters
    ----------
    neighboring_relation : NeighboringRelation
    delta : float
        Every epsilon is computed at this delta.
    epsilon_cap : float
        The ledger's epsilon budget; the PLD discretisation is never coarser than the one for a
        total of ``epsilon_cap``, so that decisions at the limit are made with a fine PLD.
    orders : sequence of float
        RDP orders.

    Notes
    -----
    The composed PLD equals a fresh ``PLDAccountant`` fed the same events to about 1e-10
    relative (see :class:`~._pld_composition.PldComposer`). Each spend's RDP curve, PLD and
    guarantee alone are memoised per process, keyed by the spend's canonical JSON.
    """

    def __init__(
        self,
        neighboring_relation: NeighboringRelation,
        delta: float,
        epsilon_cap: float,
        orders: Sequence[float] = DEFAULT_ORDERS,
    ) -> None:
        self.neighboring_relation = NeighboringRelation(neighboring_relation)
        self.delta = float(delta)
        self.epsilon_cap = float(epsilon_cap)
        self.orders = np.asarray(orders, dtype=np.float64)
        self._rdp = RdpCurves(self.neighboring_relation, self.orders)
        self._pld = PldComposer(self.neighboring_relation, self.delta)
        self._alone_memo: Memo[tuple[str, float, bool], LedgerTotals] = Memo(_ALONE_MEMO_SIZE)
        self.cache_format = cache_format(
            self.neighboring_relation, self.delta, self.epsilon_cap, self.orders
        )

    # --- single spends ----------------------------------------------------------------------

    def prepare(self, spend: Spend, key: str) -> Contribution:
        """Check that ``spend`` can be accounted and compute its RDP curve.

        ``key`` is the spend's canonical encoding (memoisation key).
        """
        if isinstance(spend, WithExtraDelta):
            # The memos are keyed by the inner spend: the same event with or without an extra
            # delta has the same curve and PLD.
            inner = self.prepare(spend.spend, encode_spend(spend.spend))
            return dataclasses.replace(
                inner, extra_delta=spend.extra_delta, additive=spend.additive
            )
        if isinstance(spend, RdpCurve):
            return Contribution(spend, key, curve_on_orders(spend, self.orders), False)
        if not isinstance(spend, dp_accounting.DpEvent):
            raise TypeError(
                "a spend must be a dp_accounting DpEvent, a skdp.budget.RdpCurve or a "
                f"skdp.budget.WithExtraDelta, got {type(spend).__name__}"
            )
        with quiet_accounting_logs():
            pld_supported = self._pld.supports(spend)
            rdp = self._rdp.of_event(spend, key)
        if rdp is None and not pld_supported:
            raise UnsupportedSpendError(
                f"neither dp_accounting's PLD nor its RDP accountant supports {spend} under the "
                f"'{self.neighboring_relation.value}' relation, so the ledger cannot account it"
            )
        return Contribution(spend, key, rdp, pld_supported)

    def knows_alone(self, contribution: Contribution) -> bool:
        """Whether :meth:`alone` has this spend's guarantee at hand (memoised)."""
        key = (contribution.key, contribution.extra_delta, contribution.additive)
        return self._alone_memo.get(key)[0]

    def alone(self, contribution: Contribution, recorded: float | None = None) -> LedgerTotals:
        """The guarantee of one spend composed alone (``min(PLD, RDP)``), memoised.

        ``recorded``: the epsilon the ledger already recorded for this very spend (a plan
        charged before, maybe by another process); it is taken as is instead of building the
        spend's PLD again, so that a plan keeps one epsilon in the history.
        """
        key = (contribution.key, contribution.extra_delta, contribution.additive)
        found, totals = self._alone_memo.get(key)
        if not found and recorded is not None:
            extra = contribution.extra_delta
            atom, additive = (0.0, extra) if contribution.additive else (extra, 0.0)
            left = events_delta(self.delta, atom, additive)
            totals = LedgerTotals(recorded, self.delta, 1, extra_delta=extra, events_delta=left)
            self._alone_memo.put(key, totals)
        elif not found:
            mark = RowMark(0, 1)
            state = self.extend(self.empty(), [contribution], mark)
            interval = self.pld_interval(state)
            pld = None
            if interval is not None:
                spends = [(contribution.spend, contribution.key)]
                pld = self.extend_pld(None, spends, interval, mark)
            totals = self.totals(state, pld)
            self._alone_memo.put(key, totals)
        return totals

    def _rdp_curve(self, event: dp_accounting.DpEvent) -> np.ndarray:
        """Per-order RDP of a supported event at the ledger's orders (see
        :meth:`RdpCurves.curve`)."""
        return self._rdp.curve(event)

    # --- composition ------------------------------------------------------------------------

    def empty(self) -> ComposedState:
        """The state of a ledger with no rows."""
        return ComposedState(RowMark(), np.zeros_like(self.orders), True)

    def extend(
        self, state: ComposedState, new: Sequence[Contribution], mark: RowMark
    ) -> ComposedState:
        """``state`` composed with the ``new`` contributions (in order), covering ``mark``."""
        if state.rdp is None or any(c.rdp is None for c in new):
            rdp = None
        else:
            rdp = state.rdp.copy()
            for c in new:
                rdp += c.rdp
        # One at a time, in ledger order: an extended state adds exactly as a fresh one does.
        log_no_atom, log_no_additive = state.log_no_atom, state.log_no_additive
        for c in new:
            if c.extra_delta > 0.0 and c.additive:
                log_no_additive += math.log1p(-c.extra_delta)
            elif c.extra_delta > 0.0:
                log_no_atom += math.log1p(-c.extra_delta)
        pld_applies = state.pld_applies and all(c.pld_supported for c in new)
        if rdp is None and not pld_applies:
            raise UnsupportedSpendError(
                "no accountant supports these spends together: some have no RDP bound and some "
                "are not supported by the PLD accountant (RDP curves, or events such as "
                "RepeatAndSelectDpEvent), so the ledger cannot compose them"
            )
        return ComposedState(mark, rdp, pld_applies, log_no_atom, log_no_additive)

    def extra_deltas(self, state: ComposedState) -> tuple[float, float]:
        """``(H + P_a, delta')``: the extra deltas' part of delta and the delta left."""
        atom = -math.expm1(state.log_no_atom) if state.log_no_atom < 0.0 else 0.0
        additive = -math.expm1(state.log_no_additive) if state.log_no_additive < 0.0 else 0.0
        return additive + atom, events_delta(self.delta, atom, additive)

    def rdp_epsilon(self, state: ComposedState) -> float:
        """The RDP bound of ``state`` at the delta its extra deltas leave."""
        if state.mark.count == 0:
            return 0.0
        return curve_epsilon(self.orders, state.rdp, self.extra_deltas(state)[1])

    def pld_interval(self, state: ComposedState) -> float | None:
        """The PLD discretisation for ``state`` (``None``: PLD does not apply).

        RDP is a cheap upper bound on the total; without it, fall back on the budget.
        """
        if state.mark.count == 0 or not state.pld_applies:
            return None
        reference = min(self.epsilon_cap, self.rdp_epsilon(state))
        # Below a thousandth of the budget the interval stops getting finer: a PLD's size grows
        # as 1 / interval, and at a large delta a total can be 0 (one DP-SGD run's PLD at
        # 2**-20 took 200 s). Budgets up to about 10 never reach this floor (2**-20 first).
        return pld_interval_for(max(reference, self.epsilon_cap * _INTERVAL_FLOOR))

    def extend_pld(
        self,
        pld_state: PldState | None,
        spends: Sequence[tuple[Spend, str]],
        interval: float,
        mark: RowMark,
    ) -> PldState:
        """``pld_state`` (``None``: no rows) composed with ``spends`` at ``interval``.

        ``spends`` are ``(spend, key)`` pairs of the inner spends (without extra delta), in
        ledger order. Each spend's own PLD is memoised per process.
        """
        return self._pld.extend(pld_state, spends, interval, mark)

    def totals(self, state: ComposedState, pld_state: PldState | None) -> LedgerTotals:
        """The totals of ``state``, with the PLD bound of ``pld_state`` (which must cover the
        same rows at :meth:`pld_interval`; ``None`` when PLD does not apply)."""
        if state.mark.count == 0:
            return LedgerTotals(0.0, self.delta, 0, 0.0, 0.0, None, 0.0, self.delta)
        extra, delta = self.extra_deltas(state)
        rdp_bound = curve_epsilon(self.orders, state.rdp, delta)
        pld_epsilon, interval = math.inf, None
        if state.pld_applies:
            interval = self.pld_interval(state)
            if pld_state is None or pld_state.interval != interval or (
                pld_state.mark != state.mark
            ):
                raise ValueError("the PLD state does not cover the composed rows")
            if pld_state.pld is not None and delta > 0.0:
                pld_epsilon = epsilon_for_delta(pld_state.pld, delta)
        return LedgerTotals(
            min(pld_epsilon, rdp_bound), self.delta, state.mark.count, pld_epsilon,
            rdp_bound, interval, extra, delta,
        )
