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
from . import _context
from ._codec import CodecError, decode_spend, encode_params, encode_spend
from ._composition import (
    DEFAULT_ORDERS,
    ComposedState,
    Composer,
    Contribution,
    UnsupportedSpendError,
)
from ._errors import BudgetExceededError, LedgerError
from ._records import LedgerTotals, Spend, SpendRecord
from ._store import (
    LedgerMeta,
    connect,
    create_ledger,
    initialise,
    open_ledger,
    sqlite_errors,
    transaction,
    utc_now,
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
_COMPOSERS: dict[tuple[str, str], Composer] = {}


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
    Concurrency: a charge is one SQLite ``BEGIN IMMEDIATE`` transaction (read all spends, compose,
    decide, insert, commit), so concurrent charges from threads or processes are serialised and
    none is lost or double-counted. A process killed during a charge leaves the ledger as it was
    before that charge, or with it fully recorded.

    The ledger's directory must be writable: SQLite keeps a journal next to the file during a
    charge. Locking relies on the file system's locks, so keep ledgers on a local disk rather
    than a network share.

    Speed: the first read of a ledger in a process composes every recorded spend, which takes
    about as long as fresh ``dp_accounting`` accountants on the same events (seconds for a
    hundred long DP-SGD runs). The composed state is then kept in memory, checked against the
    file before each use, and extended with new spends only.

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

        Call it once the noise is calibrated and before the data is read. In one transaction,
        the ledger composes every recorded spend with this one; if the composed epsilon at the
        budget's delta exceeds the budget's epsilon it raises :class:`BudgetExceededError`,
        otherwise it records the spend. A recorded spend is never rolled back, even if the fit
        fails afterwards: the mechanism may already have run.

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
        own = self._composer.alone(contribution)
        if own.events_delta <= 0.0:  # its extra delta alone reaches the budget's delta
            raise self._refusal(self.totals(), own, own, estimator)
        with self._connection() as conn:
            with transaction(conn, immediate=True):
                state = self._state(conn)
                timestamp = utc_now()
                after = self._composer.extend(
                    state, [contribution], last_id=0, count=state.count + 1,
                    last_timestamp=timestamp,
                )
                if after.totals.epsilon > self.epsilon:
                    raise self._refusal(state.totals, own, after.totals, estimator)
                row_id = conn.execute(
                    "INSERT INTO spends (timestamp, estimator, params, spend, epsilon, delta,"
                    " mechanism) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (timestamp, estimator, params_text, spend_text, own.epsilon, self.delta,
                     mechanism),
                ).lastrowid
                if _TEST_HOOK_BEFORE_COMMIT is not None:
                    _TEST_HOOK_BEFORE_COMMIT()
        self._remember(dataclasses.replace(after, last_id=row_id))
        return SpendRecord(
            row_id, timestamp, estimator, json.loads(params_text), spend, own.epsilon,
            self.delta, mechanism,
        )

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
        with self._connection() as conn, transaction(conn, immediate=False):
            snapshot = self._read(conn)
        state = self._compose(snapshot)
        after = self._composer.extend(
            state, [contribution], last_id=0, count=state.count + 1, last_timestamp=""
        )
        if after.totals.epsilon > self.epsilon:
            own = self._composer.alone(contribution)
            raise self._refusal(state.totals, own, after.totals, None)
        return after.totals

    def would_exceed(
        self,
        spend: Spend,
        *,
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
    ) -> bool:
        """Whether :meth:`charge` would refuse ``spend`` now (read-only)."""
        try:
            self.check(spend, neighboring_relation=neighboring_relation)
        except BudgetExceededError:
            return True
        return False

    # --- reading --------------------------------------------------------------------------

    def totals(self) -> LedgerTotals:
        """The composed guarantee of everything recorded, with how it was computed."""
        with self._connection() as conn, transaction(conn, immediate=False):
            snapshot = self._read(conn)
        return self._compose(snapshot).totals

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

    def _state(self, conn: sqlite3.Connection) -> ComposedState:
        """The composition of every row, inside the caller's transaction."""
        return self._compose(self._read(conn))

    def _read(self, conn: sqlite3.Connection) -> _Snapshot:
        """The rows not covered by this process's cached state (quick: only reads the file)."""
        count, last_id = conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM spends"
        ).fetchone()
        last_timestamp = self._timestamp(conn, last_id)
        with _CACHE_LOCK:
            cached = _STATES.get(self._key)
        if cached is not None and (cached.last_id, cached.count, cached.last_timestamp) == (
            last_id, count, last_timestamp,
        ):
            return _Snapshot(cached, [], last_id, count, last_timestamp)
        base = self._composer.empty()
        if (
            cached is not None
            and 0 < cached.last_id <= last_id
            and self._timestamp(conn, cached.last_id) == cached.last_timestamp
            and conn.execute(
                "SELECT COUNT(*) FROM spends WHERE id <= ?", (cached.last_id,)
            ).fetchone()[0] == cached.count
        ):
            base = cached  # the rows it covers are unchanged: compose only the newer ones
        rows = conn.execute(
            "SELECT id, spend FROM spends WHERE id > ? ORDER BY id", (base.last_id,)
        ).fetchall()
        return _Snapshot(base, rows, last_id, count, last_timestamp)

    def _compose(self, snapshot: _Snapshot) -> ComposedState:
        """Compose a snapshot's new rows onto its base state.

        This can take a while; readers call it after their transaction, so that they never hold
        the file's shared lock (which delays writers' commits) while composing.
        """
        if not snapshot.rows and snapshot.base.last_id == snapshot.last_id:
            return snapshot.base
        contributions = []
        for row_id, spend_text in snapshot.rows:
            spend = self._decode(row_id, spend_text)
            try:
                contributions.append(self._composer.prepare(spend, spend_text))
            except (UnsupportedSpendError, TypeError) as exc:
                raise self._damaged(row_id, str(exc)) from None
        try:
            state = self._composer.extend(
                snapshot.base, contributions, last_id=snapshot.last_id, count=snapshot.count,
                last_timestamp=snapshot.last_timestamp,
            )
        except UnsupportedSpendError as exc:  # charge() never records such a mix
            raise self._damaged(snapshot.last_id, str(exc)) from None
        self._remember(state)
        return state

    @staticmethod
    def _timestamp(conn: sqlite3.Connection, row_id: int) -> str:
        row = conn.execute("SELECT timestamp FROM spends WHERE id = ?", (row_id,)).fetchone()
        return "" if row is None else str(row[0])

    def _remember(self, state: ComposedState) -> None:
        with _CACHE_LOCK:
            _STATES[self._key] = state

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
            + f"; left: epsilon={left:.4g}. Nothing was recorded."
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
    """What a read transaction saw: a cached state and the rows after it."""

    base: ComposedState
    rows: list[tuple[int, str]]
    last_id: int
    count: int
    last_timestamp: str


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
