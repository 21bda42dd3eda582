"""The DP transformers' and the private pipeline's defaults: how a step splits its budget
among its statistics, the partition-selection delta, and the pipeline's split rule."""

from __future__ import annotations

from .registry import Rule, register

__all__ = [
    "BOUNDS_SHARE",
    "LAST_FEASIBLE_TAIL",
    "MIN_COUNT_IN_SIGMAS",
    "PARTITION_SELECTION_DELTA_SHARE",
    "PREPROCESSING_SHARE",
]

#: Share of a standalone step's delta given to partition selection's (0, p) part.
PARTITION_SELECTION_DELTA_SHARE = 0.1
#: Where bounds are found privately, the bounds search gets this share of a scaler's or a mean
#: imputer's Gaussian-DP mu^2, the moments the rest: the tails need more rows than the means.
BOUNDS_SHARE = 0.75
#: A column whose noisy observed count is below this many noise standard deviations is (nearly)
#: all missing: its noisy mean would be noise, so it is filled with the fallback.
MIN_COUNT_IN_SIGMAS = 3.0
#: Tail quantiles are raised (lowered) until the search can locate them; past the quartiles the
#: "bounds" would cut half the data, and public bounds are the only good answer.
LAST_FEASIBLE_TAIL = 0.25
#: A private pipeline's DP preprocessing together gets this share of the Gaussian-DP mu^2 of
#: its (epsilon, delta') (the parameter's default). The preprocessing releases a few statistics
#: per column once, DP-SGD thousands of noisy gradients, so the model loses little (noise +14%
#: at (1, 1e-5), 1000 steps at rate 0.01, against +3.8% with 0.1); with 0.1 the bounds search
#: could not resolve the tails of 29 columns at 15,000 rows (RAND HIE: -0.025 R^2 at epsilon 1).
#: On all five raw tables 0.3 was at least as good as 0.1, and 0.5 worse than 0.3 on Ames.
PREPROCESSING_SHARE = 0.3

_TRANSFORMERS = ("DPStandardScaler", "DPSimpleImputer", "DPOneHotEncoder")
register(Rule(
    "preprocessing.partition_selection", "categories='auto', strategy='most_frequent'",
    ("DPOneHotEncoder", "DPSimpleImputer"),
    "partition selection's (0, p) part gets p = PARTITION_SELECTION_DELTA_SHARE * delta; the "
    "rest of the release is accounted at delta' = (delta - p) / (1 - p).",
    {"PARTITION_SELECTION_DELTA_SHARE": PARTITION_SELECTION_DELTA_SHARE},
    "docs/specs/dp_preprocessing.md, section 4.2",
))
register(Rule(
    "preprocessing.bounds_share", "bounds=None (found privately)",
    ("DPStandardScaler", "DPSimpleImputer"),
    "the bounds search gets BOUNDS_SHARE of the step's mu^2, the moments the rest; quantiles "
    "the noise cannot locate move inward, at most to LAST_FEASIBLE_TAIL (the quartiles); a "
    "mean imputer fills a column whose noisy observed count is below MIN_COUNT_IN_SIGMAS noise "
    "standard deviations with the public fallback.",
    {"BOUNDS_SHARE": BOUNDS_SHARE, "LAST_FEASIBLE_TAIL": LAST_FEASIBLE_TAIL,
     "MIN_COUNT_IN_SIGMAS": MIN_COUNT_IN_SIGMAS},
    "docs/specs/dp_preprocessing.md; benchmarks/bench_pipeline.py (four raw tables)",
))
register(Rule(
    "pipeline.split", "make_private_pipeline(..., preprocessing_share=0.3)",
    ("PrivatePipeline",),
    "all DP preprocessing together gets PREPROCESSING_SHARE of the Gaussian-DP mu^2 of "
    "(epsilon, delta'), split among the DP transformers by step_weights (equally by default); "
    "the model is calibrated so that preprocessing and training together meet the target.",
    {"PREPROCESSING_SHARE": PREPROCESSING_SHARE},
    "benchmarks/bench_pipeline.py (five raw tables; results/pipeline.json)",
))
