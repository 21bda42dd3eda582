"""The only module of the benchmarks that imports skdp's private names.

Studies that vary a shipped constant (to choose it) or reach into the engine do it through the
functions below, never by importing ``skdp._...`` themselves: when a private module moves inside
skdp, this file is the one edit. Each lookup tries the current location first and then the
former ones, so the benchmarks run on checkouts from either side of a move.
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Iterator

#: Where each private module lives (current location first).
LOCATIONS = {
    "linear_rule": ("skdp._defaults.linear", "skdp.linear_model._defaults"),
    "public_scale": ("skdp._scale.public_scale", "skdp._public_scale"),
    "scale_defaults": ("skdp._defaults.scale", "skdp._scale.public_scale"),
    "bounds": ("skdp.preprocessing._bounds",),
    "optimizers": ("skdp.mechanisms._registry", "skdp._engine._optimizers"),
    "glm": ("skdp._engine.rows.host", "skdp._engine._glm"),
    "ledger": ("skdp.budget._sync", "skdp.budget._ledger"),
}


def module(role: str):
    """The private module that plays ``role`` (a key of :data:`LOCATIONS`)."""
    errors = []
    for name in LOCATIONS[role]:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as error:
            errors.append(f"{name}: {error}")
    raise ImportError(f"no skdp module for {role!r} ({'; '.join(errors)}); update "
                      "benchmarks/harness/internals.py")


# --- the linear models' scale-free rule (skdp/_defaults/linear.py) -------------------------
RULE_CONSTANTS = ("STEP_SCALE", "NOISE_DAMPING", "FEATURE_EXPONENT")


def shipped_rule_constants() -> dict[str, dict[str, float]]:
    """``{constant: {task: value}}`` of the rule as shipped (copies)."""
    rule = module("linear_rule")
    return {name: dict(getattr(rule, name)) for name in RULE_CONSTANTS}


@contextlib.contextmanager
def rule_constants(task: str, step_scale: float | None = None,
                   noise_damping: float | None = None,
                   feature_exponent: float | None = None) -> Iterator[None]:
    """Fit with the rule's constants of ``task`` replaced (the others as shipped); restored on
    exit."""
    rule = module("linear_rule")
    saved = {name: getattr(rule, name) for name in RULE_CONSTANTS}
    try:
        for name, value in zip(RULE_CONSTANTS, (step_scale, noise_damping, feature_exponent),
                               strict=True):
            if value is not None:
                setattr(rule, name, {**saved[name], task: value})
        yield
    finally:
        for name, value in saved.items():
            setattr(rule, name, value)


# --- the public scale search (skdp/_scale/public_scale.py) ---------------------------------
@contextlib.contextmanager
def widen_to(value: float) -> Iterator[None]:
    """Fit with the scale search's ``WIDEN_TO`` replaced (1.0: no widening); restored on exit.
    Replaced wherever it is bound (the module that defines it and the search that uses it)."""
    modules = {id(m): m for m in (module("public_scale"), module("scale_defaults"))
               if hasattr(m, "WIDEN_TO")}
    saved = {key: m.WIDEN_TO for key, m in modules.items()}
    for m in modules.values():
        m.WIDEN_TO = value
    try:
        yield
    finally:
        for key, m in modules.items():
            m.WIDEN_TO = saved[key]


def target_quantiles() -> tuple[float, float]:
    """The quantiles of the targets the scale search asks for."""
    return tuple(module("scale_defaults").TARGET_QUANTILES)


def located_quantile(n: int, eps: float, delta: float = 1e-5) -> float | None:
    """The lower quantile the scale search of a one-target regression on ``n`` rows locates at
    ``(eps, delta)`` (``None``: no search is feasible)."""
    scale = module("public_scale")
    noise = scale.scale_noise_multiplier(eps, delta, n, 1)
    if noise is None:
        return None
    columns, quantiles = scale.search_columns(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = module("bounds").plan_quantiles(quantiles, n, columns, noise, "probe")
    return min(plan.quantiles)


# --- the engine --------------------------------------------------------------------------------
def optimizer_names() -> list[str]:
    """Every optimizer in skdp's registry."""
    return sorted(module("optimizers")._AVAILABLE)


def rescale_rows(X, max_row_norm: float):
    """Rows scaled down to norm at most ``max_row_norm``, as the linear models' fit does."""
    return module("glm").rescale_rows(X, max_row_norm)


def mlp_private_step(estimator_class) -> float:
    """The undamped private step an MLP's ``learning_rate_init='auto'`` starts from."""
    steps = getattr(estimator_class, "_STEPS", None)  # skdp/_defaults/mlp.py's MLPSteps
    if steps is not None:
        return steps.private
    return estimator_class._PRIVATE_STEP


# --- the budget ledger -------------------------------------------------------------------------
def forget_ledger_caches() -> None:
    """Make the next use of a ledger start as in a process that never opened one."""
    ledger = module("ledger")
    if hasattr(ledger, "SHARED"):  # the composed states every PrivacyBudget of the process shares
        ledger.SHARED.clear()
        return
    with ledger._CACHE_LOCK:
        ledger._STATES.clear()
        ledger._PLD_STATES.clear()
        ledger._COMPOSERS.clear()
