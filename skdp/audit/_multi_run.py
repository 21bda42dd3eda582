"""The multi-run audit: many models trained with and without one canary."""

from __future__ import annotations

import numpy as np

from ..accounting import NeighboringRelation
from ._bounds import multi_run_epsilon_lower_bound
from ._canaries import make_canaries
from ._result import AuditResult
from ._runs import check_audit_inputs, check_canary_argument, fit_many, run_seeds, stack_rows

__all__ = ["audit_multi_run"]


def audit_multi_run(
    estimator,
    X,
    y,
    *,
    n_runs: int = 200,
    canary: str = "crafted",
    canary_norm: float | None = None,
    dedicated_features: bool = True,
    confidence: float = 0.95,
    selection_fraction: float = 0.3,
    random_state=None,
    n_jobs: int | None = None,
) -> AuditResult:
    """Empirical lower bound on epsilon from many fits with and without one canary.

    ``n_runs`` clones of ``estimator`` are trained, half on the neighbouring data set that
    contains the canary ("in") and half on the one that does not ("out"); each clone gets its
    own ``random_state``. The canary's score under each model (its negative loss, see
    :func:`skdp.audit.canary_scores`) feeds a threshold membership test, whose error rates give
    the bound (:func:`skdp.audit.multi_run_epsilon_lower_bound`: threshold chosen on a
    ``selection_fraction`` of the runs, Clopper-Pearson bounds on the rest).

    The pair of data sets follows the estimator's neighbouring relation: ``(X, y)`` and ``(X,
    y)`` plus the canary under add/remove-one (the default accountants); under replace-one
    (``accountant='last_iterate'``) ``(X, y)`` plus a copy of one of its rows, and ``(X, y)``
    plus the canary.

    Parameters
    ----------
    estimator : skdp estimator
        The configuration to audit (unfitted or fitted; it is cloned, never changed). Its
        ``budget`` is not charged, nor is any enclosing ``with budget:`` block.
    X : array-like of shape (n_samples, n_features)
        The auditor's training data: not private data (the audit publishes statistics of
        models trained on it). Small data and few steps make audits cheap.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Its targets.
    n_runs : int, default=200
        Number of models trained (split evenly between "in" and "out"). The largest bound
        any audit can report grows like ``log(n_runs)``: about 2.3 for 100 runs, 4.0 for 1000
        (perfect separation, 95% confidence).
    canary : {'crafted', 'random'}, default='crafted'
        A crafted canary (far from the data, in its least-used direction, with an unlikely
        label) or a random one (a data row with a wrong label); see
        :func:`skdp.audit.make_canaries`.
    canary_norm : float, default=None
        Norm of a crafted canary; ``None``: 4 times the largest row norm of ``X``.
    dedicated_features : bool, default=True
        Put a crafted canary on a feature column of its own, zero in every row of ``X`` (the
        audit then trains on ``X`` with that column appended: a DP guarantee covers every
        data set, so this is a fair test, and by far the most sensitive one for small data).
        Crafted canaries are scored relative to the origin (see
        :func:`skdp.audit.canary_scores`).
    confidence : float, default=0.95
        Probability that the bound holds if the estimator's guarantee is correct.
    selection_fraction : float in (0, 1), default=0.3
        Share of the runs used only to choose the threshold.
    random_state : int, numpy Generator or None
        Seeds the canary, the fits and the split.
    n_jobs : int, default=None
        Fits in parallel with joblib (``None``: one at a time).

    Returns
    -------
    result : AuditResult
        ``epsilon_lower`` against ``epsilon_claimed`` (the largest ``privacy_spent_`` of the
        fits), with the threshold and error rates in ``details``. A fit that diverges
        (FloatingPointError) counts as an outcome in which every canary scores ``+inf``
        (``details['n_diverged_in']`` and ``['n_diverged_out']`` count them): a broken
        mechanism can diverge on the canary, and an attacker would see it.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.audit import audit_multi_run
    >>> from skdp.linear_model import DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3)) / 3
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = DPLogisticRegression(privacy=(1.0, 1e-3), batch_size=50, max_iter=3)
    >>> result = audit_multi_run(clf, X, y, n_runs=100, random_state=0)
    >>> result.epsilon_lower <= result.epsilon_claimed
    True
    """
    canary = check_canary_argument(canary)
    if n_runs < 8:
        raise ValueError(f"n_runs must be at least 8, got {n_runs}")
    data, relation, delta = check_audit_inputs(estimator, X, y)
    rng = np.random.default_rng(random_state)
    canaries = make_canaries(
        data.X, data.y, 1, canary, data.classifier, rng, canary_norm, dedicated_features
    )
    X, y = canaries.X, data.y
    X_canary, y_canary = canaries.X_canary, canaries.y_canary
    if relation is NeighboringRelation.REPLACE_ONE:
        filler = rng.integers(0, X.shape[0], size=1)
        X_out, y_out = stack_rows(X, y, X[filler], y[filler])
    else:
        X_out, y_out = X, y
    X_in, y_in = stack_rows(X, y, X_canary, y_canary)

    n_in = n_runs // 2
    seeds = run_seeds(rng, n_runs)
    ref = canaries.reference
    tasks = [(estimator, X_in, y_in, s, X_canary, y_canary, ref, True) for s in seeds[:n_in]]
    tasks += [(estimator, X_out, y_out, s, X_canary, y_canary, ref, True) for s in seeds[n_in:]]
    outcomes = fit_many(tasks, n_jobs)
    scores = np.array([o[0][0] for o in outcomes])
    claims = np.array([o[1] for o in outcomes])
    if np.isnan(claims).all():
        raise FloatingPointError(
            "every audited fit diverged (the estimators raise FloatingPointError rather than "
            "release non-finite parameters): there is nothing to audit"
        )
    claimed = float(np.nanmax(claims))

    bound, selection = multi_run_epsilon_lower_bound(
        scores[:n_in], scores[n_in:], delta, confidence, selection_fraction, rng
    )
    return AuditResult(
        method="multi_run",
        epsilon_lower=bound.epsilon_lower,
        epsilon_claimed=claimed,
        delta=delta,
        confidence=confidence,
        canary=canary,
        n_fits=n_runs,
        details=dict(
            threshold=bound.threshold,
            direction=bound.direction,
            fpr=bound.fpr,
            fnr=bound.fnr,
            fpr_upper=bound.fpr_upper,
            fnr_upper=bound.fnr_upper,
            epsilon_point=bound.epsilon_point,
            n_eval_in=bound.n_in,
            n_eval_out=bound.n_out,
            selection_epsilon_lower=selection.epsilon_lower,
            neighboring_relation=relation.value,
            n_diverged_in=int(np.isnan(claims[:n_in]).sum()),
            n_diverged_out=int(np.isnan(claims[n_in:]).sum()),
            in_scores=scores[:n_in],
            out_scores=scores[n_in:],
        ),
    )
