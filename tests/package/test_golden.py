"""Behaviour unchanged: seeded fits replayed against the numbers recorded before the redesign.

``tests/package/golden/fits.json`` was recorded by ``tests/package/golden/cases.py`` at the
commit before the house was reorganised (issue 24). Accounting (privacy spent, noise
multipliers, events) and the reports must match exactly; fitted parameters too, up to float32
rounding, so that a CPU with other vector instructions does not fail the test while a changed
computation does.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from .golden.cases import CASES, GOLDEN_PATH, run_case

GOLDEN = json.loads(GOLDEN_PATH.read_text())
# Fitted parameters: float32 compute, so a few ulps of float32 on another CPU; accounting is
# float64 on the host and must be exact.
PARAMETERS = {"coef_", "intercept_", "coefs_", "intercepts_"}


def _compare(key: str, got, want) -> None:
    if key in PARAMETERS:
        np.testing.assert_allclose(
            np.concatenate([np.ravel(v) for v in got]) if key.endswith("s_") else got,
            np.concatenate([np.ravel(v) for v in want]) if key.endswith("s_") else want,
            rtol=2e-5, atol=1e-7, err_msg=key,
        )
    else:
        assert got == want, key


def test_every_case_is_recorded():
    assert sorted(GOLDEN) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_fit(name):
    got, want = run_case(name), GOLDEN[name]
    assert sorted(got) == sorted(want)
    for key in want:
        _compare(key, got[key], want[key])
