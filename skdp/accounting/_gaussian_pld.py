"""dp_accounting's PLD accountant, with the Gaussian mechanism's PLD built in one numpy pass.

dp_accounting builds the privacy-loss distribution of a (Poisson-subsampled) Gaussian mechanism
by connect-the-dots: it asks its privacy-loss object for the hockey-stick divergence at every
point of the loss grid, and that object inverts the privacy loss one Python call per point.
A fine grid has tens of thousands of points, so this loop was most of a calibration's time and
of a ledger charge for a plan never seen before. The inverse is closed-form for the Gaussian, so
:class:`VectorisedGaussianLoss` evaluates it over the whole grid at once, on a normal
distribution (:class:`_Normal`) that gives scipy's frozen normal's floats without its per-call
overhead. The connect-the-dots PMF is built from the masses' array instead of dp_accounting's
dictionary round trip, and two PLDs compose with the tail truncation's running sums taken by
numpy (:mod:`skdp.accounting._connect_dots`). Everything else (the grid bounds, the masses'
expressions) is dp_accounting's own code, and ``tests/accounting/test_gaussian_pld.py`` and
``tests/accounting/test_connect_dots.py`` check that the PMFs equal dp_accounting's bit for bit.

:class:`VectorisedPLDAccountant` also reads epsilon with the vectorised walk of
:mod:`skdp.accounting._pld_epsilon` instead of dp_accounting's Python loop, and self-composes a
plan's step by :func:`self_compose`, dp_accounting's ``self_compose`` with the truncation bounds
of its FFT self-convolution computed in one pass and the power of the spectrum taken only where
it is not negligible (:mod:`skdp.accounting._self_convolve`; the same PMFs, bit for bit).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_module
from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType, GaussianPrivacyLoss
from dp_accounting.privacy_accountant import NeighboringRelation as DpRelation
from scipy import special, stats

from . import _connect_dots
from ._pld_epsilon import epsilon_for_delta
from ._self_convolve import self_compose

__all__ = ["VectorisedGaussianLoss", "gaussian_pld", "self_compose", "compose",
           "VectorisedPLDAccountant"]

# dp_accounting's from_gaussian_mechanism defaults, which its PLD accountant uses.
_LOG_MASS_TRUNCATION = -50.0
# The construction relies on two module-level helpers of dp_accounting (stable from 0.4 to 0.6);
# without them every PLD is built by dp_accounting's public path, as before.
_HAS_BUILDERS = all(
    hasattr(pld_module, name)
    for name in ("_create_pld_pmf_from_monotone_privacy_loss", "_pld_for_subsampled_mechanism")
)


class _Normal:
    """``scipy.stats.norm(scale=scale)`` for ``GaussianPrivacyLoss``, without scipy's overhead.

    Freezing a scipy distribution formats its docstring (0.3 ms, twice per PLD) and each of its
    ``cdf`` / ``logcdf`` calls reduces and places its arguments (1 ms on 50,000 points). Loc is
    0, so the frozen distribution computes ``ndtr(x / scale)``, ``log_ndtr(x / scale)`` and
    ``ndtri(p) * scale + 0`` after the same standardisation ``(x - 0) / scale``, and puts 1 and 0
    at ``x = +inf``: the same floats, returned as the same types (``np.float64`` for a scalar).
    What else is asked of it, and ``ppf`` of anything but a float strictly between 0 and 1,
    goes to the frozen distribution, built on first use.
    """

    def __init__(self, scale: float):
        self._scale = scale
        self._frozen = None

    def _scaled(self, x):
        # scipy's standardisation, with its 0-d array operands (they decide the dtype).
        x = np.asarray(x)
        z = (x - np.asarray(0)) / np.asarray(self._scale)
        return np.asarray(z, dtype=np.promote_types(x.dtype, np.float64))

    def cdf(self, x):
        return self._standard(special.ndtr, x, at_infinity=1.0)

    def logcdf(self, x):
        return self._standard(special.log_ndtr, x, at_infinity=0.0)

    def _standard(self, function, x, at_infinity: float):
        """``function`` of the standardised ``x``, with scipy's exact value at ``x = +inf``."""
        z = self._scaled(x)
        out = function(z)
        if out.ndim == 0:
            return np.float64(at_infinity) if z == np.inf else out[()]
        out[z == np.inf] = at_infinity
        return out

    def ppf(self, p):
        if type(p) in (float, np.float64) and 0 < p < 1:
            return np.float64(special.ndtri(np.float64(p)) * self._scale + 0)
        return self.__getattr__("ppf")(p)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_scale", "_frozen"):
            raise AttributeError(name)
        if self._frozen is None:
            self._frozen = stats.norm(scale=self._scale)
        return getattr(self._frozen, name)


