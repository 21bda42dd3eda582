"""adaclip: coordinate-wise adaptive clipping (Pichapati, Suresh, Yu, Reddi & Kumar, 2019).

Each per-example gradient ``g`` is transformed to ``(g - a) / b`` coordinate-wise, clipped to
L2 norm 1, summed, noised with ``N(0, sigma^2)`` per coordinate (sensitivity 1 in the
transformed space, so the accounting is DP-SGD's), and transformed back:
``g~ = a + b * W~ / B`` with ``B`` the public expected batch size. The centre ``a`` and scale
``b`` are updated from the released ``g~`` only (post-processing): ``a`` is an exponential
moving average of ``g~``, and ``b_i = sqrt(s_i / gamma) sqrt(sum_j s_j)`` (Theorem 1: the scale
that minimises the noise for a target clipping rate) from a moving estimate ``s_i`` of the
per-coordinate standard deviation of one example's gradient.

This follows the corrected reading of ``docs/specs/adaclip.md`` (§1.6): one noise draw on the
sum, the batch-size-corrected variance estimate ``z = B (g~ - a)^2 - (b sigma)^2 / B``, the
pre-update mean in it, ``b_i`` proportional to ``sqrt(s_i)``. It is *not* Opacus'
``AdaClipDPOptimizer`` (Andrew et al.'s quantile clipping, which spends budget on clipping
counts); nothing here reads per-example data outside the clipped, noised sum.

Robustness (the spec's pitfalls 1-3): the paper starts from ``s0 = sqrt(h1 h2)``, which clips
everything and can stay stuck; here ``s0 = C sqrt(gamma / d)`` (``C = max_grad_norm``), so the
first step is exactly DP-SGD with clipping bound ``C``. The bounds ``h1``, ``h2`` on each
one-step variance estimate are given relative to ``C^2 / d``: the estimates of coordinates that
carry no signal drift up towards the cap when noise dominates (pitfall 2), and with the cap
expressed this way the worst case is plain clipping at a norm of the order of ``C`` instead of a
run-away that grows with the dimension.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .._engine._device import FitRandomness
from .._engine._factored import clip_factors, transformed_sq_norms, weighted_gradient_sum
from .._engine._model import DPModel
from ..accounting import Calibration
from ._params import check_positive, check_unit_interval
from ._sgd.optimizer import SGDOptimizer

__all__ = ["AdaClip", "AdaClipParams", "AdaClipState", "AdaClipMean"]


@dataclass(frozen=True)
class AdaClipParams:
    """adaclip's own hyperparameters (``optimizer_params`` of the estimators).

    Parameters
    ----------
    gamma : float, default=0.25
        Target ``E ||(g - a) / b||^2``: smaller keeps clipping rarer at the price of more noise.
        The paper's algorithm uses 1; clipping biases the variance estimates down, which at
        ``gamma = 1`` collapsed the scale on the paper's own synthetic problem and at
        ``gamma = 0.5`` on Adult at small noise (measured; ``docs/developers/optimizers.md``).
    beta1 : float, default=0.99
        Decay of the moving average of the released gradients (the centre ``a``); 1 freezes it.
    beta2 : float, default=0.9
        Decay of the moving average of the variance estimates; 1 freezes the scale.
    variance_floor, variance_cap : float, default=1e-6 and 1.0
        ``h1`` and ``h2``, the bounds on each one-step variance estimate, in units of
        ``max_grad_norm^2 / n_params`` (the variance of the uniform starting scale at
        ``gamma = 1``).
    """

    gamma: float = 0.25
    beta1: float = 0.99
    beta2: float = 0.9
    variance_floor: float = 1e-6
    variance_cap: float = 1.0

    def __post_init__(self) -> None:
        check_positive("gamma", self.gamma)
        check_unit_interval("beta1", self.beta1)
        check_unit_interval("beta2", self.beta2)
        check_positive("variance_floor", self.variance_floor)
        check_positive("variance_cap", self.variance_cap)
        if self.variance_floor > self.variance_cap:
            raise ValueError(
                "optimizer_params['variance_floor'] must not exceed 'variance_cap', got "
                f"{self.variance_floor!r} > {self.variance_cap!r}"
            )


class AdaClipState:
    """The centre ``m`` and scale estimate ``s`` (float64), updated from released values only.

    :meth:`update` receives the released noisy gradient and public constants, never data, so
    rerunning it on the logged releases reproduces the state exactly (post-processing).
    """

    def __init__(
        self, n_params: int, max_grad_norm: float, params: AdaClipParams, device: torch.device
    ) -> None:
        self.params = params
        unit = max_grad_norm**2 / n_params
        self.h1 = params.variance_floor * unit
        self.h2 = params.variance_cap * unit
        self.m = torch.zeros(n_params, dtype=torch.float64, device=device)
        s0_sq = max(params.gamma * unit, self.h1)  # s0 = C sqrt(gamma / d): DP-SGD at step 0
        self.s_sq = torch.full((n_params,), s0_sq, dtype=torch.float64, device=device)

    def scale(self) -> torch.Tensor:
        """``b_i = sqrt(s_i / gamma) * sqrt(sum_j s_j)`` (float64)."""
        s = self.s_sq.sqrt()
        return s.div(self.params.gamma).sqrt_().mul_(s.sum().sqrt())

    def update(
        self, released: torch.Tensor, scale: torch.Tensor, noise_std: float, batch: float
    ) -> None:
        """One step of the estimators, from the released ``g~`` of a step that used centre
        ``self.m``, scale ``scale`` and noise ``noise_std`` on the transformed sum, with public
        expected batch size ``batch``."""
        p = self.params
        g = released.to(torch.float64)
        z = (g - self.m).square_().mul_(batch).sub_(scale.square() * (noise_std**2 / batch))
        v = z.clamp_(min=self.h1, max=self.h2)
        self.m.mul_(p.beta1).add_(g, alpha=1.0 - p.beta1)  # after z: z uses the pre-update mean
        self.s_sq.mul_(p.beta2).add_(v, alpha=1.0 - p.beta2)


class AdaClipMean:
    """adaclip's privatisation of one batch (and the post-processing update of its state)."""

    def __init__(
        self,
        model: DPModel,
        state: AdaClipState,
        noise_stds: list[float],
        denominator: float,
        generator: torch.Generator,
        like: torch.Tensor,
    ) -> None:
        self.model = model
        self.state = state
        self.noise_stds = noise_stds
        self.denominator = denominator
        self.generator = generator
        self.noise = torch.empty_like(like)
        self._last_scale = None

    def __call__(self, step, params, Xb, yb, aux_b, out):
        model, state = self.model, self.state
        scale64 = state.scale()
        scale = scale64.to(out.dtype)
        inv_scale = torch.reciprocal(scale)
        centre = state.m.to(out.dtype)
        inv_sq = inv_scale.square()
        blocks = model.gradient_blocks(params, Xb, yb)
        sq_norms = transformed_sq_norms(
            blocks,
            model.param_blocks(inv_sq),
            model.param_blocks(centre),
            (inv_sq.double() * centre.double().square()).sum(),
        )
        factors = clip_factors(sq_norms, 1.0)
        # sum_i c_i (g_i - a) / b: the clipped transformed sum, each term of norm <= 1.
        weighted_gradient_sum(blocks, factors, model.param_blocks(out))
        out.sub_(centre * factors.sum()).mul_(inv_scale)
        std = self.noise_stds[step]
        out.add_(self.noise.normal_(0.0, std, generator=self.generator))
        # Released: g~ = a + b W~ / B. Everything after this line is post-processing.
        out.mul_(scale).div_(self.denominator).add_(centre)
        self._last_scale = scale64
        state.update(out, scale64, std, self.denominator)
        return out

    def noise_variance(self, step: int) -> float:
        """Mean per-coordinate noise variance of the last release, ``mean(b^2) sigma^2 / B^2``
        (called after the step, as :class:`~skdp.mechanisms._sgd.step_sizes.AdaGradNorm` does)."""
        mean_sq = float(self._last_scale.square().mean())  # only adagrad_norm asks
        return mean_sq * (self.noise_stds[step] / self.denominator) ** 2


