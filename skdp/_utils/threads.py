"""The CPU threads of one fit, and restoring the caller's settings afterwards.

torch's intra-op thread pool and the BLAS libraries' pools are process-wide. A fit sets them
for its own duration only (:func:`limited_threads`) and puts back what the caller had, also
when the fit raises.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator

import torch
from threadpoolctl import ThreadpoolController

__all__ = ["available_cores", "limited_threads"]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not every OS has affinities
        return max(1, os.cpu_count() or 1)


@functools.cache
def _blas_pools() -> ThreadpoolController:
    """The BLAS libraries loaded in this process, found once (a scan of the loaded libraries
    costs about a millisecond, which every small fit of a search or an audit would pay)."""
    return ThreadpoolController().select(user_api="blas")


@contextlib.contextmanager
def limited_threads(n_threads: int) -> Iterator[None]:
    """Compute with ``n_threads`` torch and BLAS threads inside the block; restore after."""
    previous = torch.get_num_threads()
    # BLAS only: torch's own OpenMP pool is set through torch, which remembers it.
    with _blas_pools().limit(limits=n_threads):
        if n_threads != previous:
            torch.set_num_threads(n_threads)
        try:
            yield
        finally:
            if torch.get_num_threads() != previous:
                torch.set_num_threads(previous)
