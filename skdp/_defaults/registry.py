"""The registry of skdp's 'auto' rules: each one stated once, with its constants and provenance.

Every ``'auto'`` setting (and every default constant that was chosen by measurement) is a pure
function of public quantities: the number of rows ``n``, the number of features or parameters,
``epsilon`` and ``delta``, the calibrated noise, public bounds. The modules of
:mod:`skdp._defaults` define those functions and constants and register each rule here with a
short statement of the formula, its constants and where they were chosen (the benchmark script,
its stored results and the page that shows them). The documentation's defaults page is
generated from this registry (``docs/_generate_defaults.py``), and docstrings link to that page
instead of restating formulas.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RULES", "Rule", "register"]


@dataclass(frozen=True)
class Rule:
    """One 'auto' rule.

    Attributes
    ----------
    name : str
        A unique key (e.g. ``"linear.eta0"``).
    setting : str
        The parameter value the rule resolves (e.g. ``"eta0='auto'"``).
    applies_to : tuple of str
        The estimators or transformers that use it.
    summary : str
        The rule in words and symbols: the one place it is stated.
    constants : mapping
        The rule's constants, by name, as the code uses them.
    provenance : str
        Where the constants were chosen: the script, its stored results and the page.
    function : callable or None
        The function that applies the rule (``None`` for a constant alone).
    """

    name: str
    setting: str
    applies_to: tuple[str, ...]
    summary: str
    constants: Mapping[str, Any] = field(default_factory=dict)
    provenance: str = ""
    function: Callable | None = None

    @property
    def code(self) -> str:
        """Where the rule is applied: ``module.function``."""
        if self.function is None:
            return ""
        return f"{self.function.__module__}.{self.function.__qualname__}"


#: Every registered rule, by name, in registration order.
RULES: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    """Add ``rule`` to :data:`RULES` (a name may be registered once)."""
    if rule.name in RULES and RULES[rule.name] != rule:
        raise ValueError(f"the default rule {rule.name!r} is registered twice")
    RULES[rule.name] = rule
    return rule
