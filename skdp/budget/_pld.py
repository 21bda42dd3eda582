"""Privacy-loss distributions for the ledger: a vectorised epsilon, and a storable form.

``dp_accounting``'s ``get_epsilon_for_delta`` walks the probability mass of a PLD in a Python
loop, from the largest loss down, until the hockey-stick divergence reaches delta. A fine PLD
has hundreds of thousands to millions of entries, and at a large delta (0.5) the walk covers
most of them: seconds per call. :func:`epsilon_for_delta` computes the same walk with cumulative
sums over the mass arrays (``numpy``), and the tests check it against ``dp_accounting``.

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

__all__ = ["epsilon_for_delta", "pld_to_payload", "pld_from_payload", "PayloadError"]

# The vectorised walk sums in the same order as dp_accounting's loop but takes numpy's exp; a
# last-bit difference is possible, so the result is raised by this much (relative) to stay on
# the conservative side of dp_accounting's value.
_ROUNDING_MARGIN = 1e-12


class PayloadError(ValueError):
    """A stored PLD is not a valid encoding."""


def epsilon_for_delta(pld: PrivacyLossDistribution, delta: float) -> float:
    """The smallest epsilon with hockey-stick divergence at most ``delta`` (a vectorised
    ``pld.get_epsilon_for_delta(delta)``).

    Parameters
    ----------
    pld : PrivacyLossDistribution
    delta : float

    Returns
    -------
    float
        ``max`` over the PLD's two directions (one when it is symmetric), ``inf`` when no
        finite epsilon reaches ``delta``.
    """
    # dp_accounting has no public accessor for a PLD's PMFs; the tests compare with its own
    # get_epsilon_for_delta, so a change there is caught.
    remove = _pmf_epsilon(pld._pmf_remove, delta)
    if pld._symmetric:
        return remove
    return max(remove, _pmf_epsilon(pld._pmf_add, delta))


def _pmf_epsilon(pmf: pld_pmf.PLDPmf, delta: float) -> float:
    if isinstance(pmf, pld_pmf.DensePLDPmf):
        n = len(pmf._probs)
        # From the largest loss down by repeated subtraction, as dp_accounting's
        # itertools.count does (a sequential cumsum adds in the same order).
        upper_loss = (pmf._lower_loss + n - 1) * pmf._discretization
        steps = np.full(n, -pmf._discretization)
        steps[:1] = upper_loss
        losses = np.cumsum(steps)
        probs = np.asarray(pmf._probs, dtype=np.float64)[::-1]
    elif isinstance(pmf, pld_pmf.SparsePLDPmf):
        keys = np.array(sorted(pmf._loss_probs), dtype=np.int64)[::-1]
        losses = keys.astype(np.float64) * pmf._discretization
        probs = np.array([pmf._loss_probs[int(k)] for k in keys], dtype=np.float64)
    else:  # an unknown PMF type: dp_accounting's own loop
        return float(pmf.get_epsilon_for_delta(delta))
    epsilon = _walk(float(pmf._infinity_mass), losses, probs, float(delta))
    return epsilon * (1.0 + _ROUNDING_MARGIN) if 0.0 < epsilon < math.inf else epsilon


def _walk(infinity_mass: float, losses: np.ndarray, probs: np.ndarray, delta: float) -> float:
    """dp_accounting's ``_get_epsilon_for_delta`` over losses sorted in descending order.

    The loop adds the mass of each loss to ``upper`` and ``exp(-loss) * mass`` to ``lower`` and
    stops before the first loss ``l`` with ``log((upper - delta) / lower) >= l``; it returns
    early with ``max(0, l)`` if ``upper >= delta`` while ``lower`` is still 0 (losses so large
    that ``exp(-l)`` underflows). Cumulative sums give ``upper`` and ``lower`` before every
    step at once.
    """
    if infinity_mass > delta:
        return math.inf
    upper = np.cumsum(np.concatenate(([infinity_mass], probs)))  # before step k: upper[k]
    lower = np.cumsum(np.concatenate(([0.0], np.exp(-losses) * probs)))
    up, low = upper[:-1], lower[:-1]
    usable = (up > delta) & (low > 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(usable, (up - delta) / np.where(usable, low, 1.0), 1.0)
        stop = usable & (np.log(ratio) >= losses)
    early = (upper[1:] >= delta) & (lower[1:] == 0.0)
    k_stop = int(np.argmax(stop)) if stop.any() else len(losses)
    k_early = int(np.argmax(early)) if early.any() else len(losses)
    if k_early < k_stop:
        return max(0.0, float(losses[k_early]))
    mass_upper, mass_lower = float(upper[k_stop]), float(lower[k_stop])
    if mass_upper <= mass_lower + delta:
        return 0.0
    return math.log((mass_upper - delta) / mass_lower)


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
