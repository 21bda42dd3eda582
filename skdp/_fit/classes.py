"""Class labels of DP classifiers: public when given, read from ``y`` otherwise."""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.utils.multiclass import check_classification_targets, type_of_target

from .._engine._losses import OutputLoss

__all__ = ["encode_classes", "class_facts", "output_loss", "LogitClassifierMixin"]


def encode_classes(y: np.ndarray, classes, estimator: str) -> tuple[np.ndarray, np.ndarray]:
    """``(classes_, targets)``: the sorted labels and ``y`` as indices into them.

    ``classes`` is the user's public list of labels, or ``None`` to read them from ``y`` (which
    treats the set of labels present in the data as public, as scikit-learn does).
    """
    check_classification_targets(y)
    kind = type_of_target(y)
    if kind not in ("binary", "multiclass"):
        raise ValueError(
            f"{estimator} supports binary and multiclass targets, got {kind!r} targets; "
            "pass a 1-d array of class labels"
        )
    if classes is not None:
        labels = np.unique(np.asarray(classes))
        unknown = np.setdiff1d(np.unique(y), labels)
        if unknown.size:
            raise ValueError(
                f"y contains labels {unknown.tolist()} that are not in the public "
                f"classes={labels.tolist()}"
            )
    else:
        labels = np.unique(y)
    if labels.size < 2:
        raise ValueError(
            f"{estimator} needs samples of at least 2 classes in the data, but the data "
            f"contains only one class: {labels[0]!r}"
        )
    return labels, np.searchsorted(labels, y)


def output_loss(classes_: np.ndarray) -> tuple[OutputLoss, int]:
    """The loss and number of outputs for these classes: one logistic logit for two classes
    (that of ``classes_[1]``), a softmax over all of them otherwise."""
    if classes_.size == 2:
        return OutputLoss.LOGISTIC, 1
    return OutputLoss.SOFTMAX, int(classes_.size)


def class_facts(classes_: np.ndarray, given: bool) -> list[str]:
    """The public-facts line of a classifier's privacy report."""
    source = "given by the user" if given else "read from y"
    return [f"the class labels {classes_.tolist()} ({source})"]


class LogitClassifierMixin:
    """``predict``, ``predict_proba`` and ``predict_log_proba`` from ``self._logits(X)``: one
    logit per sample for two classes (that of ``classes_[1]``), one per class otherwise."""

    def _logits(self, X) -> np.ndarray:
        raise NotImplementedError

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted class labels.
        """
        logits = self._logits(X)
        indices = (logits > 0).astype(int) if logits.ndim == 1 else logits.argmax(axis=1)
        return self.classes_[indices]

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probability of each class, in the order of ``classes_``.
        """
        logits = self._logits(X)
        if logits.ndim == 1:
            positive = expit(logits)
            return np.column_stack([1.0 - positive, positive])
        return softmax(logits, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of the class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probability of each class, in the order of ``classes_``.
        """
        logits = self._logits(X)
        if logits.ndim == 1:
            return np.column_stack([log_expit(-logits), log_expit(logits)])
        return log_softmax(logits, axis=1)
