"""Last-iterate privacy of projected noisy SGD on convex, smooth losses (Altschuler & Talwar).

Altschuler & Talwar (2022), "Privacy of Noisy Stochastic Gradient Descent: More Iterations
without More Privacy Loss" (AT22; implementer's notes in
``docs/specs/noisy_sgd_last_iterate_privacy.md``) show that when only the *last* iterate of
projected noisy SGD on convex, smooth losses is released, its Renyi DP stops growing with the
number of steps after a burn-in of about ``D n / (L eta)`` steps. skdp evaluates their
non-asymptotic bounds, eq. (B.2) (convex), (B.3) (strongly convex) and (B.1) (full batch), takes
the per-order minimum with the standard composition bound, and calibrates the noise.

Noise convention (the same as skdp's engine and :class:`~skdp.accounting.Calibration`): the
``noise_multiplier`` ``z`` is the standard deviation of the Gaussian noise added to every
coordinate of the **sum** of the ``batch_size`` clipped per-example gradients, divided by the
clipping bound ``max_grad_norm``. AT22's ``sigma`` (noise on the batch-mean gradient) is
``z * max_grad_norm / batch_size``, so their sampled-Gaussian ratio ``b sigma / (2 L)`` is ``z / 2``
under the replace-one relation.

The code, one job a module:

* ``_last_iterate_run.py``: :class:`LastIterateRun`, the public description of a run, and
  :func:`check_last_iterate_conditions`; its docstring lists what the training loop must do for
  the bound to hold (AT22 section 1, spec section 2.11).
* ``_last_iterate_bounds.py``: :func:`last_iterate_rdp`, AT22's last-iterate branch, eq. (B.1),
  (B.2) and (B.3).
* this module: :func:`composition_rdp`, the standard composition of all steps, the first branch
  of (B.2)/(B.3), which is also the bound to use when a condition fails.
* ``_last_iterate_calibration.py``: the reported guarantee (the per-order minimum of both
  branches) and the noise calibration.
"""

from __future__ import annotations

from collections.abc import Sequence

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant

from ._accountants import quiet_accounting_logs
from ._last_iterate_run import LastIterateRun, check_noise_multiplier
from ._rdp_orders import as_orders

__all__ = ["composition_rdp"]


def composition_rdp(
    run: LastIterateRun, noise_multiplier: float, orders: float | Sequence[float] | None = None
) -> np.ndarray:
    """Standard RDP bound: all ``T`` steps composed (holds even if every iterate is released).

    Each step is a sampled Gaussian with ratio ``z / 2`` (replace-one: the clipped sum moves by
    at most ``2 L``), so the curve is ``T * S_alpha(b/n, z/2)``, computed by dp_accounting's
    RdpAccountant. This is the first branch of AT22's (B.2)/(B.3) (the window that starts at
    step 0, where both runs share the starting point).

    For fixed-size batches under replace-one, each step's output is a mixture over which row
    the batch holds instead of the replaced one; by the joint quasi-convexity of Renyi
    divergence one step is bounded by the worst pair ``((1-q) N(0) + q N(u), (1-q) N(0) +
    q N(u'))`` with ``|u|, |u'|, |u - u'| <= 2L/b``, and the worst pair is ``u' = 0`` (checked
    numerically in ``tests/accounting/test_last_iterate.py``), which is ``S_alpha(b/n, z/2)`` in the
    standard direction. dp_accounting's add/remove accountant for a Poisson-sampled Gaussian
    with multiplier ``z/2`` computes exactly that number (its replace-one accountant only offers
    the looser Wang-Balle-Kasiviswanathan bound for this sampling).

    Parameters
    ----------
    run : LastIterateRun
        The run.
    noise_multiplier : float
        ``z``: noise std on the clipped gradient sum divided by ``max_grad_norm``.
    orders : float or sequence of float, optional
        RDP orders (default :data:`~skdp.accounting._rdp_orders.DEFAULT_ORDERS`).

    Returns
    -------
    ndarray
        RDP at each order.
    """
    orders_t = as_orders(orders)
    ratio = check_noise_multiplier(noise_multiplier) / 2.0
    step: dp_accounting.DpEvent = dp_accounting.GaussianDpEvent(ratio)
    if not run.full_batch:
        step = dp_accounting.PoissonSampledDpEvent(run.sampling_rate, step)
    with quiet_accounting_logs():
        accountant = rdp_privacy_accountant.RdpAccountant(
            list(orders_t), dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
        )
        accountant.compose(dp_accounting.SelfComposedDpEvent(step, run.n_steps))
        return accountant.rdp
