"""Class labels of DP classifiers: public when given, read from ``y`` otherwise."""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target

__all__ = ["encode_classes", "class_facts"]


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


def class_facts(classes_: np.ndarray, given: bool) -> list[str]:
    """The public-facts line of a classifier's privacy report."""
    source = "given by the user" if given else "read from y"
    return [f"the class labels {classes_.tolist()} ({source})"]
