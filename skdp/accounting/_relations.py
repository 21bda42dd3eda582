"""What a DpEvent means under the replace-one relation, so that PLD and RDP read it alike.

The ledger reads every event as ``dp_accounting``'s docstrings define it: a Gaussian or
Laplace event's ``noise_multiplier`` is the noise scale divided by ``C``, the bound on *one
record's contribution* (``||v_i|| <= C``). Replacing a record moves the released sum by up to
``2C``, so under replace-one such a mechanism is the same mechanism with twice the sensitivity.
``dp_accounting`` 0.6.0's PLD accountant reads events this way (REPLACE adjacency: shifts of
``+C`` and ``-C``, see ``/docs/specs/adassp.md`` §4.3), but its RDP accountant ignores the
relation for Gaussian and Laplace events and uses ``C`` itself: on ``GaussianDpEvent(2.0)`` at
delta 1e-5 it reports 2.166 where the PLD reports 4.377. The minimum of the two is only sound
when both read an event the same way, so :func:`rdp_equivalent` rewrites an event into the
add/remove event with the same privacy loss for the RDP accountant:

* ``GaussianDpEvent(m)`` -> ``GaussianDpEvent(m / 2)`` (a shift of ``2C`` with noise ``mC`` is a
  shift of ``C`` with noise ``mC / 2``); ``LaplaceDpEvent(b)`` -> ``LaplaceDpEvent(b / 2)``.
* ``SampledWithoutReplacementDpEvent``: ``dp_accounting``'s RDP bound (Wang, Balle and
  Kasiviswanathan 2019, Thm 27) takes the Gaussian's RDP under replace-one as ``a / (2 m^2)``,
  i.e. ``m`` relative to the replace-one sensitivity; with ``m`` relative to ``C`` the Gaussian
  inside is halved the same way. (``SampledWithoutReplacementDpEvent(n, n, G(m))`` then equals
  ``G(m)`` under PLD, which the tests check.)
* Compositions and ``RepeatAndSelectDpEvent`` are rewritten inside.
* Left as they are: ``PoissonSampledDpEvent`` (the RDP accountant refuses it under replace-one,
  so only the PLD accountant, which handles the relation, composes it),
  ``RandomizedResponseDpEvent`` (both accountants implement replace-one for it), ``ZCDpEvent``
  (it states its guarantee directly, under the ledger's relation), ``NoOpDpEvent`` and
  ``NonPrivateDpEvent``.

Every other event class is composed by the PLD accountant alone (which handles or refuses the
relation itself), or by neither and then refused by the ledger. Under add/remove the events are
left as they are: both accountants already read them with sensitivity ``C``.
"""

from __future__ import annotations

import dp_accounting
from dp_accounting import dp_event

from ._plan import NeighboringRelation

__all__ = ["rdp_equivalent"]


def rdp_equivalent(
    event: dp_accounting.DpEvent, relation: NeighboringRelation
) -> dp_accounting.DpEvent:
    """The event to give ``dp_accounting``'s RDP accountant for ``event`` under ``relation``."""
    if relation is not NeighboringRelation.REPLACE_ONE:
        return event
    return _halve_sensitivity_units(event)


def _halve_sensitivity_units(event: dp_accounting.DpEvent) -> dp_accounting.DpEvent:
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return dp_accounting.GaussianDpEvent(event.noise_multiplier / 2.0)
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return dp_accounting.LaplaceDpEvent(event.noise_multiplier / 2.0)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return dp_accounting.SelfComposedDpEvent(_halve_sensitivity_units(event.event), event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return dp_accounting.ComposedDpEvent([_halve_sensitivity_units(e) for e in event.events])
    if isinstance(event, dp_accounting.SampledWithoutReplacementDpEvent):
        return dp_accounting.SampledWithoutReplacementDpEvent(
            event.source_dataset_size, event.sample_size, _halve_sensitivity_units(event.event)
        )
    if isinstance(event, dp_event.RepeatAndSelectDpEvent):
        return dp_event.RepeatAndSelectDpEvent(
            _halve_sensitivity_units(event.event), event.mean, event.shape
        )
    return event
