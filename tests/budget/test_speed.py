"""Tests of how the ledger stays fast: RDP first, composition outside the write lock, composed
states stored in the file, and a vectorised epsilon of a PLD.

Each test can fail if its mechanism breaks: the stored state is used (composition is made to
fail and the reopened ledger still answers), it is checked against the rows (an edited row is
not covered by it), an optimistic charge that lost the race is decided again on the new rows,
and the vectorised epsilon equals dp_accounting's own.
"""

from __future__ import annotations

import math
import multiprocessing
import sqlite3

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant, privacy_loss_distribution
from dp_accounting.rdp import RdpAccountant

from skdp.budget import BudgetExceededError, LedgerError, PrivacyBudget, _charging, _sync
from skdp.budget._composition import Composer
from skdp.budget._pld import PayloadError, epsilon_for_delta, pld_from_payload, pld_to_payload
from skdp.budget._pld_composition import PldComposer

from ._helpers import dpsgd, forget_cached_states, needs_fork

DELTA = 1e-5



# --- vectorised epsilon of a PLD --------------------------------------------------------------


def _plds():
    add_remove = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    replace = dp_accounting.NeighboringRelation.REPLACE_ONE
    sampled = PLDAccountant(add_remove, value_discretization_interval=1e-3)
    sampled.compose(dpsgd(0.02, 1.0, 300))  # asymmetric (add and remove differ), dense
    gaussian = PLDAccountant(replace, value_discretization_interval=1e-3)
    gaussian.compose(dp_accounting.GaussianDpEvent(2.0))  # symmetric
    response = PLDAccountant(replace, value_discretization_interval=1e-3)
    response.compose(dp_accounting.RandomizedResponseDpEvent(0.3, 4))  # sparse
    atom = privacy_loss_distribution.from_privacy_parameters(
        privacy_loss_distribution.common.DifferentialPrivacyParameters(0.5, 1e-3),
        value_discretization_interval=1e-3,
    ).compose(gaussian._pld)  # an infinity mass
    return {"sampled": sampled._pld, "gaussian": gaussian._pld, "response": response._pld,
            "with_infinity_mass": atom}


@pytest.mark.parametrize("name", ["sampled", "gaussian", "response", "with_infinity_mass"])
def test_vectorised_epsilon_equals_dp_accounting(name):
    pld = _plds()[name]
    for delta in (1e-12, 1e-5, 1e-3, 0.1, 0.5, 0.99):
        expected = pld.get_epsilon_for_delta(delta)
        got = epsilon_for_delta(pld, delta)
        if math.isinf(expected) or expected == 0.0:
            assert got == expected, delta
        else:  # never below dp_accounting's, and equal to its last bits
            assert expected <= got <= expected * (1 + 2e-12), delta


def test_stored_pld_round_trips_and_bad_payloads_are_refused():
    for pld in _plds().values():
        header, data = pld_to_payload(pld)
        again = pld_from_payload(header, data)
        assert again.get_epsilon_for_delta(DELTA) == pld.get_epsilon_for_delta(DELTA)
        assert again.get_delta_for_epsilon(0.5) == pld.get_delta_for_epsilon(0.5)
    header, data = pld_to_payload(_plds()["sampled"])
    for bad_header, bad_data in [(header, data[:-8]), (header, data + b"\0" * 8),
                                 ("{", data), ('{"pmfs": []}', b""),
                                 (header.replace('"dense"', '"other"'), data)]:
        with pytest.raises(PayloadError):
            pld_from_payload(bad_header, bad_data)


# --- RDP first ----------------------------------------------------------------------------------


