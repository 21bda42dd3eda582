"""A loud warning for the unsafe path: a DP estimator fitted after steps that learned from the
same rows without DP (scikit-learn's ``StandardScaler``, ``OneHotEncoder``, ... in a plain
``Pipeline``). Its ``privacy_spent_`` then covers its own training only, not what those steps
released; :func:`skdp.pipeline.make_private_pipeline` covers everything.

The estimator cannot see the pipeline it is in, so this looks a few frames up the call stack
for the ``fit`` of a scikit-learn ``Pipeline`` or ``TransformedTargetRegressor`` that is fitting
it. It reads only the pipeline's parameters (never data), only warns, and is best effort: a
pipeline it does not find is not warned about.
"""

from __future__ import annotations

import inspect

from sklearn.compose import (
    ColumnTransformer,
    TransformedTargetRegressor,
)
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
)
from sklearn.utils import get_tags

from .._utils.validation import PrivacyWarning, warn_user
from .allocation import AllocatedMixin

__all__ = [
    "AccountsEveryStep",
    "is_data_independent",
    "learned_without_dp",
    "warn_if_preprocessed_without_dp",
]

_FRAMES = 8  # Pipeline.fit -> final_estimator.fit -> ... -> _private_fit is a few frames


class AccountsEveryStep:
    """Marks a meta-estimator whose ``fit`` accounts every step it fits (the private pipeline):
    the estimators it fits do not warn."""


def warn_if_preprocessed_without_dp(estimator) -> None:
    """Warn when ``estimator`` is being fitted by a plain scikit-learn pipeline whose earlier
    steps learn from the data without DP."""
    frame = inspect.currentframe()
    try:
        for _ in range(_FRAMES):
            frame = frame.f_back if frame is not None else None
            if frame is None:
                return
            owner = frame.f_locals.get("self")
            if frame.f_code.co_name not in ("fit", "fit_transform", "fit_predict"):
                continue
            if isinstance(owner, AccountsEveryStep):
                return  # everything is accounted
            if isinstance(owner, Pipeline):
                leaks = [leak for name, step in owner.steps[:-1]
                         for leak in learned_without_dp(step, name)]
            elif isinstance(owner, TransformedTargetRegressor):
                leaks = learned_without_dp(owner.transformer, "transformer")
            else:
                continue
            if leaks:
                warn_user(
                    f"{type(estimator).__name__} is fitted by a scikit-learn "
                    f"{type(owner).__name__} whose step(s) {', '.join(leaks)} learned from the "
                    "same rows without differential privacy. Its privacy_spent_ covers its own "
                    "training only: those steps' statistics (means, scales, categories, ...) "
                    "are released outside the guarantee. Use skdp.pipeline."
                    "make_private_pipeline with skdp.preprocessing's DP transformers, or "
                    "data-independent steps.",
                    PrivacyWarning,
                )
            return
    finally:
        del frame


def is_data_independent(step) -> bool:
    """Whether fitting ``step`` learns nothing from the data (checked from its parameters)."""
    if isinstance(step, FunctionTransformer | PolynomialFeatures):
        return True  # PolynomialFeatures' fit reads only the number of features
    if isinstance(step, OneHotEncoder | OrdinalEncoder):
        unknown_ok = (
            step.handle_unknown != "error"
            if isinstance(step, OneHotEncoder)
            else step.handle_unknown == "use_encoded_value"
        )
        return (
            not isinstance(step.categories, str)
            and step.min_frequency is None
            and step.max_categories is None
            and unknown_ok
        )
    if isinstance(step, SimpleImputer):
        return step.strategy == "constant" and step.keep_empty_features and not step.add_indicator
    if isinstance(step, MissingIndicator):
        return step.features == "all"
    try:
        return not get_tags(step).requires_fit
    except Exception:  # not a scikit-learn estimator: unknown, so not trusted
        return False


def learned_without_dp(step, path: str) -> list[str]:
    """The steps inside ``step`` that learn from the data without DP, as ``'path (Class)'``
    (never raises; for the warning of :func:`warn_if_preprocessed_without_dp`)."""
    if step is None or (isinstance(step, str) and step in ("passthrough", "drop")):
        return []
    if isinstance(step, AllocatedMixin):  # an skdp DP step: accounted
        return []
    if isinstance(step, Pipeline):
        return [leak for name, sub in step.steps
                for leak in learned_without_dp(sub, f"{path}__{name}" if path else name)]
    if isinstance(step, ColumnTransformer):
        parts = [*step.transformers, ("remainder", step.remainder, None)]
        return [leak for name, sub, _ in parts
                for leak in learned_without_dp(sub, f"{path}__{name}")]
    if isinstance(step, FeatureUnion):
        return [leak for name, sub in step.transformer_list
                for leak in learned_without_dp(sub, f"{path}__{name}")]
    if is_data_independent(step):
        return []
    return [f"{path!r} ({type(step).__name__})"]
