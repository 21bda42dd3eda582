"""A DP-SGD optimizer whose public settings may still change once its noise is calibrated.

Some defaults are functions of the calibrated noise (the step size that ``eta0='auto'`` takes
is damped by the noise per coordinate): they are public, but known only after calibration. The
estimator plans with placeholder values that do not change the plan (the step size does not
enter the accounting), and this wrapper applies its choice before the run.
"""

from __future__ import annotations

from collections.abc import Callable

from .._base import Release, RunInput, StatementFacts
from .settings import SGDSettings

__all__ = ["TunedSGD"]

# (settings, calibration, run input) -> settings: the estimator's choices from public values.
Tuning = Callable[[SGDSettings, object, RunInput], SGDSettings]


class TunedSGD:
    """``factory(settings)``, re-made with ``tune(settings, calibration, data)`` before it runs.

    ``tune`` may change only what the accounting does not read (step sizes, the penalty): the
    plan is the one that was calibrated and charged.
    """

    def __init__(self, factory: Callable[[SGDSettings], object], settings: SGDSettings,
                 tune: Tuning) -> None:
        self.factory = factory
        self.settings = settings
        self.tune = tune
        self.optimizer = factory(settings)
        self.description = self.optimizer.description

    def plan(self):
        return self.optimizer.plan()

    def calibrate(self, plan, epsilon: float, delta: float, accountant: str):
        return self.optimizer.calibrate(plan, epsilon, delta, accountant)

    def check_input(self, X, targets) -> None:
        check = getattr(self.optimizer, "check_input", None)
        if check is not None:
            check(X, targets)

    def run(self, data: RunInput, calibration) -> Release:
        tuned = self.tune(self.settings, calibration, data)
        if tuned is not self.settings:
            self.settings = tuned
            self.optimizer = self.factory(tuned)
        return self.optimizer.run(data, calibration)

    def statement(self, calibration, release: Release, facts: StatementFacts) -> str:
        return self.optimizer.statement(calibration, release, facts)
