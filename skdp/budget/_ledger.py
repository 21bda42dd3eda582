"""PrivacyBudget: a persistent, shared, append-only privacy ledger with a total budget."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import math
import numbers
import os
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import dp_accounting

from ..accounting._plan import NeighboringRelation
from ..accounting._rdp_orders import DEFAULT_ORDERS
from . import _context
from ._codec import CodecError, decode_spend, encode_params, encode_spend
from ._composition import Composer, UnsupportedSpendError
from ._errors import BudgetExceededError, LedgerError
from ._html import budget_html
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
    connect,
    create_ledger,
    initialise,
    open_ledger,
    read_cached,
    sqlite_errors,
    transaction,
    utc_now,
    write_cached,
)

__all__ = ["PrivacyBudget"]

# Tests only: called inside a charge's transaction, after the insert and before the commit, to
# simulate a crash there.
_TEST_HOOK_BEFORE_COMMIT: Callable[[], None] | None = None

# Composed states and composers, shared by every PrivacyBudget object of this process that opens
# the same file (pickled copies, PrivacyBudget.open, ...). A state says which rows it covers and is
# checked against the file before each use, so other processes' spends are never missed.
_CACHE_LOCK = threading.Lock()
_STATES: dict[tuple[str, str], ComposedState] = {}
_PLD_STATES: dict[tuple[str, str], PldState] = {}
_COMPOSERS: dict[tuple[str, str], Composer] = {}

# A charge composes outside the write lock and commits only if no spend landed meanwhile; after
# this many tries it composes inside the lock, which always succeeds (never starves).
_OPTIMISTIC_TRIES = 4
# Storing a composed PLD from a read (totals(), spent()) is an optional courtesy to the next
# process: wait at most this long for the write lock, then skip it.
_CACHE_WRITE_TIMEOUT = 0.5


def _fresh_lock_after_fork() -> None:
    global _CACHE_LOCK
    _CACHE_LOCK = threading.Lock()  # the parent's may have been held by another thread


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_lock_after_fork)

# Temporary ledgers (path=None) are deleted when the process that created them exits.
_TEMPORARY: dict[str, int] = {}


@atexit.register
def _remove_temporary_ledgers() -> None:
    for path, creator in list(_TEMPORARY.items()):
        if creator != os.getpid():  # a forked child must not delete its parent's ledger
            continue
        for name in (path, path + "-journal", path + "-wal", path + "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(name)


class PrivacyBudget:
    """A total privacy budget, shared by every fit that charges it, kept in a file.

    Each fit charges its spend (a ``dp_accounting`` DpEvent) before it touches the data. The
    ledger composes all recorded spends tightly (PLD, or per-order RDP; never a sum of epsilons)
    and refuses a spend that would take the composed epsilon at the budget's delta above the
    budget's epsilon. Recorded spends are never removed.

    A spend may carry an *extra delta* (:class:`~skdp.budget.WithExtraDelta`): a part of the
    mechanism that costs only delta, such as the new-key part of partition selection (a key
    only one of two neighbouring datasets has is released with probability at most ``p``).
    ``dp_accounting`` has no event for it. The ledger composes the extra deltas separately
    (``P = 1 - prod(1 - p_k)``) and computes every epsilon of the other parts at the delta they
    leave, ``delta' = (delta - P) / (1 - P)`` (additive extra deltas, which private searches
    spend, are taken off without the ``1 - P`` factor; see
    :class:`~skdp.budget.WithExtraDelta`). A spend whose extra delta alone reaches the budget's
    delta, or that would take the extra deltas of the ledger there, is refused.
    :meth:`totals` reports the composed extra delta and the reduced delta.

    The ledger is an SQLite file, so it is shared by clones and by worker processes and survives
    restarts:

    * ``copy.copy(budget)`` and ``copy.deepcopy(budget)`` return ``budget`` itself, so
      scikit-learn's ``clone`` (e.g. inside ``GridSearchCV``) charges the same ledger.
    * Pickling (joblib ``n_jobs``) stores only the path and the ledger's identity; unpickling
      reopens the same file, never a copy of the records.
    * ``PrivacyBudget(epsilon, delta, path=p)`` in a new process sees all past spends.

    Parameters
    ----------
    epsilon : float
        The budget: the composed epsilon of all spends may not exceed it. Positive, finite.
    delta : float
        Every epsilon of the ledger is stated at this delta, in (0, 1).
    path : str or path-like, default=None
        The ledger file. A new ledger is created when no file exists there. An existing ledger
        is opened if its limits (epsilon, delta, neighbouring relation) are the ones given,
        otherwise :class:`LedgerError` is raised: the stored limits are authoritative, and
        :meth:`open` adopts them. A file that is not an intact skdp ledger raises
        :class:`LedgerError` and is never reset or overwritten. With ``None``, the ledger is a
        new private temporary file (mode 0600) that is deleted when this process exits.
    neighboring_relation : {'add_or_remove_one', 'replace_one'}, default='add_or_remove_one'
        The neighbouring relation of every spend; fixed when the ledger is created.
    timeout : float, default=30.0
        Seconds to wait for another process's write to finish before giving up.

    Attributes
    ----------
    epsilon, delta : float
        The budget's limits (as stored in the file).
    path : str
        Absolute path of the ledger file.
    neighboring_relation : NeighboringRelation

    Notes
    -----
    Concurrency: a charge composes the recorded spends with the new one outside any lock, then,
    in one SQLite ``BEGIN IMMEDIATE`` transaction, checks that the ledger still holds exactly
    the rows it composed and records the spend; if another spend landed meanwhile it composes
    that one too and tries again (after a few tries it decides inside the transaction). The
    check and the insert are atomic, so two charges that together exceed the budget never both
    pass, and none is lost or double-counted. The write lock is held for an insert, not for a
    composition. A process killed during a charge leaves the ledger as it was before that
    charge, or with it fully recorded.

    The ledger's directory must be writable: SQLite keeps a journal next to the file during a
    charge. Locking relies on the file system's locks, so keep ledgers on a local disk rather
    than a network share.

    Speed: a charge decides with RDP first (per-order RDP adds up, so one more spend costs
    microseconds): when the RDP bound of the total stays within the budget, so does the
    tighter ``min(PLD, RDP)``, and the spend fits. Only near the limit (or when RDP cannot
    bound some spend) is the PLD composed to decide. The spend's own RDP curve and PLD, which
    ``dp_accounting`` computes in tens to hundreds of milliseconds for a long DP-SGD run, are
    computed once per process per distinct spend; a spend already in the ledger reuses its
    recorded epsilon. Reads (:meth:`totals`, :meth:`spent`) compose the PLD too, as tight as a
    fresh ``dp_accounting`` PLD accountant. The composed states (the summed RDP curve at each
    charge, the composed PLD when a read or a charge near the limit made it) are stored in the
    file with a hash of the rows they cover, so a process that opens the ledger extends them
    rather than recomposing every spend; they are used only if the rows still hash to them.

    ``with budget:`` makes ``budget`` the current budget (:func:`skdp.budget.current_budget`) in
    this thread or task; it does not reach joblib worker processes, where only an explicit
    ``budget=`` parameter works.

    Examples
    --------
    >>> import dp_accounting
    >>> from skdp.budget import PrivacyBudget
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5)  # a temporary ledger
    >>> step = dp_accounting.GaussianDpEvent(noise_multiplier=8.0)
    >>> records = [budget.charge(step, estimator="example") for _ in range(4)]
    >>> round(records[0].epsilon, 2)  # one spend on its own
    0.43
    >>> round(budget.spent()[0], 2)  # four, composed tightly: far less than 4 * 0.43
    0.93
    >>> budget.would_exceed(step)
    True
    """

    def __init__(
        self,
        epsilon: float,
        delta: float,
        path: str | os.PathLike[str] | None = None,
        *,
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
        timeout: float = 30.0,
    ) -> None:
        epsilon, delta = _check_limits(epsilon, delta)
        relation = _check_relation(neighboring_relation)
        timeout = _check_timeout(timeout)
        limits = dict(epsilon=epsilon, delta=delta, relation=relation, orders=DEFAULT_ORDERS)
        if path is None:
            fd, abspath = tempfile.mkstemp(prefix="skdp-budget-", suffix=".skdp")  # mode 0600
            os.close(fd)
            _TEMPORARY[abspath] = os.getpid()
            initialise(abspath, **limits)
        else:
            abspath = _absolute(path)
            if not os.path.lexists(abspath):
                create_ledger(abspath, **limits)
        meta = open_ledger(abspath, timeout)
        stored = (meta.epsilon, meta.delta, meta.neighboring_relation)
        if stored != (epsilon, delta, relation):
            raise LedgerError(
                f"the privacy ledger {abspath} was created with epsilon={meta.epsilon!r}, "
                f"delta={meta.delta!r}, neighboring_relation='{meta.neighboring_relation.value}'"
                f", but this PrivacyBudget asks for epsilon={epsilon!r}, delta={delta!r}, "
                f"neighboring_relation='{relation.value}'. A ledger's limits are fixed when it "
                "is created. Use PrivacyBudget.open(path) to work with the stored limits, or "
                "another path for a new budget."
            )
        self._attach(abspath, meta, timeout)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, timeout: float = 30.0) -> PrivacyBudget:
        """Open an existing ledger with the limits stored in it.

        Raises :class:`LedgerError` if there is no intact skdp ledger at ``path``.
        """
        abspath = _absolute(path)
        timeout = _check_timeout(timeout)
        budget = cls.__new__(cls)
        budget._attach(abspath, open_ledger(abspath, timeout), timeout)
        return budget

    def _attach(self, path: str, meta: LedgerMeta, timeout: float) -> None:
        self._path = path
        self._meta = meta
        self._timeout = timeout
        self._key = (os.path.realpath(path), meta.ledger_id)
        with _CACHE_LOCK:
            composer = _COMPOSERS.get(self._key)
            if composer is None:
                composer = Composer(
                    meta.neighboring_relation, meta.delta, meta.epsilon, meta.orders
                )
                _COMPOSERS[self._key] = composer
        self._composer = composer

    # --- limits ---------------------------------------------------------------------------

    @property
    def epsilon(self) -> float:
        return self._meta.epsilon

    @property
    def delta(self) -> float:
        return self._meta.delta

    @property
    def path(self) -> str:
        return self._path

    @property
    def neighboring_relation(self) -> NeighboringRelation:
        return self._meta.neighboring_relation

    # --- spending -------------------------------------------------------------------------

    def charge(
        self,
        spend: Spend,
        *,
        estimator: str,
        params: Mapping[str, Any] | None = None,
        mechanism: str = "",
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
    ) -> SpendRecord:
        """Record ``spend`` if the budget allows it, atomically; otherwise record nothing.

        Call it once the noise is calibrated and before the data is read. The ledger composes
        every recorded spend with this one; if the composed epsilon at the budget's delta
        exceeds the budget's epsilon it raises :class:`BudgetExceededError`, otherwise it
        records the spend, atomically with a check that nothing else was recorded since it
        composed (see Notes of :class:`PrivacyBudget`). A recorded spend is never rolled
        back, even if the fit fails afterwards: the mechanism may already have run.

        Parameters
        ----------
        spend : DpEvent, RdpCurve or WithExtraDelta
            What the fit spends, as a ``dp_accounting`` DpEvent, or as an RDP curve for
            mechanisms that have no DpEvent; wrapped in :class:`~skdp.budget.WithExtraDelta`
            when part of the mechanism costs only an extra delta.
        estimator : str
            Who spends (e.g. the estimator's class name).
        params : dict, optional
            The spender's parameters, stored for the record (``repr()`` of non-JSON values).
        mechanism : str, default=''
            Free-text description of the mechanism, stored for the record.
        neighboring_relation : {'add_or_remove_one', 'replace_one'}, default='add_or_remove_one'
            The relation ``spend`` is stated under; it must be the ledger's (no conversion).

        Returns
        -------
        SpendRecord
            The record as stored.

        Raises
        ------
        BudgetExceededError
            The spend would exceed the budget (its epsilon, or its extra delta together with
            those already recorded reaching the budget's delta); nothing was recorded.
        ValueError
            The relation differs from the ledger's, or no accountant supports the spend.
        """
        if not isinstance(estimator, str) or not estimator:
            raise TypeError(f"estimator must be a non-empty string, got {estimator!r}")
        if not isinstance(mechanism, str):
            raise TypeError(f"mechanism must be a string, got {mechanism!r}")
        contribution, spend_text = self._prepare(spend, neighboring_relation)
        params_text = encode_params(params)
        # The spend's own guarantee is computed before taking the write lock, to hold it briefly.
        recorded = None
        if not self._composer.knows_alone(contribution):
            recorded = self._recorded_epsilon(spend_text)
        own = self._composer.alone(contribution, recorded)
        if own.events_delta <= 0.0:  # its extra delta alone reaches the budget's delta
            raise self._refusal(self.totals(), own, own, estimator)
        row = _NewRow(spend, spend_text, estimator, params_text, mechanism, own)
        for attempt in range(_OPTIMISTIC_TRIES + 1):
            record = self._try_charge(contribution, row, locked=attempt == _OPTIMISTIC_TRIES)
            if record is not None:
                return record
        raise AssertionError("unreachable: the locked attempt always decides")  # pragma: no cover

    def _try_charge(
        self, contribution: Contribution, row: _NewRow, *, locked: bool
    ) -> SpendRecord | None:
        """One attempt at a charge: ``None`` if another spend landed while composing.

        Optimistic (``locked=False``): compose and decide outside any lock, then, in the write
        transaction, insert only if the ledger still holds exactly the rows composed. The check
        and the insert are atomic, so two charges can never both pass on the same rows.
        Locked: read, compose and decide inside the write transaction (as a fallback).
        """
        with self._connection() as conn:
            if not locked:
                state = self._current_state(conn)
                pld_after = self._decide(state, contribution, row.own, row.estimator)
            with transaction(conn, immediate=True):
                if locked:
                    state = self._compose(self._read(conn))
                    pld_after = self._decide(state, contribution, row.own, row.estimator)
                elif self._mark_now(conn) != _triple(state.mark):
                    return None  # a spend landed meanwhile: compose it and try again
                timestamp = utc_now()
                row_id = conn.execute(
                    "INSERT INTO spends (timestamp, estimator, params, spend, epsilon, delta,"
                    " mechanism) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (timestamp, row.estimator, row.params_text, row.spend_text,
                     row.own.epsilon, self.delta, row.mechanism),
                ).lastrowid
                mark = state.mark.then(row_id, timestamp, row.spend_text)
                after = self._composer.extend(state, [contribution], mark)
                self._write_state(conn, after)
                if pld_after is not None:
                    pld_after = dataclasses.replace(pld_after, mark=mark)
                    self._write_pld_state(conn, pld_after)
                if _TEST_HOOK_BEFORE_COMMIT is not None:
                    _TEST_HOOK_BEFORE_COMMIT()
        self._remember(after, pld_after)
        return SpendRecord(
            row_id, timestamp, row.estimator, json.loads(row.params_text), row.spend,
            row.own.epsilon, self.delta, row.mechanism,
        )

    def _recorded_epsilon(self, spend_text: str) -> float | None:
        """The epsilon recorded with an earlier charge of this very spend, if any."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT epsilon FROM spends WHERE spend = ? AND delta = ? ORDER BY id LIMIT 1",
                (spend_text, self.delta),
            ).fetchone()
        if row is None or not isinstance(row[0], float) or not row[0] >= 0.0:
            return None
        return row[0]

    def _decide(
        self,
        state: ComposedState,
        contribution: Contribution,
        own: LedgerTotals,
        estimator: str | None,
    ) -> PldState | None:
        """Refuse ``contribution`` on top of ``state`` if it exceeds the budget.

        RDP first: if the RDP bound of the total stays within the budget, so does
        ``min(PLD, RDP)``, and the spend fits (milliseconds). Only otherwise, near the limit,
        the PLD is composed (outside the write lock when optimistic) and decides. Returns the
        composed PLD with the spend when it was needed (the caller stores it), else ``None``.
        """
        after = self._composer.extend(state, [contribution], _pending(state))
        if self._composer.rdp_epsilon(after) <= self.epsilon:
            return None
        interval = self._composer.pld_interval(after)
        pld_after = None
        if interval is not None:
            pld_before = self._pld_state(state, interval)
            spends = [(contribution.spend, contribution.key)]
            pld_after = self._composer.extend_pld(pld_before, spends, interval, after.mark)
        totals = self._composer.totals(after, pld_after)
        if totals.epsilon > self.epsilon:
            before = self._composer.totals(state, self._pld_state(state))
            raise self._refusal(before, own, totals, estimator)
        return pld_after

    def check(
        self,
        spend: Spend,
        *,
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
    ) -> LedgerTotals:
        """The totals the ledger would reach with ``spend``, without recording anything.

        Raises :class:`BudgetExceededError` if ``spend`` would exceed the budget now. Another
        process may spend in between: only :meth:`charge` decides atomically.
        """
        contribution, _ = self._prepare(spend, neighboring_relation)
        with self._connection() as conn:
            state = self._current_state(conn)
        after = self._composer.extend(state, [contribution], _pending(state))
        interval = self._composer.pld_interval(after)
        pld_after = None
        if interval is not None:
            spends = [(contribution.spend, contribution.key)]
            pld_before = self._pld_state(state, interval)
            pld_after = self._composer.extend_pld(pld_before, spends, interval, after.mark)
        totals = self._composer.totals(after, pld_after)
        if totals.epsilon > self.epsilon:
            own = self._composer.alone(contribution)
            before = self._composer.totals(state, self._pld_state(state))
            raise self._refusal(before, own, totals, None)
        return totals

    def would_exceed(
        self,
        spend: Spend,
        *,
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
    ) -> bool:
        """Whether :meth:`charge` would refuse ``spend`` now (read-only).

        Decides as :meth:`charge` does (RDP first, PLD near the limit), so it is as fast.
        """
        contribution, _ = self._prepare(spend, neighboring_relation)
        with self._connection() as conn:
            state = self._current_state(conn)
        own = self._composer.alone(contribution)
        if own.events_delta <= 0.0:
            return True
        try:
            self._decide(state, contribution, own, None)
        except BudgetExceededError:
            return True
        return False

    # --- reading --------------------------------------------------------------------------

    def totals(self) -> LedgerTotals:
        """The composed guarantee of everything recorded, with how it was computed."""
        with self._connection() as conn:
            state = self._current_state(conn)
        return self._composer.totals(state, self._pld_state(state, store=True))

    def spent(self) -> tuple[float, float]:
        """``(epsilon, delta)``: everything recorded, composed tightly, at the budget's delta.

        ``epsilon`` is the minimum of the PLD and RDP bounds of the composition of all spends
        (see :meth:`totals`); it is not the sum of the spends' epsilons.
        """
        totals = self.totals()
        return totals.epsilon, totals.delta

    def remaining(self) -> float:
        """``max(epsilon - spent epsilon, 0)``: the epsilon left at the budget's delta.

        A gauge, not a promise about the next spend: composition is not additive, so a spend
        whose epsilon on its own is larger than ``remaining()`` may still fit (many Gaussian
        spends compose to much less than the sum of their epsilons), and one slightly smaller
        may not. :meth:`would_exceed` and :meth:`check` answer for a given spend.
        """
        return max(self.epsilon - self.spent()[0], 0.0)

    def history(self) -> list[SpendRecord]:
        """Every recorded spend, oldest first."""
        with self._connection() as conn, transaction(conn, immediate=False):
            rows = conn.execute(
                "SELECT id, timestamp, estimator, params, spend, epsilon, delta, mechanism "
                "FROM spends ORDER BY id"
            ).fetchall()
        records = []
        for row_id, timestamp, estimator, params, spend_text, epsilon, delta, mechanism in rows:
            try:
                params_value = json.loads(params)
            except ValueError:
                raise self._damaged(row_id, "its parameters are not valid JSON") from None
            records.append(
                SpendRecord(
                    row_id, timestamp, estimator, params_value, self._decode(row_id, spend_text),
                    float(epsilon), float(delta), mechanism,
                )
            )
        return records

    # --- sharing --------------------------------------------------------------------------

    def __copy__(self) -> PrivacyBudget:
        return self  # one ledger, one handle: clones must charge the same budget

    def __deepcopy__(self, memo: dict[int, Any]) -> PrivacyBudget:
        return self

    def __reduce__(self):
        # A handle, not the records: the unpickled budget reopens the same file and checks that
        # it is still the same ledger.
        return _reopen, (self._path, self._meta.ledger_id, self._timeout)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PrivacyBudget):
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        relation = ""
        if self.neighboring_relation is not NeighboringRelation.ADD_OR_REMOVE_ONE:
            relation = f", neighboring_relation='{self.neighboring_relation.value}'"
        return (
            f"PrivacyBudget(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"path={self.path!r}{relation})"
        )

    def _repr_html_(self) -> str:  # Jupyter: a bar of spent vs total, and the spends
        return budget_html(self)

    def __enter__(self) -> PrivacyBudget:
        _context.enter(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        _context.leave()

    # --- internals ------------------------------------------------------------------------

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        conn = connect(self._path, self._timeout)
        try:
            with sqlite_errors(self._path, self._timeout):
                row = conn.execute("SELECT value FROM meta WHERE key = 'ledger_id'").fetchone()
                if row is None or row[0] != self._meta.ledger_id:
                    raise LedgerError(
                        f"the file {self._path} is no longer the privacy ledger this budget "
                        "opened (it was replaced); open it again to use the new file"
                    )
                yield conn
        finally:
            conn.close()

    def _prepare(
        self, spend: Spend, relation: NeighboringRelation | str
    ) -> tuple[Contribution, str]:
        relation = _check_relation(relation)
        if relation is not self.neighboring_relation:
            raise ValueError(
                f"this ledger accounts spends under the '{self.neighboring_relation.value}' "
                f"relation ({self.neighboring_relation.describe()}); a spend stated under "
                f"'{relation.value}' ({relation.describe()}) cannot be composed with them. skdp "
                "does not convert between relations; use a ledger created with "
                f"neighboring_relation='{relation.value}' for it"
            )
        try:
            spend_text = encode_spend(spend)
        except CodecError as exc:
            raise TypeError(str(exc)) from None
        return self._composer.prepare(spend, spend_text), spend_text

    def _current_state(self, conn: sqlite3.Connection) -> ComposedState:
        """The RDP part of the composition of every row (reads in a snapshot, composes after)."""
        with transaction(conn, immediate=False):
            snapshot = self._read(conn)
        return self._compose(snapshot)

    @staticmethod
    def _mark_now(conn: sqlite3.Connection) -> tuple[int, int, str]:
        count, last_id = conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM spends"
        ).fetchone()
        return count, last_id, PrivacyBudget._timestamp(conn, last_id)

    def _read(self, conn: sqlite3.Connection) -> _Snapshot:
        """What composing the file needs, inside the caller's transaction (quick: only reads).

        The base is this process's state if the rows it covers are unchanged, else nothing;
        the rows after it are read, with the state stored in the file if it covers more (the
        rows are hashed against it when composing).
        """
        now = self._mark_now(conn)
        with _CACHE_LOCK:
            cached = _STATES.get(self._key)
        if cached is not None and _triple(cached.mark) == now:
            return _Snapshot(cached, [], now, None)
        base = self._composer.empty()
        if (
            cached is not None
            and 0 < cached.mark.last_id <= now[1]
            and self._timestamp(conn, cached.mark.last_id) == cached.mark.last_timestamp
            and conn.execute(
                "SELECT COUNT(*) FROM spends WHERE id <= ?", (cached.mark.last_id,)
            ).fetchone()[0] == cached.mark.count
        ):
            base = cached  # the rows it covers are unchanged: compose only the newer ones
        stored = read_cached(conn, "rdp", self._composer.cache_format)
        if stored is not None and not base.mark.last_id < stored.last_id <= now[1]:
            stored = None
        rows = conn.execute(
            "SELECT id, timestamp, spend FROM spends WHERE id > ? ORDER BY id",
            (base.mark.last_id,),
        ).fetchall()
        return _Snapshot(base, rows, now, stored)

    def _compose(self, snapshot: _Snapshot) -> ComposedState:
        """Compose a snapshot's new rows onto its base state (outside any transaction).

        Only the RDP part: milliseconds per new spend, and nothing for the rows a valid stored
        state covers.
        """
        state, stored = snapshot.base, snapshot.stored
        if not snapshot.rows and _triple(state.mark) == snapshot.now:
            return state
        mark, pending = state.mark, []
        for row_id, timestamp, spend_text in snapshot.rows:
            mark = mark.then(row_id, str(timestamp), spend_text)
            pending.append((row_id, spend_text))
            if stored is not None and row_id == stored.last_id:
                adopted = None
                if (mark.digest, mark.count) == (stored.digest, stored.count):
                    adopted = state_from_payload(
                        mark, stored.header, stored.data, len(self._composer.orders)
                    )
                if adopted is not None:  # the rows hash to it: take it as composed
                    state, pending = adopted, []
                stored = None
        contributions = []
        for row_id, spend_text in pending:
            spend = self._decode(row_id, spend_text)
            try:
                contributions.append(self._composer.prepare(spend, spend_text))
            except (UnsupportedSpendError, TypeError) as exc:
                raise self._damaged(row_id, str(exc)) from None
        if _triple(mark) != snapshot.now:
            raise self._damaged(mark.last_id, "its rows are not numbered as they were written")
        try:
            state = self._composer.extend(state, contributions, mark)
        except UnsupportedSpendError as exc:  # charge() never records such a mix
            raise self._damaged(mark.last_id, str(exc)) from None
        self._remember(state)
        return state

    def _pld_state(
        self, state: ComposedState, interval: float | None = None, *, store: bool = False
    ) -> PldState | None:
        """The PLD of the rows ``state`` covers, at ``interval`` (default: the one
        :meth:`Composer.totals` needs); ``None`` when PLD does not apply.

        Extends this process's PLD, or the one stored in the file, whichever covers more of
        those rows at that interval (after hashing the rows against it); composes from scratch
        otherwise. ``store=True`` stores the result in the file for other processes.
        """
        if interval is None:
            interval = self._composer.pld_interval(state)
            if interval is None:
                return None
        if state.mark.count == 0:
            return None  # extend_pld starts from the identity
        with _CACHE_LOCK:
            known = _PLD_STATES.get(self._key)
        if known is not None and known.interval == interval and known.mark == state.mark:
            return known
        with self._connection() as conn, transaction(conn, immediate=False):
            stored = read_cached(conn, "pld", self._composer.cache_format, with_data=False)
            ours = known.mark.last_id if known is not None and known.interval == interval else 0
            if stored is not None and not ours < stored.last_id <= state.mark.last_id:
                stored = None  # covers rows it cannot be checked against, or no more than ours
            if stored is not None:
                stored = read_cached(conn, "pld", self._composer.cache_format)
            rows = conn.execute(
                "SELECT id, timestamp, spend FROM spends WHERE id <= ? ORDER BY id",
                (state.mark.last_id,),
            ).fetchall()
        base, todo, mark = self._pld_base(rows, known, stored, interval)
        if mark != state.mark:  # the rows the RDP part covers were edited since
            raise self._damaged(mark.last_id, "its rows changed since they were composed")
        if base is not None and base.mark == state.mark:
            result = base
        else:
            spends = [pld_input(self._decode(i, text), text) for i, text in todo]
            result = self._composer.extend_pld(base, spends, interval, state.mark)
        with _CACHE_LOCK:
            _PLD_STATES[self._key] = result
        if store and result is not base:
            self._store_pld_state(result)
        return result

    def _pld_base(
        self,
        rows: list[tuple[int, str, str]],
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

    @staticmethod
    def _timestamp(conn: sqlite3.Connection, row_id: int) -> str:
        row = conn.execute("SELECT timestamp FROM spends WHERE id = ?", (row_id,)).fetchone()
        return "" if row is None else str(row[0])

    def _remember(self, state: ComposedState, pld_state: PldState | None = None) -> None:
        with _CACHE_LOCK:
            _STATES[self._key] = state
            if pld_state is not None:
                _PLD_STATES[self._key] = pld_state

    def _write_state(self, conn: sqlite3.Connection, state: ComposedState) -> None:
        header, data = state_to_payload(state)
        write_cached(conn, self._cached("rdp", state.mark, header, data))

    def _write_pld_state(self, conn: sqlite3.Connection, pld_state: PldState) -> None:
        header, data = pld_state_to_payload(pld_state)
        write_cached(conn, self._cached("pld", pld_state.mark, header, data))

    def _cached(self, part: str, mark: RowMark, header: str, data: bytes) -> CachedPart:
        return CachedPart(
            part, self._composer.cache_format, mark.last_id, mark.count, mark.last_timestamp,
            mark.digest, header, data,
        )

    def _store_pld_state(self, pld_state: PldState) -> None:
        """Store a PLD composed by a read, if the write lock comes quickly (else skip it)."""
        try:
            conn = connect(self._path, min(self._timeout, _CACHE_WRITE_TIMEOUT))
        except LedgerError:
            return
        try:
            with sqlite_errors(self._path), transaction(conn, immediate=True):
                current = read_cached(conn, "pld", self._composer.cache_format, with_data=False)
                if current is None or current.last_id <= pld_state.mark.last_id:
                    self._write_pld_state(conn, pld_state)
        except LedgerError:
            pass  # another process holds the lock: it is only a cache
        finally:
            conn.close()

    def _decode(self, row_id: int, text: Any) -> Spend:
        try:
            return decode_spend(text)
        except CodecError as exc:
            raise self._damaged(row_id, str(exc)) from None

    def _damaged(self, row_id: int, why: str) -> LedgerError:
        return LedgerError(
            f"spend #{row_id} of the privacy ledger {self._path} cannot be read ({why}); the "
            "file is damaged or was edited by hand. skdp does not repair it; restore it from a "
            "backup"
        )

    def _refusal(
        self,
        before: LedgerTotals,
        own: LedgerTotals,
        after: LedgerTotals,
        estimator: str | None,
    ) -> BudgetExceededError:
        who = f"{estimator} asks for" if estimator else "this spend would take"
        left = max(self.epsilon - before.epsilon, 0.0)
        so_far = (
            f"Spent so far: epsilon={before.epsilon:.4g} in {before.n_spends} spend(s)"
            + (f" with extra delta {before.extra_delta:.4g}" if before.extra_delta else "")
            + f"; the budget's epsilon minus that: {left:.4g}. Spends compose to less than "
            "the sum of their epsilons, so a fit asking for more than that on its own may "
            "still fit: try a smaller privacy=(epsilon, delta) (budget.would_exceed(spend) "
            "checks a spend without recording it). Nothing was recorded."
        )
        if own.events_delta <= 0.0:
            message = (
                f"privacy budget exceeded: {who} an extra delta of {own.extra_delta:.4g}: the "
                "delta part of the spend alone is not below the budget's delta="
                f"{self.delta:g} of the ledger {self._path}, so no epsilon can cover it. "
                + so_far
            )
        elif after.events_delta <= 0.0:
            message = (
                f"privacy budget exceeded: {who} an extra delta of {own.extra_delta:.4g}, which "
                "with the extra deltas already recorded would take the delta part of the total "
                f"to {after.extra_delta:.4g}, not below the budget's delta={self.delta:g} of "
                f"the ledger {self._path}. " + so_far
            )
        else:
            extra = ""
            if own.extra_delta or after.extra_delta:
                extra = (
                    f" (with an extra delta of {own.extra_delta:.4g} for this spend and "
                    f"{after.extra_delta:.4g} in total: the epsilons are those of the other "
                    f"parts at the delta the extra deltas leave, {after.events_delta:.4g} for "
                    "the total)"
                )
            message = (
                f"privacy budget exceeded: {who} epsilon={own.epsilon:.4g} on its own, which "
                f"would bring the total of the ledger {self._path} to "
                f"epsilon={after.epsilon:.4g}, above its budget of epsilon={self.epsilon:g} "
                f"(all at delta={self.delta:g}){extra}. " + so_far
            )
        return BudgetExceededError(
            message,
            epsilon_budget=self.epsilon,
            delta=self.delta,
            epsilon_spent=before.epsilon,
            epsilon_requested=own.epsilon,
            epsilon_total=after.epsilon,
        )


class _Snapshot(NamedTuple):
    """What a read transaction saw: a base state, the rows after it, the file's row count, last
    id and last timestamp, and the state stored in the file if it may cover more rows."""

    base: ComposedState
    rows: list[tuple[int, str, str]]
    now: tuple[int, int, str]
    stored: CachedPart | None


class _NewRow(NamedTuple):
    """A spend being charged, as it will be recorded."""

    spend: Spend
    spend_text: str
    estimator: str
    params_text: str
    mechanism: str
    own: LedgerTotals


def _pending(state: ComposedState) -> RowMark:
    """The mark of ``state``'s rows and a spend being decided (whose row does not exist yet)."""
    return RowMark(-1, state.mark.count + 1, "", "")


def _triple(mark: RowMark) -> tuple[int, int, str]:
    return mark.count, mark.last_id, mark.last_timestamp


def _reopen(path: str, ledger_id: str, timeout: float) -> PrivacyBudget:
    budget = PrivacyBudget.open(path, timeout=timeout)
    if budget._meta.ledger_id != ledger_id:
        raise LedgerError(
            f"the file {path} is not the privacy ledger this budget was pickled from (it was "
            "replaced by another ledger)"
        )
    return budget


def _absolute(path: str | os.PathLike[str]) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a string, a path-like object or None, got {path!r}")
    return os.path.abspath(os.fsdecode(path))


def _check_limits(epsilon: Any, delta: Any) -> tuple[float, float]:
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {value!r}")
    epsilon, delta = float(epsilon), float(delta)
    if not (0.0 < epsilon < math.inf):
        raise ValueError(f"a privacy budget needs a positive, finite epsilon, got {epsilon}")
    if not 0.0 < delta < 1.0:
        raise ValueError(
            f"delta must be in the open interval (0, 1), got {delta}; a common choice is 1e-5 "
            "or smaller than 1/n_samples"
        )
    return epsilon, delta


def _check_relation(relation: Any) -> NeighboringRelation:
    try:
        if isinstance(relation, dp_accounting.NeighboringRelation):
            return NeighboringRelation[relation.name]
        return NeighboringRelation(relation)
    except (KeyError, ValueError):
        options = ", ".join(repr(r.value) for r in NeighboringRelation)
        raise ValueError(
            f"neighboring_relation must be one of {options}, got {relation!r}"
        ) from None


def _check_timeout(timeout: Any) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not (
        0.0 <= float(timeout) < math.inf
    ):
        raise ValueError(f"timeout must be a non-negative number of seconds, got {timeout!r}")
    return float(timeout)
