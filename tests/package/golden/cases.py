"""Golden fits: a few dozen seeded fits whose released numbers and reports must not change
when the code is reorganised (the redesign of issue 24 kept behaviour bit for bit).

Each case returns a flat summary: fitted parameters, ``privacy_spent_``, the noise
multiplier, iterations and the privacy report's text. ``python -m tests.package.golden.cases``
records them in ``tests/package/golden/fits.json``; ``tests/package/test_golden.py`` replays them
and compares.
Every fit is seeded and runs on one torch thread, so the numbers are reproducible on a machine.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression

GOLDEN_PATH = Path(__file__).with_name("fits.json")

CASES: dict[str, Callable[[], dict]] = {}


def case(function: Callable[[], dict]) -> Callable[[], dict]:
    CASES[function.__name__] = function
    return function


def _classification(n=1500, d=8, classes=2, seed=0):
    X, y = make_classification(
        n_samples=n, n_features=d, n_informative=min(d, 5), n_classes=classes,
        random_state=seed,
    )
    return X, y


def _regression(n=1500, d=6, seed=0, targets=1):
    X, y = make_regression(n_samples=n, n_features=d, noise=5.0, n_targets=targets,
                           random_state=seed)
    return X, y / 50.0


def _floats(values) -> list:
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def _summary(estimator, **extra) -> dict:
    out: dict = {}
    for name in ("coef_", "intercept_"):
        if hasattr(estimator, name):
            out[name] = _floats(getattr(estimator, name))
    if hasattr(estimator, "coefs_"):
        out["coefs_"] = [_floats(W) for W in estimator.coefs_]
        out["intercepts_"] = [_floats(b) for b in estimator.intercepts_]
    for name in ("privacy_spent_", "noise_multiplier_", "n_iter_", "n_steps_", "batch_size_",
                 "learning_rate_", "row_norm_bound_", "adaptive_lambda_"):
        if hasattr(estimator, name):
            value = getattr(estimator, name)
            out[name] = _floats(value) if np.ndim(value) else float(value)
    if hasattr(estimator, "dp_event_"):
        out["dp_event_"] = repr(estimator.dp_event_)
    if hasattr(estimator, "privacy_report"):
        out["report"] = estimator.privacy_report()
    out.update(extra)
    return out


# --- the linear models: every optimizer x accountant ------------------------------------------
def _logistic(**params):
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification()
    params.setdefault("max_iter", 3)
    return _summary(DPLogisticRegression(random_state=0, **params).fit(X, y))


def _ridge(**params):
    from skdp.linear_model import DPRidge

    X, y = _regression()
    params.setdefault("max_iter", 3)
    return _summary(DPRidge(random_state=0, **params).fit(X, y))


for _optimizer in ("noisy_sgd", "adp_sgd", "adaclip", "diff2"):
    for _accountant in ("pld", "rdp"):
        for _name, _fit in (("logistic", _logistic), ("ridge", _ridge)):
            def _make(fit=_fit, optimizer=_optimizer, accountant=_accountant):
                return lambda: fit(optimizer=optimizer, accountant=accountant)

            CASES[f"{_name}_{_optimizer}_{_accountant}"] = _make()


@case
def logistic_defaults():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification(n=3000)
    return _summary(DPLogisticRegression(random_state=1).fit(X, y))


@case
def logistic_defaults_eps4_multiclass():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification(n=3000, classes=3)
    return _summary(DPLogisticRegression(privacy=(4.0, 1e-5), random_state=1).fit(X, y))


@case
def logistic_scale_free():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification(n=3000)
    return _summary(DPLogisticRegression(max_row_norm="auto", random_state=2).fit(X * 7.0, y))


@case
def logistic_non_private():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification()
    return _summary(DPLogisticRegression(privacy=(math.inf, 0), random_state=0).fit(X, y))


@case
def logistic_last_iterate():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification()
    return _summary(DPLogisticRegression(
        accountant="last_iterate", projection_radius=2.0, max_row_norm=6.0, eta0=0.2,
        average=False, batch_size=32, max_iter=5, random_state=0).fit(X, y))


@case
def logistic_sparse():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification()
    X = sp.csr_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
    return _summary(DPLogisticRegression(max_iter=3, random_state=0).fit(X, y))


@case
def logistic_schedules():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification()
    return _summary(DPLogisticRegression(
        learning_rate="invscaling", noise_schedule="exp_decay", max_iter=4,
        random_state=0).fit(X, y))


@case
def logistic_adagrad_adp():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification()
    return _summary(DPLogisticRegression(
        optimizer="adp_sgd", learning_rate="adagrad_norm", max_iter=3,
        random_state=0).fit(X, y))


@case
def ridge_defaults():
    from skdp.linear_model import DPRidge

    X, y = _regression(n=3000)
    return _summary(DPRidge(random_state=3).fit(X * 3.0 + 1.0, y + 5.0))


@case
def ridge_small_median_search():
    from skdp.linear_model import DPRidge

    X, y = _regression(n=500)
    return _summary(DPRidge(random_state=3).fit(X, y + 20.0))


@case
def ridge_target_bound_multi():
    from skdp.linear_model import DPRidge

    X, y = _regression(n=2000, targets=2)
    return _summary(DPRidge(target_bound=(-6.0, 6.0), max_iter=3, random_state=0).fit(X, y))


@case
def ridge_non_private():
    from skdp.linear_model import DPRidge

    X, y = _regression()
    return _summary(DPRidge(privacy=(math.inf, 0), random_state=0).fit(X, y))


@case
def ridge_last_iterate_strongly_convex():
    from skdp.linear_model import DPRidge

    X, y = _regression()
    return _summary(DPRidge(
        accountant="last_iterate", alpha=200.0, fit_intercept=False, projection_radius=1.0,
        max_row_norm=4.0, eta0=0.05, average=False, batch_size=64, max_iter=3,
        random_state=0).fit(X, y))


@case
def ridge_ssp_bounds():
    from skdp.linear_model import DPRidge

    X, y = _regression()
    return _summary(DPRidge(optimizer="ssp", max_row_norm=6.0, target_bound=3.0,
                            random_state=0).fit(X, y))


@case
def ridge_ssp_auto():
    from skdp.linear_model import DPRidge

    X, y = _regression(n=4000)
    return _summary(DPRidge(optimizer="ssp", accountant="rdp", random_state=0).fit(X, y))


@case
def ridge_ssp_non_private():
    from skdp.linear_model import DPRidge

    X, y = _regression()
    return _summary(DPRidge(optimizer="ssp", privacy=(math.inf, 0), random_state=0).fit(X, y))


# --- the MLPs -------------------------------------------------------------------------------
for _optimizer in ("noisy_sgd", "adp_sgd", "adaclip", "diff2"):
    def _make_mlp(optimizer=_optimizer):
        def run():
            from skdp.neural_network import DPMLPClassifier

            X, y = _classification(n=800, classes=3)
            return _summary(DPMLPClassifier(
                hidden_layer_sizes=(8,), optimizer=optimizer, max_iter=2,
                random_state=0).fit(X, y))
        return run

    CASES[f"mlp_classifier_{_optimizer}"] = _make_mlp()


@case
def mlp_classifier_defaults_rdp():
    from skdp.neural_network import DPMLPClassifier

    X, y = _classification(n=1000)
    return _summary(DPMLPClassifier(hidden_layer_sizes=(6,), accountant="rdp",
                                    random_state=4).fit(X, y))


@case
def mlp_regressor_defaults():
    from skdp.neural_network import DPMLPRegressor

    X, y = _regression(n=2000)
    return _summary(DPMLPRegressor(hidden_layer_sizes=(6,), max_iter=3,
                                   random_state=4).fit(X * 4.0, y + 3.0))


@case
def mlp_regressor_non_private():
    from skdp.neural_network import DPMLPRegressor

    X, y = _regression(n=600)
    return _summary(DPMLPRegressor(hidden_layer_sizes=(5,), privacy=(math.inf, 0), max_iter=3,
                                   random_state=4).fit(X, y))


# --- DP transformers, the private pipeline, the private search, a ledger session -------------
def _frame(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.normal(40, 12, n)
    income = rng.lognormal(10, 0.5, n)
    age[rng.random(n) < 0.05] = np.nan
    colour = rng.choice(["red", "green", "blue"], size=n, p=[0.5, 0.3, 0.2])
    y = ((age > 40) ^ (colour == "red")).astype(int)
    return pd.DataFrame({"age": age, "income": income, "colour": colour}), y


def _transformer_summary(transformer) -> dict:
    out = {}
    for name in ("mean_", "scale_", "statistics_", "bounds_", "max_row_norm_"):
        if hasattr(transformer, name):
            value = getattr(transformer, name)
            out[name] = _floats(value) if value is not None else None
    if hasattr(transformer, "categories_"):
        out["categories_"] = [list(map(str, c)) for c in transformer.categories_]
    out["privacy_spent_"] = _floats(transformer.privacy_spent_)
    out["dp_event_"] = repr(transformer.dp_event_)
    if hasattr(transformer, "privacy_report"):
        out["report"] = transformer.privacy_report()
    return out


@case
def scaler_alone():
    from skdp.preprocessing import DPStandardScaler

    X, _ = _frame()
    return _transformer_summary(DPStandardScaler(random_state=0).fit(X[["income"]]))


@case
def imputer_alone():
    from skdp.preprocessing import DPSimpleImputer

    X, _ = _frame()
    return _transformer_summary(DPSimpleImputer(random_state=0).fit(X[["age", "income"]]))


@case
def encoder_alone():
    from skdp.preprocessing import DPOneHotEncoder

    X, _ = _frame()
    return _transformer_summary(DPOneHotEncoder(random_state=0).fit(X[["colour"]]))


def _pipeline(final):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import DPOneHotEncoder, DPSimpleImputer, DPStandardScaler

    pre = ColumnTransformer([
        ("num", make_pipeline(DPSimpleImputer(), DPStandardScaler()), ["age", "income"]),
        ("cat", DPOneHotEncoder(), ["colour"]),
    ])
    return make_private_pipeline(pre, final, privacy=(1.0, 1e-5), random_state=0)


@case
def private_pipeline_logistic():
    from skdp.linear_model import DPLogisticRegression

    X, y = _frame()
    model = _pipeline(DPLogisticRegression(max_iter=5, random_state=0)).fit(X, y)
    out = _summary(model[-1])
    out["pipeline_spent"] = _floats(model.privacy_spent_)
    out["pipeline_event"] = repr(model.dp_event_)
    out["pipeline_report"] = model.privacy_report()
    return out


@case
def private_pipeline_ssp():
    from skdp.linear_model import DPRidge

    X, y = _frame(n=3000)
    target = X["income"].fillna(0).to_numpy() / 1e4 + y
    model = _pipeline(DPRidge(optimizer="ssp", random_state=0)).fit(X, target)
    out = _summary(model[-1])
    out["pipeline_spent"] = _floats(model.privacy_spent_)
    out["pipeline_report"] = model.privacy_report()
    return out


@case
def private_search():
    from skdp.linear_model import DPLogisticRegression
    from skdp.model_selection import DPGridSearchCV

    X, y = _classification(n=2000)
    search = DPGridSearchCV(
        DPLogisticRegression(max_iter=3), {"C": [0.1, 1.0], "max_grad_norm": [0.5, 1.0]},
        privacy=(2.0, 1e-5), n_iter=3, random_state=0,
    ).fit(X, y)
    out = _summary(search.best_estimator_)
    out["best_params_"] = repr(sorted(search.best_params_.items()))
    out["best_score_"] = float(search.best_score_)
    out["search_spent"] = _floats(search.privacy_spent_)
    out["search_event"] = repr(search.dp_event_)
    out["search_report"] = search.privacy_report()
    return out


@case
def private_search_exhaustive():
    from skdp.linear_model import DPRidge
    from skdp.model_selection import DPGridSearchCV

    X, y = _regression(n=2000)
    search = DPGridSearchCV(
        DPRidge(max_iter=2), {"alpha": [0.1, 10.0]}, exhaustive=True,
        privacy=(2.0, 1e-5), random_state=0,
    ).fit(X, y)
    return {
        "best_params_": repr(sorted(search.best_params_.items())),
        "search_spent": _floats(search.privacy_spent_),
        "search_report": search.privacy_report(),
        "coef_": _floats(search.best_estimator_.coef_),
    }


@case
def ledger_session():
    from skdp import BudgetExceededError, PrivacyBudget
    from skdp.linear_model import DPLogisticRegression, DPRidge

    X, y = _classification()
    Xr, yr = _regression()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.skdp"
        budget = PrivacyBudget(epsilon=2.0, delta=1e-5, path=path)
        DPLogisticRegression(privacy=(0.8, 1e-6), max_iter=2, budget=budget,
                             random_state=0).fit(X, y)
        with budget:
            DPRidge(privacy=(0.5, 1e-6), max_iter=2, random_state=0).fit(Xr, yr)
        refused = ""
        for _ in range(3):  # spend until the ledger refuses
            try:
                DPRidge(privacy=(1.99, 1e-6), max_iter=2, budget=budget,
                        random_state=0).fit(Xr, yr)
            except BudgetExceededError as error:
                refused = str(error).replace(str(path), "<ledger>")
                break
        reopened = PrivacyBudget(epsilon=2.0, delta=1e-5, path=path)
        return {
            "spent": _floats(budget.spent()),
            "reopened_spent": _floats(reopened.spent()),
            "history": [(r.estimator, r.mechanism) for r in reopened.history()],
            "refused": refused,
            # the view without what changes from run to run (the temporary path, the times)
            "html": re.sub(r"\d{4}-\d\d-\d\dT[0-9:.+]+|/tmp\S*?ledger\.skdp", "",
                           budget._repr_html_()),
        }


def run_case(name: str) -> dict:
    """Run one golden case on one torch thread (reproducible reductions)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return json.loads(json.dumps(CASES[name]()))
    finally:
        torch.set_num_threads(threads)


def record() -> None:
    results = {name: run_case(name) for name in CASES}
    GOLDEN_PATH.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(results)} golden fits in {GOLDEN_PATH}")


if __name__ == "__main__":
    record()
