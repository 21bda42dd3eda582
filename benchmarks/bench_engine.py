"""Benchmark: the speed of skdp's training engine against the two-pass floor of its data.

For each data set (Adult; Fashion-MNIST, or a synthetic set of its shape when the files are
missing) everything runs in one process, with the same thread count for every contender:

- the *two-pass floor*: numpy's ``X @ W`` plus ``X.T @ R`` over the whole data (``W`` with one
  column per output), the least work one epoch of a linear model can do;
- skdp's per-epoch cost, DP and non-private: ``(t(E2) - t(E1)) / (E2 - E1)`` of two default
  fits differing only in ``max_iter``, calibration cached (each plan fitted once first);
- the same for ``DPMLPClassifier`` (its defaults), whose epochs must not get slower;
- scikit-learn: ``LogisticRegression`` (lbfgs) fit, ``SGDClassifier`` one epoch;
- Opacus DP-SGD (when importable), ``nn.Linear`` with skdp's batch size, clip and noise,
  Poisson sampling: time of one epoch;
- Adult only: skdp's default fit with calibration included (cache cleared) and warm, against
  scikit-learn's lbfgs fit.

Every time is the minimum over interleaved repeats (the usual estimate of the cost without
interference from other processes). Usage::

    python benchmarks/bench_engine.py                 # 1 thread, 5 repeats
    python benchmarks/bench_engine.py --quick         # 2 repeats, fewer epochs
    python benchmarks/bench_engine.py --threads 2
    python benchmarks/bench_engine.py --threads 0     # library defaults, as a new user runs

``--threads 0`` pins nothing: torch, numpy/BLAS and scikit-learn use their own defaults (on a
2-core machine two threads each), which is what a notebook gets.
"""

from __future__ import annotations

from harness.threads import pin_threads  # first: the thread counts before numpy loads

_THREADS = pin_threads(default=1)

import argparse  # noqa: E402
import contextlib  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from harness import cli, data  # noqa: E402
from harness.competitors import Opacus  # noqa: E402
from harness.results import Run, Study  # noqa: E402
from harness.timing import best_time, epoch_seconds  # noqa: E402
from sklearn.linear_model import LogisticRegression, SGDClassifier  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from skdp.accounting import calibrate  # noqa: E402
from skdp.linear_model import DPLogisticRegression  # noqa: E402
from skdp.neural_network import DPMLPClassifier  # noqa: E402

STUDY = Study(
    name="engine",
    title="Engine speed",
    script="benchmarks/bench_engine.py",
    measures="Per-epoch time of skdp's training engine (DPLogisticRegression DP and "
    "non-private, DPMLPClassifier DP) against the two-pass floor of the data (numpy's `X @ W` "
    "plus `X.T @ R`), scikit-learn's SGDClassifier epoch and lbfgs fit, and an Opacus DP-SGD "
    "epoch, on Adult and Fashion-MNIST; and the default Adult fit with and without the "
    "calibration, against lbfgs. Minima of interleaved repeats.",
    conclusion="An Adult DP epoch is 3.3-4.0x the two-pass floor and a Fashion-MNIST one "
    "1.1-1.3x; the default Adult fit with its calibration takes 0.18x scikit-learn's lbfgs "
    "with each library's default threads, 0.71x with everything pinned to one thread.",
)
DP = (1.0, 1e-5)
NON_PRIVATE = (float("inf"), 0.0)


def two_pass_floor(X: np.ndarray, n_outputs: int, repeats: int) -> float:
    """Seconds of numpy's ``X @ W`` plus ``X.T @ R`` over the whole data (float32)."""
    W = np.zeros((X.shape[1], n_outputs), dtype=np.float32)
    R = np.random.default_rng(0).random((X.shape[0], n_outputs), dtype=np.float32)
    if n_outputs == 1:
        W, R = W[:, 0], R[:, 0]
    return best_time(lambda: (X @ W, X.T @ R), max(repeats, 10))


def load_sets(args, run) -> list[tuple[str, str, np.ndarray, np.ndarray, int]]:
    """``(key, label, X float32, y, n_outputs)`` of each data set."""
    X, _, y, _ = data.load("adult")
    sets = [("adult", "Adult (32,561 x 105, binary)", np.ascontiguousarray(data.dense(X),
                                                                          dtype=np.float32),
             y, 1)]
    if "fashion_mnist" not in args.datasets:
        return sets
    try:
        if args.synthetic:
            raise data.DataMissing("--synthetic")
        X, _, y, _ = data.load("fashion_mnist")
        key, label = "fashion_mnist", "Fashion-MNIST (60,000 x 784, 10 classes)"
    except data.DataMissing as missing:
        run.note(f"Fashion-MNIST: synthetic data of its shape ({missing})")
        X, y = data.fashion_mnist_shaped()
        key = "fashion_mnist_shaped"
        label = "SYNTHETIC uniform data of Fashion-MNIST's shape (60,000 x 784, 10 classes)"
    sets.append((key, label, np.ascontiguousarray(X, dtype=np.float32), y, 10))
    return sets


