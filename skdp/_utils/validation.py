"""Validation of the privacy parameter, of privacy-relevant settings and of the input data."""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from pathlib import Path

import joblib
import numpy as np
import sklearn

__all__ = [
    "ACCEPT_SPARSE",
    "check_privacy",
    "explain_input_error",
    "warn_if_delta_large",
    "warn_user",
    "PrivacyWarning",
]

# Sparse formats the estimators take as they are; others are converted to the first (CSR),
# from which training gathers its batches of rows.
ACCEPT_SPARSE = ["csr", "csc"]


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


# Frames in these packages are skipped when a warning is attributed to the user's code.
_INTERNAL_DIRS = (
    str(Path(__file__).resolve().parent.parent),  # skdp/
    str(Path(sklearn.__file__).resolve().parent),
    str(Path(joblib.__file__).resolve().parent),  # a Pipeline fits its steps through joblib
)


def warn_user(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` attributed to the first frame outside skdp and scikit-learn (the
    user's line that called ``fit``, directly or through a pipeline or a search): a fixed
    ``stacklevel`` would point into skdp whenever the call path differs."""
    frame, level = sys._getframe(1), 2  # stacklevel 2: warn_user's caller
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL_DIRS):
        frame, level = frame.f_back, level + 1
    del frame
    warnings.warn(message, category, stacklevel=level)


def warn_if_delta_large(delta: float, n_samples: int) -> None:
    """Warn when delta >= 1/n: a mechanism that publishes a random row would satisfy it."""
    if delta > 0 and delta >= 1.0 / n_samples:
        warn_user(
            f"delta={delta:g} is not smaller than 1/n_samples={1.0 / n_samples:.3g}: at this "
            "delta, releasing one random row in the clear would meet the guarantee. Use a delta "
            "well below 1/n_samples (e.g. 1/n_samples**1.1).",
            PrivacyWarning,
        )


# What to do about missing values without learning from the private rows.
_NAN_ADVICE = (
    "{estimator} does not accept missing values, and filling them with statistics of the "
    "private data (sklearn.impute.SimpleImputer's mean or median, or an estimator that "
    "handles NaN natively) would leak outside the privacy accounting. Impute with "
    "skdp.preprocessing.DPSimpleImputer inside skdp.pipeline.make_private_pipeline, or with "
    "a data-independent fill such as SimpleImputer(strategy='constant', fill_value=0)."
)
_INF_ADVICE = (
    "{estimator} needs finite features on a public, roughly unit scale: replace or clip "
    "infinite values with a public rule before fitting."
)
_NON_NUMERIC_ADVICE = (
    "{estimator} needs numeric features, but X has non-numeric {what}. Encode categories "
    "without learning them from the private rows: skdp.preprocessing.DPOneHotEncoder inside "
    "skdp.pipeline.make_private_pipeline, or OneHotEncoder(categories=<the public list of "
    "categories>, handle_unknown='ignore') (categories='auto' learns which categories occur in "
    "the private data)."
)


def explain_input_error(error: Exception, X, estimator: str) -> Exception | None:
    """A clearer error for input that ``validate_data`` refused, or ``None`` to keep ``error``.

    Missing or infinite values in X keep scikit-learn's first sentence ("Input X contains NaN."
    or "... infinity ...") and replace its advice, which suggests imputers and estimators that
    learn from the data, by private alternatives. Non-numeric X (strings, categories, objects)
    gets the same exception type with a pointer to private encoding, followed by the original
    message.
    """
    message = str(error)
    if message.startswith("Input X contains"):
        first = message.split("\n", 1)[0]
        advice = _NAN_ADVICE if "NaN" in first else _INF_ADVICE
        return ValueError(f"{first} {advice.format(estimator=estimator)}")
    what = _non_numeric_columns(X)
    if what is None:
        return None
    advice = _NON_NUMERIC_ADVICE.format(estimator=estimator, what=what)
    kind = TypeError if isinstance(error, TypeError) else ValueError
    return kind(f"{advice} (Conversion to float failed: {message})")


def _non_numeric_columns(X) -> str | None:
    """What in ``X`` is not numeric ("columns ['city']", "values of dtype <U5"), or ``None``.

    Called only after conversion to float failed, so reading the dtypes costs nothing on the
    ordinary path.
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "items"):  # a pandas DataFrame
        names = [str(name) for name, dtype in dtypes.items() if not _is_numeric_dtype(dtype)]
        return f"columns {names}" if names else None
    dtype = getattr(X, "dtype", None)
    if dtype is None:  # a list or other sequence
        try:
            dtype = np.asarray(X).dtype
        except (ValueError, TypeError):  # ragged rows: not a dtype problem
            return None
    return None if _is_numeric_dtype(dtype) else f"values of dtype {dtype}"


def _is_numeric_dtype(dtype) -> bool:
    """numpy numbers and booleans, pandas' nullable ones, and categoricals of numbers."""
    categories = getattr(dtype, "categories", None)  # pandas CategoricalDtype
    if categories is not None:
        return categories.dtype.kind in "biufc"
    return getattr(dtype, "kind", "O") in "biufc"
