"""Creating a ledger file and opening one: the schema, the metadata, and the checks that a file
is an intact skdp ledger before anything is read from it (see :mod:`skdp.budget._store`)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from ..._version import __version__
from ...accounting._plan import NeighboringRelation
from .._errors import LedgerError
from .connection import connect, sqlite_errors, transaction, utc_now

__all__ = [
    "APPLICATION_ID",
    "CREATE_COMPOSED_IF_MISSING",
    "SCHEMA_VERSION",
    "LedgerMeta",
    "create_ledger",
    "initialise",
    "open_ledger",
    "read_meta",
    "temporary_file",
]

APPLICATION = "skdp.budget"
APPLICATION_ID = 0x736B6470  # b"skdp": SQLite's header field naming the file's application
SCHEMA_VERSION = 1
_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)",
    """CREATE TABLE spends (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        timestamp TEXT NOT NULL,
        estimator TEXT NOT NULL,
        params TEXT NOT NULL,
        spend TEXT NOT NULL,
        epsilon REAL NOT NULL,
        delta REAL NOT NULL,
        mechanism TEXT NOT NULL
    )""",
    """CREATE TABLE composed (
        part TEXT PRIMARY KEY NOT NULL,
        format TEXT NOT NULL,
        last_id INTEGER NOT NULL,
        count INTEGER NOT NULL,
        last_timestamp TEXT NOT NULL,
        digest TEXT NOT NULL,
        header TEXT NOT NULL,
        data BLOB NOT NULL
    )""",
    *(
        f"""CREATE TRIGGER {table}_no_{action} BEFORE {action.upper()} ON {table}
        BEGIN SELECT RAISE(ABORT, 'the skdp privacy ledger is append-only'); END"""
        for table in ("meta", "spends")
        for action in ("update", "delete")
    ),
)

# The cache table, created on demand in ledgers written before it existed.
CREATE_COMPOSED_IF_MISSING = _SCHEMA[2].replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1)


@dataclass(frozen=True)
class LedgerMeta:
    """A ledger's fixed metadata, read from its ``meta`` table."""

    ledger_id: str
    epsilon: float
    delta: float
    neighboring_relation: NeighboringRelation
    orders: tuple[float, ...]
    created_at: str


# --- creation ---------------------------------------------------------------------------------


def _meta_rows(
    epsilon: float, delta: float, relation: NeighboringRelation, orders: Sequence[float]
) -> dict[str, str]:
    return {
        "application": APPLICATION,
        "schema_version": str(SCHEMA_VERSION),
        "ledger_id": uuid.uuid4().hex,
        "epsilon": repr(float(epsilon)),
        "delta": repr(float(delta)),
        "neighboring_relation": relation.value,
        "rdp_orders": json.dumps([float(a) for a in orders]),
        "created_at": utc_now(),
        "created_by": f"skdp {__version__}",
    }


def initialise(
    path: str,
    *,
    epsilon: float,
    delta: float,
    relation: NeighboringRelation,
    orders: Sequence[float],
) -> None:
    """Write the schema and metadata into ``path``, an empty file this process created."""
    conn = connect(path, timeout=5.0)
    try:
        with sqlite_errors(path), transaction(conn, immediate=True):
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                _meta_rows(epsilon, delta, relation, orders).items(),
            )
    finally:
        conn.close()


def temporary_file() -> str:
    """A new empty private file (mode 0600) in the temporary directory, for a temporary ledger."""
    fd, path = tempfile.mkstemp(prefix="skdp-budget-", suffix=".skdp")
    os.close(fd)
    return path


