"""The one-run audit (Steinke, Nasr & Jagielski 2023): many canaries, one training run."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..accounting import NeighboringRelation
from ._bounds import one_run_epsilon_lower_bound
from ._canaries import make_canaries
from ._result import AuditResult
from ._runs import check_audit_inputs, check_canary_argument, fit_and_score, run_seeds

__all__ = ["audit_one_run", "one_run_guesses"]


def one_run_guesses(scores: np.ndarray, n_guesses: int) -> np.ndarray:
    """Guesses in {-1, 0, +1}: +1 ("in") for the ``ceil(n/2)`` highest scores, -1 for the
    ``floor(n/2)`` lowest, 0 (abstain) elsewhere. Ties are broken by position (the canaries'
    order is random, so this is a random tie-break)."""
    scores = np.asarray(scores, dtype=np.float64)
    if not 1 <= n_guesses <= scores.size:
        raise ValueError(f"n_guesses must be in [1, {scores.size}], got {n_guesses}")
    order = np.argsort(scores, kind="stable")
    k_pos = (n_guesses + 1) // 2
    k_neg = n_guesses - k_pos
    guesses = np.zeros(scores.size, dtype=np.int8)
    guesses[order[scores.size - k_pos :]] = 1
    guesses[order[:k_neg]] = -1
    return guesses


def audit_one_run(
    estimator,
    X,
    y,
    *,
    n_canaries: int = 200,
    n_guesses: int | Sequence[int] | None = None,
    canary: str = "crafted",
    canary_norm: float | None = None,
    dedicated_features: bool = True,
    confidence: float = 0.95,
    random_state=None,
) -> AuditResult:
    """Empirical lower bound on epsilon from a single fit (Steinke, Nasr & Jagielski 2023).

    ``n_canaries`` canaries are drawn; each is added to the training data with probability 1/2,
    independently (under replace-one neighbouring, a canary left out is replaced by a copy of
    a data row, so that every canary toggles a replace-one neighbour). One clone of
    ``estimator`` is trained; the auditor guesses "in" for the highest-scoring canaries and
    "out" for the lowest, and the number of correct guesses gives the bound of the paper
    (:func:`skdp.audit.one_run_epsilon_lower_bound`, with delta).

    Parameters
    ----------
    estimator : skdp estimator
        The configuration to audit (cloned; its budget is not charged).
    X, y : array-like
        The auditor's (non-private) training data; the canaries are added to it.
    n_canaries : int, default=200
        ``m``. Crafted canaries use the least-varying directions of ``X``: with at least as
        many features as canaries they are orthogonal to each other, which is when the audit
        is strongest.
    n_guesses : int or sequence of int, default=None
        ``r``, the number of guesses (half "in", half "out"). Fixed before training. A
        sequence tries each and reports the largest bound, with a Bonferroni correction
        (each at level ``1 - (1 - confidence) / len``). ``None``: ``(m // 10, m // 4, m // 2,
        m)``, at least 1 each, without repeats.
    canary, canary_norm, dedicated_features, confidence
        See :func:`skdp.audit.audit_multi_run`; with dedicated features every canary has its
        own column (``n_canaries`` columns are appended to ``X``), so crafted canaries never
        interfere with each other.
    random_state : int, numpy Generator or None
        Seeds the canaries, their inclusion and the fit.

    Returns
    -------
    result : AuditResult
        ``details`` has ``n_canaries``, ``n_included``, ``n_guesses``, ``n_correct`` (of the
        reported bound) and ``per_guess_count`` (every count tried with its bound).

    Raises
    ------
    FloatingPointError
        When the one fit diverges (no model is released, so there is nothing to score).

    Notes
    -----
    The bound is at most about ``log(r / log(1 / alpha))``-ish: with m = 200 canaries and every
    guess right it is about 3.1 (95% confidence, r = 200), so one-run audits refute large
    claims only with many canaries. They are also weaker than multi-run audits when canaries
    interfere (fewer features than canaries).
    """
    canary = check_canary_argument(canary)
    if n_canaries < 2:
        raise ValueError(f"n_canaries must be at least 2, got {n_canaries}")
    guess_counts = _guess_counts(n_guesses, n_canaries)
    data, relation, delta = check_audit_inputs(estimator, X, y)
    rng = np.random.default_rng(random_state)
    canaries = make_canaries(
        data.X, data.y, n_canaries, canary, data.classifier, rng, canary_norm, dedicated_features
    )
    X, X_canary, y_canary = canaries.X, canaries.X_canary, canaries.y_canary
    included = rng.random(n_canaries) < 0.5
    X_train = [X, X_canary[included]]
    y_train = [data.y, y_canary[included]]
    if relation is NeighboringRelation.REPLACE_ONE:
        filler = rng.integers(0, X.shape[0], size=int((~included).sum()))
        X_train.append(X[filler])
        y_train.append(data.y[filler])
    X_train, y_train = np.concatenate(X_train), np.concatenate(y_train)
    # The training order must not reveal which rows are canaries: shuffle it (DP-SGD samples
    # rows at random anyway; this only matters for order-dependent code).
    order = rng.permutation(X_train.shape[0])
    (seed,) = run_seeds(rng, 1)
    scores, claimed = fit_and_score(
        estimator, X_train[order], y_train[order], seed, X_canary, y_canary, canaries.reference
    )

    alpha_each = (1.0 - confidence) / len(guess_counts)
    truth = np.where(included, 1, -1)
    per_count = []
    for r in guess_counts:
        guesses = one_run_guesses(scores, r)
        correct = int(np.sum(guesses == truth))  # abstentions (0) are never equal to +-1
        bound = one_run_epsilon_lower_bound(n_canaries, r, correct, delta, 1.0 - alpha_each)
        per_count.append(dict(n_guesses=r, n_correct=correct, epsilon_lower=bound))
    best = max(per_count, key=lambda d: d["epsilon_lower"])
    return AuditResult(
        method="one_run",
        epsilon_lower=best["epsilon_lower"],
        epsilon_claimed=claimed,
        delta=delta,
        confidence=confidence,
        canary=canary,
        n_fits=1,
        details=dict(
            n_canaries=n_canaries,
            n_included=int(included.sum()),
            n_guesses=best["n_guesses"],
            n_correct=best["n_correct"],
            per_guess_count=per_count,
            neighboring_relation=relation.value,
            scores=scores,
            included=included,
        ),
    )


def _guess_counts(n_guesses, n_canaries: int) -> tuple[int, ...]:
    if n_guesses is None:
        counts = [max(1, n_canaries // 10), max(1, n_canaries // 4), n_canaries // 2, n_canaries]
    elif isinstance(n_guesses, int | np.integer):
        counts = [int(n_guesses)]
    else:
        counts = [int(r) for r in n_guesses]
    counts = tuple(dict.fromkeys(counts))  # without repeats, in order
    if not counts or any(not 1 <= r <= n_canaries for r in counts):
        raise ValueError(f"n_guesses must be in [1, n_canaries={n_canaries}], got {n_guesses!r}")
    return counts
