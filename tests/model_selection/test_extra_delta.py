"""Private searches whose candidates spend ``WithExtraDelta`` (private pipelines).

No private pipeline exists yet, so the candidates here are DP logistic regressions whose planned
spend is wrapped, by monkeypatching the search's planner, in ``WithExtraDelta(event, p)`` with
``p = SHARE * (the delta the trial is given)``, as a pipeline with partition selection will.
The search must account the extra deltas as an additive term ``t`` of its delta
(``E[K] * p_max + p_refit``, or ``sum p + p_refit`` when exhaustive), lower the per-trial delta so
that ``t`` stays a small share of its delta, and never overshoot the target.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant

from skdp._fit.planned import planned_spend
from skdp.budget import PrivacyBudget, WithExtraDelta
from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import _plan
from skdp.model_selection._accounting import (
    SearchEvents,
    SearchTooExpensive,
    search_epsilon,
    search_extra_delta,
    search_spend,
)
from skdp.model_selection._candidates import support
from skdp.model_selection._execution import candidate_key
from skdp.model_selection._plan import ATOM_SHARE, plan_search
from skdp.model_selection._trials import TrialDistribution

DELTA = 1e-5
EPSILON = 2.0
SHARE = 0.1  # a pipeline's default share of its delta for partition selection


_PLANNED_SPEND = _plan.quiet_planned_spend


def wrap_planned_spends(monkeypatch, share=SHARE, fixed=None):
    """Make every planned fit a pipeline-like ``WithExtraDelta`` spend."""

    def planned(estimator, X, y):
        spend = _PLANNED_SPEND(estimator, X, y)
        trial_delta = estimator.get_params()["privacy"][1]
        return WithExtraDelta(spend, fixed if fixed is not None else share * trial_delta)

    monkeypatch.setattr(_plan, "quiet_planned_spend", planned)


def plan(data, space, trials, refit=True, privacy=(EPSILON, DELTA), **params):
    X, y = data
    template = DPLogisticRegression(max_iter=2, **params).set_params(
        accountant="rdp", budget=None, verbose=0, classes=np.unique(y)
    )
    n_train = 1200
    return plan_search(
        template, "", support([space]), trials, (X[:n_train], y[:n_train]), (X, y), privacy,
        refit, 0.3,
    )


def check_total(result, delta=DELTA, epsilon=EPSILON, additive=True):
    """The search's (epsilon, delta), re-accounted afresh: the RDP part at the delta the extra
    delta t leaves (delta - t, or (delta - t) / (1 - t) for an atom), and t."""
    spend = result.spend
    assert isinstance(spend, WithExtraDelta) and spend.additive is additive
    assert spend.extra_delta == result.extra_delta
    t = result.extra_delta
    rdp = RdpAccountant().compose(spend.spend)
    reduced = delta - t if additive else (delta - t) / (1 - t)
    assert result.epsilon == pytest.approx(rdp.get_epsilon(reduced), rel=1e-9)
    assert result.epsilon <= epsilon
    # The guarantee at the target epsilon: delta_RDP(target) + t <= delta (for an atom,
    # t + (1 - t) * delta_RDP(target) <= delta).
    delta_rdp = rdp.get_delta(epsilon)
    assert (delta_rdp + t if additive else t + (1 - t) * delta_rdp) <= delta
    assert result.epsilon > 0.9 * epsilon  # the budget is used, not wasted


def test_random_search_accounts_the_extra_deltas_additively(binary_data, monkeypatch):
    wrap_planned_spends(monkeypatch)
    trials = TrialDistribution.make("geometric", 4.0)
    result = plan(binary_data, {"eta0": [0.5, 2.0], "C": [0.1, 1.0]}, trials)
    # t = E[K] p + p_refit = 5 * SHARE * trial_delta, brought down to ATOM_SHARE * delta.
    assert result.trial_delta == pytest.approx(ATOM_SHARE * DELTA / (5 * SHARE), rel=1e-9)
    assert result.extra_delta == pytest.approx(5 * SHARE * result.trial_delta, rel=1e-9)
    assert result.extra_delta <= ATOM_SHARE * DELTA * (1 + 1e-9)
    check_total(result)
    # The trials and the refit are planned at (trial_epsilon, trial_delta).
    for spend in result.planned_fit.values():
        assert spend.extra_delta == SHARE * result.trial_delta
    assert set(result.planned_refit) == set(result.planned_fit)
    X, y = binary_data
    repeat, refit_event = result.spend.spend.events
    assert isinstance(repeat, dp_accounting.dp_event.RepeatAndSelectDpEvent)
    fit, score = repeat.event.events
    trial = DPLogisticRegression(max_iter=2, accountant="rdp", classes=np.unique(y),
                                 privacy=(result.trial_epsilon, result.trial_delta))
    assert fit == planned_spend(trial.set_params(eta0=0.5, C=0.1), X[:1200], y[:1200]).spend
    assert refit_event == planned_spend(trial, X, y).spend


def test_a_ledger_charged_the_search_reports_its_epsilon(binary_data, monkeypatch, tmp_path):
    wrap_planned_spends(monkeypatch)
    result = plan(binary_data, {"eta0": [0.5, 2.0]}, TrialDistribution.make("logarithmic", 3.0))
    check_total(result)
    budget = PrivacyBudget(EPSILON, DELTA, path=tmp_path / "ledger.skdp")
    record = budget.charge(result.spend, estimator="DPRandomizedSearchCV")
    assert record.epsilon == pytest.approx(result.epsilon, rel=1e-9)
    totals = budget.totals()
    assert totals.extra_delta == pytest.approx(result.extra_delta, rel=1e-12)
    assert totals.events_delta == pytest.approx(DELTA - result.extra_delta, rel=1e-11)
    assert budget.history()[0].event == result.spend


def test_exhaustive_search_composes_every_candidate_as_atoms(binary_data, monkeypatch):
    wrap_planned_spends(monkeypatch)
    result = plan(binary_data, {"eta0": [0.5, 1.0, 2.0]}, None)
    # Every trial runs: 3 candidates + the refit, each an atom SHARE * trial_delta.
    p = SHARE * result.trial_delta
    assert result.extra_delta == pytest.approx(1 - (1 - p) ** 4, rel=1e-9)
    assert result.extra_delta == pytest.approx(ATOM_SHARE * DELTA, rel=1e-3)
    check_total(result, additive=False)
    parts = result.spend.spend.events
    assert len(parts) == 2  # the composed trials (one group of 3), then the refit


def test_poisson_without_refit(binary_data, monkeypatch):
    wrap_planned_spends(monkeypatch)
    result = plan(
        binary_data, {"C": [0.1, 1.0]}, TrialDistribution.make("poisson", 5.0), refit=False
    )
    assert result.planned_refit == {}
    assert result.extra_delta == pytest.approx(5 * SHARE * result.trial_delta, rel=1e-9)
    check_total(result)


def test_extra_deltas_that_do_not_scale_are_paid_as_they_are(binary_data, monkeypatch):
    # A fixed extra delta: lowering the trials' delta does not help, so it is left alone.
    wrap_planned_spends(monkeypatch, fixed=1e-6)
    trials = TrialDistribution.make("geometric", 4.0)
    result = plan(binary_data, {"eta0": [0.5, 2.0]}, trials)
    assert result.trial_delta == DELTA
    assert result.extra_delta == pytest.approx(5e-6, rel=1e-9)
    check_total(result)
    # ... and when they reach delta, the search is refused before anything is calibrated.
    wrap_planned_spends(monkeypatch, fixed=2e-6)
    with pytest.raises(SearchTooExpensive, match="extra deltas"):
        plan(binary_data, {"eta0": [0.5, 2.0]}, trials)


def test_zero_extra_deltas_plan_exactly_as_plain_spends(binary_data, monkeypatch):
    trials = TrialDistribution.make("geometric", 4.0)
    plain = plan(binary_data, {"eta0": [0.5, 2.0]}, trials)
    assert plain.trial_delta == DELTA and plain.extra_delta == 0.0
    assert not isinstance(plain.spend, WithExtraDelta)
    wrap_planned_spends(monkeypatch, fixed=0.0)
    wrapped = plan(binary_data, {"eta0": [0.5, 2.0]}, trials)
    assert wrapped.spend == plain.spend
    assert (wrapped.trial_epsilon, wrapped.epsilon, wrapped.trial_delta) == (
        plain.trial_epsilon, plain.epsilon, plain.trial_delta)
    key = candidate_key({"eta0": 0.5})
    assert wrapped.planned_fit[key] == WithExtraDelta(plain.planned_fit[key], 0.0)


def test_search_extra_delta_formula():
    g = dp_accounting.GaussianDpEvent(3.0)
    events = SearchEvents(
        (WithExtraDelta(g, 1e-7), g), (2, 3), (WithExtraDelta(g, 3e-7), g)
    )
    exhaustive = 1 - (1 - 1e-7) ** 2 * (1 - 3e-7)  # atoms: the two candidates, the refit
    assert search_extra_delta(events, None) == pytest.approx(exhaustive, rel=1e-11)
    assert search_extra_delta(events, None) >= exhaustive  # rounded up, never down
    trials = TrialDistribution.make("negative_binomial", 5.0, 0.5)
    assert search_extra_delta(events, trials) == pytest.approx(5 * 1e-7 + 3e-7, rel=1e-11)
    no_refit = SearchEvents(events.fits, events.counts, ())
    assert search_extra_delta(no_refit, trials) == pytest.approx(5e-7, rel=1e-11)
    plain = SearchEvents((g, g), (2, 3), (g,))
    assert search_extra_delta(plain, trials) == 0.0
    spend, curve = search_spend(plain, 2.0, trials)
    assert isinstance(spend, dp_accounting.DpEvent)
    wrapped, wrapped_curve = search_spend(events, 2.0, trials)
    assert wrapped.spend == spend and np.array_equal(curve, wrapped_curve)
    assert search_epsilon(curve, 1e-5, 0.0) == pytest.approx(
        RdpAccountant().compose(spend).get_epsilon(1e-5), rel=1e-12)
    assert search_epsilon(curve, 1e-5, 1e-5) == math.inf
    with pytest.raises(TypeError, match="DpEvents"):
        search_extra_delta(SearchEvents(("not an event",), (1,), ()), trials)
