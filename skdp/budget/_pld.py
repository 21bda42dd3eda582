"""Privacy-loss distributions for the ledger: a storable form (and the vectorised epsilon).

:func:`epsilon_for_delta` lives in :mod:`skdp.accounting._pld_epsilon`, which every PLD
accountant of skdp uses; it is re-exported here for the ledger.

:func:`pld_to_payload` and :func:`pld_from_payload` turn a PLD into a JSON header and raw
little-endian float64 / int64 arrays and back, so that the ledger file can keep a composed PLD
(never pickle: reading a ledger must not run code from the file).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

from ..accounting._pld_epsilon import epsilon_for_delta

__all__ = ["epsilon_for_delta", "pld_to_payload", "pld_from_payload", "PayloadError"]


class PayloadError(ValueError):
    """A stored PLD is not a valid encoding."""


# --- storage --------------------------------------------------------------------------------


def pld_to_payload(pld: PrivacyLossDistribution) -> tuple[str, bytes]:
    """A JSON header and the raw arrays of ``pld`` (dense or sparse PMFs kept as they are)."""
    pmfs = [pld._pmf_remove] if pld._symmetric else [pld._pmf_remove, pld._pmf_add]
    headers, chunks = [], []
    for pmf in pmfs:
        header, data = _pmf_to_payload(pmf)
        headers.append(header)
        chunks.append(data)
    text = json.dumps({"pmfs": headers}, sort_keys=True, allow_nan=False)
    return text, b"".join(chunks)


def _pmf_to_payload(pmf: pld_pmf.PLDPmf) -> tuple[dict[str, Any], bytes]:
    common = {
        "discretization": float(pmf._discretization),
        "infinity_mass": float(pmf._infinity_mass),
        "pessimistic": bool(pmf._pessimistic_estimate),
    }
    if isinstance(pmf, pld_pmf.DensePLDPmf):
        probs = np.ascontiguousarray(pmf._probs, dtype="<f8")
        header = {"kind": "dense", "lower_loss": int(pmf._lower_loss), "size": len(probs)}
        return {**common, **header}, probs.tobytes()
    if isinstance(pmf, pld_pmf.SparsePLDPmf):
        keys = np.array(sorted(pmf._loss_probs), dtype="<i8")
        values = np.array([pmf._loss_probs[int(k)] for k in keys], dtype="<f8")
        return {**common, "kind": "sparse", "size": len(keys)}, keys.tobytes() + values.tobytes()
    raise TypeError(f"cannot store a PMF of type {type(pmf).__name__}")


def pld_from_payload(text: str, data: bytes) -> PrivacyLossDistribution:
    """Inverse of :func:`pld_to_payload`; raises :class:`PayloadError` on anything else."""
    try:
        header = json.loads(text)
        pmf_headers = header["pmfs"]
        if not isinstance(pmf_headers, list) or len(pmf_headers) not in (1, 2):
            raise PayloadError("expected one or two PMFs")
        pmfs, offset = [], 0
        for pmf_header in pmf_headers:
            pmf, offset = _pmf_from_payload(pmf_header, data, offset)
            pmfs.append(pmf)
    except PayloadError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise PayloadError(f"malformed stored PLD: {exc}") from None
    if offset != len(data):
        raise PayloadError("stored PLD has trailing data")
    return PrivacyLossDistribution(pmfs[0], pmfs[1] if len(pmfs) == 2 else None)


def _pmf_from_payload(
    header: dict[str, Any], data: bytes, offset: int
) -> tuple[pld_pmf.PLDPmf, int]:
    discretization = float(header["discretization"])
    infinity_mass = float(header["infinity_mass"])
    pessimistic = header["pessimistic"]
    size = header["size"]
    if not (math.isfinite(discretization) and discretization > 0.0):
        raise PayloadError("bad discretization")
    if not 0.0 <= infinity_mass <= 1.0 or not isinstance(pessimistic, bool):
        raise PayloadError("bad infinity mass or estimate type")
    if not isinstance(size, int) or size < 0:
        raise PayloadError("bad size")
    if header["kind"] == "dense":
        lower_loss = header["lower_loss"]
        if not isinstance(lower_loss, int):
            raise PayloadError("bad lower loss")
        probs = _array(data, offset, size, "<f8")
        return (
            pld_pmf.DensePLDPmf(discretization, lower_loss, probs, infinity_mass, pessimistic),
            offset + 8 * size,
        )
    if header["kind"] == "sparse":
        keys = _array(data, offset, size, "<i8")
        values = _array(data, offset + 8 * size, size, "<f8")
        loss_probs = {int(k): float(v) for k, v in zip(keys, values, strict=True)}
        return (
            pld_pmf.SparsePLDPmf(loss_probs, discretization, infinity_mass, pessimistic),
            offset + 16 * size,
        )
    raise PayloadError(f"unknown PMF kind {header['kind']!r:.50}")


def _array(data: bytes, offset: int, size: int, dtype: str) -> np.ndarray:
    if offset + 8 * size > len(data):
        raise PayloadError("stored PLD is truncated")
    values = np.frombuffer(data, dtype=dtype, count=size, offset=offset).astype(
        np.float64 if dtype == "<f8" else np.int64
    )
    if dtype == "<f8" and not np.all(np.isfinite(values)):  # FFT leaves tiny negatives: kept
        raise PayloadError("stored PLD has non-finite masses")
    return values
