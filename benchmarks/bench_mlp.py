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
"""

from __future__ import annotations

import argparse
import math
import time
from functools import partial

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
    y_t = torch.as_tensor(y, dtype=torch.int64 if n_out > 1 else torch.float32)
    weights = [m.weight for m in model if isinstance(m, torch.nn.Linear)]
    biases = [m.bias for m in model if isinstance(m, torch.nn.Linear)]
    optimizer = torch.optim.SGD(
        [{"params": weights, "weight_decay": est.alpha / est.batch_size_},
         {"params": biases, "weight_decay": 0.0}],
        lr=est.learning_rate_init,
    )
    if regression:
        mse = torch.nn.MSELoss(reduction="mean")

        def criterion(out, target):
            return 0.5 * mse(out.squeeze(1), target)
    elif n_out == 1:
        bce = torch.nn.BCEWithLogitsLoss(reduction="mean")

        def criterion(out, target):
            return bce(out.squeeze(1), target)
    else:
        criterion = torch.nn.CrossEntropyLoss(reduction="mean")
    loader = DataLoader(TensorDataset(X_t, y_t),
                        batch_size=opacus_loader_batch_size(n, steps_per_epoch))
    engine = PrivacyEngine(accountant="prv")
    kwargs = dict(module=model, optimizer=optimizer, data_loader=loader, target_epsilon=epsilon,
                  target_delta=DELTA, epochs=epochs, max_grad_norm=est.max_grad_norm,
                  poisson_sampling=True, grad_sample_mode=grad_sample_mode)
    if grad_sample_mode == "ghost":
        if not isinstance(criterion, torch.nn.Module):
            raise NotImplementedError("ghost mode needs an nn.Module criterion")
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
        (sk, sk_time, sk_mem) = with_peak_memory(lambda: sk_reference.fit(X_train, y_train),
                                                 "cpu")
    sk_score = sk.score(X_test, y_test)
    print(f"scikit-learn {sk_reference!r} (non-private): test {metric} {sk_score:.4f}, "
          f"fit {sk_time:.1f} s, peak +{sk_mem:.0f} MiB\n", flush=True)

    rows, speed_rows, checks = [], [], []
    seeds = list(range(args.seeds))
    for eps in args.epsilons:
        r = {k: [] for k in ("skdp", "skdp_t", "skdp_mem", "skdp_eps", "opacus", "opacus_epoch",
                             "opacus_mem", "opacus_eps", "diff")}
        by_seed = {}
        for seed in seeds:
            calibrate.cache_clear()
            est = Estimator(privacy=(eps, DELTA), hidden_layer_sizes=HIDDEN,
                            device=args.device, random_state=seed)
            with collect_warnings(caught, "skdp"):
                _, t, mem = with_peak_memory(lambda est=est: est.fit(X_train, y_train),
                                             args.device)
            by_seed[seed] = est.score(X_test, y_test)
            r["skdp"].append(by_seed[seed])
            r["skdp_t"].append(t)
            r["skdp_mem"].append(mem)
            r["skdp_eps"].append(est.privacy_spent_[0])
        if opacus is not None and (classifier or args.opacus_regression):
            targets = np.searchsorted(est.classes_, y_train) if classifier else y_train
            for seed in seeds[: args.opacus_seeds]:
                with collect_warnings(caught, "opacus"):
                    (predict, info), _, mem = with_peak_memory(
                        partial(fit_opacus_mlp, X_train, targets, est, epsilon=eps, seed=seed,
                                device=args.device, n_classes=n_classes),
                        args.device)
                pred = predict(X_test)
                if classifier:
                    score = float(np.mean(est.classes_[pred] == y_test))
                else:
                    score = 1 - np.sum((y_test - pred) ** 2) / np.sum(
                        (y_test - y_test.mean()) ** 2)
                r["opacus"].append(score)
                r["diff"].append(by_seed[seed] - score)
                r["opacus_epoch"].append(info["epoch_s"])
                r["opacus_mem"].append(mem)
                r["opacus_eps"].append(info["epsilon"])
        rows.append([fmt(eps, 2), mean_std(r["skdp"]), mean_std(r["opacus"]), f"{sk_score:.4f}",
                     mean_std(r["diff"]), mean_std(r["skdp_eps"]), mean_std(r["opacus_eps"]),
                     fmt(mean_or_nan(r["skdp_mem"]), 0), fmt(mean_or_nan(r["opacus_mem"]), 0)])
        print(f"eps={eps:g}: skdp {mean_std(r['skdp'])} ({mean_or_nan(r['skdp_t']):.1f} s/fit), "
              f"Opacus {mean_std(r['opacus'])}; load {load_average()}", flush=True)
        if r["opacus"]:
            diff = mean_or_nan(r["diff"])
            checks.append((f"eps={eps:g}: skdp {metric} >= Opacus (paired mean diff "
                           f"{diff:+.4f})", diff >= 0))
        r_last = r
    print(f"\n## Test {metric}, privacy and peak memory (mean ± std over seeds)\n")
    print(f"Settings read from the fitted skdp estimator: epochs={est.n_iter_}, "
          f"batch_size={est.batch_size_}, steps={est.n_steps_}, clip={est.max_grad_norm}, "
          f"lr={est.learning_rate_init}, alpha={est.alpha}.\n")
    print(markdown_table(
        ["eps", f"skdp (n={len(seeds)})", f"Opacus (n={args.opacus_seeds})",
         "sklearn (non-private)", "skdp - Opacus (paired)", "skdp eps (PLD)",
         "Opacus eps (PRV)", "skdp peak MiB", "Opacus peak MiB"], rows))

    # Time per epoch ------------------------------------------------------------------------
    batch = est.batch_size_
    with collect_warnings(caught, "skdp"):
        dp_epoch = skdp_epoch_seconds(Estimator, X_train, y_train, privacy=(1.0, DELTA),
                                      batch_size=batch, device=args.device)
        np_epoch = skdp_epoch_seconds(Estimator, X_train, y_train, privacy=(np.inf, 0),
                                      batch_size=batch, device=args.device)
    opacus_epoch = mean_or_nan(r_last["opacus_epoch"])
    valid = dp_epoch > 0 and np_epoch > 0  # a difference of fits: load can make it meaningless
    dp_ratio = dp_epoch / np_epoch if valid else float("nan")
    speedup = opacus_epoch / dp_epoch if valid else float("nan")
    speed_rows.append([fmt(dp_epoch * 1e3, 1), fmt(np_epoch * 1e3, 1),
                       fmt(opacus_epoch * 1e3, 1), ratio_text(dp_ratio, 2),
                       ratio_text(speedup, 1)])
    print("\n## Time per epoch (ms)\n")
    print(f"skdp: (t(6 epochs) - t(2 epochs)) / 4, minimum of 3 fits each, calibration cached, "
          f"batch_size={batch}. Opacus: its training loop / epochs (make_private excluded), "
          f"mean over its seeds at the last epsilon.\n")
    print(markdown_table(["skdp DP", "skdp non-private", "Opacus DP (hooks)",
                          "skdp DP / non-private", "Opacus / skdp DP"], speed_rows))
    if not valid:
        print("\nA per-epoch estimate is not positive: other load dominated the timing; re-run "
              "on a quiet machine.")
    if classifier and not math.isnan(opacus_epoch):
        checks.append((f"skdp DP epoch >= 3x faster than Opacus ({ratio_text(speedup, 1)})",
                       speedup >= 3))
    checks.append((f"skdp DP epoch <= 1.5x non-private epoch ({ratio_text(dp_ratio, 2)})",
                   dp_ratio <= 1.5))
    print("\n## Targets\n")
    for text, ok in checks:
        print(f"- [{'MET' if ok else 'MISSED'}] {text}")


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
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.opacus_seeds, args.epsilons = 1, 1, [1.0]
    args.opacus_seeds = min(args.opacus_seeds, args.seeds)
    print_header("DP MLPs: skdp vs Opacus vs scikit-learn", [
        f"Tasks: {args.task}; epsilons {args.epsilons}, delta={DELTA:g}; seeds: skdp "
        f"{args.seeds}, Opacus {args.opacus_seeds}; device {args.device}.",
        "scikit-learn's MLPs are the non-private reference, with their defaults (Adam) except "
        "max_iter=20 (their default 200 with early stopping takes minutes on 2 cores).",
    ])
    opacus = try_import("opacus")
    caught: dict[str, int] = {}
    sk_common = dict(hidden_layer_sizes=HIDDEN, max_iter=20, random_state=0)
    if "adult" in args.task:
        run_task("Adult", adult(), DPMLPClassifier, MLPClassifier(**sk_common), args, opacus,
                 caught)
    if "fmnist" in args.task:
        run_task("Fashion-MNIST", fashion_mnist(args.fashion_mnist_dir), DPMLPClassifier,
                 MLPClassifier(**sk_common), args, opacus, caught)
    if "diamonds" in args.task:
        run_task("diamonds (scaled log price)", diamonds(), DPMLPRegressor,
                 MLPRegressor(**sk_common), args, opacus, caught)
    print_warnings(caught)
    print(f"\nLoad average at the end (1/5/15 min): {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
