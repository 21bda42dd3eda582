"""Default fits on the CPU and on a CUDA GPU: wall time, steps per second and test score.

For each model and data set, the estimator with its defaults (epsilon 1, delta 1e-5) is fitted
once to warm up (the calibration is cached after the first fit at a plan, CUDA kernels load),
then ``--repeats`` times on each device with different seeds; the table gives the median fit
time, the DP-SGD steps per second of those fits (``n_steps_`` over the fit time, calibration
included: what a user waits for) and the mean test score. Usage (on a machine with a GPU)::

    python benchmarks/bench_gpu.py [--repeats 3] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from harness import cli, data
from harness.results import Run, Study

STUDY = Study(
    name="gpu",
    title="On a GPU",
    script="benchmarks/bench_gpu.py",
    measures="Default fits (epsilon 1) of DPLogisticRegression, DPRidge and DPMLPClassifier on "
    "Adult, Fashion-MNIST and diamonds, on the CPU and on a CUDA GPU: median fit time, DP-SGD "
    "steps per second (calibration cached) and test score.",
    conclusion="On an H100 the default fits run 1.4-6.7x faster than on its 16 CPU cores "
    "(996-4,366 steps per second); the larger the model, the larger the gain.",
)
PRIVACY = (1.0, 1e-5)
CASES = [
    ("DPLogisticRegression", "Adult", "DPLogisticRegression", {}, "adult"),
    ("DPLogisticRegression", "Fashion-MNIST", "DPLogisticRegression", {}, "fashion_mnist"),
    ("DPRidge", "diamonds", "DPRidge", {}, "diamonds"),
    ("DPMLPClassifier (100)", "Adult", "DPMLPClassifier", {}, "adult"),
    ("DPMLPClassifier (100)", "Fashion-MNIST", "DPMLPClassifier", {}, "fashion_mnist"),
    ("DPMLPClassifier (512, 256)", "Fashion-MNIST", "DPMLPClassifier",
     {"hidden_layer_sizes": (512, 256)}, "fashion_mnist"),
]


def timed_fits(cls, params, loaded, device: str, repeats: int):
    X_train, X_test, y_train, y_test = loaded
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", type=int, nargs="+", default=None,
                        help="indices of the cases to run (default: all)")
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    warnings.filterwarnings("ignore")
    import skdp.linear_model
    import skdp.neural_network

    run = Run(STUDY, args, results=args.results)
    run.header([f"privacy {PRIVACY}; {args.repeats} timed fits per device after one warm-up"])
    devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    rows, cache = [], {}
    cases = [CASES[i] for i in args.cases] if args.cases else CASES
    for name, data_name, estimator, params, key in cases:
        if key not in cache:
            try:
                cache[key] = data.load(key)
            except data.DataMissing as missing:
                cache[key] = None
                run.skip(key, str(missing))
        if cache[key] is None:
            continue
        cls = getattr(skdp.linear_model, estimator, None) or getattr(skdp.neural_network,
                                                                     estimator)
        results = {d: timed_fits(cls, params, cache[key], d, args.repeats) for d in devices}
        cells = [f"{v:.3f}" if i % 3 == 0 else f"{v:.0f}" if i % 3 == 1 else f"{v:.4f}"
                 for i, v in enumerate(x for r in results.values() for x in r)]
        ratio = (f"{results['cpu'][0] / results['cuda'][0]:.1f}x" if "cuda" in results
                 else "n/a")
        rows.append([name, data_name, *cells, ratio])
        print(" | ".join(rows[-1]), flush=True)
    columns = [c for d in devices for c in (f"{d} s", f"{d} steps/s", f"{d} score")]
    run.table("Default fits, median of the timed fits", ["model", "data", *columns,
                                                         "cpu / cuda time"], rows,
              key="devices=" + ",".join(devices))
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
