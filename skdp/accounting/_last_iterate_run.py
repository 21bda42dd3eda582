"""The public description of a last-iterate run, and the conditions of the bound on it.

The bound (Altschuler & Talwar 2022, AT22; ``docs/specs/noisy_sgd_last_iterate_privacy.md``;
overview in ``_last_iterate.py``) holds only for runs of projected noisy SGD that do the
following (AT22 section 1, spec section 2.11):

1. Start from a point ``w0`` in the ball, chosen without looking at the data.
2. At every step draw exactly ``batch_size`` distinct rows uniformly at random, independently
   of earlier steps (no Poisson sampling, no per-epoch shuffling); ``batch_size == n_samples``
   is full-batch gradient descent.
3. Clip each per-example gradient of the data term to ``max_grad_norm``, sum, add fresh noise
   ``N(0, (z * max_grad_norm)^2 I)``, divide by ``batch_size`` (never by a realised size), add
   the gradient of a data-independent penalty, and take the step ``w <- w - eta * (...)`` with
   one constant ``learning_rate`` ``eta``.
4. Project onto the ball of radius ``radius`` (diameter ``D = 2 radius``, centre fixed in
   advance) after **every** step, including the last one.
5. Every per-example loss (clipped data term plus penalty) must be convex and ``M``-smooth on
   the ball, with ``eta <= 2 / M`` (``eta < 2 / M`` when using strong convexity ``m > 0``).
   Gradient clipping keeps this true for generalised linear models (the clipped gradient is the
   gradient of a convex "huberised" loss with no larger curvature); it does not for networks.
6. Release only the last iterate. The number of steps, the step size, the radius and all
   constants are fixed in advance, independently of the private data: no averaging, no best
   iterate, no early stopping or loss curve on private data, no warm start from a private fit.

If any of these fails, use the standard accountant (:func:`composition_rdp`, or
:func:`~skdp.accounting.calibrate`), which does not need them. :func:`check_last_iterate_conditions`
checks those that can be checked from numbers; :class:`LastIterateRun` holds the numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["LastIterateRun", "check_last_iterate_conditions", "check_noise_multiplier"]


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _positive_finite(name: str, value: float, hint: str) -> None:
    if not (
        isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    ) or not (0.0 < float(value) < math.inf):
        raise ValueError(f"{name} must be positive and finite, got {value!r}. {hint}")


def check_last_iterate_conditions(
    *,
    n_samples: int,
    batch_size: int,
    n_steps: int,
    learning_rate: float,
    max_grad_norm: float,
    smoothness: float,
    radius: float | None,
    strong_convexity: float = 0.0,
    sampling: str = "fixed_size",
    average: float = 0.0,
) -> None:
    """Check that a training run meets the conditions of the last-iterate bound.

    Raises a :class:`ValueError` that says what to change when it does not. The conditions that
    cannot be checked from numbers (convexity of the loss, projection after every step, batches
    independent of the data, nothing but the last iterate released) are listed in the module
    docstring; the caller must guarantee them.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n`` (public).
    batch_size : int
        Rows per step ``b``, ``1 <= b <= n``; ``b == n`` is full-batch gradient descent.
    n_steps : int
        Number of noisy steps ``T >= 1``, fixed in advance.
    learning_rate : float
        The constant step size ``eta``.
    max_grad_norm : float
        Clipping bound ``L`` of the per-example gradients of the data term.
    smoothness : float
        Smoothness ``M >= 0`` of every per-example loss on the ball, penalty included (for
        example ``R^2 / 4 + l2`` for logistic regression with rows of norm at most ``R``).
        ``0`` is allowed for linear losses.
    radius : float
        Radius of the ball the iterates are projected onto (diameter ``D = 2 * radius``).
    strong_convexity : float, default=0.0
        Strong convexity ``m`` of every per-example loss (``l2`` when an L2 penalty
        ``(l2 / 2) ||w||^2`` covers every coordinate, intercept included; otherwise 0).
    sampling : {'fixed_size', 'full_batch'}, default='fixed_size'
        How batches are drawn. ``'poisson'`` and ``'shuffle'`` (per-epoch reshuffling) are
        rejected: the bound needs batches of exactly ``batch_size`` distinct rows drawn
        independently at every step.
    average : float, default=0.0
        Fraction of the final iterates that are averaged; must be 0 (last iterate only).

    Raises
    ------
    ValueError
        If a condition fails; the message says which and what to change.
    """
    if not _is_int(n_samples) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    if not _is_int(batch_size) or not 1 <= batch_size <= n_samples:
        raise ValueError(
            f"batch_size must be an integer in [1, n_samples={n_samples}], got {batch_size!r}: "
            "the last-iterate bound needs batches of exactly batch_size distinct rows. Use "
            "batch_size=n_samples for full-batch gradient descent."
        )
    if not _is_int(n_steps) or n_steps < 1:
        raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}")
    if sampling == "full_batch" and batch_size != n_samples:
        raise ValueError(
            f"sampling='full_batch' needs batch_size == n_samples ({n_samples}), got {batch_size}"
        )
    if sampling in ("poisson", "shuffle"):
        why = (
            "Poisson batches can be larger than batch_size, and then a step with the fixed "
            "denominator is no longer a contraction"
            if sampling == "poisson"
            else "per-epoch reshuffling makes the batches of different steps dependent"
        )
        raise ValueError(
            f"sampling={sampling!r} voids the last-iterate bound: {why}. Draw exactly "
            "batch_size distinct rows uniformly at random at every step (sampling='fixed_size'), "
            "or use the standard accountant."
        )
    if sampling not in ("fixed_size", "full_batch"):
        raise ValueError(
            f"sampling must be 'fixed_size' or 'full_batch' for the last-iterate bound, got "
            f"{sampling!r}"
        )
    if average != 0:
        raise ValueError(
            f"average={average!r}: the last-iterate bound covers the last iterate only, and "
            "averaged iterates are provably less private. Set average=0, or use the standard "
            "accountant."
        )
    _positive_finite(
        "max_grad_norm", max_grad_norm, "Clip per-example gradients to a public bound."
    )
    _positive_finite("learning_rate", learning_rate, "Use a constant, public step size.")
    if radius is None:
        raise ValueError(
            "radius is None: the last-iterate bound needs the iterates projected onto a ball "
            "of public radius after every step. Set a radius chosen without looking at the "
            "data (the ball must contain the solutions you care about), or use the standard "
            "accountant."
        )
    _positive_finite(
        "radius",
        radius,
        "Project onto a ball of public, finite radius after every step; its diameter sets the "
        "burn-in and the plateau of the bound.",
    )
    for name, value in (("smoothness", smoothness), ("strong_convexity", strong_convexity)):
        if not (
            isinstance(value, (int, float, np.integer, np.floating))
            and 0.0 <= float(value) < math.inf
        ):
            raise ValueError(f"{name} must be non-negative and finite, got {value!r}")
    if strong_convexity > smoothness:
        raise ValueError(
            f"strong_convexity={strong_convexity} exceeds smoothness={smoothness}: a loss "
            "cannot be more strongly convex than it is smooth. Check both constants."
        )
    if smoothness > 0:
        limit = 2.0 / smoothness
        if learning_rate > limit:
            raise ValueError(
                f"learning_rate={learning_rate} is above the smoothness bound 2 / smoothness = "
                f"{limit:.6g}: the bound needs every per-example gradient step to be a "
                "contraction (AT22 Lemma 2.1). Lower learning_rate to at most "
                f"{limit:.6g}, or use the standard accountant."
            )
        if strong_convexity > 0 and learning_rate >= limit:
            raise ValueError(
                f"learning_rate={learning_rate} equals 2 / smoothness: the strongly convex "
                "bound needs a strict contraction. Lower learning_rate below "
                f"{limit:.6g} (2 / (smoothness + strong_convexity) = "
                f"{2 / (smoothness + strong_convexity):.6g} contracts best), or set "
                "strong_convexity=0."
            )


@dataclass(frozen=True)
class LastIterateRun:
    """Public description of a projected noisy SGD run whose last iterate is released.

    Everything here must be fixed without looking at the private data. Creating the object
    checks the conditions of the bound (:func:`check_last_iterate_conditions`); the module
    docstring lists what the training loop must do.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n``.
    batch_size : int
        Rows per step ``b`` (exactly ``b`` distinct rows, uniformly, independently at every
        step); ``b == n`` is full-batch gradient descent.
    n_steps : int
        Number of noisy steps ``T``.
    learning_rate : float
        Constant step size ``eta``, at most ``2 / smoothness``.
    max_grad_norm : float
        Clipping bound ``L`` of per-example gradients of the data term. Under the replace-one
        relation the clipped sum moves by at most ``2 L``.
    smoothness : float
        Smoothness ``M`` of every per-example loss, penalty included.
    radius : float
        Radius of the projection ball (diameter ``D = 2 * radius``).
    strong_convexity : float, default=0.0
        Strong convexity ``m`` of every per-example loss; ``m > 0`` gives the contraction
        factor ``c = max(|1 - eta m|, |1 - eta M|) < 1`` of AT22's eq. (B.3).
    """

    n_samples: int
    batch_size: int
    n_steps: int
    learning_rate: float
    max_grad_norm: float
    smoothness: float
    radius: float
    strong_convexity: float = 0.0

    def __post_init__(self) -> None:
        check_last_iterate_conditions(
            n_samples=self.n_samples,
            batch_size=self.batch_size,
            n_steps=self.n_steps,
            learning_rate=self.learning_rate,
            max_grad_norm=self.max_grad_norm,
            smoothness=self.smoothness,
            radius=self.radius,
            strong_convexity=self.strong_convexity,
        )

    @property
    def diameter(self) -> float:
        return 2.0 * self.radius

    @property
    def sampling_rate(self) -> float:
        """Probability ``b / n`` that a given row is in a step's batch."""
        return self.batch_size / self.n_samples

    @property
    def full_batch(self) -> bool:
        return self.batch_size == self.n_samples

    @property
    def contraction(self) -> float:
        """Contraction factor ``c`` of a gradient step (1.0 without strong convexity)."""
        if self.strong_convexity <= 0:
            return 1.0
        eta = self.learning_rate
        return max(abs(1 - eta * self.strong_convexity), abs(1 - eta * self.smoothness))

    @property
    def burn_in_steps(self) -> int:
        """AT22's threshold ``ceil(D n / (L eta))`` (Theorem 3.1), convex case.

        Indicative only: the numerical bound departs from the composition bound after about 1
        to 3 times this many steps with random batches (2 times with full batches), and much
        earlier with strong convexity.
        """
        return math.ceil(self.diameter * self.n_samples / (self.max_grad_norm * self.learning_rate))


def check_noise_multiplier(noise_multiplier: float) -> float:
    """``noise_multiplier`` as a float; :class:`ValueError` unless it is positive and finite."""
    z = float(noise_multiplier)
    if not 0.0 < z < math.inf:
        raise ValueError(f"noise_multiplier must be positive and finite, got {noise_multiplier}")
    return z