def cold_and_warm_fit(X, y, repeats: int) -> tuple[float, float, float]:
    """Adult: skdp's default fit with calibration (cache cleared) and warm; sklearn lbfgs."""
    def cold():
        calibrate.cache_clear()
        DPLogisticRegression(privacy=DP, random_state=0).fit(X, y)

    def warm():
        DPLogisticRegression(privacy=DP, random_state=0).fit(X, y)

    def lbfgs():
        LogisticRegression(max_iter=1000).fit(X, y)

    times = {"cold": [], "warm": [], "lbfgs": []}
    for _ in range(repeats):  # interleaved, so that load hits all three alike
        times["cold"].append(best_time(cold, 1))
        times["warm"].append(best_time(warm, 1))
        times["lbfgs"].append(best_time(lbfgs, 1))
    return min(times["cold"]), min(times["warm"]), min(times["lbfgs"])


def bench_set(run, key, label, X, y, n_outputs, args, threads: str) -> None:
    quick = args.quick
    big = X.shape[0] * X.shape[1] > 10_000_000
    e1, e2 = (1, 3) if big else (5, 25)
    if quick:
        e1, e2 = (1, 2) if big else (5, 15)
    reps = args.repeats
    floor = two_pass_floor(X, n_outputs, reps)
    rows = []

    def row(name, seconds, note=""):
        if seconds is not None:
            rows.append([name, f"{seconds * 1e3:.2f}", f"{seconds / floor:.1f}x", note])

    def logistic(privacy):
        return lambda e: DPLogisticRegression(privacy=privacy, max_iter=e, random_state=0)

    row("two-pass floor (numpy X @ W + X.T @ R)", floor)
    fitted = DPLogisticRegression(privacy=DP, random_state=0).fit(X, y)
    steps = fitted.n_steps_ // fitted.n_iter_
    note = f"batch {fitted.batch_size_}, {steps} steps/epoch, E {e1} vs {e2}"
    row("skdp DPLogisticRegression, DP epoch", epoch_seconds(logistic(DP), X, y, e1, e2, reps),
        note)
    row("skdp DPLogisticRegression, non-private epoch",
        epoch_seconds(logistic(NON_PRIVATE), X, y, e1, e2, reps), note)
    m1, m2 = (1, 2) if big or quick else (2, 6)
    mlp = lambda e: DPMLPClassifier(privacy=DP, max_iter=e, random_state=0)  # noqa: E731
    row("skdp DPMLPClassifier (defaults), DP epoch",
        epoch_seconds(mlp, X, y, m1, m2, max(2, reps // 2)), f"E {m1} vs {m2}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sgd = best_time(lambda: SGDClassifier(max_iter=1, tol=None, random_state=0).fit(X, y),
                        reps)
        row("scikit-learn SGDClassifier, one epoch", sgd,
            "one-vs-rest: one pass per class" if n_outputs > 1 else "")
        iters = 1000 if not big else 100
        lbfgs = best_time(lambda: LogisticRegression(max_iter=iters).fit(X, y),
                          1 if big else reps)
        row(f"scikit-learn LogisticRegression(lbfgs, max_iter={iters}), whole fit", lbfgs)
    opacus = Opacus()
    if opacus.available:
        row("Opacus DP-SGD nn.Linear, DP epoch",
            opacus.epoch_seconds_linear(X, y, n_outputs=n_outputs,
                                        noise_multiplier=fitted.noise_multiplier_,
                                        batch_size=fitted.batch_size_,
                                        repeats=1 if big else max(2, reps // 2)),
            "same batch, clip, noise; Poisson")
    notes = threads
    if n_outputs == 1:
        cold, warm, lbfgs = cold_and_warm_fit(X, y, reps)
        rows.append([f"default fit at epsilon 1 ({fitted.n_steps_} steps), calibration "
                     "included / warm", f"{cold * 1e3:.1f} / {warm * 1e3:.1f}", "",
                     f"{cold / lbfgs:.2f}x / {warm / lbfgs:.2f}x lbfgs ({lbfgs * 1e3:.1f} ms)"])
    threads_key = "default" if not args.threads else str(args.threads)
    run.table(f"{label}, threads: {threads_key}", ["run", "ms", "x floor", "notes"], rows,
              key=f"{key}|threads={threads_key}", notes=notes)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of torch, numpy/BLAS and scikit-learn (all contenders); "
                             "0: each library's default")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 repeats, fewer epochs")
    parser.add_argument("--datasets", nargs="+", default=["adult", "fashion_mnist"],
                        choices=["adult", "fashion_mnist"])
    parser.add_argument("--synthetic", action="store_true",
                        help="use synthetic data of Fashion-MNIST's shape even if the files exist")
    cli.add_common_arguments(parser, threads=False)
    args = parser.parse_args(argv)
    cli.setup(args)
    if args.quick:
        args.repeats = 2
    if args.threads:
        torch.set_num_threads(args.threads)
        threads = (f"Threads: {args.threads} for torch, numpy/BLAS and scikit-learn "
                   "(every contender).")
        limits = threadpool_limits(args.threads)
    else:
        threads = (f"Threads: each library's default (torch {torch.get_num_threads()}; "
                   "numpy/BLAS and scikit-learn unpinned), as a new user runs.")
        limits = contextlib.nullcontext()
    run = Run(STUDY, args, results=args.results)
    run.header([f"{threads} Times are minima over interleaved repeats; 'x floor' divides by "
                "the two-pass floor measured in the same process."])
    with limits:
        for key, label, X, y, n_outputs in load_sets(args, run):
            bench_set(run, key, label, X, y, n_outputs, args, threads)
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
