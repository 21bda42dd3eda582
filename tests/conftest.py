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

# Where each test file was before the suite was sorted into one folder per subpackage (paths
# relative to tests/). An unseeded fit's seed is made from the test's id as it was there, so a
# test that moved draws what it drew before; a file not listed here uses its own id.
FORMER_FILES = {
    "accounting/test_connect_dots.py": "test_connect_dots.py",
    "accounting/test_gaussian_pld.py": "test_gaussian_pld.py",
    "accounting/test_gaussian_rdp.py": "test_gaussian_rdp.py",
    "accounting/test_last_iterate.py": "test_last_iterate.py",
    "accounting/test_noise_schedules.py": "test_noise_schedules.py",
    "accounting/test_plans_and_calibration.py": "test_accounting.py",
    "accounting/test_self_convolve.py": "test_self_convolve.py",
    "audit/test_estimators.py": "test_audit.py",
    "benchmarks/test_pages.py": "test_benchmark_pages.py",
    "audit/test_stats.py": "test_audit_stats.py",
    "budget/test_estimators.py": "test_budget_estimators.py",
    "budget/test_extra_delta.py": "test_budget_extra_delta.py",
    "budget/test_ledger.py": "test_budget.py",
    "budget/test_relations.py": "test_budget_relations.py",
    "budget/test_speed.py": "test_budget_speed.py",
    "datasets/test_bundled.py": "test_datasets.py",
    "defaults/test_registry.py": "test_defaults_registry.py",
    "engine/test_epoch_batches.py": "test_engine_sampling.py",
    "engine/test_factored_gradients.py": "test_factored_gradients.py",
    "engine/test_glm_gradients.py": "test_glm_gradients.py",
    "engine/test_kernels.py": "test_engine_kernels.py",
    "engine/test_mlp_gradients.py": "test_mlp_gradients.py",
    "engine/test_sampling_and_noise.py": "test_sampling_and_noise.py",
    "engine/test_sparse_input.py": "test_sparse_input.py",
    "fit/test_column_scales.py": "test_column_scales.py",
    "fit/test_docstrings.py": "test_defaults_registry.py",
    "fit/test_planned_spend.py": "test_planned_spend.py",
    "mechanisms/test_adaclip.py": "test_adaclip.py",
    "mechanisms/test_adassp.py": "test_adassp.py",
    "mechanisms/test_adp_sgd_and_schedules.py": "test_adp_sgd_and_schedules.py",
    "mechanisms/test_diff2.py": "test_diff2.py",
    "mechanisms/test_outside_mechanism.py": "test_outside_mechanism.py",
    "mechanisms/test_projected_sgd.py": "test_last_iterate_estimators.py",
    "model_selection/test_extra_delta.py": "test_model_selection_extra_delta.py",
    "model_selection/test_mechanisms.py": "test_model_selection_mechanisms.py",
    "model_selection/test_search.py": "test_model_selection.py",
    "model_selection/test_sklearn_checks.py": "test_model_selection_sklearn_checks.py",
    "neural_network/test_mlp.py": "test_mlp_estimators.py",
    "package/test_architecture.py": "test_architecture.py",
    "package/test_estimators.py": "test_estimators.py",
    "package/test_golden.py": "test_golden.py",
    "package/test_input_errors.py": "test_input_errors.py",
    "package/test_robustness.py": "test_robustness.py",
    "package/test_robustness_numerics.py": "test_robustness_numerics.py",
    "pipeline/test_private_pipeline.py": "test_pipeline.py",
    "preprocessing/test_audit.py": "test_preprocessing_audit.py",
    "preprocessing/test_mechanisms.py": "test_preprocessing_mechanisms.py",
    "preprocessing/test_transformers.py": "test_preprocessing.py",
    "scale/test_public_scale.py": "test_public_scale.py",
    "utils/test_html.py": "test_repr_html.py",
    "utils/test_progress.py": "test_progress.py",
}


def seed_id(nodeid: str) -> str:
    """The test id that ``nodeid``'s unseeded fits are seeded from (its id before the move)."""
    path, separator, name = nodeid.partition("::")
    folder, _, file = path.partition("/")
    if folder == "tests" and file in FORMER_FILES:
        path = f"tests/{FORMER_FILES[file]}"
    return path + separator + name


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

    test_seed = zlib.crc32(seed_id(request.node.nodeid).encode())
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
