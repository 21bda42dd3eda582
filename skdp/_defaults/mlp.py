"""The MLPs' 'auto' rules: the step size (``learning_rate_init='auto'``) and the number of
epochs (``max_iter='auto'``). Public functions of the calibrated noise and the batch size."""

from __future__ import annotations

from dataclasses import dataclass

from .registry import Rule, register

__all__ = ["MLP_CLASSIFIER", "MLP_REGRESSOR", "NON_PRIVATE_EPOCHS", "PRIVATE_EPOCHS", "MLPSteps"]


@dataclass(frozen=True)
class MLPSteps:
    """``learning_rate_init='auto'`` of one MLP: the step of a private fit (on clipped
    gradients, most of them at the bound: a normalised-gradient step), shrunk as
    ``private / (1 + damping z / b)`` with the calibrated noise per coordinate of a mean
    gradient (0: not damped), and the step of a non-private fit (raw gradients)."""

    private: float
    non_private: float
    damping: float


#: Steps measured over eleven data sets; the damping over eight classification sets (smallest
#: mean gap to each cell's best step).
MLP_CLASSIFIER = MLPSteps(private=2.0, non_private=0.5, damping=120.0)
#: The regressor's private step is damped only when its targets are on a public scale (found by
#: max_row_norm='auto', or target_bound): on targets as given the output bias must travel to
#: their centre, which a damped step does not reach (diabetes at epsilon 1: R^2 -4.2 against
#: -0.04 undamped).
MLP_REGRESSOR = MLPSteps(private=0.5, non_private=0.125, damping=80.0)
#: max_iter='auto': 20 epochs of a private fit; 100 without privacy, where nothing but
#: iterations limits a fit (20 left DPMLPRegressor 0.01-0.02 R^2 short of scikit-learn's
#: MLPRegressor on diamonds, rand_hie and the held-out CPS1988).
PRIVATE_EPOCHS = 20
NON_PRIVATE_EPOCHS = 100

register(Rule(
    "mlp.learning_rate_init", "learning_rate_init='auto'", ("DPMLPClassifier", "DPMLPRegressor"),
    "private: private_step / (1 + damping z / b) (z / b the calibrated noise per coordinate of "
    "a mean gradient; the regressor damps only on a public target scale); without privacy: "
    "the non-private step.",
    {"DPMLPClassifier": MLP_CLASSIFIER, "DPMLPRegressor": MLP_REGRESSOR},
    "benchmarks/tune_mlp_defaults.py and bench_mlp_defaults.py (steps; results/mlp_tuning.json, "
    "results/mlp_defaults.json); "
    "benchmarks/tune_user_scale_damping.py --model mlp / mlp_regressor (damping; "
    "results/mlp_step.json, results/mlp_regressor_step.json)",
))
register(Rule(
    "mlp.max_iter", "max_iter='auto'", ("DPMLPClassifier", "DPMLPRegressor"),
    "PRIVATE_EPOCHS epochs with privacy, NON_PRIVATE_EPOCHS without.",
    {"PRIVATE_EPOCHS": PRIVATE_EPOCHS, "NON_PRIVATE_EPOCHS": NON_PRIVATE_EPOCHS},
    "benchmarks/tune_mlp_defaults.py (private; results/mlp_tuning.json); "
    "benchmarks/bench_mlp_epochs.py (non-private; results/mlp_epochs.json)",
))
