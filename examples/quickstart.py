"""skdp quick start: private logistic regression on the bundled Adult census data.

Fits DPLogisticRegression at several privacy levels next to scikit-learn's non-private
LogisticRegression and prints test accuracy, the privacy actually spent, and fit time.

    python examples/quickstart.py
"""

from __future__ import annotations

import time

from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skdp.datasets import adult_preprocessor, load_adult
from skdp.linear_model import DPLogisticRegression


def main() -> None:
    X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    print(
        f"Adult: {len(X_train)} training rows, {len(X_test)} test rows "
        f"(majority class: {1 - y_test.mean():.3f} accuracy)\n"
    )
    print(f"{'model':<46} {'accuracy':>8} {'epsilon':>8} {'delta':>7} {'fit s':>6}")

    def report(name, model, spent):
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        eps, delta = spent(model)
        print(
            f"{name:<46} {model.score(X_test, y_test):8.4f} {eps:8.3g} {delta:7.1g} {seconds:6.2f}"
        )
        return model

    # The preprocessing uses only public constants, so it costs no privacy.
    report(
        "scikit-learn LogisticRegression (no privacy)",
        make_pipeline(adult_preprocessor(), LogisticRegression(max_iter=1000)),
        lambda m: (float("inf"), 0.0),
    )
    for epsilon in (0.1, 0.5, 1.0, 4.0):
        model = report(
            f"skdp DPLogisticRegression privacy=({epsilon}, 1e-5)",
            make_pipeline(
                adult_preprocessor(), DPLogisticRegression(privacy=(epsilon, 1e-5), random_state=0)
            ),
            lambda m: m[-1].privacy_spent_,
        )
    # The private fit stops near, not at, the optimum that scikit-learn computes; on this test
    # set the two may land on either side of each other.
    accuracy = model.score(X_test, y_test)
    standard_error = (accuracy * (1 - accuracy) / len(y_test)) ** 0.5
    print(
        f"\nA test accuracy on {len(y_test)} rows is known to about +-{standard_error:.4f} (one "
        "standard error):\ndifferences that small, including private scores above the "
        "non-private one, are noise, not a gain from privacy."
    )
    print("\nThe privacy statement of the last fit:\n")
    print(model[-1].privacy_report())


if __name__ == "__main__":
    main()
