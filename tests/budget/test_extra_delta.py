"""Spends with an extra delta (skdp.budget.WithExtraDelta) in the privacy ledger.

A mechanism ``spend`` composed with a (0, p)-DP part satisfies ``delta(eps) = p + (1 - p) *
delta_spend(eps)``; several compose as ``P = 1 - prod(1 - p_k)`` with the events composed as
usual, so the ledger's epsilon is the events' epsilon at ``(delta - P) / (1 - P)``. Additive
terms (a private search's) are taken off delta without the ``1 - P`` factor. These tests check
the formula against dp_accounting's PLD, the ledger against fresh accountants, the codec, the
refusals and the sharing between processes.
"""

from __future__ import annotations

import json
import math
import multiprocessing

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant, common, privacy_loss_distribution
from dp_accounting.rdp import RdpAccountant

from skdp.accounting._rdp_orders import DEFAULT_ORDERS
from skdp.budget import (
    BudgetExceededError,
    PrivacyBudget,
    RdpCurve,
    WithExtraDelta,
)
from skdp.budget._codec import CodecError, decode_spend, encode_spend
from skdp.budget._records import events_delta

from ._helpers import dpsgd, forget_cached_states, needs_fork

DELTA = 1e-5
def inner(spend):
    return spend.spend if isinstance(spend, WithExtraDelta) else spend


# --- the delta formula itself -----------------------------------------------------------------


@pytest.mark.parametrize("p", [1e-7, 1e-6, 3e-3])
def test_an_atom_composes_as_p_plus_one_minus_p_times_delta(p):
    # The (0, p) part is a post-processing of the worst-case (0, p) pair, whose PLD (in
    # dp_accounting: from_privacy_parameters) is an atom p at +inf and 1 - p at 0. Composed with
    # any PLD it gives p + (1 - p) * delta(eps) at every eps: this is why the ledger's formula
    # is exact, not only a bound.
    gaussian = privacy_loss_distribution.from_gaussian_mechanism(
        5.0, value_discretization_interval=1e-4
    )
    atom = privacy_loss_distribution.from_privacy_parameters(
        common.DifferentialPrivacyParameters(0.0, p), value_discretization_interval=1e-4
    )
    both = gaussian.compose(atom)
    for epsilon in (0.0, 0.3, 1.0, 2.5):
        delta_g = gaussian.get_delta_for_epsilon(epsilon)
        assert both.get_delta_for_epsilon(epsilon) == pytest.approx(
            p + (1 - p) * delta_g, rel=1e-9, abs=1e-15
        )
    # The spec's worked value: sigma 5, p = 1e-7, delta(1) = 1.175463e-7.
    if p == 1e-7:
        assert both.get_delta_for_epsilon(1.0) == pytest.approx(1.175463e-7, rel=1e-6)
    # ... so the epsilon at delta is the Gaussian's at (delta - p) / (1 - p).
    target = 1e-3 if p == 3e-3 else 1e-5
    if p < target:
        assert both.get_epsilon_for_delta(target) == pytest.approx(
            gaussian.get_epsilon_for_delta((target - p) / (1 - p)), rel=1e-9
        )


def test_events_delta():
    assert events_delta(DELTA, 0.0, 0.0) == DELTA  # exactly: plain ledgers are unchanged
    p = 1e-6
    assert events_delta(DELTA, p, 0.0) == pytest.approx((DELTA - p) / (1 - p), rel=1e-11)
    assert events_delta(DELTA, p, 0.0) < (DELTA - p) / (1 - p)  # rounded the safe way
    assert events_delta(DELTA, 0.0, p) == pytest.approx(DELTA - p, rel=1e-11)
    assert events_delta(DELTA, p, 2e-6) == pytest.approx((DELTA - 3e-6) / (1 - p), rel=1e-11)
    assert events_delta(DELTA, DELTA, 0.0) == 0.0
    assert events_delta(DELTA, 0.0, 2 * DELTA) == 0.0
    assert WithExtraDelta(dp_accounting.GaussianDpEvent(1.0), p).events_delta(DELTA) == (
        events_delta(DELTA, p, 0.0)
    )
    assert WithExtraDelta(dp_accounting.GaussianDpEvent(1.0), p, additive=True).events_delta(
        DELTA
    ) == events_delta(DELTA, 0.0, p)


# --- the type and its encoding ----------------------------------------------------------------


