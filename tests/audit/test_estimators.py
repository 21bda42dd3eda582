"""skdp.audit on real estimators: bounds below the claim for the correct mechanism, above it
for deliberately broken ones (noise off, clipping off, noise 4x too small), for every
optimizer in the registry.

The breakers live in ``tests/audit/_breakers.py`` (monkeypatches; the library has none).
"""

from __future__ import annotations

import numpy as np
import pytest

import skdp
from skdp.audit import AuditResult, audit_multi_run, audit_one_run, canary_scores, make_canaries
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.mechanisms._registry import is_full_batch_only
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor
from tests._inventory import SGD_OPTIMIZERS

from ._breakers import apply as apply_breaker

# Settings each optimizer needs on top of the test's (the lead fills in new optimizers here):
# e.g. diff2 is full-batch gradient descent ('auto' batches), adaclip takes optimizer_params.
OPTIMIZER_SETTINGS: dict[str, dict] = {
    "noisy_sgd": {},
    "adp_sgd": {"learning_rate": "invscaling"},  # a non-constant noise shape
    "adaclip": {},
    "diff2": {"batch_size": "auto"},  # full batch; 2 rounds: one restart, one difference
}
# Optimizers whose clipping the clipping breaker (model.clipped_grad_sum with max_norm=None)
# cannot switch off, with the reason; their no-clipping cases are skipped.
CLIP_BREAKER_UNSUPPORTED: dict[str, str] = {}
# Optimizers for which the one-run audit cannot show clipping off, with the reason.
ONE_RUN_CLIP_UNSUPPORTED: dict[str, str] = {
    "diff2": "diff2's difference rounds add noise proportional to the length of the last step, "
    "which unclipped canaries make huge: one run cannot see the canaries through it (the "
    "multi-run audit catches clipping off for diff2)",
}

DELTA = 1e-5


pytestmark = pytest.mark.usefixtures("quiet_privacy_warnings")


def make_data(regression: bool, n: int = 32, d: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    if regression:
        return X, X[:, 0] + 0.1 * rng.normal(size=n)
    return X, (X[:, 0] > 0).astype(int)


def linear_estimator(Estimator, optimizer: str, epsilon: float, **params):
    """Tiny and fast: full batch ('auto' on 33 rows), 2 epochs unless ``params`` say else."""
    settings = {"max_iter": 2, **OPTIMIZER_SETTINGS.get(optimizer, {}), **params}
    return Estimator(privacy=(epsilon, DELTA), optimizer=optimizer, **settings)


def run_breaker(monkeypatch, breaker: str, optimizer: str) -> list[int]:
    if breaker == "no_clipping" and optimizer in CLIP_BREAKER_UNSUPPORTED:
        pytest.skip(CLIP_BREAKER_UNSUPPORTED[optimizer])
    return apply_breaker(monkeypatch, breaker)


def check_breaker_reached(calls: list[int], breaker: str, optimizer: str) -> None:
    if calls[0] == 0:
        pytest.fail(
            f"the {breaker!r} breaker never reached the code that optimizer={optimizer!r} runs "
            "(refactored?): update tests/audit/_breakers.py or CLIP_BREAKER_UNSUPPORTED"
        )


# --- fast: claim 1 vs noise off ---------------------------------------------------------------
@pytest.mark.parametrize("optimizer", SGD_OPTIMIZERS)
@pytest.mark.parametrize("breaker", ["none", "noise_off"])
def test_multi_run_audit_has_teeth_fast(monkeypatch, optimizer, breaker):
    calls = run_breaker(monkeypatch, breaker, optimizer)
    X, y = make_data(regression=False)
    est = linear_estimator(DPLogisticRegression, optimizer, 1.0)
    result = audit_multi_run(est, X, y, n_runs=300, random_state=0)
    check_breaker_reached(calls, breaker, optimizer)
    assert result.epsilon_claimed == pytest.approx(1.0, abs=0.02)
    if breaker == "none":
        assert result.epsilon_lower < result.epsilon_claimed
        assert not result.violation
    else:  # perfect separation on 105 + 105 evaluation runs: about 3.3
        assert result.epsilon_lower > 2.5 * result.epsilon_claimed
        assert result.violation


@pytest.mark.parametrize("optimizer", SGD_OPTIMIZERS)
@pytest.mark.parametrize("breaker", ["none", "noise_off"])
def test_one_run_audit_has_teeth_fast(monkeypatch, optimizer, breaker):
    calls = run_breaker(monkeypatch, breaker, optimizer)
    X, y = make_data(regression=True)
    est = linear_estimator(DPRidge, optimizer, 1.0)
    result = audit_one_run(est, X, y, n_canaries=100, random_state=0)
    check_breaker_reached(calls, breaker, optimizer)
    if breaker == "none":
        assert result.epsilon_lower < result.epsilon_claimed
    else:
        assert result.epsilon_lower > 2 * result.epsilon_claimed


# --- thorough: every breaker, both audits, both linear models ---------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("optimizer", SGD_OPTIMIZERS)
@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPRidge])
@pytest.mark.parametrize("breaker", ["none", "noise_off", "noise_div4", "no_clipping"])
def test_multi_run_audit_has_teeth(monkeypatch, optimizer, Estimator, breaker):
    """Claim 2: noise 4x too small is really epsilon ~10 (Gaussian composition of the two
    full-batch steps); 2000 fits can show about 2.6 of it."""
    calls = run_breaker(monkeypatch, breaker, optimizer)
    X, y = make_data(regression=Estimator is DPRidge)
    est = linear_estimator(Estimator, optimizer, 2.0)
    # Unclipped, a far-out canary moves the model by its whole (huge) gradient.
    norm = 100.0 if breaker == "no_clipping" else None
    result = audit_multi_run(est, X, y, n_runs=2000, canary_norm=norm, random_state=1)
    check_breaker_reached(calls, breaker, optimizer)
    if breaker == "none":
        assert result.epsilon_lower < result.epsilon_claimed
    else:
        assert result.epsilon_lower > result.epsilon_claimed, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", SGD_OPTIMIZERS)
