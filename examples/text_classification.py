"""Private text classification: HashingVectorizer features + DPLogisticRegression.

The corpus is SYNTHETIC (generated below from small word lists, so that the example runs
offline): short "documents" about four topics, mixed with common words. Each document is
hashed into 2**18 sparse columns; the classifier trains on the sparse matrix directly (a dense
float64 copy would take 21 GB) and is compared with scikit-learn's non-private
LogisticRegression on the same features.

Why HashingVectorizer is free under differential privacy: it learns nothing in ``fit``. Each
row is a fixed function of its own document (tokens hashed into buckets, then each row scaled
to unit L2 norm), so changing one document changes only its own row. CountVectorizer and
TfidfVectorizer are *not* private: CountVectorizer learns a vocabulary from the private
documents (a rare word, such as a person's name, is in it only if someone wrote it, and
min_df/max_df/max_features count documents), and TfidfVectorizer also learns idf weights from
the document frequencies of every word, so every row depends on all the others. Fitting either
on private text leaks outside the privacy accounting. With ``norm='l2'`` every hashed row has
norm 1 (or 0 for an empty document): a public bound that ``max_row_norm=1.0`` records, and that
makes the default clipping bound meaningful. ``alternate_sign=False`` keeps counts
non-negative (collisions add up instead of cancelling).

    python examples/text_classification.py
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import LogisticRegression

from skdp.linear_model import DPLogisticRegression

TOPICS = {
    "sports": "match goal team coach season league player score referee stadium win defeat "
    "tournament final striker keeper penalty training fans transfer injury captain".split(),
    "science": "experiment theory data cell energy particle molecule climate research lab "
    "physics biology sample measure hypothesis telescope genome laboratory result study".split(),
    "cooking": "recipe oven flour butter sugar garlic onion bake simmer sauce salt pepper "
    "dough roast pan kitchen taste dinner fresh spice".split(),
    "travel": "flight hotel beach passport airport museum train city tour luggage island "
    "journey map ticket border coast guide holiday visa mountain".split(),
}
# Words every topic uses; some topic words also leak into other topics (see below), so the
# task is not trivially separable.
COMMON = (
    "the a of and to in is it that was for on are with as his they at be this from have or "
    "by one had not but what all were when we there can an your which their said if do will "
    "each about how up out them then she many some so these would other into has more her "
    "two like him see time could no make than first been its who now people my made over did "
    "down only way find use may water long little very after words called just where most "
    "know get through back much before go good new write our used me man too any day same "
    "right look think also around another came come work three word must because does part"
).split()


def synthetic_corpus(n_docs: int, seed: int) -> tuple[list[str], np.ndarray]:
    """``n_docs`` synthetic documents and their topic labels (0..3)."""
    rng = np.random.default_rng(seed)
    names = list(TOPICS)
    labels = rng.integers(0, len(names), size=n_docs)
    docs = []
    for label in labels:
        length = rng.integers(15, 40)
        n_topic = rng.binomial(length, 0.08)
        # A few words from another topic: documents mention other subjects too.
        other = names[rng.integers(0, len(names))]
        words = list(rng.choice(TOPICS[names[label]], size=n_topic))
        words += list(rng.choice(TOPICS[other], size=rng.binomial(length, 0.05)))
        words += list(rng.choice(COMMON, size=length - n_topic))
        rng.shuffle(words)
        docs.append(" ".join(words))
    return docs, labels


def main() -> None:
    train_docs, y_train = synthetic_corpus(10_000, seed=0)
    test_docs, y_test = synthetic_corpus(5_000, seed=1)
    # Data-independent: transform() needs no fit, and nothing is learned from the documents.
    hasher = HashingVectorizer(n_features=2**18, alternate_sign=False, norm="l2")
    X_train, X_test = hasher.transform(train_docs), hasher.transform(test_docs)
    print(
        f"SYNTHETIC corpus: {X_train.shape[0]} training and {X_test.shape[0]} test documents, "
        f"{X_train.shape[1]} hashed columns, {X_train.nnz / X_train.shape[0]:.1f} non-zeros per "
        f"row (sparse {type(X_train).__name__}); majority class "
        f"{np.bincount(y_test).max() / len(y_test):.3f} accuracy\n"
    )
    print(f"{'model':<50} {'accuracy':>8} {'epsilon':>8} {'fit s':>6}")

    start = time.perf_counter()
    reference = LogisticRegression(max_iter=1000).fit(X_train, y_train)
    print(f"{'scikit-learn LogisticRegression (no privacy)':<50} "
          f"{reference.score(X_test, y_test):8.4f} {'inf':>8} {time.perf_counter() - start:6.2f}")
    for epsilon in (0.5, 1.0, 4.0):
        model = DPLogisticRegression(
            privacy=(epsilon, 1e-5),
            max_row_norm=1.0,  # the public norm of every hashed row (norm='l2')
            # batch_size='auto' has a floor of 8 sqrt(n_params) rows, which with 4 x 2**18
            # parameters is 8,193 of these 10,000 rows: one step per epoch, at chance accuracy.
            # About n / 32 rows per batch keeps it a mini-batch run
            # (docs/benchmarks/batch_floor.md).
            batch_size=312,
            max_iter=10,
            classes=np.arange(len(TOPICS)),  # the public label set, not read from y
            random_state=0,
        )
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        name = f"skdp DPLogisticRegression privacy=({epsilon}, 1e-5)"
        print(f"{name:<50} {model.score(X_test, y_test):8.4f} "
              f"{model.privacy_spent_[0]:8.3g} {seconds:6.2f}")
    print("\nThe privacy statement of the last fit:\n")
    print(model.privacy_report())


if __name__ == "__main__":
    main()