class AdaClip(SGDOptimizer):
    """DP-SGD with adaclip's coordinate-wise adaptive clipping.

    Sampling, noise schedules, step sizes, averaging and the accounting are those of
    DP-SGD (the transformed per-example vectors have norm at most 1, so the noise
    multiplier has its usual meaning with sensitivity 1); only the privatisation of a batch
    differs. Without privacy (``privacy=(inf, 0)``) it trains exactly like ``noisy_sgd``.
    """

    name = "adaclip"
    description = "DP-SGD with adaclip's coordinate-wise adaptive clipping"
    params_class = AdaClipParams

    def report_lines(self, calibration) -> list[str]:
        sigma = calibration.noise_multiplier
        lines = [
            "mechanism: per-example gradients g transformed coordinate-wise to (g - a) / b, "
            "each clipped to L2 norm 1, Gaussian noise added to their sum (a and b are computed "
            "from earlier released noisy gradients only)",
            f"noise multiplier: {sigma:.4g} (noise std {sigma:.4g} per coordinate of the "
            "clipped transformed sum, whose sensitivity is 1)",
        ]
        plan = self.plan()
        if len(plan.groups) > 1:
            lines += [
                f"  {count} steps at noise multiplier {level:.4g}"
                for count, level in plan.step_noise_multipliers(sigma)
            ]
        return lines

    def _privatizer(
        self,
        model: DPModel,
        params: torch.Tensor,
        calibration: Calibration,
        randomness: FitRandomness,
        denominator: float,
    ):
        if not calibration.is_private:
            return super()._privatizer(model, params, calibration, randomness, denominator)
        s = self.settings
        state = AdaClipState(model.n_params, s.max_grad_norm, self.params, params.device)
        stds = (calibration.noise_multiplier * self.noise_levels).tolist()
        return AdaClipMean(model, state, stds, denominator, randomness.noise, params)

