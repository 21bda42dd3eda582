"""The fit flow every DP estimator shares: plan, calibrate, run, record (DESIGN.md §2).

A model family (linear models, MLPs) supplies its model, its public training settings and how
to turn the released parameters into fitted attributes; this module does the rest, the same
way for all of them.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from numbers import Real

import dp_accounting
import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._engine._device import FitRandomness, resolve_device
from .._engine._model import DPModel
from .._engine._noisy_sgd import SGDSettings, TrainingData
from .._engine._optimizers import is_full_batch_only, make_optimizer
from .._engine._sparse import SparseRows
from .._engine._step_sizes import LEARNING_RATE_SCHEDULES
from .._utils.html import PrivacyReprMixin
from .._utils.validation import (
    ACCEPT_SPARSE,
    check_privacy,
    explain_input_error,
    warn_if_delta_large,
)
from ..accounting import (
    Calibration,
    LastIterateCalibration,
    LastIterateRun,
    PrivacyPlan,
    calibrate,
    epsilon_of,
    privacy_statement,
)
from ..accounting._schedules import NOISE_SCHEDULES
from ..budget import PrivacyBudget, RdpCurve
from .allocation import AllocatedMixin, ModelAllocation, take_allocation
from .charging import charge_budget, resolve_budget
from .column_scales import warn_if_columns_unbalanced
from .leaks import warn_if_preprocessed_without_dp

__all__ = [
    "BaseDPEstimator",
    "PlannedSpend",
    "planned_spend",
    "SCHEDULE_CONSTRAINTS",
    "resolve_batch_size",
    "resolve_average",
]

# Defaults measured on Adult and diamonds with the public preprocessing (benchmarks/tune_defaults.py
# and docs/benchmarks.md): large batches favour DP (noise per example falls as 1/batch), and
# averaging the last iterates removes much of the remaining noise at no privacy cost.
# Averaging the last tenth of the iterates was the best tail length, or within 0.0002 of it, at
# every epsilon on both data sets (benchmarks/tune_averaging.py); longer tails lag behind the
# iterate at small noise, shorter ones cancel less noise at large noise.
DEFAULT_AVERAGE_FRACTION = 0.1
AUTO_BATCH_FRACTION = 1 / 32  # expected batch ~ 3% of the rows ...
AUTO_BATCH_MIN, AUTO_BATCH_MAX = 64, 4096  # ... within these limits (and never above n)
#: The linear models' batch is also at least this times sqrt(number of parameters): the noise
#: on a mean gradient grows as sqrt(p) / batch, and on small data with many parameters the
#: floor of 64 rows drowned every step (digits, 1,347 rows x 650 parameters: 61.8% -> 74.2% at
#: epsilon 0.5, 79.8% -> 86.4% at 1 with batch 204; ames, held out, +0.001 R^2). Above about
#: 2,000 rows n / 32 is larger for every linear model measured (docs/benchmarks.md, "Batch size
#: of small data").
PARAM_BATCH_FACTOR = 8.0


def resolve_batch_size(
    batch_size, n_samples: int, optimizer: str | None = None, n_params: int | None = None
) -> int:
    """``'auto'`` -> a public function of n (and, given ``n_params``, of the number of
    parameters: at least ``PARAM_BATCH_FACTOR sqrt(n_params)`` rows); an int is capped at n
    (full batch).

    A full-batch optimizer (diff2) trains on every row: ``'auto'`` is then ``n``, and a smaller
    explicit batch size is refused rather than ignored.
    """
    if optimizer is not None and is_full_batch_only(optimizer):
        if batch_size != "auto" and batch_size < n_samples:
            raise ValueError(
                f"optimizer={optimizer!r} is full-batch gradient descent: every round uses "
                f"every row, so batch_size={batch_size!r} (< n_samples={n_samples}) cannot be "
                "honoured; use batch_size='auto'"
            )
        return int(n_samples)
    if batch_size == "auto":
        floor = AUTO_BATCH_MIN
        if n_params is not None:
            floor = max(floor, math.ceil(PARAM_BATCH_FACTOR * math.sqrt(n_params)))
        batch_size = int(
            np.clip(round(n_samples * AUTO_BATCH_FRACTION), floor, max(floor, AUTO_BATCH_MAX))
        )
    return int(min(batch_size, n_samples))


def resolve_average(average) -> float:
    """``True`` -> the default tail fraction, ``False`` -> 0 (last iterate), a float as given."""
    if isinstance(average, bool | np.bool_):
        return DEFAULT_AVERAGE_FRACTION if average else 0.0
    return float(average)


_FLOAT32_MAX = float(np.finfo(np.float32).max)

# Validated features: dense, or scipy sparse (CSR or CSC) as validate_data returns them.
Features = np.ndarray | sp.spmatrix | sp.sparray


def _check_float32_range(array: Features, name: str) -> None:
    """Compute is float32: refuse values it cannot represent rather than train on infinities."""
    if sp.issparse(array):
        array = array.data  # the stored values; the implicit zeros are representable
    # max and -min rather than abs(array).max(): no temporary copy of the data.
    if array.dtype.kind == "f" and array.size and max(
        float(array.max()), -float(array.min())
    ) > _FLOAT32_MAX:
        raise ValueError(
            f"{name} contains values of magnitude above {_FLOAT32_MAX:.3g}, which skdp's float32 "
            f"computation cannot represent; rescale {name} (features and targets should be on "
            "a public, roughly unit scale)"
        )


def _to_tensor(array: np.ndarray, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Host array -> compute tensor; float32 compute, as DP noise dwarfs float32 rounding."""
    array = np.asarray(array)
    if not array.flags.writeable:  # torch refuses to share read-only memory (e.g. memmaps)
        array = array.copy()
    return torch.as_tensor(array, dtype=dtype, device=device)


