"""Empirical privacy audits of the DP transformers (``skdp.preprocessing``), with teeth.

Each experiment fits a transformer many times (fresh noise: one ``random_state`` per fit) on a
fixed data set D ("out") and on D plus one canary row ("in"), scores the canary from the
*released* fitted attributes only, and turns the scores into an empirical lower bound on epsilon
with :func:`skdp.audit.multi_run_epsilon_lower_bound` (threshold chosen on 30% of the runs,
Clopper-Pearson on the rest, 95% confidence). The bound must stay below the claim
(``privacy_spent_[0]``) for the real mechanisms, and exceed it for deliberately broken ones
(monkeypatched here, never in library code; each breaker counts its calls, so a breaker that no
longer reaches the code fails loudly instead of passing quietly).

The data sets and canaries are chosen so that a simple score sees the whole Gaussian
mechanism (see ``docs/developers/audit.md``, "Auditing the DP transformers"):

* scaler, public bounds: every data row has ``u + v = -1`` (u in {-1/2, 0}), so
  ``mean_u + 2 E[u^2]``, rebuilt from ``mean_`` and ``var_``, is ``(T1 + T2 + T0) / T0``; the
  canary, far beyond the upper bound, adds (1, 1, 1) per column, the sensitivity direction;
* imputer (mean), public bounds: every row at u = -0.9, so the mean is nearly ``(T1 + T0)/T0``;
* encoder, Gaussian part: the canary adds one row to an existing category of every column; the
  score is the sum of their released counts;
* encoder with public categories and ``max_categories`` (a Gaussian histogram): the same;
* encoder, partition selection: the canary brings a new category to every column; the score is
  how many of them are released;
* scaler, bounds search (``bounds=None``): 99% of the rows at 1, 1% at 1e6 and the canary at
  1e12 (beyond the grid); the score is the released upper bound. Noise off it separates
  perfectly; with noise, the search's output sees a small fraction of the mechanism.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from skdp.audit import multi_run_epsilon_lower_bound
from skdp.preprocessing import (
    DPOneHotEncoder,
    DPSimpleImputer,
    DPStandardScaler,
    _encoder,
    _mechanisms,
    _scaler,
)

DELTA = 1e-5


pytestmark = pytest.mark.usefixtures("quiet_privacy_warnings")


# --- experiments ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Experiment:
    """A membership experiment: ``make(random_state)`` gives an unfitted transformer, fitted on
    ``X_in`` (D plus the canary) or ``X_out`` (D); ``score(fitted)`` reads released attributes
    only (higher: more likely "in")."""

    name: str
    make: Callable[[int], object]
    X_out: object
    X_in: object
    score: Callable[[object], float]


@dataclass(frozen=True)
class Outcome:
    epsilon_lower: float
    epsilon_claimed: float
    epsilon_point: float
    fpr: float
    fnr: float
    in_scores: np.ndarray
    out_scores: np.ndarray

    def __str__(self) -> str:
        return (
            f"epsilon >= {self.epsilon_lower:.3f} (claimed {self.epsilon_claimed:.3f}; point "
            f"estimate {self.epsilon_point:.3f}, FPR {self.fpr:.4f}, FNR {self.fnr:.4f})"
        )


def run_experiment(experiment: Experiment, n_runs: int, seed: int) -> Outcome:
    """``n_runs`` fits, half "in", each with its own ``random_state``; the multi-run bound."""
    n_in = n_runs // 2
    scores, claims = np.empty(n_runs), np.empty(n_runs)
    for i in range(n_runs):
        est = experiment.make(seed * 1_000_003 + i)
        est.fit(experiment.X_in if i < n_in else experiment.X_out)
        scores[i] = experiment.score(est)
        claims[i] = est.privacy_spent_[0]
        assert est.privacy_spent_[1] == DELTA
    assert np.ptp(claims) == 0.0, "the claim must not depend on the data"
    bound, _ = multi_run_epsilon_lower_bound(scores[:n_in], scores[n_in:], DELTA, rng=seed)
    return Outcome(
        bound.epsilon_lower, float(claims[0]), bound.epsilon_point, bound.fpr, bound.fnr,
        scores[:n_in], scores[n_in:],
    )


def _with_canary(X, canary):
    return np.vstack([X, np.asarray(canary, dtype=X.dtype)[None, :]])


def scaler_experiment(epsilon: float, n: int = 1000, d: int = 2) -> Experiment:
    """DPStandardScaler with public bounds [0, 10] (centre 5, radius 5).

    Rows alternate u = -1/2 and u = 0 (x = 2.5 and 5), for which v = 2u^2 - 1 = -1 - u: every
    row adds 0 to T1 + T2 + T0 (the released sums of u, v and the observed indicator), so
    ``a + 2 m`` (a = T1/T0 from ``mean_``, m = (T2/T0 + 1)/2 = E[u^2] from ``var_`` and a) is
    ``(T1 + T2 + T0)/T0``, up to constants: the projection of the noisy sums on (1, 1, 1), the
    direction the canary (1000 in every column, clipped to u = 1: (1, 1, 1)) moves them. The
    score's shift is 1/noise_multiplier standard deviations: the whole Gaussian mechanism.
    (The variance is about 0.0625 r^2, far above the floor of one standard error.)
    """
    lower, upper = 0.0, 10.0
    centre, radius = (lower + upper) / 2, (upper - lower) / 2
    X = np.tile(np.array([[2.5], [5.0]]), (n // 2, d))

    def score(est):
        a = (est.mean_ - centre) / radius
        m = est.var_ / radius**2 + a**2  # minus (sigma/T0)^2: a constant to first order
        return float(np.sum(a + 2 * m))

    return Experiment(
        "DPStandardScaler (public bounds)",
        lambda rs: DPStandardScaler(privacy=(epsilon, DELTA), bounds=(lower, upper),
                                    random_state=rs),
        X, _with_canary(X, np.full(d, 1000.0)), score,
    )


def imputer_experiment(epsilon: float, n: int = 1000, d: int = 2) -> Experiment:
    """DPSimpleImputer(strategy='mean') with public bounds [0, 10]: every row at x = 0.5 (u =
    -0.9), the canary at 1000 (u = 1 once clipped) in every column. ``statistics_`` is the
    noisy T1/T0 per column, which moves by (1 - u)/sqrt(1 + u^2) = 0.9989 times the
    sensitivity direction of (T1, T0): nearly the whole mechanism."""
    X = np.full((n, d), 0.5)
    return Experiment(
        "DPSimpleImputer (mean, public bounds)",
        lambda rs: DPSimpleImputer(privacy=(epsilon, DELTA), bounds=(0.0, 10.0),
                                   random_state=rs),
        X, _with_canary(X, np.full(d, 1000.0)), lambda est: float(np.sum(est.statistics_)),
    )


def _categorical_data(n: int, m: int) -> np.ndarray:
    column = np.array(["a"] * (3 * n // 5) + ["b"] * (n - 3 * n // 5), dtype=object)
    return np.column_stack([column] * m)


def encoder_count_experiment(epsilon: float, n: int = 1000, m: int = 2) -> Experiment:
    """DPOneHotEncoder(categories='auto'): two frequent categories per column (600 'a', 400 'b',
    far above the threshold); the canary adds one row 'a' in every column. The score is the sum
    of the released counts of 'a': it moves by m, with noise sqrt(m) * sigma = m * z."""
    X = _categorical_data(n, m)

    def score(est):
        total = 0.0
        for categories, counts in zip(est.categories_, est.category_counts_, strict=True):
            kept = list(categories)
            total += counts[kept.index("a")] if "a" in kept else -math.inf
        return total

    return Experiment(
        "DPOneHotEncoder (counts)",
        lambda rs: DPOneHotEncoder(privacy=(epsilon, DELTA), random_state=rs),
        X, _with_canary(X, ["a"] * m), score,
    )


def encoder_public_counts_experiment(epsilon: float, n: int = 1000, m: int = 2) -> Experiment:
    """DPOneHotEncoder with public categories and ``max_categories``: the counts come from a
    Gaussian histogram over the public categories (plus one bin for every other value), with no
    threshold. Same data, canary and score as :func:`encoder_count_experiment`."""
    experiment = encoder_count_experiment(epsilon, n, m)
    return Experiment(
        "DPOneHotEncoder (public categories, counts)",
        lambda rs: DPOneHotEncoder(privacy=(epsilon, DELTA), categories=[["a", "b"]] * m,
                                   max_categories=2, random_state=rs),
        experiment.X_out, experiment.X_in, experiment.score,
    )


def encoder_selection_experiment(epsilon: float, n: int = 1000, m: int = 2) -> Experiment:
    """DPOneHotEncoder(categories='auto'): the canary brings a category of its own ('canary')
    to every column; the score is in how many columns it is released. A correct threshold keeps
    it with probability at most extra_delta_ = delta / 10 (in all columns together)."""
    X = _categorical_data(n, m)
    return Experiment(
        "DPOneHotEncoder (partition selection)",
        lambda rs: DPOneHotEncoder(privacy=(epsilon, DELTA), random_state=rs),
        X, _with_canary(X, ["canary"] * m),
        lambda est: float(sum("canary" in list(c) for c in est.categories_)),
    )


def bounds_search_experiment(epsilon: float, n: int = 12_000) -> Experiment:
    """DPStandardScaler(bounds=None): the private bounds search for the (0.01, 0.99) quantiles.

    99% of the rows at 1 and 1% at 1e6, so that the signed count of the 0.99 quantile, #{x <= g}
    - 0.99 N, is exactly 0 on the whole gap [1, 1e6) without the canary and -0.99 with it (the
    canary, at 1e12, is beyond the public grid: never below a probe). Without noise the search
    then stops at 1 without the canary and at 1e6 with it. The score is the released upper
    bound ``bounds_[0, 1]``. ``n`` is large enough that the quantiles are not moved inward
    (``quantiles_`` would otherwise depend on n, see
    ``test_relaxed_quantiles_reveal_the_dataset_size``).
    """
    k = int(round(0.99 * n))
    X = np.concatenate([np.ones(k), np.full(n - k, 1e6)])[:, None]
    return Experiment(
        "DPStandardScaler (bounds search)",
        lambda rs: DPStandardScaler(privacy=(epsilon, DELTA), random_state=rs),
        X, _with_canary(X, [1e12]), lambda est: float(est.bounds_[0, 1]),
    )


EXPERIMENTS = {
    "scaler": scaler_experiment,
    "imputer": imputer_experiment,
    "encoder_counts": encoder_count_experiment,
    "encoder_public_counts": encoder_public_counts_experiment,
    "encoder_selection": encoder_selection_experiment,
    "bounds_search": bounds_search_experiment,
}


# --- breakers (monkeypatches; each returns a counter of its calls) --------------------------------
def scale_noise(monkeypatch, factor: float) -> list[int]:
    """Every Gaussian draw of the mechanisms with ``factor`` times its sigma (0: noise off),
    while the claim (calibrated for the right sigma) is unchanged."""
    calls = [0]
    original = _mechanisms.gaussian_noise

    def broken(rng, sigma, shape):
        calls[0] += 1
        return original(rng, sigma * factor, shape)

    monkeypatch.setattr(_mechanisms, "gaussian_noise", broken)
    return calls


def disable_clipping(monkeypatch) -> list[int]:
    """``u = (x - c) / r`` without clipping x to the bounds (nor u to [-1, 1]); the noise is
    still scaled to the clipped sensitivity. (``v = 2u^2 - 1`` is still clipped to [-1, 1] by
    the moment mechanism, so an unclipped canary moves the sum of u.)"""
    calls = [0]

    def unclipped(X, lower, upper):
        calls[0] += 1
        observed = ~np.isnan(X)
        centre, radius = (lower + upper) / 2.0, (upper - lower) / 2.0
        safe_radius = np.where(radius > 0, radius, 1.0)
        u = np.where(observed & (radius > 0), (np.where(observed, X, centre) - centre)
                     / safe_radius, 0.0)
        return u, observed

    monkeypatch.setattr(_mechanisms, "normalised_values", unclipped)
    return calls


def shrink_moment_sensitivity(monkeypatch) -> list[int]:
    """The moments' L2 sensitivity computed 4x too small (as the scaler sees it)."""
    calls = [0]
    original = _scaler.moment_sensitivity

    def too_small(n_columns, with_second):
        calls[0] += 1
        return original(n_columns, with_second) / 4.0

    monkeypatch.setattr(_scaler, "moment_sensitivity", too_small)
    return calls


