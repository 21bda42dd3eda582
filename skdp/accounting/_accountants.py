"""Epsilon of a DpEvent with the accountants skdp supports (thin layer over dp_accounting)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import dp_accounting
from absl import logging as absl_logging

from ._gaussian_pld import VectorisedPLDAccountant
from ._gaussian_rdp import VectorisedRdpAccountant
from ._plan import NeighboringRelation
from ._relations import rdp_equivalent

__all__ = [
    "ACCOUNTANTS",
    "FINE_PLD_INTERVAL",
    "pld_intervals",
    "make_accountant",
    "epsilon_of",
    "quiet_accounting_logs",
]

ACCOUNTANTS = ("pld", "rdp")

# Discretisation of the privacy-loss distribution. dp_accounting builds pessimistic PLDs, so every
# interval gives a valid upper bound on epsilon; finer is tighter and slower. The rounding error
# accumulates over the composed steps, so what matters is the interval relative to epsilon:
# at q=256/32561, 2540 steps, sigma=15.8 the bound is 0.0754 with 1e-5 but 0.0998 with 1e-3
# (+32%). Relative intervals keep the error small and the cost low: small epsilons mean large
# noise and narrow distributions, cheap to discretise finely (30 ms at 1e-5 there). The fine
# interval is 2.5e-4 of epsilon: against 1e-4 it loosened the bound by at most 0.03% (DP-SGD plans
# at epsilon 0.1-8, q 0.008-0.3, 200-2540 steps) and halved the time of a fine evaluation; the
# calibration accepts any epsilon within 0.5% below the target anyway.
FINE_PLD_INTERVAL = 1e-4  # dp_accounting's default, for epsilon_of without a target
_FINE_RELATIVE, _COARSE_RELATIVE = 2.5e-4, 2e-3
# Where many separately built PLDs are composed (the ledger: each spend adds its rounding) and
# where they are cheap at any interval (AdaSSP's few unsampled Gaussians, whose spec constants
# were computed at 1e-4), the finer rule stays.
FINEST_RELATIVE = 1e-4


def pld_intervals(epsilon: float, fine_relative: float = _FINE_RELATIVE) -> tuple[float, float]:
    """(coarse, fine) PLD discretisation intervals for calibrating to ``epsilon``."""
    return max(epsilon * _COARSE_RELATIVE, 1e-5), max(epsilon * fine_relative, 1e-6)


def make_accountant(
    accountant: str,
    neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
    *,
    pld_interval: float = FINE_PLD_INTERVAL,
) -> dp_accounting.PrivacyAccountant:
    """A fresh dp_accounting accountant by name (``'pld'`` or ``'rdp'``).

    Parameters
    ----------
    accountant : {'pld', 'rdp'}
        ``'pld'``: dp_accounting's privacy-loss-distribution accountant, with the Gaussian
        mechanism's PLD built vectorised (the same numbers, ``_gaussian_pld``); ``'rdp'``: its
        Renyi-DP accountant.
    neighboring_relation : NeighboringRelation or str, default='add_or_remove_one'
        The neighbouring relation the epsilon is stated for.
    pld_interval : float, default=1e-4
        Discretisation of the privacy loss (PLD only); every interval gives a valid, pessimistic
        bound, finer is tighter and slower.

    Returns
    -------
    dp_accounting.PrivacyAccountant
        An empty accountant: ``compose`` events into it, then ``get_epsilon(delta)``.

    See Also
    --------
    epsilon_of : compose one event and read its epsilon in one call.

    Examples
    --------
    >>> import dp_accounting
    >>> from skdp.accounting import make_accountant
    >>> step = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0))
    >>> acc = make_accountant("pld").compose(dp_accounting.SelfComposedDpEvent(step, 1000))
    >>> round(acc.get_epsilon(1e-5), 2)
    1.83
    """
    relation = NeighboringRelation(neighboring_relation).to_dp_accounting()
    if accountant == "pld":
        # dp_accounting's PLD accountant with Gaussian PLDs and epsilon computed vectorised
        # (the same numbers, tested): calibration and ledger charges spend most time there.
        return VectorisedPLDAccountant(relation, value_discretization_interval=pld_interval)
    if accountant == "rdp":
        # dp_accounting's RDP accountant with the Gaussian curve vectorised (the same values).
        return VectorisedRdpAccountant(neighboring_relation=relation)
    raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")


def epsilon_of(
    event: dp_accounting.DpEvent,
    delta: float,
    accountant: str = "pld",
    neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
    *,
    pld_interval: float = FINE_PLD_INTERVAL,
) -> float:
    """Epsilon at ``delta`` of ``event``, an upper bound from the named accountant.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        What was released, e.g. a fit's ``dp_event_``.
    delta : float
        The delta at which to read epsilon.
    accountant : {'pld', 'rdp'}, default='pld'
        The accountant (:func:`make_accountant`).
    neighboring_relation : NeighboringRelation or str, default='add_or_remove_one'
        The neighbouring relation. Under ``'replace_one'`` a noise multiplier is read as noise
        over one record's contribution, whose replacement moves a sum twice as far; both
        accountants read events that way (``_relations``).
    pld_interval : float, default=1e-4
        PLD discretisation (see :func:`make_accountant`).

    Returns
    -------
    float
        Epsilon, never below the accountant's exact value; ``inf`` for a non-private event.

    Examples
    --------
    >>> import dp_accounting
    >>> from skdp.accounting import epsilon_of
    >>> step = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0))
    >>> run = dp_accounting.SelfComposedDpEvent(step, 1000)
    >>> round(epsilon_of(run, 1e-5), 2), round(epsilon_of(run, 1e-5, "rdp"), 2)
    (1.83, 2.1)
    >>> round(epsilon_of(run, 1e-5, neighboring_relation="replace_one"), 2)
    2.84
    """
    if isinstance(event, dp_accounting.NonPrivateDpEvent):
        return math.inf
    if accountant == "rdp":
        # dp_accounting's RDP accountant ignores the relation for Gaussian events; read them as
        # its PLD accountant does (skdp/accounting/_relations.py).
        event = rdp_equivalent(event, neighboring_relation)
    with quiet_accounting_logs():
        acc = make_accountant(accountant, neighboring_relation, pld_interval=pld_interval)
        return float(acc.compose(event).get_epsilon(delta))


# dp_accounting's RDP code logs a warning for every order whose series does not converge and then
# drops that order, which only makes the bound more conservative: keep users' logs clean.
@contextlib.contextmanager
def quiet_accounting_logs() -> Iterator[None]:
    """Silence dp_accounting's absl warnings for the duration of the block."""
    verbosity = absl_logging.get_verbosity()
    absl_logging.set_verbosity(absl_logging.ERROR)
    try:
        yield
    finally:
        absl_logging.set_verbosity(verbosity)
