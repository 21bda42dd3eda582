"""Speed of the privacy budget ledger: charge latency, reopening, and many processes at once.

Usage: python benchmarks/bench_budget.py [--quick]

Two budgets, each charged with DP-SGD runs (Poisson-sampled Gaussian steps):

* small: epsilon 1, delta 1e-5, runs of 500 steps at q=0.01 and sigma about 60 (a thousand of
  them fit in the budget);
* large: epsilon 1000, delta 0.5, runs of 1000 steps at q=0.01 and sigma about 1 (epsilon of
  about 1.8 each at delta 1e-5), where a fine PLD has millions of entries.

For each budget and each ledger size (10, 100, 1000 spends) the ledger is filled, then 100
charges are timed (so the ledger grows from N to N + 100 while they are timed); the median and
p99 are printed. "plan seen" charges reuse one of 10 plans (a grid search: the spend's own
RDP curve and PLD are memoised in the process); "new plan" charges are plans never seen before,
so they also pay ``dp_accounting``'s RDP curve and PLD of the spend itself, whatever the ledger
size. Then: opening the 1000-spend ledger in a fresh Python process and its first charge, and
1/4/8 processes each charging 100 fits at once on one ledger (recorded, refused for the budget,
failed for a lock).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass

import dp_accounting
import numpy as np

from skdp.budget import BudgetExceededError, LedgerError, PrivacyBudget, _ledger


@dataclass(frozen=True)
class Budget:
    name: str
    epsilon: float
    delta: float
    q: float
    steps: int
    sigma: float

    def plan(self, i: int) -> dp_accounting.DpEvent:
        """Plan ``i``: its own noise level, so that plans share no accounting work."""
        event = dp_accounting.PoissonSampledDpEvent(
            self.q, dp_accounting.GaussianDpEvent(self.sigma * (1.0 + 1e-4 * i))
        )
        return dp_accounting.SelfComposedDpEvent(event, self.steps)


SMALL = Budget("small (eps 1, delta 1e-5)", 1.0, 1e-5, 0.01, 500, 60.0)
LARGE = Budget("large (eps 1000, delta 0.5)", 1000.0, 0.5, 0.01, 1000, 1.0)
POOL = 10  # plans of a grid search
NEW_PLAN = 10_000  # plan numbers from here on were never charged before


def forget_process_caches() -> None:
    """Make the next use of a ledger start as in a process that never opened it."""
    with _ledger._CACHE_LOCK:
        _ledger._STATES.clear()
        _ledger._PLD_STATES.clear()
        _ledger._COMPOSERS.clear()


def timed_charges(budget: PrivacyBudget, plans: list[dp_accounting.DpEvent]) -> list[float]:
    seconds = []
    for plan in plans:
        start = time.perf_counter()
        budget.charge(plan, estimator="bench")
        seconds.append(time.perf_counter() - start)
    return seconds


def percentiles(seconds: list[float]) -> str:
    ms = np.asarray(seconds) * 1e3
    return f"{statistics.median(ms):8.1f} {np.percentile(ms, 99):8.1f} {ms.max():8.1f}"


def latency(spec: Budget, directory: str, sizes: tuple[int, ...], n_timed: int,
            n_new: int) -> str:
    """Charge latency percentiles at each ledger size; returns the path of the largest."""
    print(f"\n{spec.name}: charge latency in ms (median, p99, max)")
    print(f"{'spends':>7} {'charges':>12} {'median':>8} {'p99':>8} {'max':>8}")
    path = ""
    for size in sizes:
        path = os.path.join(directory, f"{spec.epsilon:g}-{size}.skdp")
        budget = PrivacyBudget(spec.epsilon, spec.delta, path=path)
        timed_charges(budget, [spec.plan(i % POOL) for i in range(size)])  # fill
        seen = timed_charges(budget, [spec.plan(i % POOL) for i in range(n_timed)])
        print(f"{size:>7} {f'{n_timed} seen':>12} {percentiles(seen)}")
        base = NEW_PLAN + 1000 * size
        new = timed_charges(budget, [spec.plan(base + i) for i in range(n_new)])
        print(f"{size:>7} {f'{n_new} new':>12} {percentiles(new)}")
    totals = PrivacyBudget.open(path).totals()
    print(f"  ledger of {totals.n_spends} spends: epsilon {totals.epsilon:.4g} "
          f"({totals.accountant}; PLD {totals.pld_epsilon:.4g}, RDP {totals.rdp_epsilon:.4g})")
    return path


def reopen(spec: Budget, directory: str, size: int) -> None:
    """Open a ``size``-spend ledger in a fresh Python process and charge it once."""
    path = os.path.join(directory, f"reopen-{spec.epsilon:g}.skdp")
    budget = PrivacyBudget(spec.epsilon, spec.delta, path=path)
    timed_charges(budget, [spec.plan(i % POOL) for i in range(size)])
    budget.spent()  # as a user would look at it: stores the composed PLD too
    code = textwrap.dedent(f"""
        import time, dp_accounting
        start = time.perf_counter()
        from skdp.budget import PrivacyBudget
        imported = time.perf_counter()
        budget = PrivacyBudget.open({path!r})
        opened = time.perf_counter()
        event = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(
            {spec.q!r}, dp_accounting.GaussianDpEvent({spec.sigma!r})), {spec.steps})
        budget.charge(event, estimator="bench")
        charged = time.perf_counter()
        budget.spent()
        print(opened - imported, charged - opened, time.perf_counter() - charged)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    opened, charged, spent = (float(v) for v in out)
    print(f"  new process, {size}-spend ledger: open {opened * 1e3:.0f} ms, first charge "
          f"{charged * 1e3:.0f} ms (open + charge {(opened + charged) * 1e3:.0f} ms; a plan "
          f"already in the ledger), then spent() {spent * 1e3:.0f} ms")


