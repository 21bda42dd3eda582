"""Side by side: an skdp linear model against Opacus, diffprivlib and scikit-learn.

For each epsilon (delta = 1e-5) and seed, in one process on the same arrays:

- skdp with its defaults (fit time includes the calibration: its cache is cleared before every
  timed fit, since Opacus calibrates in every fit too; "warm" re-fits with the cache warm), and
  the last iterate (``average=False``);
- Opacus DP-SGD configured from the fitted skdp estimator (or from a fit with ``mirror``
  parameters, when the defaults train on a public scale Opacus has no equivalent of): same
  epochs, steps per epoch, expected batch size, clipping bound, step and L2 penalty;
- diffprivlib (pure epsilon-DP) with public bounds;
- scikit-learn, the non-private reference;

then skdp's per-epoch cost, DP against non-private, calibration excluded.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from . import cli
from .competitors import Diffprivlib, Opacus, Sklearn
from .machine import load_average
from .results import Run
from .tables import fmt, mean_min, mean_or_nan, mean_std, min_or_nan, ratio
from .timing import dp_and_nonprivate_epochs, timed

DELTA = 1e-5
EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)


def parse_args(description: str, argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seeds", type=int, default=5, help="seeds for skdp and diffprivlib")
    parser.add_argument("--opacus-seeds", type=int, default=2,
                        help="seeds for Opacus (the first ones of --seeds; Opacus is slow)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--quick", action="store_true", help="smoke run: one seed, eps=1 only")
    parser.add_argument("--skip-epoch-cost", action="store_true",
                        help="do not measure skdp's per-epoch cost")
    cli.add_common_arguments(parser, threads=False)
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.opacus_seeds, args.epsilons = 1, 1, [1.0]
    args.opacus_seeds = min(args.opacus_seeds, args.seeds)
    return args


def protocol_lines(args: argparse.Namespace) -> list[str]:
    seeds = list(range(args.seeds))
    return [
        f"Epsilons: {args.epsilons}, delta = {DELTA:g} (diffprivlib: delta = 0, pure eps-DP).",
        f"Seeds: skdp and diffprivlib {seeds}; Opacus {seeds[: args.opacus_seeds]} only "
        f"(--opacus-seeds={args.opacus_seeds}: Opacus is much slower); scikit-learn is "
        "deterministic (timed over the same number of repetitions as --seeds).",
    ]


@dataclass
class Task:
    """What :func:`run` needs to know about one data set and model family."""

    skdp_class: type
    sklearn_name: str
    make_sklearn: Callable[[], object]
    make_diffprivlib: Callable[[Diffprivlib, float, int], object]  # (adapter, eps, seed)
    opacus_loss: str  # 'logistic' or 'half_squared'
    opacus_l2: Callable[[object, int], float]  # (fitted skdp estimator, n) -> weight decay
    metric: str  # "accuracy" or "R^2"
    eps1_target: Callable[[float], tuple[str, bool]]  # (sklearn - skdp at eps 1) -> target
    diff_scale: float = 1.0
    diff_digits: int = 4
    diff_unit: str = ""
    dpl_stats: dict = field(default_factory=dict)
    sklearn_time_digits: int = 3
    mirror: dict = field(default_factory=dict)  # parameters of the fit Opacus mirrors


def run(task: Task, args: argparse.Namespace, run_: Run, data) -> Run:
    """Fit every competitor for every epsilon and seed; add the tables to ``run_``."""
    from skdp.accounting import calibrate

    X_train, X_test, y_train, y_test = data
    seeds = list(range(args.seeds))
    opacus_seeds = seeds[: args.opacus_seeds]
    n = X_train.shape[0]
    unit = f", {task.diff_unit}" if task.diff_unit else ""
    opacus, dpl = Opacus(), Diffprivlib()
    for note in [*dpl.notes, *([opacus.reason] if opacus.reason else [])]:
        run_.note(f"NOTE: {note}")
    caught: dict[str, int] = {}

    sk_times = []
    for _ in seeds:
        with cli.collect_warnings(caught, "sklearn"):
            sk = Sklearn(task.make_sklearn).fit(X_train, y_train)
        sk_times.append(sk.seconds)
    sk_score = sk.score(X_test, y_test)
    sk_time = mean_or_nan(sk_times)
    run_.note(f"scikit-learn {task.sklearn_name}: test {task.metric} {sk_score:.4f}, fit "
              f"{sk_time:.{task.sklearn_time_digits}f} s (mean of {len(sk_times)})")

    results = {}
    for eps in args.epsilons:
        r = {key: [] for key in ("skdp", "last", "time", "warm", "eps", "opacus", "opacus_time",
                                 "make_private", "opacus_eps", "dpl", "dpl_time", "paired")}
        by_seed = {}
        for seed in seeds:
            calibrate.cache_clear()
            est = task.skdp_class(privacy=(eps, DELTA), random_state=seed)
            with cli.collect_warnings(caught, "skdp"):
                _, t = timed(lambda est=est: est.fit(X_train, y_train))
            by_seed[seed] = est.score(X_test, y_test)
            r["skdp"].append(by_seed[seed])
            r["time"].append(t)
            r["eps"].append(est.privacy_spent_[0])
            warm = task.skdp_class(privacy=(eps, DELTA), random_state=seed)
            with cli.collect_warnings(caught, "skdp"):
                _, t = timed(lambda warm=warm: warm.fit(X_train, y_train))
            r["warm"].append(t)
            last = task.skdp_class(privacy=(eps, DELTA), random_state=seed, average=False)
            with cli.collect_warnings(caught, "skdp"):
                last.fit(X_train, y_train)
            r["last"].append(last.score(X_test, y_test))
        r["sigma"] = est.noise_multiplier_
        like = est
        if task.mirror:
            like = task.skdp_class(privacy=(eps, DELTA), random_state=0, **task.mirror)
            with cli.collect_warnings(caught, "skdp"):
                like.fit(X_train, y_train)
        if opacus.available:
            for seed in opacus_seeds:
                with cli.collect_warnings(caught, "opacus"):
                    fitted = opacus.fit_linear(X_train, y_train, like=like,
                                               loss=task.opacus_loss,
                                               l2=task.opacus_l2(like, n), epsilon=eps,
                                               delta=DELTA, seed=seed)
                score = fitted.score(X_test, y_test)
                r["opacus"].append(score)
                r["paired"].append(by_seed[seed] - score)
                r["opacus_time"].append(fitted.seconds)
                r["make_private"].append(fitted.extra["make_private_seconds"])
                r["opacus_eps"].append(fitted.epsilon)
            r["opacus_sigma"] = fitted.extra["noise_multiplier"]
        if dpl.available:
            for seed in seeds:
                model = task.make_diffprivlib(dpl, eps, seed)
                with cli.collect_warnings(caught, "diffprivlib"):
                    fitted = dpl.fit(model, X_train, y_train)
                r["dpl_time"].append(fitted.seconds)
                r["dpl"].append(fitted.score(X_test, y_test))
        r["load"] = load_average()
        results[eps] = r
        print(f"eps={eps:g}: skdp {mean_std(r['skdp'])} ({mean_or_nan(r['time']):.2f} s), "
              f"Opacus {mean_std(r['opacus'])} ({mean_or_nan(r['opacus_time']):.2f} s), "
              f"diffprivlib {mean_std(r['dpl'])}; load average {r['load']}", flush=True)

    run_.table(f"Test {task.metric} (mean ± std over seeds)",
               ["eps", f"skdp (n={len(seeds)})", "skdp last iterate (average=False)",
                f"Opacus (n={len(opacus_seeds)})", f"diffprivlib (n={len(seeds)}, delta=0)",
                "sklearn (non-private)", f"skdp - Opacus{unit} (paired seeds)",
                f"sklearn - skdp{unit}"],
               [[fmt(eps, 2), mean_std(r["skdp"]), mean_std(r["last"]), mean_std(r["opacus"]),
                 mean_std(r["dpl"], **task.dpl_stats), f"{sk_score:.4f}",
                 mean_std(r["paired"], scale=task.diff_scale, digits=task.diff_digits),
                 f"{(sk_score - mean_or_nan(r['skdp'])) * task.diff_scale:.{task.diff_digits}f}"]
                for eps, r in results.items()], key="score")
    run_.table("Fit wall time, seconds: mean over seeds (min over seeds)",
               ["eps", "skdp (incl. calibration)", "skdp warm (calibration cached)",
                "Opacus (incl. make_private)", "of which make_private (mean)", "diffprivlib",
                "sklearn", "Opacus / skdp", "skdp / sklearn", "load avg after eps"],
               [[fmt(eps, 2), mean_min(r["time"]), mean_min(r["warm"]),
                 mean_min(r["opacus_time"], 2), fmt(mean_or_nan(r["make_private"]), 2),
                 mean_min(r["dpl_time"]), mean_min(sk_times, task.sklearn_time_digits),
                 f"{ratio(mean_or_nan(r['opacus_time']), mean_or_nan(r['time']))} "
                 f"({ratio(min_or_nan(r['opacus_time']), min_or_nan(r['time']))})",
                 f"{ratio(mean_or_nan(r['time']), sk_time, 2)} "
                 f"({ratio(min_or_nan(r['time']), min(sk_times), 2)})", r["load"]]
                for eps, r in results.items()], key="time",
               notes="Ratios use the means and, in brackets, the mins, which are the least "
               "affected by other processes on the machine (see the load column).")
    run_.table("Privacy: epsilon proven by each library's own accountant (delta = 1e-5)",
               ["target eps", "skdp privacy_spent_[0] (PLD)", "skdp noise_multiplier_",
                "Opacus get_epsilon (PRV)", "Opacus noise_multiplier", "diffprivlib"],
               [[fmt(eps, 2), mean_std(r["eps"]), fmt(r["sigma"], 4), mean_std(r["opacus_eps"]),
                 fmt(r.get("opacus_sigma", float("nan")), 4),
                 f"{eps:g} (delta=0)" if dpl.available else "n/a"]
                for eps, r in results.items()], key="privacy")

    checks = []
    if not args.skip_epoch_cost:
        batch = est.batch_size_

        def make(privacy, max_iter):
            return task.skdp_class(privacy=privacy, max_iter=max_iter, batch_size=batch,
                                   random_state=0)

        with cli.collect_warnings(caught, "skdp"):
            costs = [dp_and_nonprivate_epochs(make, X_train, y_train, repeats=7, e_short=20,
                                              e_long=40),
                     dp_and_nonprivate_epochs(make, X_train, y_train, repeats=3, e_short=20,
                                              e_long=120)]
        rows = []
        for cost in costs:
            for label, name in (("dp", "DP (clip + noise)"), ("nonprivate", "non-private")):
                rows.append([f"{cost['e_short']} vs {cost['e_long']}", str(cost["repeats"]),
                             name, fmt(cost[f"{label}_t_short"]), fmt(cost[f"{label}_t_long"]),
                             fmt(cost[f"{label}_epoch"] * 1e3, 2)])
        ratios = [c["dp_epoch"] / c["nonprivate_epoch"] if c["nonprivate_epoch"] > 0
                  else float("nan") for c in costs]
        run_.table("skdp engine: cost of one epoch, DP vs non-private (calibration excluded)",
                   ["E1 vs E2", "repeats", "run", "fit s (E1)", "fit s (E2)", "ms / epoch"],
                   rows, key="epoch",
                   notes=f"Same estimator, batch_size={batch}; privacy=(1.0, {DELTA:g}) vs "
                   "(inf, 0). Time per epoch = (t(E2) - t(E1)) / (E2 - E1), each t the minimum "
                   "of the interleaved repeats, calibration cached. DP / non-private epoch: "
                   + ", ".join(f"{x:.2f}x" for x in ratios) + ".")
        if not math.isnan(ratios[0]):
            checks.append((f"DP epoch <= 1.5x non-private epoch ({ratios[0]:.2f}x)",
                           ratios[0] <= 1.5))

    for eps, r in results.items():
        if r["opacus"]:
            diff = mean_or_nan(r["paired"]) * task.diff_scale
            checks.append((f"eps={eps:g}: skdp {task.metric} >= Opacus (paired mean diff "
                           f"{diff:+.{task.diff_digits}f}{unit})", diff >= 0))
            speed = mean_or_nan(r["opacus_time"]) / mean_or_nan(r["time"])
            checks.append((f"eps={eps:g}: skdp fit >= 10x faster than Opacus ({speed:.1f}x)",
                           speed >= 10))
        rel = mean_or_nan(r["time"]) / sk_time
        checks.append((f"eps={eps:g}: skdp fit not slower than scikit-learn ({rel:.2f}x)",
                       rel <= 1.0))
    if 1.0 in results:
        checks.append(task.eps1_target(sk_score - mean_or_nan(results[1.0]["skdp"])))
    run_.table("Targets (reported, not tuned for; judged on means)", ["target", "status"],
               [[text, "met" if ok else "MISSED"] for text, ok in checks], key="targets")
    cli.print_warnings(caught)
    return run_