def _gaussian_init_attributes() -> frozenset | None:
    """The attributes ``GaussianPrivacyLoss.__init__`` sets, if they are the ones
    :class:`VectorisedGaussianLoss` sets itself (else ``None``: it calls the parent's)."""
    try:
        probe = GaussianPrivacyLoss(1.5, sampling_prob=0.5, adjacency_type=AdjacencyType.ADD)
        frozen = probe._gaussian_random_variable  # pylint: disable=protected-access
        ok = (
            type(getattr(frozen, "dist", None)) is type(stats.norm)
            and frozen.args == () and frozen.kwds == {"scale": 1.5}
            and probe._standard_deviation == 1.5  # pylint: disable=protected-access
            and probe._log_mass_truncation_bound == -50  # pylint: disable=protected-access
            and probe._pessimistic_estimate is True  # pylint: disable=protected-access
        )
    except Exception:  # noqa: BLE001 - any change in the parent disables the shortcut
        return None
    return frozenset(vars(probe)) if ok else None


_PARENT_ATTRIBUTES = _gaussian_init_attributes()
_OWN_ATTRIBUTES = frozenset({
    "_standard_deviation", "_gaussian_random_variable", "_pessimistic_estimate",
    "_log_mass_truncation_bound", "sensitivity", "sampling_prob", "adjacency_type",
    "is_discrete",
})
# VectorisedGaussianLoss sets the parent's attributes itself when they are exactly these.
_FAST_INIT = _PARENT_ATTRIBUTES == _OWN_ATTRIBUTES


class VectorisedGaussianLoss(GaussianPrivacyLoss):
    """dp_accounting's Gaussian privacy loss whose divergence takes an array of epsilons at once.

    Only ``get_delta_for_epsilon`` on arrays, for the add and remove adjacencies, differs from
    the parent: the inverse privacy loss is evaluated as one numpy expression instead of a loop.
    Points within floating-point tolerance of the subsampled loss's limit ``-+log(1 - q)``, where
    the parent treats the inverse specially, go through the parent's scalar inverse. The noise
    distribution is :class:`_Normal`, scipy's frozen normal's numbers without its overhead.
    """

    def __init__(self, standard_deviation: float, sensitivity: float = 1,
                 pessimistic_estimate: bool = True, log_mass_truncation_bound: float = -50,
                 sampling_prob: float = 1.0,
                 adjacency_type: AdjacencyType = AdjacencyType.REMOVE) -> None:
        if not _FAST_INIT:
            super().__init__(standard_deviation, sensitivity, pessimistic_estimate,
                             log_mass_truncation_bound, sampling_prob, adjacency_type)
            return
        # GaussianPrivacyLoss.__init__ with the frozen normal replaced.
        if standard_deviation <= 0:
            raise ValueError(f"Standard deviation is not a positive real number: "
                             f"{standard_deviation}")
        if log_mass_truncation_bound > 0:
            raise ValueError(f"Log mass truncation bound is not a non-positive real "
                             f"number: {log_mass_truncation_bound}")
        self._standard_deviation = standard_deviation
        self._gaussian_random_variable = _Normal(standard_deviation)
        self._pessimistic_estimate = pessimistic_estimate
        self._log_mass_truncation_bound = log_mass_truncation_bound
        super(GaussianPrivacyLoss, self).__init__(sensitivity, False, sampling_prob,
                                                  adjacency_type)

    def get_delta_for_epsilon(self, epsilon):
        if isinstance(epsilon, numbers.Number) or self.adjacency_type not in (
            AdjacencyType.ADD, AdjacencyType.REMOVE
        ):
            return super().get_delta_for_epsilon(epsilon)
        epsilons = np.asarray(epsilon, dtype=float)
        q = self.sampling_prob
        deltas = np.zeros_like(epsilons)
        if q == 1.0:
            finite = np.ones(epsilons.shape, dtype=bool)
        elif self.adjacency_type == AdjacencyType.ADD:
            # At or above -log(1 - q) no output is likelier without the added row: delta 0.
            finite = epsilons < -math.log1p(-q)
        else:
            # At or below log(1 - q) the divergence is 1 - e^epsilon.
            finite = epsilons > math.log1p(-q)
            deltas[~finite] = -np.expm1(epsilons[~finite])
        eps = epsilons[finite]
        x = self._inverse_losses(eps)
        deltas[finite] = self.mu_upper_cdf(x) - np.exp(eps + self.mu_lower_log_cdf(x))
        return np.clip(deltas, 0.0, 1.0)

    def _inverse_losses(self, eps: np.ndarray) -> np.ndarray:
        """The largest x whose privacy loss is at least each of ``eps`` (the parent's inverse)."""
        q, s = self.sampling_prob, self.sensitivity
        add = self.adjacency_type == AdjacencyType.ADD
        if q == 1.0:
            unsampled = eps
        else:
            # The loss without subsampling: +-log(1 + (exp(+-eps) - 1) / q), computed as
            # log(a e^b + c) with a = 1/q, c = 1 - 1/q < 0, the parent's formula.
            b = -eps if add else eps
            log_a, log_minus_c = np.log(1 / q), np.log(-(1 - 1 / q))
            with np.errstate(divide="ignore", invalid="ignore"):
                d = b + log_a
                value = np.where(b == 0, np.log(1 / q + (1 - 1 / q)),
                                 d + np.log1p(-np.exp(log_minus_c - d)))
            unsampled = -value if add else value
        x = -0.5 * s - unsampled * self._standard_deviation**2 / s
        if add:
            x = s + x
        if q < 1.0:
            limit = -math.log(1 - q) if add else math.log(1 - q)
            edge = np.isclose(eps, limit, rtol=1e-9, atol=0.0) | ~np.isfinite(x)
            if edge.any():
                x[edge] = [self.inverse_privacy_loss(float(e)) for e in eps[edge]]
        return x


