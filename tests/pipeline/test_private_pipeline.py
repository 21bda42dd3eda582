"""Private pipelines: one budget for preprocessing and model, refusals, scikit-learn glue."""

from __future__ import annotations

import math
import pickle
import warnings

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor, make_column_selector
from sklearn.decomposition import PCA
from sklearn.feature_extraction.text import HashingVectorizer, TfidfVectorizer
from sklearn.impute import KNNImputer, SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    OneHotEncoder,
    StandardScaler,
    TargetEncoder,
)

from skdp import PrivacyBudget, PrivacyWarning
from skdp._fit.allocation import _ATTRIBUTE
from skdp.accounting import epsilon_of
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.pipeline import NotPrivateError, PrivatePipeline, make_private_pipeline
from skdp.pipeline._layout import iter_dp_steps
from skdp.preprocessing import DPOneHotEncoder, DPSimpleImputer, DPStandardScaler

NUM, CAT = ["age", "income"], ["city", "job"]


@pytest.fixture(scope="module")
def raw():
    """A raw table as users bring it: unknown scales, string categories, missing values."""
    rng = np.random.default_rng(0)
    n = 8000
    X = pd.DataFrame({
        "age": rng.normal(45, 12, n),
        "income": rng.lognormal(10, 0.8, n),
        "city": rng.choice(["north", "south", "east", "west"], n),
        "job": rng.choice(["a", "b", "c", "d", "e", "rare"], n, p=[.3, .3, .2, .1, .0995, .0005]),
    })
    logit = (X["age"] - 45) / 12 + (X["city"] == "north") * 1.5 - (X["job"] == "a")
    y = (logit + rng.logistic(size=n) > 0).astype(int)
    X.loc[rng.random(n) < 0.05, "age"] = np.nan
    X.loc[rng.random(n) < 0.05, "city"] = None
    return X, y


def preprocessor():
    return ColumnTransformer([
        ("num", make_pipeline(DPSimpleImputer(), DPStandardScaler()), NUM),
        ("cat", DPOneHotEncoder(), CAT),
    ])


def sklearn_preprocessor():
    """scikit-learn's usual preprocessing of the same columns, which learns without DP."""
    return ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(), StandardScaler()), NUM),
        ("cat", OneHotEncoder(handle_unknown="ignore"), CAT),
    ])


@pytest.fixture(scope="module")
def fitted(raw):
    X, y = raw
    return make_private_pipeline(
        preprocessor(), DPLogisticRegression(), privacy=(1.0, 1e-5), random_state=0
    ).fit(X, y)


def test_the_issue_example_fits_privately_and_accurately(raw, fitted):
    X, y = raw
    epsilon, delta = fitted.privacy_spent_
    assert 0.99 <= epsilon <= 1.0 and delta == 1e-5
    assert fitted.extra_delta_ == pytest.approx(1e-6)
    assert fitted.score(X, y) > 0.7
    assert isinstance(fitted, PrivatePipeline)
    report = fitted.privacy_report()
    for path in ("columntransformer__num__dpsimpleimputer",
                 "columntransformer__num__dpstandardscaler", "columntransformer__cat",
                 "dplogisticregression"):
        assert path in report


def test_dp_event_reaccounts_to_at_most_the_reported_epsilon(fitted):
    p = fitted.extra_delta_
    net = (1e-5 - p) / (1 - p)
    assert epsilon_of(fitted.dp_event_, net, pld_interval=1e-5) <= fitted.privacy_spent_[0] + 1e-9


def test_composition_equals_dp_accounting_of_the_steps_events(fitted):
    steps = dict(iter_dp_steps(fitted, "", fitted=True))
    transformers = [s for p, s in steps.items() if p != "dplogisticregression"]
    model = steps["dplogisticregression"]
    # Gaussian DP: the steps' noise multipliers compose to the preprocessing's one.
    merged = sum(s.noise_multiplier_ ** -2 for s in transformers) ** -0.5
    assert fitted.dp_event_.events[0].noise_multiplier == pytest.approx(merged, rel=1e-12)
    assert fitted.dp_event_.events[1] == model.dp_event_
    # dp_accounting on the steps' own events, composed: the same epsilon (up to discretisation).
    composed = dp_accounting.ComposedDpEvent(
        [s.dp_event_ for s in transformers] + [model.dp_event_]
    )
    net = (1e-5 - fitted.extra_delta_) / (1 - fitted.extra_delta_)
    direct = epsilon_of(composed, net, pld_interval=1e-4)
    assert direct == pytest.approx(fitted.privacy_spent_[0], rel=2e-3)
    # The model alone proves less than the whole.
    assert model.privacy_spent_[0] < fitted.privacy_spent_[0]