def set_threshold(monkeypatch, threshold=None, extra_delta=None) -> list[int]:
    """The encoder's partition-selection threshold replaced by ``threshold``, or calibrated for
    a keep probability ``extra_delta`` while ``extra_delta_`` (the claim) stays as it is."""
    calls = [0]
    original = _encoder.partition_threshold

    def broken(sigma, p, n_columns):
        calls[0] += 1
        if threshold is not None:
            return threshold
        return original(sigma, extra_delta, n_columns)

    monkeypatch.setattr(_encoder, "partition_threshold", broken)
    return calls


BREAKERS: dict[str, Callable] = {
    "none": lambda mp: [1],
    "noise_off": lambda mp: scale_noise(mp, 0.0),
    "noise_div4": lambda mp: scale_noise(mp, 0.25),
    "no_clipping": disable_clipping,
    "sensitivity_div4": shrink_moment_sensitivity,
    # A new category is kept when 1 + noise > 0.5: about half the time.
    "threshold_off": lambda mp: set_threshold(mp, threshold=0.5),
    # Kept with probability 0.1 instead of extra_delta_ = 1e-6.
    "selection_delta_high": lambda mp: set_threshold(mp, extra_delta=0.1),
}

# The breakers each experiment is meant to catch (the others do not break what it looks at:
# e.g. without noise a single row's new category still never clears the threshold).
CATCHES = {
    "scaler": ["noise_off", "noise_div4", "no_clipping", "sensitivity_div4"],
    "imputer": ["noise_off", "noise_div4", "no_clipping", "sensitivity_div4"],
    "encoder_counts": ["noise_off", "noise_div4"],
    "encoder_public_counts": ["noise_off", "noise_div4"],
    "encoder_selection": ["threshold_off", "selection_delta_high"],
    "bounds_search": ["noise_off"],
}


