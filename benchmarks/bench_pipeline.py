"""Benchmark: private pipelines on raw tables -- skdp vs diffprivlib vs scikit-learn.

Raw tables as users bring them (numeric columns on their own scales, string categories,
missing values), each with a fixed public train/test split, run side by side in one process:

1. scikit-learn's usual, non-private pipeline: ``SimpleImputer`` + ``StandardScaler`` on the
   numeric columns, ``SimpleImputer(strategy='constant')`` + ``OneHotEncoder(handle_unknown=
   'ignore')`` on the categorical ones, then ``LogisticRegression`` / ``Ridge``;
2. skdp's DP model behind that same *leaky* preprocessing (fitted without DP; for regression
   also a leaky ``StandardScaler`` of the target): an upper reference for the private
   pipeline, NOT a private result (the preprocessing learns from the rows outside any
   accounting);
3. skdp's private pipeline: ``DPSimpleImputer`` + ``DPStandardScaler`` on the numeric columns,
   ``DPOneHotEncoder`` on the categorical ones (missing values are a category), then
   ``DPLogisticRegression`` or ``TransformedTargetRegressor(DPRidge(), transformer=
   DPStandardScaler())``, all under one ``privacy=(eps, 1e-5)`` (its ``privacy_spent_`` is
   asserted to be at most eps);
4. diffprivlib's pipeline: its ``StandardScaler`` then ``LogisticRegression`` /
   ``LinearRegression``, eps split evenly between the two (as its pipeline notebook does),
   composed by its ``BudgetAccountant`` (a sum of epsilons, asserted to be eps); diffprivlib
   has no DP imputer or one-hot encoder, so a shim gives it, for free, what skdp's private
   pipeline released for the same epsilon and seed (see ``DiffprivlibShim``);
5. the private pipeline's fit time and the share of it spent in its preprocessing
   (``ColumnTransformer.fit_transform`` timed inside the same fit), next to scikit-learn's.

Data (``--data-dir``, default ``../shared/data`` next to the checkout, or the
``SKDP_SHARED_DATA`` environment variable): Adult (bundled with skdp, the same files as
``adult/``), and ``tabular/fertility``, ``nass_cds``, ``rand_hie`` and ``ames``.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_pipeline.py --threads 1            # ~6 min
    OMP_NUM_THREADS=1 python benchmarks/bench_pipeline.py --threads 1 --quick    # eps 1, 1 seed
    python benchmarks/bench_pipeline.py --tables adult ames --seeds 5
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bench_common as bench  # noqa: E402

from skdp.accounting import calibrate  # noqa: E402
from skdp.datasets import load_adult  # noqa: E402
from skdp.linear_model import DPLogisticRegression, DPRidge  # noqa: E402
from skdp.pipeline import PrivatePipeline, make_private_pipeline  # noqa: E402
from skdp.preprocessing import DPOneHotEncoder, DPSimpleImputer, DPStandardScaler  # noqa: E402

DELTA = bench.DELTA
EPSILONS = (0.5, 1.0, 2.0, 4.0)
TABLES = ("adult", "fertility", "nass_cds", "rand_hie", "ames")
SPLIT_SEED = 0  # the public 75/25 split of the tabular/ tables
LARGE = 20_000  # the accuracy target applies to tables with at least this many rows
DEFAULT_DATA_DIR = Path(
    os.environ.get("SKDP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


# --------------------------------------------------------------------------------------------
# Tables: fixed public splits; column types from the public schema, never from value statistics
# --------------------------------------------------------------------------------------------
@dataclass
class Table:
    name: str
    task: str  # "classification" or "regression"
    X_train: pd.DataFrame
    X_test: pd.DataFrame
    y_train: np.ndarray
    y_test: np.ndarray
    numeric: list[str]
    categorical: list[str]
    n_rows: int  # rows of the whole table (the accuracy target's size criterion)
    notes: list[str] = field(default_factory=list)

    @property
    def metric(self) -> str:
        return "accuracy" if self.task == "classification" else "R^2"


def _by_dtype(X: pd.DataFrame, categorical_codes=()) -> tuple[list[str], list[str]]:
    """Numeric = numeric dtype in the file (the published schema); categorical = everything
    else, plus integer codes the data's documentation names as nominal (``categorical_codes``,
    converted to strings by the caller)."""
    numeric = [c for c in X.columns
               if pd.api.types.is_numeric_dtype(X[c]) and c not in categorical_codes]
    return numeric, [c for c in X.columns if c not in numeric]


def _split(name, X, y, task, notes, categorical_codes=()) -> Table:
    for c in categorical_codes:
        X[c] = X[c].astype(str)
    numeric, categorical = _by_dtype(X, categorical_codes)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, random_state=SPLIT_SEED)
    return Table(name, task, X_train.reset_index(drop=True), X_test.reset_index(drop=True),
                 np.asarray(y_train), np.asarray(y_test), numeric, categorical, len(X),
                 [*notes, f"split: train_test_split(test_size=0.25, random_state={SPLIT_SEED})"])


def load_table(name: str, data_dir: Path) -> Table:
    tabular = data_dir / "tabular"
    if name == "adult":
        # skdp's bundled copy is the raw UCI files (same MD5 as the shared adult/ folder), read
        # with "?" as NaN: 6 float columns and 8 string columns, as adult.names documents.
        X_train, X_test, y_train, y_test = load_adult(return_X_y=True, as_frame=True)
        numeric, categorical = _by_dtype(X_train)
        return Table("adult", "classification", X_train, X_test, np.asarray(y_train),
                     np.asarray(y_test), numeric, categorical,
                     len(X_train) + len(X_test),
                     ["target: income >50K; official split (adult.data / adult.test); "
                      "'?' is missing (NaN)"])
    path = tabular / f"{name}.csv.gz"
    if not path.is_file():
        raise SystemExit(f"{path} not found; pass --data-dir or set SKDP_SHARED_DATA to the "
                         "folder holding adult/ and tabular/")
    df = pd.read_csv(path)
    if name == "fertility":
        # AER::Fertility: morekids, gender1, gender2, afam, hispanic, other are yes/no or
        # male/female factors (strings in the file); age and work (weeks worked in 1979) are
        # integers. work is measured in the same year as the outcome, but it is a documented
        # covariate of the table, not a function of the label, so it is kept.
        y = (df.pop("morekids") == "yes").astype(int).to_numpy()
        return _split(name, df, y, "classification",
                      ["target: morekids == 'yes'"])
    if name == "nass_cds":
        # DAAG::nassCDS. caseid is an identifier; injSeverity is the injury severity, which
        # encodes death (4 = killed), so it leaks the label. weight is the survey's sampling
        # weight (inverse selection probability): NASS selects crashes by severity, so the
        # weight depends on the outcome's stratum and is not an attribute of a new crash:
        # dropped. Numeric by dtype: frontal, ageOFocc, yearacc, yearVeh (1 NaN), deploy;
        # string factors: dvcat, airbag, seatbelt, sex, abcat, occRole.
        y = (df.pop("dead") == "dead").astype(int).to_numpy()
        df = df.drop(columns=["caseid", "injSeverity", "weight"])
        return _split(name, df, y, "classification",
                      ["target: dead == 'dead'; dropped caseid (identifier), injSeverity (leaks "
                       "the label), weight (survey design weight, set by crash severity)"])
    if name == "rand_hie":
        # sampleSelection::RandHIE. Outcomes of the study year, dropped: the spending columns
        # (outpdol, drugdol, suppdol, mentdol, inpdol, meddol; lnmeddol = log(meddol) and
        # binexp = [meddol > 0] are functions of the target), hospital admissions (totadm) and
        # "missing any inpatient charges" (inpmis), both about inpatient spending, which
        # meddol includes, and the visit counts of the same year (mentvis, mdvis, notmdvis),
        # utilisation that meddol prices. zper is a person identifier. Kept: insurance plan
        # and demographics, baseline health (mhi, disea, physlm, ghindx with missing values,
        # xghindx), offers and incentives. plan ("HIE plan number") and site ("one of six
        # sites") are integer codes of nominal variables in the documentation: categorical.
        target = np.log1p(df["meddol"].to_numpy(dtype=float))
        df = df.drop(columns=["meddol", "outpdol", "drugdol", "suppdol", "mentdol", "inpdol",
                              "lnmeddol", "binexp", "totadm", "inpmis", "mentvis", "mdvis",
                              "notmdvis", "zper"])
        return _split(name, df, target, "regression",
                      ["target: log1p(meddol); dropped the other spending and utilisation "
                       "columns of the year (outcomes) and zper (identifier); plan and site are "
                       "documented nominal codes: categorical"], categorical_codes=("plan", "site"))
    if name == "ames":
        # modeldata::ames: factors are strings in the file (Mas_Vnr_Type and Misc_Feature have
        # missing values: a category); integer and float columns are numeric.
        target = np.log(df.pop("Sale_Price").to_numpy(dtype=float))
        return _split(name, df, target, "regression", ["target: log(Sale_Price)"])
    raise SystemExit(f"unknown table {name!r}; choose from {TABLES}")


# --------------------------------------------------------------------------------------------
# The pipelines
# --------------------------------------------------------------------------------------------
def sklearn_preprocessor(table: Table) -> ColumnTransformer:
    return ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(), StandardScaler()), table.numeric),
        ("cat", make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                              OneHotEncoder(handle_unknown="ignore")), table.categorical),
    ])


def sklearn_pipeline(table: Table):
    model = (LogisticRegression(max_iter=1000) if table.task == "classification"
             else Ridge())
    return make_pipeline(sklearn_preprocessor(table), model)


def private_preprocessor(table: Table) -> ColumnTransformer:
    return ColumnTransformer([
        ("num", make_pipeline(DPSimpleImputer(), DPStandardScaler()), table.numeric),
        ("cat", DPOneHotEncoder(), table.categorical),
    ])


def private_model(table: Table):
    if table.task == "classification":
        return DPLogisticRegression()
    return TransformedTargetRegressor(DPRidge(), transformer=DPStandardScaler(),
                                      check_inverse=False)


def private_pipeline(table: Table, eps: float, seed: int, **kwargs):
    return make_private_pipeline(private_preprocessor(table), private_model(table),
                                 privacy=(eps, DELTA), random_state=seed, **kwargs)


def leaky_dp_model(table: Table, eps: float, seed: int):
    """skdp's model for the pre-transformed leaky features (row 2; target scaled leakily)."""
    if table.task == "classification":
        return DPLogisticRegression(privacy=(eps, DELTA), random_state=seed)
    return TransformedTargetRegressor(DPRidge(privacy=(eps, DELTA), random_state=seed),
                                      transformer=StandardScaler(), check_inverse=False)


