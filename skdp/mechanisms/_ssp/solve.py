"""AdaSSP: ridge regression from noisy sufficient statistics (Wang, UAI 2018).

The mechanism of ``optimizer='ssp'`` (``docs/specs/adassp.md`` §5): clip the rows, append the
intercept column, form ``S = X^T X`` and ``b = X^T Y`` in float64, release a noisy lower estimate
of ``lambda_min(S)``, ``S`` with symmetric Gaussian noise and ``b`` with Gaussian noise, choose
the ridge ``lambda = max(0, eta - lambda~)`` that keeps the noisy system positive definite
with high probability, and solve once. The accounting (event, joint calibration) lives in
:mod:`skdp.accounting._ssp`; this module only turns public noise levels and the data into the
released model.

Every helper that adds noise takes its standard normal draws as arguments (:class:`SSPDraws`),
so tests can pass zeros; :func:`draw_standard_normals` makes them from one ``torch.Generator``
in the spec's order (``z1``, then ``N``, then ``Z``). Nothing here stores or returns the exact
``lambda_min``, ``S`` or ``b``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
import torch

from ..._engine.rows.host import row_blocks
from ...accounting._ssp import BUDGET_SPLITS, resolve_budget_split
from .._params import is_number

__all__ = [
    "SSPParams",
    "SSPNoise",
    "SSPDraws",
    "SSPResult",
    "clip_targets",
    "sufficient_statistics",
    "eig_shift",
    "eta",
    "lambda_rule",
    "symmetric_noise",
    "draw_standard_normals",
    "ridge_solve",
    "run_ssp",
]

SymmetricNoise = Literal["goe", "mirror"]
SYMMETRIC_NOISE = ("goe", "mirror")

#: Rows per block of the one pass over X: a float64 copy of a block stays small (65,536 x 50
#: doubles: 26 MB) while each block is large enough for an efficient product.
STATISTICS_BLOCK_ROWS = 65536

DESCRIPTION = "AdaSSP: noisy sufficient statistics X^T X, X^T y and lambda_min, one ridge solve"


@dataclass(frozen=True)
class SSPParams:
    """``optimizer_params`` of ``optimizer='ssp'``.

    Parameters
    ----------
    rho : float in (0, 1), default=0.05
        Failure probability of the adaptive ridge: ``lambda`` is chosen so that the noisy
        ``X^T X + lambda I`` is positive definite with probability about ``1 - rho``. Changes
        utility only, never privacy.
    budget_split : {'equal', 'autodp'} or tuple of 3 floats, default='equal'
        Relative noise multipliers of the releases of ``lambda_min``, ``X^T X`` and ``X^T y``:
        ``'equal'`` (1, 1, 1) is the paper's; ``'autodp'`` (5, 2, 3) the author's tutorials'.
    symmetric_noise : {'goe', 'mirror'}, default='goe'
        Shape of the symmetric noise on ``X^T X``: ``'goe'`` (``(G + G^T) / 2``: diagonal std
        ``sigma``, off-diagonal ``sigma / sqrt(2)``, same privacy) or ``'mirror'`` (iid upper
        triangle mirrored, std ``sigma`` everywhere; Analyze Gauss).
    eigen_floor : float in (0, 1] or None, default=0.25
        How the adaptive ridge ``lambda`` is applied (post-processing, no privacy cost):
        eigenvalues of the noisy ``X^T X`` below ``eigen_floor * lambda`` are raised to it and
        the others are left alone. ``None`` adds ``lambda`` to every eigenvalue (the paper's
        rule), which also shrinks the well-determined directions: measured 0.004-0.45 R^2 worse
        on diamonds, rand_hie, ames, diabetes and CPS1988 (``docs/benchmarks/ssp_floor.md``).
    """

    rho: float = 0.05
    budget_split: str | tuple = "equal"
    symmetric_noise: str = "goe"
    eigen_floor: float | None = 0.25

    def __post_init__(self) -> None:
        if not (is_number(self.rho) and 0.0 < self.rho < 1.0):
            raise ValueError(f"optimizer_params['rho'] must be in (0, 1), got {self.rho!r}")
        resolve_budget_split(self.budget_split)  # raises with the accepted values
        if self.symmetric_noise not in SYMMETRIC_NOISE:
            raise ValueError(
                f"optimizer_params['symmetric_noise'] must be one of {SYMMETRIC_NOISE}, got "
                f"{self.symmetric_noise!r}"
            )
        floor = self.eigen_floor
        if floor is not None and not (is_number(floor) and 0.0 < floor <= 1.0):
            raise ValueError(
                f"optimizer_params['eigen_floor'] must be in (0, 1] or None, got {floor!r}"
            )

    @property
    def weights(self) -> tuple[float, float, float]:
        return resolve_budget_split(self.budget_split)

    @property
    def split_name(self) -> str:
        for name, weights in BUDGET_SPLITS.items():
            if self.weights == weights:
                return name
        return ":".join(f"{w:g}" for w in self.weights)


@dataclass(frozen=True)
class SSPNoise:
    """Public noise levels of one fit (all zero without privacy).

    ``sigma_*`` are noise standard deviations (multiplier times sensitivity); ``shift`` moves
    the released ``lambda_min`` down so that it is a lower bound with high probability;
    ``eta`` bounds the spectral norm of the noise on ``X^T X`` with probability ``1 - rho``.
    """

    sigma_lambda: float
    sigma_gram: float
    sigma_cross: float
    shift: float
    eta: float

    @property
    def is_private(self) -> bool:
        return self.sigma_gram > 0.0


@dataclass(frozen=True)
class SSPDraws:
    """Standard normal draws: ``z1`` (scalar), ``G`` (d~ x d~), ``Z`` (d~ x k)."""

    z1: torch.Tensor
    G: torch.Tensor
    Z: torch.Tensor

    @classmethod
    def zeros(cls, d_tilde: int, k: int, device: torch.device | str = "cpu") -> SSPDraws:
        kw = dict(dtype=torch.float64, device=device)
        return cls(torch.zeros((), **kw), torch.zeros(d_tilde, d_tilde, **kw),
                   torch.zeros(d_tilde, k, **kw))


@dataclass(frozen=True)
class SSPResult:
    """The released solution ``W`` (d~ x k) and the post-processed quantities to record."""

    weights: torch.Tensor
    lambda_min_released: float
    adaptive_lambda: float
    solver_fallback: str | None


def eig_shift(delta: float) -> float:
    """``t = sqrt(ln(6 / delta))``: the released ``lambda_min`` is shifted by ``t sigma_lambda``
    (the paper's constant, spec §1 and §5)."""
    return math.sqrt(math.log(6.0 / delta))


def eta(sigma_gram: float, d_tilde: int, rho: float) -> float:
    """``sigma_S sqrt(d~ ln(2 d~^2 / rho))``, recomputed from the actual ``sigma_S`` and ``d~``
    (intercept column included), never from the paper's ``eps / 3`` formulas (spec §11.4)."""
    return sigma_gram * math.sqrt(d_tilde * math.log(2.0 * d_tilde**2 / rho))


def lambda_rule(
    lambda_min: float, z1: float, sigma_lambda: float, shift: float, eta_: float
) -> tuple[float, float]:
    """``(lambda~, lambda)``: ``lambda~ = max(0, lambda_min + sigma z1 - shift)`` (the release)
    and ``lambda = max(0, eta - lambda~)`` (post-processing)."""
    released = max(0.0, float(lambda_min) + sigma_lambda * float(z1) - shift)
    return released, max(0.0, eta_ - released)


def symmetric_noise(G: torch.Tensor, kind: SymmetricNoise = "goe") -> torch.Tensor:
    """Exactly symmetric standard noise from a square standard normal draw ``G``.

    ``'goe'``: ``(G + G^T) / 2`` (variance 1 on the diagonal, 1/2 off it); ``'mirror'``: the
    upper triangle of ``G`` (diagonal included) mirrored (variance 1 everywhere). Works on a
    batch of draws (``..., d, d``).
    """
    if kind == "goe":
        return (G + G.mT) / 2.0
    if kind == "mirror":  # (works on batches of square draws too)
        return torch.triu(G) + torch.triu(G, diagonal=1).mT
    raise ValueError(f"symmetric_noise must be one of {SYMMETRIC_NOISE}, got {kind!r}")


def draw_standard_normals(
    generator: torch.Generator, d_tilde: int, k: int, device: torch.device
) -> SSPDraws:
    """``z1``, then ``G``, then ``Z``, from one generator (spec §5)."""
    kw = dict(generator=generator, dtype=torch.float64, device=device)
    z1 = torch.randn((), **kw)
    G = torch.randn(d_tilde, d_tilde, **kw)
    Z = torch.randn(d_tilde, k, **kw)
    return SSPDraws(z1, G, Z)


def clip_targets(Y: np.ndarray, bound: float) -> np.ndarray:
    """``Y`` (n x k) clipped: to ``[-bound, bound]`` for one target, else each row to L2 norm
    ``bound`` (the sensitivity of ``X^T Y`` uses the row norm, spec §6)."""
    Y = np.asarray(Y, dtype=np.float64)
    if Y.shape[1] == 1:
        return np.clip(Y, -bound, bound)
    norms = np.linalg.norm(Y, axis=1)
    factors = np.minimum(1.0, bound / np.maximum(norms, np.finfo(np.float64).tiny))
    return Y * factors[:, None]


def sufficient_statistics(
    X, Y: np.ndarray, intercept_scaling: float | None, device: torch.device,
    rows: Callable[[np.ndarray], np.ndarray] | None = None,
    block_rows: int = STATISTICS_BLOCK_ROWS,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``S = X~^T X~`` and ``b = X~^T Y`` in float64 on ``device``, with ``X~ = [X, c 1]`` when
    ``intercept_scaling`` is ``c`` (``None``: no intercept column).

    Dense ``X`` is read once, ``block_rows`` rows at a time: each block is copied to float64,
    transformed by ``rows`` (in place: the per-row scaling and clipping, applied block by block
    so that no full copy of ``X`` is made) and its products accumulated in float64. The
    constant column is never materialised: its blocks are ``c`` times column sums and
    ``c^2 n``. Sparse ``X`` (already transformed) is multiplied sparsely and only the d x d
    result densified.
    """
    n = X.shape[0]
    # np.array copies: pandas hands out read-only views (copy-on-write), which torch warns about.
    Y64 = np.array(Y, dtype=np.float64)
    Y_t = torch.as_tensor(Y64, device=device)
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        gram = torch.as_tensor(np.asarray((X.T @ X).toarray()), device=device)
        cross = torch.as_tensor(np.asarray(X.T @ Y64), device=device)
        col_sums = torch.as_tensor(np.asarray(X.sum(axis=0)).ravel(), device=device)
    else:
        d, k = X.shape[1], Y64.shape[1]
        gram = torch.zeros(d, d, dtype=torch.float64, device=device)
        cross = torch.zeros(d, k, dtype=torch.float64, device=device)
        col_sums = torch.zeros(d, dtype=torch.float64, device=device)
        for start, block in row_blocks(X, block_rows):
            if rows is not None:
                block = rows(block)
            Xb = torch.as_tensor(block, device=device)
            gram.addmm_(Xb.T, Xb)
            cross.addmm_(Xb.T, Y_t[start:start + block.shape[0]])
            col_sums.add_(Xb.sum(dim=0))
    gram = (gram + gram.T) / 2.0  # exactly symmetric for eigvalsh and Cholesky
    if intercept_scaling is None:
        return gram, cross
    c = float(intercept_scaling)
    d = gram.shape[0]
    S = torch.empty(d + 1, d + 1, dtype=torch.float64, device=device)
    S[:d, :d] = gram
    S[:d, d] = S[d, :d] = c * col_sums
    S[d, d] = c * c * n
    b = torch.cat([cross, c * Y_t.sum(dim=0, keepdim=True)], dim=0)
    return S, b


def _penalty_diagonal(
    d_tilde: int, lam: float, alpha: float, intercept: bool, like: torch.Tensor
) -> torch.Tensor:
    """``lambda I + alpha D``: D is I with a 0 in the intercept slot (scikit-learn does not
    penalise the intercept); lambda covers every coordinate (spec §5.7)."""
    diag = torch.full((d_tilde,), lam + alpha, dtype=like.dtype, device=like.device)
    if intercept:
        diag[-1] = lam
    return diag


def _cholesky_solve(M: torch.Tensor, b: torch.Tensor) -> torch.Tensor | None:
    L, info = torch.linalg.cholesky_ex(M)
    if int(info) != 0:
        return None
    W = torch.cholesky_solve(b, L)
    return W if bool(torch.isfinite(W).all()) else None


def _psd_projection(A: torch.Tensor) -> torch.Tensor:
    values, vectors = torch.linalg.eigh(A)
    return (vectors * values.clamp(min=0.0)) @ vectors.T


def ridge_solve(
    S_hat: torch.Tensor,
    b_hat: torch.Tensor,
    lam: float,
    alpha: float,
    intercept: bool,
    eigen_floor: float | None = None,
) -> tuple[torch.Tensor, str | None]:
    """Solve ``(S^ + lambda I + alpha D) W = b^`` by the policy of spec §8, or, with
    ``eigen_floor``, ``(S^_f + alpha D) W = b^`` where ``S^_f`` is the symmetrised ``S^`` with
    every eigenvalue below ``eigen_floor * lambda`` raised to it.

    The paper's rule: Cholesky of the symmetrised system; on failure, project ``S^`` onto the
    PSD cone (which cannot increase its Frobenius error, as the cone contains ``S``) and retry;
    if that still fails (``lambda + alpha = 0`` and singular), the minimum-norm least-squares
    solution. The floor (taken only where ``lambda > 0``) regularises the directions the noise
    can swamp and leaves the well-determined ones alone; its matrix is positive definite by
    construction. Both are post-processing of the released ``S^`` and ``lambda``. Returns
    ``(W, fallback)`` with ``fallback`` None, ``'psd_projection'`` or ``'lstsq'``.
    """
    d_tilde = S_hat.shape[0]
    symmetric = (S_hat + S_hat.T) / 2.0
    if eigen_floor is not None and lam > 0.0:
        values, vectors = torch.linalg.eigh(symmetric)
        floored = (vectors * values.clamp(min=eigen_floor * lam)) @ vectors.T
        M = floored + torch.diag(_penalty_diagonal(d_tilde, 0.0, alpha, intercept, S_hat))
        W = _cholesky_solve(M, b_hat)
        if W is not None:
            return W, None
        return torch.linalg.pinv(M, hermitian=True) @ b_hat, "lstsq"
    penalty = torch.diag(_penalty_diagonal(d_tilde, lam, alpha, intercept, S_hat))
    W = _cholesky_solve(symmetric + penalty, b_hat)
    if W is not None:
        return W, None
    M = _psd_projection(symmetric) + penalty
    W = _cholesky_solve(M, b_hat)
    if W is not None:
        return W, "psd_projection"
    return torch.linalg.pinv(M, hermitian=True) @ b_hat, "lstsq"


def run_ssp(
    S: torch.Tensor,
    b: torch.Tensor,
    noise: SSPNoise,
    draws: SSPDraws,
    *,
    alpha: float,
    intercept: bool,
    symmetric: SymmetricNoise = "goe",
    n_samples: int | None = None,
    eigen_floor: float | None = None,
) -> SSPResult:
    """Release and solve (spec §5, run steps 4-8) from exact statistics ``S``, ``b``.

    ``eigen_floor``: how ``lambda`` is applied (:func:`ridge_solve`; ``None``, the paper's
    rule, adds it to every eigenvalue). Without privacy (all sigmas 0): no eigenvalue is
    computed, ``lambda = 0``, and the exact
    system is solved (scikit-learn's ``Ridge(alpha)``; minimum-norm least squares when
    ``alpha = 0`` and ``n_samples < d~``, where the system is singular).
    """
    if noise.is_private:
        lambda_min = max(0.0, float(torch.linalg.eigvalsh(S)[0]))  # eigvalsh, never eigvals
        released, lam = lambda_rule(
            lambda_min, float(draws.z1), noise.sigma_lambda, noise.shift, noise.eta
        )
        del lambda_min  # the exact value is never kept
        S_hat = S + noise.sigma_gram * symmetric_noise(draws.G, symmetric)
        b_hat = b + noise.sigma_cross * draws.Z
    else:
        released, lam, S_hat, b_hat = math.nan, 0.0, S, b
        if alpha == 0 and n_samples is not None and n_samples < S.shape[0]:
            return SSPResult(torch.linalg.pinv(S, hermitian=True) @ b, released, lam, "lstsq")
    W, fallback = ridge_solve(S_hat, b_hat, lam, float(alpha), intercept, eigen_floor)
    return SSPResult(W, released, lam, fallback)