def test_validation():
    event = dp_accounting.GaussianDpEvent(2.0)
    spend = WithExtraDelta(event, np.float32(0.25))
    assert spend.extra_delta == 0.25 and type(spend.extra_delta) is float
    assert not spend.additive
    assert WithExtraDelta(event, 0) == WithExtraDelta(event, 0.0)
    with pytest.raises(TypeError, match="another WithExtraDelta"):
        WithExtraDelta(spend, 0.1)
    with pytest.raises(TypeError, match="DpEvent"):
        WithExtraDelta("GaussianDpEvent(2.0)", 0.1)
    for bad in (True, "0.1", None):
        with pytest.raises(TypeError, match="real number"):
            WithExtraDelta(event, bad)
    for bad in (math.nan, math.inf, -math.inf, -1e-12, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"\[0, 1\)"):
            WithExtraDelta(event, bad)
    with pytest.raises(TypeError, match="additive"):
        WithExtraDelta(event, 0.1, additive=1)
    hash(spend)  # frozen: usable as a key


CODEC_EXAMPLES = [
    WithExtraDelta(dp_accounting.GaussianDpEvent(5.0), 1e-7),
    WithExtraDelta(dpsgd(0.01, 1.1, 20), 0.0),
    WithExtraDelta(dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(3.0), dpsgd(0.02, 2.0, 7)]), 0.3),
    WithExtraDelta(RdpCurve([2.0, 4.0], [0.1, math.inf]), 1e-6, additive=True),
    WithExtraDelta(dp_accounting.dp_event.RepeatAndSelectDpEvent(dpsgd(0.01, 1.1, 20), 3.0, 1.0),
                   2.5e-7, additive=True),
]


@pytest.mark.parametrize("spend", CODEC_EXAMPLES, ids=range(len(CODEC_EXAMPLES)))
def test_codec_round_trip(spend):
    text = encode_spend(spend)
    assert "with_extra_delta" in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    decoded = decode_spend(text)
    assert decoded == spend and type(decoded.spend) is type(spend.spend)
    assert encode_spend(decoded) == text


def _wrapped(**fields) -> str:
    base = {
        "additive": False,
        "extra_delta": 1e-7,
        "spend": {"dp_event": "GaussianDpEvent", "fields": {"noise_multiplier": 5.0}},
    }
    base.update(fields)
    return json.dumps({"with_extra_delta": {k: v for k, v in base.items() if v is not ...}})


@pytest.mark.parametrize(
    "text",
    [
        _wrapped(extra_delta=...),
        _wrapped(additive=...),
        _wrapped(spend=...),
        _wrapped(extra_delta="1e-7"),
        _wrapped(extra_delta=True),
        _wrapped(extra_delta={"$float": "nan"}),
        _wrapped(extra_delta={"$float": "inf"}),
        _wrapped(extra_delta=-1e-7),
        _wrapped(extra_delta=1.0),
        _wrapped(additive=0),
        _wrapped(additive="false"),
        _wrapped(spend={"dp_event": "Popen", "fields": {"args": "rm -rf /"}}),
        _wrapped(spend=[1, 2]),
        _wrapped(spend=json.loads(_wrapped())),  # nested
        json.dumps({"with_extra_delta": {**json.loads(_wrapped())["with_extra_delta"], "x": 1}}),
        json.dumps({"with_extra_delta": [1e-7]}),
        json.dumps({"with_extra_delta": json.loads(_wrapped())["with_extra_delta"], "x": 1}),
    ],
)
def test_codec_refuses_malformed_spends_with_extra_delta(text):
    with pytest.raises(CodecError):
        decode_spend(text)


# --- composition ------------------------------------------------------------------------------


MIXED = [
    dpsgd(0.01, 2.0, 300),
    WithExtraDelta(dp_accounting.GaussianDpEvent(10.0), 1e-7),
    dp_accounting.GaussianDpEvent(20.0),
    WithExtraDelta(dpsgd(0.02, 3.0, 200), 4e-7),
    WithExtraDelta(dp_accounting.GaussianDpEvent(15.0), 0.0),
]


def _charge_all(budget, spends):
    return [budget.charge(s, estimator=f"e{i}") for i, s in enumerate(spends)]


