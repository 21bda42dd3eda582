"""The targets the defaults studies judge by, shared by every script that chooses a default.

A default is *within target* of a cell's best (its oracle) when the gap is at most 0.5 points of
accuracy (0.01 R^2) at epsilon >= 1, three times that below; without privacy it must also be
within 0.3 points (0.005 R^2) of scikit-learn. Mean gaps are counted in tolerances and capped,
so that one hopeless cell of a tiny data set cannot outvote the others.
"""

from __future__ import annotations

import math

#: In a mean over cells a gap counts at most this many tolerances.
GAP_CAP = 10.0


def tolerance(task: str, eps: float) -> float:
    """0.5 points (0.01 R^2) at epsilon >= 1, three times that below."""
    base = 0.005 if task == "classification" else 0.01
    return base if eps >= 1 else 3 * base


def scaled_gap(gap: float, task: str, eps: float) -> float:
    """``gap`` to a cell's best in tolerances, capped at :data:`GAP_CAP`; a gap that is not
    finite (a diverged fit) counts as the cap."""
    scaled = gap / tolerance(task, eps)
    return min(scaled, GAP_CAP) if math.isfinite(scaled) else GAP_CAP


def close_to_sklearn(task: str) -> float:
    """Without privacy, how close to scikit-learn a default must be: 0.3 points / 0.005 R^2."""
    return 0.003 if task == "classification" else 0.005
