"""Exceptions of the budget ledger."""

from __future__ import annotations

__all__ = ["BudgetExceededError", "LedgerError"]


class BudgetExceededError(ValueError):
    """A spend was refused because it would take the ledger over its epsilon budget.

    Nothing was recorded. The attributes give the numbers behind the refusal.

    Attributes
    ----------
    epsilon_budget : float
        The ledger's epsilon limit.
    delta : float
        The ledger's delta, at which every epsilon here is stated.
    epsilon_spent : float
        The composed epsilon of everything recorded so far.
    epsilon_remaining : float
        ``max(epsilon_budget - epsilon_spent, 0)``.
    epsilon_requested : float
        The epsilon of the refused spend on its own.
    epsilon_total : float
        The composed epsilon the ledger would have reached with the refused spend.
    """

    def __init__(
        self,
        message: str,
        *,
        epsilon_budget: float,
        delta: float,
        epsilon_spent: float,
        epsilon_requested: float,
        epsilon_total: float,
    ) -> None:
        super().__init__(message)
        self.epsilon_budget = epsilon_budget
        self.delta = delta
        self.epsilon_spent = epsilon_spent
        self.epsilon_remaining = max(epsilon_budget - epsilon_spent, 0.0)
        self.epsilon_requested = epsilon_requested
        self.epsilon_total = epsilon_total


class LedgerError(Exception):
    """The ledger file cannot be used as asked: missing, corrupted, foreign, or other limits.

    skdp never resets or overwrites a file that raised this error; the message says what to do.
    """
