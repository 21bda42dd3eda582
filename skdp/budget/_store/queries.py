"""Reading and writing an open ledger's rows: the spends (append-only) and the composed cache.

Every function runs inside the caller's connection, and inside its transaction where it says
so: the ledger decides which statements must see one snapshot.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .creation import CREATE_COMPOSED_IF_MISSING

__all__ = [
    "CachedPart",
    "SpendRow",
    "all_spends",
    "count_up_to",
    "insert_spend",
    "ledger_id",
    "position",
    "read_cached",
    "recorded_epsilon",
    "spends_after",
    "spends_up_to",
    "timestamp_of",
    "write_cached",
]

#: ``(id, timestamp, spend)`` of a row of ``spends``: what composing it needs.
SpendRow = tuple[int, str, str]


# --- spends -----------------------------------------------------------------------------------


def ledger_id(conn: sqlite3.Connection) -> str | None:
    """The identity stored in the file (``None`` when it has none)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'ledger_id'").fetchone()
    return None if row is None else row[0]


def timestamp_of(conn: sqlite3.Connection, row_id: int) -> str:
    """The timestamp of row ``row_id`` (``''`` when there is no such row)."""
    row = conn.execute("SELECT timestamp FROM spends WHERE id = ?", (row_id,)).fetchone()
    return "" if row is None else str(row[0])


def position(conn: sqlite3.Connection) -> tuple[int, int, str]:
    """``(count, last id, last timestamp)`` of the rows: which rows the file holds now."""
    count, last_id = conn.execute(
        "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM spends"
    ).fetchone()
    return count, last_id, timestamp_of(conn, last_id)


def count_up_to(conn: sqlite3.Connection, row_id: int) -> int:
    """How many rows have an id up to ``row_id``."""
    return conn.execute("SELECT COUNT(*) FROM spends WHERE id <= ?", (row_id,)).fetchone()[0]


def spends_after(conn: sqlite3.Connection, row_id: int) -> list[SpendRow]:
    """The rows after ``row_id``, in ledger order."""
    return conn.execute(
        "SELECT id, timestamp, spend FROM spends WHERE id > ? ORDER BY id", (row_id,)
    ).fetchall()


def spends_up_to(conn: sqlite3.Connection, row_id: int) -> list[SpendRow]:
    """The rows up to ``row_id``, in ledger order."""
    return conn.execute(
        "SELECT id, timestamp, spend FROM spends WHERE id <= ? ORDER BY id", (row_id,)
    ).fetchall()


def all_spends(conn: sqlite3.Connection) -> list[tuple]:
    """Every row, every column (``id, timestamp, estimator, params, spend, epsilon, delta,
    mechanism``), oldest first."""
    return conn.execute(
        "SELECT id, timestamp, estimator, params, spend, epsilon, delta, mechanism "
        "FROM spends ORDER BY id"
    ).fetchall()


def recorded_epsilon(conn: sqlite3.Connection, spend_text: str, delta: float) -> float | None:
    """The epsilon recorded with the first charge of this very spend at ``delta``, if any (and
    if it is a valid epsilon)."""
    row = conn.execute(
        "SELECT epsilon FROM spends WHERE spend = ? AND delta = ? ORDER BY id LIMIT 1",
        (spend_text, delta),
    ).fetchone()
    if row is None or not isinstance(row[0], float) or not row[0] >= 0.0:
        return None
    return row[0]


def insert_spend(
    conn: sqlite3.Connection,
    *,
    timestamp: str,
    estimator: str,
    params: str,
    spend: str,
    epsilon: float,
    delta: float,
    mechanism: str,
) -> int:
    """Append a row (inside the caller's write transaction); returns its id."""
    return conn.execute(
        "INSERT INTO spends (timestamp, estimator, params, spend, epsilon, delta,"
        " mechanism) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (timestamp, estimator, params, spend, epsilon, delta, mechanism),
    ).lastrowid


# --- the composed-state cache -----------------------------------------------------------------


@dataclass(frozen=True)
class CachedPart:
    """One row of the ``composed`` cache: a composed state and the rows it covers."""

    part: str
    format: str
    last_id: int
    count: int
    last_timestamp: str
    digest: str
    header: str
    data: bytes


def read_cached(
    conn: sqlite3.Connection, part: str, cache_format: str, *, with_data: bool = True
) -> CachedPart | None:
    """The cached ``part`` if there is one written in ``cache_format`` (else ``None``).

    ``with_data=False`` leaves ``data`` empty (a composed PLD can take megabytes).
    """
    data_column = "data" if with_data else "X''"
    try:
        row = conn.execute(
            "SELECT part, format, last_id, count, last_timestamp, digest, header, "
            f"{data_column} FROM composed WHERE part = ?",
            (part,),
        ).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None  # a ledger from before the cache
        raise
    if row is None or row[1] != cache_format:
        return None
    _, _, last_id, count, last_timestamp, digest, header, data = row
    if not (isinstance(last_id, int) and isinstance(count, int) and isinstance(data, bytes)):
        return None
    return CachedPart(part, cache_format, last_id, count, str(last_timestamp), str(digest),
                      str(header), data)


def write_cached(conn: sqlite3.Connection, cached: CachedPart) -> None:
    """Store ``cached``, replacing the part's previous entry (inside the caller's write
    transaction)."""
    conn.execute(CREATE_COMPOSED_IF_MISSING)
    conn.execute(
        "INSERT OR REPLACE INTO composed (part, format, last_id, count, last_timestamp, digest,"
        " header, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (cached.part, cached.format, cached.last_id, cached.count, cached.last_timestamp,
         cached.digest, cached.header, sqlite3.Binary(cached.data)),
    )
