"""How many final iterates should DP-SGD average? Test score of DPLogisticRegression (Adult) and
DPRidge (diamonds) with defaults except ``average``, over several seeds and epsilons.

Averaging is post-processing (free in privacy); a long tail cancels more noise but lags behind
the still-improving iterate. This measures the trade-off that fixed skdp's default.

Usage: python benchmarks/tune_averaging.py [--seeds 6]
"""

from __future__ import annotations

import argparse

import numpy as np

from skdp.linear_model import DPLogisticRegression, DPRidge

try:  # run as a script from the repository root
    from tune_defaults import adult, diamonds
except ImportError:  # pragma: no cover
    from benchmarks.tune_defaults import adult, diamonds

FRACTIONS = (False, 0.05, 0.1, 0.25, 0.5)
EPSILONS = (0.1, 0.5, 1.0, 4.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6)
    args = parser.parse_args()
    header = " | ".join(f"average={f}" for f in FRACTIONS)
    for name, make, data in (
        ("DPLogisticRegression, Adult, test accuracy", DPLogisticRegression, adult()),
        ("DPRidge, diamonds, test R^2", DPRidge, diamonds()),
    ):
        X_train, X_test, y_train, y_test = data
        print(f"\n### {name} (mean ± std over {args.seeds} seeds)\n")
        print(f"| epsilon | {header} |")
        print("|---" * (len(FRACTIONS) + 1) + "|")
        for eps in EPSILONS:
            cells = []
            for fraction in FRACTIONS:
                scores = [
                    make(privacy=(eps, 1e-5), average=fraction, random_state=seed)
                    .fit(X_train, y_train)
                    .score(X_test, y_test)
                    for seed in range(args.seeds)
                ]
                cells.append(f"{np.mean(scores):.4f} ± {np.std(scores):.4f}")
            print(f"| {eps} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
