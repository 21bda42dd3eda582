"""DPGridSearchCV / DPRandomizedSearchCV: accounting, ledger, pipelines, errors, leakage."""

import contextlib
import io
import pickle

import dp_accounting
import joblib
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, Normalizer, StandardScaler

from skdp import BudgetExceededError, PrivacyBudget
from skdp._fit.planned import planned_spend
from skdp.accounting import epsilon_of
from skdp.budget import RdpCurve
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV, TrialDistribution
from skdp.model_selection._accounting import ORDERS
from skdp.model_selection._scoring import gaussian_noise_for

DELTA = 1e-5


def small_lr(**kw):
    return DPLogisticRegression(max_iter=2, **kw)


def rdp_curve(event):
    acc = rdp.RdpAccountant(list(ORDERS))
    acc.compose(event)
    return np.asarray(acc.rdp)


def test_total_spend_is_the_re_accounted_event(binary_data):
    X, y = binary_data
    search = DPRandomizedSearchCV(
        small_lr(), {"eta0": [0.5, 2.0], "C": [0.1, 1.0]}, privacy=(1.5, DELTA), n_iter=4,
        random_state=0,
    ).fit(X, y)
    # Same plan for every candidate: the search is one DpEvent, repeat-and-select + refit.
    event = search.dp_event_
    assert isinstance(event, dp_accounting.ComposedDpEvent)
    repeat, refit = event.events
    assert isinstance(repeat, dp_accounting.dp_event.RepeatAndSelectDpEvent)
    assert (repeat.mean, repeat.shape) == (4.0, 1.0)
    fit, score = repeat.event.events
    assert score == dp_accounting.GaussianDpEvent(search.score_noise_multiplier_)
    acc = rdp.RdpAccountant()
    epsilon = acc.compose(event).get_epsilon(DELTA)
    assert search.privacy_spent_ == pytest.approx((epsilon, DELTA), rel=1e-12)
    assert search.privacy_spent_[0] <= 1.5
    assert search.privacy_spent_[0] > 0.9 * 1.5  # the budget is used, not wasted
    assert "for the whole search including the refit" in search.privacy_report()
    # The refit in the event is exactly what the released model spent.
    assert refit == search.best_estimator_.dp_event_
    # ... and the trials' fits are what a candidate at the per-trial budget spends.
    n_train = len(X) - search.n_validation_
    trial = small_lr(privacy=search.trial_privacy_, accountant="rdp")
    assert fit == planned_spend(trial, X[:n_train], y[:n_train]).spend


def test_differing_plans_are_bounded_by_every_candidate(binary_data):
    X, y = binary_data
    space = {"batch_size": [32, 256], "max_iter": [1]}
    search = DPRandomizedSearchCV(
        DPLogisticRegression(), space, privacy=(2.0, DELTA), n_iter=3,
        n_trials_distribution="logarithmic", random_state=1,
    ).fit(X, y)
    spent = search.dp_event_
    if isinstance(spent, RdpCurve):
        curve = np.asarray(spent.rdp)
    else:
        curve = rdp_curve(spent)
    epsilon, _ = rdp.compute_epsilon(list(ORDERS), list(curve), DELTA)
    assert search.privacy_spent_[0] == pytest.approx(epsilon, rel=1e-12)
    assert search.privacy_spent_[0] <= 2.0
    # Independent check with dp_accounting: for every candidate, "repeat and select that
    # candidate's trial, then refit it" is covered by the charged curve at every order.
    score = dp_accounting.GaussianDpEvent(search.score_noise_multiplier_)
    n_train = len(X) - search.n_validation_
    for batch_size in space["batch_size"]:
        for max_iter in space["max_iter"]:
            est = DPLogisticRegression(
                privacy=search.trial_privacy_, accountant="rdp", batch_size=batch_size,
                max_iter=max_iter,
            )
            fit = planned_spend(est, X[:n_train], y[:n_train]).spend
            refit = planned_spend(est, X, y).spend
            alone = dp_accounting.ComposedDpEvent([
                dp_accounting.dp_event.RepeatAndSelectDpEvent(
                    dp_accounting.ComposedDpEvent([fit, score]), 3.0, 0.0),
                refit,
            ])
            assert np.all(rdp_curve(alone) <= curve * (1 + 1e-12) + 1e-12)


