"""Compatibility module: ``examples/plot_privacy_utility.py`` imports ``import_diffprivlib``
from here. Everything else moved into the harness (``benchmarks/harness/``); new code imports
``harness.competitors`` directly. Remove this file once the example does."""

from __future__ import annotations

from harness.competitors import import_diffprivlib

__all__ = ["import_diffprivlib"]