def test_charges_far_from_the_limit_compose_no_pld(ledger_path, monkeypatch):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    plan = dpsgd(0.01, 2.0, 200)
    budget.charge(plan, estimator="warm")  # the plan's own PLD is made (and memoised) once
    calls = []
    original = Composer.extend_pld
    monkeypatch.setattr(Composer, "extend_pld",
                        lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    for _ in range(5):
        budget.charge(plan, estimator="e")
    assert calls == []  # decided by RDP alone
    totals = budget.totals()  # a read composes the PLD, as tight as before
    assert calls and totals.accountant == "pld" and totals.pld_epsilon < totals.rdp_epsilon


def test_near_the_limit_the_pld_decides(ledger_path):
    # RDP says the second spend does not fit; PLD (tighter) says it does.
    budget = PrivacyBudget(0.83, DELTA, path=ledger_path)
    plan = dp_accounting.GaussianDpEvent(6.5)
    budget.charge(plan, estimator="e")
    totals = budget.check(plan)
    assert totals.rdp_epsilon > 0.83 >= totals.pld_epsilon
    budget.charge(plan, estimator="e")
    assert budget.spent()[0] == pytest.approx(totals.epsilon, rel=1e-12)
    with pytest.raises(BudgetExceededError):
        budget.charge(plan, estimator="e")
    assert len(budget.history()) == 2


# --- composed states stored in the file ---------------------------------------------------------


def _fill(budget: PrivacyBudget) -> None:
    for i in range(5):
        budget.charge(dp_accounting.GaussianDpEvent(4.0 + i), estimator="e", params={"i": i})
    budget.charge(dpsgd(0.05, 3.0, 10), estimator="e", params={"i": 5})


def _no_composition(monkeypatch) -> None:
    def fail(*args, **kwargs):
        raise AssertionError("recomposed although the file holds the composed state")

    monkeypatch.setattr(Composer, "prepare", fail)
    monkeypatch.setattr(PldComposer, "event_pld", fail)


def _assert_recomposes(monkeypatch, read) -> None:
    """``read()`` on a freshly opened ledger must not trust the stored state: it composes."""
    forget_cached_states()
    with monkeypatch.context() as patch:
        _no_composition(patch)
        with pytest.raises(AssertionError, match="recomposed"):
            read()
    forget_cached_states()


def test_reopened_ledger_uses_the_stored_state(ledger_path, monkeypatch):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    _fill(budget)
    totals = budget.totals()  # stores the composed PLD as well
    forget_cached_states()
    with monkeypatch.context() as patch:
        _no_composition(patch)
        reopened = PrivacyBudget.open(ledger_path)
        assert reopened.totals() == totals  # identical, not recomputed
        assert reopened.spent() == budget.spent()
    fresh = PLDAccountant(value_discretization_interval=totals.pld_interval)
    for record in budget.history():
        fresh.compose(record.event)
    assert totals.pld_epsilon == pytest.approx(fresh.get_epsilon(DELTA), rel=1e-9)


def test_stored_state_is_checked_against_the_rows(ledger_path, monkeypatch):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    _fill(budget)
    budget.totals()
    # Edit a covered row by hand: the stored states no longer hash with the rows.
    conn = sqlite3.connect(ledger_path)
    conn.execute("DROP TRIGGER spends_no_update")
    edited = '{"dp_event":"GaussianDpEvent","fields":{"noise_multiplier":3.0}}'
    conn.execute("UPDATE spends SET spend = ? WHERE id = 2", (edited,))
    conn.commit()
    conn.close()
    _assert_recomposes(monkeypatch, lambda: PrivacyBudget.open(ledger_path).totals())
    totals = PrivacyBudget.open(ledger_path).totals()
    fresh = PLDAccountant(value_discretization_interval=totals.pld_interval)
    for record in PrivacyBudget.open(ledger_path).history():
        fresh.compose(record.event)
    assert totals.pld_epsilon == pytest.approx(fresh.get_epsilon(DELTA), rel=1e-9)


def test_stored_state_of_another_format_is_not_used(ledger_path, monkeypatch):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    _fill(budget)
    before = budget.totals()
    conn = sqlite3.connect(ledger_path)
    conn.execute("UPDATE composed SET format = 'skdp.budget composed v0'")
    conn.commit()
    conn.close()
    _assert_recomposes(monkeypatch, lambda: PrivacyBudget.open(ledger_path).spent())
    assert PrivacyBudget.open(ledger_path).totals() == before


def test_a_ledger_without_the_cache_table_gets_one(ledger_path):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    budget.charge(dp_accounting.GaussianDpEvent(5.0), estimator="e")
    conn = sqlite3.connect(ledger_path)
    conn.execute("DROP TABLE composed")  # as written by skdp before the cache
    conn.commit()
    conn.close()
    forget_cached_states()
    old = PrivacyBudget.open(ledger_path)
    before = old.spent()
    old.charge(dp_accounting.GaussianDpEvent(5.0), estimator="e")
    assert old.spent()[0] > before[0]
    conn = sqlite3.connect(ledger_path)
    assert conn.execute("SELECT part, count FROM composed ORDER BY part").fetchall() == [
        ("pld", 2), ("rdp", 2)]
    conn.close()


# --- charging outside the write lock ------------------------------------------------------------


def test_a_charge_that_lost_the_race_is_decided_on_the_new_rows(ledger_path, monkeypatch):
    # Each spend fits alone, two do not. A second process charges while the first composes:
    # the first must see that spend, and be refused.
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    plan = dp_accounting.GaussianDpEvent(5.0)
    assert budget.check(plan).epsilon < 1.0
    with pytest.raises(BudgetExceededError):
        budget.check(dp_accounting.ComposedDpEvent([plan, plan]))
    other = PrivacyBudget.open(ledger_path)
    original = _charging.decide
    raced = []

    def decide_while_another_charges(*args, **kwargs):
        result = original(*args, **kwargs)
        if not raced:
            raced.append(1)
            other.charge(plan, estimator="other")  # lands between compose and insert
        return result

    monkeypatch.setattr(_charging, "decide", decide_while_another_charges)
    with pytest.raises(BudgetExceededError):
        budget.charge(plan, estimator="first")
    assert [r.estimator for r in budget.history()] == ["other"]


def test_charges_still_work_when_every_optimistic_try_loses(ledger_path, monkeypatch):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    other = PrivacyBudget.open(ledger_path)
    original = _charging.decide
    locked = []

    def decide_and_race(ledger, *args, **kwargs):
        result = original(ledger, *args, **kwargs)
        if ledger is budget._file:
            if _in_write_transaction(budget):
                locked.append(1)
            else:
                other.charge(dp_accounting.GaussianDpEvent(50.0), estimator="other")
        return result

    monkeypatch.setattr(_charging, "decide", decide_and_race)
    budget.charge(dp_accounting.GaussianDpEvent(20.0), estimator="first")
    history = budget.history()
    assert locked == [1]  # decided inside the lock after the optimistic tries
    assert [r.estimator for r in history] == ["other"] * _sync._OPTIMISTIC_TRIES + ["first"]
    fresh = PLDAccountant(value_discretization_interval=budget.totals().pld_interval)
    for record in history:
        fresh.compose(record.event)
    assert budget.spent()[0] == pytest.approx(fresh.get_epsilon(DELTA), rel=1e-9)


def _in_write_transaction(budget: PrivacyBudget) -> bool:
    probe = sqlite3.connect(budget.path, timeout=0.0)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        probe.close()


def _charge_many(path: str, worker: int, n: int) -> None:
    budget = PrivacyBudget.open(path, timeout=30.0)
    for i in range(n):
        budget.charge(dp_accounting.GaussianDpEvent(20.0 + i % 3), estimator=f"w{worker}",
                      params={"i": i})


def _run_processes(path: str, n_processes: int, n_charges: int) -> list[int]:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_charge_many, args=(path, w, n_charges))
               for w in range(n_processes)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=600)
    return [p.exitcode for p in workers]