def test_exhaustive_grid_is_charged_the_full_composition(binary_data):
    X, y = binary_data
    grid = {"eta0": [0.5, 1.0, 2.0]}
    search = DPGridSearchCV(
        small_lr(), grid, exhaustive=True, privacy=(2.0, DELTA), random_state=0
    ).fit(X, y)
    assert [p["eta0"] for p in search.cv_results_["params"]] == grid["eta0"]
    assert search.cv_results_["noisy_validation_score"].shape == (3,)
    event = search.dp_event_
    trials, refit = event.events
    assert sum(e.count for e in trials.events) == 3  # every candidate once, composed
    epsilon = rdp.RdpAccountant().compose(event).get_epsilon(DELTA)
    assert search.privacy_spent_[0] == pytest.approx(epsilon, rel=1e-12) and epsilon <= 2.0
    # A larger grid: composing every candidate leaves each trial far less budget than a random
    # number of trials with a small mean (for 3 candidates, composing is the cheaper one).
    big = {"eta0": list(np.geomspace(0.25, 4.0, 8))}
    every = DPGridSearchCV(small_lr(), big, exhaustive=True, privacy=(2.0, DELTA),
                           random_state=0).fit(X, y)
    random_search = DPGridSearchCV(
        small_lr(), big, n_iter=3, privacy=(2.0, DELTA), random_state=0
    ).fit(X, y)
    assert not hasattr(random_search, "cv_results_")
    assert random_search.trial_privacy_[0] > every.trial_privacy_[0]
    # The report states what a ledger would record for the composition (PLD), and each trial's
    # own delta; a repeat-and-select spend has no PLD form and gets no such line.
    pld = epsilon_of(event, DELTA, "pld")
    assert pld < search.privacy_spent_[0]
    assert f"re-accounted with PLD, as a budget ledger records it: ({pld:.4g}" in (
        search.privacy_report())
    assert "re-accounted" not in random_search.privacy_report()


def test_report_states_each_trials_own_delta():
    # Partition selection gives a pipeline's trials less delta than the search; the report
    # used to print the search's delta for them.
    import pandas as pd

    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import DPOneHotEncoder

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": rng.choice(list("abcd"), 3000)})
    y = (X["c"] == "a").astype(int).to_numpy()
    search = DPGridSearchCV(
        make_private_pipeline(DPOneHotEncoder(), small_lr()),
        {"dplogisticregression__eta0": [0.5, 2.0]}, privacy=(1.0, DELTA), random_state=0,
    ).fit(X, y)
    trial_epsilon, trial_delta = search.trial_privacy_
    assert trial_delta < DELTA
    assert f"calibrated to ({trial_epsilon:.4g}, {trial_delta:.3g})" in search.privacy_report()


def test_nothing_per_trial_is_exposed(binary_data):
    X, y = binary_data
    search = DPRandomizedSearchCV(
        small_lr(), {"eta0": [0.5, 2.0]}, privacy=(1.0, DELTA), n_iter=5, random_state=3
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        search.set_params(verbose=1).fit(X, y)
    fitted = {k for k in vars(search) if k.endswith("_") and not k.startswith("_")}
    assert fitted == {
        "best_estimator_", "best_params_", "best_score_", "privacy_spent_", "dp_event_",
        "trial_privacy_", "score_noise_multiplier_", "n_candidates_", "n_validation_",
    }  # no fit time either: it grows with the number of trials
    # Verbose shows stages, never one line per trial (the number of trials stays hidden).
    assert len(out.getvalue().splitlines()) == 3
    # No trial model survives in the fitted search (only the refitted winner).
    blob = pickle.dumps(search)
    assert len(blob) < 3 * len(pickle.dumps(search.best_estimator_)) + 20000


def _same_search(a, b):
    assert a.best_params_ == b.best_params_
    assert a.best_score_ == b.best_score_
    np.testing.assert_array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)


