"""The optimizers' own hyperparameters (``optimizer_params``): their defaults, as the
optimizers' parameter classes define them, registered with where they were chosen."""

from __future__ import annotations

import dataclasses

from ..mechanisms._adaclip import AdaClipParams
from ..mechanisms._diff2 import Diff2Params
from ..mechanisms._ssp.solve import SSPParams
from .registry import Rule, register

__all__: list[str] = []

_ESTIMATORS = ("DPLogisticRegression", "DPRidge", "DPMLPClassifier", "DPMLPRegressor")


def _defaults(params_class) -> dict:
    return {field.name: field.default for field in dataclasses.fields(params_class)}


register(Rule(
    "optimizer.adaclip", "optimizer='adaclip', optimizer_params=None", _ESTIMATORS,
    "gamma is the target mean squared norm of the transformed gradients (smaller: rarer "
    "clipping, more noise; the paper's 1 collapsed the scale on its own synthetic problem, 0.5 "
    "on Adult at small noise); beta1 and beta2 the decays of the centre and the variance "
    "estimates; variance_floor and variance_cap bound each variance estimate, in units of "
    "max_grad_norm^2 / n_params.",
    _defaults(AdaClipParams),
    "benchmarks/bench_adaclip.py (results/adaclip.json); docs/specs/adaclip.md",
))
register(Rule(
    "optimizer.diff2", "optimizer='diff2', optimizer_params=None", _ESTIMATORS,
    "a restart every restart_period rounds; restarts get budget_split of the sum of "
    "1 / sigma_r^2; difference rounds clip to diff_clip times the distance between iterates; "
    "n_clients simulated clients (1: none).",
    _defaults(Diff2Params),
    "benchmarks/bench_diff2.py, benchmarks/tune_diff2_rounds.py (results/diff2_rounds.json); "
    "docs/specs/diff2.md",
))
register(Rule(
    "optimizer.ssp", "DPRidge(optimizer='ssp', optimizer_params=None)", ("DPRidge",),
    "AdaSSP's rho (the failure probability of the eigenvalue bound), budget_split 'equal' (the "
    "same noise multiplier for the three releases), symmetric_noise 'goe', and eigenvalues of "
    "the noisy X^T X below eigen_floor x lambda raised to it (None: lambda added to all, the "
    "paper's rule).",
    _defaults(SSPParams),
    "benchmarks/bench_ssp_floor.py (eigen_floor; results/ssp_floor.json); docs/specs/adassp.md "
    "(rho, split)",
))
