"""dp_accounting's connect-the-dots PMF and PMF composition, without their Python loops.

dp_accounting builds a continuous mechanism's connect-the-dots PMF in numpy, then zips the
masses into a ``{loss: mass}`` dictionary and, when the grid has more than
``_MAX_PMF_SPARSE_SIZE`` points, turns the dictionary back into a list one key at a time
(``common.dictionary_to_list``): for a fine grid that round trip costs more than computing the
masses. Composing two dense PMFs truncates the result's tails by a Python loop over its masses
(``pld_pmf._truncate_tails``), which on a wide PMF costs more than the FFT.

:func:`connect_dots_pmf` and :func:`fixed_gap_pmf` are
``_create_pld_pmf_from_monotone_privacy_loss``'s continuous connect-the-dots branch and
``create_pmf_pessimistic_connect_dots_fixed_gap``, operation for operation, with the dense PMF
built from the mass array itself (``np.array`` of the dictionary's values is that array). A
sparse PMF (at most ``_MAX_PMF_SPARSE_SIZE`` points, cheap) is built by dp_accounting's own
``create_pmf`` from the same dictionary. :func:`truncate_tails` is ``_truncate_tails`` with its
running sums taken by ``np.cumsum`` in chunks: numpy's accumulate adds in the loop's order,
one element after the other, so the partial sums, and the cut indices, are the same floats.
:func:`compose` is ``PrivacyLossDistribution.compose`` with that truncation.

Every result equals dp_accounting's bit for bit: the same PMF type, lower loss, masses,
infinity mass and pessimistic flag (``tests/accounting/test_connect_dots.py``,
``tests/accounting/test_gaussian_pld.py``).
Callers check :data:`HAS_PMF_INTERNALS` and use dp_accounting's own path without it.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_module
from scipy import signal

__all__ = ["HAS_PMF_INTERNALS", "compose", "compose_pmfs", "connect_dots_pmf", "fixed_gap_pmf",
           "to_dense_pmf", "truncate_tails"]

# The names this module mirrors (stable from 0.4 to 0.6).
HAS_PMF_INTERNALS = all(
    hasattr(pld_pmf, name)
    for name in ("DensePLDPmf", "SparsePLDPmf", "create_pmf", "_MAX_PMF_SPARSE_SIZE",
                 "_DELTA_DIFF_TOLERANCE", "_truncate_tails")
)

# PrivacyLossDistribution.compose's default truncation.
_COMPOSE_TRUNCATION = 1e-15
# The first chunk of a running sum; chunks double, so a cut far in costs O(log n) numpy calls
# and one near the start (the usual case) reads only a few elements.
_FIRST_CHUNK = 64


def fixed_gap_pmf(
    discretization: float,
    rounded_epsilon_lower: int,
    rounded_epsilon_upper: int,
    deltas,
) -> pld_pmf.PLDPmf:
    """``pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap``, the dense PMF without a dict.

    The masses are computed by dp_accounting's expressions in its order. Its running minimum of
    the deltas is skipped when it is the identity (deltas non-increasing, no NaN and no
    negative zero, so every running minimum is the element itself, bit for bit), and so is the
    second difference, then equal to the first.
    """
    deltas = np.asarray(deltas, dtype=np.float64)

    if rounded_epsilon_upper < rounded_epsilon_lower:
        raise ValueError(f"rounded_epsilon_upper={rounded_epsilon_upper} is smaller"
                         f" than rounded_epsilon_lower={rounded_epsilon_lower}.")
    if deltas.size != rounded_epsilon_upper - rounded_epsilon_lower + 1:
        raise ValueError("Length of deltas is not equal to number of epsilons: "
                         f"number of epsilons = "
                         f"{rounded_epsilon_upper - rounded_epsilon_lower + 1}, "
                         f"number of deltas = {deltas.size}.")
    if np.any(deltas < 0) or np.any(deltas > 1):
        raise ValueError(f"deltas are not between 0 and 1 : deltas={deltas}.")

    if rounded_epsilon_lower == rounded_epsilon_upper:
        return pld_pmf.create_pmf(loss_probs={rounded_epsilon_lower: 1 - deltas[0]},
                                  discretization=discretization,
                                  infinity_mass=deltas[0],
                                  pessimistic_estimate=True)

    delta_diffs = np.diff(deltas)
    if np.any(delta_diffs > pld_pmf._DELTA_DIFF_TOLERANCE):  # pylint: disable=protected-access
        raise ValueError(f"deltas are not in non-increasing order: deltas={deltas}.")
    if not ((delta_diffs <= 0).all() and not np.signbit(deltas).any()):
        deltas = np.minimum.accumulate(deltas)
        delta_diffs = np.diff(deltas)

    probs = np.zeros_like(deltas)
    probs[0] = 1 - deltas[0] + delta_diffs[0] / math.expm1(discretization)
    probs[1:-1] = ((delta_diffs[1:] - delta_diffs[:-1] * math.exp(discretization))
                   / math.expm1(discretization))
    probs[-1] = delta_diffs[-1] / math.expm1(-discretization)
    probs = np.maximum(0.0, probs)

    if probs.size <= pld_pmf._MAX_PMF_SPARSE_SIZE:  # pylint: disable=protected-access
        return pld_pmf.create_pmf(
            loss_probs=dict(zip(range(rounded_epsilon_lower, rounded_epsilon_upper + 1), probs,
                                strict=True)),
            discretization=discretization,
            infinity_mass=deltas[-1],
            pessimistic_estimate=True)
    # create_pmf's dense branch: common.dictionary_to_list's offset is the smallest key and its
    # list is the masses in key order, which np.array turns back into ``probs``.
    return pld_pmf.DensePLDPmf(discretization, rounded_epsilon_lower, probs, deltas[-1], True)


def connect_dots_pmf(monotone_privacy_loss, value_discretization_interval: float):
    """``_create_pld_pmf_from_monotone_privacy_loss(loss, True, interval, use_connect_dots=True)``
    for a continuous privacy loss, with the PMF built by :func:`fixed_gap_pmf`."""
    if monotone_privacy_loss.is_discrete:
        raise ValueError("connect_dots_pmf is for continuous privacy losses")
    bounds = monotone_privacy_loss.connect_dots_bounds()
    if bounds.epsilon_upper is None or bounds.epsilon_lower is None:
        raise ValueError("Connect dots bounds does not contain epsilon_upper "
                         "and epsilon_lower for continuous additive noise mechanism.")
    rounded_epsilon_upper = math.ceil(bounds.epsilon_upper / value_discretization_interval)
    rounded_epsilon_lower = math.floor(bounds.epsilon_lower / value_discretization_interval)
    rounded_epsilons = np.arange(rounded_epsilon_lower, rounded_epsilon_upper + 1)
    deltas = monotone_privacy_loss.get_delta_for_epsilon(
        rounded_epsilons * value_discretization_interval)
    return fixed_gap_pmf(value_discretization_interval, rounded_epsilon_lower,
                         rounded_epsilon_upper, deltas)


def _prefix_to_truncate(arr: np.ndarray, threshold: float) -> int:
    """``_truncate_tails``'s ``_find_prefix_to_truncate``: the first index whose running sum
    exceeds ``threshold`` (``len(arr)`` if none), the running sums added in the same order."""
    n = len(arr)
    start, size, total = 0, _FIRST_CHUNK, 0.0
    while start < n:
        chunk = arr[start:start + size]
        # The carried total first: its sums with the chunk's elements are the loop's.
        sums = np.cumsum(np.concatenate(([total], chunk)))[1:]
        above = sums > threshold
        if above.any():
            return start + int(np.argmax(above))
        total = sums[-1]
        start += len(chunk)
        size *= 2
    return n


def truncate_tails(probs, tail_mass_truncation: float, pessimistic_estimate: bool):
    """``pld_pmf._truncate_tails`` on a float array, the prefix searches vectorised."""
    if tail_mass_truncation == 0:
        return 0, probs, 0
    left_idx = _prefix_to_truncate(probs, tail_mass_truncation / 2)
    right_idx = len(probs) - _prefix_to_truncate(np.flip(probs), tail_mass_truncation / 2)
    right_idx = max(right_idx, left_idx + 1)

    left_mass = np.sum(probs[:left_idx])
    right_mass = np.sum(probs[right_idx:])

    truncated_probs = probs[left_idx:right_idx]
    if pessimistic_estimate:
        truncated_probs[0] += left_mass
        return left_idx, truncated_probs, right_mass
    truncated_probs[-1] += right_mass
    return left_idx, truncated_probs, 0


def to_dense_pmf(pmf) -> pld_pmf.PLDPmf:
    """``pmf.to_dense_pmf()``, a sparse PMF's ``common.dictionary_to_list`` done in numpy.

    dp_accounting lists the masses of every key from the smallest to the largest, 0 for a
    missing key, and makes an array of the list: with float masses, the same array as the
    masses scattered into zeros. Other masses (an integer 1, as in ``identity``'s PMF) and other
    PMF types go through dp_accounting.
    """
    if type(pmf) is not pld_pmf.SparsePLDPmf or not pmf._loss_probs:  # pylint: disable=W0212
        return pmf.to_dense_pmf()
    loss_probs = pmf._loss_probs  # pylint: disable=protected-access
    masses = np.array(list(loss_probs.values()))
    if masses.dtype != np.float64 or masses.ndim != 1:
        return pmf.to_dense_pmf()
    keys = np.fromiter(loss_probs.keys(), dtype=np.int64, count=len(loss_probs))
    lower_loss = min(loss_probs)
    probs = np.zeros(max(loss_probs) - lower_loss + 1)
    probs[keys - lower_loss] = masses
    # pylint: disable=protected-access
    return pld_pmf.DensePLDPmf(pmf._discretization, lower_loss, probs, pmf._infinity_mass,
                               pmf._pessimistic_estimate)


def _compose_dense(pmf1, pmf2, tail_mass_truncation: float):
    """``DensePLDPmf.compose`` with :func:`truncate_tails`."""
    # pylint: disable=protected-access
    pmf1.validate_composable(pmf2)
    lower_loss = pmf1._lower_loss + pmf2._lower_loss
    probs = signal.fftconvolve(pmf1._probs, pmf2._probs)
    infinity_mass = (pmf1._infinity_mass + pmf2._infinity_mass
                     - pmf1._infinity_mass * pmf2._infinity_mass)
    offset, probs, right_tail = truncate_tails(probs, tail_mass_truncation,
                                               pmf1._pessimistic_estimate)
    return pld_pmf.DensePLDPmf(pmf1._discretization, lower_loss + offset, probs,
                               infinity_mass + right_tail, pmf1._pessimistic_estimate)


def compose_pmfs(pmf1, pmf2, tail_mass_truncation: float = 0) -> pld_pmf.PLDPmf:
    """``pld_pmf.compose_pmfs``: small sparse pairs by dp_accounting, dense ones by
    :func:`_compose_dense`; PMF types other than dp_accounting's two are theirs."""
    kinds = (pld_pmf.SparsePLDPmf, pld_pmf.DensePLDPmf)
    if type(pmf1) not in kinds or type(pmf2) not in kinds:
        return pld_pmf.compose_pmfs(pmf1, pmf2, tail_mass_truncation)
    if (type(pmf1) is pld_pmf.SparsePLDPmf and type(pmf2) is pld_pmf.SparsePLDPmf
            and pmf1.size * pmf2.size <= pld_pmf._MAX_PMF_SPARSE_SIZE):  # pylint: disable=W0212
        return pmf1.compose(pmf2, tail_mass_truncation)
    return _compose_dense(to_dense_pmf(pmf1), to_dense_pmf(pmf2), tail_mass_truncation)


def compose(
    pld1: pld_module.PrivacyLossDistribution,
    pld2: pld_module.PrivacyLossDistribution,
    tail_mass_truncation: float = _COMPOSE_TRUNCATION,
) -> pld_module.PrivacyLossDistribution:
    """``pld1.compose(pld2, tail_mass_truncation)``, dense PMFs truncated by
    :func:`truncate_tails`: the same PLD, bit for bit. Without the internals this relies on,
    dp_accounting's own ``compose``."""
    # pylint: disable=protected-access
    names = ("_pmf_remove", "_pmf_add", "_symmetric")
    if not HAS_PMF_INTERNALS or not all(
        hasattr(pld, name) for pld in (pld1, pld2) for name in names
    ):
        return pld1.compose(pld2, tail_mass_truncation)
    pmf_remove = compose_pmfs(pld1._pmf_remove, pld2._pmf_remove, tail_mass_truncation)
    if pld1._symmetric and pld2._symmetric:
        return pld_module.PrivacyLossDistribution(pmf_remove)
    pmf_add = compose_pmfs(pld1._pmf_add, pld2._pmf_add, tail_mass_truncation)
    return pld_module.PrivacyLossDistribution(pmf_remove, pmf_add)
