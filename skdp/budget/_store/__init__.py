"""The ledger file: an SQLite database that only skdp writes, append-only.

Layout (schema version 1)::

    meta(key, value)         application, schema_version, ledger_id, epsilon, delta,
                             neighboring_relation, rdp_orders, created_at, created_by
    spends(id, timestamp, estimator, params, spend, epsilon, delta, mechanism)
    composed(part, format, last_id, count, last_timestamp, digest, header, data)

``composed`` is a cache, not part of the record: the composition of the first rows of
``spends`` (part ``'rdp'``: the summed RDP curve; part ``'pld'``: the composed privacy-loss
distribution), so that a process opening the ledger does not recompose every spend. Each entry
names the rows it covers and a hash chain over them (see ``_states.chain_digest``); a
reader uses it only if the rows hash to it and ``format`` (skdp's cache version, the
dp_accounting version and the ledger's limits) is its own, and otherwise recomposes from the
rows. It is the only table that may be rewritten; ledgers written before it existed get it at
their next charge (older skdp versions ignore it).

The SQLite header's ``application_id`` is set to ``'skdp'`` and ``user_version`` to the schema
version, so a foreign SQLite file is recognised before any table is read. Triggers refuse
``UPDATE`` and ``DELETE`` on both tables: spends are never rolled back or edited.

Crash safety comes from SQLite's default rollback journal (``journal_mode=DELETE``,
``synchronous=FULL``): a process killed inside a transaction leaves a hot journal that the next
reader rolls back, so a spend is either fully recorded or absent. The rollback journal is chosen
over WAL because it needs no shared-memory file and works on more file systems; writes are rare.
Writers serialise on ``BEGIN IMMEDIATE`` and wait up to ``timeout`` seconds for each other.

Every SQL statement of the ledger is in this package: :mod:`.connection` (connections,
transactions, SQLite's errors), :mod:`.creation` (the schema, creating and opening a file) and
:mod:`.queries` (the rows of an open ledger and the cache). The callers decide which statements
share a transaction.
"""

from .connection import connect, sqlite_errors, transaction, utc_now
from .creation import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    LedgerMeta,
    create_ledger,
    initialise,
    open_ledger,
    read_meta,
    temporary_file,
)
from .queries import (
    CachedPart,
    SpendRow,
    all_spends,
    count_up_to,
    insert_spend,
    ledger_id,
    position,
    read_cached,
    recorded_epsilon,
    spends_after,
    spends_up_to,
    timestamp_of,
    write_cached,
)

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "CachedPart",
    "LedgerMeta",
    "SpendRow",
    "all_spends",
    "connect",
    "count_up_to",
    "create_ledger",
    "initialise",
    "insert_spend",
    "ledger_id",
    "open_ledger",
    "position",
    "read_cached",
    "read_meta",
    "recorded_epsilon",
    "spends_after",
    "spends_up_to",
    "sqlite_errors",
    "temporary_file",
    "timestamp_of",
    "transaction",
    "utc_now",
    "write_cached",
]
