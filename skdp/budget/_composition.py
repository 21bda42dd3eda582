"""Tight composition of a ledger's spends: PLD when it applies, per-order RDP otherwise.

The composed epsilon of a set of spends is ``min(PLD, RDP)``, both from ``dp_accounting``:

* PLD applies when ``dp_accounting``'s PLD accountant supports every spend. The spends are
  composed one by one, in ledger order, as a fresh ``PLDAccountant`` fed the same events would
  compose them (equal to about 1e-10 relative, see :class:`Composer`), with a value
  discretisation chosen from the total (see :func:`pld_interval_for`).
* RDP applies when every spend has an RDP bound at the ledger's orders: a DpEvent that
  ``dp_accounting``'s ``RdpAccountant`` supports, or an :class:`RdpCurve`. Per-order RDP adds up
  under composition, so the composed curve is the sum of the spends' curves.

A spend with an extra delta (:class:`WithExtraDelta`) contributes its inner spend to both, and
its extra delta to a running product: with ``P_a = 1 - prod(1 - p_k)`` over the atoms and
``H = 1 - prod(1 - p_j)`` over the additive terms, both epsilons are taken at
``delta' = (delta - H - P_a) / (1 - P_a)`` (infinite when ``H + P_a >= delta``); see
:class:`WithExtraDelta` for why. The products are kept as sums of ``log1p(-p)``, which keeps
small extra deltas exact and makes an extended state equal a fresh composition.

The composition is kept in two parts. A :class:`ComposedState` (summed RDP curve, extra deltas,
whether PLD applies) is extended at every charge in microseconds; it decides a charge on its own
whenever its RDP bound stays within the budget. A :class:`PldState` (the composed PLD) is
extended only when needed: by reads, and by charges near the limit. Both name the rows they
cover (:class:`RowMark`, with a hash chain over the rows), so that the ledger can store them in
its file and a reader can check them against the rows.

Under replace-one, events are read as ``dp_accounting``'s PLD accountant reads them (a noise
multiplier relative to one record's contribution, so replacing a record doubles the
sensitivity); the RDP accountant gets the equivalent event (see :mod:`._relations`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import math
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import dp_accounting
import numpy as np
from dp_accounting.pld import privacy_loss_distribution
from dp_accounting.rdp import rdp_privacy_accountant

from ..accounting._accountants import (
    FINEST_RELATIVE,
    make_accountant,
    pld_intervals,
    quiet_accounting_logs,
)
from ..accounting._connect_dots import compose as compose_plds
from ..accounting._gaussian_rdp import VectorisedRdpAccountant
from ..accounting._plan import NeighboringRelation
from ..accounting._rdp_orders import DEFAULT_ORDERS
from ..accounting._relations import rdp_equivalent
from ._codec import encode_spend
from ._pld import epsilon_for_delta, pld_from_payload, pld_to_payload
from ._records import LedgerTotals, RdpCurve, Spend, WithExtraDelta, events_delta

__all__ = [
    "DEFAULT_ORDERS",
    "Contribution",
    "ComposedState",
    "Composer",
    "PldState",
    "RowMark",
    "chain_digest",
    "pld_input",
    "pld_state_from_payload",
    "pld_state_to_payload",
    "state_from_payload",
    "state_to_payload",
    "UnsupportedSpendError",
    "pld_interval_for",
    "curve_on_orders",
]

_MIN_INTERVAL_LOG2 = -20  # 2**-20 ~ 1e-6, the finest interval pld_intervals ever asks for
_INTERVAL_FLOOR = 1e-3  # the interval is never finer than for a total of budget / 1000
_RDP_MEMO_SIZE = 4096
_PLD_MEMO_SIZE = 32  # a fine PLD can take about a megabyte


# Composers of this process, so that a forked child gets fresh locks (a lock held by another
# thread at fork time would never be released in the child).
_ALL_COMPOSERS: weakref.WeakSet[Composer] = weakref.WeakSet()


def _fresh_locks_after_fork() -> None:
    for composer in list(_ALL_COMPOSERS):
        composer._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_locks_after_fork)

# A spend's PLD at one interval; None when the spend is not private (infinite epsilon).
_EventPld = privacy_loss_distribution.PrivacyLossDistribution | None


class UnsupportedSpendError(ValueError):
    """No accountant can compose this spend (alone, or with the ledger's other spends)."""


def pld_interval_for(reference_epsilon: float) -> float:
    """PLD value discretisation for composing a total of about ``reference_epsilon``.

    ``epsilon / 10^4`` (:func:`skdp.accounting._accountants.pld_intervals` with
    ``FINEST_RELATIVE``), rounded down to a power of two. A ledger composes the PLDs of up to
    thousands of separate spends, each adding its rounding, so it keeps this finer rule where
    calibrating one plan uses ``epsilon / 4000`` (at 1/4000 a ledger of 1,110 DP-SGD spends read
    116.4 instead of 96.2 at delta 0.5). Why relative to the total and not to
    the budget: the pessimistic rounding error adds up over every composed step, so the interval
    a budget of 10 would suggest (1e-3) overstates a total of 0.075 by a third (see
    ``pld_intervals``). Why a power of two: the interval only changes when the total doubles, so
    the composed state can be reused between spends, and every process picks the same interval
    for the same spends.
    """
    target = pld_intervals(max(reference_epsilon, 0.0), fine_relative=FINEST_RELATIVE)[1]
    return math.ldexp(1.0, max(math.floor(math.log2(target)), _MIN_INTERVAL_LOG2))


def curve_on_orders(curve: RdpCurve, orders: Sequence[float]) -> np.ndarray:
    """The RDP curve as an upper bound at ``orders``.

    At an order ``a`` the bound is the curve's value at its smallest order ``>= a`` (Renyi
    divergences do not decrease with the order), and ``inf`` above the curve's largest order.
    """
    given = np.asarray(curve.orders, dtype=np.float64)
    values = np.asarray(curve.rdp, dtype=np.float64)
    index = np.searchsorted(given, np.asarray(orders, dtype=np.float64), side="left")
    out = np.full(len(orders), np.inf)
    inside = index < len(given)
    out[inside] = values[index[inside]]
    return out


@dataclass(frozen=True, eq=False)
class Contribution:
    """One spend, prepared for composition.

    Attributes
    ----------
    spend : DpEvent or RdpCurve
        The spend without its extra delta (the inner spend of a :class:`WithExtraDelta`).
    key : str
        The canonical encoding of ``spend``, the key of the per-process memos.
    rdp : ndarray or None
        Its RDP curve at the ledger's orders (``None``: no RDP bound).
    pld_supported : bool
        Whether ``dp_accounting``'s PLD accountant supports it.
    extra_delta : float
        The extra delta of a :class:`WithExtraDelta` (0.0 for other spends).
    additive : bool
        Whether that extra delta is an additive term rather than an atom.
    """

    spend: Spend
    key: str
    rdp: np.ndarray | None
    pld_supported: bool
    extra_delta: float = 0.0
    additive: bool = False


def chain_digest(digest: str, row_id: int, timestamp: str, spend_text: str) -> str:
    """The digest of the rows up to ``row_id``, from the digest of the rows before it.

    A hash chain over every row's id, timestamp and spend: a composed state stored in the file
    says which rows it covers with it, and is only used if the rows in the file hash to it.
    """
    text = f"{digest}\x1f{row_id}\x1f{timestamp}\x1f{spend_text}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RowMark:
    """Which rows of a ledger a composed state covers: the first ``count`` rows, up to the row
    ``last_id`` (whose timestamp is ``last_timestamp``), hashing to ``digest``."""

    last_id: int = 0
    count: int = 0
    last_timestamp: str = ""
    digest: str = ""

    def then(self, row_id: int, timestamp: str, spend_text: str) -> RowMark:
        """The mark of these rows and one more."""
        digest = chain_digest(self.digest, row_id, timestamp, spend_text)
        return RowMark(row_id, self.count + 1, timestamp, digest)


@dataclass(frozen=True, eq=False)
class ComposedState:
    """The RDP part of the composition of a ledger's rows, kept current at every charge.

    ``rdp`` is the sum of the spends' RDP curves (``None`` when some spend has no RDP bound),
    ``pld_applies`` whether the PLD accountant supports every spend, ``log_no_atom`` and
    ``log_no_additive`` the sums of ``log1p(-p)`` over the extra deltas of the atoms and of the
    additive terms: ``P_a = -expm1(log_no_atom)`` and ``H = -expm1(log_no_additive)``. All of it
    costs microseconds to extend; the PLD part (:class:`PldState`) is composed only when needed.
    """

    mark: RowMark
    rdp: np.ndarray | None
    pld_applies: bool
    log_no_atom: float = 0.0
    log_no_additive: float = 0.0


@dataclass(frozen=True, eq=False)
class PldState:
    """The composed privacy-loss distribution of the rows in ``mark``, at ``interval``.

    ``pld`` is immutable (composing returns a new one); ``None`` when some spend is not private
    (no PLD bounds it: the PLD epsilon is infinite).
    """

    mark: RowMark
    interval: float
    pld: privacy_loss_distribution.PrivacyLossDistribution | None


class Composer:
    """Composes spends for one ledger: its neighbouring relation, delta, epsilon and orders.

    Parameters
    ----------
    neighboring_relation : NeighboringRelation
    delta : float
        Every epsilon is computed at this delta.
    epsilon_cap : float
        The ledger's epsilon budget; the PLD discretisation is never coarser than the one for a
        total of ``epsilon_cap``, so that decisions at the limit are made with a fine PLD.
    orders : sequence of float
        RDP orders.

    Notes
    -----
    The composed PLD is built as ``dp_accounting``'s ``PLDAccountant`` builds it, with one
    difference: each spend's own PLD is made once per process (by a one-spend ``PLDAccountant``)
    and memoised, because making a fine PLD costs far more than composing it. The result equals
    a fresh ``PLDAccountant`` fed the same events to about 1e-10 relative (the extra composition
    with the identity PLD truncates a further 1e-15 of tail mass).
    """

    def __init__(
        self,
        neighboring_relation: NeighboringRelation,
        delta: float,
        epsilon_cap: float,
        orders: Sequence[float] = DEFAULT_ORDERS,
    ) -> None:
        self.neighboring_relation = NeighboringRelation(neighboring_relation)
        self.delta = float(delta)
        self.epsilon_cap = float(epsilon_cap)
        self.orders = np.asarray(orders, dtype=np.float64)
        self._pld_probe = make_accountant("pld", self.neighboring_relation)
        self._rdp_probe = self._new_rdp_accountant()
        # Per-process memos keyed by the spends' canonical JSON: repeated plans (grid search,
        # CV folds) and spends already seen are computed once.
        self._lock = threading.Lock()
        self._rdp_memo: OrderedDict[str, np.ndarray | None] = OrderedDict()
        self._pld_memo: OrderedDict[tuple[str, float], _EventPld] = OrderedDict()
        self._alone_memo: OrderedDict[tuple[str, float, bool], LedgerTotals] = OrderedDict()
        _ALL_COMPOSERS.add(self)
        self.cache_format = _cache_format(self)

    # --- single spends ----------------------------------------------------------------------

    def prepare(self, spend: Spend, key: str) -> Contribution:
        """Check that ``spend`` can be accounted and compute its RDP curve.

        ``key`` is the spend's canonical encoding (memoisation key).
        """
        if isinstance(spend, WithExtraDelta):
            # The memos are keyed by the inner spend: the same event with or without an extra
            # delta has the same curve and PLD.
            inner = self.prepare(spend.spend, encode_spend(spend.spend))
            return dataclasses.replace(
                inner, extra_delta=spend.extra_delta, additive=spend.additive
            )
        if isinstance(spend, RdpCurve):
            return Contribution(spend, key, curve_on_orders(spend, self.orders), False)
        if not isinstance(spend, dp_accounting.DpEvent):
            raise TypeError(
                "a spend must be a dp_accounting DpEvent, a skdp.budget.RdpCurve or a "
                f"skdp.budget.WithExtraDelta, got {type(spend).__name__}"
            )
        with quiet_accounting_logs():
            pld_supported = self._pld_probe.supports(spend)
            found, rdp = self._memo_get(self._rdp_memo, key)
            if not found:
                supported = self._rdp_probe.supports(spend)
                rdp = self._rdp_curve(spend) if supported else None
                self._memo_put(self._rdp_memo, key, rdp, _RDP_MEMO_SIZE)
        if rdp is None and not pld_supported:
            raise UnsupportedSpendError(
                f"neither dp_accounting's PLD nor its RDP accountant supports {spend} under the "
                f"'{self.neighboring_relation.value}' relation, so the ledger cannot account it"
            )
        return Contribution(spend, key, rdp, pld_supported)

    def knows_alone(self, contribution: Contribution) -> bool:
        """Whether :meth:`alone` has this spend's guarantee at hand (memoised)."""
        key = (contribution.key, contribution.extra_delta, contribution.additive)
        return self._memo_get(self._alone_memo, key)[0]

    def alone(self, contribution: Contribution, recorded: float | None = None) -> LedgerTotals:
        """The guarantee of one spend composed alone (``min(PLD, RDP)``), memoised.

        ``recorded``: the epsilon the ledger already recorded for this very spend (a plan
        charged before, maybe by another process); it is taken as is instead of building the
        spend's PLD again, so that a plan keeps one epsilon in the history.
        """
        key = (contribution.key, contribution.extra_delta, contribution.additive)
        found, totals = self._memo_get(self._alone_memo, key)
        if not found and recorded is not None:
            extra = contribution.extra_delta
            atom, additive = (0.0, extra) if contribution.additive else (extra, 0.0)
            left = events_delta(self.delta, atom, additive)
            totals = LedgerTotals(recorded, self.delta, 1, extra_delta=extra, events_delta=left)
            self._memo_put(self._alone_memo, key, totals, _RDP_MEMO_SIZE)
        elif not found:
            mark = RowMark(0, 1)
            state = self.extend(self.empty(), [contribution], mark)
            interval = self.pld_interval(state)
            pld = None
            if interval is not None:
                spends = [(contribution.spend, contribution.key)]
                pld = self.extend_pld(None, spends, interval, mark)
            totals = self.totals(state, pld)
            self._memo_put(self._alone_memo, key, totals, _RDP_MEMO_SIZE)
        return totals

    def _new_rdp_accountant(self) -> VectorisedRdpAccountant:
        return VectorisedRdpAccountant(
            orders=list(self.orders),
            neighboring_relation=self.neighboring_relation.to_dp_accounting(),
        )

    def _rdp_curve(self, event: dp_accounting.DpEvent, key: str | None = None) -> np.ndarray:
        """Per-order RDP of a supported event, as ``RdpAccountant`` adds it up.

        Compositions are split as the accountant splits them (``count`` times the inner event,
        the sum over a list), and each part is memoised: plans that differ only in their number
        of steps (a grid over ``max_iter``) share the expensive part.
        """
        if key is not None:
            found, rdp = self._memo_get(self._rdp_memo, key)
            if found and rdp is not None:
                return rdp
        if isinstance(event, dp_accounting.SelfComposedDpEvent):
            rdp = event.count * self._rdp_curve(event.event, encode_spend(event.event))
        elif isinstance(event, dp_accounting.ComposedDpEvent):
            rdp = np.zeros_like(self.orders)
            for part in event.events:
                rdp = rdp + self._rdp_curve(part, encode_spend(part))
        else:
            rdp = self._leaf_rdp_curve(event)
        if key is not None:
            self._memo_put(self._rdp_memo, key, rdp, _RDP_MEMO_SIZE)
        return rdp

    def _leaf_rdp_curve(self, event: dp_accounting.DpEvent) -> np.ndarray:
        # Under replace-one, the RDP accountant must read the event as the PLD one does.
        equivalent = rdp_equivalent(event, self.neighboring_relation)
        # The accountant computes the (Poisson-sampled) Gaussian, DP-SGD's step, with numpy
        # (VectorisedRdpAccountant: dp_accounting's values, tests/test_gaussian_rdp.py).
        accountant = self._new_rdp_accountant().compose(equivalent)
        # dp_accounting has no public accessor for the per-order RDP; `_rdp` has held it since
        # the first release. The tests compare the ledger with fresh accountants, so a change
        # there is caught.
        rdp = getattr(accountant, "_rdp", None)
        if not isinstance(rdp, np.ndarray) or rdp.shape != self.orders.shape:
            raise RuntimeError(
                "this version of dp_accounting does not expose per-order RDP as skdp expects; "
                "please report it to skdp"
            )
        return np.array(rdp, dtype=np.float64)

    def _event_pld(self, spend: Spend, spend_key: str, interval: float) -> _EventPld:
        key = (spend_key, interval)
        found, result = self._memo_get(self._pld_memo, key)
        if found:
            return result
        accountant = make_accountant("pld", self.neighboring_relation, pld_interval=interval)
        accountant.compose(spend)
        if not math.isfinite(accountant.get_epsilon(self.delta)):
            result = None  # not private (e.g. zero noise): no PLD can bound it
        else:
            # dp_accounting has no public accessor for an accountant's PLD either; see `_rdp`.
            result = getattr(accountant, "_pld", None)
            if not isinstance(result, privacy_loss_distribution.PrivacyLossDistribution):
                raise RuntimeError(
                    "this version of dp_accounting does not expose its PLD as skdp expects; "
                    "please report it to skdp"
                )
        self._memo_put(self._pld_memo, key, result, _PLD_MEMO_SIZE)
        return result

    def _memo_get(self, memo: OrderedDict, key) -> tuple[bool, object]:
        with self._lock:
            if key not in memo:
                return False, None
            memo.move_to_end(key)
            return True, memo[key]

    def _memo_put(self, memo: OrderedDict, key, value, size: int) -> None:
        with self._lock:
            memo[key] = value
            while len(memo) > size:
                memo.popitem(last=False)

    # --- composition ------------------------------------------------------------------------

    def empty(self) -> ComposedState:
        """The state of a ledger with no rows."""
        return ComposedState(RowMark(), np.zeros_like(self.orders), True)

    def extend(
        self, state: ComposedState, new: Sequence[Contribution], mark: RowMark
    ) -> ComposedState:
        """``state`` composed with the ``new`` contributions (in order), covering ``mark``."""
        if state.rdp is None or any(c.rdp is None for c in new):
            rdp = None
        else:
            rdp = state.rdp.copy()
            for c in new:
                rdp += c.rdp
        # One at a time, in ledger order: an extended state adds exactly as a fresh one does.
        log_no_atom, log_no_additive = state.log_no_atom, state.log_no_additive
        for c in new:
            if c.extra_delta > 0.0 and c.additive:
                log_no_additive += math.log1p(-c.extra_delta)
            elif c.extra_delta > 0.0:
                log_no_atom += math.log1p(-c.extra_delta)
        pld_applies = state.pld_applies and all(c.pld_supported for c in new)
        if rdp is None and not pld_applies:
            raise UnsupportedSpendError(
                "no accountant supports these spends together: some have no RDP bound and some "
                "are not supported by the PLD accountant (RDP curves, or events such as "
                "RepeatAndSelectDpEvent), so the ledger cannot compose them"
            )
        return ComposedState(mark, rdp, pld_applies, log_no_atom, log_no_additive)

    def extra_deltas(self, state: ComposedState) -> tuple[float, float]:
        """``(H + P_a, delta')``: the extra deltas' part of delta and the delta left."""
        atom = -math.expm1(state.log_no_atom) if state.log_no_atom < 0.0 else 0.0
        additive = -math.expm1(state.log_no_additive) if state.log_no_additive < 0.0 else 0.0
        return additive + atom, events_delta(self.delta, atom, additive)

    def rdp_epsilon(self, state: ComposedState) -> float:
        """The RDP bound of ``state`` at the delta its extra deltas leave."""
        if state.mark.count == 0:
            return 0.0
        return self._rdp_epsilon(state.rdp, self.extra_deltas(state)[1])

    def pld_interval(self, state: ComposedState) -> float | None:
        """The PLD discretisation for ``state`` (``None``: PLD does not apply).

        RDP is a cheap upper bound on the total; without it, fall back on the budget.
        """
        if state.mark.count == 0 or not state.pld_applies:
            return None
        reference = min(self.epsilon_cap, self.rdp_epsilon(state))
        # Below a thousandth of the budget the interval stops getting finer: a PLD's size grows
        # as 1 / interval, and at a large delta a total can be 0 (one DP-SGD run's PLD at
        # 2**-20 took 200 s). Budgets up to about 10 never reach this floor (2**-20 first).
        return pld_interval_for(max(reference, self.epsilon_cap * _INTERVAL_FLOOR))

    def extend_pld(
        self,
        pld_state: PldState | None,
        spends: Sequence[tuple[Spend, str]],
        interval: float,
        mark: RowMark,
    ) -> PldState:
        """``pld_state`` (``None``: no rows) composed with ``spends`` at ``interval``.

        ``spends`` are ``(spend, key)`` pairs of the inner spends (without extra delta), in
        ledger order. Each spend's own PLD is memoised per process.
        """
        if pld_state is None:
            pld = privacy_loss_distribution.identity(interval)
        elif pld_state.interval != interval:
            raise ValueError("a PLD state can only be extended at its own interval")
        else:
            pld = pld_state.pld
        with quiet_accounting_logs():
            for spend, key in spends:
                if pld is None:
                    break  # some earlier spend is not private: the total stays infinite
                event_pld = self._event_pld(spend, key, interval)
                # dp_accounting's compose, bit for bit, with numpy's tail truncation.
                pld = None if event_pld is None else compose_plds(pld, event_pld)
        return PldState(mark, interval, pld)

    def totals(self, state: ComposedState, pld_state: PldState | None) -> LedgerTotals:
        """The totals of ``state``, with the PLD bound of ``pld_state`` (which must cover the
        same rows at :meth:`pld_interval`; ``None`` when PLD does not apply)."""
        if state.mark.count == 0:
            return LedgerTotals(0.0, self.delta, 0, 0.0, 0.0, None, 0.0, self.delta)
        extra, delta = self.extra_deltas(state)
        rdp_epsilon = self._rdp_epsilon(state.rdp, delta)
        pld_epsilon, interval = math.inf, None
        if state.pld_applies:
            interval = self.pld_interval(state)
            if pld_state is None or pld_state.interval != interval or (
                pld_state.mark != state.mark
            ):
                raise ValueError("the PLD state does not cover the composed rows")
            if pld_state.pld is not None and delta > 0.0:
                pld_epsilon = epsilon_for_delta(pld_state.pld, delta)
        return LedgerTotals(
            min(pld_epsilon, rdp_epsilon), self.delta, state.mark.count, pld_epsilon,
            rdp_epsilon, interval, extra, delta,
        )

    def _rdp_epsilon(self, rdp: np.ndarray | None, delta: float) -> float:
        if rdp is None or delta <= 0.0:  # no bound, or the extra deltas leave nothing
            return math.inf
        epsilon, _ = rdp_privacy_accountant.compute_epsilon(self.orders, rdp, delta)
        return float(epsilon)


# --- storable states ----------------------------------------------------------------------------

# Bump when what a stored state means changes (e.g. how an event is read under a relation), so
# that states written before are recomposed rather than trusted.
_CACHE_VERSION = 1


def _cache_format(composer: Composer) -> str:
    try:
        accounting_version = importlib.metadata.version("dp-accounting")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - vendored copies
        accounting_version = "unknown"
    orders = hashlib.sha256(composer.orders.astype("<f8").tobytes()).hexdigest()[:16]
    return (
        f"skdp.budget composed v{_CACHE_VERSION}; dp_accounting {accounting_version}; "
        f"{composer.neighboring_relation.value}; delta={composer.delta!r}; "
        f"epsilon={composer.epsilon_cap!r}; orders={orders}"
    )


def pld_input(spend: Spend, spend_text: str) -> tuple[Spend, str]:
    """What the PLD composes of a stored spend: ``(inner spend, its key)``."""
    if isinstance(spend, WithExtraDelta):
        return spend.spend, encode_spend(spend.spend)
    return spend, spend_text


def state_to_payload(state: ComposedState) -> tuple[str, bytes]:
    """A JSON header and the RDP curve's bytes, for the ledger's cache."""
    header = {
        "has_rdp": state.rdp is not None,
        "log_no_additive": state.log_no_additive,
        "log_no_atom": state.log_no_atom,
        "pld_applies": state.pld_applies,
    }
    data = b"" if state.rdp is None else np.ascontiguousarray(state.rdp, "<f8").tobytes()
    return json.dumps(header, sort_keys=True, allow_nan=False), data


def state_from_payload(
    mark: RowMark, header: str, data: bytes, n_orders: int
) -> ComposedState | None:
    """Inverse of :func:`state_to_payload` (``None`` if it is not a valid encoding)."""
    try:
        values = json.loads(header)
        has_rdp, pld_applies = values["has_rdp"], values["pld_applies"]
        logs = float(values["log_no_atom"]), float(values["log_no_additive"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (isinstance(has_rdp, bool) and isinstance(pld_applies, bool)):
        return None
    if not all(math.isfinite(v) and v <= 0.0 for v in logs):
        return None
    rdp = None
    if has_rdp:
        if len(data) != 8 * n_orders:
            return None
        rdp = np.frombuffer(data, dtype="<f8").astype(np.float64)
        if np.any(np.isnan(rdp)) or np.any(rdp < 0.0):
            return None
    elif data or not pld_applies:
        return None
    return ComposedState(mark, rdp, pld_applies, *logs)


def pld_state_to_payload(state: PldState) -> tuple[str, bytes]:
    """A JSON header and the PLD's arrays, for the ledger's cache."""
    pld_header, data = ("", b"") if state.pld is None else pld_to_payload(state.pld)
    header = {"interval": state.interval, "pld": pld_header, "private": state.pld is not None}
    return json.dumps(header, sort_keys=True, allow_nan=False), data


def pld_state_from_payload(mark: RowMark, header: str, data: bytes) -> PldState | None:
    """Inverse of :func:`pld_state_to_payload` (``None`` if it is not a valid encoding)."""
    try:
        values = json.loads(header)
        interval, private = float(values["interval"]), values["private"]
        pld = pld_from_payload(values["pld"], data) if private is True else None
    except (KeyError, TypeError, ValueError):  # PayloadError is a ValueError
        return None
    if private is not True and (private is not False or data):
        return None
    return PldState(mark, interval, pld)
