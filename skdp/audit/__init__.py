"""Empirical privacy auditing: lower bounds on epsilon from membership tests on canaries.

A DP estimator proves an *upper* bound on what one row can change (``privacy_spent_``). An
audit estimates a *lower* bound by experiment: it inserts canary rows, trains, and tests from
the released model whether each canary was in the training data. If the tests succeed more
often than (epsilon, delta)-DP allows, the guarantee is wrong, whatever the proof says. A
lower bound below the claim is evidence of nothing more than that this test did not find a
violation; it does not prove the claim. See ``docs/user_guide/audit.md``.

- :func:`audit_multi_run`: many fits with and without one canary (Clopper-Pearson intervals).
- :func:`audit_one_run`: one fit with many canaries (Steinke, Nasr & Jagielski 2023).
- The statistics, usable on scores from any experiment:
  :func:`multi_run_epsilon_lower_bound`, :func:`one_run_epsilon_lower_bound`,
  :func:`one_run_p_value`, :func:`clopper_pearson_upper`, :func:`epsilon_from_error_rates`.
"""

from ._bounds import (
    ThresholdBound,
    clopper_pearson_interval,
    clopper_pearson_upper,
    epsilon_from_error_rates,
    multi_run_epsilon_lower_bound,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)
from ._canaries import CANARY_KINDS, make_canaries
from ._multi_run import audit_multi_run
from ._one_run import audit_one_run, one_run_guesses
from ._result import AuditResult
from ._scores import canary_scores

__all__ = [
    "AuditResult",
    "CANARY_KINDS",
    "ThresholdBound",
    "audit_multi_run",
    "audit_one_run",
    "canary_scores",
    "clopper_pearson_interval",
    "clopper_pearson_upper",
    "epsilon_from_error_rates",
    "make_canaries",
    "multi_run_epsilon_lower_bound",
    "one_run_epsilon_lower_bound",
    "one_run_guesses",
    "one_run_p_value",
]
