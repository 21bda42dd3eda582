"""The outcome of an audit."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["AuditResult"]


@dataclass(frozen=True)
class AuditResult:
    """An empirical lower bound on epsilon next to the epsilon the estimator claims.

    Attributes
    ----------
    method : {'multi_run', 'one_run'}
        Which audit produced it.
    epsilon_lower : float
        With probability at least ``confidence`` (over the audit's randomness), the audited
        configuration is *not* (epsilon, delta)-DP for any epsilon below this, if its
        guarantee is wrong; if the guarantee is right it is below ``epsilon_claimed`` with at
        least that probability.
    epsilon_claimed : float
        The epsilon the estimator proves for the audited fits (``privacy_spent_``; the largest
        over the fits of a multi-run audit).
    delta : float
        The delta at which both are stated.
    confidence : float
        Confidence level of ``epsilon_lower``.
    canary : str
        ``'crafted'`` or ``'random'``.
    n_fits : int
        Number of models trained.
    details : dict
        Method-specific counts: for ``'multi_run'`` the threshold, observed and upper-bounded
        error rates and the point estimate; for ``'one_run'`` the number of canaries, guesses
        and correct guesses of the best guess count, and every guess count tried.
    """

    method: str
    epsilon_lower: float
    epsilon_claimed: float
    delta: float
    confidence: float
    canary: str
    n_fits: int
    details: dict = field(default_factory=dict, compare=False)

    @property
    def violation(self) -> bool:
        """Whether the audit refutes the claim: ``epsilon_lower > epsilon_claimed``."""
        return self.epsilon_lower > self.epsilon_claimed

    def __str__(self) -> str:
        verdict = "REFUTES the claim" if self.violation else "consistent with the claim"
        return (
            f"{self.method} audit ({self.canary} canaries, {self.n_fits} fits): epsilon >= "
            f"{self.epsilon_lower:.3g} with {self.confidence:.0%} confidence, claimed "
            f"{self.epsilon_claimed:.3g} at delta={self.delta:g}: {verdict}"
        )