def audit(monkeypatch, experiment: str, breaker: str, epsilon: float, n_runs: int,
          seed: int) -> Outcome:
    calls = BREAKERS[breaker](monkeypatch)
    outcome = run_experiment(EXPERIMENTS[experiment](epsilon), n_runs, seed)
    if calls[0] == 0:
        pytest.fail(
            f"the {breaker!r} breaker never reached the code the {experiment} experiment runs "
            "(refactored?): update the breaker"
        )
    return outcome


def check(outcome: Outcome, breaker: str, epsilon: float, margin: float) -> None:
    """Correct: below the claim; broken: above ``margin`` times it."""
    assert outcome.epsilon_claimed == pytest.approx(epsilon, abs=1e-6)
    if breaker == "none":
        assert outcome.epsilon_lower < outcome.epsilon_claimed, str(outcome)
    else:
        assert outcome.epsilon_lower > margin * outcome.epsilon_claimed, str(outcome)


FAST_CASES = [(e, b) for e, breakers in CATCHES.items() for b in ["none", *breakers]]
# Runs of the fast audits: noise / 4, sensitivity / 4 and a keep probability of 0.1 need a few
# thousand fits to show clearly more than the claim; the others separate perfectly with fewer.
FAST_RUNS = {"noise_div4": 3000, "sensitivity_div4": 3000, "selection_delta_high": 3000,
             "none": 2000}
