"""noisy_sgd: DP-SGD (clip per-example gradients, add Gaussian noise, step)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..accounting import Calibration, PrivacyPlan, Sampling
from ._device import FitRandomness
from ._model import DPModel
from ._sampling import FullBatchSampler, PoissonSampler

__all__ = ["SGDSettings", "TrainingData", "NoisySGD", "steps_per_epoch"]


@dataclass(frozen=True)
class SGDSettings:
    """Public hyperparameters of a DP-SGD run (nothing here may depend on the data values)."""

    n_samples: int
    batch_size: int
    epochs: int
    learning_rate: float
    max_grad_norm: float
    l2: float = 0.0  # penalty (l2 / 2) ||w||^2 on the mean-loss scale
    # Release the average of the iterates of the last ``average`` fraction of the steps
    # (0 releases the last iterate).
    average: float = 0.1

    @property
    def sampling_rate(self) -> float:
        return min(1.0, self.batch_size / self.n_samples)

    @property
    def n_steps(self) -> int:
        return self.epochs * steps_per_epoch(self.n_samples, self.batch_size)

    @property
    def n_averaged_steps(self) -> int:
        """How many final iterates are averaged: ``ceil(average * n_steps)``."""
        return min(self.n_steps, math.ceil(self.average * self.n_steps - 1e-9))


def steps_per_epoch(n_samples: int, batch_size: int) -> int:
    """Steps that make one pass in expectation: ``round(n / batch_size)``, at least one."""
    return max(1, round(n_samples / batch_size))


@dataclass
class TrainingData:
    """The private training data on the compute device, with the model's per-example auxiliary
    (see :meth:`DPModel.example_aux`; ``None`` when the model needs none)."""

    X: torch.Tensor
    y: torch.Tensor
    aux: torch.Tensor | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    def batch(
        self, idx: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        # index_select is several times faster than fancy indexing for row gathers on CPU.
        return (
            self.X.index_select(0, idx),
            self.y.index_select(0, idx),
            None if self.aux is None else self.aux.index_select(0, idx),
        )


class NoisySGD:
    """DP-SGD with Poisson sampling and a fixed public denominator.

    Each step draws a Poisson batch, sums the per-example gradients clipped to ``max_grad_norm``,
    adds ``N(0, (sigma * max_grad_norm)^2)`` to every coordinate of the sum, divides by the
    expected batch size ``q * n`` and takes a gradient step (the L2 penalty's gradient is added
    after the noise: it does not depend on the data). Iterate averaging is post-processing.
    """

    name = "noisy_sgd"

    def __init__(self, settings: SGDSettings) -> None:
        self.settings = settings

    def plan(self) -> PrivacyPlan:
        s = self.settings
        sampling = Sampling.FULL_BATCH if s.sampling_rate >= 1.0 else Sampling.POISSON
        return PrivacyPlan.constant(s.n_steps, s.sampling_rate, sampling)

    def run(
        self,
        model: DPModel,
        data: TrainingData,
        calibration: Calibration,
        randomness: FitRandomness,
        verbose: int = 0,
    ) -> torch.Tensor:
        s = self.settings
        device = data.X.device
        if s.sampling_rate >= 1.0:
            sampler = FullBatchSampler(data.n_samples)
        else:
            sampler = PoissonSampler(data.n_samples, s.sampling_rate, randomness.sampling)
        denominator = sampler.expected_batch_size
        private = calibration.is_private
        clip = s.max_grad_norm if private else None
        noise_std = calibration.noise_multiplier * s.max_grad_norm

        params = model.init_params(device, randomness.init)
        grad = torch.empty_like(params)
        noise = torch.empty_like(params)
        penalty = model.penalty_mask(device) * s.l2 if s.l2 > 0 else None
        average_from = s.n_steps - s.n_averaged_steps
        averaged = params.clone()
        n_averaged = 0
        per_epoch = steps_per_epoch(s.n_samples, s.batch_size)
        released_sq_norm = 0.0

        for step in range(s.n_steps):
            idx = torch.from_numpy(sampler.sample()).to(device, non_blocking=True)
            Xb, yb, aux_b = data.batch(idx)
            model.clipped_grad_sum(params, Xb, yb, aux_b, clip, out=grad)
            if private:
                grad.add_(noise.normal_(0.0, noise_std, generator=randomness.noise))
            grad.div_(denominator)
            # From here on everything is post-processing of the released noisy gradient.
            if verbose:
                released_sq_norm += float(grad.square().sum())
            if penalty is not None:
                grad.addcmul_(penalty, params)
            params.sub_(grad, alpha=s.learning_rate)
            if step >= average_from:
                n_averaged += 1
                averaged.lerp_(params, 1.0 / n_averaged)
            if verbose and (step + 1) % per_epoch == 0:
                epoch = (step + 1) // per_epoch
                print(
                    f"[skdp] epoch {epoch}/{s.epochs}: mean squared norm of the released noisy "
                    f"gradient {released_sq_norm / per_epoch:.4g}"
                )
                released_sq_norm = 0.0
        return averaged if n_averaged else params