@contextlib.contextmanager
def timing_fit_transform(step, store: dict):
    """Time ``step.fit_transform`` inside a pipeline fit (Pipeline does not clone its steps
    when ``memory`` is None, so the instance attribute is what it calls)."""
    original = step.fit_transform

    def timed_fit_transform(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            store["seconds"] = time.perf_counter() - start

    step.fit_transform = timed_fit_transform
    try:
        yield
    finally:
        del step.fit_transform


def fit_private(table: Table, eps: float, seed: int, caught: dict, **kwargs):
    """Fit the private pipeline: ``(pipeline, total seconds, preprocessing seconds)``."""
    pipe = private_pipeline(table, eps, seed, **kwargs)
    store: dict = {}
    calibrate.cache_clear()  # a user's first fit calibrates; so does every timed fit here
    with timing_fit_transform(pipe.steps[0][1], store), bench.collect_warnings(caught, "skdp"):
        _, seconds = bench.timed(lambda: pipe.fit(table.X_train, table.y_train))
    spent = pipe.privacy_spent_
    if not (spent[0] <= eps and spent[1] <= DELTA):
        raise AssertionError(f"{table.name}: privacy_spent_ {spent} exceeds ({eps}, {DELTA})")
    return pipe, seconds, store["seconds"]


def score(model, X, y, task: str) -> tuple[float, float]:
    """``(accuracy, ROC AUC)`` of a classifier, ``(R^2, nan)`` of a regressor."""
    if task == "classification":
        auc = roc_auc_score(y, model.predict_proba(X)[:, 1])
        return float((model.predict(X) == y).mean()), float(auc)
    return float(r2_score(y, model.predict(X))), math.nan


# --------------------------------------------------------------------------------------------
# diffprivlib behind a compatibility shim
# --------------------------------------------------------------------------------------------
@dataclass
class DiffprivlibShim:
    """What diffprivlib is given for free, taken from skdp's private pipeline fitted with the
    same epsilon and seed (all of it DP releases of that fit, so using it adds no leak; but
    diffprivlib does not pay for it, which favours diffprivlib):

    * the categories skdp's ``DPOneHotEncoder`` discovered: its fitted encoder one-hot encodes
      the categorical columns (kept categories, missing as a category if kept, one
      'infrequent' column per feature), so every row has exactly one 1 per feature;
    * the fill values of skdp's ``DPSimpleImputer`` (private means), as constants;
    * the clipping bounds of skdp's ``DPStandardScaler`` (private 1%/99% quantiles), which
      diffprivlib's scaler needs (``bounds=``; without them it warns and uses the data's
      min/max) and which give the public ``data_norm`` / ``bounds_X`` of its model;
    * for regression, the bounds of skdp's target scaler as ``bounds_y``.

    diffprivlib's ``StandardScaler`` then scales the numeric columns (clipped to the bounds)
    with eps/2; the one-hot columns pass through unscaled (scaling them with diffprivlib would
    cost epsilon per column under its basic composition; 0/1 needs no scaling). Its model gets
    the other eps/2. Columns whose bounds collapsed to a point (lower == upper) carry no
    information after clipping and are dropped for diffprivlib (skdp maps them to 0).
    """

    encoder: object  # fitted DPOneHotEncoder
    numeric: list[str]
    categorical: list[str]
    fill: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    bounds_y: tuple[float, float] | None

    @classmethod
    def from_pipeline(cls, pipe, table: Table) -> DiffprivlibShim:
        pre = pipe.steps[0][1]
        imputer, scaler = pre.named_transformers_["num"].steps[0][1], \
            pre.named_transformers_["num"].steps[1][1]
        bounds_y = None
        if table.task == "regression":
            target_bounds = pipe.steps[-1][1].transformer_.bounds_[0]
            bounds_y = (float(target_bounds[0]), float(target_bounds[1]))
        return cls(pre.named_transformers_["cat"], table.numeric, table.categorical,
                   imputer.statistics_.astype(float), scaler.bounds_[:, 0].copy(),
                   scaler.bounds_[:, 1].copy(), bounds_y)

    @property
    def kept(self) -> np.ndarray:
        return self.upper > self.lower

    def numeric_block(self, X: pd.DataFrame) -> np.ndarray:
        values = X[self.numeric].to_numpy(dtype=float)
        values = np.where(np.isnan(values), self.fill, values)
        return np.clip(values, self.lower, self.upper)[:, self.kept]

    def categorical_block(self, X: pd.DataFrame) -> np.ndarray:
        if not self.categorical:
            return np.empty((len(X), 0))
        out = self.encoder.transform(X[self.categorical])
        return out.toarray() if hasattr(out, "toarray") else np.asarray(out)


class DiffprivlibPipeline:
    """diffprivlib's StandardScaler (eps/2) then its LogisticRegression or LinearRegression
    (eps/2), behind :class:`DiffprivlibShim`; one BudgetAccountant for both."""

    def __init__(self, dpl, task: str, eps: float, seed: int, shim: DiffprivlibShim):
        self.dpl, self.task, self.eps, self.seed, self.shim = dpl, task, eps, seed, shim

    def _transform(self, X):
        num = self.scaler_.transform(self.shim.numeric_block(X))
        return np.hstack([num, self.shim.categorical_block(X)])

    def fit(self, X, y):
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import StandardScaler as DplStandardScaler

        shim = self.shim
        self.accountant_ = BudgetAccountant()
        lower, upper = shim.lower[shim.kept], shim.upper[shim.kept]
        self.scaler_ = DplStandardScaler(
            epsilon=self.eps / 2, bounds=(lower, upper), random_state=self.seed,
            accountant=self.accountant_,
        ).fit(shim.numeric_block(X))
        Xt = self._transform(X)
        # Public (post-processing) ranges of the scaled, clipped numeric columns.
        lo_t = self.scaler_.transform(lower[None, :])[0]
        hi_t = self.scaler_.transform(upper[None, :])[0]
        n_cat = len(shim.categorical)
        if self.task == "classification":
            # Every row: one 1 per categorical feature, each numeric value within [lo_t, hi_t].
            self.data_norm_ = float(np.sqrt(np.sum(np.maximum(lo_t**2, hi_t**2)) + n_cat))
            self.model_ = self.dpl.LogisticRegression(
                epsilon=self.eps / 2, data_norm=self.data_norm_, random_state=self.seed,
                accountant=self.accountant_)
        else:
            d_cat = Xt.shape[1] - lo_t.size
            self.model_ = self.dpl.LinearRegression(
                epsilon=self.eps / 2,
                bounds_X=(np.r_[lo_t, np.zeros(d_cat)], np.r_[hi_t, np.ones(d_cat)]),
                bounds_y=shim.bounds_y, random_state=self.seed, accountant=self.accountant_)
        self.model_.fit(Xt, y)
        spent = self.accountant_.total()  # a Budget: (epsilon, delta), summed over fits
        if not spent[0] <= self.eps * (1 + 1e-9):
            raise AssertionError(f"diffprivlib spent {spent}, more than eps={self.eps}")
        return self

    def predict(self, X):
        pred = self.model_.predict(self._transform(X))
        if self.task == "regression":
            self.raw_predictions_ = pred
            # Post-processing a user of diffprivlib may do (favours it): its functional
            # mechanism can return huge coefficients; keep predictions in the public bounds_y.
            pred = np.clip(pred, *self.shim.bounds_y)
        return pred

    def predict_proba(self, X):
        return self.model_.predict_proba(self._transform(X))


def check_no_leak_warnings(caught: dict) -> None:
    """A PrivacyLeakWarning means a missing bound: the configuration is wrong; stop."""
    leaks = [key for key in caught if "PrivacyLeakWarning" in key]
    if leaks:
        raise RuntimeError(f"diffprivlib warned of a privacy leak: {leaks}")


# --------------------------------------------------------------------------------------------
# One table
# --------------------------------------------------------------------------------------------
def run_table(table: Table, args, dpl, caught: dict) -> dict:
    seeds = list(range(args.seeds))
    n = len(table.X_train)
    print(f"\n## {table.name}: {table.metric}, {n:,} train / {len(table.X_test):,} test rows "
          f"({table.n_rows:,} in all), {len(table.numeric)} numeric + "
          f"{len(table.categorical)} categorical columns\n")
    for note in table.notes:
        print(f"- {note}")
    print(f"- numeric: {', '.join(table.numeric)}")
    print(f"- categorical: {', '.join(table.categorical)}")
    missing = table.X_train.isna().sum()
    missing = missing[missing > 0]
    print("- columns with missing values (train): "
          + (", ".join(f"{c} ({v})" for c, v in missing.items()) or "none"))
    res: dict = {"table": table, "seeds": seeds}
    if table.task == "classification":
        res["majority"] = float(np.mean(table.y_test == round(np.mean(table.y_train))))
        print(f"- test accuracy of always predicting the training majority class: "
              f"{res['majority']:.4f}")
    if args.diffprivlib_max_rows and n > args.diffprivlib_max_rows:
        print(f"- diffprivlib is fitted on a random {args.diffprivlib_max_rows:,} of the "
              f"{n:,} training rows (--diffprivlib-max-rows)")
    print(flush=True)

    def record(r: dict, key: str, scores: tuple[float, float]) -> None:
        r[key].append(scores[0])
        r[key + "_auc"].append(scores[1])

    # 1. scikit-learn, non-private -----------------------------------------------------------
    sk_times = []
    for _ in seeds:
        with bench.collect_warnings(caught, "sklearn"):
            sk, t = bench.timed(lambda: sklearn_pipeline(table).fit(table.X_train, table.y_train))
        sk_times.append(t)
    res["sklearn"], res["sklearn_auc"] = score(sk, table.X_test, table.y_test, table.task)
    res["sklearn_time"] = sk_times
    res["sklearn_width"] = sk[0].transform(table.X_test.iloc[:1]).shape[1]

    # 2. skdp's model behind the leaky preprocessing (fitted once: it is deterministic) ------
    leaky_pre = sklearn_preprocessor(table).fit(table.X_train)
    Xl_train, Xl_test = leaky_pre.transform(table.X_train), leaky_pre.transform(table.X_test)

    res["eps"] = {}
    keys = ("leaky", "private", "dpl")
    for eps in args.epsilons:
        r = {k: [] for k in (*keys, *(f"{k}_auc" for k in keys), "time", "pre_time", "spent",
                             "width", "dpl_time", "dpl_spent", "dpl_raw", "released")}
        for seed in seeds:
            model = leaky_dp_model(table, eps, seed)
            with bench.collect_warnings(caught, "skdp leaky"):
                model.fit(Xl_train, table.y_train)
            record(r, "leaky", score(model, Xl_test, table.y_test, table.task))

            # 3. the private pipeline, timed, with its preprocessing timed inside the fit ----
            pipe, seconds, pre_seconds = fit_private(table, eps, seed, caught)
            record(r, "private", score(pipe, table.X_test, table.y_test, table.task))
            r["time"].append(seconds)
            r["pre_time"].append(pre_seconds)
            r["spent"].append(pipe.privacy_spent_[0])
            r["width"].append(pipe[:-1].transform(table.X_test.iloc[:1]).shape[1])
            r["released"].append(released(pipe, table))

            # 4. diffprivlib behind the shim built from this private fit ---------------------
            if dpl is None:
                continue
            shim = DiffprivlibShim.from_pipeline(pipe, table)
            X_dpl, y_dpl = table.X_train, table.y_train
            if args.diffprivlib_max_rows and n > args.diffprivlib_max_rows:
                idx = np.random.default_rng(seed).choice(n, args.diffprivlib_max_rows,
                                                         replace=False)
                X_dpl, y_dpl = X_dpl.iloc[idx], y_dpl[idx]
            dp_model = DiffprivlibPipeline(dpl, table.task, eps, seed, shim)
            dpl_caught: dict = {}
            with bench.collect_warnings(dpl_caught, "diffprivlib"):
                _, t = bench.timed(lambda dp_model=dp_model, X=X_dpl, y=y_dpl: dp_model.fit(X, y))
                record(r, "dpl", score(dp_model, table.X_test, table.y_test, table.task))
            check_no_leak_warnings(dpl_caught)
            for key, count in dpl_caught.items():
                caught[key] = caught.get(key, 0) + count
            if table.task == "regression":
                r["dpl_raw"].append(float(r2_score(table.y_test, dp_model.raw_predictions_)))
            r["dpl_time"].append(t)
            r["dpl_spent"].append(dp_model.accountant_.total()[0])
        r["load"] = bench.load_average()
        res["eps"][eps] = r
        print(f"eps={eps:g}: leaky-preprocessing skdp {bench.mean_std(r['leaky'])}, private "
              f"pipeline {bench.mean_std(r['private'])} ({bench.mean_or_nan(r['time']):.2f} s, "
              f"preprocessing {bench.mean_or_nan(r['pre_time']):.2f} s), diffprivlib "
              f"{bench.mean_std(r['dpl'])}; load {r['load']}", flush=True)
    return res


def released(pipe, table: Table) -> dict:
    """What the private preprocessing released that explains its accuracy (diagnostics)."""
    pre = pipe.steps[0][1]
    scaler = pre.named_transformers_["num"].steps[1][1]
    encoder = pre.named_transformers_["cat"]
    bounds = scaler.bounds_
    # Diagnostic read on the training rows (used by no model): numeric columns that clipping
    # to the released bounds turns into (nearly) constants, e.g. a 0/1 column whose bounds are
    # both ~0; and columns whose bounds crossed (lower > upper: constant too).
    X = table.X_train[table.numeric].to_numpy(dtype=float)
    spread = np.nanstd(X, axis=0)
    clipped = np.nanstd(np.clip(X, bounds[:, 0], bounds[:, 1]), axis=0)
    out = {
        "quantiles": scaler.quantiles_,
        "collapsed": int(np.sum((clipped <= 1e-3 * spread) & (spread > 0))),
        "crossed": int(np.sum(bounds[:, 0] > bounds[:, 1])),
        "categories": sum(len(c) for c in encoder.categories_),
    }
    if table.task == "regression":
        target = pipe.steps[-1][1].transformer_
        out["target_quantiles"] = target.quantiles_
        out["target_bounds"] = tuple(target.bounds_[0])
    return out


def warm_up(table: Table, caught: dict) -> None:
    """One untimed private fit on 2,000 rows: the first fit of a process pays one-off costs
    (lazy imports, first calls into torch and dp_accounting) that are not the pipeline's."""
    small = Table(table.name, table.task, table.X_train.iloc[:2000], table.X_test,
                  table.y_train[:2000], table.y_test, table.numeric, table.categorical,
                  table.n_rows)
    fit_private(small, 1.0, 0, caught)


# --------------------------------------------------------------------------------------------
# Tables of results and the targets
# --------------------------------------------------------------------------------------------
def _scale(table: Table) -> tuple[float, str]:
    return (100.0, "points") if table.task == "classification" else (1.0, "R^2")


def _diff(value: float, digits: int) -> str:
    return f"{value:+.3g}" if abs(value) >= 1e3 else f"{value:+.{digits}f}"


def _pair(values) -> str:
    return f"({values[0]:.3f}, {values[1]:.3f})"


def print_results(res: dict) -> None:
    table = res["table"]
    k = len(res["seeds"])
    scale, unit = _scale(table)
    digits = 2 if scale == 100 else 4
    classification = table.task == "classification"
    print(f"\n### {table.name}: test {table.metric} (mean ± std over {k} seed(s))\n")
    line = (f"scikit-learn pipeline (non-private): {res['sklearn']:.4f} "
            f"({res['sklearn_width']} columns after preprocessing)")
    if classification:
        line += (f", ROC AUC {res['sklearn_auc']:.4f}; majority-class accuracy "
                 f"{res['majority']:.4f}")
    print(line + f". Differences in {unit}, mean ± std of the paired (same seed) "
          "differences.\n")
    rows = []
    for eps, r in res["eps"].items():
        diff = (np.asarray(r["private"]) - np.asarray(r["leaky"])) * scale
        row = [fmt_eps(eps), bench.mean_std(r["leaky"]), bench.mean_std(r["private"]),
               bench.mean_std(diff, digits=digits),
               _diff((bench.mean_or_nan(r["private"]) - res["sklearn"]) * scale, digits)]
        if r["dpl"]:
            ddiff = (np.asarray(r["private"]) - np.asarray(r["dpl"])) * scale
            row += [bench.mean_std(r["dpl"]), bench.mean_std(ddiff, digits=digits)]
        else:
            row += ["n/a", "n/a"]
        row.append(f"{int(np.median(r['width']))}")
        rows.append(row)
    print(bench.markdown_table(
        ["eps", "skdp model, leaky preprocessing (reference, NOT private)",
         "skdp private pipeline", f"private - leaky ({unit})",
         f"private - sklearn ({unit})", "diffprivlib pipeline (shim)",
         f"private - diffprivlib ({unit})", "columns (private)"], rows))
    if classification:
        print("\nROC AUC (mean over seeds; accuracy hides the ranking when one class "
              "dominates):\n")
        print(bench.markdown_table(
            ["eps", "leaky reference", "private pipeline", "diffprivlib", "sklearn"],
            [[fmt_eps(eps), bench.fmt(bench.mean_or_nan(r["leaky_auc"]), 4),
              bench.fmt(bench.mean_or_nan(r["private_auc"]), 4),
              bench.fmt(bench.mean_or_nan(r["dpl_auc"]), 4), f"{res['sklearn_auc']:.4f}"]
             for eps, r in res["eps"].items()]))
    elif any(r["dpl_raw"] for r in res["eps"].values()):
        print("\ndiffprivlib's R^2 above clips its predictions to bounds_y (post-processing "
              "that favours it); its own predictions give R^2 "
              + "; ".join(f"{bench.mean_std(r['dpl_raw'])} at eps={eps:g}"
                          for eps, r in res["eps"].items()) + ".")

    print(f"\n### {table.name}: what the private preprocessing released (mean over seeds)\n")
    distinct = int(sum(table.X_train[c].nunique(dropna=False) for c in table.categorical))
    print(f"Diagnostics, read from the fitted pipelines; the training table has {distinct} "
          f"distinct categories over its {len(table.categorical)} categorical columns and "
          f"{len(table.numeric)} numeric columns. The scaler's bounds are the quantiles "
          "below (moved inward from (0.01, 0.99) when the noise cannot resolve the tails; "
          "at (0.25, 0.75) the search is at its limit). 'Constant after clipping': numeric "
          "columns whose clipped training values have less than 1/1000 of their spread (e.g. a "
          "0/1 column whose bounds are both ~0); 'crossed': bounds with lower > upper (the "
          "column is constant too). Both are read on the training rows for this diagnostic "
          "only.\n")
    headers = ["eps", "scaler quantiles (median)",
               "numeric columns constant after clipping / crossed", "categories kept"]
    if table.task == "regression":
        headers += ["target quantiles (median)", "target bounds (median)"]
    rows = []
    for eps, r in res["eps"].items():
        rel = r["released"]
        qs = [x["quantiles"] for x in rel if x["quantiles"] is not None]
        row = [fmt_eps(eps), _pair(np.median(qs, axis=0)) if qs else "given",
               f"{np.mean([x['collapsed'] for x in rel]):.1f} / "
               f"{np.mean([x['crossed'] for x in rel]):.1f}",
               f"{np.mean([x['categories'] for x in rel]):.1f} of {distinct}"]
        if table.task == "regression":
            tq = [x["target_quantiles"] for x in rel if x["target_quantiles"] is not None]
            row += [_pair(np.median(tq, axis=0)) if tq else "given",
                    _pair(np.median([x["target_bounds"] for x in rel], axis=0))]
        rows.append(row)
    print(bench.markdown_table(headers, rows))
    if table.task == "regression":
        q = np.quantile(table.y_train, [0.01, 0.25, 0.75, 0.99])
        print(f"\n(Diagnostic, not used by any model: the training target's 1%, 25%, 75% and "
              f"99% quantiles are {q[0]:.3f}, {q[1]:.3f}, {q[2]:.3f}, {q[3]:.3f}.)")

    print(f"\n### {table.name}: fit wall time, seconds, mean (min) over seeds\n")
    rows = []
    sk_t = bench.mean_or_nan(res["sklearn_time"])
    for eps, r in res["eps"].items():
        share = np.asarray(r["pre_time"]) / np.asarray(r["time"])
        rows.append([
            fmt_eps(eps), bench.mean_min(r["time"]), bench.mean_min(r["pre_time"]),
            f"{100 * share.mean():.1f}% (max {100 * share.max():.1f}%)",
            bench.mean_min(res["sklearn_time"]),
            bench.ratio(bench.mean_or_nan(r["time"]), sk_t),
            bench.mean_min(r["dpl_time"]) if r["dpl_time"] else "n/a",
            f"{bench.mean_or_nan(r['spent']):.4f}",
            f"{bench.mean_or_nan(r['dpl_spent']):.4f}" if r["dpl_spent"] else "n/a",
            r["load"],
        ])
    print(bench.markdown_table(
        ["eps", "private pipeline fit", "of which preprocessing", "preprocessing share",
         "sklearn pipeline fit", "private / sklearn", "diffprivlib fit",
         "skdp privacy_spent_ eps", "diffprivlib accountant eps", "load avg"], rows))


def fmt_eps(eps: float) -> str:
    return f"{eps:g}"


def print_summary(results: list[dict]) -> None:
    print("\n## Targets\n")
    rows, met_all = [], True
    for res in results:
        table = res["table"]
        scale, unit = _scale(table)
        tol = 1.0 if table.task == "classification" else 0.02
        digits = 3 if scale == 100 else 4
        r = res["eps"].get(1.0)
        if r is not None and table.n_rows >= LARGE:
            gap = (bench.mean_or_nan(r["leaky"]) - bench.mean_or_nan(r["private"])) * scale
            ok = gap <= tol
            met_all &= ok
            rows.append([table.name, f"eps=1: private within {tol:g} {unit} of leaky-"
                         "preprocessing skdp", f"behind by {gap:.{digits}f} {unit}",
                         "met" if ok else "MISSED"])
        elif r is not None:
            gap = (bench.mean_or_nan(r["leaky"]) - bench.mean_or_nan(r["private"])) * scale
            rows.append([table.name, f"(not a target: {table.n_rows:,} < {LARGE:,} rows) "
                         "private vs leaky-preprocessing skdp at eps=1",
                         f"behind by {gap:.{digits}f} {unit}", "-"])
        for eps, r in res["eps"].items():
            if not r["dpl"]:
                continue
            lead = (bench.mean_or_nan(r["private"]) - bench.mean_or_nan(r["dpl"])) * scale
            ok = lead > 0
            met_all &= ok
            rows.append([table.name, f"eps={eps:g}: private ahead of diffprivlib",
                         f"{_diff(lead, digits)} {unit}", "met" if ok else "MISSED"])
        shares = np.concatenate([np.asarray(r["pre_time"]) / np.asarray(r["time"])
                                 for r in res["eps"].values()])
        ok = shares.mean() <= 0.2
        met_all &= ok
        rows.append([table.name, "preprocessing <= 20% of the private pipeline's fit time",
                     f"mean {100 * shares.mean():.1f}% (max {100 * shares.max():.1f}%)",
                     "met" if ok else "MISSED"])
    print(bench.markdown_table(["table", "target", "measured", "status"], rows))
    print(f"\nAll targets met: {'yes' if met_all else 'NO'}. Every private pipeline's "
          "privacy_spent_ was at most its eps (asserted), diffprivlib's accountant summed to "
          "its eps (asserted), and diffprivlib raised no PrivacyLeakWarning (the script stops "
          "if it does).")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--quick", action="store_true", help="one seed, eps=1 only")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR,
                        help="folder holding adult/ and tabular/ (default: %(default)s)")
    parser.add_argument("--diffprivlib-max-rows", type=int, default=0,
                        help="fit diffprivlib on a random subsample of at most this many "
                             "training rows (0: all rows)")
    bench.add_threads_argument(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.epsilons = 1, [1.0]
    return args


_DEFAULT_SHARE = inspect.signature(PrivatePipeline).parameters["preprocessing_share"].default


def main(argv=None) -> int:
    args = parse_args(argv)
    bench.apply_threads(args)
    dpl = bench.import_diffprivlib()
    tables = [load_table(name, args.data_dir) for name in args.tables]
    bench.print_header(
        "Private pipelines on raw tables -- skdp vs diffprivlib vs scikit-learn",
        [
            f"Tables: {', '.join(t.name for t in tables)} (data: {args.data_dir}).",
            f"Epsilons: {args.epsilons}, delta = {DELTA:g} (diffprivlib: delta = 0). "
            f"Seeds: {list(range(args.seeds))} (noise of every DP fit; the splits are fixed). "
            f"torch threads: {args.threads or 'default'}.",
            "scikit-learn: SimpleImputer() + StandardScaler() (numeric), SimpleImputer("
            "strategy='constant') + OneHotEncoder(handle_unknown='ignore') (categorical), "
            "LogisticRegression(max_iter=1000) or Ridge(); fitted on the raw training table.",
            "Leaky reference (NOT private): the same scikit-learn preprocessing fitted once "
            "without DP, then DPLogisticRegression(privacy=(eps, 1e-5)) or TransformedTarget"
            "Regressor(DPRidge(privacy=(eps, 1e-5)), transformer=StandardScaler()).",
            "skdp private pipeline: make_private_pipeline(ColumnTransformer([('num', "
            "make_pipeline(DPSimpleImputer(), DPStandardScaler()), numeric), ('cat', "
            "DPOneHotEncoder(), categorical)]), DPLogisticRegression() or TransformedTarget"
            "Regressor(DPRidge(), transformer=DPStandardScaler(), check_inverse=False), "
            "privacy=(eps, 1e-5), random_state=seed), all defaults (preprocessing_share="
            f"{_DEFAULT_SHARE:g}). "
            "Its fit time includes the calibration (skdp.accounting.calibrate's cache is "
            "cleared before every fit); 'of which preprocessing' is the ColumnTransformer's "
            "fit_transform inside that fit (the target scaler of the regressions is counted "
            "with the model).",
            "diffprivlib pipeline: diffprivlib.models.StandardScaler(epsilon=eps/2, bounds=...) "
            "on the numeric columns, then LogisticRegression(epsilon=eps/2, data_norm=...) or "
            "LinearRegression(epsilon=eps/2, bounds_X=..., bounds_y=...), one BudgetAccountant "
            "(sum of epsilons). It has no DP imputer or one-hot encoder: the shim gives it, for "
            "free, the categories, fill values and bounds that skdp's private pipeline "
            "released for the same eps and seed (this favours diffprivlib; see the class "
            "DiffprivlibShim). data_norm and bounds_X are the ranges of its scaled, clipped "
            "columns (post-processing of released values); one-hot columns are not scaled."
            + (f" Fitted on at most {args.diffprivlib_max_rows:,} training rows."
               if args.diffprivlib_max_rows else ""),
            "Accuracy is on the fixed test split; R^2 of the regressions on the log target.",
        ],
    )
    for note in (dpl.notes if dpl else []):
        print(f"NOTE: {note}\n")
    caught: dict[str, int] = {}
    results = []
    start = time.perf_counter()
    warm_up(tables[0], {})
    for table in tables:
        results.append(run_table(table, args, dpl, caught))
    print("\n# Results")
    for res in results:
        print_results(res)
    print_summary(results)
    bench.print_warnings(caught)
    print(f"\nTotal wall time: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
