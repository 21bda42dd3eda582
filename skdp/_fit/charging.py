"""Charging a fit's spend to a privacy budget: the one place estimators, DP transformers and
private pipelines ask the ledger, before they touch the data."""

from __future__ import annotations

from typing import Any

from ..accounting import NeighboringRelation
from ..budget import BudgetExceededError, PrivacyBudget, current_budget

__all__ = ["resolve_budget", "charge_budget"]


def resolve_budget(budget: Any) -> PrivacyBudget | None:
    """``budget=``, else the budget of an enclosing ``with budget:`` block, else None."""
    budget = budget if budget is not None else current_budget()
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise TypeError(
            f"budget must be a skdp.PrivacyBudget or None, got {type(budget).__name__}"
        )
    return budget


def charge_budget(
    budget: PrivacyBudget | None,
    spend,
    *,
    owner: str,
    params: dict,
    mechanism: str,
    is_private: bool,
    relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
    relation_hint: str = "",
) -> None:
    """Record ``spend`` in ``budget`` (nothing when ``budget`` is None).

    A non-private fit cannot be paid for by any finite budget and is refused; so is a spend
    stated under another neighbouring relation than the ledger's. Nothing is recorded when
    this raises.
    """
    if budget is None:
        return
    if not is_private:
        spent = budget.spent()[0]
        raise BudgetExceededError(
            f"{owner} with privacy=(inf, 0) trains without noise, which no "
            f"finite budget can pay for; nothing was charged (epsilon left: "
            f"{max(budget.epsilon - spent, 0.0):.4g} of {budget.epsilon:g} at "
            f"delta={budget.delta:g}). Pass a finite privacy, or budget=None for data this "
            "budget does not protect.",
            epsilon_budget=budget.epsilon,
            delta=budget.delta,
            epsilon_spent=spent,
            epsilon_requested=float("inf"),
            epsilon_total=float("inf"),
        )
    if relation is not budget.neighboring_relation:
        raise ValueError(
            f"{owner}{relation_hint} states its guarantee under the '{relation.value}' "
            f"relation ({relation.describe()}), but this budget accounts spends under "
            f"'{budget.neighboring_relation.value}' ({budget.neighboring_relation.describe()}), "
            "and the two cannot be composed; nothing was charged or trained. Charge such fits "
            f"to a budget created with PrivacyBudget(..., neighboring_relation='{relation.value}')."
        )
    budget.charge(
        spend,
        estimator=owner,
        params=params,
        mechanism=mechanism,
        neighboring_relation=relation.value,
    )
