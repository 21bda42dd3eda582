"""Fits on one and on two CPU threads, on an idle machine and with two busy processes.

Each estimator's default fit (and DPRidge(optimizer='ssp')) on Adult, diamonds and
Fashion-MNIST is timed with skdp.config_context(n_threads=k) for k = 1, 2 and 'auto'
(skdp's own choice), first with nothing else running, then while two other processes keep
both cores busy (the issue's "busy machine"). It chooses THREAD_WORK_MIN
(skdp/_defaults/threads.py): more threads only where one step's work hides the waits on a busy
core.

Usage: python benchmarks/bench_threads.py [--repeats 3] [--datasets adult,diamonds,fashion_mnist]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np
from harness import cli, data
from harness.results import Run, Study

STUDY = Study(
    name="threads",
    title="CPU threads of a fit: idle and busy machines",
    script="benchmarks/bench_threads.py",
    measures="Wall time of default fits with 1 and 2 torch/BLAS threads and with skdp's "
    "automatic choice, on an idle machine and while two other processes keep both cores busy; "
    "the busy-machine ratio is the automatic choice's time over the one-thread time under the "
    "same load (target: at most 1.25).",
    conclusion=(
        "with one thread per fit (the rule's choice for every default fit measured), fits under"
        ' two busy processes take 0.43-1.10x their one-thread time (target 1.25), where two '
        'threads took up to 1.9x (and up to 80x in the run of commit 877b128, with a third '
        'process busy); on an idle machine two threads are 0.59-0.82x one thread for the MLPs '
        "and Fashion-MNIST, so there the rule is up to 1.7x slower than torch's default"
    ),
    chooses=("`THREAD_WORK_MIN` (`skdp/_defaults/threads.py`)",),
)


def _cases(names):
    from skdp.linear_model import DPLogisticRegression, DPRidge
    from skdp.neural_network import DPMLPClassifier, DPMLPRegressor

    for name, split in data.load_available(names):
        X, y = split.X_train, split.y_train
        if split.task == "classification":
            yield name, "DPLogisticRegression", lambda: DPLogisticRegression(random_state=0), X, y
            yield name, "DPMLPClassifier", lambda: DPMLPClassifier(random_state=0), X, y
        else:
            yield name, "DPRidge", lambda: DPRidge(random_state=0), X, y
            yield name, "DPRidge(ssp)", lambda: DPRidge(optimizer="ssp", random_state=0), X, y
            yield name, "DPMLPRegressor", lambda: DPMLPRegressor(random_state=0), X, y


def _time(make, X, y, threads, repeats: int) -> float:
    import skdp

    times = []
    with skdp.config_context(n_threads=threads):
        for _ in range(repeats):
            start = time.perf_counter()
            make().fit(X, y)
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def _busy(n: int):
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    time.sleep(0.5)
    return procs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_common_arguments(parser, threads=False)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", default="adult,diamonds,fashion_mnist")
    parser.add_argument("--busy", type=int, default=2, help="busy processes in the busy runs")
    args = parser.parse_args(argv)
    cli.setup(args)
    import warnings

    from skdp._defaults.threads import fit_threads  # noqa: F401 (documents what 'auto' is)

    warnings.simplefilter("ignore")
    run = Run(STUDY, args, results=args.results)
    run.header([f"median of {args.repeats} fits; busy: {args.busy} processes spinning on the "
                "cores; times in seconds; calibration cached after a first fit"])
    rows = []
    for name, estimator, make, X, y in _cases(args.datasets.split(",")):
        make().fit(X, y)  # warm the calibration cache and the libraries
        times = {}
        for load in ("idle", "busy"):
            procs = _busy(args.busy) if load == "busy" else []
            try:
                for threads in (1, 2, "auto"):
                    times[load, threads] = _time(make, X, y, threads, args.repeats)
            finally:
                for proc in procs:
                    proc.kill()
        row = [name, estimator]
        for load in ("idle", "busy"):
            row += [f"{times[load, 1]:.3f}", f"{times[load, 2]:.3f}", f"{times[load, 'auto']:.3f}",
                    f"{times[load, 'auto'] / times[load, 1]:.2f}"]
        rows.append(row)
        print(" | ".join(row), flush=True)
    run.table("Fit time, seconds (median); auto / 1 thread under the same load",
              ["data", "estimator", "idle 1", "idle 2", "idle auto", "idle auto/1",
               "busy 1", "busy 2", "busy auto", "busy auto/1"], rows, key="threads")
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
