"""The CPU threads of a fit: chosen per fit, the caller's settings restored (also after a fit
that raised), and the user's choice through skdp.set_config / config_context."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_info

import skdp
from skdp._defaults.threads import THREAD_WORK_MIN, auto_threads, fit_threads
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.mechanisms._sgd.optimizer import SGDOptimizer


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    return X, (X[:, 0] > 0).astype(int)


@pytest.fixture
def caller_threads():
    """The test process set to 3 torch threads and 3 BLAS threads, put back afterwards."""
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(3)
    with threadpool_limits(limits=3, user_api="blas"):
        yield 3
    torch.set_num_threads(before)


def _blas_threads():
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def _record_threads(monkeypatch, seen: list, fail: bool = False):
    train = SGDOptimizer.train

    def recording(self, *args, **kwargs):
        seen.append((torch.get_num_threads(), _blas_threads()))
        if fail:
            raise RuntimeError("a fit that fails while training")
        return train(self, *args, **kwargs)

    monkeypatch.setattr(SGDOptimizer, "train", recording)


def test_a_fit_trains_on_one_thread_and_restores_the_callers_setting(
        data, caller_threads, monkeypatch):
    seen = []
    _record_threads(monkeypatch, seen)
    DPLogisticRegression(max_iter=2, random_state=0).fit(*data)
    assert seen == [(1, [1] * len(_blas_threads()))]  # small work: one thread
    assert torch.get_num_threads() == caller_threads
    assert set(_blas_threads()) <= {caller_threads}


def test_the_callers_setting_is_restored_after_a_fit_that_raised(
        data, caller_threads, monkeypatch):
    seen = []
    _record_threads(monkeypatch, seen, fail=True)
    with pytest.raises(RuntimeError, match="fails while training"):
        DPLogisticRegression(max_iter=2, random_state=0).fit(*data)
    assert seen and seen[0][0] == 1
    assert torch.get_num_threads() == caller_threads
    assert set(_blas_threads()) <= {caller_threads}


def test_the_user_chooses_the_threads(data, caller_threads, monkeypatch):
    seen = []
    _record_threads(monkeypatch, seen)
    with skdp.config_context(n_threads=2):
        DPLogisticRegression(max_iter=2, random_state=0).fit(*data)
        assert skdp.get_config()["n_threads"] == 2
    assert skdp.get_config()["n_threads"] == "auto"
    assert seen[0][0] == 2
    assert torch.get_num_threads() == caller_threads


def test_closed_form_fits_restore_the_threads_too(caller_threads):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(500, 3)), rng.normal(size=500)
    DPRidge(optimizer="ssp", max_row_norm=4.0, target_bound=4.0, random_state=0).fit(X, y)
    assert torch.get_num_threads() == caller_threads


def test_the_setting_is_checked():
    for bad in (0, -1, 1.5, "many", True):
        with pytest.raises(ValueError, match="n_threads"):
            skdp.set_config(n_threads=bad)
    assert skdp.get_config()["n_threads"] == "auto"


def test_the_rule_uses_every_core_only_for_large_steps():
    assert auto_threads(None, 16) == 1
    assert auto_threads(THREAD_WORK_MIN / 2, 16) == 1
    assert auto_threads(THREAD_WORK_MIN, 16) == 16
    assert fit_threads(3, 1.0) == 3
    # Adult's default fit: 1018 rows per step times 106 parameters.
    assert auto_threads(1018 * 106, 2) == 1