def test_the_extra_delta_is_shared_by_the_selecting_steps(raw):
    X, y = raw
    pre = ColumnTransformer([
        ("num", DPStandardScaler(), ["income"]),
        ("cat", DPOneHotEncoder(), ["city"]),
        ("job", make_pipeline(DPSimpleImputer(strategy="most_frequent"),
                              OneHotEncoder(categories=[list("abcde")], handle_unknown="ignore",
                                            sparse_output=False)), ["job"]),
    ], sparse_threshold=0)
    pipe = make_private_pipeline(pre, DPLogisticRegression(), privacy=(1.0, 1e-5),
                                 random_state=0)
    steps = dict(iter_dp_steps(pipe.fit(X, y), "", fitted=True))
    assert steps["columntransformer__cat"].extra_delta_ == pytest.approx(5e-7)
    assert steps["columntransformer__job__dpsimpleimputer"].extra_delta_ == pytest.approx(5e-7)
    assert steps["columntransformer__num"].extra_delta_ == 0.0


def test_budget_is_charged_once_for_the_whole_pipeline(raw, tmp_path):
    X, y = raw
    budget = PrivacyBudget(3.0, 1e-5, path=tmp_path / "b.skdp")
    pipe = make_private_pipeline(preprocessor(), DPLogisticRegression(), privacy=(1.0, 1e-5),
                                 budget=budget, random_state=0).fit(X, y)
    history = budget.history()
    assert len(history) == 1 and history[0].estimator == "PrivatePipeline"
    assert history[0].epsilon == pytest.approx(pipe.privacy_spent_[0], rel=2e-3)
    assert budget.spent()[0] <= 1.0 + 1e-9


@pytest.mark.parametrize("case", ["nan_reaches_the_model", "inf_reaches_a_scaler",
                                  "nan_inside_a_final_pipeline"])
def test_input_the_steps_refuse_is_refused_before_the_budget_is_charged(raw, tmp_path, case):
    # A forgotten imputer used to surface only after the DP steps had released, with the
    # budget charged for a traceback.
    X, y = raw
    numeric = X[NUM]  # "age" has missing values
    fixed = numeric.fillna(45.0)
    if case == "nan_reaches_the_model":
        pipe = make_private_pipeline(DPStandardScaler(), DPLogisticRegression(),
                                     privacy=(1.0, 1e-5))
        match = "Input X contains NaN. DPLogisticRegression"
    elif case == "inf_reaches_a_scaler":
        numeric = numeric.fillna(np.inf)
        pipe = make_private_pipeline(FunctionTransformer(), DPStandardScaler(),
                                     DPLogisticRegression(), privacy=(1.0, 1e-5))
        match = "DPStandardScaler: X contains infinity"
    else:
        pipe = make_private_pipeline(
            DPStandardScaler(), make_pipeline(FunctionTransformer(), DPLogisticRegression()),
            privacy=(1.0, 1e-5))
        match = "Input X contains NaN"
    budget = PrivacyBudget(3.0, 1e-5, path=tmp_path / "b.skdp")
    pipe.set_params(budget=budget)
    with pytest.raises(ValueError, match=match):
        pipe.fit(numeric, y)
    assert budget.history() == [] and budget.spent()[0] == 0.0
    assert not hasattr(pipe.steps[0][1], "privacy_spent_")  # no step released anything
    # Once the input is fixed, the same pipeline charges and fits as usual.
    pipe.fit(fixed, y)
    assert len(budget.history()) == 1 and pipe.score(fixed, y) > 0.6


@pytest.mark.parametrize(
    "bad, replacement",
    [
        (StandardScaler(), "DPStandardScaler"),
        (MinMaxScaler(), "DPStandardScaler"),
        (OneHotEncoder(), "DPOneHotEncoder"),
        (SimpleImputer(), "DPSimpleImputer"),
        (KNNImputer(), "DPSimpleImputer"),
        (TargetEncoder(), "DPOneHotEncoder"),
        (PCA(), "learns from the data"),
    ],
)
def test_steps_that_learn_without_dp_are_refused_before_anything(raw, tmp_path, bad, replacement):
    X, y = raw
    budget = PrivacyBudget(3.0, 1e-5, path=tmp_path / "b.skdp")
    pre = ColumnTransformer([("num", bad, NUM), ("cat", DPOneHotEncoder(), CAT)])
    with pytest.raises(NotPrivateError, match=replacement):
        make_private_pipeline(pre, DPLogisticRegression(), budget=budget).fit(X, y)
    assert budget.history() == []


