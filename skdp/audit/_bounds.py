"""Statistics of privacy audits: confidence intervals and epsilon lower bounds.

Everything here is a pure function of counts or scores; nothing trains a model.

Two tests are implemented.

*Multi-run* (one canary, many models). A membership test that says "in" when a score is at least
a threshold has a false-positive rate FPR (on models trained without the canary) and a
false-negative rate FNR (on models trained with it). If the training mechanism is
(epsilon, delta)-DP for the two neighbouring data sets, every test satisfies
``1 - FNR <= e^epsilon FPR + delta`` and ``1 - FPR <= e^epsilon FNR + delta``. With one-sided
Clopper-Pearson upper bounds on FPR and FNR that hold together with probability at least
``confidence``, ``log((1 - delta - FNR_ub) / FPR_ub)`` (and its mirror image) is then a lower
bound on epsilon with that confidence, provided the threshold was fixed before the counts were
taken: it is chosen on a separate part of the runs.

*One-run* (Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS
2023). ``m`` canaries are each included with probability 1/2, independently; after one training
run the auditor guesses "in" for the ``k_+`` highest scores and "out" for the ``k_-`` lowest and
abstains on the rest. If the mechanism is (epsilon, delta)-DP with respect to each canary, the
number ``W`` of correct guesses among the ``r = k_+ + k_-`` made satisfies, for every ``v``
(their Theorem 3.3 and Proposition 5.2, the numerical form with delta in their Appendix D),

    P[W >= v] <= P[Bin(r, q) >= v] + 2 m delta max_{1 <= i <= v} P[v - i <= Bin(r, q) < v] / i,

with ``q = e^epsilon / (1 + e^epsilon)``. The right-hand side is a p-value; the lower bound is
the largest epsilon at which it is still below ``1 - confidence``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.optimize import brentq

__all__ = [
    "clopper_pearson_upper",
    "clopper_pearson_interval",
    "epsilon_from_error_rates",
    "ThresholdBound",
    "multi_run_epsilon_lower_bound",
    "one_run_p_value",
    "one_run_epsilon_lower_bound",
]

# Lower bounds are searched in [0, EPSILON_SEARCH_MAX]; a bound that reaches it is reported as
# this value (the data then support any epsilon up to it).
EPSILON_SEARCH_MAX = 50.0


def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """One-sided ``1 - alpha`` Clopper-Pearson upper bound on a binomial proportion.

    Parameters
    ----------
    k : int
        Number of successes.
    n : int
        Number of trials (at least 1).
    alpha : float
        Probability, under the true proportion, that the bound is below it.

    Returns
    -------
    upper : float
        The ``1 - alpha`` quantile of ``Beta(k + 1, n - k)``; 1 when ``k == n``.
    """
    _check_count(k, n)
    if k >= n:
        return 1.0
    return float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))


def clopper_pearson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval ``(lower, upper)`` for a binomial proportion."""
    _check_count(k, n)
    alpha = 1.0 - confidence
    lower = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lower, upper


def _check_count(k: int, n: int) -> None:
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")


def epsilon_from_error_rates(fpr: float, fnr: float, delta: float) -> float:
    """The smallest epsilon that (FPR, FNR) of one membership test are compatible with.

    ``max(log((1 - delta - fnr) / fpr), log((1 - delta - fpr) / fnr), 0)``: the two DP
    inequalities solved for epsilon. Given upper confidence bounds on both rates it is a lower
    confidence bound on epsilon; given the observed rates, a point estimate. Infinite when a
    rate is 0 and the other is below ``1 - delta``.
    """
    best = 0.0
    for a, b in ((fpr, fnr), (fnr, fpr)):
        numerator = 1.0 - delta - b
        if numerator <= 0:
            continue
        best = max(best, math.inf if a <= 0 else math.log(numerator / a))
    return best


@dataclass(frozen=True)
class ThresholdBound:
    """The multi-run bound at one threshold.

    Attributes
    ----------
    threshold : float
        Scores at or above it (``direction=1``), or at or below it (``direction=-1``), are
        guessed "in" (trained with the canary).
    direction : int
        1 or -1.
    epsilon_lower : float
        Lower confidence bound on epsilon.
    epsilon_point : float
        The same formula at the observed rates (no confidence interval; not a bound).
    fpr, fnr : float
        Observed error rates on the evaluation runs.
    fpr_upper, fnr_upper : float
        Their one-sided Clopper-Pearson upper bounds (each at level ``1 - alpha / 2``).
    n_in, n_out : int
        Evaluation runs trained with and without the canary.
    """

    threshold: float
    direction: int
    epsilon_lower: float
    epsilon_point: float
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    n_in: int
    n_out: int


