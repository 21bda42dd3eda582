"""Validation of the privacy parameter and of privacy-relevant settings."""

from __future__ import annotations

import math
import numbers
import warnings

__all__ = ["check_privacy", "warn_if_delta_large", "PrivacyWarning"]


class PrivacyWarning(UserWarning):
    """A setting that is allowed but weakens the guarantee in a way users should know about."""


def check_privacy(privacy) -> tuple[float, float]:
    """Validate ``privacy=(epsilon, delta)`` and return it as floats.

    ``epsilon=inf`` means a non-private fit (no clipping, no noise); delta is then ignored.
    """
    hint = (
        "privacy must be a pair (epsilon, delta), e.g. privacy=(1.0, 1e-5); use "
        "privacy=(float('inf'), 0) for a non-private reference fit"
    )
    if isinstance(privacy, str) or not hasattr(privacy, "__len__") or len(privacy) != 2:
        raise ValueError(f"{hint}; got {privacy!r}")
    epsilon, delta = privacy
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in (epsilon, delta)):
        raise ValueError(f"{hint}; epsilon and delta must be real numbers, got {privacy!r}")
    epsilon, delta = float(epsilon), float(delta)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be positive (or inf for no privacy), got {epsilon}")
    if math.isinf(epsilon):
        if math.isnan(delta) or not 0.0 <= delta <= 1.0:
            raise ValueError(f"delta must be in [0, 1], got {delta}")
        return epsilon, 0.0
    if math.isnan(delta) or not 0.0 < delta < 1.0:
        raise ValueError(
            f"delta must be in the open interval (0, 1) for the Gaussian mechanism, got {delta}; "
            "a common choice is delta=1e-5 or smaller than 1/n_samples"
        )
    return epsilon, delta


def warn_if_delta_large(delta: float, n_samples: int) -> None:
    """Warn when delta >= 1/n: a mechanism that publishes a random row would satisfy it."""
    if delta > 0 and delta >= 1.0 / n_samples:
        warnings.warn(
            f"delta={delta:g} is not smaller than 1/n_samples={1.0 / n_samples:.3g}: at this "
            "delta, releasing one random row in the clear would meet the guarantee. Use a delta "
            "well below 1/n_samples (e.g. 1/n_samples**1.1).",
            PrivacyWarning,
            stacklevel=3,
        )