def test_a_step_without_dp_is_named_before_column_transformer_settings(raw):
    # scikit-learn's usual ColumnTransformer (its OneHotEncoder is sparse): the first error a
    # user sees names the step to replace, not the sparse_threshold its replacement settles.
    X, y = raw
    with pytest.raises(NotPrivateError, match="SimpleImputer"):
        make_private_pipeline(sklearn_preprocessor(), DPLogisticRegression()).fit(X, y)


def test_non_private_text_features_and_models_are_refused(raw):
    X, y = raw
    with pytest.raises(NotPrivateError, match="HashingVectorizer"):
        make_private_pipeline(TfidfVectorizer(), DPLogisticRegression()).fit(["a b"] * 10, y[:10])
    with pytest.raises(NotPrivateError, match="DPLogisticRegression"):
        make_private_pipeline(preprocessor(), LogisticRegression()).fit(X, y)


def test_data_independent_steps_are_free(raw):
    X, y = raw
    pre = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="constant", fill_value=0,
                                            keep_empty_features=True),
                              FunctionTransformer(np.log1p)), ["income"]),
        ("cat", OneHotEncoder(categories=[["north", "south", "east", "west"]],
                              handle_unknown="ignore"), ["city"]),
    ], sparse_threshold=0)
    pipe = make_private_pipeline(pre, DPLogisticRegression(), privacy=(1.0, 1e-5),
                                 random_state=0).fit(X, y)
    assert pipe.step_noise_multipliers_ == {} and pipe.extra_delta_ == 0.0
    assert "data-independent steps" in pipe.privacy_report()


def test_text_with_hashing_is_free():
    docs = ["good great fine", "bad awful poor", "great good", "poor bad"] * 50
    labels = np.array([1, 0, 1, 0] * 50)
    pipe = make_private_pipeline(HashingVectorizer(n_features=2**10), DPLogisticRegression(),
                                 privacy=(1.0, 1e-5), random_state=0).fit(docs, labels)
    assert pipe.privacy_spent_[0] <= 1.0


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: make_private_pipeline(DPStandardScaler(privacy=(0.3, 1e-5)),
                                       DPLogisticRegression()), "privacy is set once"),
        (lambda: make_private_pipeline(DPStandardScaler(), DPLogisticRegression(C=2.0,
                                       privacy=(2.0, 1e-5))), "privacy is set once"),
        (lambda: make_private_pipeline(
            DPStandardScaler(budget=PrivacyBudget(1.0, 1e-5)), DPLogisticRegression()),
         "own budget"),
        (lambda: make_private_pipeline(DPLogisticRegression(), DPLogisticRegression()),
         "not the final step"),
        (lambda: make_private_pipeline(
            DPStandardScaler(), DPLogisticRegression(accountant="last_iterate")),
         "last_iterate"),
        (lambda: make_private_pipeline(
            ColumnTransformer([("n", DPStandardScaler(), lambda X: ["age"])]),
            DPLogisticRegression()), "chosen by a function"),
        (lambda: make_private_pipeline(
            ColumnTransformer([("n", HashingVectorizer(), "city")]), DPLogisticRegression()),
         "sparse_threshold"),
        (lambda: make_private_pipeline(DPStandardScaler(), DPLogisticRegression(),
                                       step_weights={"nope": 2}), "step_weights"),
    ],
)
def test_settings_a_pipeline_cannot_account_are_refused(raw, make, match):
    X, y = raw
    with pytest.raises(ValueError, match=match):
        make().fit(X[NUM], y)


def test_shares_are_used_once_and_never_left_on_steps(raw):
    X, y = raw
    X = X[NUM].fillna(0)
    scaler = DPStandardScaler()
    pipe = make_private_pipeline(ColumnTransformer([("n", scaler, NUM)]), DPLogisticRegression())
    pipe.fit(X, y)
    for step in [scaler, *(s for _, s in iter_dp_steps(pipe, "", fitted=True))]:
        assert _ATTRIBUTE not in step.__dict__
    # A failing fit leaves no share behind either.
    with pytest.raises(ValueError):
        pipe.fit(X, np.full(len(X), 3))  # one class only
    assert _ATTRIBUTE not in scaler.__dict__
    # Fitted on its own afterwards, the scaler spends its own privacy.
    assert scaler.fit(X).privacy_spent_[0] == pytest.approx(1.0, rel=6e-3)


