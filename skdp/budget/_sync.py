"""What the budgets of one process share, and how it stays safe across threads, forks and exit.

* :class:`ForkSafeLock`: a lock that a forked child gets afresh (the one lock type of the
  package), and :class:`Memo`, a least-recently-used memo behind one.
* :data:`SHARED`: the composers and composed states of each ledger file, shared by every
  :class:`~skdp.budget.PrivacyBudget` object of this process that opens it (pickled copies,
  ``PrivacyBudget.open``, ...). A state says which rows it covers and is checked against the
  file before each use, so other processes' spends are never missed.
* :func:`delete_at_exit`: temporary ledgers (``path=None``) are deleted when the process that
  created them exits.
* :func:`retry_optimistically`: the retry loop of a charge that composes outside the write lock.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from ._composition import Composer
    from ._states import ComposedState, PldState

__all__ = [
    "SHARED",
    "ForkSafeLock",
    "LedgerKey",
    "Memo",
    "SharedStates",
    "delete_at_exit",
    "retry_optimistically",
]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")

#: ``(real path, ledger id)``: one ledger file, however it was opened.
LedgerKey = tuple[str, str]


# --- locks ------------------------------------------------------------------------------------


class ForkSafeLock:
    """A ``threading.Lock`` that a forked child replaces with a fresh one.

    Only the forking thread survives in the child: a lock another thread held at fork time
    would never be released there.
    """

    __slots__ = ("_lock", "__weakref__")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        _LOCKS.add(self)

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self._lock.release()


_LOCKS: weakref.WeakSet[ForkSafeLock] = weakref.WeakSet()


def _renew_locks_after_fork() -> None:
    for lock in list(_LOCKS):
        lock._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_locks_after_fork)


class Memo(Generic[K, V]):
    """A least-recently-used memo of at most ``size`` entries, shared by a process's threads."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = ForkSafeLock()

    def get(self, key: K) -> tuple[bool, V | None]:
        """``(True, value)`` if ``key`` is memoised (it becomes the most recent), else
        ``(False, None)``: a memoised value may itself be ``None``."""
        with self._lock:
            if key not in self._items:
                return False, None
            self._items.move_to_end(key)
            return True, self._items[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)


# --- composed states shared by the budgets of a process -----------------------------------------


class SharedStates:
    """The composer of each ledger and the newest composed states this process knows of it."""

    def __init__(self) -> None:
        self._lock = ForkSafeLock()
        self._composers: dict[LedgerKey, Composer] = {}
        self._states: dict[LedgerKey, ComposedState] = {}
        self._pld_states: dict[LedgerKey, PldState] = {}

    def composer(self, key: LedgerKey, make: Callable[[], Composer]) -> Composer:
        """The ledger's composer, made by ``make()`` on first use (one per ledger: its memos
        are shared by every budget of the process)."""
        with self._lock:
            composer = self._composers.get(key)
            if composer is None:
                composer = make()
                self._composers[key] = composer
        return composer

    def state(self, key: LedgerKey) -> ComposedState | None:
        with self._lock:
            return self._states.get(key)

    def pld_state(self, key: LedgerKey) -> PldState | None:
        with self._lock:
            return self._pld_states.get(key)

    def remember(
        self, key: LedgerKey, state: ComposedState, pld_state: PldState | None = None
    ) -> None:
        with self._lock:
            self._states[key] = state
            if pld_state is not None:
                self._pld_states[key] = pld_state

    def remember_pld(self, key: LedgerKey, pld_state: PldState) -> None:
        with self._lock:
            self._pld_states[key] = pld_state

    def clear(self) -> None:
        """Forget everything: the next use recomposes from the files, as a new process does."""
        with self._lock:
            self._states.clear()
            self._pld_states.clear()
            self._composers.clear()


SHARED = SharedStates()


# --- temporary ledgers --------------------------------------------------------------------------

_TEMPORARY: dict[str, int] = {}  # path -> pid of the process that created it


def delete_at_exit(path: str) -> None:
    """Delete the ledger at ``path`` (and its journals) when this process exits."""
    _TEMPORARY[path] = os.getpid()


@atexit.register
def _remove_temporary_ledgers() -> None:
    for path, creator in list(_TEMPORARY.items()):
        if creator != os.getpid():  # a forked child must not delete its parent's ledger
            continue
        for name in (path, path + "-journal", path + "-wal", path + "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(name)


# --- retries ------------------------------------------------------------------------------------

# A charge composes outside the write lock and commits only if no spend landed meanwhile; after
# this many tries it composes inside the lock, which always succeeds (never starves).
_OPTIMISTIC_TRIES = 4


def retry_optimistically(attempt: Callable[[bool], T | None]) -> T:
    """``attempt(locked=False)`` until it returns a result (``None``: it lost a race), at most
    ``_OPTIMISTIC_TRIES`` times, then ``attempt(locked=True)``, which must decide."""
    for n in range(_OPTIMISTIC_TRIES + 1):
        result = attempt(n == _OPTIMISTIC_TRIES)
        if result is not None:
            return result
    raise AssertionError("unreachable: the locked attempt always decides")  # pragma: no cover
