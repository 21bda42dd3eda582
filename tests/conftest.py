"""Test-session settings.

The default run uses both cores with pytest-xdist (``-n 2`` in pyproject's addopts); each worker
then computes with one thread, so that two workers do not oversubscribe a 2-core machine (the
tests' small matrix products gain nothing from threads, and contend for cores instead).
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_thread_per_worker():
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    with threadpool_limits(1):
        yield