SPACE = {"eta0": [0.25, 0.5, 1.0, 2.0]}
KW = dict(privacy=(1.0, DELTA), n_iter=3, random_state=7)


@pytest.fixture(scope="module")
def sequential(binary_data):
    return DPRandomizedSearchCV(small_lr(), SPACE, **KW).fit(*binary_data)


@pytest.mark.parametrize("refit", [False, True])
def test_poisson_may_run_no_trial(binary_data, monkeypatch, refit):
    X, y = binary_data
    # K = 0 has probability exp(-n_iter) under Poisson; force it.
    monkeypatch.setattr(TrialDistribution, "sample", lambda self, rng: 0)
    search = DPRandomizedSearchCV(
        small_lr(), {"eta0": [0.5, 2.0]}, privacy=(2.0, DELTA), n_iter=2,
        n_trials_distribution="poisson", refit=refit, random_state=0,
    )
    with pytest.warns(RuntimeWarning, match="Poisson number of trials was 0"):
        search.fit(X, y)
    assert np.isnan(search.best_score_)
    if refit:  # a candidate drawn with public coins, refitted: still a DP release
        assert search.best_params_["eta0"] in (0.5, 2.0)
        assert search.predict(X).shape == (len(X),)
    else:  # no trial and no refit: nothing is released, and nothing pretends otherwise
        assert not hasattr(search, "best_estimator_")
        with pytest.raises(NotFittedError):
            search.predict(X)


def test_reproducible_and_threads_agree(binary_data, tmp_path, sequential):
    X, y = binary_data
    _same_search(sequential, DPRandomizedSearchCV(small_lr(), SPACE, **KW).fit(X, y))
    budget = PrivacyBudget(5.0, DELTA, tmp_path / "ledger.db")
    with joblib.parallel_config(backend="threading", n_jobs=2), budget:
        threaded = DPRandomizedSearchCV(small_lr(), SPACE, **KW).fit(X, y)
    _same_search(sequential, threaded)
    assert len(budget.history()) == 1  # trials in threads charge nothing either
    other = DPRandomizedSearchCV(small_lr(), SPACE, **{**KW, "random_state": 8}).fit(X, y)
    assert other.best_score_ != sequential.best_score_


@pytest.mark.slow
def test_loky_processes_agree(binary_data, sequential):
    parallel = DPRandomizedSearchCV(small_lr(), SPACE, n_jobs=2, **KW).fit(*binary_data)
    _same_search(sequential, parallel)


@pytest.mark.slow
def test_dask_cluster_agrees(binary_data, sequential):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        searched = DPRandomizedSearchCV(small_lr(), SPACE, **KW).fit(*binary_data)
    _same_search(sequential, searched)