def test_pipeline_is_a_scikit_learn_pipeline(raw, fitted):
    X, y = raw
    assert fitted.get_params()["dplogisticregression__C"] == 1.0
    twin = clone(fitted)
    assert twin.get_params()["privacy"] == (1.0, 1e-5) and not hasattr(twin, "privacy_spent_")
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))
    assert fitted[-1].coef_.shape[1] == fitted[:-1].transform(X).shape[1]
    assert len(fitted.named_steps) == 2
    probabilities = fitted.predict_proba(X.iloc[:5])
    assert probabilities.shape == (5, 2)


def test_cross_val_score_fits_private_pipelines(raw):
    X, y = raw
    pipe = make_private_pipeline(preprocessor(), DPLogisticRegression(max_iter=5),
                                 privacy=(1.0, 1e-5), random_state=0)
    scores = cross_val_score(pipe, X, y, cv=2)
    assert np.all(scores > 0.6)


def test_non_private_reference(raw):
    X, y = raw
    pipe = make_private_pipeline(preprocessor(), DPLogisticRegression(),
                                 privacy=(float("inf"), 0)).fit(X, y)
    assert pipe.privacy_spent_ == (math.inf, 0.0)
    assert "NONE" in pipe.privacy_report()


def test_preprocessing_share_moves_noise_between_steps_and_model(raw):
    X, y = raw
    small = make_private_pipeline(preprocessor(), DPLogisticRegression(), preprocessing_share=0.05,
                                  random_state=0).fit(X, y)
    large = make_private_pipeline(preprocessor(), DPLogisticRegression(), preprocessing_share=0.3,
                                  random_state=0).fit(X, y)
    assert small[-1].noise_multiplier_ < large[-1].noise_multiplier_
    for path, z in small.step_noise_multipliers_.items():
        assert z > large.step_noise_multipliers_[path]


def test_step_weights_shift_the_preprocessing_split(raw):
    X, y = raw
    path = "columntransformer__num__dpstandardscaler"
    pipe = make_private_pipeline(preprocessor(), DPLogisticRegression(),
                                 step_weights={path: 4.0}, random_state=0).fit(X, y)
    z = pipe.step_noise_multipliers_
    assert z[path] == pytest.approx(z["columntransformer__cat"] / 2)


def test_preprocessing_only_pipeline_gets_the_whole_budget(raw):
    X, _ = raw
    pipe = make_private_pipeline(preprocessor(), privacy=(0.5, 1e-5), random_state=0).fit(X)
    assert 0.495 <= pipe.privacy_spent_[0] <= 0.5
    out = pipe.transform(X)
    assert out.shape[0] == len(X)


def test_regression_target_scaled_privately(raw):
    X, _ = raw
    rng = np.random.default_rng(3)
    target = 10 + 0.02 * np.nan_to_num(X["age"], nan=45) + rng.normal(0, 0.3, len(X))
    regressor = TransformedTargetRegressor(DPRidge(), transformer=DPStandardScaler(),
                                           check_inverse=False)
    pipe = make_private_pipeline(preprocessor(), regressor, privacy=(2.0, 1e-5),
                                 random_state=0).fit(X, target)
    steps = dict(iter_dp_steps(pipe, "", fitted=True))
    assert "transformedtargetregressor__transformer" in steps
    assert steps["transformedtargetregressor__transformer"].noise_multiplier_ > 0
    assert pipe.score(X, target) > 0.3
    assert pipe.privacy_spent_[0] <= 2.0
    with pytest.raises(ValueError, match="check_inverse"):
        make_private_pipeline(
            TransformedTargetRegressor(DPRidge(), transformer=DPStandardScaler())
        ).fit(X[NUM].fillna(0), target)


def test_feature_union_and_nested_pipelines(raw):
    X, y = raw
    union = FeatureUnion([
        ("scaled", make_pipeline(DPSimpleImputer(strategy="median"), DPStandardScaler())),
        ("indicator", DPSimpleImputer(strategy="constant", add_indicator=True)),
    ])
    pre = ColumnTransformer([("num", union, NUM), ("cat", DPOneHotEncoder(), CAT)])
    pipe = make_private_pipeline(pre, DPLogisticRegression(), random_state=0).fit(X, y)
    assert set(pipe.step_noise_multipliers_) == {
        "columntransformer__num__scaled__dpsimpleimputer",
        "columntransformer__num__scaled__dpstandardscaler",
        "columntransformer__cat",
    }
    assert pipe.privacy_spent_[0] <= 1.0


