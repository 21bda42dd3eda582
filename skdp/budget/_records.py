"""What the ledger stores and reports: RDP-curve spends, spends with an extra delta, spend records
and composed totals."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import dp_accounting

from ..accounting._rdp_curve import RdpCurve

__all__ = [
    "RdpCurve",
    "WithExtraDelta",
    "Spend",
    "SpendRecord",
    "LedgerTotals",
    "events_delta",
    "with_extra_delta",
]


# Computed extra deltas and the deltas left for the mechanisms are moved this far (relative) in
# the conservative direction, so that floating-point rounding can never understate a total.
_ROUNDING_MARGIN = 1e-12


@dataclass(frozen=True)
class WithExtraDelta:
    """A spend with an extra delta: a mechanism that ``dp_accounting`` has no event for.

    ``WithExtraDelta(spend, p)`` (``additive=False``, the default) is the mechanism ``spend``
    composed with a mechanism that is ``(0, p)``-DP: on any two neighbouring datasets the
    second part's outputs are within total variation ``p`` of each other, for example the
    new-key part of partition selection (a key that only one of the datasets has is released
    with probability at most ``p``). Such a part is a post-processing of the worst-case
    ``(0, p)`` pair, whose privacy-loss distribution is an atom of mass ``p`` at infinity and
    ``1 - p`` at 0, so for every epsilon::

        delta(epsilon) = p + (1 - p) * delta_spend(epsilon)

    ``dp_accounting`` 0.6.0 has no event for such an atom (and RDP cannot express one), hence
    this wrapper. To re-account it, compute the epsilon of ``spend`` alone at
    ``delta' = (delta - p) / (1 - p)`` (infinite if ``p >= delta``); :meth:`events_delta` gives
    ``delta'``.

    ``additive=True`` is weaker: for every ordered pair ``(X, Y)`` of neighbouring datasets there
    is a distribution within total variation ``p`` of the mechanism's output on ``X`` that, paired
    with its output on ``Y``, satisfies the guarantee of ``spend`` (conditionally on anything that
    ran before). Then ``delta(epsilon) <= p + delta_spend(epsilon)``, and ``delta' = delta - p``.
    A private search whose trials have extra deltas spends this (its random number of trials
    keeps the extra deltas from composing as atoms).

    A ledger composes spends with extra deltas as follows: with ``P_a = 1 - prod(1 - p_k)`` over
    the atoms and ``H = 1 - prod(1 - p_j)`` over the additive ones, the composition of everything
    satisfies ``delta(epsilon) <= H + P_a + (1 - P_a) * delta_events(epsilon)``, where
    ``delta_events`` is the composition of the spends without their extra deltas (PLD or RDP, as
    for any other spends). So every epsilon of the ledger is the epsilon of those spends at
    ``delta' = (delta - H - P_a) / (1 - P_a)``; it is infinite when ``H + P_a >= delta``. This is
    exact for atoms under the PLD accountant, and a valid bound with RDP.

    Parameters
    ----------
    spend : DpEvent or RdpCurve
        The rest of the mechanism (not another ``WithExtraDelta``: combine the extra deltas of
        nested parts into one, ``1 - (1 - p1) * (1 - p2)`` for two atoms).
    extra_delta : float
        ``p``, in [0, 1).
    additive : bool, default=False
        Whether ``p`` is only an additive total-variation term (see above) rather than an atom.
    """

    spend: dp_accounting.DpEvent | RdpCurve
    extra_delta: float
    additive: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.spend, WithExtraDelta):
            raise TypeError(
                "WithExtraDelta cannot wrap another WithExtraDelta: wrap the inner spend once, "
                "with the extra deltas combined (1 - (1 - p1) * (1 - p2) for two atoms, or their "
                "sum as an additive term)"
            )
        if not isinstance(self.spend, (dp_accounting.DpEvent, RdpCurve)):
            raise TypeError(
                "the spend of a WithExtraDelta must be a dp_accounting DpEvent or a "
                f"skdp.budget.RdpCurve, got {type(self.spend).__name__}"
            )
        value = self.extra_delta
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"extra_delta must be a real number, got {value!r}")
        value = float(value)
        if not 0.0 <= value < 1.0:  # also refuses nan and inf
            raise ValueError(f"extra_delta must be in [0, 1), got {value!r}")
        if not isinstance(self.additive, bool):
            raise TypeError(f"additive must be True or False, got {self.additive!r}")
        object.__setattr__(self, "extra_delta", value)

    def events_delta(self, delta: float) -> float:
        """The delta at which ``spend`` alone must be accounted for the whole to be at ``delta``.

        ``(delta - p) / (1 - p)`` for an atom, ``delta - p`` for an additive term (lowered by a
        relative 1e-12 against rounding); 0.0 when ``p >= delta`` (no epsilon is enough then).
        """
        if self.additive:
            return events_delta(delta, 0.0, self.extra_delta)
        return events_delta(delta, self.extra_delta, 0.0)


def with_extra_delta(spend, extra_delta: float) -> Spend:
    """``spend`` with an atom ``extra_delta`` (:class:`WithExtraDelta`), or ``spend`` itself when
    it is 0: what a DP transformer or a private pipeline charges."""
    return WithExtraDelta(spend, extra_delta) if extra_delta > 0.0 else spend


def events_delta(delta: float, atom_delta: float, additive_delta: float) -> float:
    """The delta left for the composed events: ``(delta - H - P_a) / (1 - P_a)``.

    ``atom_delta`` is ``P_a``, ``additive_delta`` is ``H`` (see :class:`WithExtraDelta`). Returns
    ``delta`` itself when both are 0, and 0.0 when nothing is left (every epsilon is infinite).
    Otherwise the result is lowered by a relative 1e-12, so that the rounding of the computation
    never makes it (and so the stated guarantee) too generous.
    """
    if atom_delta == 0.0 and additive_delta == 0.0:
        return delta
    left = (delta - additive_delta - atom_delta) / (1.0 - atom_delta)
    return left * (1.0 - _ROUNDING_MARGIN) if left > 0.0 else 0.0


#: What one charge spends: a ``dp_accounting`` DpEvent, an RDP curve, or either with an extra
#: delta.
Spend = dp_accounting.DpEvent | RdpCurve | WithExtraDelta


@dataclass(frozen=True)
class SpendRecord:
    """One recorded spend, as returned by :meth:`PrivacyBudget.history`.

    Attributes
    ----------
    id : int
        Position in the ledger (increasing, never reused).
    timestamp : str
        When it was charged, UTC, ISO 8601.
    estimator : str
        Who spent it (usually the estimator's class name).
    params : dict
        The spender's parameters as stored (JSON values; ``repr()`` of anything else).
    event : DpEvent, RdpCurve or WithExtraDelta
        What was spent.
    epsilon, delta : float
        The spend's own guarantee at the ledger's delta (composed alone; for a
        :class:`WithExtraDelta`, the epsilon of its inner spend at the delta its extra delta
        leaves).
    mechanism : str
        Free-text description given by the spender.
    """

    id: int
    timestamp: str
    estimator: str
    params: dict[str, Any]
    event: Spend
    epsilon: float
    delta: float
    mechanism: str = ""


@dataclass(frozen=True)
class LedgerTotals:
    """The composed guarantee of a set of spends, with how it was computed.

    Attributes
    ----------
    epsilon : float
        ``min(pld_epsilon, rdp_epsilon)``: both are valid upper bounds at ``delta``.
    delta : float
        The ledger's delta.
    n_spends : int
        Number of spends composed.
    pld_epsilon : float
        Epsilon from ``dp_accounting``'s PLD accountant (``inf`` if some spend is not supported).
    rdp_epsilon : float
        Epsilon from per-order RDP over the ledger's orders (``inf`` if some spend has no RDP
        bound).
    pld_interval : float or None
        The PLD value discretisation used (``None`` when the PLD accountant does not apply): a
        fresh ``PLDAccountant(value_discretization_interval=pld_interval)`` fed the same events
        (the spends inside any :class:`WithExtraDelta`) in the same order reproduces
        ``pld_epsilon`` at ``events_delta`` (to about 1e-10 relative).
    extra_delta : float
        The part of ``delta`` taken by the spends' extra deltas, ``H + P_a`` (see
        :class:`WithExtraDelta`); for atoms only, ``1 - prod(1 - p_k)``. 0 without extra deltas.
    events_delta : float
        The delta at which ``pld_epsilon`` and ``rdp_epsilon`` are the composed events' epsilons,
        ``(delta - H - P_a) / (1 - P_a)`` (``delta`` itself without extra deltas; 0.0 when the
        extra deltas leave nothing, and then every epsilon is ``inf``).
    """

    epsilon: float
    delta: float
    n_spends: int
    pld_epsilon: float = math.inf
    rdp_epsilon: float = math.inf
    pld_interval: float | None = field(default=None)
    extra_delta: float = 0.0
    events_delta: float | None = None

    def __post_init__(self) -> None:
        if self.events_delta is None:
            if self.extra_delta != 0.0:
                raise ValueError("totals with an extra delta must state their events_delta")
            object.__setattr__(self, "events_delta", self.delta)

    @property
    def accountant(self) -> str:
        """``'pld'`` or ``'rdp'``: which bound gave ``epsilon`` (``'none'`` when empty)."""
        if self.n_spends == 0:
            return "none"
        return "pld" if self.pld_epsilon <= self.rdp_epsilon else "rdp"