def _check_all_recorded(budget: PrivacyBudget, n_processes: int, n_charges: int) -> None:
    history = budget.history()
    assert [r.id for r in history] == list(range(1, n_processes * n_charges + 1))
    for w in range(n_processes):
        mine = [r.params["i"] for r in history if r.estimator == f"w{w}"]
        assert mine == list(range(n_charges))
    forget_cached_states()  # the composed state stored by the workers against a fresh one
    totals = PrivacyBudget.open(budget.path).totals()
    fresh = RdpAccountant()
    for record in history:
        fresh.compose(record.event)
    assert totals.rdp_epsilon == pytest.approx(fresh.get_epsilon(DELTA), rel=1e-9)


@needs_fork
def test_concurrent_processes_all_record(ledger_path):
    budget = PrivacyBudget(50.0, DELTA, path=ledger_path)
    assert _run_processes(ledger_path, 3, 5) == [0, 0, 0]
    _check_all_recorded(budget, 3, 5)


@pytest.mark.slow
@needs_fork
def test_eight_processes_times_a_hundred_charges_all_record(ledger_path):
    budget = PrivacyBudget(500.0, DELTA, path=ledger_path, timeout=30.0)
    assert _run_processes(ledger_path, 8, 100) == [0] * 8
    _check_all_recorded(budget, 8, 100)


def test_file_replaced_between_compose_and_insert_is_noticed(ledger_path, tmp_path, monkeypatch):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    budget.charge(dp_accounting.GaussianDpEvent(5.0), estimator="e")
    original = _charging.decide

    def decide_and_replace(*args, **kwargs):
        result = original(*args, **kwargs)
        other = tmp_path / "other.skdp"
        PrivacyBudget(10.0, DELTA, path=other)
        np.testing.assert_equal(other.exists(), True)
        other.replace(ledger_path)
        return result

    monkeypatch.setattr(_charging, "decide", decide_and_replace)
    with pytest.raises(LedgerError, match="replaced"):
        budget.charge(dp_accounting.GaussianDpEvent(5.0), estimator="e")
