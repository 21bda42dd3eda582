"""noisy_sgd: DP-SGD (clip per-example gradients, add Gaussian noise, step)."""

from __future__ import annotations

from ._sgd.optimizer import SGDOptimizer

__all__ = ["NoisySGD"]


class NoisySGD(SGDOptimizer):
    """DP-SGD: the shared loop of :class:`~skdp.mechanisms._sgd.optimizer.SGDOptimizer` as it
    is (Poisson sampling, add/remove-one relation, optional iterate averaging), accounted on the
    whole trajectory."""

    name = "noisy_sgd"
    description = "DP-SGD"
