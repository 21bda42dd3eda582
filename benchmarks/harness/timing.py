"""Wall times, per-epoch costs and peak memory.

Every time is a minimum over repeats where it is compared (the usual estimate of the cost
without interference from other processes on a shared machine); fits that are compared are
interleaved, so that load from other processes hits them alike.
"""

from __future__ import annotations

import multiprocessing
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    """``(fn(), seconds)``."""
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Minimum wall time of ``fn()`` over ``repeats`` runs."""
    return min(timed(fn)[1] for _ in range(max(1, repeats)))


def epoch_seconds(make, X, y, e_short: int, e_long: int, repeats: int) -> float:
    """Seconds per epoch of ``make(max_iter)``: ``(t(e_long) - t(e_short)) / (e_long -
    e_short)``, the calibration warm (each plan fitted once first), the two fits interleaved
    and each time the minimum over ``repeats``: the fixed costs of a fit cancel."""
    for epochs in (e_short, e_long):
        make(epochs).fit(X, y)
    times: dict[int, list[float]] = {e_short: [], e_long: []}
    for _ in range(max(1, repeats)):
        for epochs in (e_short, e_long):
            est = make(epochs)
            times[epochs].append(timed(lambda est=est: est.fit(X, y))[1])
    return (min(times[e_long]) - min(times[e_short])) / (e_long - e_short)


def dp_and_nonprivate_epochs(make_estimator, X, y, *, repeats: int = 5, e_short: int = 20,
                             e_long: int = 40, delta: float = 1e-5) -> dict[str, float]:
    """Per-epoch cost of ``make_estimator(privacy, max_iter)`` at ``(1, delta)`` and without
    privacy, the DP and non-private fits interleaved within each repeat."""
    runs = {"dp": (1.0, delta), "nonprivate": (float("inf"), 0.0)}
    for privacy in runs.values():
        for max_iter in (e_short, e_long):
            make_estimator(privacy, max_iter).fit(X, y)  # warm the calibration cache
    totals: dict[tuple, list[float]] = {(label, e): [] for label in runs
                                        for e in (e_short, e_long)}
    for _ in range(max(1, repeats)):
        for label, privacy in runs.items():
            for max_iter in (e_short, e_long):
                est = make_estimator(privacy, max_iter)
                totals[label, max_iter].append(timed(lambda est=est: est.fit(X, y))[1])
    out = {"repeats": repeats, "e_short": e_short, "e_long": e_long}
    for label in runs:
        t_short, t_long = min(totals[label, e_short]), min(totals[label, e_long])
        out[f"{label}_t_short"], out[f"{label}_t_long"] = t_short, t_long
        out[f"{label}_epoch"] = (t_long - t_short) / (e_long - e_short)
    return out


# --- peak memory of one call -------------------------------------------------------------------
def _status_kib(field_name: str) -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    raise KeyError(field_name)


def _measure_peak(fn, args, kwargs) -> float:
    """In a fresh process: the resident-set growth of ``fn(*args, **kwargs)``, MiB."""
    warnings.simplefilter("ignore")  # the parent reports the warnings of its own fits
    try:
        import opacus  # noqa: F401 - imported before the baseline, as skdp's modules are
    except ImportError:
        pass
    with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
        handle.write("5")  # reset the peak resident set size (Linux)
    before = _status_kib("VmRSS")
    fn(*args, **kwargs)
    return (_status_kib("VmHWM") - before) / 1024


def peak_memory_mib(fn, *args, on_device: str = "cpu", **kwargs) -> float:
    """Peak extra memory of one call: in a fresh spawned process on the CPU (so that memory
    cached by earlier fits does not hide it), or ``torch.cuda.max_memory_allocated`` on a GPU;
    NaN where it cannot be measured."""
    if on_device == "cuda":
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fn(*args, **kwargs)
        torch.cuda.synchronize()
        return (torch.cuda.max_memory_allocated() - base) / 2**20
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(_measure_peak, fn, args, kwargs).result()
    except OSError:
        return float("nan")
