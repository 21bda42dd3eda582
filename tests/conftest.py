"""Test-session settings, and the fixtures every folder of tests may use.

The tests are sorted by the subpackage of skdp they test (tests/budget/ for skdp.budget, ...;
tests/package/ for what spans the package, tests/benchmarks/ for the benchmark pages); a
folder's conftest.py holds what only that folder uses (tests/budget/conftest.py:
``ledger_path``; tests/model_selection/conftest.py: the searches' ``binary_data``).

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


@pytest.fixture(autouse=True)
def _reproducible_unseeded_fits(request, monkeypatch):
    """Seed what ``random_state=None`` draws from OS entropy, per test, so a CI failure replays.

    The library seeds unseeded fits from OS entropy on purpose (the noise must not be replayable);
    here each such draw gets a seed made from the test's id and a counter, so two unseeded fits in
    one test still differ, as they do for users. ``SKDP_TEST_ENTROPY=1`` restores OS entropy, to
    look for tests that pass only for some draws.
    """
    if os.environ.get("SKDP_TEST_ENTROPY"):
        yield
        return
    import itertools
    import zlib

    import numpy as np

    from skdp._engine import _device
    from skdp._scale import fit as _scale_free_fit
    from skdp.preprocessing import _base as preprocessing_base

    test_seed = zlib.crc32(request.node.nodeid.encode())
    draws = itertools.count()
    entropy_seeded = _device.seed_sequence

    def seed_sequence(random_state):
        if random_state is None:
            return np.random.SeedSequence([test_seed, next(draws)])
        return entropy_seeded(random_state)

    for module in (_device, _scale_free_fit, preprocessing_base):
        monkeypatch.setattr(module, "seed_sequence", seed_sequence)
    yield


@pytest.fixture
def quiet_privacy_warnings():
    """skdp's PrivacyWarning ignored for the test (tiny data sets, many fits, where the warnings
    are expected). A module takes it for all its tests with
    ``pytestmark = pytest.mark.usefixtures("quiet_privacy_warnings")``."""
    import warnings

    from skdp import PrivacyWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield
