"""Shared helpers of the skdp benchmark scripts (not a test module, not part of the package).

Everything here is plain bookkeeping: the environment header, timing, markdown tables, an
Opacus DP-SGD trainer configured like skdp's engine, the per-epoch cost of skdp's engine, and
the side-by-side driver (``run_comparison``) shared by the Adult and diamonds benchmarks.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import shlex
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

DELTA = 1e-5


# --------------------------------------------------------------------------------------------
# Optional competitors
# --------------------------------------------------------------------------------------------
def try_import(name: str):
    """Import a competitor, or return ``None`` and say why (its column is then skipped)."""
    try:
        module = __import__(name)
        __import__(f"{name}.models" if name == "diffprivlib" else name)
    except Exception as exc:  # noqa: BLE001 - any import failure means "skip this column"
        print(f"NOTE: {name} is not importable ({type(exc).__name__}: {exc}); "
              f"its column is skipped.\n")
        return None
    return module


# --------------------------------------------------------------------------------------------
# Header
# --------------------------------------------------------------------------------------------
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    try:
        return "/".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def _version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001
        return "not installed"


def skdp_code_version() -> str:
    """Git commit of the skdp checkout and whether skdp/ has uncommitted changes."""
    import subprocess

    import skdp

    root = Path(skdp.__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "skdp"],
                               capture_output=True, text=True, check=True).stdout.split("\n")
        changed = [line[3:] for line in dirty if line.strip()]
    except (OSError, subprocess.CalledProcessError):
        return f"{root} (not a git checkout)"
    state = f"uncommitted changes in {', '.join(changed)}" if changed else "clean"
    return f"{root} at commit {head} ({state})"


def print_header(title: str, description: Sequence[str]) -> None:
    command = shlex.join([sys.executable, *sys.argv])
    print(f"# {title}\n")
    print(f"Command: `{command}`  ")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}  ")
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical cores visible), "
          f"torch.get_num_threads() = {torch.get_num_threads()}  ")
    print(f"skdp code: {skdp_code_version()}  ")
    print(f"Load average at start (1/5/15 min): {load_average()} -- other processes on this "
          "machine inflate wall times; ratios are taken between fits of the same run.  ")
    print(f"Python {platform.python_version()}; " + ", ".join(
        f"{name} {_version(name)}"
        for name in ("skdp", "torch", "opacus", "scikit-learn", "diffprivlib", "numpy",
                     "dp-accounting")
    ) + "\n")
    for line in description:
        print(line)
    print(flush=True)


# --------------------------------------------------------------------------------------------
# Small utilities
# --------------------------------------------------------------------------------------------
@contextlib.contextmanager
def collect_warnings(store: dict[str, int], tag: str) -> Iterator[None]:
    """Silence warnings inside the block but count them (printed once at the end)."""
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


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def _num(value: float, digits: int) -> str:
    return f"{value:.3g}" if abs(value) >= 1e4 else f"{value:.{digits}f}"


def mean_std(values: Sequence[float], digits: int = 4, scale: float = 1.0,
             median: bool = False) -> str:
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return "n/a"
    arr = np.asarray(values, dtype=float) * scale
    if arr.size == 1:
        return _num(arr[0], digits)
    out = f"{_num(arr.mean(), digits)} ± {_num(arr.std(ddof=1), digits)}"
    if median:
        out += f" (median {_num(float(np.median(arr)), digits)})"
    return out


def mean_min(values: Sequence[float], digits: int = 3) -> str:
    """``mean (min)`` of timings: the min is the estimate least affected by other load."""
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return "n/a"
    return f"{np.mean(values):.{digits}f} ({min(values):.{digits}f})"


def min_or_nan(values: Sequence[float]) -> float:
    values = [v for v in values if v is not None and not math.isnan(v)]
    return float(min(values)) if values else float("nan")


def mean_or_nan(values: Sequence[float]) -> float:
    values = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.mean(values)) if values else float("nan")


def fmt(value: float, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def ratio(num: float, den: float, digits: int = 1) -> str:
    if any(v is None or math.isnan(v) for v in (num, den)) or den == 0:
        return "n/a"
    return f"{num / den:.{digits}f}x"


def paired_cell(values: Sequence[float], base: Sequence[float] | None = None) -> str:
    """``mean ± std`` over seeds, and ``(+diff)``, the mean paired difference to ``base``
    (the same seeds), when a baseline is given."""
    values = np.asarray(values, dtype=float)
    cell = f"{values.mean():.4f} ± {values.std(ddof=1) if values.size > 1 else 0:.4f}"
    if base is not None:
        cell += f" ({(values - np.asarray(base, dtype=float)).mean():+.4f})"
    return cell


def add_threads_argument(parser: argparse.ArgumentParser) -> None:
    """``--threads N``: torch.set_num_threads, for accuracy-only scripts on shared cores."""
    parser.add_argument("--threads", type=int, default=None,
                        help="torch.set_num_threads (1 helps when other jobs share the cores; "
                             "this script measures accuracy only)")


def apply_threads(args: argparse.Namespace) -> None:
    if args.threads:
        torch.set_num_threads(args.threads)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    cells = [list(map(str, headers))] + [list(map(str, row)) for row in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for row in cells[1:]:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Opacus DP-SGD, configured like skdp's engine
# --------------------------------------------------------------------------------------------
@dataclass
class OpacusResult:
    model: torch.nn.Linear
    fit_time: float  # make_private_with_epsilon + training loop (tensor conversion included)
    make_private_time: float  # noise calibration and wrapping
    epsilon: float  # engine.get_epsilon(delta) after training
    noise_multiplier: float
    sample_rate: float
    n_steps: int
    extra: dict = field(default_factory=dict)

    def predict_logits(self, X: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            layer = self.model._module if hasattr(self.model, "_module") else self.model
            out = layer(torch.as_tensor(X, dtype=torch.float32)).squeeze(1)
        return out.numpy().astype(np.float64)


def opacus_loader_batch_size(n_samples: int, steps_per_epoch: int) -> int:
    """Loader batch size whose ``len(loader)`` equals ``steps_per_epoch``.

    Opacus' Poisson loader uses ``sample_rate = 1 / len(loader) = 1 / ceil(n / batch_size)``.
    skdp runs ``round(n / B)`` steps per epoch with ``q = B / n``; choosing the loader batch
    size ``ceil(n / steps)`` gives Opacus the same number of steps and (up to rounding of B)
    the same sampling rate and expected batch size.
    """
    return math.ceil(n_samples / steps_per_epoch)


def fit_opacus(
    X: np.ndarray,
    y: np.ndarray,
    *,
    loss: str,
    epochs: int,
    loader_batch_size: int,
    max_grad_norm: float,
    lr: float,
    l2: float,
    epsilon: float,
    delta: float,
    seed: int,
) -> OpacusResult:
    """Train ``nn.Linear(d, 1)`` with Opacus DP-SGD (Poisson sampling, PRV accountant).

    ``loss='logistic'``: BCEWithLogitsLoss (mean). ``loss='half_squared'``: ``0.5 * MSELoss``
    (mean), whose per-example gradient is ``residual * [x, 1]`` like skdp's squared loss.
    The L2 penalty ``(l2 / 2) ||w||^2`` (weights only) is applied as SGD ``weight_decay=l2`` on
    the weight's parameter group: Opacus' DPOptimizer writes the noisy clipped mean into ``.grad``
    and then calls the wrapped SGD step, which adds ``l2 * w`` after the noise, exactly where
    skdp adds it. The weights start at zero, as in skdp.
    """
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    start = time.perf_counter()
    torch.manual_seed(seed)  # Opacus' Poisson sampler and noise use the global torch RNG
    X_t = torch.as_tensor(X, dtype=torch.float32)
    y_t = torch.as_tensor(y, dtype=torch.float32)
    model = torch.nn.Linear(X.shape[1], 1)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    optimizer = torch.optim.SGD(
        [{"params": [model.weight], "weight_decay": l2},
         {"params": [model.bias], "weight_decay": 0.0}],
        lr=lr,
    )
    if loss == "logistic":
        criterion = torch.nn.BCEWithLogitsLoss(reduction="mean")

        def loss_fn(out, target):
            return criterion(out, target)
    elif loss == "half_squared":
        criterion = torch.nn.MSELoss(reduction="mean")

        def loss_fn(out, target):
            return 0.5 * criterion(out, target)
    else:  # pragma: no cover
        raise ValueError(loss)
    loader = DataLoader(TensorDataset(X_t, y_t), batch_size=loader_batch_size)
    engine = PrivacyEngine(accountant="prv")
    t0 = time.perf_counter()
    model, optimizer, loader = engine.make_private_with_epsilon(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        target_epsilon=epsilon,
        target_delta=delta,
        epochs=epochs,
        max_grad_norm=max_grad_norm,
        poisson_sampling=True,
    )
    make_private_time = time.perf_counter() - t0
    n_steps = 0
    model.train()
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad(set_to_none=True)
            out = model(xb).squeeze(1)
            loss_fn(out, yb).backward()
            optimizer.step()
            n_steps += 1
    fit_time = time.perf_counter() - start
    return OpacusResult(
        model=model,
        fit_time=fit_time,
        make_private_time=make_private_time,
        epsilon=float(engine.get_epsilon(delta)),
        noise_multiplier=float(optimizer.noise_multiplier),
        sample_rate=float(loader.sample_rate),
        n_steps=n_steps,
        extra={"expected_batch_size": optimizer.expected_batch_size},
    )


# --------------------------------------------------------------------------------------------
# skdp engine: cost of one epoch, DP vs non-private, calibration excluded
# --------------------------------------------------------------------------------------------
def epoch_seconds(make, X, y, e_short: int, e_long: int, repeats: int) -> float:
    """Seconds per epoch of ``make(max_iter)``: ``(t(e_long) - t(e_short)) / (e_long -
    e_short)``, calibration warm (each plan fitted once first), the two fits interleaved and each
    time the minimum over ``repeats``."""
    for epochs in (e_short, e_long):
        make(epochs).fit(X, y)  # calibrates (cached) and warms up
    times = {e_short: [], e_long: []}
    for _ in range(repeats):
        for epochs in (e_short, e_long):
            est = make(epochs)
            _, t = timed(lambda est=est: est.fit(X, y))
            times[epochs].append(t)
    return (min(times[e_long]) - min(times[e_short])) / (e_long - e_short)


def skdp_epoch_cost(make_estimator, X, y, *, repeats: int = 5, e_short: int = 20,
                    e_long: int = 40) -> dict[str, float]:
    """Seconds per epoch = (t(e_long) - t(e_short)) / (e_long - e_short).

    ``make_estimator(privacy, max_iter)`` returns an unfitted estimator. Every plan is fitted
    once first so that the (lru-cached) calibration is warm; the difference of the two timed
    fits cancels the remaining fixed cost (validation, tensor conversion, scales). DP and
    non-private fits are interleaved within each repeat, so that load from other processes
    hits both alike, and the minimum over repeats is kept (the usual estimator of the cost
    without interference).
    """
    runs = {"dp": (1.0, DELTA), "nonprivate": (float("inf"), 0.0)}
    for privacy in runs.values():
        for max_iter in (e_short, e_long):
            make_estimator(privacy, max_iter).fit(X, y)  # warm the calibration cache
    totals = {(label, e): [] for label in runs for e in (e_short, e_long)}
    for _ in range(repeats):
        for label, privacy in runs.items():
            for max_iter in (e_short, e_long):
                est = make_estimator(privacy, max_iter)
                _, t = timed(lambda est=est: est.fit(X, y))
                totals[label, max_iter].append(t)
    out = {"repeats": repeats, "e_short": e_short, "e_long": e_long}
    for label in runs:
        t_short, t_long = min(totals[label, e_short]), min(totals[label, e_long])
        out[f"{label}_t_short"], out[f"{label}_t_long"] = t_short, t_long
        out[f"{label}_epoch"] = (t_long - t_short) / (e_long - e_short)
    return out


def report_epoch_cost(make_estimator, X, y, batch_size: int,
                      n_steps_per_epoch: int) -> tuple[float, float]:
    """Measure and print the per-epoch cost, DP vs non-private; return both ratios.

    The asked-for estimate uses max_iter 20 vs 40 (7 repeats). The difference of two fits of
    about 0.1 s is fragile on a shared 2-core machine, so a second estimate uses 20 vs 120
    epochs (3 repeats), six times the signal for the same noise.
    """
    costs = [skdp_epoch_cost(make_estimator, X, y, repeats=7, e_short=20, e_long=40),
             skdp_epoch_cost(make_estimator, X, y, repeats=3, e_short=20, e_long=120)]
    print("\n## skdp engine: cost of one epoch, DP vs non-private (calibration excluded)\n")
    print(f"Same estimator, batch_size={batch_size} ({n_steps_per_epoch} steps/epoch); "
          f"privacy=(1.0, {DELTA:g}) vs privacy=(inf, 0). Time per epoch = "
          "(t(max_iter=E2) - t(max_iter=E1)) / (E2 - E1), each t the minimum of the interleaved "
          "repeats, after a warm-up fit of each plan (calibration is lru-cached, so it is "
          "excluded). E1=20, E2=40 is the asked-for estimate; E2=120 is a steadier check.\n")
    rows, ratios = [], []
    for cost in costs:
        for label, name in (("dp", "DP (clip + noise)"), ("nonprivate", "non-private")):
            rows.append([f"{cost['e_short']} vs {cost['e_long']}", str(cost["repeats"]), name,
                         fmt(cost[f"{label}_t_short"], 3), fmt(cost[f"{label}_t_long"], 3),
                         fmt(cost[f"{label}_epoch"] * 1e3, 2)])
        if cost["dp_epoch"] <= 0 or cost["nonprivate_epoch"] <= 0:
            ratios.append(float("nan"))
        else:
            ratios.append(cost["dp_epoch"] / cost["nonprivate_epoch"])
    print(markdown_table(["E1 vs E2", "repeats", "run", "fit s (E1)", "fit s (E2)",
                          "ms / epoch"], rows))
    for cost, r in zip(costs, ratios, strict=True):
        text = (f"{r:.2f}x" if not math.isnan(r) else
                "n/a (non-positive estimate: other load dominated; re-run on a quieter machine)")
        print(f"\nDP epoch / non-private epoch ({cost['e_short']} vs {cost['e_long']} epochs) "
              f"= {text}")
    return ratios[0], ratios[1]


# --------------------------------------------------------------------------------------------
# diffprivlib, with a compatibility shim for scikit-learn >= 1.8
# --------------------------------------------------------------------------------------------
@dataclass
class Diffprivlib:
    LogisticRegression: type
    LinearRegression: type
    notes: list[str]


def import_diffprivlib() -> Diffprivlib | None:
    """Import diffprivlib's LogisticRegression and LinearRegression, or return ``None``.

    diffprivlib 0.6.6 predates scikit-learn 1.8: (1) its package ``__init__`` imports its tree
    models, which import ``DOUBLE`` and ``DTYPE`` from ``sklearn.tree._tree`` (removed); (2) its
    ``LogisticRegression.__init__`` passes ``multi_class='ovr'`` to scikit-learn's (removed).
    Both are bookkeeping, not the DP algorithm, so when (and only when) they fail this function
    (1) restores the two old constants (``np.float64`` and ``np.float32``; used only by the tree
    models, which are not benchmarked) and (2) subclasses diffprivlib's LogisticRegression with an
    ``__init__`` that sets the same attributes without ``multi_class``. ``fit`` (clipping to
    ``data_norm``, objective perturbation, L-BFGS) is diffprivlib's own, unchanged. Binary
    problems only need the ``'ovr'`` path that diffprivlib's ``fit`` hard-codes anyway.
    """
    notes: list[str] = []
    try:
        import diffprivlib.models as dm
    except ImportError as exc:
        if "sklearn.tree._tree" not in str(exc):
            print(f"NOTE: diffprivlib is not importable ({exc}); its column is skipped.\n")
            return None
        import sklearn.tree._tree as sk_tree

        for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
            if not hasattr(sk_tree, name):
                setattr(sk_tree, name, value)
        for mod in [m for m in sys.modules if m == "diffprivlib" or m.startswith("diffprivlib.")]:
            del sys.modules[mod]
        try:
            import diffprivlib.models as dm
        except Exception as exc2:  # noqa: BLE001
            print(f"NOTE: diffprivlib is not importable ({exc2}); its column is skipped.\n")
            return None
        notes.append(
            "diffprivlib 0.6.6 fails to import with this scikit-learn (sklearn.tree._tree no "
            "longer has DOUBLE/DTYPE); the benchmark restored those two constants (used only by "
            "diffprivlib's tree models, not benchmarked)."
        )
    except Exception as exc:  # noqa: BLE001
        print(f"NOTE: diffprivlib is not importable ({exc}); its column is skipped.\n")
        return None

    logistic = dm.LogisticRegression
    try:
        logistic(epsilon=1.0, data_norm=1.0)
    except TypeError as exc:
        if "multi_class" not in str(exc):
            raise
        from diffprivlib.accountant import BudgetAccountant
        from sklearn import linear_model

        class CompatLogisticRegression(dm.LogisticRegression):
            """diffprivlib's LogisticRegression with an __init__ scikit-learn >= 1.8 accepts."""

            def __init__(self, *, epsilon=1.0, data_norm=None, tol=1e-4, C=1.0,
                         fit_intercept=True, max_iter=100, verbose=0, warm_start=False,
                         n_jobs=None, random_state=None, accountant=None):
                linear_model.LogisticRegression.__init__(
                    self, C=C, dual=False, tol=tol, fit_intercept=fit_intercept,
                    intercept_scaling=1.0, class_weight=None, random_state=random_state,
                    solver="lbfgs", max_iter=max_iter, verbose=verbose, warm_start=warm_start,
                    n_jobs=n_jobs,
                )
                self.epsilon = epsilon
                self.data_norm = data_norm
                self.classes_ = None
                self.accountant = BudgetAccountant.load_default(accountant)

        logistic = CompatLogisticRegression
        notes.append(
            "diffprivlib 0.6.6's LogisticRegression.__init__ passes multi_class='ovr', which this "
            "scikit-learn rejects; the benchmark uses a subclass whose __init__ sets the same "
            "attributes without it (fit is diffprivlib's, unchanged)."
        )
    return Diffprivlib(logistic, dm.LinearRegression, notes)


