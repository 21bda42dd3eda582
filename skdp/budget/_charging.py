"""Recording a spend: decided and inserted atomically, with the write lock held briefly.

A charge composes the recorded spends with the new one outside any lock, then, in one SQLite
``BEGIN IMMEDIATE`` transaction, checks that the ledger still holds exactly the rows it
composed and records the spend; if another spend landed meanwhile it composes that one too and
tries again (after a few tries it decides inside the transaction). The check and the insert
are atomic, so two charges that together exceed the budget never both pass.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import NamedTuple

from ._decisions import decide
from ._file import LedgerFile
from ._messages import refusal
from ._records import LedgerTotals, Spend, SpendRecord
from ._states import Contribution
from ._store import insert_spend, position, transaction, utc_now
from ._sync import retry_optimistically

__all__ = ["charge_atomically"]

# Tests only: called inside a charge's transaction, after the insert and before the commit, to
# simulate a crash there.
_TEST_HOOK_BEFORE_COMMIT: Callable[[], None] | None = None


class _NewRow(NamedTuple):
    """A spend being charged, as it will be recorded."""

    spend: Spend
    spend_text: str
    estimator: str
    params_text: str
    mechanism: str
    own: LedgerTotals


def charge_atomically(
    ledger: LedgerFile,
    contribution: Contribution,
    spend: Spend,
    spend_text: str,
    *,
    estimator: str,
    params_text: str,
    mechanism: str,
) -> SpendRecord:
    """Record ``spend`` (prepared as ``contribution``, encoded as ``spend_text``) if it fits.

    Raises :class:`~skdp.budget.BudgetExceededError`, recording nothing, if it does not.
    """
    composer = ledger.composer
    # The spend's own guarantee is computed before taking the write lock, to hold it briefly.
    recorded = None
    if not composer.knows_alone(contribution):
        recorded = ledger.recorded_epsilon(spend_text)
    own = composer.alone(contribution, recorded)
    if own.events_delta <= 0.0:  # its extra delta alone reaches the budget's delta
        raise refusal(
            ledger.path, ledger.meta.epsilon, ledger.meta.delta, ledger.totals(), own, own,
            estimator,
        )
    row = _NewRow(spend, spend_text, estimator, params_text, mechanism, own)
    return retry_optimistically(lambda locked: _try(ledger, contribution, row, locked=locked))


def _try(
    ledger: LedgerFile, contribution: Contribution, row: _NewRow, *, locked: bool
) -> SpendRecord | None:
    """One attempt at a charge: ``None`` if another spend landed while composing.

    Optimistic (``locked=False``): compose and decide outside any lock, then, in the write
    transaction, insert only if the ledger still holds exactly the rows composed. The check
    and the insert are atomic, so two charges can never both pass on the same rows.
    Locked: read, compose and decide inside the write transaction (as a fallback).
    """
    with ledger.connection() as conn:
        if not locked:
            state = ledger.current_state(conn)
            pld_after = decide(ledger, state, contribution, row.own, row.estimator).pld_after
        with transaction(conn, immediate=True):
            if locked:
                state = ledger.compose(ledger.read(conn))
                pld_after = decide(ledger, state, contribution, row.own, row.estimator).pld_after
            elif position(conn) != state.mark.position():
                return None  # a spend landed meanwhile: compose it and try again
            timestamp = utc_now()
            row_id = insert_spend(
                conn, timestamp=timestamp, estimator=row.estimator, params=row.params_text,
                spend=row.spend_text, epsilon=row.own.epsilon, delta=ledger.meta.delta,
                mechanism=row.mechanism,
            )
            mark = state.mark.then(row_id, timestamp, row.spend_text)
            after = ledger.composer.extend(state, [contribution], mark)
            if pld_after is not None:
                pld_after = dataclasses.replace(pld_after, mark=mark)
            ledger.write_states(conn, after, pld_after)
            if _TEST_HOOK_BEFORE_COMMIT is not None:
                _TEST_HOOK_BEFORE_COMMIT()
    ledger.remember(after, pld_after)
    return SpendRecord(
        row_id, timestamp, row.estimator, json.loads(row.params_text), row.spend,
        row.own.epsilon, ledger.meta.delta, row.mechanism,
    )
