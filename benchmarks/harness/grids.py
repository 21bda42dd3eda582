"""Fitting helpers the study scripts share: scores over seeds and splits, and rows of
configurations with their paired differences to a baseline."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from .tables import paired_cell

DELTA = 1e-5


def privacy(eps: float, delta: float = DELTA) -> tuple[float, float]:
    """``(eps, delta)``, or ``(inf, 0)`` without privacy."""
    return (eps, delta) if math.isfinite(eps) else (math.inf, 0.0)


def scores(estimator, datas, eps: float, seeds, **params) -> list[float]:
    """Test scores of ``estimator(privacy, random_state=seed, **params)`` for every split in
    ``datas`` (one data set or a list of its splits) and seed, warnings silenced; NaN for a fit
    that diverged (FloatingPointError)."""
    out = []
    for split in datas if isinstance(datas, list) else [datas]:
        for seed in seeds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    model = estimator(privacy=privacy(eps), random_state=seed, **params).fit(
                        split.X_train, split.y_train)
                except FloatingPointError:
                    out.append(float("nan"))
                    continue
                out.append(float(model.score(split.X_test, split.y_test)))
    return out


def mean_score(estimator, datas, eps: float, seeds, **params) -> float:
    values = scores(estimator, datas, eps, seeds, **params)
    return float(np.mean(values)) if values else float("nan")


def paired_rows(estimator, data, configurations, epsilons, seeds, *, tag: str = "",
                seconds: bool = False, check_privacy: bool = True) -> list[list[str]]:
    """One row per ``(label, parameters)`` of ``configurations``: ``mean ± std`` over seeds at
    each epsilon and, after the first row (the baseline), the mean paired difference to it in
    brackets; with ``seconds``, the mean seconds per fit last."""
    X_train, X_test, y_train, y_test = data
    seeds = list(seeds)
    results = {(label, eps): [] for label, _ in configurations for eps in epsilons}
    times = {label: [] for label, _ in configurations}
    start = time.perf_counter()
    for eps in epsilons:
        for label, params in configurations:
            for seed in seeds:
                est = estimator(privacy=privacy(eps), random_state=seed, **params)
                tic = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X_train, y_train)
                times[label].append(time.perf_counter() - tic)
                if check_privacy and math.isfinite(eps):
                    assert est.privacy_spent_[0] <= eps, (label, eps, est.privacy_spent_)
                results[label, eps].append(est.score(X_test, y_test))
        print(f"({tag} eps={eps:g} done after {time.perf_counter() - start:.0f} s)", flush=True)
    base = configurations[0][0]
    rows = []
    for label, _ in configurations:
        row = [label, *(paired_cell(results[label, eps],
                                    None if label == base else results[base, eps])
                        for eps in epsilons)]
        if seconds:
            row.append(f"{np.mean(times[label]):.1f}")
        rows.append(row)
    return rows