def test_ledger_gets_exactly_one_spend(binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(5.0, DELTA, tmp_path / "ledger.db")
    # The estimator's own budget and an enclosing block must not make trials charge.
    search = DPRandomizedSearchCV(
        small_lr(budget=budget), {"eta0": [0.5, 2.0]}, privacy=(1.0, DELTA), n_iter=6,
        random_state=0,
    )
    with budget:
        search.fit(X, y)
    history = budget.history()
    assert len(history) == 1
    assert history[0].estimator == "DPRandomizedSearchCV"
    assert history[0].epsilon == pytest.approx(search.privacy_spent_[0], rel=1e-6)
    # An enclosing block alone: charged once too.
    with budget:
        DPRandomizedSearchCV(
            small_lr(), {"eta0": [0.5, 2.0]}, privacy=(1.0, DELTA), n_iter=6, random_state=1
        ).fit(X, y)
    assert len(budget.history()) == 2


def test_refused_searches_charge_nothing(binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(1.0, DELTA, tmp_path / "ledger.db")
    search = DPRandomizedSearchCV(
        small_lr(), {"eta0": [0.5, 2.0]}, privacy=(2.0, DELTA), n_iter=3, budget=budget,
        random_state=0,
    )
    with pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert budget.history() == [] and not hasattr(search, "best_estimator_")
    with pytest.raises(ValueError, match="too small for this search"):
        DPGridSearchCV(
            DPLogisticRegression(max_iter=50, batch_size=1000), {"eta0": [0.5, 2.0]},
            privacy=(1e-4, DELTA), budget=budget,
        ).fit(X, y)
    assert budget.history() == []


@pytest.mark.parametrize("private_pipeline", [False, True])
def test_refused_input_charges_nothing_and_keeps_its_own_message(binary_data, tmp_path,
                                                                 private_pipeline):
    # Missing values used to read as "privacy ... too small for this search", and a private
    # pipeline's model met them only after the budget was charged.
    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import DPStandardScaler

    X, y = binary_data
    X = X.copy()
    X[0, 0] = np.nan
    estimator, grid = small_lr(), {"eta0": [0.5, 2.0]}
    if private_pipeline:
        estimator = make_private_pipeline(DPStandardScaler(), estimator)
        grid = {"dplogisticregression__eta0": [0.5, 2.0]}
    budget = PrivacyBudget(5.0, DELTA, tmp_path / "ledger.db")
    with pytest.raises(ValueError, match="Input X contains NaN. DPLogisticRegression") as caught:
        DPGridSearchCV(estimator, grid, privacy=(1.0, DELTA), budget=budget).fit(X, y)
    assert "too small" not in str(caught.value)
    assert budget.history() == []
    # A bad candidate parameter keeps its own error too.
    with pytest.raises(ValueError, match="budget_split"):
        DPGridSearchCV(DPRidge(optimizer="ssp"), {"optimizer_params": [{"budget_split": "x"}]},
                       privacy=(1.0, DELTA)).fit(np.nan_to_num(X), X[:, 1])


def test_pipeline_with_public_steps(binary_data):
    X, y = binary_data
    pipe = Pipeline([("scale", FunctionTransformer(lambda Z: Z / 2)), ("norm", Normalizer()),
                     ("clf", small_lr())])
    search = DPRandomizedSearchCV(
        pipe, {"clf__eta0": [0.5, 2.0], "clf__max_grad_norm": [0.5, 1.0]},
        privacy=(1.0, DELTA), n_iter=3, random_state=0,
    ).fit(X, y)
    assert set(search.best_params_) == {"clf__eta0", "clf__max_grad_norm"}
    assert search.predict(X).shape == (len(X),)
    assert search.n_features_in_ == 5
    learned = Pipeline([("scale", StandardScaler()), ("clf", small_lr())])
    with pytest.raises(ValueError, match="learns from the data"):
        DPRandomizedSearchCV(learned, {"clf__eta0": [1.0, 2.0]}).fit(X, y)


def test_regressor_search(binary_data):
    X, _ = binary_data
    y = X @ np.array([0.5, -0.3, 0.2, 0.0, 0.1])
    search = DPGridSearchCV(
        DPRidge(max_iter=2), {"eta0": [0.1, 0.5]}, privacy=(1.0, DELTA), n_iter=3,
        score_clip=1.0, random_state=0, refit=False,
    ).fit(X, y)
    assert search.best_score_ <= 0.5  # minus a clipped mean squared error, plus noise
    assert search.predict(X).shape == (len(X),)
    # refit=False: the released model is the winning trial's, trained on the training part.
    assert search.best_estimator_.privacy_spent_[0] <= search.trial_privacy_[0]


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: DPRandomizedSearchCV(small_lr(), {"nope": [1, 2]}), "invalid parameter"),
        (lambda: DPRandomizedSearchCV(small_lr(), {"privacy": [(1, 1e-5)]}), "cannot be"),
        (lambda: DPRandomizedSearchCV(small_lr(), {"eta0": _Uniform()}), "finite list"),
        (lambda: DPRandomizedSearchCV(small_lr(), {"eta0": [1.0]}, privacy=(np.inf, 0)),
         "finite epsilon"),
        (lambda: DPRandomizedSearchCV(
            small_lr(accountant="last_iterate"), {"eta0": [1.0]}), "last_iterate"),
        (lambda: DPRandomizedSearchCV(small_lr(), {"eta0": [1.0]}, privacy=(1.0, 2.0)),
         "delta"),
    ],
)
def test_bad_input_is_refused_clearly(binary_data, make, match):
    X, y = binary_data
    with pytest.raises(ValueError, match=match):
        make().fit(X, y)


