"""How many CPU threads a fit computes with (``skdp.set_config(n_threads='auto')``).

A DP fit is a long loop of small products (one batch of rows at a time). torch runs each
product on all its threads, and a thread that waits for a core held by another process stalls
the whole product: on a 2-core machine with busy processes, default fits ran up to 1.9x slower
on two threads than on one, up to 80x with a third process busy (benchmarks/bench_threads.py,
results/threads.json and its version at commit 877b128). On an idle machine two threads were
0.59-0.82x one thread for the MLPs and Fashion-MNIST: the rule gives that up for the busy case,
which is the common one (a notebook server, a browser, a CI runner); set_config(n_threads=...)
takes it back.
"""

from __future__ import annotations

from .._utils.threads import available_cores
from .registry import Rule, register

__all__ = ["THREAD_WORK_MIN", "auto_threads", "fit_threads"]

#: Multiply-adds of one step (rows per step times parameters; one pass for sufficient
#: statistics) from which a fit uses every available core.
THREAD_WORK_MIN = 5e8


def auto_threads(work: float | None, cores: int) -> int:
    """``n_threads='auto'``: one thread below ``THREAD_WORK_MIN`` multiply-adds per step (or
    when the work is unknown), every available core above."""
    if work is None or work < THREAD_WORK_MIN:
        return 1
    return cores


def fit_threads(setting, work: float | None) -> int:
    """The threads of one fit: ``setting`` as given, or :func:`auto_threads` for ``'auto'``."""
    if setting == "auto":
        return auto_threads(work, available_cores())
    return int(setting)


register(Rule(
    "config.n_threads", "skdp.set_config(n_threads='auto')",
    ("DPLogisticRegression", "DPRidge", "DPMLPClassifier", "DPMLPRegressor"),
    "one CPU thread when one step's work (rows per step times parameters; one pass over the "
    "rows for sufficient statistics) is below THREAD_WORK_MIN multiply-adds, every available "
    "core above it; the caller's thread settings are restored after the fit.",
    {"THREAD_WORK_MIN": THREAD_WORK_MIN},
    "benchmarks/bench_threads.py (results/threads.json)",
    auto_threads,
))
