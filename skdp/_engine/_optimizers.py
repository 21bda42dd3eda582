"""The optimizer registry: every name the ``optimizer=`` parameter accepts.

A new optimizer is one class with ``plan()`` and ``run()`` registered here; nothing else in the
package needs to change. An optimizer that also has a variant for the last-iterate accountant
(``accountant='last_iterate'``: projection, fixed-size batches, last iterate only) registers it
in ``_LAST_ITERATE``.
"""

from __future__ import annotations

from ._adaclip import AdaClip
from ._diff2 import Diff2
from ._noisy_sgd import ADPSGD, NoisySGD, ProjectedNoisySGD, SGDSettings
from ._ssp import DESCRIPTION as _SSP_DESCRIPTION

__all__ = ["OPTIMIZER_NAMES", "describe_optimizer", "make_optimizer", "is_full_batch_only"]

_AVAILABLE = {"noisy_sgd": NoisySGD, "adp_sgd": ADPSGD, "adaclip": AdaClip, "diff2": Diff2}
_LAST_ITERATE = {"noisy_sgd": ProjectedNoisySGD}
# Closed-form optimizers: no SGD plan or run; the estimator that offers one routes to it
# itself (DPRidge -> skdp/linear_model/_ssp.py). Others refuse them in make_optimizer.
_CLOSED_FORM = {"ssp": ("DPRidge", _SSP_DESCRIPTION)}
OPTIMIZER_NAMES = (*_AVAILABLE, *_CLOSED_FORM)


def describe_optimizer(name: str) -> str:
    """A short description of optimizer ``name`` for privacy reports."""
    if name in _CLOSED_FORM:
        return _CLOSED_FORM[name][1]
    cls = _AVAILABLE.get(name)
    return getattr(cls, "description", name)


def is_full_batch_only(name: str) -> bool:
    """Whether optimizer ``name`` trains on every row at every step (diff2)."""
    return bool(getattr(_AVAILABLE.get(name), "full_batch_only", False))


def make_optimizer(name: str, settings: SGDSettings, accountant: str = "pld"):
    """The optimizer called ``name``, configured with ``settings``, in the variant that
    ``accountant`` can account (``'last_iterate'`` has its own variants)."""
    if name not in OPTIMIZER_NAMES:
        raise ValueError(f"optimizer must be one of {OPTIMIZER_NAMES}, got {name!r}")
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
        return _LAST_ITERATE[name](settings)
    return _AVAILABLE[name](settings)
