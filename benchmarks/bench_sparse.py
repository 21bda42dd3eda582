"""Cost of an epoch on sparse input (scipy CSR) against the same data dense.

Two cases:

- Adult, one-hot encoded with the public preprocessing (32,561 x 105, about 12 non-zeros per
  row), fitted once from the dense array and once from ``scipy.sparse.csr_matrix`` of it: the
  same seed gives the same batches and noise, so the two fits differ only in the kernels.
- Synthetic hashed text: ``HashingVectorizer(n_features=2**18)`` on random "documents" of about
  50 distinct words (20,000 rows); a dense copy would take 21 GB, so only the sparse fit runs,
  next to a dense fit on the same rows hashed to 2**12 columns for scale.

Seconds per epoch are ``(t(e_long) - t(e_short)) / (e_long - e_short)`` (the fixed cost of
validation, conversion and calibration cancels), minimum over interleaved repeats.

Usage:
    OMP_NUM_THREADS=1 python benchmarks/bench_sparse.py [--quick] [--repeats 3]
"""

from __future__ import annotations

import argparse
import warnings

import scipy.sparse as sp
from harness import cli, data
from harness.results import Run, Study
from harness.timing import epoch_seconds
from sklearn.feature_extraction.text import HashingVectorizer

from skdp.linear_model import DPLogisticRegression
from skdp.neural_network import DPMLPClassifier

STUDY = Study(
    name="sparse",
    title="Sparse input against dense",
    script="benchmarks/bench_sparse.py",
    measures="Milliseconds per epoch of skdp's estimators on Adult's one-hot features as a "
    "dense array and as CSR (same seed: the same batches and noise), and on synthetic hashed "
    "text of 2**18 columns (sparse only: a dense copy would take 21 GB) next to the same rows "
    "hashed to 2**12.",
    conclusion="Sparse input trains without a dense copy, at the cost per epoch in the table "
    "(the same fit as dense, to float32 rounding).",
)
DELTA = 1e-5


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer epochs and repeats")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--documents", type=int, default=20_000,
                        help="rows of the synthetic hashed text")
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    warnings.simplefilter("ignore")
    run = Run(STUDY, args, results=args.results)
    run.header(["Same estimator and seed on the dense array and on its CSR form; epoch cost "
                "from two fit lengths (fixed costs cancel), minimum over interleaved repeats."])
    repeats = 1 if args.quick else args.repeats
    rows = []

    X_train, _, y_train, _ = data.load("adult")
    X_sparse = sp.csr_matrix(X_train)
    nnz_row = X_sparse.nnz / X_sparse.shape[0]
    adult_cases = [
        ("DPLogisticRegression noisy_sgd", lambda e: DPLogisticRegression(
            privacy=(1.0, DELTA), max_iter=e, random_state=0), (5, 25)),
        ("DPLogisticRegression adaclip", lambda e: DPLogisticRegression(
            privacy=(1.0, DELTA), optimizer="adaclip", max_iter=e, random_state=0), (5, 25)),
        ("DPLogisticRegression diff2", lambda e: DPLogisticRegression(
            privacy=(1.0, DELTA), optimizer="diff2", max_iter=e, random_state=0), (20, 100)),
        ("DPMLPClassifier (100,) noisy_sgd", lambda e: DPMLPClassifier(
            privacy=(1.0, DELTA), hidden_layer_sizes=(100,), max_iter=e, random_state=0),
            (2, 6)),
    ]
    for name, make, (e_short, e_long) in adult_cases:
        if args.quick:
            e_short, e_long = e_short // 2 or 1, e_long // 2
        dense = epoch_seconds(make, X_train, y_train, e_short, e_long, repeats)
        sparse = epoch_seconds(make, X_sparse, y_train, e_short, e_long, repeats)
        rows.append([f"Adult one-hot {X_train.shape[0]} x {X_train.shape[1]} "
                     f"({nnz_row:.1f} nnz/row)", name, f"{dense * 1e3:.1f}",
                     f"{sparse * 1e3:.1f}", f"{sparse / dense:.2f}"])

    docs, labels = data.hashed_text_documents(args.documents, 50)
    wide = HashingVectorizer(n_features=2**18, alternate_sign=False, norm="l2").transform(docs)
    narrow = HashingVectorizer(n_features=2**12, alternate_sign=False, norm="l2").transform(docs)
    text_cases = [
        ("DPLogisticRegression noisy_sgd", lambda e: DPLogisticRegression(
            privacy=(1.0, DELTA), max_iter=e, random_state=0), (2, 6)),
        ("DPMLPClassifier (16,) noisy_sgd", lambda e: DPMLPClassifier(
            privacy=(1.0, DELTA), hidden_layer_sizes=(16,), max_iter=e, random_state=0), (1, 2)),
    ]
    for name, make, (e_short, e_long) in text_cases:
        sparse = epoch_seconds(make, wide, labels, e_short, e_long, repeats)
        dense_narrow = epoch_seconds(make, narrow.toarray(), labels, e_short, e_long, repeats)
        sparse_narrow = epoch_seconds(make, narrow, labels, e_short, e_long, repeats)
        rows.append([f"hashed text {args.documents} x 2**18 "
                     f"({wide.nnz / wide.shape[0]:.1f} nnz/row)", name, "(21 GB: not run)",
                     f"{sparse * 1e3:.1f}", "-"])
        rows.append(["same rows hashed to 2**12", name, f"{dense_narrow * 1e3:.1f}",
                     f"{sparse_narrow * 1e3:.1f}", f"{sparse_narrow / dense_narrow:.2f}"])
    run.table("Milliseconds per epoch, dense and sparse",
              ["data", "estimator", "dense ms/epoch", "sparse ms/epoch", "sparse / dense"], rows,
              key="sparse")
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
