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

from ._validation import PrivacyWarning, warn_user

__all__ = ["warn_if_preprocessed_without_dp"]

_FRAMES = 8  # Pipeline.fit -> final_estimator.fit -> ... -> _private_fit is a few frames


def warn_if_preprocessed_without_dp(estimator) -> None:
    """Warn when ``estimator`` is being fitted by a plain scikit-learn pipeline whose earlier
    steps learn from the data without DP."""
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.pipeline import Pipeline

    from .pipeline import PrivatePipeline
    from .pipeline._layout import learned_without_dp

    frame = inspect.currentframe()
    try:
        for _ in range(_FRAMES):
            frame = frame.f_back if frame is not None else None
            if frame is None:
                return
            owner = frame.f_locals.get("self")
            if frame.f_code.co_name not in ("fit", "fit_transform", "fit_predict"):
                continue
            if isinstance(owner, PrivatePipeline):
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