def test_mixed_spends_compose_as_fresh_accountants_at_the_reduced_delta(ledger_path):
    budget = PrivacyBudget(5.0, DELTA, path=ledger_path)
    _charge_all(budget, MIXED)
    totals = budget.totals()
    p = 1 - (1 - 1e-7) * (1 - 4e-7)
    reduced = (DELTA - p) / (1 - p)
    assert totals.extra_delta == pytest.approx(p, rel=1e-12)
    assert totals.events_delta == pytest.approx(reduced, rel=1e-11)
    assert totals.events_delta <= reduced
    pld = PLDAccountant(value_discretization_interval=totals.pld_interval)
    rdp = RdpAccountant()
    for spend in MIXED:
        pld.compose(inner(spend))
        rdp.compose(inner(spend))
    assert totals.n_spends == len(MIXED) and totals.accountant == "pld"
    assert totals.pld_epsilon == pytest.approx(pld.get_epsilon(reduced), rel=1e-9)
    assert totals.rdp_epsilon == pytest.approx(rdp.get_epsilon(reduced), rel=1e-9)
    assert totals.epsilon == min(totals.pld_epsilon, totals.rdp_epsilon)
    # The extra delta costs something: more than the same events at the full delta.
    assert totals.pld_epsilon > pld.get_epsilon(DELTA)
    assert budget.spent() == (totals.epsilon, DELTA)
    assert budget.remaining() == pytest.approx(5.0 - totals.epsilon)
    # The incremental state equals a fresh composition: another handle, then a fresh process.
    assert PrivacyBudget.open(ledger_path).totals() == totals
    forget_cached_states()
    assert PrivacyBudget.open(ledger_path).totals() == totals


def test_incremental_extension_equals_fresh_composition(ledger_path):
    budget = PrivacyBudget(5.0, DELTA, path=ledger_path)
    _charge_all(budget, MIXED[:2])
    budget.totals()  # cached state after two spends
    other = PrivacyBudget.open(ledger_path)  # the same process cache, extended below
    _charge_all(other, MIXED[2:])
    extended = budget.totals()
    forget_cached_states()
    fresh = PrivacyBudget.open(ledger_path).totals()
    assert extended == fresh
    # and check() on a new spend agrees with charging it
    spend = WithExtraDelta(dp_accounting.GaussianDpEvent(12.0), 2e-7)
    checked = other.check(spend)
    other.charge(spend, estimator="last")
    assert PrivacyBudget.open(ledger_path).totals() == checked


def test_history_and_own_epsilon(ledger_path):
    budget = PrivacyBudget(5.0, DELTA, path=ledger_path)
    records = _charge_all(budget, MIXED)
    history = budget.history()
    assert [r.event for r in history] == MIXED
    assert [r.epsilon for r in history] == [r.epsilon for r in records]
    for record, spend in zip(history, MIXED, strict=True):
        p = spend.extra_delta if isinstance(spend, WithExtraDelta) else 0.0
        alone = RdpAccountant().compose(inner(spend)).get_epsilon((DELTA - p) / (1 - p))
        assert record.delta == DELTA
        assert record.epsilon <= alone * (1 + 1e-9)  # PLD alone is at most RDP alone
    # Composed alone, a record's epsilon is its inner event's at (delta - p) / (1 - p): more
    # than the same event without the extra delta.
    gaussian = dp_accounting.GaussianDpEvent(10.0)
    at_reduced = PLDAccountant().compose(gaussian).get_epsilon((DELTA - 1e-7) / (1 - 1e-7))
    assert history[1].epsilon == pytest.approx(at_reduced, rel=2e-3)
    assert history[1].epsilon > PLDAccountant().compose(gaussian).get_epsilon(DELTA)


def test_additive_terms_are_taken_off_delta_without_the_atom_factor(ledger_path):
    search = WithExtraDelta(dp_accounting.GaussianDpEvent(8.0), 2e-6, additive=True)
    atom = WithExtraDelta(dp_accounting.GaussianDpEvent(9.0), 1e-6)
    budget = PrivacyBudget(5.0, DELTA, path=ledger_path)
    budget.charge(search, estimator="DPRandomizedSearchCV")
    assert budget.totals().events_delta == pytest.approx(DELTA - 2e-6, rel=1e-11)
    budget.charge(atom, estimator="pipeline")
    totals = budget.totals()
    expected = (DELTA - 2e-6 - 1e-6) / (1 - 1e-6)  # H + P_a + (1 - P_a) delta_events
    assert totals.extra_delta == pytest.approx(3e-6, rel=1e-12)
    assert totals.events_delta == pytest.approx(expected, rel=1e-11)
    fresh = RdpAccountant().compose(dp_accounting.GaussianDpEvent(8.0)).compose(
        dp_accounting.GaussianDpEvent(9.0))
    assert totals.rdp_epsilon == pytest.approx(fresh.get_epsilon(expected), rel=1e-9)
    forget_cached_states()
    assert PrivacyBudget.open(ledger_path).totals() == totals


