"""DPMLPRegressor with ``max_row_norm='auto'`` (a public scale found privately) against the data
as given, on the regression sets of the defaults study (two of them with raw targets).

Test R^2 (mean over seeds) for every data set and epsilon. Usage::

    python benchmarks/bench_mlp_scale.py --threads 1 --seeds 2 \\
        --datasets diamonds,rand_hie,ames,diabetes --epsilons 0.5,1,4,inf
"""

from __future__ import annotations

from _threads import pin_threads  # first: it sets the thread counts before numpy loads

_THREADS = pin_threads()

import argparse  # noqa: E402
import math  # noqa: E402
import warnings  # noqa: E402

import _defaults_data  # noqa: E402
import numpy as np  # noqa: E402
from _bench_common import add_threads_argument, apply_threads  # noqa: E402

from skdp.neural_network import DPMLPRegressor  # noqa: E402


def score(data, **params) -> float:
    """Test R^2 of one fit (``nan`` if it diverged)."""
    try:
        model = DPMLPRegressor(**params).fit(data.X_train, data.y_train)
    except FloatingPointError:
        return math.nan
    return float(model.score(data.X_test, data.y_test))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_threads_argument(parser)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--datasets", default="diamonds,rand_hie,ames,diabetes")
    parser.add_argument("--epsilons", default="0.5,1,4,inf")
    args = parser.parse_args()
    apply_threads(args)
    warnings.filterwarnings("ignore")
    print("| data set | eps | data as given | max_row_norm='auto' |")
    print("|---|---|---|---|")
    for name in args.datasets.split(","):
        data = _defaults_data.load(name)
        for eps in (float(e) for e in args.epsilons.split(",")):
            privacy = (eps, 0.0) if math.isinf(eps) else (eps, 1e-5)
            cells = []
            for scale in (None, "auto"):
                scores = [score(data, privacy=privacy, max_row_norm=scale, random_state=seed)
                          for seed in range(args.seeds)]
                cells.append(f"{np.mean(scores):.4f}" if np.all(np.isfinite(scores))
                             else "diverged")
            print(f"| {name} | {eps:g} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
