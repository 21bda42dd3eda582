"""The DP-SGD optimizers' shared mechanism: plan, calibration, the training loop and the report.

An optimizer is a subclass of :class:`SGDOptimizer` that changes only what makes it
different (its noise shape, its privatisation of a batch, its plan): one file per optimizer
(``noisy_sgd``, ``adp_sgd``, ``adaclip``, ``diff2``, the last-iterate ``projected`` variant).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch

from ..._engine._device import FitRandomness
from ..._engine._model import DPModel
from ..._engine._sampling import FullBatchSampler, PoissonSampler
from ..._engine.rows.host import check_float32_range
from ..._engine.rows.training_data import Batch, TrainingData
from ..._utils.progress import progress
from ...accounting import Calibration, PrivacyPlan, Sampling, calibrate, privacy_statement
from ...accounting._schedules import plan_from_shape, quantize_shape
from .._base import Release, RunInput, StatementFacts
from .._params import parse_optimizer_params
from .iterates import IterateUpdate
from .privatizers import ClippedNoisyMean
from .settings import SGDSettings, steps_per_epoch
from .step_sizes import AdaGradNorm

__all__ = ["SGDOptimizer"]


class SGDOptimizer:
    """DP-SGD with Poisson sampling and a fixed public denominator.

    Each step draws a Poisson batch, sums the per-example gradients clipped to ``max_grad_norm``,
    adds ``N(0, (sigma * max_grad_norm)^2)`` to every coordinate of the sum, divides by the
    expected batch size ``q * n`` and takes a gradient step (the L2 penalty's gradient is added
    after the noise: it does not depend on the data), then projects onto the ball of radius
    ``projection_radius`` if one is set. Iterate averaging is post-processing.

    Subclasses set the class attributes below and override the parts that differ.
    """

    name = "noisy_sgd"
    description = "DP-SGD"
    #: The dataclass of the optimizer's own hyperparameters (``optimizer_params``), or None.
    params_class = None
    #: A full-batch-only optimizer (diff2): the estimators then train on every row.
    full_batch_only = False
    #: The step-size schedule that ``learning_rate='auto'`` means for this optimizer.
    auto_learning_rate = "constant"
    #: ``eta0='auto'`` of the linear models is the rule's step times this (see
    #: :mod:`skdp._defaults`).
    auto_step_factor = 1.0

    def __init__(self, settings: SGDSettings) -> None:
        self.settings = settings
        self.params = parse_optimizer_params(
            self.params_class, settings.optimizer_params, self.name
        )
        self.noise_levels = self._noise_levels()

    # --- plan and calibration ----------------------------------------------------------------
    def _noise_shape(self) -> np.ndarray:
        """The public relative noise of every step before quantisation."""
        return self.settings.schedule_shape()

    def _noise_levels(self) -> np.ndarray:
        """The relative noise of every step as run and accounted (quantised shape)."""
        shape = self._noise_shape()
        return quantize_shape(shape / shape.max())

    def plan(self) -> PrivacyPlan:
        s = self.settings
        sampling = Sampling.FULL_BATCH if s.sampling_rate >= 1.0 else Sampling.POISSON
        if np.all(self.noise_levels == 1.0):
            return PrivacyPlan.constant(s.n_steps, s.sampling_rate, sampling)
        return plan_from_shape(self.noise_levels, s.sampling_rate, sampling)

    def calibrate(self, plan: PrivacyPlan, epsilon: float, delta: float, accountant: str):
        """The standard accountants' calibration of the whole trajectory."""
        if np.isinf(epsilon):
            return Calibration.non_private(plan)
        return calibrate(plan, epsilon, delta, accountant)

    # --- the run -----------------------------------------------------------------------------
    def check_input(self, X, targets: np.ndarray) -> None:
        """Training computes in float32: refuse values it cannot represent."""
        check_float32_range(X, "X")
        check_float32_range(targets, "y")

    def run(self, data: RunInput, calibration) -> Release:
        """Move the rows to the device, train, and release the parameters and the run's facts."""
        model = data.model
        training = TrainingData.from_host(
            data.X, data.targets, data.target_dtype, model, data.device
        )
        # Closed-form models skip autograd's bookkeeping on every call of a step; the result is
        # the same tensor (tested).
        no_autograd = not getattr(model, "needs_autograd", True)
        with torch.inference_mode() if no_autograd else contextlib.nullcontext():
            params = self.train(model, training, calibration, data.randomness(), data.verbose)
        if no_autograd:
            params = params.clone()  # a normal tensor again, for whatever comes after
        if not bool(torch.isfinite(params).all()):
            # In practice only without privacy (private updates are bounded by clipping);
            # checking the released parameters is post-processing either way.
            raise FloatingPointError(
                "training diverged: the parameters are not finite. Put the features (and "
                "targets) on a unit scale or lower the step size."
            )
        s = self.settings
        return Release(params.detach(), attributes={
            "batch_size_": s.batch_size,
            "learning_rate_": s.learning_rate,
            "n_iter_": s.epochs,
            "n_steps_": s.n_steps,
        })

    def sampler(self, n_samples: int, randomness: FitRandomness):
        """The batch sampler its plan describes (Poisson, or every row)."""
        s = self.settings
        if s.sampling_rate >= 1.0:
            return FullBatchSampler(n_samples)
        return PoissonSampler(n_samples, s.sampling_rate, randomness.sampling)

    def train(
        self,
        model: DPModel,
        data: TrainingData,
        calibration,
        randomness: FitRandomness,
        verbose: int = 0,
    ) -> torch.Tensor:
        """The training loop; returns the released (averaged or last) iterate."""
        s = self.settings
        device = data.X.device
        sampler = self.sampler(data.n_samples, randomness)
        denominator = sampler.expected_batch_size
        fixed_rates = s.learning_rates()
        rates = None if fixed_rates is None else fixed_rates.tolist()
        adagrad = AdaGradNorm(s.learning_rate) if rates is None else None

        params = model.init_params(device, randomness.init)
        grad = torch.empty_like(params)
        privatize = self._privatizer(model, params, calibration, randomness, denominator)
        iterates = IterateUpdate(model, params, s)
        per_epoch = steps_per_epoch(s.n_samples, s.batch_size)
        released_sq_norm = 0.0

        for step, batch in enumerate(self._batches(data, sampler)):
            privatize(step, params, *batch, out=grad)
            # From here on everything is post-processing of the released noisy gradient.
            if verbose:
                released_sq_norm += float(grad.square().sum())
            if adagrad is not None:
                adagrad.update(grad, privatize.noise_variance(step))
                rate = adagrad.rate()
            else:
                rate = rates[step]
            iterates.step(step, grad, rate)
            if verbose and (step + 1) % per_epoch == 0:
                epoch = (step + 1) // per_epoch
                progress(epoch, s.epochs,
                    f"[skdp] epoch {epoch}/{s.epochs}: mean squared norm of the released noisy "
                    f"gradient {released_sq_norm / per_epoch:.4g}"
                )
                released_sq_norm = 0.0
        return iterates.released()

    def _batches(self, data: TrainingData, sampler) -> Iterator[Batch]:
        """The batch of every step, drawn an epoch at a time."""
        s = self.settings
        per_epoch = steps_per_epoch(s.n_samples, s.batch_size)
        for start in range(0, s.n_steps, per_epoch):
            yield from data.step_batches(sampler, min(per_epoch, s.n_steps - start))

    def _privatizer(
        self,
        model: DPModel,
        params: torch.Tensor,
        calibration,
        randomness: FitRandomness,
        denominator: float,
    ) -> ClippedNoisyMean:
        """The step that reads the data: batch -> released noisy mean gradient."""
        s = self.settings
        return ClippedNoisyMean(
            model,
            s.max_grad_norm if calibration.is_private else None,
            (calibration.noise_multiplier * s.max_grad_norm * self.noise_levels).tolist(),
            denominator,
            randomness.noise,
            torch.empty_like(params),
        )

    # --- the report --------------------------------------------------------------------------
    def report_lines(self, calibration) -> list[str] | None:
        """Lines describing the mechanism in ``privacy_report()`` (``None``: the generic
        description of clipped, noised gradient sums)."""
        return None

    def statement(self, calibration, release: Release, facts: StatementFacts) -> str:
        return privacy_statement(
            calibration,
            estimator=facts.estimator,
            mechanism=facts.label,
            clip_bound=self.settings.max_grad_norm,
            n_samples=facts.n_samples,
            public_facts=facts.public,
            training_facts=facts.training,
            mechanism_lines=self.report_lines(calibration) if calibration.is_private else None,
        )