def _bound_at(threshold, direction, in_scores, out_scores, delta, alpha) -> ThresholdBound:
    n_in, n_out = in_scores.size, out_scores.size
    false_pos = int(np.sum(direction * out_scores >= direction * threshold))
    false_neg = int(np.sum(direction * in_scores < direction * threshold))
    fpr_ub = clopper_pearson_upper(false_pos, n_out, alpha / 2)
    fnr_ub = clopper_pearson_upper(false_neg, n_in, alpha / 2)
    return ThresholdBound(
        threshold=float(threshold),
        direction=direction,
        epsilon_lower=min(epsilon_from_error_rates(fpr_ub, fnr_ub, delta), EPSILON_SEARCH_MAX),
        epsilon_point=epsilon_from_error_rates(false_pos / n_out, false_neg / n_in, delta),
        fpr=false_pos / n_out,
        fnr=false_neg / n_in,
        fpr_upper=fpr_ub,
        fnr_upper=fnr_ub,
        n_in=n_in,
        n_out=n_out,
    )


def _best_test(in_scores, out_scores, delta, alpha) -> tuple[float, int]:
    """``(threshold, direction)`` with the largest lower bound (then point estimate) on these
    scores, over every distinct score as threshold and both directions; vectorised."""
    pooled = np.unique(np.concatenate([in_scores, out_scores]))
    n_in, n_out = in_scores.size, out_scores.size
    in_sorted, out_sorted = np.sort(in_scores), np.sort(out_scores)
    # direction 1: "in" when score >= t; direction -1: "in" when score <= t.
    out_ge = n_out - np.searchsorted(out_sorted, pooled, side="left")
    in_lt = np.searchsorted(in_sorted, pooled, side="left")
    out_le = np.searchsorted(out_sorted, pooled, side="right")
    in_gt = n_in - np.searchsorted(in_sorted, pooled, side="right")
    best, best_key = (float(pooled[0]), 1), (-1.0, -1.0)
    for direction, false_pos, false_neg in ((1, out_ge, in_lt), (-1, out_le, in_gt)):
        fpr_ub = _cp_upper_array(false_pos, n_out, alpha / 2)
        fnr_ub = _cp_upper_array(false_neg, n_in, alpha / 2)
        lower = _epsilon_array(fpr_ub, fnr_ub, delta)
        point = _epsilon_array(false_pos / n_out, false_neg / n_in, delta)
        keys = np.minimum(lower, EPSILON_SEARCH_MAX) * 1e6 + np.minimum(point, 1e5)
        i = int(np.argmax(keys))
        key = (float(min(lower[i], EPSILON_SEARCH_MAX)), float(point[i]))
        if key > best_key:
            best, best_key = (float(pooled[i]), direction), key
    return best


