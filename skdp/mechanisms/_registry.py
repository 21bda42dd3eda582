"""The optimizer registry: every name the ``optimizer=`` parameter accepts.

A DP-SGD optimizer is a class built from :class:`~skdp.mechanisms.SGDSettings` that implements
the :class:`~skdp.mechanisms.Mechanism` protocol; registering it under a name is all it takes
for every estimator to train with it (:func:`register_optimizer`). An optimizer may also have a
variant for the last-iterate accountant (``accountant='last_iterate'``: projection, fixed-size
batches, last iterate only). Closed-form mechanisms (``'ssp'``) are offered by the estimator
that can use them (DPRidge) and refused by the others.
"""

from __future__ import annotations

from collections.abc import Callable

from ._adaclip import AdaClip
from ._adp_sgd import ADPSGD
from ._diff2 import Diff2
from ._noisy_sgd import NoisySGD
from ._projected_sgd import ProjectedNoisySGD
from ._sgd.settings import SGDSettings
from ._ssp.solve import DESCRIPTION as _SSP_DESCRIPTION

__all__ = [
    "OPTIMIZER_NAMES",
    "is_full_batch_only",
    "last_iterate_optimizers",
    "make_optimizer",
    "optimizer_class",
    "register_optimizer",
]

_AVAILABLE: dict[str, Callable] = {
    "noisy_sgd": NoisySGD, "adp_sgd": ADPSGD, "adaclip": AdaClip, "diff2": Diff2,
}
_LAST_ITERATE: dict[str, Callable] = {"noisy_sgd": ProjectedNoisySGD}
# Closed-form mechanisms: no SGD plan or run; the estimator that offers one routes to it itself.
_CLOSED_FORM = {"ssp": ("DPRidge", _SSP_DESCRIPTION)}
#: Every accepted name. A live set: the estimators' parameter validation reads it, so a name
#: registered later is accepted too.
OPTIMIZER_NAMES: set[str] = {*_AVAILABLE, *_CLOSED_FORM}


def register_optimizer(name: str, factory: Callable[[SGDSettings], object], *,
                       last_iterate: Callable[[SGDSettings], object] | None = None) -> None:
    """Make ``optimizer=name`` train every skdp estimator with ``factory(settings)``.

    Parameters
    ----------
    name : str
        The name the estimators' ``optimizer`` parameter takes.
    factory : callable
        ``factory(settings)`` returns a :class:`~skdp.mechanisms.Mechanism` for the public
        :class:`~skdp.mechanisms.SGDSettings` of a fit (usually the optimizer's class).
        Optional class attributes tune the estimators' defaults: ``full_batch_only``,
        ``auto_learning_rate``, ``auto_step_factor`` (see
        :class:`~skdp.mechanisms.SGDOptimizer`).
    last_iterate : callable, optional
        The variant for ``accountant='last_iterate'``, if the optimizer has one.

    Notes
    -----
    The registry lives in the process: register in a module that every process imports
    (joblib workers of a search re-import it), not interactively only.
    """
    if name in _CLOSED_FORM:
        raise ValueError(f"optimizer name {name!r} is taken by a closed-form mechanism")
    _AVAILABLE[name] = factory
    if last_iterate is not None:
        _LAST_ITERATE[name] = last_iterate
    OPTIMIZER_NAMES.add(name)


def last_iterate_optimizers() -> tuple[str, ...]:
    """The optimizers with a variant for ``accountant='last_iterate'``."""
    return tuple(_LAST_ITERATE)


def optimizer_class(name: str):
    """The registered factory (class) of optimizer ``name``, or ``None`` (closed form)."""
    return _AVAILABLE.get(name)


def is_full_batch_only(name: str) -> bool:
    """Whether optimizer ``name`` trains on every row at every step (diff2)."""
    return bool(getattr(_AVAILABLE.get(name), "full_batch_only", False))


def make_optimizer(name: str, settings: SGDSettings, accountant: str = "pld"):
    """The optimizer called ``name``, configured with ``settings``, in the variant that
    ``accountant`` can account (``'last_iterate'`` has its own variants)."""
    return optimizer_factory(name, accountant)(settings)


def optimizer_factory(name: str, accountant: str = "pld") -> Callable[[SGDSettings], object]:
    """The factory of optimizer ``name`` in the variant ``accountant`` can account; refuses
    names that cannot train this estimator, with what to use instead."""
    if name not in OPTIMIZER_NAMES:
        names = (*_AVAILABLE, *_CLOSED_FORM)
        raise ValueError(f"optimizer must be one of {names}, got {name!r}")
    if name in _CLOSED_FORM:
        owner, description = _CLOSED_FORM[name]
        raise ValueError(
            f"optimizer={name!r} ({description}) is closed-form linear regression, offered by "
            f"{owner} only; it cannot train this model. Use one of {tuple(_AVAILABLE)}."
        )
    if accountant == "last_iterate":
        if name not in _LAST_ITERATE:
            raise ValueError(
                f"accountant='last_iterate' covers projected noisy SGD only "
                f"(optimizer={sorted(_LAST_ITERATE)}), not optimizer={name!r}: the bound "
                "needs a constant step size and plain clipped-and-noised gradients. Use "
                "optimizer='noisy_sgd', or the standard accountant ('pld' or 'rdp')."
            )
        return _LAST_ITERATE[name]
    return _AVAILABLE[name]