@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPRidge])
@pytest.mark.parametrize("breaker", ["none", "noise_off", "no_clipping"])
def test_one_run_audit_has_teeth(monkeypatch, optimizer, Estimator, breaker):
    if breaker == "no_clipping" and optimizer in ONE_RUN_CLIP_UNSUPPORTED:
        pytest.skip(ONE_RUN_CLIP_UNSUPPORTED[optimizer])
    calls = run_breaker(monkeypatch, breaker, optimizer)
    X, y = make_data(regression=Estimator is DPRidge)
    est = linear_estimator(Estimator, optimizer, 1.0)
    # Unclipped, a logistic canary's gradient is |residual| <= 1 times its norm: make it far.
    # (A ridge canary's residual is already large; far out, unclipped steps would overshoot
    # its target and make members score low, which the one-run guesses do not look for.)
    norm = 100.0 if breaker == "no_clipping" and Estimator is DPLogisticRegression else None
    result = audit_one_run(est, X, y, n_canaries=300, canary_norm=norm, random_state=2)
    check_breaker_reached(calls, breaker, optimizer)
    if breaker == "none":
        assert result.epsilon_lower < result.epsilon_claimed
    else:
        assert result.epsilon_lower > result.epsilon_claimed, str(result)


# Optimizers whose long MLP runs (60 full-batch rounds at learning_rate_init=2) are unstable
# even without a breaker, with the reason.
MLP_LONG_RUN_UNSUPPORTED: dict[str, str] = {
    "diff2": "diff2's long MLP runs here diverge or explode (parameters ~1e32) without any "
    "breaker; see test_exploding_runs_reveal_the_dataset_size",
}


def mlp_long_run(Estimator, optimizer: str):
    # The step is pinned to the measured undamped one: 'auto' damps it by the noise per
    # coordinate, which on 33 full-batch rows is large, and a canary then moves too little
    # for a black-box audit to catch a broken mechanism (the audit tests the mechanism).
    return linear_estimator(
        Estimator, optimizer, 1.0, hidden_layer_sizes=(8,), max_iter=60, learning_rate="constant",
        learning_rate_init=Estimator._STEPS.private,
    )


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="known limitation of treating n as public: under add/remove-one a row changes n, "
    "which every optimizer divides by (full batch: n; Poisson: the expected batch q n); in an "
    "exploding run (diff2 MLP, 60 full-batch rounds, outputs ~1e32) the 1/n vs 1/(n+1) step "
    "compounds and the audit refutes the claim (lower bound 2.83 > 1). With n fixed "
    "(replace-one pairs) the same audit finds nothing. See docs/developers/audit.md.",
)
def test_exploding_runs_reveal_the_dataset_size():
    X, y = make_data(regression=True)
    result = audit_multi_run(mlp_long_run(DPMLPRegressor, "diff2"), X, y, n_runs=1000,
                             random_state=1)
    assert result.epsilon_lower < result.epsilon_claimed, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", SGD_OPTIMIZERS)
