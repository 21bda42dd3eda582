"""Fixtures of the private searches' tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def binary_data():
    """1500 rows of 5 Gaussian features (sd 1/2); labels from a noisy linear rule."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 5)) / 2
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=1500) > 0).astype(int)
    return X, y
