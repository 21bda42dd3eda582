"""Fixtures of the ledger's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def ledger_path(tmp_path) -> str:
    """Where a test's ledger file goes: a path (str) in the test's own empty folder."""
    return str(tmp_path / "ledger.skdp")
