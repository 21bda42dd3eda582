"""Every event the ledger accepts, under both neighbouring relations, against dp_accounting.

The ledger reports ``min(PLD, RDP)``; the minimum is only sound when both accountants read an
event alike. Under replace-one, dp_accounting 0.6.0's PLD accountant doubles the sensitivity of
Gaussian events while its RDP accountant ignores the relation (``GaussianDpEvent(2.0)``: 4.377
vs 2.166 at delta 1e-5), so the ledger feeds RDP the doubled-sensitivity equivalent. Here each
event class is charged to a fresh ledger under each relation and the reported epsilon is
compared with a fresh ``PLDAccountant`` (never below it, and close to it), or, where the PLD
accountant does not apply, with a fresh ``RdpAccountant`` on the equivalent written out by hand.
"""

from __future__ import annotations

import math

import dp_accounting
import pytest
from dp_accounting.dp_event import (
    DiscreteLaplaceDpEvent,
    MixtureOfGaussiansDpEvent,
    RepeatAndSelectDpEvent,
)
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from skdp.budget import SUPPORTED_EVENT_CLASSES, BudgetExceededError, PrivacyBudget

DELTA = 1e-5
ADD = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE = dp_accounting.NeighboringRelation.REPLACE_ONE
G = dp_accounting.GaussianDpEvent
L = dp_accounting.LaplaceDpEvent

# name: (event, {relation: (equivalent, relation) for the RDP reference when PLD cannot be
# used}). The equivalents are written out by hand (not with skdp's rewrite): under replace-one
# a Gaussian or Laplace multiplier relative to one record's contribution is halved.
CASES = {
    "NoOpDpEvent": (dp_accounting.NoOpDpEvent(), {}),
    "NonPrivateDpEvent": (dp_accounting.NonPrivateDpEvent(), {}),
    "UnsupportedDpEvent": (dp_accounting.UnsupportedDpEvent(), {}),
    "GaussianDpEvent": (G(2.0), {}),
    "LaplaceDpEvent": (L(2.0), {REPLACE: (L(1.0), ADD)}),
    "DiscreteLaplaceDpEvent": (DiscreteLaplaceDpEvent(0.5, 1), {}),
    "RandomizedResponseDpEvent": (dp_accounting.RandomizedResponseDpEvent(0.3, 4), {}),
    "ZCDpEvent": (dp_accounting.ZCDpEvent(0.05, 0.0), {
        ADD: (dp_accounting.ZCDpEvent(0.05, 0.0), ADD),
        REPLACE: (dp_accounting.ZCDpEvent(0.05, 0.0), ADD),  # a stated guarantee
    }),
    "MixtureOfGaussiansDpEvent": (MixtureOfGaussiansDpEvent(3.0, [0.0, 1.0], (0.5, 0.5)), {}),
    "SelfComposedDpEvent": (dp_accounting.SelfComposedDpEvent(G(6.0), 4), {}),
    "ComposedDpEvent": (dp_accounting.ComposedDpEvent([G(4.0), L(5.0)]), {
        REPLACE: (dp_accounting.ComposedDpEvent([G(2.0), L(2.5)]), ADD),
    }),
    "PoissonSampledDpEvent": (dp_accounting.PoissonSampledDpEvent(0.1, G(1.0)), {}),
    "PoissonSampledLaplace": (dp_accounting.PoissonSampledDpEvent(0.1, L(1.0)), {}),
    "SampledWithReplacementDpEvent": (
        dp_accounting.SampledWithReplacementDpEvent(1000, 10, G(1.0)), {}),
    "SampledWithoutReplacementDpEvent": (
        dp_accounting.SampledWithoutReplacementDpEvent(1000, 100, G(2.0)), {
            REPLACE: (dp_accounting.SampledWithoutReplacementDpEvent(1000, 100, G(1.0)),
                      REPLACE),
        }),
    "TruncatedSubsampledGaussianDpEvent": (
        dp_accounting.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 20, 1.2), {}),
    "SingleEpochTreeAggregationDpEvent": (
        dp_accounting.SingleEpochTreeAggregationDpEvent(1.1, [3, 4]), {}),
    "RepeatAndSelectDpEvent": (RepeatAndSelectDpEvent(G(3.0), 3.0, math.inf), {
        ADD: (RepeatAndSelectDpEvent(G(3.0), 3.0, math.inf), ADD),
        REPLACE: (RepeatAndSelectDpEvent(G(1.5), 3.0, math.inf), ADD),
    }),
}


