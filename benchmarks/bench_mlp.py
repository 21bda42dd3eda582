"""DPMLPClassifier vs Opacus (same network and DP-SGD settings) vs scikit-learn's non-private
MLPClassifier, on Adult and Fashion-MNIST; DPMLPRegressor vs MLPRegressor on diamonds.

For each epsilon and seed, skdp is fitted with its defaults (plus ``hidden_layer_sizes``); Opacus
then trains the same architecture (same Glorot-uniform initialisation scheme, ReLU) with the
batch size, sampling rate, number of steps, clipping bound, step size and weight decay read
from the fitted skdp estimator, Poisson sampling and its PRV accountant. Peak memory is the
growth of the process' resident set during one fit (``VmHWM`` after ``/proc/self/clear_refs``,
minus ``VmRSS`` before), or ``torch.cuda.max_memory_allocated`` on a GPU.

Usage:
    python benchmarks/bench_mlp.py [--task adult fmnist diamonds] [--seeds 3]
        [--opacus-seeds 2] [--epsilons 0.5 1 2 4] [--device cpu|cuda] [--quick]
    python benchmarks/bench_mlp.py --timing [--task ...] [--device cpu|cuda]

The first form measures accuracy (insensitive to other load); ``--timing`` measures only the
cost of an epoch and peak memory, and should run on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch
from _bench_common import (
    DELTA,
    collect_warnings,
    fmt,
    load_average,
    markdown_table,
    mean_or_nan,
    mean_std,
    opacus_loader_batch_size,
    print_header,
    print_warnings,
    timed,
    try_import,
)
from _datasets import adult, diamonds, fashion_mnist
from sklearn.neural_network import MLPClassifier, MLPRegressor

from skdp.accounting import calibrate
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor

HIDDEN = (100,)


# --------------------------------------------------------------------------------------------
# Peak memory of one fit
# --------------------------------------------------------------------------------------------
def _status_kib(field_name: str) -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    raise KeyError(field_name)


def with_peak_memory(fn, device: str):
    """``(result, seconds, peak MiB)``: the extra memory ``fn`` needed at its peak."""
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        out, seconds = timed(fn)
        torch.cuda.synchronize()
        return out, seconds, (torch.cuda.max_memory_allocated() - base) / 2**20
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")  # reset the peak resident set size (Linux)
        before = _status_kib("VmRSS")
    except OSError:
        out, seconds = timed(fn)
        return out, seconds, float("nan")
    out, seconds = timed(fn)
    return out, seconds, (_status_kib("VmHWM") - before) / 1024


def _measure_peak(fn, args, kwargs) -> float:
    """In a fresh process: the resident-set growth of ``fn(*args, **kwargs)``, MiB."""
    warnings.simplefilter("ignore")  # the parent reports the warnings of its own fits
    try:
        import opacus  # noqa: F401 - imported before the baseline, as skdp's modules are
    except ImportError:
        pass
    with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
        handle.write("5")
    before = _status_kib("VmRSS")
    fn(*args, **kwargs)
    return (_status_kib("VmHWM") - before) / 1024


def peak_memory_mib(fn, *args, on_device: str = "cpu", **kwargs) -> float:
    """Peak extra memory of one call: in a fresh spawned process on CPU (so that memory cached
    by earlier fits does not hide it), or ``torch.cuda.max_memory_allocated`` on a GPU."""
    if on_device == "cuda":
        return with_peak_memory(lambda: fn(*args, **kwargs), "cuda")[2]
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(_measure_peak, fn, args, kwargs).result()
    except OSError:
        return float("nan")


def fit_skdp(Estimator, X, y, **params) -> None:
    Estimator(**params).fit(X, y)


# --------------------------------------------------------------------------------------------
# Opacus with the same network
# --------------------------------------------------------------------------------------------
def glorot_mlp(sizes, generator: torch.Generator) -> torch.nn.Sequential:
    """ReLU MLP initialised like scikit-learn (and skdp): Glorot-uniform weights and biases."""
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        linear = torch.nn.Linear(fan_in, fan_out)
        bound = math.sqrt(6 / (fan_in + fan_out))
        with torch.no_grad():
            linear.weight.uniform_(-bound, bound, generator=generator)
            linear.bias.uniform_(-bound, bound, generator=generator)
        layers += [linear, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


class HalfMSELoss(torch.nn.MSELoss):
    """Half the squared error, skdp's regression loss (a Module, as Opacus' ghost mode needs)."""

    def forward(self, input, target):  # noqa: A002 - torch's signature
        return 0.5 * super().forward(input, target)


def fit_opacus_mlp(X, y, est, *, epsilon: float, seed: int, device: str, n_classes: int,
                   grad_sample_mode: str = "hooks"):
    """Opacus DP-SGD with the settings of the fitted skdp estimator ``est``.

    Returns ``(predict, info)``; ``info`` has the loop time per epoch and Opacus' epsilon.
    """
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    n = X.shape[0]
    epochs, steps_per_epoch = est.n_iter_, est.n_steps_ // est.n_iter_
    torch.manual_seed(seed)  # Opacus' Poisson sampler and noise use the global torch RNG
    gen = torch.Generator().manual_seed(seed)
    regression = n_classes == 0
    n_out = 1 if n_classes <= 2 else n_classes
    model = glorot_mlp((X.shape[1], *est.hidden_layer_sizes, n_out), gen).to(device)
    X_t = torch.as_tensor(X, dtype=torch.float32)
    if n_out > 1:
        y_t = torch.as_tensor(y, dtype=torch.int64)
        criterion = torch.nn.CrossEntropyLoss(reduction="mean")
    else:  # one output column, targets shaped like it
        y_t = torch.as_tensor(y, dtype=torch.float32).reshape(-1, 1)
        criterion = (HalfMSELoss(reduction="mean") if regression
                     else torch.nn.BCEWithLogitsLoss(reduction="mean"))
    weights = [m.weight for m in model if isinstance(m, torch.nn.Linear)]
    biases = [m.bias for m in model if isinstance(m, torch.nn.Linear)]
    optimizer = torch.optim.SGD(
        [{"params": weights, "weight_decay": est.alpha / est.batch_size_},
         {"params": biases, "weight_decay": 0.0}],
        lr=est.learning_rate_,  # the step the fit used (learning_rate_init may be "auto")
    )
    loader = DataLoader(TensorDataset(X_t, y_t),
                        batch_size=opacus_loader_batch_size(n, steps_per_epoch))
    engine = PrivacyEngine(accountant="prv")
    kwargs = dict(module=model, optimizer=optimizer, data_loader=loader, target_epsilon=epsilon,
                  target_delta=DELTA, epochs=epochs, max_grad_norm=est.max_grad_norm,
                  poisson_sampling=True, grad_sample_mode=grad_sample_mode)
    if grad_sample_mode == "ghost":
        model, optimizer, criterion, loader = engine.make_private_with_epsilon(
            criterion=criterion, **kwargs)
    else:
        model, optimizer, loader = engine.make_private_with_epsilon(**kwargs)
    model.train()
    start = time.perf_counter()
    for _ in range(epochs):
        for xb, yb in loader:
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            criterion(model(xb), yb).backward()
            optimizer.step()
    if device == "cuda":
        torch.cuda.synchronize()
    loop = time.perf_counter() - start
    module = model._module if hasattr(model, "_module") else model

    def predict(X_new):
        with torch.no_grad():
            out = module(torch.as_tensor(X_new, dtype=torch.float32, device=device)).cpu()
        if regression:
            return out.squeeze(1).numpy()
        if n_out == 1:
            return (out.squeeze(1) > 0).long().numpy()
        return out.argmax(1).numpy()

    return predict, {"epoch_s": loop / epochs, "epsilon": float(engine.get_epsilon(DELTA))}


def ratio_text(value: float, digits: int) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}x"


# --------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------
def skdp_epoch_seconds(Estimator, X, y, *, privacy, batch_size, device, e1=2, e2=6, repeats=3):
    """(t(e2) - t(e1)) / (e2 - e1), each the minimum over repeats, calibration warmed."""
    def fit(epochs):
        est = Estimator(privacy=privacy, hidden_layer_sizes=HIDDEN, max_iter=epochs,
                        batch_size=batch_size, device=device, random_state=0)
        return timed(lambda: est.fit(X, y))[1]

    fit(e1), fit(e2)  # warm the calibration cache and the allocator
    t1 = min(fit(e1) for _ in range(repeats))
    t2 = min(fit(e2) for _ in range(repeats))
    return (t2 - t1) / (e2 - e1)


def run_task(name, data, Estimator, sk_reference, args, opacus, caught):
    X_train, X_test, y_train, y_test = data
    classifier = Estimator is DPMLPClassifier
    n_classes = len(np.unique(y_train)) if classifier else 0
    metric = "accuracy" if classifier else "R^2"
    print(f"\n# {name}: n_train={X_train.shape[0]}, d={X_train.shape[1]}, "
          f"hidden_layer_sizes={HIDDEN}\n", flush=True)

    with collect_warnings(caught, "sklearn"):
        sk, sk_time = timed(lambda: sk_reference.fit(X_train, y_train))
    sk_score = sk.score(X_test, y_test)
    print(f"scikit-learn {sk_reference!r} (non-private): test {metric} {sk_score:.4f}, "
          f"fit {sk_time:.1f} s\n", flush=True)

    rows, checks = [], []
    seeds = list(range(args.seeds))
    for eps in args.epsilons:
        r = {k: [] for k in ("skdp", "skdp_t", "skdp_eps", "opacus", "opacus_eps", "diff")}
        by_seed = {}
        for seed in seeds:
            calibrate.cache_clear()
            est = Estimator(privacy=(eps, DELTA), hidden_layer_sizes=HIDDEN,
                            device=args.device, random_state=seed)
            with collect_warnings(caught, "skdp"):
                _, t = timed(lambda est=est: est.fit(X_train, y_train))
            by_seed[seed] = est.score(X_test, y_test)
            r["skdp"].append(by_seed[seed])
            r["skdp_t"].append(t)
            r["skdp_eps"].append(est.privacy_spent_[0])
        if opacus is not None and (classifier or args.opacus_regression):
            targets = np.searchsorted(est.classes_, y_train) if classifier else y_train
            for seed in seeds[: args.opacus_seeds]:
                with collect_warnings(caught, "opacus"):
                    predict, info = fit_opacus_mlp(X_train, targets, est, epsilon=eps,
                                                   seed=seed, device=args.device,
                                                   n_classes=n_classes)
                pred = predict(X_test)
                if classifier:
                    score = float(np.mean(est.classes_[pred] == y_test))
                else:
                    score = 1 - np.sum((y_test - pred) ** 2) / np.sum(
                        (y_test - y_test.mean()) ** 2)
                r["opacus"].append(score)
                r["diff"].append(by_seed[seed] - score)
                r["opacus_eps"].append(info["epsilon"])
        rows.append([fmt(eps, 2), mean_std(r["skdp"]), mean_std(r["opacus"]), f"{sk_score:.4f}",
                     mean_std(r["diff"]), mean_std(r["skdp_eps"]), mean_std(r["opacus_eps"])])
        print(f"eps={eps:g}: skdp {mean_std(r['skdp'])} ({mean_or_nan(r['skdp_t']):.1f} s/fit), "
              f"Opacus {mean_std(r['opacus'])}; load {load_average()}", flush=True)
        if r["opacus"]:
            diff = mean_or_nan(r["diff"])
            checks.append((f"eps={eps:g}: skdp {metric} >= Opacus (paired mean diff "
                           f"{diff:+.4f})", diff >= 0))
    print(f"\n## Test {metric} and privacy (mean ± std over seeds)\n")
    print(f"Settings read from the fitted skdp estimator: epochs={est.n_iter_}, "
          f"batch_size={est.batch_size_}, steps={est.n_steps_}, clip={est.max_grad_norm}, "
          f"lr={est.learning_rate_:.4g}, alpha={est.alpha}.\n")
    print(markdown_table(
        ["eps", f"skdp (n={len(seeds)})", f"Opacus (n={args.opacus_seeds})",
         "sklearn (non-private)", "skdp - Opacus (paired)", "skdp eps (PLD)",
         "Opacus eps (PRV)"], rows))

    print("\n## Targets\n")
    for text, ok in checks:
        print(f"- [{'MET' if ok else 'MISSED'}] {text}")


def run_timing(name, data, Estimator, args, opacus, caught):
    """Per-epoch cost of skdp (DP and non-private) and Opacus (hooks and ghost) at eps=1."""
    X_train, _, y_train, _ = data
    classifier = Estimator is DPMLPClassifier
    n_classes = len(np.unique(y_train)) if classifier else 0
    est = Estimator(privacy=(1.0, DELTA), hidden_layer_sizes=HIDDEN, device=args.device,
                    random_state=0)
    with collect_warnings(caught, "skdp"):
        est.fit(X_train, y_train)
        dp_epoch = skdp_epoch_seconds(Estimator, X_train, y_train, privacy=(1.0, DELTA),
                                      batch_size=est.batch_size_, device=args.device,
                                      e1=args.timing_epochs[0], e2=args.timing_epochs[1])
        np_epoch = skdp_epoch_seconds(Estimator, X_train, y_train, privacy=(np.inf, 0),
                                      batch_size=est.batch_size_, device=args.device,
                                      e1=args.timing_epochs[0], e2=args.timing_epochs[1])
        common = dict(hidden_layer_sizes=HIDDEN, device=args.device, random_state=0, max_iter=2)
        dp_mem = peak_memory_mib(fit_skdp, Estimator, X_train, y_train,
                                 on_device=args.device, privacy=(1.0, DELTA), **common)
        np_mem = peak_memory_mib(fit_skdp, Estimator, X_train, y_train,
                                 on_device=args.device, privacy=(np.inf, 0), **common)
    rows = [["skdp DP (ghost clipping)", fmt(dp_epoch * 1e3, 1), "1.00x", fmt(dp_mem, 0)],
            ["skdp non-private", fmt(np_epoch * 1e3, 1), ratio_text(np_epoch / dp_epoch, 2),
             fmt(np_mem, 0)]]
    opacus_epochs = {}
    if opacus is not None:
        targets = np.searchsorted(est.classes_, y_train) if classifier else y_train
        short = Estimator(privacy=(1.0, DELTA), hidden_layer_sizes=HIDDEN, device=args.device,
                          random_state=0, max_iter=2).fit(X_train, y_train)
        for mode in ("hooks", "ghost"):
            try:
                with collect_warnings(caught, "opacus"):
                    _, info = fit_opacus_mlp(X_train, targets, short, epsilon=1.0, seed=0,
                                             device=args.device, n_classes=n_classes,
                                             grad_sample_mode=mode)
                    mem = peak_memory_mib(fit_opacus_mlp, X_train, targets, short,
                                          on_device=args.device, epsilon=1.0, seed=0,
                                          device=args.device,
                                          n_classes=n_classes, grad_sample_mode=mode)
            except Exception as exc:  # noqa: BLE001 - report and go on
                rows.append([f"Opacus DP ({mode})", f"failed: {type(exc).__name__}: {exc}"[:80],
                             "n/a", "n/a"])
                continue
            opacus_epochs[mode] = info["epoch_s"]
            rows.append([f"Opacus DP ({mode})", fmt(info["epoch_s"] * 1e3, 1),
                         ratio_text(info["epoch_s"] / dp_epoch, 1), fmt(mem, 0)])
    print(f"\n## {name}: time per epoch and peak memory (eps=1, batch_size={est.batch_size_}, "
          f"{est.n_steps_ // est.n_iter_} steps/epoch, device {args.device})\n")
    e1, e2 = args.timing_epochs
    print(f"skdp: (t({e2} epochs) - t({e1} epochs)) / {e2 - e1}, minimum of 3 fits each, "
          "calibration cached. Opacus: its training loop over 2 epochs / 2 (make_private "
          "excluded). Peak memory: growth of the resident set during one 2-epoch fit in a fresh "
          "process, data already loaded (CPU), or torch.cuda.max_memory_allocated (GPU), MiB.\n")
    print(markdown_table(["run", "ms / epoch", "time / skdp DP", "peak MiB"], rows))
    valid = dp_epoch > 0 and np_epoch > 0
    print("\n## Targets\n")
    ratio_dp = dp_epoch / np_epoch if valid else float("nan")
    print(f"- [{'MET' if ratio_dp <= 1.5 else 'MISSED'}] skdp DP epoch <= 1.5x non-private "
          f"epoch ({ratio_text(ratio_dp, 2)})")
    if "hooks" in opacus_epochs and classifier:
        speedup = opacus_epochs["hooks"] / dp_epoch
        print(f"- [{'MET' if speedup >= 3 else 'MISSED'}] skdp DP epoch >= 3x faster than "
              f"Opacus (default hooks mode: {ratio_text(speedup, 1)})")
    if "ghost" in opacus_epochs:
        print(f"- (for reference) Opacus ghost clipping / skdp: "
              f"{ratio_text(opacus_epochs['ghost'] / dp_epoch, 1)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", nargs="+", default=["adult", "fmnist", "diamonds"],
                        choices=["adult", "fmnist", "diamonds"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--opacus-seeds", type=int, default=2)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--fashion-mnist-dir", default=None)
    parser.add_argument("--opacus-regression", action="store_true",
                        help="also run Opacus on diamonds")
    parser.add_argument("--quick", action="store_true", help="smoke run: one seed, eps=1")
    parser.add_argument("--timing", action="store_true",
                        help="only the per-epoch cost and peak memory (run on a quiet machine)")
    parser.add_argument("--timing-epochs", type=int, nargs=2, default=[2, 6])
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.opacus_seeds, args.epsilons = 1, 1, [1.0]
    args.opacus_seeds = min(args.opacus_seeds, args.seeds)
    print_header("DP MLPs: skdp vs Opacus vs scikit-learn" + (" (timing)" if args.timing else ""), [
        f"Tasks: {args.task}; epsilons {args.epsilons}, delta={DELTA:g}; seeds: skdp "
        f"{args.seeds}, Opacus {args.opacus_seeds}; device {args.device}.",
        "scikit-learn's MLPs are the non-private reference, with their defaults (Adam) except "
        "max_iter=20 (their default 200 with early stopping takes minutes on 2 cores).",
    ])
    opacus = try_import("opacus")
    caught: dict[str, int] = {}
    sk_common = dict(hidden_layer_sizes=HIDDEN, max_iter=20, random_state=0)
    tasks = {
        "adult": ("Adult", adult, DPMLPClassifier, MLPClassifier),
        "fmnist": ("Fashion-MNIST", lambda: fashion_mnist(args.fashion_mnist_dir),
                   DPMLPClassifier, MLPClassifier),
        "diamonds": ("diamonds (scaled log price)", diamonds, DPMLPRegressor, MLPRegressor),
    }
    for task in args.task:
        name, load, Estimator, Reference = tasks[task]
        if args.timing:
            run_timing(name, load(), Estimator, args, opacus, caught)
        else:
            run_task(name, load(), Estimator, Reference(**sk_common), args, opacus, caught)
    print_warnings(caught)
    print(f"\nLoad average at the end (1/5/15 min): {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
