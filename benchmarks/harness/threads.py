"""``--threads N`` applied before numpy and torch start their thread pools.

Imported first by the benchmark scripts (it imports nothing heavy): BLAS and OpenMP read their
thread counts once, when they load, so the environment must be set before ``import numpy``.
"""

from __future__ import annotations

import os
import sys

#: The thread variables as the user set them, before :func:`pin_threads` changes them (the
#: command recorded in a results file is the user's).
USER_ENVIRONMENT = {name: os.environ[name] for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                        "MKL_NUM_THREADS") if name in os.environ}


def threads_from_argv(argv: list[str] | None = None, default: int | None = None) -> int | None:
    """The value of ``--threads`` (``--threads N`` or ``--threads=N``), else ``default``."""
    argv = sys.argv[1:] if argv is None else argv
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return default


def pin_threads(default: int | None = None) -> int | None:
    """Set the OpenMP / OpenBLAS / MKL thread counts from ``--threads`` (or ``default``)."""
    threads = threads_from_argv(default=default)
    if threads:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(threads)
    return threads
