"""Multilayer perceptrons trained with differential privacy."""

from ._classifier import DPMLPClassifier
from ._regressor import DPMLPRegressor

__all__ = ["DPMLPClassifier", "DPMLPRegressor"]