def test_column_selector_by_dtype_is_public(raw):
    X, y = raw
    pre = ColumnTransformer([
        ("num", make_pipeline(DPSimpleImputer(), DPStandardScaler()),
         make_column_selector(dtype_include="number")),
        ("cat", DPOneHotEncoder(), make_column_selector(dtype_exclude="number")),
    ])
    pipe = make_private_pipeline(pre, DPLogisticRegression(), random_state=0).fit(X, y)
    assert pipe.score(X, y) > 0.7


@pytest.mark.slow
def test_column_transformer_workers_receive_their_shares(raw):
    X, y = raw
    pre = preprocessor().set_params(n_jobs=2)
    pipe = make_private_pipeline(pre, DPLogisticRegression(), random_state=0).fit(X, y)
    reference = make_private_pipeline(preprocessor(), DPLogisticRegression(),
                                      random_state=0).fit(X, y)
    assert pipe.step_noise_multipliers_ == reference.step_noise_multipliers_
    np.testing.assert_allclose(pipe[-1].coef_, reference[-1].coef_)


def test_private_search_over_private_pipelines(raw, tmp_path):
    from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV

    X, y = raw
    budget = PrivacyBudget(4.0, 1e-5, path=tmp_path / "b.skdp")
    pipe = make_private_pipeline(preprocessor(), DPLogisticRegression(max_iter=3),
                                 random_state=0)
    space = {"dplogisticregression__C": [0.5, 1.0], "preprocessing_share": [0.05, 0.2]}
    search = DPRandomizedSearchCV(pipe, space, privacy=(2.0, 1e-5), n_iter=3, random_state=0,
                                  budget=budget).fit(X, y)
    assert search.privacy_spent_[0] <= 2.0
    assert isinstance(search.best_estimator_, PrivatePipeline)
    assert search.best_estimator_.extra_delta_ > 0
    assert len(budget.history()) == 1 and budget.spent()[0] <= 2.0 + 1e-9
    # Trials get fresh seeds for every DP step (never the pipeline's fixed ones).
    scaler = search.best_estimator_.named_steps["columntransformer"].transformers_[0][1][1]
    assert scaler.random_state != pipe.get_params()[
        "columntransformer__num__dpstandardscaler__random_state"]
    grid = DPGridSearchCV(pipe, {"dplogisticregression__C": [0.5, 1.0]}, privacy=(2.0, 1e-5),
                          random_state=0).fit(X, y)
    assert grid.privacy_spent_[0] <= 2.0
    with pytest.raises(ValueError, match="cannot be searched"):
        DPRandomizedSearchCV(pipe, {"columntransformer__cat__random_state": [1, 2]}).fit(X, y)


def test_the_unsafe_path_is_loud(raw):
    X, y = raw
    leaky = sklearn_preprocessor()
    with pytest.warns(PrivacyWarning, match="columntransformer__num__standardscaler"):
        make_pipeline(leaky, DPLogisticRegression(max_iter=2)).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)  # accounted or free: no warning
        make_private_pipeline(preprocessor(), DPLogisticRegression(max_iter=2)).fit(X, y)
        make_pipeline(FunctionTransformer(np.nan_to_num), DPLogisticRegression(max_iter=2)).fit(
            X[NUM], y)


def test_a_budget_too_small_to_split_is_refused_before_anything(raw, tmp_path):
    from skdp import UnreachablePrivacyTarget

    X, y = raw
    budget = PrivacyBudget(1.0, 1e-5, path=tmp_path / "b.skdp")
    pipe = make_private_pipeline(preprocessor(), DPLogisticRegression(), privacy=(1e-6, 1e-5),
                                 budget=budget)
    with pytest.raises(UnreachablePrivacyTarget, match="too small to split"):
        pipe.fit(X, y)
    assert budget.history() == [] and not hasattr(pipe, "privacy_spent_")


def test_column_transformer_branch_without_columns_released_nothing():
    # A branch that selects no column is never fitted: the pipeline must fit and report it.
    import pandas as pd
    from sklearn.compose import ColumnTransformer

    from skdp.linear_model import DPRidge
    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import DPOneHotEncoder, DPStandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(2000, 3)), columns=list("abc"))
    y = 2 * X["a"].to_numpy() + rng.normal(size=2000)
    columns = ColumnTransformer(
        [("num", DPStandardScaler(bounds=(-4, 4)), ["a", "b", "c"]),
         ("cat", DPOneHotEncoder(), [])])
    pipe = make_private_pipeline(columns, DPRidge(random_state=0), privacy=(1.0, 1e-5))
    pipe.fit(X, y)
    assert "no column selected" in pipe.privacy_report()
    assert pipe.privacy_spent_[0] <= 1.0
