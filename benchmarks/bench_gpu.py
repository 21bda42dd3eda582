"""Default fits on the CPU and on a CUDA GPU: wall time, steps per second and test score.

For each model and data set, the estimator with its defaults (epsilon 1, delta 1e-5) is fitted
once to warm up (the calibration is cached after the first fit at a plan, CUDA kernels load),
then ``--repeats`` times on each device with different seeds; the table gives the median fit
time, the DP-SGD steps per second of those fits (``n_steps_`` over the fit time, calibration
included: what a user waits for) and the mean test score. Usage (on a machine with a GPU)::

    python benchmarks/bench_gpu.py [--repeats 3] [--fashion-mnist-dir DIR]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from _bench_common import print_header
from _datasets import adult, diamonds, fashion_mnist

from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.neural_network import DPMLPClassifier

PRIVACY = (1.0, 1e-5)


def cases(fashion_dir):
    fmnist = fashion_mnist(fashion_dir)
    return [
        ("DPLogisticRegression", "Adult", DPLogisticRegression, {}, adult()),
        ("DPLogisticRegression", "Fashion-MNIST", DPLogisticRegression, {}, fmnist),
        ("DPRidge", "diamonds", DPRidge, {}, diamonds()),
        ("DPMLPClassifier (100)", "Adult", DPMLPClassifier, {}, adult()),
        ("DPMLPClassifier (100)", "Fashion-MNIST", DPMLPClassifier, {}, fmnist),
        ("DPMLPClassifier (512, 256)", "Fashion-MNIST", DPMLPClassifier,
         {"hidden_layer_sizes": (512, 256)}, fmnist),
    ]


def timed_fits(cls, params, data, device: str, repeats: int):
    X_train, X_test, y_train, y_test = data
    cls(privacy=PRIVACY, random_state=100, device=device, **params).fit(X_train, y_train)
    seconds, steps, scores = [], [], []
    for seed in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        model = cls(privacy=PRIVACY, random_state=seed, device=device, **params).fit(
            X_train, y_train)
        if device == "cuda":
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
        steps.append(model.n_steps_)
        scores.append(model.score(X_test, y_test))
    median = float(np.median(seconds))
    return median, float(np.median(steps)) / median, float(np.mean(scores))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fashion-mnist-dir", default=None)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    print_header("Default fits on the CPU and on a CUDA GPU", [
        f"GPU: {gpu}; CPU threads: {torch.get_num_threads()}; privacy {PRIVACY}; "
        f"{args.repeats} timed fits per device after one warm-up"])
    devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    head = " | ".join(f"{d} s | {d} steps/s | {d} score" for d in devices)
    print(f"| model | data | {head} | cpu / cuda time |")
    print("|---|---|" + "---|" * (3 * len(devices) + 1))
    for name, data_name, cls, params, data in cases(args.fashion_mnist_dir):
        results = {d: timed_fits(cls, params, data, d, args.repeats) for d in devices}
        cells = " | ".join(f"{s:.3f} | {r:.0f} | {sc:.4f}" for s, r, sc in results.values())
        ratio = (f"{results['cpu'][0] / results['cuda'][0]:.1f}x" if "cuda" in results
                 else "n/a")
        print(f"| {name} | {data_name} | {cells} | {ratio} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
