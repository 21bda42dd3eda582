"""The scale search's defaults (``max_row_norm='auto'``): how much of the budget it may take,
which quantiles it looks for, how a range found further in is widened, and the median search
where no scale can be found. Public constants; the search itself is :mod:`skdp._scale`."""

from __future__ import annotations

from .registry import Rule, register

__all__ = [
    "CENTRE_MARGIN",
    "ROW_MEDIAN_NORM",
    "ROW_QUANTILE",
    "SCALE_SHARES",
    "TARGET_QUANTILES",
    "WIDEN_TO",
]

#: Fractions of the fit's Gaussian-DP mu^2 the search may get, smallest first: the first one
#: at which the search can locate its quantiles (a public function of n, the number of columns
#: and the privacy) is used. At 0.05 the training's noise grows by 1 / sqrt(0.95) - 1 = 2.6%, and
#: the search locates a quantile within ~0.3% of the rows at 30,000 rows and epsilon 1; small data
#: sets need a larger share, and without a scale their fit is useless anyway.
SCALE_SHARES = (0.05, 0.15, 0.3, 0.5)
#: Rows above this quantile of the row norms are scaled down to it: a few rows lose a little
#: length, and the bound stays tight for the rest (a loose bound inflates the noise).
ROW_QUANTILE = 0.95
#: Regression: the targets are centred on the middle of these quantiles and divided by half their
#: distance, then clipped to [-1, 1] (so every residual has a public bound); the row bound is
#: then the upper one of the row norms. One pair for every column keeps the search cheap.
TARGET_QUANTILES = (0.02, 0.98)
#: Where noise lets the search locate only quantiles further in than ``TARGET_QUANTILES``
#: (small n or epsilon: down to the quartiles), each column's range ``[lo, hi]`` found at
#: ``(m, 1 - m)`` is widened, as post-processing, to where a normal shape through those two
#: quantiles puts ``(WIDEN_TO, 1 - WIDEN_TO)``: centre kept, half-width times
#: ``Phi^-1(1 - WIDEN_TO) / Phi^-1(1 - m)``; the row bound is the widened upper end of the row
#: norms. Clipping targets to their interquartile range biased every fit towards the centre
#: (CPS1988 wages at epsilon 0.1: R^2 0.35 against 0.46 with a public range). 0.05 was chosen
#: by leaving one regression set out (benchmarks, "Widening a scale found at inner
#: quantiles"); the ranges are never narrowed.
WIDEN_TO = 0.05
#: Regression where no share lets the search find the targets' range: the targets' median
#: alone (one quantile of fewer columns, and a central one) needs about a quarter of the rows.
#: The fit then centres the targets on it and trains on their spread as given: otherwise the
#: intercept must travel from 0 to the targets' centre, which a clipped, noisy fit does not do
#: (diabetes at epsilon 1: R^2 -2.7, ames at 0.1: -4.4; centred: about 0). The median counts as
#: found when the search's margin is at most this: its rank is then off by at most
#: ``margin n / 1.5``, within the 0.1/0.9-quantiles with probability 0.95.
CENTRE_MARGIN = 0.6
#: Where the median search also finds the row norms' median, rows are divided by it over this
#: (not clipped: the gradients are), so that a typical row has this norm, the one the step rule
#: for rows as given was tuned on (CPS1988's rows have norm ~2.4 and fit as given as well as
#: with a public scale; ames' ~8 and diabetes' ~0.2 did not). Rows clipped to twice the median
#: and divided by that (typical norm 1/2) trained 9x slower there: held-out CPS1988 on 400 rows
#: at epsilon 1, R^2 0.25 against 0.41 (benchmarks).
ROW_MEDIAN_NORM = 2.0


_SCALE_FREE = ("DPLogisticRegression", "DPRidge", "DPMLPRegressor")
register(Rule(
    "scale.search", "max_row_norm='auto'", _SCALE_FREE,
    "one Gaussian mechanism composed with the training: a noisy binary search for the "
    "ROW_QUANTILE-quantile of the row norms (and, for regression, the TARGET_QUANTILES of each "
    "target) with the first share of the fit's Gaussian-DP mu^2 in SCALE_SHARES at which the "
    "quantiles can be located (a public function of n, the columns and the privacy); rows are "
    "scaled down to the bound and divided by it, targets centred, divided by their half-range "
    "and clipped to [-1, 1].",
    {"SCALE_SHARES": SCALE_SHARES, "ROW_QUANTILE": ROW_QUANTILE,
     "TARGET_QUANTILES": TARGET_QUANTILES},
    "benchmarks/bench_defaults.py (the scale-free defaults study; results/defaults_study.json)",
))
register(Rule(
    "scale.widen", "max_row_norm='auto' (ranges found at inner quantiles)", _SCALE_FREE,
    "a range [lo, hi] found at the (m, 1 - m) quantiles is widened, as post-processing, to "
    "where a normal shape through them puts (WIDEN_TO, 1 - WIDEN_TO); never narrowed.",
    {"WIDEN_TO": WIDEN_TO},
    "benchmarks/tune_widening.py (leave one regression set out; results/widening.json)",
))
register(Rule(
    "scale.median", "max_row_norm='auto' (too few rows for a scale)", ("DPRidge", "DPMLPRegressor"),
    "regression: search the targets' median (and the row norms' median where the noise allows) "
    "when its margin is at most CENTRE_MARGIN; targets are centred on it, rows divided by their "
    "median norm over ROW_MEDIAN_NORM.",
    {"CENTRE_MARGIN": CENTRE_MARGIN, "ROW_MEDIAN_NORM": ROW_MEDIAN_NORM},
    "benchmarks/bench_small_regression.py (CPS1988 subsamples held out, ames, diabetes; "
    "results/small_regression.json)",
))
