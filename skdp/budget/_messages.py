"""What the ledger says when it refuses: the refusal of a spend, and its errors on a ledger.

Each function returns the exception for the caller to raise, so that a traceback ends where
the ledger decided.
"""

from __future__ import annotations

from ..accounting._plan import NeighboringRelation
from ._errors import BudgetExceededError, LedgerError
from ._records import LedgerTotals
from ._store import LedgerMeta

__all__ = [
    "damaged",
    "limits_differ",
    "not_the_pickled_ledger",
    "refusal",
    "relation_differs",
    "replaced",
]


def refusal(
    path: str,
    epsilon: float,
    delta: float,
    before: LedgerTotals,
    own: LedgerTotals,
    after: LedgerTotals,
    estimator: str | None,
) -> BudgetExceededError:
    """The refusal of a spend by the ledger at ``path`` (budget ``epsilon`` at ``delta``):
    ``before`` the totals recorded, ``own`` the spend's alone, ``after`` the totals with it."""
    who = f"{estimator} asks for" if estimator else "this spend would take"
    left = max(epsilon - before.epsilon, 0.0)
    so_far = (
        f"Spent so far: epsilon={before.epsilon:.4g} in {before.n_spends} spend(s)"
        + (f" with extra delta {before.extra_delta:.4g}" if before.extra_delta else "")
        + f"; the budget's epsilon minus that: {left:.4g}. Spends compose to less than "
        "the sum of their epsilons, so a fit asking for more than that on its own may "
        "still fit: try a smaller privacy=(epsilon, delta) (budget.would_exceed(spend) "
        "checks a spend without recording it). Nothing was recorded."
    )
    if own.events_delta <= 0.0:
        message = (
            f"privacy budget exceeded: {who} an extra delta of {own.extra_delta:.4g}: the "
            "delta part of the spend alone is not below the budget's delta="
            f"{delta:g} of the ledger {path}, so no epsilon can cover it. "
            + so_far
        )
    elif after.events_delta <= 0.0:
        message = (
            f"privacy budget exceeded: {who} an extra delta of {own.extra_delta:.4g}, which "
            "with the extra deltas already recorded would take the delta part of the total "
            f"to {after.extra_delta:.4g}, not below the budget's delta={delta:g} of "
            f"the ledger {path}. " + so_far
        )
    else:
        extra = ""
        if own.extra_delta or after.extra_delta:
            extra = (
                f" (with an extra delta of {own.extra_delta:.4g} for this spend and "
                f"{after.extra_delta:.4g} in total: the epsilons are those of the other "
                f"parts at the delta the extra deltas leave, {after.events_delta:.4g} for "
                "the total)"
            )
        message = (
            f"privacy budget exceeded: {who} epsilon={own.epsilon:.4g} on its own, which "
            f"would bring the total of the ledger {path} to "
            f"epsilon={after.epsilon:.4g}, above its budget of epsilon={epsilon:g} "
            f"(all at delta={delta:g}){extra}. " + so_far
        )
    return BudgetExceededError(
        message,
        epsilon_budget=epsilon,
        delta=delta,
        epsilon_spent=before.epsilon,
        epsilon_requested=own.epsilon,
        epsilon_total=after.epsilon,
    )


def damaged(path: str, row_id: int, why: str) -> LedgerError:
    """Row ``row_id`` of the ledger cannot be read, for the reason ``why``."""
    return LedgerError(
        f"spend #{row_id} of the privacy ledger {path} cannot be read ({why}); the "
        "file is damaged or was edited by hand. skdp does not repair it; restore it from a "
        "backup"
    )


def limits_differ(
    path: str, meta: LedgerMeta, epsilon: float, delta: float, relation: NeighboringRelation
) -> LedgerError:
    """The ledger at ``path`` was created with other limits than those asked for."""
    return LedgerError(
        f"the privacy ledger {path} was created with epsilon={meta.epsilon!r}, "
        f"delta={meta.delta!r}, neighboring_relation='{meta.neighboring_relation.value}'"
        f", but this PrivacyBudget asks for epsilon={epsilon!r}, delta={delta!r}, "
        f"neighboring_relation='{relation.value}'. A ledger's limits are fixed when it "
        "is created. Use PrivacyBudget.open(path) to work with the stored limits, or "
        "another path for a new budget."
    )


def relation_differs(ledger: NeighboringRelation, spend: NeighboringRelation) -> ValueError:
    """A spend is stated under another relation than the ledger's."""
    return ValueError(
        f"this ledger accounts spends under the '{ledger.value}' "
        f"relation ({ledger.describe()}); a spend stated under "
        f"'{spend.value}' ({spend.describe()}) cannot be composed with them. skdp "
        "does not convert between relations; use a ledger created with "
        f"neighboring_relation='{spend.value}' for it"
    )


def replaced(path: str) -> LedgerError:
    """Another file took the place of the ledger a budget opened."""
    return LedgerError(
        f"the file {path} is no longer the privacy ledger this budget "
        "opened (it was replaced); open it again to use the new file"
    )


def not_the_pickled_ledger(path: str) -> LedgerError:
    """Unpickling found another ledger at the pickled budget's path."""
    return LedgerError(
        f"the file {path} is not the privacy ledger this budget was pickled from (it was "
        "replaced by another ledger)"
    )
