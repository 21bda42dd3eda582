"""diff2: DIFF2-GD, differentially private gradient descent on gradient differences
(Murata & Suzuki, ICML 2023), single machine and simulated clients.

Every round uses every row (full batch). A *restart* round (rounds ``0, T, 2T, ...``) releases
the clipped mean gradient with noise ``sigma1 C1`` (``C1 = max_grad_norm``) and resets the
estimate to it. Every other round releases the clipped mean of the per-example gradient
*differences* ``g_i(x_r) - g_i(x_{r-1})``, clipped to the radius ``C2 ||x_r - x_{r-1}||``
(``C2 = diff_clip``, a bound on how fast one example's gradient changes) with noise
``sigma2 C2 ||x_r - x_{r-1}||``, and adds it to the running estimate. The radius depends only
on released iterates, so each round is a Gaussian mechanism with a fixed noise multiplier under
adaptive composition; the estimate telescopes to the current gradient while its noise is a
random walk that the restarts cut short.

Accounting: ``ceil(R / T)`` full-batch Gaussian rounds with multiplier ``sigma1`` and the rest
with ``sigma2``, composed by the real accountant (PLD or RDP) through the ordinary privacy plan.
``budget_split`` fixes the public ratio: full-batch Gaussian rounds compose into one Gaussian
mechanism whose squared sensitivity-to-noise ratio is ``sum_rounds 1 / sigma_r^2``; restarts
get the share ``budget_split`` of it (``1 / u`` in the paper's notation, whose ``u = 1.25`` is
0.8). The accountant then scales both to the target, instead of the paper's closed form.

The per-example differences are never materialised: a GLM keeps the previous residuals (n
numbers per output), an MLP the previous layer inputs and output gradients, and
``skdp/_engine/_factored.py`` computes norms and clipped sums from them.

``n_clients > 1`` simulates the paper's distributed form with a trusted aggregator: the rows are
split at random (independently of their values) into ``n_clients`` parts of sizes differing by
at most one; each client sends its clipped mean and the server adds one Gaussian draw to the
average of the client means. With equal parts this is exactly the single-machine algorithm;
with unequal parts the record-level guarantee holds with the smallest part's size in the
sensitivity, as in the paper (the part sizes, like ``n``, are treated as public).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .._engine._device import FitRandomness
from .._engine._factored import (
    clip_factors,
    difference_sq_norms,
    gradient_sq_norms,
    weighted_difference_sum,
    weighted_gradient_sum,
)
from .._engine._model import DPModel
from .._engine.rows.training_data import TrainingData
from .._utils.progress import progress
from ..accounting import Calibration, PrivacyPlan, Sampling, StepGroup
from ._params import check_positive, check_unit_interval
from ._sgd.iterates import IterateUpdate
from ._sgd.optimizer import SGDOptimizer
from ._sgd.settings import SGDSettings

__all__ = ["Diff2", "Diff2Params", "client_weights"]


@dataclass(frozen=True)
class Diff2Params:
    """diff2's own hyperparameters (``optimizer_params`` of the estimators).

    Parameters
    ----------
    restart_period : int, default=10
        ``T``: a restart every ``T`` rounds (round 0 always restarts). 1 is DP gradient descent.
    budget_split : float, default=0.8
        The share of the privacy loss given to the restart rounds (the rest goes to the
        difference rounds); must be below 1 when there are difference rounds.
    diff_clip : float, default=1.0
        ``C2``: per-example gradient differences are clipped to ``C2 ||x_r - x_{r-1}||``. With
        ``C2`` at least the smoothness of every per-example loss nothing is clipped (for a GLM
        that is ``c ||[x, 1]||^2`` with ``c`` = 1/4 logistic, 1/2 softmax, 1 squared error).
    n_clients : int, default=1
        Number of simulated clients (random, near-equal partition of the rows).
    """

    restart_period: int = 10
    budget_split: float = 0.8
    diff_clip: float = 1.0
    n_clients: int = 1

    def __post_init__(self) -> None:
        for name in ("restart_period", "n_clients"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(
                    f"optimizer_params[{name!r}] must be an integer >= 1, got {value!r}"
                )
        check_unit_interval("budget_split", self.budget_split, open_low=True)
        check_positive("diff_clip", self.diff_clip)


def client_weights(
    n_samples: int, n_clients: int, rng: np.random.Generator
) -> tuple[np.ndarray | None, int]:
    """Per-row weights ``n_min / n_p`` of a random near-equal partition, and the denominator
    ``n_clients * n_min`` of the average of client means (``None`` weights: equal parts).

    ``sum_i w_i v_i / (P n_min)`` is the average over clients of each client's mean of ``v``;
    every weight is at most 1, so one row moves the weighted sum by at most its own bound.
    """
    if n_clients > n_samples:
        raise ValueError(
            f"optimizer_params['n_clients']={n_clients} exceeds the number of rows "
            f"({n_samples}): every client needs at least one row"
        )
    base, extra = divmod(n_samples, n_clients)
    if extra == 0:
        return None, n_samples
    # Clients 0..extra-1 hold base + 1 rows; a random permutation assigns rows to clients.
    sizes = np.full(n_clients, base, dtype=np.int64)
    sizes[:extra] += 1
    client_of_slot = np.repeat(np.arange(n_clients), sizes)
    client_of_row = client_of_slot[rng.permutation(n_samples)]
    return base / sizes[client_of_row], n_clients * base


class Diff2(SGDOptimizer):
    """DIFF2-GD (see the module docstring). Reuses DP-SGD's settings, step sizes,
    penalty, projection and iterate averaging; only the gradient estimate differs."""

    name = "diff2"
    description = "DIFF2-GD: full-batch gradient differences with restarts"
    params_class = Diff2Params
    full_batch_only = True
    # Its step follows an estimate that sums the noisy differences of every round since the
    # last restart, so the error grows between restarts: eta0='auto' takes half the rule's step
    # (at the full step it diverged on Adult at epsilon 0.5; skdp._defaults, "diff2 step").
    auto_step_factor = 0.5

    def __init__(self, settings: SGDSettings) -> None:
        super().__init__(settings)
        s, p = settings, self.params
        if s.batch_size < s.n_samples:
            raise ValueError("optimizer='diff2' is full-batch: batch_size must equal n_samples")
        if s.noise_schedule != "constant":
            raise ValueError(
                "optimizer='diff2' sets its own noise (restart and difference rounds); use "
                f"noise_schedule='constant', got {s.noise_schedule!r}"
            )
        if s.learning_rate_schedule == "adagrad_norm":
            raise ValueError(
                "optimizer='diff2' needs step sizes fixed in advance; use learning_rate="
                "'constant' or 'invscaling', not 'adagrad_norm'"
            )
        self.n_rounds = s.n_steps
        self.n_restarts = math.ceil(self.n_rounds / p.restart_period)
        self.n_differences = self.n_rounds - self.n_restarts
        if self.n_differences and p.budget_split >= 1.0:
            raise ValueError(
                "optimizer_params['budget_split'] must be below 1 when there are difference "
                f"rounds (restart_period={p.restart_period} < max_iter={self.n_rounds}): they "
                "need a share of the budget; use e.g. 0.8, or restart_period=1 for DP-GD"
            )

    @property
    def difference_noise_ratio(self) -> float:
        """``sigma2 / sigma1``: restarts get ``budget_split`` of ``sum_r 1 / sigma_r^2``."""
        if not self.n_differences:
            return 1.0
        f = self.params.budget_split
        return math.sqrt(self.n_differences * f / (self.n_restarts * (1.0 - f)))

    def plan(self) -> PrivacyPlan:
        # Composition is commutative: one group per kind of round, not in time order.
        groups = [StepGroup(self.n_restarts, 1.0, 1.0)]
        if self.n_differences:
            groups.append(StepGroup(self.n_differences, 1.0, self.difference_noise_ratio))
        return PrivacyPlan(tuple(groups), Sampling.FULL_BATCH)

    def report_lines(self, calibration: Calibration) -> list[str]:
        s, p = self.settings, self.params
        sigma1 = calibration.noise_multiplier
        sigma2 = sigma1 * self.difference_noise_ratio
        lines = [
            "mechanism: restart rounds add Gaussian noise to the sum of per-example gradients, "
            f"each clipped to L2 norm {s.max_grad_norm:.4g}; difference rounds to the sum of "
            "per-example gradient differences between the current and the previous iterate, "
            f"each clipped to {p.diff_clip:.4g} x ||x_r - x_(r-1)|| (released iterates only)",
            f"noise multiplier: {sigma1:.4g} in the {self.n_restarts} restart rounds (noise std "
            f"{sigma1 * s.max_grad_norm:.4g} per coordinate)",
        ]
        if self.n_differences:
            lines.append(
                f"  {sigma2:.4g} in the {self.n_differences} difference rounds (noise std "
                f"{sigma2:.4g} x the round's clipping radius); restart period "
                f"{p.restart_period}, budget split {p.budget_split:g}"
            )
        if p.n_clients > 1:
            lines.append(
                f"  {p.n_clients} simulated clients behind a trusted aggregator (random "
                "near-equal partition; the server adds the noise to the average of client means)"
            )
        return lines

    def train(
        self,
        model: DPModel,
        data: TrainingData,
        calibration: Calibration,
        randomness: FitRandomness,
        verbose: int = 0,
    ) -> torch.Tensor:
        s, p = self.settings, self.params
        device = data.X.device
        X, y = data.X, data.y
        private = calibration.is_private
        sigma1 = calibration.noise_multiplier
        sigma2 = sigma1 * self.difference_noise_ratio
        weights_np, denominator = client_weights(data.n_samples, p.n_clients, randomness.sampling)
        weights = (
            None if weights_np is None
            else torch.as_tensor(weights_np, dtype=X.dtype, device=device)
        )
        rates = s.learning_rates().tolist()

        params = model.init_params(device, randomness.init)
        estimate = torch.zeros_like(params)  # the released running estimate of the gradient
        grad = torch.empty_like(params)
        noise = torch.empty_like(params)
        iterates = IterateUpdate(model, params, s)
        previous_params = None
        previous_blocks = None

        for r in range(self.n_rounds):
            blocks = None
            if r % p.restart_period == 0:
                if weights is None:
                    model.clipped_grad_sum(
                        params, X, y, data.aux, s.max_grad_norm if private else None, out=grad
                    )
                else:
                    blocks = model.gradient_blocks(params, X, y)
                    factors = (
                        clip_factors(gradient_sq_norms(blocks), s.max_grad_norm)
                        if private else torch.ones(X.shape[0], dtype=X.dtype, device=device)
                    )
                    weighted_gradient_sum(blocks, factors * weights, model.param_blocks(grad))
                if private:
                    std = sigma1 * s.max_grad_norm
                    grad.add_(noise.normal_(0.0, std, generator=randomness.noise))
                grad.div_(denominator)
                estimate.copy_(grad)  # restart: the history is dropped
            else:
                # The radius is a function of released iterates only.
                radius = p.diff_clip * float(
                    torch.linalg.vector_norm(params - previous_params, dtype=torch.float64)
                )
                blocks = model.gradient_blocks(params, X, y)
                if previous_blocks is None:
                    previous_blocks = model.gradient_blocks(previous_params, X, y)
                if private:
                    factors = clip_factors(difference_sq_norms(blocks, previous_blocks), radius)
                else:
                    factors = torch.ones(X.shape[0], dtype=X.dtype, device=device)
                if weights is not None:
                    factors = factors * weights
                weighted_difference_sum(blocks, previous_blocks, factors, model.param_blocks(grad))
                if private and radius > 0.0:
                    grad.add_(noise.normal_(0.0, sigma2 * radius, generator=randomness.noise))
                estimate.add_(grad.div_(denominator))
            # Post-processing of the released estimate from here on.
            grad.copy_(estimate)
            previous_params = params.clone()
            previous_blocks = blocks
            iterates.step(r, grad, rates[r])
            if verbose and (r + 1) % max(1, self.n_rounds // 10) == 0:
                progress(r + 1, self.n_rounds,
                    f"[skdp] diff2 round {r + 1}/{self.n_rounds}: squared norm of the estimate "
                    f"{float(estimate.square().sum()):.4g}"
                )
        return iterates.released()
