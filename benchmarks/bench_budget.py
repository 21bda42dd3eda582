"""Speed of the privacy budget ledger: 100 DP-SGD spends of ~2000 steps each.

Usage: python benchmarks/bench_budget.py

Prints the time of each charge, of ``spent()`` with the composed state cached in this process
(the usual case), of ``spent()`` recomputed from the file (a process that opens the ledger for
the first time), and of a fresh dp_accounting PLD accountant composing the same events (what
every call would cost without the cache).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

import dp_accounting
from dp_accounting.pld import PLDAccountant

from skdp.budget import PrivacyBudget, _ledger

N_SPENDS, STEPS, Q, DELTA = 100, 2000, 0.01, 1e-5


def spend(i: int) -> dp_accounting.DpEvent:
    # Distinct noise levels, so that no per-spend result can be reused between spends.
    sigma = 8.0 + 0.01 * i
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(sigma)), STEPS
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "bench.skdp")
        budget = PrivacyBudget(10.0, DELTA, path=path)
        charges = []
        for i in range(N_SPENDS):
            start = time.perf_counter()
            budget.charge(spend(i), estimator="bench", params={"i": i})
            charges.append(time.perf_counter() - start)
        totals = budget.totals()
        print(f"{N_SPENDS} spends of {STEPS} Poisson-sampled Gaussian steps (q={Q}): "
              f"epsilon={totals.epsilon:.4f} at delta={DELTA:g} ({totals.accountant}, interval "
              f"{totals.pld_interval:.3g}); sum of the spends' own epsilons: "
              f"{sum(r.epsilon for r in budget.history()):.2f}")
        print(f"charge: median {statistics.median(charges) * 1e3:.1f} ms, "
              f"max {max(charges) * 1e3:.1f} ms")

        start = time.perf_counter()
        for _ in range(100):
            budget.spent()
        print(f"spent(), state cached in this process: {(time.perf_counter() - start) * 10:.2f} ms")

        with _ledger._CACHE_LOCK:  # as in a process that opens the ledger for the first time
            _ledger._STATES.clear()
            _ledger._COMPOSERS.clear()
        reopened = PrivacyBudget.open(path)
        start = time.perf_counter()
        cold = reopened.spent()
        print(f"spent(), first call after opening the file: {time.perf_counter() - start:.2f} s")
        assert cold == budget.spent()

        code = (
            "import time; from skdp.budget import PrivacyBudget; "
            f"b = PrivacyBudget.open({path!r}); s = time.perf_counter(); b.spent(); "
            "print(time.perf_counter() - s)"
        )
        seconds = float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True).stdout)
        print(f"spent(), first call in a new Python process: {seconds:.2f} s")

        start = time.perf_counter()
        fresh = PLDAccountant(value_discretization_interval=totals.pld_interval)
        for i in range(N_SPENDS):
            fresh.compose(spend(i))
        fresh.get_epsilon(DELTA)
        print(f"fresh dp_accounting PLDAccountant on the same events: "
              f"{time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
