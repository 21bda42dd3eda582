"""What composition works on and keeps: prepared spends, the rows a state covers, the composed
states, and their stored form in the ledger's cache.

The composition is kept in two parts. A :class:`ComposedState` (summed RDP curve, extra deltas,
whether PLD applies) is extended at every charge in microseconds. A :class:`PldState` (the
composed PLD) is extended only when needed. Both name the rows they cover (:class:`RowMark`,
with a hash chain over the rows), so that the ledger can store them in its file and a reader
can check them against the rows. They are stored as a JSON header and raw little-endian arrays,
never pickled: reading a ledger must not run code from the file.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from dp_accounting.pld import privacy_loss_distribution

from ..accounting._plan import NeighboringRelation
from ._codec import encode_spend
from ._pld import pld_from_payload, pld_to_payload
from ._records import Spend, WithExtraDelta

__all__ = [
    "ComposedState",
    "Contribution",
    "PldState",
    "RowMark",
    "cache_format",
    "chain_digest",
    "pld_input",
    "pld_state_from_payload",
    "pld_state_to_payload",
    "state_from_payload",
    "state_to_payload",
]


@dataclass(frozen=True, eq=False)
class Contribution:
    """One spend, prepared for composition.

    Attributes
    ----------
    spend : DpEvent or RdpCurve
        The spend without its extra delta (the inner spend of a :class:`WithExtraDelta`).
    key : str
        The canonical encoding of ``spend``, the key of the per-process memos.
    rdp : ndarray or None
        Its RDP curve at the ledger's orders (``None``: no RDP bound).
    pld_supported : bool
        Whether ``dp_accounting``'s PLD accountant supports it.
    extra_delta : float
        The extra delta of a :class:`WithExtraDelta` (0.0 for other spends).
    additive : bool
        Whether that extra delta is an additive term rather than an atom.
    """

    spend: Spend
    key: str
    rdp: np.ndarray | None
    pld_supported: bool
    extra_delta: float = 0.0
    additive: bool = False


def chain_digest(digest: str, row_id: int, timestamp: str, spend_text: str) -> str:
    """The digest of the rows up to ``row_id``, from the digest of the rows before it.

    A hash chain over every row's id, timestamp and spend: a composed state stored in the file
    says which rows it covers with it, and is only used if the rows in the file hash to it.
    """
    text = f"{digest}\x1f{row_id}\x1f{timestamp}\x1f{spend_text}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RowMark:
    """Which rows of a ledger a composed state covers: the first ``count`` rows, up to the row
    ``last_id`` (whose timestamp is ``last_timestamp``), hashing to ``digest``."""

    last_id: int = 0
    count: int = 0
    last_timestamp: str = ""
    digest: str = ""

    def then(self, row_id: int, timestamp: str, spend_text: str) -> RowMark:
        """The mark of these rows and one more."""
        digest = chain_digest(self.digest, row_id, timestamp, spend_text)
        return RowMark(row_id, self.count + 1, timestamp, digest)

    def position(self) -> tuple[int, int, str]:
        """``(count, last_id, last_timestamp)``, to compare with the file's
        (:func:`skdp.budget._store.position`): whether it still holds exactly these rows."""
        return self.count, self.last_id, self.last_timestamp


@dataclass(frozen=True, eq=False)
class ComposedState:
    """The RDP part of the composition of a ledger's rows, kept current at every charge.

    ``rdp`` is the sum of the spends' RDP curves (``None`` when some spend has no RDP bound),
    ``pld_applies`` whether the PLD accountant supports every spend, ``log_no_atom`` and
    ``log_no_additive`` the sums of ``log1p(-p)`` over the extra deltas of the atoms and of the
    additive terms: ``P_a = -expm1(log_no_atom)`` and ``H = -expm1(log_no_additive)``. All of it
    costs microseconds to extend; the PLD part (:class:`PldState`) is composed only when needed.
    """

    mark: RowMark
    rdp: np.ndarray | None
    pld_applies: bool
    log_no_atom: float = 0.0
    log_no_additive: float = 0.0


@dataclass(frozen=True, eq=False)
class PldState:
    """The composed privacy-loss distribution of the rows in ``mark``, at ``interval``.

    ``pld`` is immutable (composing returns a new one); ``None`` when some spend is not private
    (no PLD bounds it: the PLD epsilon is infinite).
    """

    mark: RowMark
    interval: float
    pld: privacy_loss_distribution.PrivacyLossDistribution | None


def pld_input(spend: Spend, spend_text: str) -> tuple[Spend, str]:
    """What the PLD composes of a stored spend: ``(inner spend, its key)``."""
    if isinstance(spend, WithExtraDelta):
        return spend.spend, encode_spend(spend.spend)
    return spend, spend_text


# --- the stored form ------------------------------------------------------------------------

# Bump when what a stored state means changes (e.g. how an event is read under a relation), so
# that states written before are recomposed rather than trusted.
_CACHE_VERSION = 1


def cache_format(
    relation: NeighboringRelation, delta: float, epsilon_cap: float, orders: Sequence[float]
) -> str:
    """The ``format`` of the states a composer of these limits stores: a stored state is used
    only by a composer of the same skdp cache version, dp_accounting version and limits."""
    try:
        accounting_version = importlib.metadata.version("dp-accounting")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - vendored copies
        accounting_version = "unknown"
    digest = hashlib.sha256(np.asarray(orders).astype("<f8").tobytes()).hexdigest()[:16]
    return (
        f"skdp.budget composed v{_CACHE_VERSION}; dp_accounting {accounting_version}; "
        f"{relation.value}; delta={delta!r}; epsilon={epsilon_cap!r}; orders={digest}"
    )


def state_to_payload(state: ComposedState) -> tuple[str, bytes]:
    """A JSON header and the RDP curve's bytes, for the ledger's cache."""
    header = {
        "has_rdp": state.rdp is not None,
        "log_no_additive": state.log_no_additive,
        "log_no_atom": state.log_no_atom,
        "pld_applies": state.pld_applies,
    }
    data = b"" if state.rdp is None else np.ascontiguousarray(state.rdp, "<f8").tobytes()
    return json.dumps(header, sort_keys=True, allow_nan=False), data


def state_from_payload(
    mark: RowMark, header: str, data: bytes, n_orders: int
) -> ComposedState | None:
    """Inverse of :func:`state_to_payload` (``None`` if it is not a valid encoding)."""
    try:
        values = json.loads(header)
        has_rdp, pld_applies = values["has_rdp"], values["pld_applies"]
        logs = float(values["log_no_atom"]), float(values["log_no_additive"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (isinstance(has_rdp, bool) and isinstance(pld_applies, bool)):
        return None
    if not all(math.isfinite(v) and v <= 0.0 for v in logs):
        return None
    rdp = None
    if has_rdp:
        if len(data) != 8 * n_orders:
            return None
        rdp = np.frombuffer(data, dtype="<f8").astype(np.float64)
        if np.any(np.isnan(rdp)) or np.any(rdp < 0.0):
            return None
    elif data or not pld_applies:
        return None
    return ComposedState(mark, rdp, pld_applies, *logs)


def pld_state_to_payload(state: PldState) -> tuple[str, bytes]:
    """A JSON header and the PLD's arrays, for the ledger's cache."""
    pld_header, data = ("", b"") if state.pld is None else pld_to_payload(state.pld)
    header = {"interval": state.interval, "pld": pld_header, "private": state.pld is not None}
    return json.dumps(header, sort_keys=True, allow_nan=False), data


def pld_state_from_payload(mark: RowMark, header: str, data: bytes) -> PldState | None:
    """Inverse of :func:`pld_state_to_payload` (``None`` if it is not a valid encoding)."""
    try:
        values = json.loads(header)
        interval, private = float(values["interval"]), values["private"]
        pld = pld_from_payload(values["pld"], data) if private is True else None
    except (KeyError, TypeError, ValueError):  # PayloadError is a ValueError
        return None
    if private is not True and (private is not False or data):
        return None
    return PldState(mark, interval, pld)
