"""Helpers shared by the ledger's test files (tests/budget/; ``dpsgd`` also in
tests/accounting/test_gaussian_rdp.py)."""

from __future__ import annotations

import multiprocessing

import dp_accounting
import pytest

from skdp.budget._sync import SHARED

FORK = "fork" in multiprocessing.get_all_start_methods()
needs_fork = pytest.mark.skipif(not FORK, reason="needs the fork start method")


def dpsgd(q: float, sigma: float, steps: int) -> dp_accounting.DpEvent:
    """The DpEvent of ``steps`` Poisson-sampled Gaussian steps (a DP-SGD run)."""
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
    )


def forget_cached_states() -> None:
    """Make the next read recompose from the file, as a fresh process would."""
    SHARED.clear()
