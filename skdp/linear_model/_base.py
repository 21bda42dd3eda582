"""Shared fit logic of the DP linear models: plan, calibrate, run, record."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._engine._device import FitRandomness, resolve_device
from .._engine._glm import GLMLoss, LinearModel
from .._engine._noisy_sgd import SGDSettings, TrainingData
from .._engine._optimizers import OPTIMIZER_NAMES, make_optimizer
from .._validation import check_privacy, warn_if_delta_large
from ..accounting import ACCOUNTANTS, Calibration, calibrate, privacy_statement

__all__ = ["BaseDPLinearModel"]

# Defaults measured on Adult and diamonds with the public preprocessing (benchmarks/tune_defaults.py
# and docs/benchmarks.md): large batches favour DP (noise per example falls as 1/batch), and
# averaging the last iterates removes much of the remaining noise at no privacy cost.
# Averaging the last tenth of the iterates was the best tail length, or within 0.0002 of it, at
# every epsilon on both data sets (benchmarks/tune_averaging.py); longer tails lag behind the
# iterate at small noise, shorter ones cancel less noise at large noise.
DEFAULT_AVERAGE_FRACTION = 0.1
AUTO_BATCH_FRACTION = 1 / 32  # expected batch ~ 3% of the rows ...
AUTO_BATCH_MIN, AUTO_BATCH_MAX = 64, 4096  # ... within these limits (and never above n)


def resolve_batch_size(batch_size, n_samples: int) -> int:
    """``'auto'`` -> a public function of n only; an int is capped at n (full batch)."""
    if batch_size == "auto":
        batch_size = int(
            np.clip(round(n_samples * AUTO_BATCH_FRACTION), AUTO_BATCH_MIN, AUTO_BATCH_MAX)
        )
    return int(min(batch_size, n_samples))


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _check_float32_range(array: np.ndarray, name: str) -> None:
    """Compute is float32: refuse values it cannot represent rather than train on infinities."""
    if array.dtype.kind == "f" and array.size and float(np.abs(array).max()) > _FLOAT32_MAX:
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


def resolve_average(average) -> float:
    """``True`` -> the default tail fraction, ``False`` -> 0 (last iterate), a float as given."""
    if isinstance(average, bool | np.bool_):
        return DEFAULT_AVERAGE_FRACTION if average else 0.0
    return float(average)


class BaseDPLinearModel(BaseEstimator):
    """Base class of DP linear models trained by DP-SGD on a closed-form GLM gradient."""

    _parameter_constraints: dict = {
        # privacy and device get tailored messages from check_privacy and resolve_device.
        "privacy": "no_validation",
        "optimizer": [StrOptions(set(OPTIMIZER_NAMES))],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [StrOptions({"constant"})],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
        "average": ["boolean", Interval(Real, 0, 1, closed="right")],
        "accountant": [StrOptions(set(ACCOUNTANTS))],
        "device": "no_validation",
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # Implemented by subclasses -------------------------------------------------------------
    def _l2_strength(self, n_samples: int) -> float:
        raise NotImplementedError

    def _public_facts(self) -> list[str]:
        return []

    # The shared fit ------------------------------------------------------------------------
    def _fit_linear(self, X: np.ndarray, targets: np.ndarray, loss: GLMLoss, n_outputs: int):
        """Plan, calibrate, run and record. ``X`` and ``targets`` are validated arrays."""
        epsilon, delta = check_privacy(self.privacy)
        device = resolve_device(self.device)
        _check_float32_range(X, "X")
        _check_float32_range(targets, "y")
        n_samples, n_features = X.shape
        if not np.isinf(epsilon):
            warn_if_delta_large(delta, n_samples)

        # 1. Plan: from public quantities only (n, d, hyperparameters).
        settings = SGDSettings(
            n_samples=n_samples,
            batch_size=resolve_batch_size(self.batch_size, n_samples),
            epochs=self.max_iter,
            learning_rate=float(self.eta0),
            max_grad_norm=float(self.max_grad_norm),
            l2=self._l2_strength(n_samples),
            average=resolve_average(self.average),
        )
        optimizer = make_optimizer(self.optimizer, settings)
        plan = optimizer.plan()

        # 2. Calibrate the noise to the target (no data is read).
        if np.isinf(epsilon):
            calibration = Calibration.non_private(plan)
        else:
            calibration = calibrate(plan, epsilon, delta, self.accountant)

        # 3. Run.
        model = LinearModel(n_features, n_outputs, loss, self.fit_intercept)
        X_t = _to_tensor(X, torch.float32, device)
        y_dtype = torch.int64 if loss is GLMLoss.SOFTMAX else torch.float32
        data = TrainingData(X_t, _to_tensor(targets, y_dtype, device), model.example_scales(X_t))
        randomness = FitRandomness(self.random_state, device)
        params = optimizer.run(model, data, calibration, randomness, verbose=self.verbose)

        if not bool(torch.isfinite(params).all()):
            # In practice only without privacy (private updates are bounded by clipping); checking
            # the released parameters is post-processing either way.
            raise FloatingPointError(
                "training diverged: the coefficients are not finite. Put the features (and "
                "targets) on a unit scale or lower eta0."
            )

        # 4. Record: everything fitted lives on the host as numpy.
        coef = model.coef(params).T.detach().cpu().numpy().astype(np.float64)
        intercept = model.intercept(params)
        intercept = (
            intercept.detach().cpu().numpy().astype(np.float64)
            if intercept is not None
            else np.zeros(n_outputs)
        )
        # The statement is fixed at fit time, so a later set_params cannot make it wrong.
        self._privacy_report = privacy_statement(
            calibration,
            estimator=type(self).__name__,
            mechanism=f"optimizer={self.optimizer!r} (DP-SGD)",
            clip_bound=settings.max_grad_norm,
            n_samples=n_samples,
            public_facts=self._public_facts(),
        )
        self.privacy_spent_ = (calibration.epsilon, calibration.delta)
        self.dp_event_ = calibration.dp_event
        self.noise_multiplier_ = calibration.noise_multiplier
        self.batch_size_ = settings.batch_size
        self.n_iter_ = settings.epochs
        self.n_steps_ = settings.n_steps
        self.device_ = str(device)
        return coef, intercept

    # Privacy report ------------------------------------------------------------------------
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

    def _validate_X_predict(self, X) -> np.ndarray:
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