def gaussian_pld(
    standard_deviation: float,
    value_discretization_interval: float,
    sampling_prob: float = 1.0,
    neighboring_relation: DpRelation = DpRelation.ADD_OR_REMOVE_ONE,
) -> pld_module.PrivacyLossDistribution:
    """``from_gaussian_mechanism`` with dp_accounting's accountant defaults, built vectorised.

    Sensitivity 1, pessimistic, connect-the-dots, log-mass truncation -50, as the PLD accountant
    asks for. Replace-one (which dp_accounting inverts in closed form per point too, but through
    another formula) and a dp_accounting without the builders go through the public path.
    """
    if neighboring_relation == DpRelation.REPLACE_ONE or not _HAS_BUILDERS:
        return pld_module.from_gaussian_mechanism(
            standard_deviation,
            value_discretization_interval=value_discretization_interval,
            sampling_prob=sampling_prob,
            neighboring_relation=neighboring_relation,
        )

    def single_pmf(adjacency: AdjacencyType):
        loss = VectorisedGaussianLoss(
            standard_deviation,
            sensitivity=1,
            pessimistic_estimate=True,
            log_mass_truncation_bound=_LOG_MASS_TRUNCATION,
            sampling_prob=sampling_prob,
            adjacency_type=adjacency,
        )
        if _connect_dots.HAS_PMF_INTERNALS:
            return _connect_dots.connect_dots_pmf(loss, value_discretization_interval)
        return pld_module._create_pld_pmf_from_monotone_privacy_loss(
            loss,
            pessimistic_estimate=True,
            value_discretization_interval=value_discretization_interval,
            use_connect_dots=True,
        )

    return pld_module._pld_for_subsampled_mechanism(single_pmf, sampling_prob)


compose = _connect_dots.compose


class VectorisedPLDAccountant(pld_privacy_accountant.PLDAccountant):
    """dp_accounting's PLD accountant with vectorised Gaussian PLDs and epsilon read-out.

    Gaussian and Poisson-subsampled Gaussian events (the ones every DP-SGD plan is made of) are
    built by :func:`gaussian_pld` and composed into the total by :func:`compose`; every other
    event, and the bookkeeping, is the parent's.
    """

    def _maybe_compose(self, event, count, do_compose):
        if do_compose and self._is_positive_gaussian(event):
            if isinstance(event, dp_event.PoissonSampledDpEvent):
                pld = self_compose(gaussian_pld(
                    event.event.noise_multiplier,
                    self._value_discretization_interval,
                    sampling_prob=event.sampling_probability,
                    neighboring_relation=self.neighboring_relation,
                ), count)
            else:  # count Gaussians compose into one with sigma / sqrt(count), as the parent does
                pld = gaussian_pld(
                    event.noise_multiplier / math.sqrt(count),
                    self._value_discretization_interval,
                    neighboring_relation=self.neighboring_relation,
                )
            self._pld = compose(self._pld, pld)
            return None
        return super()._maybe_compose(event, count, do_compose)

    @staticmethod
    def _is_positive_gaussian(event) -> bool:
        if isinstance(event, dp_event.GaussianDpEvent):
            return event.noise_multiplier > 0
        return (
            isinstance(event, dp_event.PoissonSampledDpEvent)
            and isinstance(event.event, dp_event.GaussianDpEvent)
            and event.event.noise_multiplier > 0
            and event.sampling_probability > 0
        )

    def get_epsilon(self, target_delta: float) -> float:
        if self._contains_non_dp_event:
            return math.inf
        return epsilon_for_delta(self._pld, target_delta)
