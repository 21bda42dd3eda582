"""Deliberately broken mechanisms for the audit tests (monkeypatched, never in library code).

Each breaker keeps the claimed epsilon (``privacy_spent_``) as calibrated and breaks what is
run: the noise (scaled down, as by a sensitivity computed 4x too small, or nearly switched off)
or the per-example clipping (switched off). Each returns a counter of how often its patch was
used, so that a test can tell a breaker that no longer reaches the code (say, after a refactor,
or for an optimizer that clips elsewhere) from an audit without teeth.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import torch

import skdp._engine
import skdp.mechanisms
from skdp._engine._glm import LinearModel
from skdp._engine._mlp import MLPModel
from skdp.mechanisms._sgd.optimizer import SGDOptimizer

MODEL_CLASSES = (LinearModel, MLPModel)


def _engine_modules_with(name: str):
    """Every module of ``skdp._engine`` and ``skdp.mechanisms`` that has a global called
    ``name`` (a function the optimizers import, such as ``clip_factors``)."""
    for package in (skdp._engine, skdp.mechanisms):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            if hasattr(module, name):
                yield module


def scale_noise(monkeypatch, factor: float) -> list[int]:
    """Run with ``factor`` times the calibrated noise multiplier while claiming the calibrated
    epsilon: ``factor=0.25`` is a sensitivity underestimated 4x, ``factor=1e-6`` noise off
    (kept positive, so that clipping stays on)."""
    calls = [0]
    calibrate = SGDOptimizer.calibrate  # every DP-SGD optimizer's calibration

    def broken(*args, **kwargs):
        calibration = calibrate(*args, **kwargs)
        if not calibration.is_private:
            return calibration
        calls[0] += 1
        return dataclasses.replace(
            calibration, noise_multiplier=calibration.noise_multiplier * factor
        )

    monkeypatch.setattr(SGDOptimizer, "calibrate", broken)
    return calls


def disable_clipping(monkeypatch) -> list[int]:
    """Per-example gradients summed unclipped (noise still scaled to the clipping bound).

    Patches the models' ``clipped_grad_sum`` (``max_norm=None``) and every engine module's
    ``clip_factors`` (all factors 1, as far as the norms are finite), which the factored
    optimizers (adaclip, diff2) use.
    """
    calls = [0]

    def no_clip_factors(sq_norms, bound):
        calls[0] += 1
        return torch.where(torch.isfinite(sq_norms), 1.0, 0.0).to(sq_norms.dtype)

    for module in _engine_modules_with("clip_factors"):
        monkeypatch.setattr(module, "clip_factors", no_clip_factors)
    for cls in MODEL_CLASSES:
        original = cls.clipped_grad_sum
        position = list(inspect.signature(original).parameters).index("max_norm")

        def unclipped(*args, _original=original, _position=position, **kwargs):
            calls[0] += 1
            args = list(args)
            if len(args) > _position:
                args[_position] = None
            else:
                kwargs["max_norm"] = None
            return _original(*args, **kwargs)

        monkeypatch.setattr(cls, "clipped_grad_sum", unclipped)
    return calls


def apply(monkeypatch, breaker: str) -> list[int]:
    """``'none'``, ``'noise_off'``, ``'noise_div4'`` or ``'no_clipping'``."""
    if breaker == "none":
        return [1]
    if breaker == "noise_off":
        return scale_noise(monkeypatch, 1e-6)
    if breaker == "noise_div4":
        return scale_noise(monkeypatch, 0.25)
    if breaker == "no_clipping":
        return disable_clipping(monkeypatch)
    raise ValueError(breaker)
