"""An open ledger file, and the composition of its rows as read from it.

A :class:`LedgerFile` is what one :class:`~skdp.budget.PrivacyBudget` object holds of its file:
path, limits, identity, and the ledger's composer. It reads the composed state of every row by
extending, in this order of preference, the newest state this process knows of the ledger
(:data:`~._sync.SHARED`), the state stored in the file's cache, or nothing. A state is used
only if the rows it covers are unchanged: their count, last id and timestamp for this process's
state, the hash chain over them for a stored one. Reads happen in a snapshot transaction and
take milliseconds; composing happens after it, outside any lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator
from typing import Any, NamedTuple

from ..accounting._plan import NeighboringRelation
from ._checks import check_relation
from ._codec import CodecError, decode_spend, encode_spend
from ._composition import Composer, UnsupportedSpendError
from ._errors import LedgerError
from ._messages import damaged, relation_differs, replaced
from ._records import LedgerTotals, Spend, SpendRecord
from ._states import (
    ComposedState,
    Contribution,
    PldState,
    RowMark,
    pld_input,
    pld_state_from_payload,
    pld_state_to_payload,
    state_from_payload,
    state_to_payload,
)
from ._store import (
    CachedPart,
    LedgerMeta,
    SpendRow,
    all_spends,
    connect,
    count_up_to,
    ledger_id,
    position,
    read_cached,
    recorded_epsilon,
    spends_after,
    spends_up_to,
    sqlite_errors,
    timestamp_of,
    transaction,
    write_cached,
)
from ._sync import SHARED

__all__ = ["LedgerFile", "Snapshot"]

# Storing a composed PLD from a read (totals(), spent()) is an optional courtesy to the next
# process: wait at most this long for the write lock, then skip it.
_CACHE_WRITE_TIMEOUT = 0.5


class Snapshot(NamedTuple):
    """What a read transaction saw: a base state, the rows after it, the file's row count, last
    id and last timestamp, and the state stored in the file if it may cover more rows."""

    base: ComposedState
    rows: list[SpendRow]
    now: tuple[int, int, str]
    stored: CachedPart | None


class LedgerFile:
    """The ledger at ``path`` (absolute), as opened: ``meta`` its stored limits and identity,
    ``timeout`` the seconds to wait for another process's write."""

    def __init__(self, path: str, meta: LedgerMeta, timeout: float) -> None:
        self.path = path
        self.meta = meta
        self.timeout = timeout
        self.key = (os.path.realpath(path), meta.ledger_id)
        self.composer = SHARED.composer(
            self.key,
            lambda: Composer(meta.neighboring_relation, meta.delta, meta.epsilon, meta.orders),
        )

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """A connection to the file, once it is checked to be still the ledger opened."""
        conn = connect(self.path, self.timeout)
        try:
            with sqlite_errors(self.path, self.timeout):
                if ledger_id(conn) != self.meta.ledger_id:
                    raise replaced(self.path)
                yield conn
        finally:
            conn.close()

    def prepare(
        self, spend: Spend, relation: NeighboringRelation | str
    ) -> tuple[Contribution, str]:
        """``spend``, stated under ``relation``, prepared for this ledger; and its encoding."""
        relation = check_relation(relation)
        if relation is not self.meta.neighboring_relation:
            raise relation_differs(self.meta.neighboring_relation, relation)
        try:
            spend_text = encode_spend(spend)
        except CodecError as exc:
            raise TypeError(str(exc)) from None
        return self.composer.prepare(spend, spend_text), spend_text

    # --- reading ------------------------------------------------------------------------------

    def state(self) -> ComposedState:
        """The RDP part of the composition of every row."""
        with self.connection() as conn:
            return self.current_state(conn)

    def current_state(self, conn: sqlite3.Connection) -> ComposedState:
        """The RDP part of the composition of every row (reads in a snapshot, composes after)."""
        with transaction(conn, immediate=False):
            snapshot = self.read(conn)
        return self.compose(snapshot)

    def totals(self) -> LedgerTotals:
        """The composed guarantee of every row; a PLD composed for it is stored in the file."""
        state = self.state()
        return self.composer.totals(state, self.pld_state(state, store=True))

    def records(self) -> list[SpendRecord]:
        """Every row, decoded, oldest first."""
        with self.connection() as conn, transaction(conn, immediate=False):
            rows = all_spends(conn)
        records = []
        for row_id, timestamp, estimator, params, spend_text, epsilon, delta, mechanism in rows:
            try:
                params_value = json.loads(params)
            except ValueError:
                raise damaged(self.path, row_id, "its parameters are not valid JSON") from None
            records.append(
                SpendRecord(
                    row_id, timestamp, estimator, params_value, self.decode(row_id, spend_text),
                    float(epsilon), float(delta), mechanism,
                )
            )
        return records

    def recorded_epsilon(self, spend_text: str) -> float | None:
        """The epsilon recorded with an earlier charge of this very spend, if any."""
        with self.connection() as conn:
            return recorded_epsilon(conn, spend_text, self.meta.delta)

    def read(self, conn: sqlite3.Connection) -> Snapshot:
        """What composing the file needs, inside the caller's transaction (quick: only reads).

        The base is this process's state if the rows it covers are unchanged, else nothing;
        the rows after it are read, with the state stored in the file if it covers more (the
        rows are hashed against it when composing).
        """
        now = position(conn)
        cached = SHARED.state(self.key)
        if cached is not None and cached.mark.position() == now:
            return Snapshot(cached, [], now, None)
        base = self.composer.empty()
        if (
            cached is not None
            and 0 < cached.mark.last_id <= now[1]
            and timestamp_of(conn, cached.mark.last_id) == cached.mark.last_timestamp
            and count_up_to(conn, cached.mark.last_id) == cached.mark.count
        ):
            base = cached  # the rows it covers are unchanged: compose only the newer ones
        stored = read_cached(conn, "rdp", self.composer.cache_format)
        if stored is not None and not base.mark.last_id < stored.last_id <= now[1]:
            stored = None
        rows = spends_after(conn, base.mark.last_id)
        return Snapshot(base, rows, now, stored)

    def compose(self, snapshot: Snapshot) -> ComposedState:
        """Compose a snapshot's new rows onto its base state (outside any transaction).

        Only the RDP part: milliseconds per new spend, and nothing for the rows a valid stored
        state covers.
        """
        state, stored = snapshot.base, snapshot.stored
        if not snapshot.rows and state.mark.position() == snapshot.now:
            return state
        mark, pending = state.mark, []
        for row_id, timestamp, spend_text in snapshot.rows:
            mark = mark.then(row_id, str(timestamp), spend_text)
            pending.append((row_id, spend_text))
            if stored is not None and row_id == stored.last_id:
                adopted = None
                if (mark.digest, mark.count) == (stored.digest, stored.count):
                    adopted = state_from_payload(
                        mark, stored.header, stored.data, len(self.composer.orders)
                    )
                if adopted is not None:  # the rows hash to it: take it as composed
                    state, pending = adopted, []
                stored = None
        contributions = []
        for row_id, spend_text in pending:
            spend = self.decode(row_id, spend_text)
            try:
                contributions.append(self.composer.prepare(spend, spend_text))
            except (UnsupportedSpendError, TypeError) as exc:
                raise damaged(self.path, row_id, str(exc)) from None
        if mark.position() != snapshot.now:
            raise damaged(self.path, mark.last_id, "its rows are not numbered as they were written")
        try:
            state = self.composer.extend(state, contributions, mark)
        except UnsupportedSpendError as exc:  # charge() never records such a mix
            raise damaged(self.path, mark.last_id, str(exc)) from None
        self.remember(state)
        return state

    def pld_state(
        self, state: ComposedState, interval: float | None = None, *, store: bool = False
    ) -> PldState | None:
        """The PLD of the rows ``state`` covers, at ``interval`` (default: the one
        :meth:`Composer.totals` needs); ``None`` when PLD does not apply.

        Extends this process's PLD, or the one stored in the file, whichever covers more of
        those rows at that interval (after hashing the rows against it); composes from scratch
        otherwise. ``store=True`` stores the result in the file for other processes.
        """
        if interval is None:
            interval = self.composer.pld_interval(state)
            if interval is None:
                return None
        if state.mark.count == 0:
            return None  # extend_pld starts from the identity
        known = SHARED.pld_state(self.key)
        if known is not None and known.interval == interval and known.mark == state.mark:
            return known
        cache_format = self.composer.cache_format
        with self.connection() as conn, transaction(conn, immediate=False):
            stored = read_cached(conn, "pld", cache_format, with_data=False)
            ours = known.mark.last_id if known is not None and known.interval == interval else 0
            if stored is not None and not ours < stored.last_id <= state.mark.last_id:
                stored = None  # covers rows it cannot be checked against, or no more than ours
            if stored is not None:
                stored = read_cached(conn, "pld", cache_format)
            rows = spends_up_to(conn, state.mark.last_id)
        base, todo, mark = self._pld_base(rows, known, stored, interval)
        if mark != state.mark:  # the rows the RDP part covers were edited since
            raise damaged(self.path, mark.last_id, "its rows changed since they were composed")
        if base is not None and base.mark == state.mark:
            result = base
        else:
            spends = [pld_input(self.decode(i, text), text) for i, text in todo]
            result = self.composer.extend_pld(base, spends, interval, state.mark)
        SHARED.remember_pld(self.key, result)
        if store and result is not base:
            self._store_pld_state(result)
        return result

    def _pld_base(
        self,
        rows: list[SpendRow],
        known: PldState | None,
        stored: CachedPart | None,
        interval: float,
    ) -> tuple[PldState | None, list[tuple[int, str]], RowMark]:
        """The PLD state to extend (``None``: from scratch), the rows after it, and the mark
        of all ``rows``.

        Hashes the rows: a state is only used if the rows up to its last one hash to it.
        """
        candidates = {}
        if known is not None and known.interval == interval:
            candidates[known.mark.last_id] = known
        mark, base, todo = RowMark(), None, []
        for row_id, timestamp, spend_text in rows:
            mark = mark.then(row_id, str(timestamp), spend_text)
            todo.append((row_id, spend_text))
            candidate = candidates.get(row_id)
            if stored is not None and row_id == stored.last_id:
                if (mark.digest, mark.count) == (stored.digest, stored.count):
                    loaded = pld_state_from_payload(mark, stored.header, stored.data)
                    if loaded is not None and loaded.interval == interval:
                        candidate = loaded
            if candidate is not None and candidate.mark == mark:
                base, todo = candidate, []
        return base, todo, mark

    def decode(self, row_id: int, text: Any) -> Spend:
        try:
            return decode_spend(text)
        except CodecError as exc:
            raise damaged(self.path, row_id, str(exc)) from None

    # --- keeping composed states --------------------------------------------------------------

    def remember(self, state: ComposedState, pld_state: PldState | None = None) -> None:
        """Keep the states for this process's next use of the ledger."""
        SHARED.remember(self.key, state, pld_state)

    def write_states(
        self, conn: sqlite3.Connection, state: ComposedState, pld_state: PldState | None
    ) -> None:
        """Store the states in the file's cache (inside the caller's write transaction)."""
        write_cached(conn, self._cached("rdp", state.mark, *state_to_payload(state)))
        if pld_state is not None:
            self._write_pld_state(conn, pld_state)

    def _write_pld_state(self, conn: sqlite3.Connection, pld_state: PldState) -> None:
        header, data = pld_state_to_payload(pld_state)
        write_cached(conn, self._cached("pld", pld_state.mark, header, data))

    def _cached(self, part: str, mark: RowMark, header: str, data: bytes) -> CachedPart:
        return CachedPart(
            part, self.composer.cache_format, mark.last_id, mark.count, mark.last_timestamp,
            mark.digest, header, data,
        )

    def _store_pld_state(self, pld_state: PldState) -> None:
        """Store a PLD composed by a read, if the write lock comes quickly (else skip it)."""
        try:
            conn = connect(self.path, min(self.timeout, _CACHE_WRITE_TIMEOUT))
        except LedgerError:
            return
        try:
            with sqlite_errors(self.path), transaction(conn, immediate=True):
                current = read_cached(
                    conn, "pld", self.composer.cache_format, with_data=False
                )
                if current is None or current.last_id <= pld_state.mark.last_id:
                    self._write_pld_state(conn, pld_state)
        except LedgerError:
            pass  # another process holds the lock: it is only a cache
        finally:
            conn.close()
