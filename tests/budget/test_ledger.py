"""Tests of the persistent privacy budget ledger (skdp.budget).

The ledger must refuse what does not fit and record nothing then, compose exactly as
dp_accounting does, be shared (not copied) by clones, pickles and other processes, survive a
kill -9 in the middle of a charge, and never reset or overwrite a file it does not recognise.
"""

from __future__ import annotations

import copy
import json
import math
import multiprocessing
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import dp_accounting
import numpy as np
import pytest
from dp_accounting.dp_event import (
    DiscreteLaplaceDpEvent,
    MixtureOfGaussiansDpEvent,
    RepeatAndSelectDpEvent,
)
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant
from sklearn.base import BaseEstimator, clone

import skdp
from skdp.accounting import PrivacyPlan, calibrate
from skdp.accounting._rdp_orders import DEFAULT_ORDERS
from skdp.budget import (
    SUPPORTED_EVENT_CLASSES,
    BudgetExceededError,
    LedgerError,
    PrivacyBudget,
    RdpCurve,
    _charging,
    current_budget,
)
from skdp.budget._codec import CodecError, decode_spend, encode_spend
from skdp.budget._rdp import curve_on_orders

from ._helpers import dpsgd, forget_cached_states, needs_fork

DELTA = 1e-5



# --- refusing and charging --------------------------------------------------------------------