FAST_RUNS_BOUNDS_SEARCH = 400  # its fits are slower (n = 12000 rows) and only noise off is caught


# --- fast: claim 2, every experiment and breaker --------------------------------------------------
@pytest.mark.parametrize(("experiment", "breaker"), FAST_CASES)
def test_preprocessing_audit_has_teeth_fast(monkeypatch, experiment, breaker):
    n_runs = (FAST_RUNS_BOUNDS_SEARCH if experiment == "bounds_search"
              else FAST_RUNS.get(breaker, 1000))
    outcome = audit(monkeypatch, experiment, breaker, 2.0, n_runs, seed=0)
    check(outcome, breaker, 2.0, margin=1.0)


def test_bounds_search_audit_keeps_the_requested_quantiles():
    """The bounds-search experiment must not move the quantiles inward: they would then depend
    on n, which differs between the two data sets."""
    for epsilon in (1.0, 2.0):
        experiment = bounds_search_experiment(epsilon)
        for X in (experiment.X_in, experiment.X_out):
            est = experiment.make(0).fit(X)
            assert est.quantiles_ == (0.01, 0.99)


# The fraction of the Gaussian mechanism each score sees (shift / noise, in units of
# 1 / noise_multiplier_): the imputer's rows sit at u = -0.9 rather than -1 (the mean would be
# clipped there), so (1 + 0.9) / sqrt(1 + 0.81) / sqrt(2).
SCORE_EFFICIENCY = {"scaler": 1.0, "imputer": 1.9 / math.sqrt(2 * 1.81), "encoder_counts": 1.0,
                    "encoder_public_counts": 1.0}


