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

import argparse
import contextlib
import sys

from _threads import pin_threads  # first: it sets the thread counts before numpy loads

_THREADS = pin_threads(default=1)

import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.linear_model import LogisticRegression, SGDClassifier  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bench_common as bench  # noqa: E402
import _datasets  # noqa: E402

from skdp.accounting import calibrate  # noqa: E402
from skdp.linear_model import DPLogisticRegression  # noqa: E402
from skdp.neural_network import DPMLPClassifier  # noqa: E402

DP = (1.0, 1e-5)
NON_PRIVATE = (float("inf"), 0.0)


def best_time(fn, repeats: int) -> float:
    """Minimum wall time of ``fn()`` over ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def two_pass_floor(X: np.ndarray, n_outputs: int, repeats: int) -> float:
    """Seconds of numpy's ``X @ W`` plus ``X.T @ R`` over the whole data (float32)."""
    W = np.zeros((X.shape[1], n_outputs), dtype=np.float32)
    R = np.random.default_rng(0).random((X.shape[0], n_outputs), dtype=np.float32)
    if n_outputs == 1:
        W, R = W[:, 0], R[:, 0]
    return best_time(lambda: (X @ W, X.T @ R), max(repeats, 10))


def opacus_epoch(X, y, n_outputs: int, fitted, repeats: int) -> float | None:
    """Seconds of one Opacus DP-SGD epoch of ``nn.Linear`` configured like ``fitted``."""
    try:
        from opacus import PrivacyEngine
    except Exception as exc:  # noqa: BLE001 - any import failure means "skip"
        print(f"NOTE: opacus is not importable ({type(exc).__name__}: {exc}); skipped.")
        return None
    from torch.utils.data import DataLoader, TensorDataset

    n = X.shape[0]
    steps = max(1, round(n / fitted.batch_size_))
    X_t = torch.as_tensor(X, dtype=torch.float32)
    if n_outputs == 1:
        y_t = torch.as_tensor(y, dtype=torch.float32)
        criterion = torch.nn.BCEWithLogitsLoss()

        def loss_fn(out, target):
            return criterion(out.squeeze(1), target)
    else:
        y_t = torch.as_tensor(y, dtype=torch.int64)
        loss_fn = torch.nn.CrossEntropyLoss()
    torch.manual_seed(0)
    model = torch.nn.Linear(X.shape[1], n_outputs)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(X_t, y_t),
                        batch_size=bench.opacus_loader_batch_size(n, steps))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, optimizer, loader = PrivacyEngine(accountant="prv").make_private(
            module=model, optimizer=optimizer, data_loader=loader,
            noise_multiplier=fitted.noise_multiplier_, max_grad_norm=1.0,
            poisson_sampling=True,
        )

    def one_epoch():
        with warnings.catch_warnings():  # Opacus' hook warns at every step
            warnings.simplefilter("ignore")
            for xb, yb in loader:
                optimizer.zero_grad(set_to_none=True)
                loss_fn(model(xb), yb).backward()
                optimizer.step()

    one_epoch()  # warm-up
    return best_time(one_epoch, repeats)


def load_sets(args) -> list[tuple[str, np.ndarray, np.ndarray, int]]:
    """``(label, X float32, y, n_outputs)`` of each data set."""
    X, _, y, _ = _datasets.adult()
    sets = [("Adult (32,561 x 105, binary)", np.ascontiguousarray(X, dtype=np.float32), y, 1)]
    fashion = Path(args.fashion_mnist_dir or _datasets.DEFAULT_FASHION_MNIST_DIR)
    if fashion.is_dir() and not args.synthetic:
        X, _, y, _ = _datasets.fashion_mnist(fashion)
        label = "Fashion-MNIST (60,000 x 784, 10 classes)"
    else:
        rng = np.random.default_rng(0)
        X = rng.random((60_000, 784), dtype=np.float32)
        y = rng.integers(0, 10, 60_000)
        label = "SYNTHETIC uniform data of Fashion-MNIST's shape (60,000 x 784, 10 classes)"
    sets.append((label, np.ascontiguousarray(X, dtype=np.float32), y, 10))
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


def bench_set(label, X, y, n_outputs, args) -> None:
    quick = args.quick
    big = X.shape[0] * X.shape[1] > 10_000_000
    e1, e2 = (1, 3) if big else (5, 25)
    if quick:
        e1, e2 = (1, 2) if big else (5, 15)
    reps = args.repeats
    floor = two_pass_floor(X, n_outputs, reps)
    print(f"\n## {label}\n")
    print(f"Two-pass floor (numpy X @ W + X.T @ R, {n_outputs} output(s)): "
          f"{floor * 1e3:.2f} ms\n")
    rows = []

    def row(name, seconds, note=""):
        if seconds is None:
            return
        rows.append([name, f"{seconds * 1e3:.2f}", f"{seconds / floor:.1f}x", note])

    def logistic(privacy):
        return lambda e: DPLogisticRegression(privacy=privacy, max_iter=e, random_state=0)

    fitted = DPLogisticRegression(privacy=DP, random_state=0).fit(X, y)
    steps = fitted.n_steps_ // fitted.n_iter_
    note = f"batch {fitted.batch_size_}, {steps} steps/epoch, E {e1} vs {e2}"
    dp_epoch = bench.epoch_seconds(logistic(DP), X, y, e1, e2, reps)
    row("skdp DPLogisticRegression, DP epoch", dp_epoch, note)
    row("skdp DPLogisticRegression, non-private epoch",
        bench.epoch_seconds(logistic(NON_PRIVATE), X, y, e1, e2, reps), note)
    m1, m2 = (1, 2) if big or quick else (2, 6)
    mlp = lambda e: DPMLPClassifier(privacy=DP, max_iter=e, random_state=0)  # noqa: E731
    row("skdp DPMLPClassifier (defaults), DP epoch",
        bench.epoch_seconds(mlp, X, y, m1, m2, max(2, reps // 2)), f"E {m1} vs {m2}")
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
    row("Opacus DP-SGD nn.Linear, DP epoch",
        opacus_epoch(X, y, n_outputs, fitted, 1 if big else max(2, reps // 2)),
        "same batch, clip, noise; Poisson")
    print(bench.markdown_table(["run", "ms", "x floor", "notes"], rows))
    if n_outputs == 1:
        cold, warm, lbfgs = cold_and_warm_fit(X, y, reps)
        print(f"\nDefault DPLogisticRegression fit at eps=1 ({fitted.n_steps_} steps): "
              f"{cold * 1e3:.1f} ms with calibration ({cold / lbfgs:.2f}x lbfgs), "
              f"{warm * 1e3:.1f} ms warm ({warm / lbfgs:.2f}x lbfgs); "
              f"scikit-learn lbfgs {lbfgs * 1e3:.1f} ms.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of torch, numpy/BLAS and scikit-learn (all contenders); "
                             "0: each library's default")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 repeats, fewer epochs")
    parser.add_argument("--fashion-mnist-dir", default=None)
    parser.add_argument("--synthetic", action="store_true",
                        help="use synthetic data of Fashion-MNIST's shape even if the files exist")
    args = parser.parse_args(argv)
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
    bench.print_header(
        "skdp engine speed: per-epoch time against the two-pass floor",
        [f"{threads} Times are minima over interleaved repeats; 'x floor' divides by the "
         "two-pass floor measured in the same process."],
    )
    with limits:
        for label, X, y, n_outputs in load_sets(args):
            bench_set(label, X, y, n_outputs, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