def test_rdp_curves_with_extra_delta_compose_with_rdp(ledger_path):
    sigma = 4.0
    orders = np.asarray(DEFAULT_ORDERS)
    curve = RdpCurve(orders, orders / (2 * sigma**2))
    budget = PrivacyBudget(5.0, DELTA, path=ledger_path)
    budget.charge(WithExtraDelta(curve, 1e-6), estimator="e")
    budget.charge(dp_accounting.GaussianDpEvent(sigma), estimator="e")
    reduced = (DELTA - 1e-6) / (1 - 1e-6)
    fresh = RdpAccountant().compose(dp_accounting.GaussianDpEvent(sigma), 2).get_epsilon(reduced)
    totals = budget.totals()
    assert totals.accountant == "rdp" and totals.pld_interval is None
    assert totals.epsilon == pytest.approx(fresh, rel=1e-9)


# --- refusals ---------------------------------------------------------------------------------


def test_an_extra_delta_reaching_the_budget_delta_is_refused(ledger_path):
    budget = PrivacyBudget(3.0, DELTA, path=ledger_path)
    budget.charge(dp_accounting.GaussianDpEvent(10.0), estimator="kept")
    for p in (DELTA, 2 * DELTA):
        spend = WithExtraDelta(dp_accounting.GaussianDpEvent(100.0), p)
        with pytest.raises(BudgetExceededError, match="delta part of the spend alone") as info:
            budget.charge(spend, estimator="pipeline")
        assert info.value.epsilon_total == math.inf
        assert budget.would_exceed(spend)
        with pytest.raises(BudgetExceededError, match="delta part of the spend alone"):
            budget.check(spend)
    assert [r.estimator for r in budget.history()] == ["kept"]
    additive = WithExtraDelta(dp_accounting.GaussianDpEvent(100.0), DELTA, additive=True)
    with pytest.raises(BudgetExceededError, match="delta part of the spend alone"):
        budget.charge(additive, estimator="search")
    assert len(budget.history()) == 1


def test_extra_deltas_that_add_up_to_the_budget_delta_are_refused(ledger_path):
    budget = PrivacyBudget(3.0, DELTA, path=ledger_path)
    budget.charge(WithExtraDelta(dp_accounting.GaussianDpEvent(20.0), 6e-6), estimator="a")
    spend = WithExtraDelta(dp_accounting.GaussianDpEvent(20.0), 5e-6)
    assert budget.check(WithExtraDelta(dp_accounting.GaussianDpEvent(20.0), 3e-6)).epsilon < 3.0
    with pytest.raises(BudgetExceededError, match="extra deltas already recorded") as info:
        budget.charge(spend, estimator="b")
    assert info.value.epsilon_total == math.inf
    assert budget.would_exceed(spend)
    assert [r.estimator for r in budget.history()] == ["a"]
    assert budget.totals().extra_delta == pytest.approx(6e-6)


def test_epsilon_refusals_mention_the_extra_delta(ledger_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    event = dp_accounting.GaussianDpEvent(6.0)
    fits_plain = PLDAccountant().compose(event, 2).get_epsilon(DELTA)
    assert fits_plain < 1.0
    budget.charge(event, estimator="a")
    # An extra delta close to delta leaves too little delta for the second Gaussian.
    spend = WithExtraDelta(event, 0.999 * DELTA)
    with pytest.raises(BudgetExceededError, match="with an extra delta of 9.99e-06"):
        budget.charge(spend, estimator="b")
    assert len(budget.history()) == 1
    budget.charge(WithExtraDelta(event, 1e-7), estimator="c")
    assert len(budget.history()) == 2


# --- processes --------------------------------------------------------------------------------


def _charge_with_extra_delta(path: str, worker: int, n: int) -> None:
    budget = PrivacyBudget.open(path)
    for i in range(n):
        budget.charge(
            WithExtraDelta(dp_accounting.GaussianDpEvent(30.0 + worker), 1e-8 * (worker + 1)),
            estimator=f"worker{worker}", params={"i": i},
        )


@needs_fork
def test_concurrent_processes_charge_extra_deltas(ledger_path):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    budget.totals()  # a cached state that the workers' spends make stale
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_charge_with_extra_delta, args=(ledger_path, w, 5))
        for w in range(2)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
    assert [p.exitcode for p in workers] == [0, 0]
    history = budget.history()
    assert len(history) == 10 and [r.id for r in history] == list(range(1, 11))
    totals = budget.totals()
    p = 1 - (1 - 1e-8) ** 5 * (1 - 2e-8) ** 5
    assert totals.extra_delta == pytest.approx(p, rel=1e-9)
    fresh = PLDAccountant(value_discretization_interval=totals.pld_interval)
    for record in history:
        fresh.compose(record.event.spend)
    assert totals.pld_epsilon == pytest.approx(fresh.get_epsilon((DELTA - p) / (1 - p)), rel=1e-9)
    forget_cached_states()
    assert PrivacyBudget.open(ledger_path).totals() == totals
