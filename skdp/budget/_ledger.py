"""PrivacyBudget: a persistent, shared, append-only privacy ledger with a total budget.

The public class only: it checks its arguments and composes the parts that do the work (the
file and its composed states in :mod:`._file`, the decision in :mod:`._decisions`, the atomic
charge in :mod:`._charging`, the texts in :mod:`._messages`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..accounting._plan import NeighboringRelation
from ..accounting._rdp_orders import DEFAULT_ORDERS
from . import _context
from ._charging import charge_atomically
from ._checks import absolute_path, check_labels, check_limits, check_relation, check_timeout
from ._codec import encode_params
from ._decisions import decide
from ._errors import BudgetExceededError
from ._file import LedgerFile
from ._html import budget_html
from ._messages import limits_differ, not_the_pickled_ledger
from ._records import LedgerTotals, Spend, SpendRecord
from ._store import create_ledger, initialise, open_ledger, temporary_file
from ._sync import delete_at_exit

__all__ = ["PrivacyBudget"]


class PrivacyBudget:
    """A total privacy budget, shared by every fit that charges it, kept in a file.

    Each fit charges its spend (a ``dp_accounting`` DpEvent) before it touches the data. The
    ledger composes all recorded spends tightly (PLD, or per-order RDP; never a sum of epsilons)
    and refuses a spend that would take the composed epsilon at the budget's delta above the
    budget's epsilon. Recorded spends are never removed.

    A spend may carry an *extra delta* (:class:`~skdp.budget.WithExtraDelta`): a part of the
    mechanism that costs only delta, such as the new-key part of partition selection (a key
    only one of two neighbouring datasets has is released with probability at most ``p``).
    ``dp_accounting`` has no event for it. The ledger composes the extra deltas separately
    (``P = 1 - prod(1 - p_k)``) and computes every epsilon of the other parts at the delta they
    leave, ``delta' = (delta - P) / (1 - P)`` (additive extra deltas, which private searches
    spend, are taken off without the ``1 - P`` factor; see
    :class:`~skdp.budget.WithExtraDelta`). A spend whose extra delta alone reaches the budget's
    delta, or that would take the extra deltas of the ledger there, is refused.
    :meth:`totals` reports the composed extra delta and the reduced delta.

    The ledger is an SQLite file, so it is shared by clones and by worker processes and survives
    restarts:

    * ``copy.copy(budget)`` and ``copy.deepcopy(budget)`` return ``budget`` itself, so
      scikit-learn's ``clone`` (e.g. inside ``GridSearchCV``) charges the same ledger.
    * Pickling (joblib ``n_jobs``) stores only the path and the ledger's identity; unpickling
      reopens the same file, never a copy of the records.
    * ``PrivacyBudget(epsilon, delta, path=p)`` in a new process sees all past spends.

    Parameters
    ----------
    epsilon : float
        The budget: the composed epsilon of all spends may not exceed it. Positive, finite.
    delta : float
        Every epsilon of the ledger is stated at this delta, in (0, 1).
    path : str or path-like, default=None
        The ledger file. A new ledger is created when no file exists there. An existing ledger
        is opened if its limits (epsilon, delta, neighbouring relation) are the ones given,
        otherwise :class:`LedgerError` is raised: the stored limits are authoritative, and
        :meth:`open` adopts them. A file that is not an intact skdp ledger raises
        :class:`LedgerError` and is never reset or overwritten. With ``None``, the ledger is a
        new private temporary file (mode 0600) that is deleted when this process exits.
    neighboring_relation : {'add_or_remove_one', 'replace_one'}, default='add_or_remove_one'
        The neighbouring relation of every spend; fixed when the ledger is created.
    timeout : float, default=30.0
        Seconds to wait for another process's write to finish before giving up.

    Attributes
    ----------
    epsilon, delta : float
        The budget's limits (as stored in the file).
    path : str
        Absolute path of the ledger file.
    neighboring_relation : NeighboringRelation

    Notes
    -----
    Concurrency: a charge composes the recorded spends with the new one outside any lock, then,
    in one SQLite ``BEGIN IMMEDIATE`` transaction, checks that the ledger still holds exactly
    the rows it composed and records the spend; if another spend landed meanwhile it composes
    that one too and tries again (after a few tries it decides inside the transaction). The
    check and the insert are atomic, so two charges that together exceed the budget never both
    pass, and none is lost or double-counted. The write lock is held for an insert, not for a
    composition. A process killed during a charge leaves the ledger as it was before that
    charge, or with it fully recorded.

    The ledger's directory must be writable: SQLite keeps a journal next to the file during a
    charge. Locking relies on the file system's locks, so keep ledgers on a local disk rather
    than a network share.

    Speed: a charge decides with RDP first (per-order RDP adds up, so one more spend costs
    microseconds): when the RDP bound of the total stays within the budget, so does the
    tighter ``min(PLD, RDP)``, and the spend fits. Only near the limit (or when RDP cannot
    bound some spend) is the PLD composed to decide. The spend's own RDP curve and PLD, which
    ``dp_accounting`` computes in tens to hundreds of milliseconds for a long DP-SGD run, are
    computed once per process per distinct spend; a spend already in the ledger reuses its
    recorded epsilon. Reads (:meth:`totals`, :meth:`spent`) compose the PLD too, as tight as a
    fresh ``dp_accounting`` PLD accountant. The composed states (the summed RDP curve at each
    charge, the composed PLD when a read or a charge near the limit made it) are stored in the
    file with a hash of the rows they cover, so a process that opens the ledger extends them
    rather than recomposing every spend; they are used only if the rows still hash to them.

    ``with budget:`` makes ``budget`` the current budget (:func:`skdp.budget.current_budget`) in
    this thread or task; it does not reach joblib worker processes, where only an explicit
    ``budget=`` parameter works.

    Examples
    --------
    >>> import dp_accounting
    >>> from skdp.budget import PrivacyBudget
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5)  # a temporary ledger
    >>> step = dp_accounting.GaussianDpEvent(noise_multiplier=8.0)
    >>> records = [budget.charge(step, estimator="example") for _ in range(4)]
    >>> round(records[0].epsilon, 2)  # one spend on its own
    0.43
    >>> round(budget.spent()[0], 2)  # four, composed tightly: far less than 4 * 0.43
    0.93
    >>> budget.would_exceed(step)
    True
    """

    def __init__(
        self,
        epsilon: float,
        delta: float,
        path: str | os.PathLike[str] | None = None,
        *,
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
        timeout: float = 30.0,
    ) -> None:
        epsilon, delta = check_limits(epsilon, delta)
        relation = check_relation(neighboring_relation)
        timeout = check_timeout(timeout)
        limits = dict(epsilon=epsilon, delta=delta, relation=relation, orders=DEFAULT_ORDERS)
        if path is None:
            abspath = temporary_file()
            delete_at_exit(abspath)
            initialise(abspath, **limits)
        else:
            abspath = absolute_path(path)
            if not os.path.lexists(abspath):
                create_ledger(abspath, **limits)
        meta = open_ledger(abspath, timeout)
        if (meta.epsilon, meta.delta, meta.neighboring_relation) != (epsilon, delta, relation):
            raise limits_differ(abspath, meta, epsilon, delta, relation)
        self._file = LedgerFile(abspath, meta, timeout)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, timeout: float = 30.0) -> PrivacyBudget:
        """Open an existing ledger with the limits stored in it.

        Raises :class:`LedgerError` if there is no intact skdp ledger at ``path``.
        """
        abspath = absolute_path(path)
        timeout = check_timeout(timeout)
        budget = cls.__new__(cls)
        budget._file = LedgerFile(abspath, open_ledger(abspath, timeout), timeout)
        return budget

    # --- limits ---------------------------------------------------------------------------

    @property
    def epsilon(self) -> float:
        return self._file.meta.epsilon

    @property
    def delta(self) -> float:
        return self._file.meta.delta

    @property
    def path(self) -> str:
        return self._file.path

    @property
    def neighboring_relation(self) -> NeighboringRelation:
        return self._file.meta.neighboring_relation

    # --- spending -------------------------------------------------------------------------

    def charge(
        self,
        spend: Spend,
        *,
        estimator: str,
        params: Mapping[str, Any] | None = None,
        mechanism: str = "",
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
    ) -> SpendRecord:
        """Record ``spend`` if the budget allows it, atomically; otherwise record nothing.

        Call it once the noise is calibrated and before the data is read. The ledger composes
        every recorded spend with this one; if the composed epsilon at the budget's delta
        exceeds the budget's epsilon it raises :class:`BudgetExceededError`, otherwise it
        records the spend, atomically with a check that nothing else was recorded since it
        composed (see Notes of :class:`PrivacyBudget`). A recorded spend is never rolled
        back, even if the fit fails afterwards: the mechanism may already have run.

        Parameters
        ----------
        spend : DpEvent, RdpCurve or WithExtraDelta
            What the fit spends, as a ``dp_accounting`` DpEvent, or as an RDP curve for
            mechanisms that have no DpEvent; wrapped in :class:`~skdp.budget.WithExtraDelta`
            when part of the mechanism costs only an extra delta.
        estimator : str
            Who spends (e.g. the estimator's class name).
        params : dict, optional
            The spender's parameters, stored for the record (``repr()`` of non-JSON values).
        mechanism : str, default=''
            Free-text description of the mechanism, stored for the record.
        neighboring_relation : {'add_or_remove_one', 'replace_one'}, default='add_or_remove_one'
            The relation ``spend`` is stated under; it must be the ledger's (no conversion).

        Returns
        -------
        SpendRecord
            The record as stored.

        Raises
        ------
        BudgetExceededError
            The spend would exceed the budget (its epsilon, or its extra delta together with
            those already recorded reaching the budget's delta); nothing was recorded.
        ValueError
            The relation differs from the ledger's, or no accountant supports the spend.
        """
        check_labels(estimator, mechanism)
        contribution, spend_text = self._file.prepare(spend, neighboring_relation)
        return charge_atomically(
            self._file, contribution, spend, spend_text,
            estimator=estimator, params_text=encode_params(params), mechanism=mechanism,
        )

    def check(
        self,
        spend: Spend,
        *,
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
    ) -> LedgerTotals:
        """The totals the ledger would reach with ``spend``, without recording anything.

        Raises :class:`BudgetExceededError` if ``spend`` would exceed the budget now. Another
        process may spend in between: only :meth:`charge` decides atomically.
        """
        contribution, _ = self._file.prepare(spend, neighboring_relation)
        state = self._file.state()
        return decide(self._file, state, contribution, None, None, exact=True).totals

    def would_exceed(
        self,
        spend: Spend,
        *,
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
    ) -> bool:
        """Whether :meth:`charge` would refuse ``spend`` now (read-only).

        Decides as :meth:`charge` does (RDP first, PLD near the limit), so it is as fast.
        """
        contribution, _ = self._file.prepare(spend, neighboring_relation)
        state = self._file.state()
        own = self._file.composer.alone(contribution)
        if own.events_delta <= 0.0:
            return True
        try:
            decide(self._file, state, contribution, own, None)
        except BudgetExceededError:
            return True
        return False

    # --- reading --------------------------------------------------------------------------

    def totals(self) -> LedgerTotals:
        """The composed guarantee of everything recorded, with how it was computed."""
        return self._file.totals()

    def spent(self) -> tuple[float, float]:
        """``(epsilon, delta)``: everything recorded, composed tightly, at the budget's delta.

        ``epsilon`` is the minimum of the PLD and RDP bounds of the composition of all spends
        (see :meth:`totals`); it is not the sum of the spends' epsilons.
        """
        totals = self.totals()
        return totals.epsilon, totals.delta

    def remaining(self) -> float:
        """``max(epsilon - spent epsilon, 0)``: the epsilon left at the budget's delta.

        A gauge, not a promise about the next spend: composition is not additive, so a spend
        whose epsilon on its own is larger than ``remaining()`` may still fit (many Gaussian
        spends compose to much less than the sum of their epsilons), and one slightly smaller
        may not. :meth:`would_exceed` and :meth:`check` answer for a given spend.
        """
        return max(self.epsilon - self.spent()[0], 0.0)

    def history(self) -> list[SpendRecord]:
        """Every recorded spend, oldest first."""
        return self._file.records()

    # --- sharing --------------------------------------------------------------------------

    def __copy__(self) -> PrivacyBudget:
        return self  # one ledger, one handle: clones must charge the same budget

    def __deepcopy__(self, memo: dict[int, Any]) -> PrivacyBudget:
        return self

    def __reduce__(self):
        # A handle, not the records: the unpickled budget reopens the same file and checks that
        # it is still the same ledger.
        return _reopen, (self._file.path, self._file.meta.ledger_id, self._file.timeout)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PrivacyBudget):
            return NotImplemented
        return self._file.key == other._file.key

    def __hash__(self) -> int:
        return hash(self._file.key)

    def __repr__(self) -> str:
        relation = ""
        if self.neighboring_relation is not NeighboringRelation.ADD_OR_REMOVE_ONE:
            relation = f", neighboring_relation='{self.neighboring_relation.value}'"
        return (
            f"PrivacyBudget(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"path={self.path!r}{relation})"
        )

    def _repr_html_(self) -> str:  # Jupyter: a bar of spent vs total, and the spends
        return budget_html(self)

    def __enter__(self) -> PrivacyBudget:
        _context.enter(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        _context.leave()


def _reopen(path: str, ledger_id: str, timeout: float) -> PrivacyBudget:
    # Pickles name this function: keep its module and name.
    budget = PrivacyBudget.open(path, timeout=timeout)
    if budget._file.meta.ledger_id != ledger_id:
        raise not_the_pickled_ledger(path)
    return budget
