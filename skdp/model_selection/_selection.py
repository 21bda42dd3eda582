"""What a private search releases from its trials: the best one (the selection), and, when every
candidate ran once and the plan composed them all, the table of their noisy scores.

Everything here is post-processing of released values (the noisy scores, the public number of
validation rows): it spends nothing. The trials' other models are never released.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._utils.validation import warn_user
from ._execution import TrialOutcome

__all__ = ["Selection", "results_table", "select_best", "warn_if_scores_saturated"]


@dataclass(frozen=True)
class Selection:
    """The selected candidate, its noisy validation score (a mean over the validation rows;
    NaN when no trial ran) and its trial's model (``None`` when no trial ran)."""

    params: dict
    score: float
    model: Any | None


def select_best(drawn: Sequence[dict], outcomes: Sequence[TrialOutcome], n_validation: int,
                fallback: dict, refit: bool) -> Selection:
    """The trial with the best noisy score; with no trial (Poisson drew none), ``fallback``, a
    candidate drawn with public coins, since the selection released nothing."""
    if outcomes:
        scores = np.array([score for score, _ in outcomes])
        winner = int(np.argmax(scores))
        return Selection(dict(drawn[winner]), float(scores[winner]) / n_validation,
                         outcomes[winner][1])
    warn_user(
        "the Poisson number of trials was 0 (the selection released nothing); "
        + ("refitting a candidate drawn at random" if refit else
           "no model is released: use refit=True or another n_trials_distribution"),
        RuntimeWarning,
    )
    return Selection(dict(fallback), np.nan, None)


def warn_if_scores_saturated(name: str, best_score: float, score_clip: float,
                             score_noise_multiplier: float, n_validation: int) -> None:
    """Warn when even the best (noisy, released) regression score is about ``-score_clip``:
    nearly every validation row's squared error was clipped, so the scores could not tell the
    candidates apart (y in units far from 1, say prices in dollars)."""
    noise = score_noise_multiplier * score_clip / n_validation  # std of the released mean
    if best_score > -0.9 * score_clip + 2.0 * noise:
        return
    warn_user(
        f"{name}: even the best validation score ({best_score:.4g}) "
        f"is about -score_clip (-{score_clip:g}): nearly every row's squared error was clipped, "
        "so the search could not tell the candidates apart and its choice is close to "
        "random. score_clip is in squared units of y: pass a public bound on a row's "
        "squared error, e.g. score_clip=((high - low) / 2)**2 from the targets' "
        "documented range, or put y on a roughly unit scale.",
        UserWarning,
    )


def results_table(drawn: Sequence[dict], outcomes: Sequence[TrialOutcome],
                  n_validation: int) -> dict[str, Any]:
    """``cv_results_`` of an exhaustive search: every candidate, in grid order, and its noisy
    validation score (each covered by the composition the search was charged)."""
    return {
        "params": [dict(c) for c in drawn],
        "noisy_validation_score": np.array([score for score, _ in outcomes]) / n_validation,
    }