class _Uniform:
    def rvs(self, size=None, random_state=None):  # pragma: no cover - never called
        return 1.0


def test_plain_gridsearchcv_with_a_ledger_still_charges_every_fit(binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(50.0, DELTA, tmp_path / "ledger.db")
    GridSearchCV(small_lr(privacy=(0.5, DELTA), budget=budget), {"eta0": [0.5, 2.0]},
                 cv=2).fit(X, y)
    assert len(budget.history()) == 2 * 2 + 1  # every fold of every candidate, and the refit


def test_score_noise_parametrisation():
    # The Gaussian mechanism with this noise is (eps, delta)-DP, tightly enough to be useful.
    for epsilon in (0.05, 0.3, 1.0):
        sigma = gaussian_noise_for(epsilon, DELTA)
        spent = rdp.RdpAccountant().compose(dp_accounting.GaussianDpEvent(sigma))
        assert 0.99 * epsilon <= spent.get_epsilon(DELTA) <= epsilon


def test_clone_and_params():
    search = DPGridSearchCV(small_lr(), {"eta0": [1.0]}, n_iter=4)
    assert clone(search).get_params()["n_iter"] == 4
    assert "estimator__eta0" in search.get_params(deep=True)


def test_which_preprocessing_counts_as_data_independent():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from skdp.datasets import adult_preprocessor
    from skdp.model_selection._candidates import search_target
    from skdp.preprocessing import DPStandardScaler

    target = search_target(make_pipeline(adult_preprocessor(), small_lr()))
    assert target.model_prefix == "dplogisticregression__"
    assert isinstance(target.model, DPLogisticRegression)
    learned = ColumnTransformer([("cat", OneHotEncoder(), [0])], remainder=StandardScaler())
    for bad in (OneHotEncoder(), learned, OneHotEncoder(categories=[["a"]])):
        with pytest.raises(ValueError):
            search_target(make_pipeline(bad, small_lr()))
    with pytest.raises(TypeError, match="skdp estimator"):
        search_target(make_pipeline(Normalizer(), StandardScaler()))
    # DP transformers spend privacy: only inside a private pipeline, whose budget is accounted.
    with pytest.raises(ValueError, match="make_private_pipeline"):
        search_target(make_pipeline(DPStandardScaler(), small_lr()))


def test_saturated_regression_scores_warn(binary_data):
    # Prices in dollars against score_clip=4: every residual is clipped, the scores cannot
    # separate the candidates, and the search says so (from its released scores only).
    import warnings

    X, _ = binary_data
    y = X @ np.array([0.5, -0.3, 0.2, 0.0, 0.1])

    def warnings_of(target, clip):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            DPGridSearchCV(DPRidge(max_iter=2), {"eta0": [0.1, 0.5]}, privacy=(1.0, DELTA),
                           score_clip=clip, random_state=0).fit(X, target)
        return [str(w.message) for w in caught if "score_clip" in str(w.message)]

    assert warnings_of(y, 4.0) == []
    saturated = warnings_of(1000.0 * y + 5000.0, 4.0)
    assert len(saturated) == 1 and "could not tell the candidates apart" in saturated[0]
    assert warnings_of(1000.0 * y + 5000.0, 4e8) == []
