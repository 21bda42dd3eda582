"""Connections to a ledger file: opening one, transactions, and SQLite's errors as LedgerError."""

from __future__ import annotations

import contextlib
import datetime
import sqlite3
import urllib.parse
from collections.abc import Iterator

from .._errors import LedgerError

__all__ = ["connect", "sqlite_errors", "transaction", "utc_now"]


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")


@contextlib.contextmanager
def sqlite_errors(path: str, timeout: float | None = None) -> Iterator[None]:
    """Turn SQLite's errors on the ledger at ``path`` into :class:`LedgerError` with advice."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "locked" in text or "busy" in text:
            raise LedgerError(
                f"the privacy ledger {path} stayed locked by another process for more than "
                f"{timeout} s; retry, or open it with a longer timeout"
            ) from exc
        raise LedgerError(f"cannot use the privacy ledger {path}: {text}") from exc
    except sqlite3.DatabaseError as exc:
        raise LedgerError(
            f"{path} is not a readable skdp privacy ledger (corrupted or not a ledger): {exc}. "
            "skdp does not repair or overwrite it; restore it from a backup or choose another "
            "path"
        ) from exc


def connect(path: str, timeout: float) -> sqlite3.Connection:
    """A connection to an existing file (never creates one), in autocommit mode."""
    uri = "file:" + urllib.parse.quote(path) + "?mode=rw"
    with sqlite_errors(path, timeout):
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE), never implicit.
        conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
        conn.execute("PRAGMA synchronous = FULL")
    return conn


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, *, immediate: bool) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` (takes the write lock now) or a read snapshot (``BEGIN``)."""
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