def test_every_event_class_has_a_case():
    assert set(SUPPORTED_EVENT_CLASSES) <= set(CASES)


def _fresh_pld(event, relation, interval: float = 1e-3) -> float | None:
    accountant = PLDAccountant(relation, value_discretization_interval=interval)
    if not accountant.supports(event):
        return None
    return accountant.compose(event).get_epsilon(DELTA)


@pytest.mark.parametrize("relation", [ADD, REPLACE], ids=["add_or_remove", "replace_one"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_reported_epsilon_against_fresh_accountants(name, relation, tmp_path):
    event, equivalents = CASES[name]
    budget = PrivacyBudget(100.0, DELTA, path=tmp_path / "l.skdp",
                           neighboring_relation=relation)
    pld = _fresh_pld(event, relation)
    rdp_supported = RdpAccountant(neighboring_relation=relation).supports(event)
    if pld is None and not rdp_supported:
        with pytest.raises(ValueError, match="neither") as info:
            budget.charge(event, estimator="e", neighboring_relation=relation.name.lower())
        assert not isinstance(info.value, BudgetExceededError)
        assert budget.history() == []
        return
    if pld == math.inf:
        with pytest.raises(BudgetExceededError):
            budget.charge(event, estimator="e", neighboring_relation=relation.name.lower())
        return
    budget.charge(event, estimator="e", neighboring_relation=relation.name.lower())
    totals = budget.totals()
    reported = totals.epsilon
    if pld is not None:
        # Never below a fine PLD accountant; equal to one at the ledger's discretisation
        # (which follows the budget when RDP cannot bound the total).
        assert reported >= pld * (1 - 1e-2) - 1e-9
        same = PLDAccountant(relation, value_discretization_interval=totals.pld_interval)
        assert reported <= same.compose(event).get_epsilon(DELTA) * (1 + 1e-9) + 1e-12
    else:
        equivalent, reference_relation = equivalents[relation]
        rdp = RdpAccountant(neighboring_relation=reference_relation).compose(equivalent)
        assert reported == pytest.approx(rdp.get_epsilon(DELTA), rel=1e-9)


def test_replace_one_gaussian_is_read_alike_by_both_accountants(tmp_path):
    # The reported bug: min(PLD, RDP) gave 2.166, RDP's add/remove value, under replace-one.
    budget = PrivacyBudget(100.0, DELTA, path=tmp_path / "l.skdp",
                           neighboring_relation="replace_one")
    budget.charge(G(2.0), estimator="e", neighboring_relation="replace_one")
    totals = budget.totals()
    assert totals.pld_epsilon == pytest.approx(4.3772, abs=1e-3)
    assert totals.rdp_epsilon >= totals.pld_epsilon
    assert totals.epsilon == pytest.approx(4.3772, abs=1e-3)
    # A ledger where only RDP applies (a ZCDpEvent has no PLD) must not fall to 2.166 either.
    budget.charge(dp_accounting.ZCDpEvent(1e-6, 0.0), estimator="e",
                  neighboring_relation="replace_one")
    assert budget.totals().accountant == "rdp" and budget.spent()[0] >= 4.3772


def test_full_batch_without_replacement_is_the_gaussian_itself(tmp_path):
    # Sampling every record without replacement is the Gaussian mechanism: the RDP-only bound
    # of the former must not be below the PLD of the latter under replace-one.
    budget = PrivacyBudget(100.0, DELTA, path=tmp_path / "l.skdp",
                           neighboring_relation="replace_one")
    budget.charge(dp_accounting.SampledWithoutReplacementDpEvent(500, 500, G(2.0)),
                  estimator="e", neighboring_relation="replace_one")
    assert budget.totals().accountant == "rdp"
    pld = _fresh_pld(G(2.0), REPLACE, interval=1e-4)
    assert pld * (1 - 1e-3) <= budget.spent()[0] <= pld * 1.15
