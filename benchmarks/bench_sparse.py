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

import numpy as np
import scipy.sparse as sp
from _bench_common import DELTA, epoch_seconds, markdown_table, print_header
from _datasets import adult
from sklearn.feature_extraction.text import HashingVectorizer

from skdp.linear_model import DPLogisticRegression
from skdp.neural_network import DPMLPClassifier


def synthetic_text(n_docs: int, words_per_doc: int, seed: int = 0):
    """Random documents over a 50,000-word vocabulary; the label depends on 200 words."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}" for i in range(50_000)])
    docs, labels = [], []
    for _ in range(n_docs):
        ids = rng.choice(vocabulary.size, size=words_per_doc, replace=False)
        docs.append(" ".join(vocabulary[ids]))
        labels.append(int(np.sum(ids < 200) % 2))
    return docs, np.array(labels)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer epochs and repeats")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print_header("skdp: sparse vs dense input, seconds per epoch", [
        "Same estimator and seed on the dense array and on its CSR form; epoch cost from two "
        "fit lengths (fixed costs cancel), minimum over interleaved repeats.",
    ])
    repeats = 1 if args.quick else args.repeats
    rows = []

    X_train, _, y_train, _ = adult()
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

    docs, labels = synthetic_text(20_000, 50)
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
        rows.append([f"hashed text 20000 x 2**18 ({wide.nnz / wide.shape[0]:.1f} nnz/row)", name,
                     "(21 GB: not run)", f"{sparse * 1e3:.1f}", "-"])
        rows.append(["same rows hashed to 2**12", name, f"{dense_narrow * 1e3:.1f}",
                     f"{sparse_narrow * 1e3:.1f}", f"{sparse_narrow / dense_narrow:.2f}"])
    print(markdown_table(
        ["data", "estimator", "dense ms/epoch", "sparse ms/epoch", "sparse / dense"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