def _cp_upper_array(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    upper = np.ones(k.shape)
    below = k < n
    upper[below] = stats.beta.ppf(1.0 - alpha, k[below] + 1, n - k[below])
    return upper


def _epsilon_array(a: np.ndarray, b: np.ndarray, delta: float) -> np.ndarray:
    """:func:`epsilon_from_error_rates` elementwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.zeros(np.broadcast(a, b).shape)
        for x, y in ((a, b), (b, a)):
            numerator = 1.0 - delta - y
            value = np.where(x > 0, np.log(np.maximum(numerator, 1e-300) / x), np.inf)
            out = np.maximum(out, np.where(numerator > 0, value, 0.0))
    return out


def multi_run_epsilon_lower_bound(
    in_scores: Sequence[float],
    out_scores: Sequence[float],
    delta: float,
    confidence: float = 0.95,
    selection_fraction: float = 0.3,
    rng: np.random.Generator | int | None = None,
) -> tuple[ThresholdBound, ThresholdBound]:
    """Epsilon lower bound from canary scores of models trained with and without the canary.

    The runs of each side are shuffled and split: a test (a threshold, and whether high or low
    scores mean "in") is chosen on the first ``selection_fraction`` of them (the one with the
    largest bound there) and the bound is computed on the rest, where the test is a fixed,
    independent choice. Members normally score high; low scores can mean "in" when a broken
    mechanism overshoots on the canary. The two
    Clopper-Pearson upper bounds are each at level ``1 - alpha / 2`` (``alpha = 1 -
    confidence``), so they hold together with probability at least ``confidence`` (union
    bound), and so does the reported lower bound when the mechanism is (epsilon, delta)-DP.

    Parameters
    ----------
    in_scores, out_scores : sequence of float
        The canary's score under each model trained with (``in``) and without (``out``) it;
        higher means "more likely trained with it". Non-finite scores are allowed (``inf``
        sorts above every threshold); NaN is refused.
    delta : float
        The delta at which epsilon is bounded.
    confidence : float, default=0.95
        Probability that the bound holds when the mechanism is (epsilon, delta)-DP.
    selection_fraction : float in (0, 1), default=0.3
        Share of the runs of each side used only to choose the threshold.
    rng : numpy Generator, int or None
        Shuffles the runs before the split.

    Returns
    -------
    bound : ThresholdBound
        The bound on the evaluation runs at the selected threshold.
    selection : ThresholdBound
        What the selection runs gave at that threshold (for diagnostics only: it was chosen
        on them, so its ``epsilon_lower`` is optimistic).
    """
    in_scores = np.asarray(in_scores, dtype=np.float64).ravel()
    out_scores = np.asarray(out_scores, dtype=np.float64).ravel()
    if np.isnan(in_scores).any() or np.isnan(out_scores).any():
        raise ValueError("canary scores contain NaN")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not 0.0 < selection_fraction < 1.0:
        raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    rng = np.random.default_rng(rng)
    splits = []
    for scores in (in_scores, out_scores):
        n_select = int(round(selection_fraction * scores.size))
        if n_select < 1 or scores.size - n_select < 1:
            raise ValueError(
                f"too few runs ({scores.size} on one side) to split them into threshold "
                f"selection and evaluation with selection_fraction={selection_fraction}"
            )
        shuffled = rng.permutation(scores)
        splits.append((shuffled[:n_select], shuffled[n_select:]))
    (in_select, in_eval), (out_select, out_eval) = splits
    alpha = 1.0 - confidence
    threshold, direction = _best_test(in_select, out_select, delta, alpha)
    selection = _bound_at(threshold, direction, in_select, out_select, delta, alpha)
    bound = _bound_at(selection.threshold, selection.direction, in_eval, out_eval, delta, alpha)
    return bound, selection


def one_run_p_value(
    n_canaries: int, n_guesses: int, n_correct: int, epsilon: float, delta: float
) -> float:
    """Steinke, Nasr & Jagielski's bound on ``P[W >= n_correct]`` under (epsilon, delta)-DP.

    Parameters
    ----------
    n_canaries : int
        ``m``, the number of canaries, each included independently with probability 1/2.
    n_guesses : int
        ``r``, the number of guesses made (abstentions excluded), fixed in advance.
    n_correct : int
        ``v``, the number of correct guesses observed.
    epsilon, delta : float
        The privacy of the null hypothesis.

    Returns
    -------
    p : float
        ``P[Bin(r, q) >= v] + 2 m delta max_{1<=i<=v} P[v - i <= Bin(r, q) < v] / i`` with
        ``q = e^epsilon / (1 + e^epsilon)``, capped at 1.
    """
    m, r, v = int(n_canaries), int(n_guesses), int(n_correct)
    if not 0 <= v <= r <= m:
        raise ValueError(f"need 0 <= n_correct <= n_guesses <= n_canaries, got {v}, {r}, {m}")
    if epsilon < 0 or not 0 <= delta <= 1:
        raise ValueError(f"need epsilon >= 0 and delta in [0, 1], got {epsilon}, {delta}")
    if v == 0:
        return 1.0
    q = float(stats.logistic.cdf(epsilon))  # e^eps / (1 + e^eps), without overflow
    tail = float(stats.binom.sf(v - 1, r, q))
    if delta == 0:
        return min(tail, 1.0)
    # P[v - i <= Bin < v] for i = 1..v: cumulative sums of the pmf at v-1, v-2, ..., 0.
    pmf = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)
    windows = np.cumsum(pmf) / np.arange(1, v + 1)
    return min(tail + 2.0 * m * delta * float(windows.max()), 1.0)


def one_run_epsilon_lower_bound(
    n_canaries: int, n_guesses: int, n_correct: int, delta: float, confidence: float = 0.95
) -> float:
    """The largest epsilon that ``n_correct`` of ``n_guesses`` correct guesses rule out.

    The epsilon at which :func:`one_run_p_value` reaches ``1 - confidence``: every smaller
    epsilon is rejected at that level (0 when none is).

    Notes
    -----
    A larger epsilon makes correct guesses likelier, so the p-value grows with epsilon; the
    bound is the epsilon where it crosses ``1 - confidence``, found by root finding. When
    the data are extreme enough to rule out every epsilon up to ``EPSILON_SEARCH_MAX`` that
    value is returned.
    """
    alpha = 1.0 - confidence
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")

    def gap(eps: float) -> float:
        return one_run_p_value(n_canaries, n_guesses, n_correct, eps, delta) - alpha

    if gap(0.0) >= 0:
        return 0.0
    if gap(EPSILON_SEARCH_MAX) < 0:
        return EPSILON_SEARCH_MAX
    return float(brentq(gap, 0.0, EPSILON_SEARCH_MAX, xtol=1e-6))
