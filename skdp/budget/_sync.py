"""Locks and memos shared by the threads of one process, and safe across forks.

* :class:`ForkSafeLock`: a lock that a forked child gets afresh (the one lock type of the
  package), and :class:`Memo`, a least-recently-used memo behind one.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["ForkSafeLock", "Memo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

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
