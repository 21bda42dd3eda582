"""noisy_sgd: DP-SGD (clip per-example gradients, add Gaussian noise, step).

Two variants share one training loop:

- :class:`NoisySGD`, the standard DP-SGD (Poisson sampling, add/remove-one relation, optional
  iterate averaging), accounted on the whole trajectory by ``calibrate``;
- :class:`ProjectedNoisySGD`, Altschuler & Talwar's projected noisy SGD (fixed-size batches,
  projection onto a ball after every step, constant step size within the smoothness bound,
  last iterate only), accounted by the last-iterate bound (``calibrate_last_iterate``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._utils.progress import progress
from ..accounting import (
    Calibration,
    LastIterateCalibration,
    LastIterateRun,
    PrivacyPlan,
    Sampling,
    check_last_iterate_conditions,
)
from ..accounting._schedules import (
    adp_noise_shape,
    noise_shape,
    plan_from_shape,
    quantize_shape,
)
from ._device import FitRandomness
from ._model import DPModel
from ._optimizer_params import parse_optimizer_params
from ._sampling import FixedSizeSampler, FullBatchSampler, PoissonSampler
from ._sparse import SparseRows
from ._step_sizes import AdaGradNorm, fixed_learning_rates

__all__ = [
    "PROJECTION_SAFETY",
    "SGDSettings",
    "TrainingData",
    "NoisySGD",
    "ProjectedNoisySGD",
    "ADPSGD",
    "ClippedNoisyMean",
    "IterateUpdate",
    "project_onto_ball",
    "steps_per_epoch",
]

# Project onto a ball a hair smaller than the public one, so that float32 rounding of the norm
# can never leave an iterate outside the ball the accountant assumes (a smaller ball only
# lowers the bound, which is nondecreasing in the diameter).
PROJECTION_SAFETY = 1.0 - 1e-5


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
    # Radius of the L2 ball (centred at 0) that the whole parameter vector is projected onto
    # after every step; ``None``: no projection. Projection is post-processing of each noisy
    # step, so it costs no privacy under any accountant.
    projection_radius: float | None = None
    # Curvature constants of every per-example loss (data term after clipping, plus penalty),
    # valid for every possible row: smoothness M and strong convexity m. ``None`` when the
    # model declares none (non-convex models); only the last-iterate accountant uses them.
    smoothness: float | None = None
    strong_convexity: float = 0.0
    # Step-size schedule ('constant', 'invscaling', 'adagrad_norm'; ``learning_rate`` is the
    # initial step size) and the public shape of the noise ('constant' or a decaying schedule
    # from skdp.accounting._schedules, ending at ``noise_decay`` times its initial level).
    learning_rate_schedule: str = "constant"
    power_t: float = 0.5
    noise_schedule: str = "constant"
    noise_decay: float = 1.0
    # The estimator's ``optimizer_params``: hyperparameters of one optimizer (adaclip, diff2),
    # parsed and validated by that optimizer.
    optimizer_params: Mapping[str, Any] | None = None

    @property
    def steps_per_epoch(self) -> int:
        return steps_per_epoch(self.n_samples, self.batch_size)

    def learning_rates(self) -> np.ndarray | None:
        """The step size of every step, or ``None`` when it is driven by released gradients."""
        return fixed_learning_rates(
            self.learning_rate_schedule, self.learning_rate, self.n_steps,
            self.steps_per_epoch, self.power_t,
        )

    def schedule_shape(self) -> np.ndarray:
        """The relative noise level of every step that ``noise_schedule`` asks for."""
        return noise_shape(
            self.noise_schedule, self.n_steps, self.steps_per_epoch, self.noise_decay
        )

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


def project_onto_ball(params: torch.Tensor, radius: float) -> torch.Tensor:
    """In place: ``params * min(1, r / ||params||)`` with ``r = radius * PROJECTION_SAFETY``.

    The Euclidean projection onto the ball (non-expansive). Computed on the device without a
    host synchronisation; non-finite parameters stay non-finite (and are refused as diverged
    after training).
    """
    norm = torch.linalg.vector_norm(params, dtype=torch.float64)
    factor = torch.clamp(radius * PROJECTION_SAFETY / norm, max=1.0).to(params.dtype)
    return params.mul_(factor)


def steps_per_epoch(n_samples: int, batch_size: int) -> int:
    """Steps that make one pass in expectation: ``round(n / batch_size)``, at least one."""
    return max(1, round(n_samples / batch_size))


# The features, labels and per-example auxiliary of one step's batch.
Batch = tuple[torch.Tensor | SparseRows, torch.Tensor, torch.Tensor | None]


@dataclass
class TrainingData:
    """The private training data on the compute device, with the model's per-example auxiliary
    (see :meth:`DPModel.example_aux`; ``None`` when the model needs none). ``X`` is a dense
    tensor or, for sparse input, :class:`SparseRows` (which gathers rows the same way)."""

    X: torch.Tensor | SparseRows
    y: torch.Tensor
    aux: torch.Tensor | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    def batch(
        self, idx: torch.Tensor
    ) -> tuple[torch.Tensor | SparseRows, torch.Tensor, torch.Tensor | None]:
        # index_select is several times faster than fancy indexing for row gathers on CPU.
        return (
            self.X.index_select(0, idx),
            self.y.index_select(0, idx),
            None if self.aux is None else self.aux.index_select(0, idx),
        )

    def step_batches(self, sampler, n_steps: int) -> Iterator[Batch]:
        """The batches of the next ``n_steps`` steps of ``sampler``, drawn at once.

        The row indices move to the device in one copy and the labels and auxiliaries of all
        the steps are gathered in one call each; the features are gathered step by step (a
        step's rows then stay in cache for both of its products, and no epoch-sized copy of
        ``X`` is made). A full-batch sampler gets the data itself, without any gather.
        """
        if getattr(sampler, "full_batch", False):
            for _ in range(n_steps):
                yield self.X, self.y, self.aux
            return
        batches = sampler.sample_steps(n_steps)
        idx = torch.from_numpy(batches.indices).to(self.y.device, non_blocking=True)
        y = self.y.index_select(0, idx)
        aux = None if self.aux is None else self.aux.index_select(0, idx)
        bounds = batches.offsets.tolist()
        # Dense rows are gathered into one buffer reused by every step: a fresh batch-sized
        # tensor per step is a fresh allocation (on CPU, pages mapped and zeroed each time),
        # about a sixth of a gather's time. A step's rows are consumed before the next gather
        # (the only reader is the training loop, which privatizes each batch at once).
        buffer = None
        if isinstance(self.X, torch.Tensor):
            widest = max((b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)), default=0)
            buffer = self.X.new_empty((widest, *self.X.shape[1:]))
        for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
            # index_select is several times faster than fancy indexing for row gathers on CPU.
            rows = (
                self.X.index_select(0, idx[start:stop])
                if buffer is None
                else torch.index_select(self.X, 0, idx[start:stop], out=buffer[: stop - start])
            )
            yield rows, y[start:stop], None if aux is None else aux[start:stop]


class NoisySGD:
    """DP-SGD with Poisson sampling and a fixed public denominator.

    Each step draws a Poisson batch, sums the per-example gradients clipped to ``max_grad_norm``,
    adds ``N(0, (sigma * max_grad_norm)^2)`` to every coordinate of the sum, divides by the
    expected batch size ``q * n`` and takes a gradient step (the L2 penalty's gradient is added
    after the noise: it does not depend on the data), then projects onto the ball of radius
    ``projection_radius`` if one is set. Iterate averaging is post-processing.
    """

    name = "noisy_sgd"
    description = "DP-SGD"
    # The dataclass of the optimizer's own hyperparameters (``optimizer_params``), or None.
    params_class = None
    # A full-batch-only optimizer (diff2) sets this: the estimators then train on every row.
    full_batch_only = False

    def __init__(self, settings: SGDSettings) -> None:
        self.settings = settings
        self.params = parse_optimizer_params(
            self.params_class, settings.optimizer_params, self.name
        )
        self.noise_levels = self._noise_levels()

    def report_lines(self, calibration) -> list[str] | None:
        """Lines describing the mechanism in ``privacy_report()`` (``None``: the generic
        description of clipped, noised gradient sums)."""
        return None

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

    def sampler(self, n_samples: int, randomness: FitRandomness):
        """The batch sampler its plan describes (Poisson, or every row)."""
        s = self.settings
        if s.sampling_rate >= 1.0:
            return FullBatchSampler(n_samples)
        return PoissonSampler(n_samples, s.sampling_rate, randomness.sampling)

    def run(
        self,
        model: DPModel,
        data: TrainingData,
        calibration: Calibration | LastIterateCalibration,
        randomness: FitRandomness,
        verbose: int = 0,
    ) -> torch.Tensor:
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
        calibration: Calibration | LastIterateCalibration,
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


class IterateUpdate:
    """What every optimizer does with a released gradient (all post-processing): add the L2
    penalty's gradient, step, project onto the ball of radius ``projection_radius`` if one is
    set, and average the iterates of the last ``average`` fraction of the steps."""

    def __init__(self, model: DPModel, params: torch.Tensor, settings: SGDSettings) -> None:
        self.params = params
        l2 = settings.l2
        self.penalty = model.penalty_mask(params.device) * l2 if l2 > 0 else None
        self.radius = settings.projection_radius
        self.average_from = settings.n_steps - settings.n_averaged_steps
        self.averaged = params.clone()
        self.n_averaged = 0

    def step(self, index: int, grad: torch.Tensor, rate: float) -> None:
        """Step ``index`` with the released gradient ``grad`` (the penalty is added in place)."""
        params = self.params
        if self.penalty is not None:
            grad.addcmul_(self.penalty, params)
        params.sub_(grad, alpha=rate)
        if self.radius is not None:
            project_onto_ball(params, self.radius)
        if index >= self.average_from:
            self.n_averaged += 1
            self.averaged.lerp_(params, 1.0 / self.n_averaged)

    def released(self) -> torch.Tensor:
        """The averaged iterates, or the last iterate when nothing is averaged."""
        return self.averaged if self.n_averaged else self.params


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


class ProjectedNoisySGD(NoisySGD):
    """Projected noisy SGD whose last iterate is accounted by Altschuler & Talwar's bound.

    The loop of :class:`NoisySGD` with the conditions of the last-iterate bound
    (``skdp/accounting/_last_iterate.py``) built in: exactly ``batch_size`` distinct rows drawn
    uniformly and independently at every step (:class:`FixedSizeSampler`; every row when
    ``batch_size == n``), the noisy sum divided by ``batch_size``, a constant step size, the
    whole parameter vector projected onto the ball of radius ``projection_radius`` after every
    step (the last included), starting from the model's data-independent initial point (the
    linear models start at 0, inside the ball), and only the last iterate returned.

    Construction checks the conditions that are numbers (a projection radius, ``average == 0``,
    ``learning_rate <= 2 / smoothness``, ...) and raises :class:`ValueError` when one fails, so
    that a run that the bound does not cover is refused before any noise is calibrated. The
    caller guarantees the rest: ``smoothness`` and ``strong_convexity`` must hold for every
    per-example loss and every possible row (which is why ``smoothness=None``, a model without
    curvature constants, is refused).
    """

    name = "noisy_sgd"

    def __init__(self, settings: SGDSettings) -> None:
        super().__init__(settings)
        s = settings
        if s.learning_rate_schedule != "constant" or not np.all(self.noise_levels == 1.0):
            raise ValueError(
                "accountant='last_iterate' needs a constant step size and constant noise "
                f"(got learning_rate={s.learning_rate_schedule!r}, "
                f"noise_schedule={s.noise_schedule!r}); use learning_rate='constant' and "
                "noise_schedule='constant', or the standard accountant ('pld' or 'rdp')"
            )
        if s.smoothness is None:
            raise ValueError(
                "accountant='last_iterate' needs a convex model with known smoothness (the "
                "linear models); this model declares none (neural networks are not convex), so "
                "use the standard accountant ('pld' or 'rdp')"
            )
        run_facts = dict(
            n_samples=s.n_samples,
            batch_size=min(s.batch_size, s.n_samples),
            n_steps=s.n_steps,
            learning_rate=s.learning_rate,
            max_grad_norm=s.max_grad_norm,
            smoothness=s.smoothness,
            radius=s.projection_radius,
            strong_convexity=s.strong_convexity,
        )
        full_batch = s.batch_size >= s.n_samples
        check_last_iterate_conditions(
            **run_facts,
            sampling="full_batch" if full_batch else "fixed_size",
            average=s.average,
        )
        self._run = LastIterateRun(**run_facts)

    def plan(self) -> LastIterateRun:  # type: ignore[override]
        return self._run

    def sampler(self, n_samples: int, randomness: FitRandomness):
        if self._run.full_batch:
            return FullBatchSampler(n_samples)
        return FixedSizeSampler(n_samples, self._run.batch_size, randomness.sampling)


class ADPSGD(NoisySGD):
    """ADP-SGD (Wu et al.): DP-SGD whose per-step noise follows the step size.

    The noise multiplier of step ``t`` is proportional to ``1 / sqrt(eta_t)`` (``alpha_t^2``
    proportional to ``1 / eta_t``, the optimum of the paper's utility bound), times the shape of
    ``noise_schedule`` if one is set; the accountant then scales the whole shape so that the run
    spends exactly the budget (the paper's advanced-composition normalisation is not used: under
    a tight accountant it can spend about 2.5 times the claimed epsilon). With a constant step
    size the shape is constant and ADP-SGD is DP-SGD, step for step.

    With ``learning_rate_schedule='adagrad_norm'`` the step sizes are not known in advance, so
    the noise follows the public proxy ``eta0 / sqrt(1 + t C^2)`` (``C`` the clipping bound: the
    fastest the accumulator can grow), the paper's fixed alpha schedule
    ``alpha_t = (b_0^2 + t C)^(1/4)`` with ``b_0 = 1``. The accumulator itself reads only the
    released noisy gradients.
    """

    name = "adp_sgd"
    description = "ADP-SGD: DP-SGD with noise shaped to the step size"

    def _noise_shape(self) -> np.ndarray:
        s = self.settings
        rates = s.learning_rates()
        if rates is None:  # adagrad_norm: the public proxy of its step sizes
            steps = np.arange(s.n_steps, dtype=np.float64)
            rates = s.learning_rate / np.sqrt(1.0 + steps * s.max_grad_norm**2)
        return adp_noise_shape(rates) * s.schedule_shape()
