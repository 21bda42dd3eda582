"""Devices and random generators for a fit."""

from __future__ import annotations

import numbers

import numpy as np
import torch

__all__ = ["resolve_device", "seed_sequence", "FitRandomness"]


def resolve_device(device: str | torch.device) -> torch.device:
    """``'auto'`` -> CUDA when available, else CPU; ``'cpu'``/``'cuda'``/``'cuda:1'`` as given."""
    if isinstance(device, torch.device):
        resolved = device
    elif device == "auto":
        resolved = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            resolved = torch.device(device)
        except (RuntimeError, TypeError) as exc:
            raise ValueError(
                f"device must be 'auto', 'cpu', 'cuda' or a torch device string, got {device!r}"
            ) from exc
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            "device='cuda' was requested but torch reports no CUDA device; use device='auto' "
            "to fall back to the CPU"
        )
    if resolved.type not in ("cpu", "cuda"):
        raise ValueError(f"skdp supports CPU and CUDA devices, got {resolved}")
    return resolved


def seed_sequence(random_state) -> np.random.SeedSequence:
    """The seed of a fit's random streams: from ``random_state``, or from OS entropy when it is
    ``None`` (never from numpy's global state, which a caller could have seeded)."""
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, numbers.Integral):
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(random_state.randint(0, 2**31 - 1, size=4).tolist())
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**31 - 1, size=4).tolist())
    raise ValueError(
        f"random_state must be None, an int, a numpy RandomState or Generator, "
        f"got {random_state!r}"
    )


class FitRandomness:
    """The independent random streams of one fit: batch sampling (host) and noise (device).

    With ``random_state=None`` the streams are seeded from OS entropy, never from numpy's global
    state, so that noise cannot be replayed by someone who seeded numpy.
    """

    def __init__(self, random_state, device: torch.device) -> None:
        sampling_seq, noise_seq, init_seq = seed_sequence(random_state).spawn(3)
        self.sampling = np.random.default_rng(sampling_seq)
        self.init = np.random.default_rng(init_seq)
        self.noise = torch.Generator(device=device)
        self.noise.manual_seed(int(noise_seq.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1)))