@pytest.mark.parametrize("Estimator", [DPMLPClassifier, DPMLPRegressor])
@pytest.mark.parametrize("breaker", ["none", "noise_off", "no_clipping"])
def test_mlp_multi_run_audit_has_teeth(monkeypatch, optimizer, Estimator, breaker):
    """MLPs: the random initialisation moves a canary's score from fit to fit far more than
    a few clipped steps do, so the black-box audit needs a longer run (60 full-batch steps)
    with a constant step size (a decaying one learns the canary too little) to catch noise off
    or clipping off; it does not catch noise / 4 (see docs/developers/audit.md). Unclipped, some
    optimizers diverge on the canary: the audit counts that as an outcome."""
    if optimizer in MLP_LONG_RUN_UNSUPPORTED:
        pytest.skip(MLP_LONG_RUN_UNSUPPORTED[optimizer])
    calls = run_breaker(monkeypatch, breaker, optimizer)
    X, y = make_data(regression=Estimator is DPMLPRegressor)
    est = mlp_long_run(Estimator, optimizer)
    result = audit_multi_run(est, X, y, n_runs=1000, random_state=1)
    check_breaker_reached(calls, breaker, optimizer)
    if breaker == "none":
        assert result.epsilon_lower < result.epsilon_claimed
    else:
        assert result.epsilon_lower > result.epsilon_claimed, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", SGD_OPTIMIZERS)
def test_poisson_sampled_audit_below_claim(optimizer):
    """Mini-batches (Poisson sampling, amplification): the correct mechanism stays below."""
    if is_full_batch_only(optimizer):
        pytest.skip(f"optimizer={optimizer!r} is full-batch only")
    X, y = make_data(regression=False, n=64)
    est = linear_estimator(DPLogisticRegression, optimizer, 1.0, batch_size=8)
    for canary in ("crafted", "random"):
        result = audit_multi_run(est, X, y, n_runs=1000, canary=canary, random_state=3)
        assert result.epsilon_lower < result.epsilon_claimed


# --- the API ----------------------------------------------------------------------------------
def test_audit_result_and_details():
    X, y = make_data(regression=False)
    est = linear_estimator(DPLogisticRegression, "noisy_sgd", 1.0)
    result = audit_multi_run(est, X, y, n_runs=40, random_state=0)
    assert isinstance(result, AuditResult)
    assert result.method == "multi_run" and result.n_fits == 40 and result.delta == DELTA
    assert result.details["neighboring_relation"] == "add_or_remove_one"
    assert len(result.details["in_scores"]) == len(result.details["out_scores"]) == 20
    assert "multi_run audit" in str(result)
    again = audit_multi_run(est, X, y, n_runs=40, random_state=0)
    assert again.epsilon_lower == result.epsilon_lower
    np.testing.assert_array_equal(again.details["in_scores"], result.details["in_scores"])

    one = audit_one_run(est, X, y, n_canaries=20, n_guesses=[4, 10], random_state=0)
    assert one.method == "one_run" and one.n_fits == 1
    assert [d["n_guesses"] for d in one.details["per_guess_count"]] == [4, 10]
    assert one.details["n_included"] == int(one.details["included"].sum())


def test_diverged_fits_are_outcomes(monkeypatch):
    """A mechanism that fails (FloatingPointError) whenever the canary is in is caught."""
    X, y = make_data(regression=True)
    fit = DPRidge.fit

    def failing_fit(self, X_fit, y_fit):
        if len(X_fit) > len(X):
            raise FloatingPointError("diverged")
        return fit(self, X_fit, y_fit)

    monkeypatch.setattr(DPRidge, "fit", failing_fit)
    est = linear_estimator(DPRidge, "noisy_sgd", 1.0)
    result = audit_multi_run(est, X, y, n_runs=100, random_state=0)
    assert result.details["n_diverged_in"] == 50 and result.details["n_diverged_out"] == 0
    assert result.epsilon_lower > 2.0 and result.epsilon_claimed == pytest.approx(1.0, abs=0.02)
    with pytest.raises(FloatingPointError):
        audit_one_run(est, X, y, n_canaries=10, random_state=0)


