"""JSON encoding of spends and parameters, for storage in the ledger file.

Not pickle: opening a ledger must never run code from the file. Decoding only constructs the
``dp_accounting`` event classes on an allow-list, from plain numbers, lists and nested events.
DpEvents are ``attrs`` classes, so their fields are read with ``attr.fields``.

Format (strict JSON, keys sorted)::

    {"dp_event": "GaussianDpEvent", "fields": {"noise_multiplier": 1.5}}
    {"rdp_curve": {"orders": [2.0, 4.0], "rdp": [0.1, 0.3]}}
    {"with_extra_delta": {"additive": false, "extra_delta": 1e-07, "spend": <a DpEvent or an
                          RDP curve, as above>}}

Non-finite floats are ``{"$float": "inf"}`` (and ``"-inf"``, ``"nan"``); tuples are
``{"$tuple": [...]}`` so that events built from tuples compare equal after a round trip.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from typing import Any

import attr
import dp_accounting
from dp_accounting import dp_event as _dp_event

from ._records import RdpCurve, Spend, WithExtraDelta

__all__ = ["SUPPORTED_EVENT_CLASSES", "encode_spend", "decode_spend", "encode_params"]

# Every concrete DpEvent class dp_accounting has (some only in newer releases: skipped when
# absent). Exact classes only: a user subclass could change the meaning of the fields.
_EVENT_CLASS_NAMES = (
    "NoOpDpEvent",
    "NonPrivateDpEvent",
    "UnsupportedDpEvent",
    "GaussianDpEvent",
    "LaplaceDpEvent",
    "DiscreteLaplaceDpEvent",
    "DiscreteGaussianDpEvent",
    "RandomizedResponseDpEvent",
    "EpsilonDeltaDpEvent",
    "ZCDpEvent",
    "MixtureOfGaussiansDpEvent",
    "ExponentialMechanismDpEvent",
    "PermuteAndFlipDpEvent",
    "SelfComposedDpEvent",
    "ComposedDpEvent",
    "PoissonSampledDpEvent",
    "SampledWithReplacementDpEvent",
    "SampledWithoutReplacementDpEvent",
    "TruncatedSubsampledGaussianDpEvent",
    "SingleEpochTreeAggregationDpEvent",
    "RepeatAndSelectDpEvent",
)

#: The DpEvent classes the ledger can store, by name.
SUPPORTED_EVENT_CLASSES: dict[str, type[dp_accounting.DpEvent]] = {
    name: getattr(_dp_event, name)
    for name in _EVENT_CLASS_NAMES
    if isinstance(getattr(_dp_event, name, None), type)
    and attr.has(getattr(_dp_event, name))
}

_MAX_DEPTH = 64  # deeper nesting than any real plan; guards a hostile file against recursion


class CodecError(ValueError):
    """A value cannot be encoded, or stored text is not a valid encoding."""


# --- spends ---------------------------------------------------------------------------------


def encode_spend(spend: Spend) -> str:
    """Canonical JSON text of a DpEvent, an :class:`RdpCurve` or a :class:`WithExtraDelta`."""
    if isinstance(spend, WithExtraDelta):
        obj: Any = {
            "with_extra_delta": {
                "additive": spend.additive,
                "extra_delta": _encode_float(spend.extra_delta),
                "spend": _encode_plain_spend(spend.spend),
            }
        }
    else:
        obj = _encode_plain_spend(spend)
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _encode_plain_spend(spend: Any) -> Any:
    if isinstance(spend, RdpCurve):
        return {
            "rdp_curve": {
                "orders": [_encode_float(v) for v in spend.orders],
                "rdp": [_encode_float(v) for v in spend.rdp],
            }
        }
    return _encode_event(spend, 0)


def decode_spend(text: str) -> Spend:
    """Inverse of :func:`encode_spend`; raises :class:`CodecError` on anything else."""
    try:
        obj = json.loads(text)
    except (TypeError, ValueError, RecursionError) as exc:
        raise CodecError(f"stored spend is not valid JSON: {exc}") from None
    if isinstance(obj, dict) and set(obj) == {"with_extra_delta"}:
        wrapper = obj["with_extra_delta"]
        if not (
            isinstance(wrapper, dict) and set(wrapper) == {"additive", "extra_delta", "spend"}
        ):
            raise CodecError(f"malformed spend with an extra delta: {wrapper!r:.200}")
        additive = wrapper["additive"]
        if not isinstance(additive, bool):
            raise CodecError(f"malformed spend with an extra delta: additive={additive!r:.100}")
        inner = wrapper["spend"]
        if isinstance(inner, dict) and "with_extra_delta" in inner:
            raise CodecError("a stored spend with an extra delta cannot hold another one")
        spend = _decode_plain_spend(inner)
        try:
            return WithExtraDelta(spend, _decode_float(wrapper["extra_delta"]), additive)
        except (TypeError, ValueError) as exc:
            raise CodecError(f"malformed spend with an extra delta: {exc}") from None
    return _decode_plain_spend(obj)


def _decode_plain_spend(obj: Any) -> dp_accounting.DpEvent | RdpCurve:
    if isinstance(obj, dict) and set(obj) == {"rdp_curve"}:
        curve = obj["rdp_curve"]
        if not (isinstance(curve, dict) and set(curve) == {"orders", "rdp"}):
            raise CodecError(f"malformed RDP curve: {curve!r:.200}")
        try:
            return RdpCurve(
                tuple(_decode_float(v) for v in _as_list(curve["orders"])),
                tuple(_decode_float(v) for v in _as_list(curve["rdp"])),
            )
        except (TypeError, ValueError) as exc:
            raise CodecError(f"malformed RDP curve: {exc}") from None
    return _decode_event(obj, 0)


def _encode_event(event: Any, depth: int) -> dict[str, Any]:
    cls = type(event)
    if SUPPORTED_EVENT_CLASSES.get(cls.__name__) is not cls:
        raise CodecError(
            f"cannot store a {cls.__module__}.{cls.__qualname__}: the ledger stores "
            "dp_accounting DpEvents (" + ", ".join(sorted(SUPPORTED_EVENT_CLASSES)) + "), "
            "skdp.budget.RdpCurve and skdp.budget.WithExtraDelta of either"
        )
    if depth > _MAX_DEPTH:
        raise CodecError(f"DpEvent nested deeper than {_MAX_DEPTH} levels")
    fields = {
        f.name: _encode_value(getattr(event, f.name), depth + 1) for f in attr.fields(cls)
    }
    return {"dp_event": cls.__name__, "fields": fields}


def _encode_value(value: Any, depth: int) -> Any:
    if isinstance(value, dp_accounting.DpEvent):
        return _encode_event(value, depth)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return _encode_float(float(value))
    if isinstance(value, (list, tuple)):
        items = [_encode_value(v, depth + 1) for v in value]
        return {"$tuple": items} if isinstance(value, tuple) else items
    raise CodecError(f"cannot store a DpEvent field of type {type(value).__name__}: {value!r}")


def _decode_event(obj: Any, depth: int) -> dp_accounting.DpEvent:
    if depth > _MAX_DEPTH:
        raise CodecError(f"stored DpEvent nested deeper than {_MAX_DEPTH} levels")
    if not (isinstance(obj, dict) and set(obj) == {"dp_event", "fields"}):
        raise CodecError(f"not a stored DpEvent: {obj!r:.200}")
    name, fields = obj["dp_event"], obj["fields"]
    cls = SUPPORTED_EVENT_CLASSES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise CodecError(f"stored event type {name!r:.100} is not an allowed dp_accounting DpEvent")
    if not isinstance(fields, dict):
        raise CodecError(f"malformed fields of a stored {name}: {fields!r:.200}")
    known = {f.name for f in attr.fields(cls)}
    if not set(fields) <= known:
        raise CodecError(f"stored {name} has unknown fields {sorted(set(fields) - known)}")
    values = {key: _decode_value(value, depth + 1) for key, value in fields.items()}
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise CodecError(f"cannot rebuild a stored {name}: {exc}") from None


def _decode_value(obj: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise CodecError(f"stored value nested deeper than {_MAX_DEPTH} levels")
    if obj is None or isinstance(obj, (bool, str, int, float)):
        return obj
    if isinstance(obj, list):
        return [_decode_value(v, depth + 1) for v in obj]
    if isinstance(obj, dict):
        if set(obj) == {"$float"}:
            return _decode_float(obj)
        if set(obj) == {"$tuple"}:
            return tuple(_decode_value(v, depth + 1) for v in _as_list(obj["$tuple"]))
        return _decode_event(obj, depth)
    raise CodecError(f"unexpected stored value {obj!r:.200}")


def _encode_float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def _decode_float(obj: Any) -> float:
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return float(obj)
    if isinstance(obj, dict) and set(obj) == {"$float"} and obj["$float"] in ("inf", "-inf", "nan"):
        return float(obj["$float"])
    raise CodecError(f"not a stored number: {obj!r:.200}")


def _as_list(obj: Any) -> list[Any]:
    if not isinstance(obj, list):
        raise CodecError(f"expected a list, got {obj!r:.200}")
    return obj


# --- parameters -----------------------------------------------------------------------------

_MAX_REPR = 2000  # a parameter's repr() is for reading; cap it so one object cannot bloat a row


def encode_params(params: Mapping[str, Any] | None) -> str:
    """JSON text of a parameter dict: JSON values as they are, ``repr()`` of anything else."""
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict of parameter names to values, got {params!r:.200}")
    return json.dumps(_jsonable(params, 0), sort_keys=True, allow_nan=False)


def _jsonable(value: Any, depth: int) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(float(value)):
        return float(value)
    if depth < 8 and isinstance(value, Mapping):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if depth < 8 and isinstance(value, (list, tuple)) and len(value) <= 1000:
        return [_jsonable(v, depth + 1) for v in value]
    text = repr(value)
    return text if len(text) <= _MAX_REPR else text[:_MAX_REPR] + "...(truncated)"
