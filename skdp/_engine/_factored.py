"""Per-example gradients in factored form: norms and clipped sums without materialising them.

Both model families have gradients made of dense blocks. A block maps an input ``h`` (one row
per example) to an output whose loss gradient is ``delta``; the per-example gradient of the
block's weight matrix is the outer product ``h_i delta_i^T`` and that of its bias (if any) is
``delta_i``. A GLM has one block (``h = X``, ``delta`` = residuals); an MLP has one per layer.
Writing ``h~ = [h, 1]`` for a block with a bias, every quantity the optimizers need reduces to
matrix products over the batch:

- ``||g_i||^2 = sum_blocks ||h~_i||^2 ||delta_i||^2``;
- ``sum_i c_i g_i`` = per block ``h^T (c * delta)`` and ``sum_i c_i delta_i``;
- adaclip's transformed norm ``||(g_i - a) / b||^2`` with ``w = 1 / b^2`` is
  ``sum_blocks rowsum((h^2 @ w) * delta^2) - 2 rowsum((h @ (w * a)) * delta) + sum(w a^2)``;
- diff2's difference of two gradients of the same example at two parameter points is, per
  block, ``dh delta^T + h' ddelta^T`` with ``dh = h - h'`` and ``ddelta = delta - delta'``, whose
  squared norm is ``||dh||^2 ||delta||^2 + ||h~'||^2 ||ddelta||^2 + 2 (dh . h')(delta . ddelta)``:
  every term is of the size of the difference, so nothing large cancels.

Where an expansion subtracts terms, rounding could make the computed norm smaller than the true
norm of what is summed, and clipping with it could exceed the sensitivity the accountant
assumes. Each such norm therefore comes with a rigorous floating-point error bound, added before
clipping (:func:`rounding_margin`): clipping is then at most a hair too strong, never too weak.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ._safety import CLIP_SAFETY
from .rows.kernels import input_mm, input_sq_norms, input_square, input_t_mm
from .rows.sparse import SparseRows

__all__ = [
    "Block",
    "ParamBlock",
    "clip_factors",
    "difference_sq_norms",
    "gradient_sq_norms",
    "rounding_margin",
    "transformed_sq_norms",
    "weighted_difference_sum",
    "weighted_gradient_sum",
]


@dataclass
class Block:
    """One dense block of a batch's per-example gradients: input ``h`` (batch, fan_in), output
    gradient ``delta`` (batch, fan_out), whether the block has a bias, and whether ``h`` is
    known to be finite (the validated data; hidden activations of an overflowing row may not
    be), which saves masking it. Only the data can be sparse (:class:`SparseRows`, always
    finite); every other input is a dense tensor."""

    h: torch.Tensor | SparseRows
    delta: torch.Tensor
    has_bias: bool
    h_finite: bool = False


# (weight view (fan_in, fan_out), bias view (fan_out,) or None) of a flat parameter-shaped vector.
ParamBlock = tuple[torch.Tensor, torch.Tensor | None]


def rounding_margin(blocks: Sequence[Block], dtype: torch.dtype) -> float:
    """A relative bound ``tau`` on the rounding error of the norms computed here.

    A sum of ``k`` floating-point products has an error of at most ``gamma_k = k u / (1 - k u)``
    times the sum of the absolute values of its terms (``u`` the unit roundoff), whatever the
    summation order. The longest chain of sums behind one example's norm is a matrix product
    over ``fan_in``, a row sum over ``fan_out`` and a sum over the blocks; ``k`` adds a generous
    allowance for the squares, reciprocals and casts around them, and the bound is doubled.
    """
    u = torch.finfo(dtype).eps / 2
    k = max(b.h.shape[1] + 1 for b in blocks) + sum(b.delta.shape[1] for b in blocks)
    k += 2 * len(blocks) + 16
    if k * u >= 1.0:
        # gamma_k bounds nothing here (about 2**24 columns in float32, reachable with hashed
        # sparse features): an infinite margin clips everything to zero, never too weakly.
        return float("inf")
    return 2.0 * k * u / (1.0 - k * u)


def gradient_sq_norms(
    blocks: Sequence[Block], first_input_sq: torch.Tensor | None = None
) -> torch.Tensor:
    """``||g_i||^2 = sum_blocks ||h~_i||^2 ||delta_i||^2``: a sum of non-negative terms (no
    cancellation, no margin needed). ``first_input_sq``, if given, is the first block's
    ``||h~_i||^2`` computed once per fit (e.g. ``||x_i||^2 + 1`` in float64)."""

    def input_sq(b: Block) -> torch.Tensor:
        h_sq = input_sq_norms(b.h)
        return h_sq.add_(1.0) if b.has_bias else h_sq

    first = blocks[0]
    h_sq = input_sq(first) if first_input_sq is None else first_input_sq
    total = h_sq * torch.linalg.vector_norm(first.delta, dim=1).square_()
    for b in blocks[1:]:
        total.addcmul_(input_sq(b), torch.linalg.vector_norm(b.delta, dim=1).square_())
    return total


def clip_factors(sq_norms: torch.Tensor, bound: float) -> torch.Tensor:
    """``c_i = min(1, bound' / ||v_i||)`` with ``bound' = bound * CLIP_SAFETY``, and ``c_i = 0``
    where the norm is not finite or ``bound`` is 0, so that ``||c_i v_i|| <= bound`` for every
    example whatever it holds."""
    if bound <= 0.0:
        return torch.zeros_like(sq_norms)
    cap = bound * CLIP_SAFETY
    norms = sq_norms.clamp(min=0.0).sqrt_()
    factors = torch.reciprocal(norms.clamp_(min=cap)).mul_(cap)
    return torch.where(torch.isfinite(sq_norms), factors, 0.0)


def _zero_rows(t: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    # torch.where rather than a product: inf * 0 would be NaN.
    return torch.where(keep.unsqueeze(1), t, 0.0)


def _input(b: Block, keep: torch.Tensor) -> torch.Tensor:
    """``h`` with dropped rows zeroed (needed only if ``h`` may hold non-finite values)."""
    return b.h if b.h_finite else _zero_rows(b.h, keep)


def weighted_gradient_sum(
    blocks: Sequence[Block], factors: torch.Tensor | None, out_blocks: Sequence[ParamBlock]
) -> None:
    """``sum_i c_i g_i`` written into ``out_blocks``; rows with ``c_i = 0`` contribute exactly
    zero even if they hold non-finite values. ``factors=None`` is the plain sum."""
    keep = None if factors is None else factors > 0
    for b, (W_out, b_out) in zip(blocks, out_blocks, strict=True):
        if keep is None:
            h, scaled = b.h, b.delta
        else:
            h, scaled = _input(b, keep), _zero_rows(b.delta * factors.unsqueeze(1), keep)
        input_t_mm(h, scaled, W_out)
        if b_out is not None:
            torch.sum(scaled, dim=0, out=b_out)


def transformed_sq_norms(
    blocks: Sequence[Block],
    inv_sq_scale: Sequence[ParamBlock],
    centre: Sequence[ParamBlock],
    centre_sq_sum: float | torch.Tensor,
) -> torch.Tensor:
    """An upper bound on ``||(g_i - a) / b||^2`` for every example (adaclip's clipping norm).

    ``inv_sq_scale`` holds ``w = 1 / b^2`` and ``centre`` holds ``a``, both in the block layout
    of the parameters; ``centre_sq_sum = sum(w a^2)``. The expansion
    ``quad - 2 lin + const`` is computed with ``|lin| <= sqrt(quad const)`` (Cauchy-Schwarz),
    so its rounding error is at most ``tau (sqrt(quad) + sqrt(const))^2``, which is added.
    """
    quad = None
    lin = None
    for b, (w_W, w_b), (a_W, a_b) in zip(blocks, inv_sq_scale, centre, strict=True):
        d_sq = b.delta.square()
        q = (input_mm(input_square(b.h), w_W) * d_sq).sum(dim=1)
        ln = (input_mm(b.h, w_W * a_W) * b.delta).sum(dim=1)
        if b.has_bias:
            q.add_(d_sq @ w_b)
            ln.add_(b.delta @ (w_b * a_b))
        quad = q if quad is None else quad.add_(q)
        lin = ln if lin is None else lin.add_(ln)
    # A tensor (not a Python float): no host synchronisation per step on a GPU.
    const = torch.as_tensor(centre_sq_sum, dtype=quad.dtype, device=quad.device).clamp(min=0.0)
    tau = rounding_margin(blocks, quad.dtype)
    margin = (quad.clamp(min=0.0).sqrt() + const.sqrt()).square_().mul_(tau)
    return (quad - 2.0 * lin + const).clamp_(min=0.0).add_(margin)


def difference_sq_norms(blocks: Sequence[Block], previous: Sequence[Block]) -> torch.Tensor:
    """An upper bound on ``||g_i(x) - g_i(x')||^2`` for every example (diff2's clipping norm).

    ``blocks`` and ``previous`` are the factors of the same rows at ``x`` and ``x'``. Per block
    the difference is ``dh delta^T + h' ddelta^T`` (plus ``ddelta`` for the bias); the cross
    term is bounded by Cauchy-Schwarz, and ``tau (sqrt(A) + sqrt(B))^2`` covers rounding.
    """
    total = None
    margin = None
    tau = rounding_margin(blocks, blocks[0].delta.dtype)
    for cur, prev in zip(blocks, previous, strict=True):
        d_delta = cur.delta - prev.delta
        dd_sq = torch.linalg.vector_norm(d_delta, dim=1).square_()
        hp_sq = input_sq_norms(prev.h)
        if cur.has_bias:
            hp_sq.add_(1.0)
        b_term = hp_sq * dd_sq
        if cur.h is prev.h:  # a shared input (the data): the difference is h ddelta^T only
            a_term = torch.zeros_like(b_term)
            sq = b_term
        else:
            dh = cur.h - prev.h
            a_term = torch.linalg.vector_norm(dh, dim=1).square_().mul_(
                torch.linalg.vector_norm(cur.delta, dim=1).square_()
            )
            cross = (dh * prev.h).sum(dim=1).mul_((cur.delta * d_delta).sum(dim=1))
            sq = a_term + b_term + 2.0 * cross
        m = (a_term.sqrt() + b_term.sqrt()).square_()
        total = sq if total is None else total.add_(sq)
        margin = m if margin is None else margin.add_(m)
    return total.clamp_(min=0.0).add_(margin.mul_(tau))


def weighted_difference_sum(
    blocks: Sequence[Block],
    previous: Sequence[Block],
    factors: torch.Tensor,
    out_blocks: Sequence[ParamBlock],
) -> None:
    """``sum_i c_i (g_i(x) - g_i(x'))`` written into ``out_blocks``, in the same decomposition
    as :func:`difference_sq_norms` (so the norm bounded there is the norm of what is summed)."""
    keep = factors > 0
    col = factors.unsqueeze(1)
    for cur, prev, (W_out, b_out) in zip(blocks, previous, out_blocks, strict=True):
        d_delta = _zero_rows((cur.delta - prev.delta) * col, keep)
        input_t_mm(_input(prev, keep), d_delta, W_out)
        if cur.h is not prev.h:
            W_out.addmm_(
                _zero_rows(cur.h - prev.h, keep).T, _zero_rows(cur.delta * col, keep)
            )
        if b_out is not None:
            torch.sum(d_delta, dim=0, out=b_out)