def test_refused_charge_records_nothing(ledger_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    small = budget.charge(dp_accounting.GaussianDpEvent(10.0), estimator="Small")
    before = budget.spent()
    with pytest.raises(BudgetExceededError) as info:
        budget.charge(dp_accounting.GaussianDpEvent(1.0), estimator="DPLogisticRegression")
    error = info.value
    assert isinstance(error, ValueError)
    message = str(error)
    assert "DPLogisticRegression" in message and "Nothing was recorded" in message
    assert f"the budget's epsilon minus that: {1.0 - small.epsilon:.4g}" in message
    assert "may still fit" in message
    assert f"epsilon={error.epsilon_requested:.4g} on its own" in message
    assert error.epsilon_requested > 1.0 and error.epsilon_total > 1.0
    assert error.epsilon_remaining == pytest.approx(1.0 - small.epsilon)
    assert [r.estimator for r in budget.history()] == ["Small"]
    assert budget.spent() == before
    forget_cached_states()  # the file itself holds one spend, not just this process's cache
    assert [r.estimator for r in PrivacyBudget.open(ledger_path).history()] == ["Small"]
    # A refused spend is not "half recorded": the next spend that fits still goes through.
    budget.charge(dp_accounting.GaussianDpEvent(10.0), estimator="Small")
    assert len(budget.history()) == 2


def test_check_and_would_exceed_are_read_only(ledger_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    fits, too_big = dp_accounting.GaussianDpEvent(10.0), dp_accounting.GaussianDpEvent(1.0)
    assert not budget.would_exceed(fits)
    assert budget.would_exceed(too_big)
    assert budget.check(fits).epsilon == pytest.approx(budget.charge(fits, estimator="e").epsilon)
    with pytest.raises(BudgetExceededError):
        budget.check(too_big)
    assert len(budget.history()) == 1


def test_history_records_everything_about_a_spend(ledger_path):
    budget = PrivacyBudget(3.0, DELTA, path=ledger_path)
    event = dpsgd(0.01, 2.0, 500)
    params = {"C": 1.0, "max_iter": 10, "classes": np.array([0, 1]), "nested": {"a": (1, 2)},
              "tol": math.inf, "estimator": object()}
    record = budget.charge(event, estimator="DPLogisticRegression", params=params,
                           mechanism="DP-SGD, Poisson sampling")
    (stored,) = budget.history()
    assert stored == record
    assert stored.event == event and stored.estimator == "DPLogisticRegression"
    assert stored.mechanism == "DP-SGD, Poisson sampling"
    assert stored.params["C"] == 1.0 and stored.params["max_iter"] == 10
    assert stored.params["nested"] == {"a": [1, 2]}
    assert stored.params["classes"] == repr(np.array([0, 1])) and stored.params["tol"] == "inf"
    assert stored.params["estimator"].startswith("<object object")
    assert stored.timestamp.endswith("+00:00")
    assert stored.delta == DELTA
    alone = PLDAccountant(value_discretization_interval=budget.totals().pld_interval)
    assert stored.epsilon == pytest.approx(alone.compose(event).get_epsilon(DELTA), rel=1e-9)


def test_unsupported_or_foreign_spends_are_refused(ledger_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    with pytest.raises(ValueError, match="supports"):
        budget.charge(dp_accounting.UnsupportedDpEvent(), estimator="e")
    with pytest.raises(TypeError, match="DpEvent"):
        budget.charge("GaussianDpEvent(1.0)", estimator="e")

    class MyGaussian(dp_accounting.GaussianDpEvent):
        pass

    with pytest.raises(TypeError, match="cannot store"):  # a subclass may mean something else
        budget.charge(MyGaussian(5.0), estimator="e")
    with pytest.raises(BudgetExceededError):  # no noise: infinite epsilon
        budget.charge(dp_accounting.NonPrivateDpEvent(), estimator="e")
    with pytest.raises(TypeError, match="estimator"):
        budget.charge(dp_accounting.GaussianDpEvent(5.0), estimator=None)
    assert budget.history() == []


def test_a_fit_calibrated_to_the_whole_budget_fits_exactly_once(ledger_path):
    calibration = calibrate(PrivacyPlan.constant(300, 0.02), 1.0, DELTA)
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    budget.charge(calibration.dp_event, estimator="DPLogisticRegression")
    assert budget.spent()[0] == pytest.approx(calibration.epsilon, rel=5e-3)
    assert budget.spent()[0] <= 1.0
    with pytest.raises(BudgetExceededError):
        budget.charge(calibration.dp_event, estimator="DPLogisticRegression")


# --- composition ------------------------------------------------------------------------------


def test_pld_totals_equal_fresh_dp_accounting_accountants(ledger_path):
    events = [
        dpsgd(0.01, 2.0, 500),
        dpsgd(0.02, 3.0, 300),
        dp_accounting.GaussianDpEvent(20.0),
        dp_accounting.ComposedDpEvent([dpsgd(0.05, 4.0, 100), dp_accounting.LaplaceDpEvent(50.0)]),
    ]
    budget = PrivacyBudget(5.0, DELTA, path=ledger_path)
    for event in events:
        budget.charge(event, estimator="e")
    totals = budget.totals()
    pld = PLDAccountant(value_discretization_interval=totals.pld_interval)
    rdp = RdpAccountant()
    for event in events:
        pld.compose(event)
        rdp.compose(event)
    assert totals.n_spends == 4 and totals.accountant == "pld"
    assert totals.pld_epsilon == pytest.approx(pld.get_epsilon(DELTA), rel=1e-9)
    assert totals.rdp_epsilon == pytest.approx(rdp.get_epsilon(DELTA), rel=1e-9)
    assert totals.epsilon == min(totals.pld_epsilon, totals.rdp_epsilon)
    assert budget.spent() == (totals.epsilon, DELTA)
    assert budget.remaining() == pytest.approx(5.0 - totals.epsilon)
    # A fresh process composes everything from the file: same numbers as the incremental state.
    forget_cached_states()
    assert PrivacyBudget.open(ledger_path).totals() == totals


def test_small_totals_are_not_overstated_under_a_large_budget(ledger_path):
    # One small fit (epsilon ~0.075) on a budget of 10: a PLD interval fixed by the budget
    # (1e-3) would report ~0.0998, a third too much. The ledger's interval follows the total.
    event = dpsgd(256 / 32561, 15.8, 2540)
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    budget.charge(event, estimator="e")
    fine = PLDAccountant(value_discretization_interval=2e-6).compose(event).get_epsilon(DELTA)
    assert fine <= budget.spent()[0] <= 1.005 * fine


def test_gaussian_spends_compose_well_below_the_sum_of_their_epsilons(ledger_path):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    records = [budget.charge(dp_accounting.GaussianDpEvent(20.0), estimator="e") for _ in range(8)]
    total = budget.spent()[0]
    assert total < 0.5 * sum(r.epsilon for r in records)
    assert total == pytest.approx(dp_accounting.get_epsilon_gaussian(20.0 / math.sqrt(8), DELTA),
                                  rel=1e-3)  # 8 Gaussians of sigma s are one of s / sqrt(8)


def test_rdp_only_events_compose_with_rdp(ledger_path):
    tuned = RepeatAndSelectDpEvent(dpsgd(0.01, 3.0, 500), 3.0, 1.0)  # PLD does not support it
    budget = PrivacyBudget(5.0, DELTA, path=ledger_path)
    budget.charge(tuned, estimator="DPGridSearchCV")
    budget.charge(dpsgd(0.01, 4.0, 200), estimator="e")
    totals = budget.totals()
    fresh = RdpAccountant().compose(tuned).compose(dpsgd(0.01, 4.0, 200)).get_epsilon(DELTA)
    assert totals.accountant == "rdp" and totals.pld_interval is None
    assert totals.pld_epsilon == math.inf
    assert totals.epsilon == pytest.approx(fresh, rel=1e-9)


def test_rdp_curves_compose_per_order_with_events(ledger_path):
    sigma = 4.0
    orders = np.asarray(DEFAULT_ORDERS)
    gaussian_curve = RdpCurve(orders, orders / (2 * sigma**2))  # the Gaussian's exact RDP
    budget = PrivacyBudget(5.0, DELTA, path=ledger_path)
    budget.charge(gaussian_curve, estimator="LastIterate")
    budget.charge(dp_accounting.GaussianDpEvent(sigma), estimator="e")
    fresh = RdpAccountant().compose(dp_accounting.GaussianDpEvent(sigma), 2).get_epsilon(DELTA)
    assert budget.totals().accountant == "rdp"
    assert budget.spent()[0] == pytest.approx(fresh, rel=1e-9)
    assert budget.history()[0].event == gaussian_curve
    # An event without RDP bound cannot join a ledger that holds RDP curves.
    with pytest.raises(ValueError, match="supports"):
        budget.charge(DiscreteLaplaceDpEvent(0.5, 1), estimator="e")
    assert len(budget.history()) == 2


def test_sparse_rdp_curves_are_evaluated_conservatively():
    curve = RdpCurve([2.0, 8.0], [0.1, 0.5])
    values = curve_on_orders(curve, [1.5, 2.0, 2.5, 8.0, 9.0])
    assert values.tolist() == [0.1, 0.1, 0.5, 0.5, math.inf]
    with pytest.raises(ValueError, match="increasing"):
        RdpCurve([4.0, 2.0], [0.1, 0.2])
    with pytest.raises(ValueError, match="> 1"):
        RdpCurve([1.0], [0.1])
    with pytest.raises(ValueError, match=">= 0"):
        RdpCurve([2.0], [-0.1])


# --- sharing: clone, copy, pickle, processes --------------------------------------------------


class _Estimator(BaseEstimator):
    def __init__(self, budget=None):
        self.budget = budget


def test_copies_and_clones_are_the_same_ledger(ledger_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    assert copy.copy(budget) is budget
    assert copy.deepcopy(budget) is budget
    assert copy.deepcopy({"budget": budget})["budget"] is budget
    assert clone(_Estimator(budget=budget)).budget is budget
    shown = repr(_Estimator(budget=budget))
    assert f"PrivacyBudget(epsilon=1.0, delta=1e-05, path={ledger_path!r})" in shown


def test_pickle_reopens_the_same_file(ledger_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    budget.charge(dp_accounting.GaussianDpEvent(10.0), estimator="SecretEstimatorName")
    data = pickle.dumps(budget)
    assert b"SecretEstimatorName" not in data  # a handle, not a copy of the records
    twin = pickle.loads(data)
    assert twin is not budget and twin == budget and hash(twin) == hash(budget)
    assert twin.path == budget.path and repr(twin) == repr(budget)
    twin.charge(dp_accounting.GaussianDpEvent(10.0), estimator="FromWorker")
    assert [r.estimator for r in budget.history()] == ["SecretEstimatorName", "FromWorker"]
    assert budget.spent() == twin.spent()


def test_a_replaced_file_is_not_taken_for_the_pickled_ledger(ledger_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    data = pickle.dumps(budget)
    os.remove(ledger_path)
    other = PrivacyBudget(1.0, DELTA, path=ledger_path)  # a new ledger at the same path
    assert other != budget
    with pytest.raises(LedgerError, match="replaced"):
        pickle.loads(data)
    with pytest.raises(LedgerError, match="replaced"):
        budget.spent()


def _same_skdp_env() -> dict[str, str]:
    """Environment for a child Python that imports this very skdp source tree."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(skdp.__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def test_spends_persist_across_processes(ledger_path):
    budget = PrivacyBudget(2.0, DELTA, path=ledger_path)
    budget.charge(dp_accounting.GaussianDpEvent(10.0), estimator="Parent")
    child = textwrap.dedent(
        f"""
        import json, dp_accounting
        from skdp.budget import PrivacyBudget
        budget = PrivacyBudget(2.0, {DELTA!r}, path={ledger_path!r})
        seen = [r.estimator for r in budget.history()]
        budget.charge(dp_accounting.GaussianDpEvent(10.0), estimator="Child")
        temporary = PrivacyBudget(1.0, 1e-6)
        print(json.dumps({{"seen": seen, "spent": budget.spent()[0], "temp": temporary.path}}))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120, check=True,
        env=_same_skdp_env(),
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["seen"] == ["Parent"]
    assert [r.estimator for r in budget.history()] == ["Parent", "Child"]
    assert budget.spent()[0] == report["spent"]  # same events, same interval, same number
    assert not os.path.exists(report["temp"])  # a temporary ledger dies with its process


def test_temporary_ledger_is_private(tmp_path):
    budget = PrivacyBudget(1.0, DELTA)
    assert os.path.exists(budget.path)
    assert os.stat(budget.path).st_mode & 0o777 == 0o600
    created = PrivacyBudget(1.0, DELTA, path=tmp_path / "new.skdp")
    assert os.stat(created.path).st_mode & 0o777 == 0o600
    assert os.listdir(tmp_path) == ["new.skdp"]  # no temporary file left behind


def _charge_many(path: str, worker: int, n: int) -> None:
    budget = PrivacyBudget.open(path)
    for i in range(n):
        budget.charge(
            dp_accounting.GaussianDpEvent(20.0 + worker), estimator=f"worker{worker}",
            params={"i": i},
        )


@needs_fork
def test_concurrent_processes_lose_no_spend(ledger_path):
    budget = PrivacyBudget(10.0, DELTA, path=ledger_path)
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_charge_many, args=(ledger_path, w, 25)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
    assert [p.exitcode for p in workers] == [0, 0, 0, 0]
    history = budget.history()
    assert [r.id for r in history] == list(range(1, 101))
    for w in range(4):
        assert sorted(r.params["i"] for r in history if r.estimator == f"worker{w}") == list(
            range(25)
        )
    totals = budget.totals()
    fresh = PLDAccountant(value_discretization_interval=totals.pld_interval)
    for record in history:
        fresh.compose(record.event)
    assert totals.pld_epsilon == pytest.approx(fresh.get_epsilon(DELTA), rel=1e-9)


def _charge_and_hang(path: str, signal_path: str) -> None:
    def hang() -> None:
        with open(signal_path, "w") as file:
            file.write("inside the transaction")
        time.sleep(60)

    _charging._TEST_HOOK_BEFORE_COMMIT = hang
    PrivacyBudget.open(path).charge(dp_accounting.GaussianDpEvent(10.0), estimator="Killed")


@needs_fork
def test_kill_9_inside_a_charge_leaves_a_consistent_ledger(ledger_path, tmp_path):
    budget = PrivacyBudget(3.0, DELTA, path=ledger_path)
    budget.charge(dp_accounting.GaussianDpEvent(10.0), estimator="Kept")
    before = budget.spent()
    signal_path = str(tmp_path / "inside")
    process = multiprocessing.get_context("fork").Process(
        target=_charge_and_hang, args=(ledger_path, signal_path)
    )
    process.start()
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(signal_path):
            assert time.monotonic() < deadline and process.is_alive()
            time.sleep(0.01)
        # The row is inserted but not committed: others see the old ledger, and writers wait.
        assert [r.estimator for r in budget.history()] == ["Kept"]
        with pytest.raises(LedgerError, match="locked"):
            PrivacyBudget.open(ledger_path, timeout=0.2).charge(
                dp_accounting.GaussianDpEvent(10.0), estimator="Blocked"
            )
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.join(timeout=30)
    assert process.exitcode == -signal.SIGKILL
    forget_cached_states()
    reopened = PrivacyBudget.open(ledger_path)  # runs SQLite's integrity check
    assert [r.estimator for r in reopened.history()] == ["Kept"]
    assert reopened.spent() == before
    reopened.charge(dp_accounting.GaussianDpEvent(10.0), estimator="After")
    assert [r.estimator for r in budget.history()] == ["Kept", "After"]


# --- files that are not (intact) ledgers ------------------------------------------------------


def _unchanged_after(path: str, action) -> None:
    with open(path, "rb") as file:
        content = file.read()
    action()
    with open(path, "rb") as file:
        assert file.read() == content


@pytest.mark.parametrize("opener", ["new", "open"])
def test_non_sqlite_and_empty_files_are_refused_untouched(tmp_path, opener):
    text, empty = tmp_path / "notes.txt", tmp_path / "empty.skdp"
    text.write_text("not a database\n" * 20)
    empty.write_bytes(b"")

    def attempt(path):
        if opener == "new":
            return lambda: PrivacyBudget(1.0, DELTA, path=path)
        return lambda: PrivacyBudget.open(path)

    with pytest.raises(LedgerError, match="not an SQLite database"):
        _unchanged_after(str(text), attempt(text))
    with pytest.raises(LedgerError, match="empty file"):
        _unchanged_after(str(empty), attempt(empty))
    with pytest.raises(LedgerError, match="no privacy ledger"):
        PrivacyBudget.open(tmp_path / "missing.skdp")


def test_sqlite_file_of_another_application_is_refused_untouched(tmp_path):
    path = str(tmp_path / "other.db")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('epsilon', '1.0')")
    conn.close()
    with pytest.raises(LedgerError, match="another application"):
        _unchanged_after(path, lambda: PrivacyBudget(1.0, DELTA, path=path))


def _ledger_with_spends(path: str, n: int = 30) -> None:
    budget = PrivacyBudget(10.0, DELTA, path=path)
    for i in range(n):
        budget.charge(dp_accounting.GaussianDpEvent(100.0), estimator="e",
                      params={"padding": "x" * 300, "i": i})


@pytest.mark.parametrize("damage", ["garbage_page", "truncated"])
def test_corrupted_ledger_is_refused_untouched(ledger_path, damage):
    _ledger_with_spends(ledger_path)
    size = os.path.getsize(ledger_path)
    assert size >= 4 * 4096
    if damage == "garbage_page":
        with open(ledger_path, "r+b") as file:
            file.seek(size - 2 * 4096)
            file.write(np.random.default_rng(0).bytes(4096))
    else:
        os.truncate(ledger_path, size - 4096 - 100)
    forget_cached_states()
    with pytest.raises(LedgerError, match="corrupted|malformed|not a readable"):
        _unchanged_after(ledger_path, lambda: PrivacyBudget.open(ledger_path))
    with pytest.raises(LedgerError):
        _unchanged_after(ledger_path, lambda: PrivacyBudget(10.0, DELTA, path=ledger_path))


def test_hostile_rows_are_never_executed(ledger_path, tmp_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    marker = tmp_path / "pwned"
    evil = json.dumps({"dp_event": "os.system", "fields": {"command": f"touch {marker}"}})
    with sqlite3.connect(ledger_path) as conn:
        conn.execute(
            "INSERT INTO spends (timestamp, estimator, params, spend, epsilon, delta, mechanism)"
            " VALUES ('t', 'e', '{}', ?, 0.1, 1e-5, '')",
            (evil,),
        )
    conn.close()
    with pytest.raises(LedgerError, match="spend #1"):
        budget.history()
    with pytest.raises(LedgerError, match="spend #1"):
        budget.spent()
    assert not marker.exists()


def test_ledger_is_append_only(ledger_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    budget.charge(dp_accounting.GaussianDpEvent(10.0), estimator="e")
    conn = sqlite3.connect(ledger_path)
    try:
        for statement in ("DELETE FROM spends", "UPDATE spends SET epsilon = 0",
                          "UPDATE meta SET value = '100' WHERE key = 'epsilon'"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(statement)
    finally:
        conn.close()
    assert len(budget.history()) == 1


# --- limits, relations, validation ------------------------------------------------------------


def test_stored_limits_are_authoritative(ledger_path):
    PrivacyBudget(1.0, DELTA, path=ledger_path).charge(
        dp_accounting.GaussianDpEvent(10.0), estimator="e"
    )
    for other in ({"epsilon": 2.0, "delta": DELTA}, {"epsilon": 1.0, "delta": 1e-6}):
        with pytest.raises(LedgerError, match=r"PrivacyBudget\.open"):
            PrivacyBudget(path=ledger_path, **other)
    reopened = PrivacyBudget(1.0, DELTA, path=ledger_path)
    adopted = PrivacyBudget.open(ledger_path)
    assert (adopted.epsilon, adopted.delta) == (1.0, DELTA)
    assert adopted == reopened and len(adopted.history()) == 1


def test_neighbouring_relation_is_fixed_and_never_converted(ledger_path, tmp_path):
    budget = PrivacyBudget(1.0, DELTA, path=ledger_path)
    with pytest.raises(ValueError, match="does not convert"):
        budget.charge(dp_accounting.GaussianDpEvent(10.0), estimator="e",
                      neighboring_relation="replace_one")
    assert budget.history() == []
    with pytest.raises(LedgerError, match="replace_one"):
        PrivacyBudget(1.0, DELTA, path=ledger_path, neighboring_relation="replace_one")

    replace = PrivacyBudget(5.0, DELTA, path=tmp_path / "replace.skdp",
                            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    assert "neighboring_relation='replace_one'" in repr(replace)
    fixed_batches = dp_accounting.SelfComposedDpEvent(
        dp_accounting.SampledWithoutReplacementDpEvent(
            1000, 50, dp_accounting.GaussianDpEvent(4.0)
        ),
        100,
    )
    with pytest.raises(ValueError, match="does not convert"):
        replace.charge(fixed_batches, estimator="e")  # the default relation is add/remove
    replace.charge(fixed_batches, estimator="e", neighboring_relation="replace_one")
    # The noise multiplier is relative to one record's contribution, so replacing a record
    # doubles the sensitivity: dp_accounting's RDP bound is fed the halved multiplier.
    halved = dp_accounting.SelfComposedDpEvent(
        dp_accounting.SampledWithoutReplacementDpEvent(
            1000, 50, dp_accounting.GaussianDpEvent(2.0)
        ),
        100,
    )
    fresh = RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    assert replace.spent()[0] == pytest.approx(
        fresh.compose(halved).get_epsilon(DELTA), rel=1e-9
    )
    with pytest.raises(ValueError, match="neighboring_relation must be one of"):
        PrivacyBudget(1.0, DELTA, neighboring_relation="swap")


@pytest.mark.parametrize(
    "epsilon, delta",
    [(0.0, DELTA), (-1.0, DELTA), (math.inf, DELTA), (math.nan, DELTA), (True, DELTA),
     ("1", DELTA), (1.0, 0.0), (1.0, 1.0), (1.0, math.nan), (1.0, -1e-5), (1.0, None)],
)
def test_invalid_limits_are_rejected(epsilon, delta, tmp_path):
    with pytest.raises((ValueError, TypeError), match="epsilon|delta"):
        PrivacyBudget(epsilon, delta, path=tmp_path / "x.skdp")
    assert not (tmp_path / "x.skdp").exists()


# --- the current budget -----------------------------------------------------------------------


def test_with_budget_sets_the_current_budget(tmp_path):
    outer = PrivacyBudget(1.0, DELTA, path=tmp_path / "outer.skdp")
    inner = PrivacyBudget(1.0, DELTA, path=tmp_path / "inner.skdp")
    assert current_budget() is None
    with outer as entered:
        assert entered is outer and current_budget() is outer
        with inner:
            assert current_budget() is inner
        assert current_budget() is outer
        seen_in_thread = []
        thread = threading.Thread(target=lambda: seen_in_thread.append(current_budget()))
        thread.start()
        thread.join()
        assert seen_in_thread == [None]  # a context variable: other threads do not see it
        with pytest.raises(RuntimeError, match="boom"), inner:
            raise RuntimeError("boom")
        assert current_budget() is outer
    assert current_budget() is None


# --- codec ------------------------------------------------------------------------------------

_INNER = dp_accounting.GaussianDpEvent(1.5)
CODEC_EXAMPLES = {
    "NoOpDpEvent": dp_accounting.NoOpDpEvent(),
    "NonPrivateDpEvent": dp_accounting.NonPrivateDpEvent(),
    "UnsupportedDpEvent": dp_accounting.UnsupportedDpEvent(),
    "GaussianDpEvent": _INNER,
    "LaplaceDpEvent": dp_accounting.LaplaceDpEvent(0.25),
    "DiscreteLaplaceDpEvent": DiscreteLaplaceDpEvent(0.5, 2),
    "RandomizedResponseDpEvent": dp_accounting.RandomizedResponseDpEvent(0.3, 4),
    "ZCDpEvent": dp_accounting.ZCDpEvent(0.1, 0.01),
    "MixtureOfGaussiansDpEvent": MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0], (0.25, 0.75)),
    "SelfComposedDpEvent": dpsgd(0.01, 1.1, 2000),
    "ComposedDpEvent": dp_accounting.ComposedDpEvent([_INNER, dp_accounting.LaplaceDpEvent(3.0)]),
    "PoissonSampledDpEvent": dp_accounting.PoissonSampledDpEvent(1 / 3, _INNER),
    "SampledWithReplacementDpEvent": dp_accounting.SampledWithReplacementDpEvent(1000, 10, _INNER),
    "SampledWithoutReplacementDpEvent": dp_accounting.SampledWithoutReplacementDpEvent(
        1000, 10, _INNER
    ),
    "TruncatedSubsampledGaussianDpEvent": dp_accounting.TruncatedSubsampledGaussianDpEvent(
        1000, 0.01, 20, 1.2
    ),
    "SingleEpochTreeAggregationDpEvent": dp_accounting.ComposedDpEvent(
        [dp_accounting.SingleEpochTreeAggregationDpEvent(1.1, [3, 4]),
         dp_accounting.SingleEpochTreeAggregationDpEvent(1.1, 7)]
    ),
    "RepeatAndSelectDpEvent": RepeatAndSelectDpEvent(dpsgd(0.01, 1.1, 20), 3.0, math.inf),
}


def test_codec_covers_every_supported_event_class():
    assert set(CODEC_EXAMPLES) == set(SUPPORTED_EVENT_CLASSES)


@pytest.mark.parametrize("name", sorted(CODEC_EXAMPLES))
def test_codec_round_trips_every_event_class(name):
    event = CODEC_EXAMPLES[name]
    text = encode_spend(event)
    assert name in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    decoded = decode_spend(text)
    assert decoded == event and type(decoded) is type(event)
    assert encode_spend(decoded) == text


def test_codec_round_trips_rdp_curves_and_numpy_numbers():
    curve = RdpCurve(np.array([2.0, 4.0, 8.0]), [0.1, 0.3, math.inf])
    assert decode_spend(encode_spend(curve)) == curve
    event = dp_accounting.PoissonSampledDpEvent(np.float64(0.01), dp_accounting.GaussianDpEvent(
        np.float32(2.0)))
    assert decode_spend(encode_spend(event)) == dp_accounting.PoissonSampledDpEvent(
        0.01, dp_accounting.GaussianDpEvent(2.0)
    )


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        json.dumps({"dp_event": "Popen", "fields": {"args": "rm -rf /"}}),
        json.dumps({"dp_event": "DpEvent", "fields": {}}),
        json.dumps({"dp_event": "GaussianDpEvent", "fields": {"noise_multiplier": 1, "x": 2}}),
        json.dumps({"dp_event": "GaussianDpEvent", "fields": {"noise_multiplier": {"a": 1}}}),
        json.dumps({"dp_event": "GaussianDpEvent"}),
        json.dumps({"rdp_curve": {"orders": [2.0], "rdp": "x"}}),
        json.dumps([1, 2]),
        "[" * 5000 + "]" * 5000,
    ],
)
def test_codec_refuses_anything_else(text):
    with pytest.raises(CodecError):
        decode_spend(text)


def test_public_names():
    assert skdp.PrivacyBudget is PrivacyBudget
    assert skdp.BudgetExceededError is BudgetExceededError
    assert skdp.LedgerError is LedgerError
