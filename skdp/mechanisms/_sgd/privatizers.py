"""DP-SGD's privatisation of one batch: the only step of a run that reads the private rows."""

from __future__ import annotations

__all__ = ["ClippedNoisyMean"]


class ClippedNoisyMean:
    """DP-SGD's privatisation of one batch: clip each per-example gradient to ``clip``, sum, add
    ``N(0, noise_stds[step]^2)`` per coordinate, divide by the public ``denominator``.
    ``clip=None`` is the non-private sum (no clipping, no noise)."""

    def __init__(self, model, clip, noise_stds, denominator, generator, noise_buffer):
        self.model = model
        self.clip = clip
        self.noise_stds = noise_stds
        self.denominator = denominator
        self.generator = generator
        self.noise = noise_buffer

    def __call__(self, step, params, Xb, yb, aux_b, out):
        self.model.clipped_grad_sum(params, Xb, yb, aux_b, self.clip, out=out)
        if self.clip is not None:
            out.add_(self.noise.normal_(0.0, self.noise_stds[step], generator=self.generator))
        return out.div_(self.denominator)

    def noise_variance(self, step: int) -> float:
        """The public variance of the noise in each coordinate of step ``step``'s release."""
        if self.clip is None:
            return 0.0
        return (self.noise_stds[step] / self.denominator) ** 2
