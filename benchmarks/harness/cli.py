"""The command-line options every study script shares.

``--threads N``: ``torch.set_num_threads`` (and, read before numpy loads by
:func:`harness.threads.pin_threads`, the OpenMP/BLAS thread counts); ``--data-dir``: the folder
of the data that is not in the repository (default ``../shared/data`` next to the checkout);
``--results FILE``: where the results file goes (default ``benchmarks/results/<study>.json``;
point smoke runs elsewhere, e.g. ``--results /tmp/smoke.json``, so that they never replace a
stored study).
"""

from __future__ import annotations

import argparse
import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path


def add_common_arguments(parser: argparse.ArgumentParser, *, threads: bool = True,
                         threads_default: int | None = None) -> argparse.ArgumentParser:
    if threads:
        parser.add_argument("--threads", type=int, default=threads_default,
                            help="torch (and OpenMP/BLAS) threads; 1 helps when other jobs "
                            "share the cores")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="folder of the data outside the repository (adult/, "
                        "fashion-mnist/, tabular/); default ../shared/data next to the "
                        "checkout, or $SKDP_DATA_DIR")
    parser.add_argument("--results", type=Path, default=None,
                        help="results file (default benchmarks/results/<study>.json; give "
                        "another path for smoke runs)")
    return parser


def setup(args: argparse.Namespace) -> None:
    """Apply the common options: the data folder and torch's threads."""
    from . import data

    if getattr(args, "data_dir", None):
        data.set_data_dir(args.data_dir)
    threads = getattr(args, "threads", None)
    if threads:
        import torch

        torch.set_num_threads(threads)


@contextlib.contextmanager
def collect_warnings(store: dict[str, int], tag: str) -> Iterator[None]:
    """Silence warnings inside the block but count them (:func:`print_warnings` lists them)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        key = f"[{tag}] {w.category.__name__}: {str(w.message).splitlines()[0][:160]}"
        store[key] = store.get(key, 0) + 1


def print_warnings(store: dict[str, int]) -> None:
    if not store:
        return
    print("\nWarnings raised by the fits (silenced while timing; count x message):")
    for key, count in sorted(store.items()):
        print(f"- {count} x {key}")