def _features_to_device(X: Features, device: torch.device) -> torch.Tensor | SparseRows:
    """The features as float32 on the compute device: a dense tensor, or for sparse input the
    canonical CSR arrays (:class:`SparseRows`), never a dense copy."""
    if sp.issparse(X):
        return SparseRows.from_scipy(X, torch.float32, device)
    return _to_tensor(X, torch.float32, device)


def _calibrate(
    plan: PrivacyPlan | LastIterateRun, epsilon: float, delta: float, accountant: str
) -> Calibration | LastIterateCalibration:
    """The accountant's calibration of ``plan``: the standard one for a :class:`PrivacyPlan`
    (PLD or RDP on the whole trajectory), the last-iterate one for a :class:`LastIterateRun`."""
    if isinstance(plan, LastIterateRun):
        if np.isinf(epsilon):
            return LastIterateCalibration.non_private(plan)
        return LastIterateCalibration.calibrate(plan, epsilon, delta)
    if np.isinf(epsilon):
        return Calibration.non_private(plan)
    return calibrate(plan, epsilon, delta, accountant)


def _neighboring_relation(calibration: Calibration | LastIterateCalibration):
    if isinstance(calibration, LastIterateCalibration):
        return calibration.neighboring_relation
    return calibration.plan.neighboring_relation


def _spend(calibration: Calibration | LastIterateCalibration) -> dp_accounting.DpEvent | RdpCurve:
    """What the fit spends, in the form a ledger composes (and ``dp_event_`` records).

    A DpEvent for the standard accountants. For the last-iterate bound no DpEvent exists (the
    DpEvent of the standard bound would not describe the release once the last-iterate bound
    binds), so it is the RDP curve that was proven, under the replace-one relation.
    """
    if isinstance(calibration, LastIterateCalibration):
        if calibration.guarantee is None:
            return dp_accounting.NonPrivateDpEvent()
        return RdpCurve(calibration.guarantee.orders, calibration.guarantee.rdp)
    return calibration.dp_event


def _after_preprocessing(plan, allocation: ModelAllocation, estimator: str) -> PrivacyPlan:
    """The model's plan composed after a private pipeline's preprocessing mechanisms."""
    if not isinstance(plan, PrivacyPlan) or not isinstance(allocation, ModelAllocation):
        raise ValueError(
            f"{estimator} with accountant='last_iterate' cannot be a step of a private pipeline "
            "(its bound covers the training alone, under replace-one neighbouring); use "
            "accountant='pld' or 'rdp'"
        )
    return plan.with_priors(allocation.prior_noise_multipliers)


