"""Your own data: a raw DataFrame through a private pipeline.

Adult as a user brings it: numeric columns on their own scales, string categories, missing
values. Every statistic the preprocessing learns (bounds, means, scales, categories) is
learned under differential privacy, inside one budget with the model, and the privacy report
covers everything the fitted pipeline releases. Next to it: scikit-learn's usual (leaky)
pipeline, whose scaler and encoder learn from the rows outside any accounting.

    python examples/private_pipeline.py
"""

from __future__ import annotations

import time

from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdp.datasets import load_adult
from skdp.linear_model import DPLogisticRegression
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import DPOneHotEncoder, DPSimpleImputer, DPStandardScaler


def main() -> None:
    X_train, X_test, y_train, y_test = load_adult(return_X_y=True, as_frame=True)
    numeric = X_train.select_dtypes("number").columns.tolist()  # the schema is public
    categorical = [c for c in X_train.columns if c not in numeric]

    leaky = make_pipeline(
        ColumnTransformer([
            ("num", make_pipeline(SimpleImputer(), StandardScaler()), numeric),
            ("cat", OneHotEncoder(handle_unknown="ignore"), categorical),
        ]),
        LogisticRegression(max_iter=1000),
    )
    start = time.perf_counter()
    leaky.fit(X_train, y_train)
    print(f"{'scikit-learn, no privacy':<34} accuracy {leaky.score(X_test, y_test):.4f}"
          f"   fit {time.perf_counter() - start:.2f} s")

    for epsilon in (0.5, 1.0, 4.0):
        pre = ColumnTransformer([
            ("num", make_pipeline(DPSimpleImputer(), DPStandardScaler()), numeric),
            ("cat", DPOneHotEncoder(), categorical),
        ])
        model = make_private_pipeline(pre, DPLogisticRegression(), privacy=(epsilon, 1e-5),
                                      random_state=0)
        start = time.perf_counter()
        model.fit(X_train, y_train)
        spent = model.privacy_spent_
        print(f"{f'skdp private pipeline, epsilon={epsilon:g}':<34} accuracy "
              f"{model.score(X_test, y_test):.4f}   fit {time.perf_counter() - start:.2f} s"
              f"   spent ({spent[0]:.3f}, {spent[1]:g}) for everything")

    print("\nWhat the last one learned, and how it was protected:\n")
    print(model.privacy_report())


if __name__ == "__main__":
    main()
