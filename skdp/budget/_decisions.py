"""Whether a spend fits a ledger: the one decision behind ``charge``, ``check`` and
``would_exceed``.

RDP first: if the RDP bound of the total with the spend stays within the budget, so does the
tighter ``min(PLD, RDP)``, and the spend fits (microseconds: per-order RDP adds up). Only near
the limit, or when RDP cannot bound some spend, is the PLD composed to decide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ._messages import refusal
from ._records import LedgerTotals
from ._states import ComposedState, Contribution, PldState, RowMark

if TYPE_CHECKING:
    from ._file import LedgerFile

__all__ = ["Decision", "decide"]


class Decision(NamedTuple):
    """A spend that fits: the totals with it and the composed PLD with it, each ``None`` when
    RDP alone decided (and the caller did not ask for the exact totals)."""

    totals: LedgerTotals | None
    pld_after: PldState | None


def decide(
    ledger: LedgerFile,
    state: ComposedState,
    contribution: Contribution,
    own: LedgerTotals | None,
    estimator: str | None,
    *,
    exact: bool = False,
) -> Decision:
    """Refuse ``contribution`` on top of ``state`` if it exceeds the ledger's budget.

    Raises :class:`~skdp.budget.BudgetExceededError` (worded for ``estimator``, with ``own``
    the spend's guarantee alone, computed here if ``None``) when it does not fit. Otherwise the
    PLD composed with the spend, when it was needed (a charge stores it); ``exact=True`` always
    composes it, for the exact totals (``check``).
    """
    composer = ledger.composer
    epsilon = ledger.meta.epsilon
    after = composer.extend(state, [contribution], _pending(state))
    if not exact and composer.rdp_epsilon(after) <= epsilon:
        return Decision(None, None)
    interval = composer.pld_interval(after)
    pld_after = None
    if interval is not None:
        pld_before = ledger.pld_state(state, interval)
        spends = [(contribution.spend, contribution.key)]
        pld_after = composer.extend_pld(pld_before, spends, interval, after.mark)
    totals = composer.totals(after, pld_after)
    if totals.epsilon > epsilon:
        if own is None:
            own = composer.alone(contribution)
        before = composer.totals(state, ledger.pld_state(state))
        raise refusal(ledger.path, epsilon, ledger.meta.delta, before, own, totals, estimator)
    return Decision(totals, pld_after)


def _pending(state: ComposedState) -> RowMark:
    """The mark of ``state``'s rows and a spend being decided (whose row does not exist yet)."""
    return RowMark(-1, state.mark.count + 1, "", "")