def _model_share(
    calibration: Calibration,
    allocation: ModelAllocation,
    facts: list[str] | None,
    own_priors: tuple[float, ...] = (),
) -> tuple[Calibration, list[str]]:
    """The model's own part of a pipeline's calibration: its run alone (with its own scale
    search, ``own_priors``), and its epsilon alone at the pipeline's delta (the pipeline reports
    the composition)."""
    if not calibration.is_private:
        return calibration, list(facts or [])
    own = calibration.plan.without_priors().with_priors(own_priors)
    kwargs = {} if calibration.pld_interval is None else {"pld_interval": calibration.pld_interval}
    epsilon = epsilon_of(
        own.dp_event(calibration.noise_multiplier), calibration.delta, calibration.accountant,
        own.neighboring_relation, **kwargs,
    )
    priors = ", ".join(f"{z:.4g}" for z in allocation.prior_noise_multipliers) or "none"
    line = (
        f"a step of a private pipeline ({allocation.path!r}): its noise was calibrated so that "
        "the pipeline's preprocessing (Gaussian mechanisms, noise multiplier "
        f"{priors}) and this training together meet the pipeline's privacy; the guarantee "
        "stated for this model is this training's alone (the pipeline's privacy_report() "
        "states the composition)"
    )
    share = dataclasses.replace(calibration, plan=own, epsilon=epsilon)
    return share, [line, *(facts or [])]


# Set while planned_spend() runs a fit as far as calibration: the fit then stops before the
# budget is charged and before the data is used for training.
_PLAN_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("skdp_plan_only", default=False)


class PlannedSpend(Exception):
    """Raised by a fit run under :func:`planned_spend` once its noise is calibrated; carries
    what the fit would spend. An exception, so that no fitted state is recorded."""

    def __init__(self, calibration, spend) -> None:
        super().__init__("planned spend")
        self.calibration = calibration
        self.spend = spend


def planned_spend(estimator, X, y=None) -> PlannedSpend:
    """What fitting ``estimator`` on data shaped like ``(X, y)`` would spend, without fitting.

    Runs a clone's ``fit`` through validation, planning and calibration only: nothing is
    charged to any budget, nothing is trained, and ``estimator`` itself is not changed. The
    data is only validated (its shape, number of rows and classes are public facts of a fit).
    Calibration is deterministic, so a later real fit with the same parameters on the same data
    spends exactly ``.spend`` (a DpEvent, or an RdpCurve for the last-iterate accountant), with
    ``.calibration`` holding the noise multiplier and the proven (epsilon, delta).
    """
    from sklearn.base import clone

    token = _PLAN_ONLY.set(True)
    try:
        clone(estimator).fit(X, y)
    except PlannedSpend as planned:
        return planned
    finally:
        _PLAN_ONLY.reset(token)
    raise TypeError(f"{type(estimator).__name__} does not use skdp's private fit flow")


def resolve_learning_rate(learning_rate: str, optimizer: str) -> str:
    """``'auto'``: decaying steps (``'invscaling'``) for ADP-SGD, whose noise is shaped to its
    step sizes (with constant steps it is DP-SGD, step for step), ``'constant'`` otherwise."""
    if learning_rate != "auto":
        return learning_rate
    return "invscaling" if optimizer == "adp_sgd" else "constant"


# Parameters every estimator shares for step-size and noise schedules.
SCHEDULE_CONSTRAINTS: dict = {
    "learning_rate": [StrOptions({*LEARNING_RATE_SCHEDULES, "auto"})],
    "power_t": [Interval(Real, 0, None, closed="left")],
    "noise_schedule": [StrOptions(set(NOISE_SCHEDULES))],
    "noise_decay": [Interval(Real, 0, 1, closed="right")],
}


