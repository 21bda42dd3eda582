"""What skdp ships, read from the code, for the tests that run over all of it: an estimator or an
optimizer added to skdp is tested without editing a test file.

``ESTIMATORS``
    Every public DP estimator, found the way scikit-learn's ``all_estimators`` finds its own:
    the classes that skdp's public subpackages export (``__all__``) and that derive from
    ``BaseDPEstimator``, in the order of the subpackages' names, then of their ``__all__``
    (DPLogisticRegression, DPRidge, DPMLPClassifier, DPMLPRegressor).
``CLASSIFIERS``, ``REGRESSORS``
    ``ESTIMATORS`` split by scikit-learn's mixins, in the same order.
``SGD_OPTIMIZERS``
    The optimizer registry's DP-SGD optimizers (``skdp.mechanisms._registry``: the names whose
    ``optimizer_class`` is not None; ``'ssp'`` is DPRidge's closed form), sorted.

The lists are made when the test modules are collected, so an optimizer a test registers for
itself (tests/mechanisms/test_outside_mechanism.py) is not in them.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from sklearn.base import ClassifierMixin, RegressorMixin

import skdp
from skdp._fit.estimator import BaseDPEstimator
from skdp.mechanisms._registry import OPTIMIZER_NAMES, optimizer_class

__all__ = ["CLASSIFIERS", "ESTIMATORS", "REGRESSORS", "SGD_OPTIMIZERS"]


def _public_estimators() -> list[type]:
    found = []
    for info in sorted(pkgutil.iter_modules(skdp.__path__), key=lambda info: info.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"skdp.{info.name}")
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if (inspect.isclass(value) and issubclass(value, BaseDPEstimator)
                    and not inspect.isabstract(value) and value not in found):
                found.append(value)
    return found


ESTIMATORS: list[type] = _public_estimators()
CLASSIFIERS: list[type] = [E for E in ESTIMATORS if issubclass(E, ClassifierMixin)]
REGRESSORS: list[type] = [E for E in ESTIMATORS if issubclass(E, RegressorMixin)]
# Sorted: the registry is a set, and every xdist worker must collect the same order.
SGD_OPTIMIZERS: list[str] = sorted(
    name for name in OPTIMIZER_NAMES if optimizer_class(name) is not None
)
