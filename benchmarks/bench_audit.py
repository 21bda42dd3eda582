"""Empirical privacy audits: the audited lower bound on epsilon against the claim.

Usage: OMP_NUM_THREADS=1 python benchmarks/bench_audit.py [--quick] [--broken]
       OMP_NUM_THREADS=1 python benchmarks/bench_audit.py --preprocessing [--quick]

For every optimizer in the registry, every estimator and epsilon in {1, 4}: the multi-run audit
(``--runs`` fits, half with a crafted canary) and the one-run audit (``--canaries`` canaries in
one fit), on tiny synthetic data (64 rows, 4 features; full batch, 2 epochs: the setting in
which a canary has the most influence). The lower bounds hold with 95% confidence; a bound
above the claim would mean the guarantee is wrong. ``--broken`` adds rows for a deliberately
broken mechanism (noise 4x too small, the monkeypatch of the tests), to show what a violation
looks like. Results are in docs/audit.md.

``--preprocessing`` runs instead the audits of the DP transformers (the experiments and breakers
of ``tests/test_preprocessing_audit.py``: ``--preprocessing-runs`` fits each, the bounds search
a tenth of that) at epsilon 1 and 2.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_common import print_header  # noqa: E402

import skdp  # noqa: E402
from skdp._engine._optimizers import _AVAILABLE  # noqa: E402
from skdp.audit import audit_multi_run, audit_one_run  # noqa: E402
from skdp.linear_model import DPLogisticRegression, DPRidge  # noqa: E402
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor  # noqa: E402

DELTA = 1e-5
# Per-optimizer settings, as in tests/test_audit.py.
OPTIMIZER_SETTINGS = {
    "adp_sgd": {"learning_rate": "invscaling"},
    "diff2": {"batch_size": "auto"},
}
ESTIMATORS = [
    ("DPLogisticRegression", DPLogisticRegression, {}, False),
    ("DPRidge", DPRidge, {}, True),
    ("DPMLPClassifier", DPMLPClassifier, {"hidden_layer_sizes": (8,)}, False),
    ("DPMLPRegressor", DPMLPRegressor, {"hidden_layer_sizes": (8,)}, True),
]


def data(regression: bool, n: int = 64, d: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    if regression:
        return X, X[:, 0] + 0.1 * rng.normal(size=n)
    return X, (X[:, 0] > 0).astype(int)


def audit_row(name, Estimator, params, regression, optimizer, epsilon, args):
    X, y = data(regression)
    est = Estimator(
        privacy=(epsilon, DELTA), optimizer=optimizer, max_iter=2,
        **{**params, **OPTIMIZER_SETTINGS.get(optimizer, {})},
    )
    start = time.perf_counter()
    multi = audit_multi_run(est, X, y, n_runs=args.runs, random_state=args.seed)
    one = audit_one_run(est, X, y, n_canaries=args.canaries, random_state=args.seed)
    seconds = time.perf_counter() - start
    d = multi.details
    return (
        f"| {name} | {optimizer} | {multi.epsilon_claimed:.2f} | {multi.epsilon_lower:.2f} "
        f"| {d['epsilon_point']:.2f} | {d['fpr']:.3f} / {d['fnr']:.3f} "
        f"| {one.epsilon_lower:.2f} | {one.details['n_correct']}/{one.details['n_guesses']} "
        f"| {seconds:.0f} |"
    )


def preprocessing_audits(args) -> None:
    """Every experiment of tests/test_preprocessing_audit.py, correct and with each breaker it
    is meant to catch, at claims 1 and 2."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import pytest
    import test_preprocessing_audit as audits

    print_header(
        "skdp empirical privacy audit: DP transformers",
        [
            f"multi-run: {args.preprocessing_runs} fits (bounds search: "
            f"{args.preprocessing_runs // 10}), half with the canary, threshold on 30%,",
            "Clopper-Pearson on the rest; 95% confidence, delta=1e-5; experiments as in "
            "tests/test_preprocessing_audit.py.",
        ],
    )
    header = (
        "| experiment | mechanism | claimed eps | eps >= | point est. | FPR / FNR | fits | s |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    for epsilon in (1.0, 2.0):
        print(f"\n### epsilon = {epsilon:g}\n\n{header}")
        for experiment, breakers in audits.CATCHES.items():
            n_runs = args.preprocessing_runs
            if experiment == "bounds_search":
                n_runs //= 10
            for breaker in ["none", *breakers]:
                start = time.perf_counter()
                with pytest.MonkeyPatch.context() as patch:
                    out = audits.audit(patch, experiment, breaker, epsilon, n_runs, args.seed)
                print(
                    f"| {experiment} | {breaker} | {out.epsilon_claimed:.2f} "
                    f"| {out.epsilon_lower:.2f} | {out.epsilon_point:.2f} "
                    f"| {out.fpr:.4f} / {out.fnr:.4f} | {n_runs} "
                    f"| {time.perf_counter() - start:.0f} |",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="fits per multi-run audit")
    parser.add_argument("--canaries", type=int, default=500, help="canaries per one-run audit")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="200 runs, 100 canaries")
    parser.add_argument("--broken", action="store_true", help="add noise/4 rows")
    parser.add_argument("--preprocessing", action="store_true",
                        help="audit the DP transformers instead")
    parser.add_argument("--preprocessing-runs", type=int, default=20_000,
                        help="fits per transformer audit")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.canaries, args.preprocessing_runs = 200, 100, 2000
    if args.preprocessing:
        warnings.simplefilter("ignore", skdp.PrivacyWarning)
        preprocessing_audits(args)
        return
    torch.set_num_threads(1)
    warnings.simplefilter("ignore", skdp.PrivacyWarning)
    print_header(
        "skdp empirical privacy audit",
        [
            f"multi-run: {args.runs} fits (half with one crafted canary), threshold on 30%,",
            "Clopper-Pearson on the rest; one-run: "
            f"{args.canaries} crafted canaries, Steinke et al. bound with delta;",
            "95% confidence, delta=1e-5; 64 rows x 4 features, full batch, 2 epochs.",
        ],
    )
    header = (
        "| estimator | optimizer | claimed eps | multi-run eps >= | multi-run point est. "
        "| FPR / FNR | one-run eps >= | one-run correct/guesses | s |\n"
        "|---|---|---|---|---|---|---|---|---|"
    )
    for epsilon in (1.0, 4.0):
        print(f"\n### epsilon = {epsilon:g}\n\n{header}")
        for optimizer in sorted(_AVAILABLE):
            for name, Estimator, params, regression in ESTIMATORS:
                print(audit_row(name, Estimator, params, regression, optimizer, epsilon, args),
                      flush=True)
    if args.broken:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        import pytest
        from _audit_breakers import scale_noise

        print(f"\n### Broken on purpose: noise / 4, same claim\n\n{header}")
        for epsilon in (1.0, 4.0):
            for name, Estimator, params, regression in ESTIMATORS[:2]:
                with pytest.MonkeyPatch.context() as patch:
                    scale_noise(patch, 0.25)
                    print(audit_row(name, Estimator, params, regression, "noisy_sgd", epsilon,
                                    args), flush=True)


if __name__ == "__main__":
    main()