# --------------------------------------------------------------------------------------------
# Side-by-side driver: skdp vs Opacus vs diffprivlib vs scikit-learn on one task
# --------------------------------------------------------------------------------------------
EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)


def parse_args(description: str, argv=None) -> argparse.Namespace:
    """Command line shared by the side-by-side benchmarks."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seeds", type=int, default=5, help="seeds for skdp and diffprivlib")
    parser.add_argument("--opacus-seeds", type=int, default=2,
                        help="seeds for Opacus (the first ones of --seeds; Opacus is slow)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: one seed, eps=1 only")
    parser.add_argument("--skip-epoch-cost", action="store_true",
                        help="do not measure skdp's per-epoch cost")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.opacus_seeds, args.epsilons = 1, 1, [1.0]
    args.opacus_seeds = min(args.opacus_seeds, args.seeds)
    return args


def seed_lists(args: argparse.Namespace) -> tuple[list[int], list[int]]:
    """Seeds of skdp and diffprivlib, and the first ones of them that Opacus runs."""
    seeds = list(range(args.seeds))
    return seeds, seeds[: args.opacus_seeds]


def protocol_lines(args: argparse.Namespace) -> list[str]:
    """Header lines on epsilons and seeds, the same in every side-by-side benchmark."""
    seeds, opacus_seeds = seed_lists(args)
    return [
        f"Epsilons: {args.epsilons}, delta = {DELTA:g} (diffprivlib: delta = 0, pure eps-DP).",
        f"Seeds: skdp and diffprivlib {seeds}; Opacus {opacus_seeds} only "
        f"(--opacus-seeds={args.opacus_seeds}: Opacus is much slower); scikit-learn is "
        "deterministic (timed over the same number of repetitions as --seeds).",
    ]


@dataclass
class ComparisonTask:
    """What :func:`run_comparison` needs to know about one data set and model family."""

    skdp_class: type  # the skdp estimator, built with its defaults (plus privacy, seed)
    sklearn_name: str  # printed, e.g. "Ridge(alpha=1.0)"
    make_sklearn: Callable[[], object]  # the non-private reference, unfitted
    make_diffprivlib: Callable[[Diffprivlib, float, int], object]  # (dpl, eps, seed), unfitted
    opacus_loss: str  # ``loss`` of :func:`fit_opacus`
    opacus_l2: Callable[[object, int], float]  # (fitted skdp estimator, n) -> weight decay
    opacus_score: Callable[[np.ndarray, np.ndarray], float]  # (test outputs, y_test) -> score
    metric: str  # "accuracy" or "R^2": the score of the estimators' ``score``
    eps1_check: Callable[[float], tuple[str, bool]]  # (sklearn - skdp score at eps=1) -> target
    diff_scale: float = 1.0  # score differences are printed times this,
    diff_digits: int = 4  # with this many decimals,
    diff_unit: str = ""  # in this unit (e.g. "points")
    dpl_stats: dict = field(default_factory=dict)  # mean_std options of the diffprivlib column
    sklearn_time_digits: int = 3
    sklearn_extra: Callable[[object], str] = lambda sk: ""  # appended to the sklearn line


def run_comparison(task: ComparisonTask, args: argparse.Namespace, X_train, y_train, X_test,
                   y_test, opacus, dpl: Diffprivlib | None) -> int:
    """Fit every competitor for every epsilon and seed; print the tables and the targets.

    Called after the script has printed its header and data-specific notes. It also measures
    the per-epoch cost of skdp's engine, DP vs non-private, calibration excluded (unless
    ``--skip-epoch-cost``).
    """
    from skdp.accounting import calibrate

    seeds, opacus_seeds = seed_lists(args)
    n = X_train.shape[0]
    skdp_class = task.skdp_class
    unit = f", {task.diff_unit}" if task.diff_unit else ""
    for note in (dpl.notes if dpl else []):
        print(f"\nNOTE: {note}")
    print(flush=True)

    caught: dict[str, int] = {}

    # scikit-learn reference --------------------------------------------------------------
    sk_times = []
    for _ in seeds:
        with collect_warnings(caught, "sklearn"):
            sk, t = timed(lambda: task.make_sklearn().fit(X_train, y_train))
        sk_times.append(t)
    sk_score = sk.score(X_test, y_test)
    sk_time = mean_or_nan(sk_times)
    print(f"scikit-learn {task.sklearn_name}: test {task.metric} {sk_score:.4f}, "
          f"fit {sk_time:.{task.sklearn_time_digits}f} s (mean of {len(sk_times)})"
          f"{task.sklearn_extra(sk)}\n", flush=True)

    results = {}
    config_rows = []
    for eps in args.epsilons:
        r = {key: [] for key in ("skdp_score", "skdp_last_score", "skdp_time", "skdp_warm_time",
                                 "skdp_eps", "opacus_score", "opacus_time", "opacus_mp_time",
                                 "opacus_eps", "dpl_score", "dpl_time", "paired_diff")}
        skdp_by_seed = {}
        for seed in seeds:
            calibrate.cache_clear()
            est = skdp_class(privacy=(eps, DELTA), random_state=seed)
            with collect_warnings(caught, "skdp"):
                _, t = timed(lambda est=est: est.fit(X_train, y_train))
            r["skdp_time"].append(t)
            score = est.score(X_test, y_test)
            r["skdp_score"].append(score)
            skdp_by_seed[seed] = score
            r["skdp_eps"].append(est.privacy_spent_[0])
            warm = skdp_class(privacy=(eps, DELTA), random_state=seed)
            with collect_warnings(caught, "skdp"):
                _, t = timed(lambda warm=warm: warm.fit(X_train, y_train))
            r["skdp_warm_time"].append(t)
            last = skdp_class(privacy=(eps, DELTA), random_state=seed, average=False)
            with collect_warnings(caught, "skdp"):
                last.fit(X_train, y_train)
            r["skdp_last_score"].append(last.score(X_test, y_test))
        steps_per_epoch = est.n_steps_ // est.n_iter_
        r["skdp_sigma"] = est.noise_multiplier_

        if opacus is not None:
            for seed in opacus_seeds:
                with collect_warnings(caught, "opacus"):
                    res = fit_opacus(
                        X_train, y_train, loss=task.opacus_loss, epochs=est.n_iter_,
                        loader_batch_size=opacus_loader_batch_size(n, steps_per_epoch),
                        max_grad_norm=est.max_grad_norm, lr=est.eta0,
                        l2=task.opacus_l2(est, n), epsilon=eps, delta=DELTA, seed=seed,
                    )
                score = task.opacus_score(res.predict_logits(X_test), y_test)
                r["opacus_score"].append(score)
                r["paired_diff"].append(skdp_by_seed[seed] - score)
                r["opacus_time"].append(res.fit_time)
                r["opacus_mp_time"].append(res.make_private_time)
                r["opacus_eps"].append(res.epsilon)
            r["opacus_sigma"] = res.noise_multiplier
            config_rows.append([
                fmt(eps, 2), str(est.n_iter_), str(est.batch_size_),
                f"{est.batch_size_ / n:.5f}", str(est.n_steps_), fmt(est.max_grad_norm, 2),
                fmt(est.eta0, 2), f"{res.sample_rate:.5f}",
                f"{res.sample_rate * n:.1f}", str(res.n_steps),
            ])

        if dpl is not None:
            for seed in seeds:
                model = task.make_diffprivlib(dpl, eps, seed)
                with collect_warnings(caught, "diffprivlib"):
                    _, t = timed(lambda model=model: model.fit(X_train, y_train))
                r["dpl_time"].append(t)
                r["dpl_score"].append(model.score(X_test, y_test))
        r["load"] = load_average()
        results[eps] = r
        print(f"eps={eps:g}: skdp {mean_std(r['skdp_score'])} "
              f"({mean_or_nan(r['skdp_time']):.2f} s), Opacus {mean_std(r['opacus_score'])} "
              f"({mean_or_nan(r['opacus_time']):.2f} s), diffprivlib "
              f"{mean_std(r['dpl_score'])}; load average {r['load']}", flush=True)

    # Tables ------------------------------------------------------------------------------
    print("\n## Configuration shared by skdp and Opacus (read from the fitted skdp estimator)\n")
    print(markdown_table(
        ["eps", "epochs", "skdp B", "skdp q", "skdp steps", "clip", "lr", "Opacus q",
         "Opacus E[batch]", "Opacus steps"], config_rows) if config_rows else "(Opacus skipped)")

    print(f"\n## Test {task.metric} (mean ± std over seeds)\n")
    rows = []
    for eps, r in results.items():
        gap = (sk_score - mean_or_nan(r["skdp_score"])) * task.diff_scale
        rows.append([
            fmt(eps, 2), mean_std(r["skdp_score"]), mean_std(r["skdp_last_score"]),
            mean_std(r["opacus_score"]), mean_std(r["dpl_score"], **task.dpl_stats),
            f"{sk_score:.4f}",
            mean_std(r["paired_diff"], scale=task.diff_scale, digits=task.diff_digits),
            f"{gap:.{task.diff_digits}f}",
        ])
    print(markdown_table(
        ["eps", f"skdp (n={len(seeds)})", "skdp last iterate (average=False)",
         f"Opacus (n={len(opacus_seeds)})", f"diffprivlib (n={len(seeds)}, delta=0)",
         "sklearn (non-private)", f"skdp - Opacus{unit} (paired seeds)",
         f"sklearn - skdp{unit}"], rows))

    print("\n## Fit wall time, seconds: mean over seeds (min over seeds)\n")
    print("Ratios use the means (as asked) and, in brackets, the mins, which are the least "
          "affected by other processes on the machine (see the load column).\n")
    rows = []
    for eps, r in results.items():
        skdp_t, op_t = mean_or_nan(r["skdp_time"]), mean_or_nan(r["opacus_time"])
        skdp_m, op_m = min_or_nan(r["skdp_time"]), min_or_nan(r["opacus_time"])
        rows.append([
            fmt(eps, 2), mean_min(r["skdp_time"]), mean_min(r["skdp_warm_time"]),
            mean_min(r["opacus_time"], 2), fmt(mean_or_nan(r["opacus_mp_time"]), 2),
            mean_min(r["dpl_time"]), mean_min(sk_times, task.sklearn_time_digits),
            f"{ratio(op_t, skdp_t)} ({ratio(op_m, skdp_m)})",
            f"{ratio(skdp_t, sk_time, 2)} ({ratio(skdp_m, min(sk_times), 2)})", r["load"],
        ])
    print(markdown_table(
        ["eps", "skdp (incl. calibration)", "skdp warm (calibration cached)",
         "Opacus (incl. make_private)", "of which make_private (mean)", "diffprivlib",
         "sklearn", "Opacus / skdp", "skdp / sklearn", "load avg after eps"], rows))

    print("\n## Privacy: epsilon proven by each library's own accountant (delta = 1e-5)\n")
    rows = []
    for eps, r in results.items():
        rows.append([
            fmt(eps, 2), mean_std(r["skdp_eps"], digits=4), fmt(r["skdp_sigma"], 4),
            mean_std(r["opacus_eps"], digits=4), fmt(r.get("opacus_sigma", float("nan")), 4),
            f"{eps:g} (delta=0)" if dpl is not None else "n/a",
        ])
    print(markdown_table(
        ["target eps", "skdp privacy_spent_[0] (PLD)", "skdp noise_multiplier_",
         "Opacus get_epsilon (PRV)", "Opacus noise_multiplier", "diffprivlib"], rows))

    # Per-epoch cost of skdp's engine --------------------------------------------------------
    epoch_ratio = epoch_ratio_long = float("nan")
    if not args.skip_epoch_cost:
        batch = est.batch_size_

        def make(privacy, max_iter):
            return skdp_class(privacy=privacy, max_iter=max_iter, batch_size=batch,
                              random_state=0)

        with collect_warnings(caught, "skdp"):
            epoch_ratio, epoch_ratio_long = report_epoch_cost(make, X_train, y_train, batch,
                                                              steps_per_epoch)

    # Targets ---------------------------------------------------------------------------------
    print("\n## Targets (reported, not tuned for; MET/MISSED judged on means)\n")
    checks = []
    diff_unit = f" {task.diff_unit}" if task.diff_unit else ""
    for eps, r in results.items():
        if r["opacus_score"]:
            diff = mean_or_nan(r["paired_diff"]) * task.diff_scale
            checks.append((f"eps={eps:g}: skdp {task.metric} >= Opacus (paired mean diff "
                           f"{diff:+.{task.diff_digits}f}{diff_unit})", diff >= 0))
            speedup = mean_or_nan(r["opacus_time"]) / mean_or_nan(r["skdp_time"])
            speedup_min = min_or_nan(r["opacus_time"]) / min_or_nan(r["skdp_time"])
            checks.append((f"eps={eps:g}: skdp fit >= 10x faster than Opacus ({speedup:.1f}x on "
                           f"means, {speedup_min:.1f}x on mins)", speedup >= 10))
        rel = mean_or_nan(r["skdp_time"]) / sk_time
        rel_min = min_or_nan(r["skdp_time"]) / min(sk_times)
        checks.append((f"eps={eps:g}: skdp fit not slower than sklearn ({rel:.2f}x sklearn on "
                       f"means, {rel_min:.2f}x on mins)", rel <= 1.0))
    if 1.0 in results:
        checks.append(task.eps1_check(sk_score - mean_or_nan(results[1.0]["skdp_score"])))
    if not math.isnan(epoch_ratio):
        checks.append((f"DP epoch <= 1.5x non-private epoch ({epoch_ratio:.2f}x with 20 vs 40 "
                       f"epochs; {epoch_ratio_long:.2f}x with 20 vs 120)", epoch_ratio <= 1.5))
    for text, ok in checks:
        print(f"- [{'MET' if ok else 'MISSED'}] {text}")
    print_warnings(caught)
    print(f"\nLoad average at the end (1/5/15 min): {load_average()}")
    return 0