@pytest.mark.parametrize("name", sorted(SCORE_EFFICIENCY))
def test_scores_see_the_whole_gaussian_mechanism(monkeypatch, name):
    """The canary moves the score by (nearly) the whole sensitivity: the shift of the score
    (noise off: exact) over its noise standard deviation (1000 noisy fits without the canary)
    is ``SCORE_EFFICIENCY / noise_multiplier_``, within 8% (the spread's estimation error is
    about 2%)."""
    experiment = EXPERIMENTS[name](2.0)
    out = run_experiment(experiment, 2000, seed=3).out_scores
    z = experiment.make(0).fit(experiment.X_out).noise_multiplier_
    with monkeypatch.context() as patch:
        scale_noise(patch, 0.0)
        shift = (experiment.score(experiment.make(0).fit(experiment.X_in))
                 - experiment.score(experiment.make(0).fit(experiment.X_out)))
    assert shift / out.std() == pytest.approx(SCORE_EFFICIENCY[name] / z, rel=0.08)


# --- thorough: more runs, both claims, tighter margins --------------------------------------------
# Runs of the thorough audits: 20000 where the bound is limited by the runs (the correct
# mechanisms, noise / 4, a keep probability of 0.1), 4000 for perfect separations.
SLOW_RUNS = {"none": 20_000, "noise_div4": 20_000, "sensitivity_div4": 20_000,
             "selection_delta_high": 20_000}
SLOW_RUNS_PERFECT = 4000
SLOW_RUNS_BOUNDS_SEARCH = 2000


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 2.0])
@pytest.mark.parametrize(("experiment", "breaker"), FAST_CASES)
def test_preprocessing_audit_has_teeth(monkeypatch, experiment, breaker, epsilon):
    """Both claims, many more fits: the correct mechanisms stay below the claim; every breaker
    shows more than 1.5 times it."""
    n_runs = (SLOW_RUNS_BOUNDS_SEARCH if experiment == "bounds_search"
              else SLOW_RUNS.get(breaker, SLOW_RUNS_PERFECT))
    outcome = audit(monkeypatch, experiment, breaker, epsilon, n_runs, seed=1)
    check(outcome, breaker, epsilon, margin=1.5)


@pytest.mark.xfail(
    strict=True,
    reason="known limitation of treating n as public: when the private bounds search cannot "
    "resolve the requested quantiles at this n and noise, it moves them inward by a margin "
    "proportional to 1/n, and releases them (quantiles_); under add/remove-one the canary "
    "changes n, so quantiles_ tells D from D + canary every time. See docs/developers/audit.md.",
)
def test_relaxed_quantiles_reveal_the_dataset_size():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 1))
    experiment = Experiment(
        "DPStandardScaler (bounds search, relaxed quantiles)",
        lambda rs: DPStandardScaler(privacy=(2.0, DELTA), random_state=rs),
        X, _with_canary(X, [0.0]), lambda est: est.quantiles_[1],
    )
    outcome = run_experiment(experiment, 200, seed=0)
    assert outcome.epsilon_lower < outcome.epsilon_claimed, str(outcome)
