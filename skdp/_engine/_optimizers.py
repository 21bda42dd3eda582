"""The optimizer registry: every name the ``optimizer=`` parameter accepts.

A new optimizer is one class with ``plan()`` and ``run()`` registered here; nothing else in the
package needs to change.
"""

from __future__ import annotations

from ._noisy_sgd import NoisySGD, SGDSettings

__all__ = ["OPTIMIZER_NAMES", "make_optimizer"]

_AVAILABLE = {"noisy_sgd": NoisySGD}
# Accepted by the parameter so that code written against the documented API fails loudly and
# clearly instead of silently training with another method.
_PLANNED = ("adp_sgd", "adaclip", "diff2")
OPTIMIZER_NAMES = (*_AVAILABLE, *_PLANNED)


def make_optimizer(name: str, settings: SGDSettings):
    """The optimizer called ``name``, configured with ``settings``."""
    if name in _AVAILABLE:
        return _AVAILABLE[name](settings)
    if name in _PLANNED:
        raise NotImplementedError(
            f"optimizer={name!r} is part of skdp's design but is not available in this version "
            f"yet; available: {sorted(_AVAILABLE)}. skdp never falls back to another optimizer "
            "silently."
        )
    raise ValueError(f"optimizer must be one of {OPTIMIZER_NAMES}, got {name!r}")
