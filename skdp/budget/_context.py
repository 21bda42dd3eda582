"""The current budget: a default ledger set by ``with budget:`` (one per thread / async task)."""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._ledger import PrivacyBudget

__all__ = ["CURRENT_BUDGET", "current_budget", "enter", "leave"]

#: The current budget. Code that must hide it from the fits it runs (an audit's fits, a private
#: search's trials) sets it to ``None`` and resets it with the token afterwards.
CURRENT_BUDGET: contextvars.ContextVar[PrivacyBudget | None] = contextvars.ContextVar(
    "skdp_current_budget", default=None
)
# Tokens of the enclosing `with` blocks, innermost last, so that nested blocks restore the
# budget that was current before them. A context variable too: each thread and task has its own.
_TOKENS: contextvars.ContextVar[tuple[contextvars.Token, ...]] = contextvars.ContextVar(
    "skdp_current_budget_tokens", default=()
)


def current_budget() -> PrivacyBudget | None:
    """The budget of the innermost enclosing ``with budget:`` block, or ``None``.

    Context variables do not cross process boundaries: joblib workers (``n_jobs``) and
    ``multiprocessing`` children do not see it. Pass ``budget=`` explicitly to estimators whose
    fits may run in other processes; an explicit budget is pickled as a handle to the same file.
    """
    return CURRENT_BUDGET.get()


def enter(budget: PrivacyBudget) -> None:
    token = CURRENT_BUDGET.set(budget)
    _TOKENS.set((*_TOKENS.get(), token))


def leave() -> None:
    tokens = _TOKENS.get()
    if not tokens:
        raise RuntimeError("leaving a `with budget:` block that was not entered")
    CURRENT_BUDGET.reset(tokens[-1])
    _TOKENS.set(tokens[:-1])