def _worker(path: str, spec: Budget, fits: int, worker: int, queue) -> None:
    counts = {"recorded": 0, "refused": 0, "lock": 0}
    budget = PrivacyBudget.open(path)
    for i in range(fits):
        try:
            budget.charge(spec.plan((worker + i) % POOL), estimator=f"worker{worker}")
            counts["recorded"] += 1
        except BudgetExceededError:
            counts["refused"] += 1
        except LedgerError:
            counts["lock"] += 1
    queue.put(counts)


def processes(spec: Budget, directory: str, fits: int, counts: tuple[int, ...]) -> None:
    print(f"\n{spec.name}: processes x {fits} fits charging one ledger at once "
          f"({os.cpu_count()} cores)")
    print(f"{'processes':>9} {'recorded':>9} {'refused':>8} {'lock':>5} {'in ledger':>10} "
          f"{'wall s':>7}")
    context = multiprocessing.get_context("fork" if "fork" in
                                          multiprocessing.get_all_start_methods() else "spawn")
    for n in counts:
        path = os.path.join(directory, f"procs-{n}.skdp")
        PrivacyBudget(spec.epsilon, spec.delta, path=path)
        queue = context.Queue()
        workers = [context.Process(target=_worker, args=(path, spec, fits, w, queue))
                   for w in range(n)]
        start = time.perf_counter()
        for w in workers:
            w.start()
        results = [queue.get() for _ in workers]
        for w in workers:
            w.join()
        wall = time.perf_counter() - start
        total = {k: sum(r[k] for r in results) for k in results[0]}
        in_ledger = len(PrivacyBudget.open(path).history())
        print(f"{n:>9} {total['recorded']:>9} {total['refused']:>8} {total['lock']:>5} "
              f"{in_ledger:>10} {wall:>7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()
    sizes = (10, 100) if args.quick else (10, 100, 1000)
    n_timed, n_new = (20, 3) if args.quick else (100, 10)
    with tempfile.TemporaryDirectory() as directory:
        for spec in (SMALL, LARGE):
            latency(spec, directory, sizes, n_timed, n_new)
            forget_process_caches()
            reopen(spec, directory, sizes[-1])
        processes(SMALL, directory, 20 if args.quick else 100, (1, 4, 8))


if __name__ == "__main__":
    main()
