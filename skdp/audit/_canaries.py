"""Canaries: the rows whose membership an audit tests.

A *crafted* canary is built for the largest possible influence on the released model: it lies
far from the data (so that its per-example gradient reaches the clipping bound) in a direction
the data barely use (so that its effect is not drowned by the other rows'), with a label the
model has no reason to predict. A *random* canary is an ordinary-looking row: a row of the data
with a wrong label (classification) or a label from another row (regression). Crafted canaries
measure the worst case the privacy guarantee has to cover; random ones, the typical case.

Canaries are built from the audit's own data, which is not private: an audit runs on data the
auditor controls (synthetic or public), never on the data the guarantee is meant to protect.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CANARY_KINDS", "CanarySet", "make_canaries", "low_variance_directions"]

CANARY_KINDS = ("crafted", "random")


def low_variance_directions(X: np.ndarray, n_directions: int, rng: np.random.Generator):
    """``n_directions`` unit vectors, shape ``(n_directions, n_features)``, along which the
    rows of ``X`` vary least.

    The right singular vectors of the centred data, from the least variance up; when more
    directions are asked for than there are features, random unit combinations of the least
    varying half of them (nearly orthogonal in high dimension).
    """
    X = np.asarray(X, dtype=np.float64)
    n_features = X.shape[1]
    centred = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=True)  # rows: decreasing variance
    basis = vt[::-1]  # increasing variance
    if n_directions <= n_features:
        return basis[:n_directions].copy()
    pool = basis[: max(1, n_features // 2)]
    mix = rng.normal(size=(n_directions, pool.shape[0]))
    directions = mix @ pool
    return directions / np.linalg.norm(directions, axis=1, keepdims=True)


@dataclass(frozen=True)
class CanarySet:
    """Canaries and the data they go with.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features_audit)
        The audit's training data; for crafted canaries with dedicated features it has one
        extra all-zero column per canary.
    X_canary : ndarray of shape (n_canaries, n_features_audit)
    y_canary : ndarray of shape (n_canaries,) or (n_canaries, n_outputs)
    reference : ndarray of shape (n_features_audit,) or None
        A point whose score is subtracted from each canary's (the origin for crafted
        canaries: it removes what the canary's score shares with every input, such as the
        intercept), or ``None``.
    """

    X: np.ndarray
    X_canary: np.ndarray
    y_canary: np.ndarray
    reference: np.ndarray | None


def make_canaries(
    X: np.ndarray,
    y: np.ndarray,
    n_canaries: int,
    kind: str,
    is_classifier: bool,
    rng: np.random.Generator,
    norm: float | None = None,
    dedicated_features: bool = True,
) -> CanarySet:
    """``n_canaries`` canaries for data shaped like ``(X, y)``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The audit's (non-private) training data.
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Its targets.
    n_canaries : int
        How many canaries.
    kind : {'crafted', 'random'}
        See the module docstring.
    is_classifier : bool
        Classification (labels) or regression (real targets).
    rng : numpy Generator
        Randomness of the construction.
    norm : float, default=None
        L2 norm of crafted canaries; ``None``: 4 times the largest row norm of ``X`` (at least
        4), far enough out that their gradients are clipped whatever the model predicts.
    dedicated_features : bool, default=True
        Crafted canaries only: give each canary its own feature column, zero in every data
        row, and put the canary on it (``norm`` times a random sign). No data row then
        competes with the canary's gradient along its direction, which is what makes small
        audits powerful. A DP guarantee holds for every data set, so the data set with these
        columns is as legitimate a test as the original. ``False``: the canaries lie along
        the least-varying directions of ``X`` itself.

    Returns
    -------
    canaries : CanarySet
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if kind not in CANARY_KINDS:
        raise ValueError(f"canary must be one of {CANARY_KINDS}, got {kind!r}")
    if n_canaries < 1:
        raise ValueError(f"need at least one canary, got {n_canaries}")
    if kind == "random":
        rows = rng.integers(0, X.shape[0], size=n_canaries)
        if is_classifier:
            y_canary = _wrong_labels(y, y[rows], rng)
        else:
            y_canary = y[rng.integers(0, y.shape[0], size=n_canaries)].copy()
        return CanarySet(X, X[rows].copy(), y_canary, None)
    if norm is None:
        norm = 4.0 * max(1.0, float(np.linalg.norm(X, axis=1).max()))
    # Random signs: canaries sharing a direction then pull in opposite directions.
    signs = rng.choice([-1.0, 1.0], size=(n_canaries, 1))
    if dedicated_features:
        X = np.hstack([X, np.zeros((X.shape[0], n_canaries), dtype=X.dtype)])
        directions = np.zeros((n_canaries, X.shape[1]))
        directions[:, X.shape[1] - n_canaries :] = np.eye(n_canaries)
    else:
        directions = low_variance_directions(X, n_canaries, rng)
    X_canary = (float(norm) * signs * directions).astype(X.dtype, copy=False)
    y_canary = _unlikely_targets(y, n_canaries, is_classifier, rng)
    return CanarySet(X, X_canary, y_canary, np.zeros(X.shape[1], dtype=X.dtype))


def _unlikely_targets(y, n_canaries, is_classifier, rng):
    if is_classifier:
        # A class the model has no reason to predict at a point far from the data: the rarest
        # class of the data for every canary, or a random class when several are rarest.
        labels, counts = np.unique(y, return_counts=True)
        rarest = labels[counts == counts.min()]
        return rng.choice(rarest, size=n_canaries).astype(y.dtype, copy=False)
    # Regression: a target far outside the data's range, on a random side, so that the
    # residual (and so the clipped gradient) is large whatever the model predicts.
    scale = 10.0 * max(1.0, float(np.abs(y).max()))
    shape = (n_canaries,) + y.shape[1:]
    return (scale * rng.choice([-1.0, 1.0], size=shape)).astype(y.dtype, copy=False)


def _wrong_labels(y, true_labels, rng):
    labels = np.unique(y)
    out = np.empty_like(true_labels)
    for i, label in enumerate(true_labels):
        out[i] = rng.choice(labels[labels != label])
    return out