def create_ledger(
    path: str,
    *,
    epsilon: float,
    delta: float,
    relation: NeighboringRelation,
    orders: Sequence[float],
) -> None:
    """Create a ledger at ``path`` unless a file is already there (then leave it alone).

    The ledger is built in a private temporary file next to ``path`` and hard-linked into place:
    a reader never sees a half-written ledger, and of two processes creating the same path at
    once, one wins and the other opens the winner's ledger.
    """
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise LedgerError(f"cannot create the privacy ledger {path}: no directory {directory}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".skdp-ledger-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise LedgerError(f"cannot create the privacy ledger {path}: {exc}") from exc
    os.close(fd)
    try:
        initialise(tmp, epsilon=epsilon, delta=delta, relation=relation, orders=orders)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return  # another process created it first: the caller opens and checks it
        except OSError:
            _copy_exclusive(tmp, path)  # file systems without hard links
        _fsync_directory(directory)
    finally:
        for leftover in (tmp, tmp + "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)


def _copy_exclusive(source: str, path: str) -> None:
    # Fallback only: O_EXCL still never overwrites, but a reader racing the copy may see a
    # partial file (and then gets a LedgerError, not a reset).
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise LedgerError(f"cannot create the privacy ledger {path}: {exc}") from exc
    with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
        out.write(src.read())
        out.flush()
        os.fsync(out.fileno())


def _fsync_directory(directory: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --- opening ----------------------------------------------------------------------------------


def open_ledger(path: str, timeout: float) -> LedgerMeta:
    """Check that ``path`` is an intact skdp ledger and return its metadata."""
    _sniff(path)
    conn = connect(path, timeout)
    try:
        with sqlite_errors(path, timeout):
            meta = read_meta(conn, path)
            problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise LedgerError(
                f"the privacy ledger {path} is corrupted ({'; '.join(problems[:3])}). skdp does "
                "not repair or overwrite it; restore it from a backup"
            )
        return meta
    finally:
        conn.close()


def _sniff(path: str) -> None:
    try:
        with open(path, "rb") as file:
            head = file.read(100)
    except FileNotFoundError:
        raise LedgerError(f"no privacy ledger at {path}") from None
    except OSError as exc:
        raise LedgerError(f"cannot read the privacy ledger {path}: {exc}") from exc
    if not head:
        raise LedgerError(
            f"{path} is an empty file, not an skdp privacy ledger (skdp only creates ledgers at "
            "paths where no file exists); delete it or choose another path"
        )
    if not head.startswith(_SQLITE_MAGIC):
        raise LedgerError(
            f"{path} is not an SQLite database, so not an skdp privacy ledger; skdp will not "
            "overwrite it: choose another path"
        )


def read_meta(conn: sqlite3.Connection, path: str) -> LedgerMeta:
    """Validate the application marker and schema, and parse the metadata."""
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if application_id != APPLICATION_ID:
        raise LedgerError(
            f"{path} is an SQLite database of another application (application_id="
            f"{application_id:#x}), not an skdp privacy ledger; skdp will not modify it"
        )
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise LedgerError(
            f"the privacy ledger {path} has schema version {version}, written by a newer skdp "
            f"(this one reads version {SCHEMA_VERSION}); upgrade skdp"
        )
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if version != SCHEMA_VERSION or not {"meta", "spends"} <= tables:
        raise LedgerError(f"{path} is marked as an skdp ledger but its schema is damaged")
    values = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    try:
        if values["application"] != APPLICATION:
            raise ValueError(f"application {values['application']!r}")
        if values["schema_version"] != str(SCHEMA_VERSION):
            raise ValueError(f"schema_version {values['schema_version']!r}")
        epsilon, delta = float(values["epsilon"]), float(values["delta"])
        if not (0.0 < epsilon < math.inf and 0.0 < delta < 1.0):
            raise ValueError(f"limits epsilon={epsilon}, delta={delta}")
        orders = tuple(float(a) for a in json.loads(values["rdp_orders"]))
        if not orders or not all(math.isfinite(a) and a > 1.0 for a in orders):
            raise ValueError("RDP orders")
        return LedgerMeta(
            ledger_id=str(values["ledger_id"]),
            epsilon=epsilon,
            delta=delta,
            neighboring_relation=NeighboringRelation(values["neighboring_relation"]),
            orders=orders,
            created_at=str(values["created_at"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise LedgerError(f"the metadata of the privacy ledger {path} is damaged: {exc}") from None
