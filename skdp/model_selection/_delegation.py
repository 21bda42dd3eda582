"""The fitted search acts as its selected model: prediction, scoring and the fitted
attributes scikit-learn expects are read from ``best_estimator_`` (as in scikit-learn's
``BaseSearchCV``)."""

from __future__ import annotations

from collections.abc import Callable

from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

__all__ = ["SelectedModelMixin"]


def _search_estimator_has(attr: str) -> Callable[[object], bool]:
    """Whether the selected model (the estimator, before fit) has ``attr``."""

    def check(self) -> bool:
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


class SelectedModelMixin:
    """``predict``, ``predict_proba``, ``predict_log_proba``, ``decision_function``, ``score``,
    ``classes_``, ``n_features_in_`` and ``feature_names_in_`` of ``best_estimator_``; each
    method exists only when the selected model (before fit: the estimator) has it."""

    @available_if(_search_estimator_has("predict"))
    def predict(self, X):
        """Predict with the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(_search_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(_search_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_search_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    @available_if(_search_estimator_has("score"))
    def score(self, X, y):
        """The selected model's ``score`` (accuracy or R^2; not private: your test data).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        score : float
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)

    @property
    def classes_(self):
        """Class labels of the selected model."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.classes_

    @property
    def n_features_in_(self):
        """Number of features seen during fit."""
        try:
            check_is_fitted(self, "best_estimator_")
        except Exception as exc:
            raise AttributeError(
                f"{type(self).__name__} has no n_features_in_ before fit"
            ) from exc
        return self.best_estimator_.n_features_in_

    @property
    def feature_names_in_(self):
        """Names of features seen during fit (when ``X`` had string column names)."""
        try:
            check_is_fitted(self, "best_estimator_")
        except Exception as exc:
            raise AttributeError(
                f"{type(self).__name__} has no feature_names_in_ before fit"
            ) from exc
        return self.best_estimator_.feature_names_in_
