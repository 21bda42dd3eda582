"""The optimizer registry: every name the ``optimizer=`` parameter accepts.

A new optimizer is one class with ``plan()`` and ``run()`` registered here; nothing else in the
package needs to change. An optimizer that also has a variant for the last-iterate accountant
(``accountant='last_iterate'``: projection, fixed-size batches, last iterate only) registers it
in ``_LAST_ITERATE``.
"""

from __future__ import annotations

from ._noisy_sgd import ADPSGD, NoisySGD, ProjectedNoisySGD, SGDSettings

__all__ = ["OPTIMIZER_NAMES", "make_optimizer"]

_AVAILABLE = {"noisy_sgd": NoisySGD, "adp_sgd": ADPSGD}
_LAST_ITERATE = {"noisy_sgd": ProjectedNoisySGD}
# Accepted by the parameter so that code written against the documented API fails loudly and
# clearly instead of silently training with another method.
_PLANNED = ("adaclip", "diff2")
OPTIMIZER_NAMES = (*_AVAILABLE, *_PLANNED)


def make_optimizer(name: str, settings: SGDSettings, accountant: str = "pld"):
    """The optimizer called ``name``, configured with ``settings``, in the variant that
    ``accountant`` can account (``'last_iterate'`` has its own variants)."""
    if name not in OPTIMIZER_NAMES:
        raise ValueError(f"optimizer must be one of {OPTIMIZER_NAMES}, got {name!r}")
    if accountant == "last_iterate":
        if name not in _LAST_ITERATE:
            raise ValueError(
                f"accountant='last_iterate' covers projected noisy SGD only "
                f"(optimizer={sorted(_LAST_ITERATE)}), not optimizer={name!r}: the bound "
                "needs a constant step size and plain clipped-and-noised gradients. Use "
                "optimizer='noisy_sgd', or the standard accountant ('pld' or 'rdp')."
            )
        return _LAST_ITERATE[name](settings)
    if name in _AVAILABLE:
        return _AVAILABLE[name](settings)
    raise NotImplementedError(
        f"optimizer={name!r} is part of skdp's design but is not available in this version "
        f"yet; available: {sorted(_AVAILABLE)}. skdp never falls back to another optimizer "
        "silently."
    )