class BaseDPEstimator(PrivacyReprMixin, AllocatedMixin, BaseEstimator):
    """Base class of every skdp estimator: the shared private fit and the privacy report."""

    def _schedule_settings(self) -> dict:
        """The :class:`SGDSettings` fields of the step-size and noise schedules."""
        return dict(
            learning_rate_schedule=resolve_learning_rate(self.learning_rate, self.optimizer),
            power_t=float(self.power_t),
            noise_schedule=self.noise_schedule,
            noise_decay=float(self.noise_decay),
        )

    def _public_facts(self) -> list[str]:
        """Facts about the data that the fit treats as public (shown in the privacy report)."""
        return []

    # Hooks of scale-free training (the linear models implement them) ---------------------
    def _scale_noise_multiplier(
        self, epsilon: float, delta: float, n_samples: int, n_outputs: int
    ) -> float | None:
        """Noise multiplier of the fit's own search for a public scale, or ``None``."""
        return None

    def _apply_public_scale(self, X, targets, noise_multiplier, *, private: bool):
        """``(X, targets, report lines)`` on the training scale; unchanged by default."""
        return X, targets, []

    def _settings_for_privacy(
        self, settings: SGDSettings, epsilon: float, delta: float, model: DPModel
    ) -> SGDSettings:
        """Settings chosen from the target (public), before planning; ``settings`` by
        default."""
        return settings

    def _settings_after_calibration(
        self, settings: SGDSettings, calibration, model: DPModel
    ) -> SGDSettings:
        """Settings chosen from the calibrated noise (public); ``settings`` by default."""
        return settings

    def _private_fit(
        self,
        X: np.ndarray,
        targets: np.ndarray,
        model: DPModel,
        target_dtype: torch.dtype,
        settings: SGDSettings,
        mechanism: str,
        training_facts: list[str] | None = None,
    ) -> torch.Tensor:
        """Plan, calibrate, run and record; returns the released flat parameters.

        ``X`` and ``targets`` are validated arrays; ``settings`` must hold public quantities
        only. ``training_facts`` are extra lines for the privacy report. Records
        ``privacy_spent_``, ``dp_event_``, ``noise_multiplier_``, ``batch_size_``,
        ``n_iter_``, ``n_steps_`` and ``device_``.
        """
        # Inside a private pipeline, the pipeline has planned and charged the whole fit, and
        # hands this step its target (skdp/_allocation.py).
        allocation = take_allocation(self)
        if allocation is not None:
            epsilon, delta = allocation.epsilon, allocation.delta
        else:
            epsilon, delta = check_privacy(self.privacy)
            if not _PLAN_ONLY.get():
                warn_if_preprocessed_without_dp(self)
        device = resolve_device(self.device)
        _check_float32_range(X, "X")
        _check_float32_range(targets, "y")
        if not np.isinf(epsilon) and allocation is None:  # a pipeline warns with its own delta
            warn_if_delta_large(delta, settings.n_samples)
        if np.isinf(epsilon) and not _PLAN_ONLY.get():  # looking at X is free only here
            warn_if_columns_unbalanced(X, type(self).__name__)

        # 1. Plan: from public quantities only (n, d, hyperparameters, the target). The
        # accountant picks the optimizer's variant (the last-iterate one refuses runs its bound
        # does not cover).
        settings = self._settings_for_privacy(settings, epsilon, delta, model)
        optimizer = make_optimizer(self.optimizer, settings, self.accountant)
        plan = optimizer.plan()
        if allocation is not None:
            plan = _after_preprocessing(plan, allocation, type(self).__name__)
        # A search for the public scale of the data (max_row_norm='auto') is one more Gaussian
        # mechanism on the same rows, composed with the training.
        scale_noise = self._scale_noise_multiplier(
            epsilon, delta, settings.n_samples, targets.shape[1] if targets.ndim > 1 else 1
        )
        own_priors = (scale_noise,) if scale_noise else ()
        if own_priors:
            plan = plan.with_priors((*plan.prior_noise_multipliers, *own_priors))

        # 2. Calibrate the noise to the target (no data is read).
        calibration = _calibrate(plan, epsilon, delta, self.accountant)
        spend = _spend(calibration)
        if _PLAN_ONLY.get():
            raise PlannedSpend(calibration, spend)

        # The ledger is asked before the data is touched; once charged, a fit stays charged.
        if allocation is None:
            self._charge_budget(calibration, spend, mechanism)
        else:  # what the model alone released (the pipeline records the composition)
            calibration, training_facts = _model_share(
                calibration, allocation, training_facts, own_priors
            )
            spend = _spend(calibration)

        # 3. Run: on the public scale (found now, after the charge), with the step size that
        # the calibrated noise calls for (both public).
        X, targets, scale_facts = self._apply_public_scale(
            X, targets, scale_noise, private=not np.isinf(epsilon)
        )
        training_facts = [*scale_facts, *(training_facts or [])]
        tuned = self._settings_after_calibration(settings, calibration, model)
        if tuned is not settings:
            settings = tuned
            optimizer = make_optimizer(self.optimizer, settings, self.accountant)
        X_t = _features_to_device(X, device)
        data = TrainingData(X_t, _to_tensor(targets, target_dtype, device), model.example_aux(X_t))
        randomness = FitRandomness(self.random_state, device)
        # Closed-form models skip autograd's bookkeeping on every call of a step; the result is
        # the same tensor (tested).
        no_autograd = not getattr(model, "needs_autograd", True)
        with torch.inference_mode() if no_autograd else contextlib.nullcontext():
            params = optimizer.run(model, data, calibration, randomness, verbose=self.verbose)
        if no_autograd:
            params = params.clone()  # a normal tensor again, for whatever comes after
        if not bool(torch.isfinite(params).all()):
            # In practice only without privacy (private updates are bounded by clipping); checking
            # the released parameters is post-processing either way.
            raise FloatingPointError(
                "training diverged: the parameters are not finite. Put the features (and "
                "targets) on a unit scale or lower the step size."
            )

        # 4. Record. The statement is fixed at fit time, so a later set_params cannot make it
        # wrong.
        self._privacy_report = privacy_statement(
            calibration,
            estimator=type(self).__name__,
            mechanism=mechanism,
            clip_bound=settings.max_grad_norm,
            n_samples=settings.n_samples,
            public_facts=self._public_facts(),
            training_facts=training_facts,
            mechanism_lines=optimizer.report_lines(calibration) if calibration.is_private else None,
        )
        self.privacy_spent_ = (calibration.epsilon, calibration.delta)
        self.dp_event_ = spend
        self.noise_multiplier_ = calibration.noise_multiplier
        self.batch_size_ = settings.batch_size
        self.learning_rate_ = settings.learning_rate
        self.n_iter_ = settings.epochs
        self.n_steps_ = settings.n_steps
        self.device_ = str(device)
        return params.detach()

    def _resolve_budget(self) -> PrivacyBudget | None:
        """``budget=``, else the budget of an enclosing ``with budget:`` block, else None."""
        return resolve_budget(self.budget)

    def _charge_budget(
        self,
        calibration: Calibration | LastIterateCalibration,
        spend: dp_accounting.DpEvent | RdpCurve,
        mechanism: str,
    ) -> None:
        params = {k: v for k, v in self.get_params(deep=False).items() if k != "budget"}
        charge_budget(
            self._resolve_budget(),
            spend,
            owner=type(self).__name__,
            params=params,
            mechanism=mechanism,
            is_private=calibration.is_private,
            relation=_neighboring_relation(calibration),
            relation_hint=f" with accountant={self.accountant!r}",
        )

    def privacy_report(self) -> str:
        """A short statement of the privacy guarantee of this fit.

        Returns
        -------
        report : str
            Mechanism, noise, steps, sampling, neighbouring relation, accountant and the proven
            (epsilon, delta).
        """
        check_is_fitted(self, "privacy_spent_")
        return self._privacy_report

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # CSR/CSC (others converted); no dense copy is made
        return tags

    def _validate_input(self, X, y="no_validation", **check_params) -> Features | tuple:
        """scikit-learn's ``validate_data`` with skdp's input rules: float64 or float32, sparse
        CSR or CSC accepted (other sparse formats become CSR), and errors about missing or
        non-numeric values that point to private preprocessing (see
        :func:`skdp._validation.explain_input_error`)."""
        try:
            return validate_data(
                self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=[np.float64, np.float32],
                **check_params,
            )
        except (ValueError, TypeError) as error:
            explained = explain_input_error(error, X, type(self).__name__)
            if explained is None:
                raise
            raise explained from error

    def _validate_classification_data(self, X, y) -> tuple[Features, np.ndarray]:
        """``(X, y)`` validated for a classifier (``y`` left as given labels)."""
        return self._validate_input(X, y, y_numeric=False)

    def _validate_regression_data(self, X, y) -> tuple[Features, np.ndarray, np.ndarray]:
        """``(X, y, targets)``: validated data, ``y`` as float64, and ``targets`` with one
        column per output (what the squared loss trains on)."""
        X, y = self._validate_input(X, y, multi_output=True, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        return X, y, (y.reshape(-1, 1) if y.ndim == 1 else y)

    def _validate_X_predict(self, X) -> Features:
        check_is_fitted(self)
        return self._validate_input(X, reset=False)
