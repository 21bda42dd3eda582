"""What a mechanism provides to the fit flow, and what the flow hands it.

Every fit is plan, calibrate, charge, run, record (:mod:`skdp._fit.flow`). A mechanism is one
way of training privately (DP-SGD and its optimizers, the last-iterate run, sufficient
statistics, or one defined outside the package); it provides the parts of that flow that
depend on it, and nothing else: the flow, the privacy report and the estimators never ask which
mechanism they hold.

The plan a mechanism returns is the public layout of its run (a
:class:`~skdp.accounting.PrivacyPlan` for mechanisms that dp_accounting describes). The flow
needs two things of it: ``with_priors(noise_multipliers)``, the plan composed after Gaussian
mechanisms of fixed noise on the same rows (a private pipeline's preprocessing, the estimator's
own scale search), and ``prior_noise_multipliers``. The calibration the mechanism returns is the
accountant's outcome; the flow reads ``is_private``, ``epsilon``, ``delta``,
``noise_multiplier``, ``neighboring_relation`` and ``spend`` (what a ledger composes), and calls
``alone(own_priors)`` for a pipeline's model, whose own statement covers its training only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
import torch

from .._engine._device import FitRandomness

__all__ = ["Mechanism", "PlanNotComposable", "Release", "RunInput", "StatementFacts"]

# Validated features on the host: dense, or scipy sparse (CSR or CSC).
Features = np.ndarray | sp.spmatrix | sp.sparray


class PlanNotComposable(ValueError):
    """Raised by a plan's ``with_priors`` when its guarantee cannot be composed with earlier
    mechanisms on the same rows (the last-iterate bound covers the training alone); the flow
    reports it with the estimator's name."""


@dataclass(frozen=True)
class RunInput:
    """The private data and public settings a mechanism runs on, after the budget is charged.

    Attributes
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The rows, on the training scale (the public scale found by a scale search, if any).
    targets : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        The targets on the training scale (class indices for classifiers).
    model : object or None
        The model to train (see :class:`skdp._engine._model.DPModel`); ``None`` for
        closed-form mechanisms that need none.
    target_dtype : torch.dtype
        The dtype the model's loss takes its targets in.
    device : torch.device
        Where to compute.
    random_state : int, RandomState, Generator or None
        The fit's seed (``None``: OS entropy).
    scale : object or None
        The public scale the rows and targets were put on (``None``: as given).
    verbose : int
        Progress output, computed from released values only.
    """

    X: Features
    targets: np.ndarray
    model: Any
    target_dtype: torch.dtype
    device: torch.device
    random_state: Any = None
    scale: Any = None
    verbose: int = 0

    def randomness(self) -> FitRandomness:
        """The fit's independent random streams (sampling, noise, initialisation)."""
        return FitRandomness(self.random_state, self.device)


@dataclass
class Release:
    """What a run releases.

    Attributes
    ----------
    params : torch.Tensor or ndarray
        The released parameters, in the model's flat layout.
    attributes : dict
        Fitted attributes to record on the estimator (``n_steps_``, ``batch_size_``, ...).
    details : dict
        Whatever the mechanism's own statement needs of the run (not recorded).
    """

    params: torch.Tensor | np.ndarray
    attributes: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StatementFacts:
    """What the estimator and the flow add to a mechanism's privacy statement.

    Attributes
    ----------
    estimator : str
        The estimator's class name.
    label : str
        How the mechanism is named in reports and ledger records
        (e.g. ``"optimizer='noisy_sgd' (DP-SGD)"``).
    n_samples : int
        The number of rows (public).
    public : list of str
        Facts about the data treated as public (e.g. the class labels).
    training : list of str
        How the model was trained, where the guarantee relies on it (row scaling, projection,
        a pipeline's share).
    """

    estimator: str
    label: str
    n_samples: int
    public: list[str]
    training: list[str]


@runtime_checkable
class Mechanism(Protocol):
    """A way of training privately, as the fit flow uses it.

    Implement ``plan``, ``calibrate``, ``run`` and ``statement``; register a DP-SGD optimizer
    under a name with :func:`skdp.mechanisms.register_optimizer`. Optionally,
    ``check_input(X, targets)`` refuses data the mechanism cannot train on (called before
    anything is charged).
    """

    #: A short description, for privacy reports and ledger records.
    description: str

    def plan(self) -> Any:
        """The public layout of the run: built from public quantities only, before any data is
        read; it fixes everything except one overall noise scale."""
        ...

    def calibrate(self, plan: Any, epsilon: float, delta: float, accountant: str) -> Any:
        """The calibration of ``plan`` (with its priors) to ``(epsilon, delta)``; a
        non-private one for ``epsilon = inf``."""
        ...

    def run(self, data: RunInput, calibration: Any) -> Release:
        """Train on ``data`` with the calibrated noise; everything returned is released."""
        ...

    def statement(self, calibration: Any, release: Release, facts: StatementFacts) -> str:
        """The text of ``privacy_report()``: what the fit proves, and how."""
        ...