def test_audit_does_not_touch_the_estimator_or_charge_budgets(tmp_path):
    X, y = make_data(regression=True)
    budget = skdp.PrivacyBudget(10.0, DELTA, path=tmp_path / "ledger.db")
    est = linear_estimator(DPRidge, "noisy_sgd", 1.0, budget=budget)
    with budget:
        audit_multi_run(est, X, y, n_runs=10, random_state=0)
        audit_one_run(est, X, y, n_canaries=10, random_state=0)
    assert budget.history() == []
    assert not hasattr(est, "privacy_spent_")


def test_replace_one_relation_uses_replacement_pairs():
    X, y = make_data(regression=True)
    est = DPRidge(
        privacy=(2.0, DELTA), accountant="last_iterate", projection_radius=5.0,
        max_row_norm=100.0, eta0=1e-4, average=False, batch_size=8, max_iter=2,
    )
    result = audit_multi_run(est, X, y, n_runs=20, random_state=0)
    assert result.details["neighboring_relation"] == "replace_one"
    one = audit_one_run(est, X, y, n_canaries=10, random_state=0)
    assert one.details["neighboring_relation"] == "replace_one"


def test_audit_refuses_what_it_cannot_audit():
    X, y = make_data(regression=False)
    from sklearn.linear_model import LogisticRegression

    with pytest.raises(TypeError, match="skdp"):
        audit_multi_run(LogisticRegression(), X, y)
    with pytest.raises(ValueError, match="non-private"):
        audit_multi_run(DPLogisticRegression(privacy=(float("inf"), 0)), X, y)
    with pytest.raises(ValueError, match="canary"):
        audit_one_run(DPLogisticRegression(), X, y, canary="loud")
    with pytest.raises(ValueError, match="n_guesses"):
        audit_one_run(DPLogisticRegression(), X, y, n_canaries=10, n_guesses=11)
    with pytest.raises(ValueError, match="n_runs"):
        audit_multi_run(DPLogisticRegression(), X, y, n_runs=2)


@pytest.mark.parametrize("classifier", [True, False])
def test_canaries(classifier):
    X, y = make_data(regression=not classifier)
    rng = np.random.default_rng(0)
    crafted = make_canaries(X, y, 5, "crafted", classifier, rng)
    assert crafted.X.shape == (32, 9) and np.all(crafted.X[:, 4:] == 0)
    np.testing.assert_allclose(np.linalg.norm(crafted.X_canary, axis=1), crafted.X_canary.max(
        axis=1, initial=0) - crafted.X_canary.min(axis=1, initial=0))
    assert np.all(np.count_nonzero(crafted.X_canary, axis=1) == 1)
    if classifier:
        assert set(crafted.y_canary) <= set(y)
    else:
        assert np.all(np.abs(crafted.y_canary) >= 10 * np.abs(y).max() - 1e-9)
    inside = make_canaries(X, y, 3, "crafted", classifier, rng, norm=7.0, dedicated_features=False)
    assert inside.X.shape == X.shape
    np.testing.assert_allclose(np.linalg.norm(inside.X_canary, axis=1), 7.0)
    random = make_canaries(X, y, 4, "random", classifier, rng)
    assert random.reference is None and random.X is X or np.shares_memory(random.X, X)
    if classifier:  # a data row with a wrong label
        rows = [np.flatnonzero((X == row).all(axis=1))[0] for row in random.X_canary]
        assert np.all(y[rows] != random.y_canary)


@pytest.mark.parametrize("Estimator", [DPMLPClassifier, DPMLPRegressor])
def test_mlp_audits_run_and_stay_below_the_claim(Estimator):
    X, y = make_data(regression=Estimator is DPMLPRegressor)
    est = Estimator(privacy=(1.0, DELTA), hidden_layer_sizes=(8,), max_iter=2)
    result = audit_multi_run(est, X, y, n_runs=100, random_state=0)
    assert result.epsilon_lower < result.epsilon_claimed
    one = audit_one_run(est, X, y, n_canaries=50, random_state=0)
    assert one.epsilon_lower < one.epsilon_claimed


def test_canary_scores_reference_cancels_intercept():
    X, y = make_data(regression=True)
    est = linear_estimator(DPRidge, "noisy_sgd", float("inf")).fit(X, y)
    x = np.zeros((1, 4))
    # At the reference itself the score is 0 whatever the intercept.
    assert canary_scores(est, x, np.array([3.0]), reference=np.zeros(4))[0] == 0.0
