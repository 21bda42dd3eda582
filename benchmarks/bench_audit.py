"""Empirical privacy audits: the audited lower bound on epsilon against the claim.

Usage: OMP_NUM_THREADS=1 python benchmarks/bench_audit.py [--quick] [--broken]
       OMP_NUM_THREADS=1 python benchmarks/bench_audit.py --preprocessing [--quick]

For every optimizer in the registry, every estimator and epsilon in {1, 4}: the multi-run audit
(``--runs`` fits, half with a crafted canary) and the one-run audit (``--canaries`` canaries in
one fit), on tiny synthetic data (64 rows, 4 features; full batch, 2 epochs: the setting in
which a canary has the most influence). The lower bounds hold with 95% confidence; a bound
above the claim would mean the guarantee is wrong. ``--broken`` adds rows for a deliberately
broken mechanism (noise 4x too small, the monkeypatch of the tests), to show what a violation
looks like.

``--preprocessing`` runs instead the audits of the DP transformers (the experiments and breakers
of ``tests/preprocessing/test_audit.py``: ``--preprocessing-runs`` fits each, the bounds search
a tenth of that) at epsilon 1 and 2.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import torch
from harness import cli
from harness.data import audit_data as data
from harness.internals import optimizer_names
from harness.results import Run, Study

import skdp
from skdp.audit import audit_multi_run, audit_one_run
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor

STUDY = Study(
    name="audit",
    title="Empirical privacy audits of the estimators",
    script="benchmarks/bench_audit.py",
    measures="For every optimizer and estimator at epsilon 1 and 4: the multi-run audit (2,000 "
    "fits, half with a crafted canary) and the one-run audit (500 canaries in one fit) on "
    "64 x 4 synthetic rows, full batch, 2 epochs; lower bounds on epsilon with 95% "
    "confidence, and a mechanism broken on purpose (noise / 4).",
    conclusion="No claim is refuted: every audited lower bound stays below the claim (at most "
    "0.37 against 1 and 2.04 against 4); the broken mechanism is caught (1.74 and 1.08 "
    "against a claim of 1).",
)
PREPROCESSING = Study(
    name="audit_preprocessing",
    title="Empirical privacy audits of the DP transformers",
    script="benchmarks/bench_audit.py",
    measures="The audits of the DP scaler, imputer and one-hot encoder (the experiments of "
    "`tests/preprocessing/test_audit.py`, 20,000 fits each; the bounds search 2,000), correct "
    "and with each breaker they are meant to catch, at claims 1 and 2.",
    conclusion="No claim is refuted (at most 0.28 against 1 and 0.95 against 2) and every "
    "breaker is caught by a wide margin, except noise / 4 in the bounds search.",
)

DELTA = 1e-5
# Per-optimizer settings, as in tests/audit/test_estimators.py.
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
    return [name, optimizer, f"{multi.epsilon_claimed:.2f}", f"{multi.epsilon_lower:.2f}",
            f"{d['epsilon_point']:.2f}", f"{d['fpr']:.3f} / {d['fnr']:.3f}",
            f"{one.epsilon_lower:.2f}", f"{one.details['n_correct']}/{one.details['n_guesses']}",
            f"{seconds:.0f}"]


COLUMNS = ["estimator", "optimizer", "claimed eps", "multi-run eps >=", "multi-run point est.",
           "FPR / FNR", "one-run eps >=", "one-run correct/guesses", "s"]


def preprocessing_audits(args, run: Run) -> None:
    """Every experiment of tests/preprocessing/test_audit.py, correct and with each breaker it
    is meant to catch, at claims 1 and 2."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import pytest
    import test_preprocessing_audit as audits

    run.header([f"multi-run: {args.preprocessing_runs} fits (bounds search: "
                f"{args.preprocessing_runs // 10}), half with the canary, threshold on 30%, "
                "Clopper-Pearson on the rest; 95% confidence, delta=1e-5; experiments as in "
                "tests/preprocessing/test_audit.py."])
    for epsilon in (1.0, 2.0):
        rows = []
        for experiment, breakers in audits.CATCHES.items():
            n_runs = args.preprocessing_runs
            if experiment == "bounds_search":
                n_runs //= 10
            for breaker in ["none", *breakers]:
                start = time.perf_counter()
                with pytest.MonkeyPatch.context() as patch:
                    out = audits.audit(patch, experiment, breaker, epsilon, n_runs, args.seed)
                rows.append([experiment, breaker, f"{out.epsilon_claimed:.2f}",
                             f"{out.epsilon_lower:.2f}", f"{out.epsilon_point:.2f}",
                             f"{out.fpr:.4f} / {out.fnr:.4f}", str(n_runs),
                             f"{time.perf_counter() - start:.0f}"])
                print(" | ".join(rows[-1]), flush=True)
        run.table(f"epsilon = {epsilon:g}", ["experiment", "mechanism", "claimed eps", "eps >=",
                                              "point est.", "FPR / FNR", "fits", "s"], rows,
                  key=f"eps={epsilon:g}")


def main(argv=None) -> int:
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
    parser.add_argument("--optimizers", nargs="+", default=None,
                        help="only these optimizers (default: every one in the registry)")
    cli.add_common_arguments(parser, threads=False)
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.canaries, args.preprocessing_runs = 200, 100, 2000
    warnings.simplefilter("ignore", skdp.PrivacyWarning)
    if args.preprocessing:
        run = Run(PREPROCESSING, args, results=args.results)
        preprocessing_audits(args, run)
        run.save()
        return 0
    torch.set_num_threads(1)
    run = Run(STUDY, args, results=args.results)
    run.header([f"multi-run: {args.runs} fits (half with one crafted canary), threshold on 30%, "
                f"Clopper-Pearson on the rest; one-run: {args.canaries} crafted canaries, "
                "Steinke et al. bound with delta; 95% confidence, delta=1e-5; 64 rows x 4 "
                "features, full batch, 2 epochs."])
    optimizers = args.optimizers or optimizer_names()
    for epsilon in (1.0, 4.0):
        rows = []
        for optimizer in optimizers:
            for name, Estimator, params, regression in ESTIMATORS:
                rows.append(audit_row(name, Estimator, params, regression, optimizer, epsilon,
                                      args))
                print(" | ".join(rows[-1]), flush=True)
        run.table(f"epsilon = {epsilon:g}", COLUMNS, rows, key=f"eps={epsilon:g}")
    if args.broken:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        import pytest
        from _audit_breakers import scale_noise

        rows = []
        for epsilon in (1.0, 4.0):
            for name, Estimator, params, regression in ESTIMATORS[:2]:
                with pytest.MonkeyPatch.context() as patch:
                    scale_noise(patch, 0.25)
                    rows.append(audit_row(name, Estimator, params, regression, "noisy_sgd",
                                          epsilon, args))
        run.table("Broken on purpose: noise / 4, same claim", COLUMNS, rows, key="broken")
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
