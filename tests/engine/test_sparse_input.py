"""Sparse input (scipy CSR/CSC and friends) in every DP estimator, optimizer and accountant.

A sparse fit must be the dense fit computed differently: same seed, same batches, same noise,
parameters equal up to float32 rounding. The kernels (row gathers, products, norms) are checked
against their dense counterparts, clipping keeps its sensitivity on sparse rows, and a matrix
whose dense form would take tens of gigabytes fits in a few hundred megabytes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from sklearn.base import clone
from sklearn.utils import get_tags

from skdp import PrivacyWarning
from skdp._engine._factored import (
    Block,
    difference_sq_norms,
    rounding_margin,
    transformed_sq_norms,
    weighted_difference_sum,
)
from skdp._engine._glm import GLMLoss, LinearModel
from skdp._engine._mlp import Activation, MLPModel
from skdp._engine.rows import sparse as _sparse
from skdp._engine.rows.host import rescale_rows
from skdp._engine.rows.sparse import SparseRows
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor
from tests._inventory import CLASSIFIERS, ESTIMATORS, SGD_OPTIMIZERS

RTOL, ATOL = 1e-4, 1e-5
OPTIMIZERS = [
    *((name, None) for name in SGD_OPTIMIZERS),
    ("diff2", {"n_clients": 7}),  # unequal clients: diff2's weighted restart path
]
SMALL = {
    DPMLPClassifier: {"hidden_layer_sizes": (4,)},
    DPMLPRegressor: {"hidden_layer_sizes": (4, 3)},
}


def _data(n: int = 120, d: int = 9, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.35)
    X[:4] = 0.0  # rows entirely zero
    X[:, 3] = 0.0  # a column entirely zero
    X[5, :] = 0.0
    X[5, 0] = 3.0  # one long row, clipped at any reasonable bound
    return X


@pytest.fixture(scope="module")
def X():
    return _data()


@pytest.fixture(params=["sparse_batches", "dense_batches"])
def batches(request, monkeypatch):
    """Run a test with batches gathered as SparseRows (sparse kernels) and, as by default for
    data this narrow, densified from the padded rows (dense kernels)."""
    if request.param == "sparse_batches":
        monkeypatch.setattr(_sparse, "DENSE_BATCH_MAX_ELEMENTS", -1)
    return request.param


def _targets(Estimator, X, multiclass=False):
    if Estimator in CLASSIFIERS:
        if multiclass:
            return np.arange(X.shape[0]) % 3
        return (X[:, 0] + X[:, 1] > 0).astype(int)
    y = X[:, 0] - 0.5 * X[:, 2]
    return np.column_stack([y, -y]) if Estimator is DPMLPRegressor else y


def _params(est) -> np.ndarray:
    arrays = (
        est.coefs_ + est.intercepts_ if hasattr(est, "coefs_") else [est.coef_, est.intercept_]
    )
    return np.concatenate([np.ravel(a) for a in arrays])


def _fit_both(est, X, y, sparse_X=None):
    sparse_X = sp.csr_matrix(X) if sparse_X is None else sparse_X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        dense = clone(est).fit(X, y)
        sparse = clone(est).fit(sparse_X, y)
    return dense, sparse


# --- estimators: sparse fits equal dense fits ----------------------------------------------------
@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize(("optimizer", "optimizer_params"), OPTIMIZERS)
def test_sparse_fit_equals_dense_fit(Estimator, optimizer, optimizer_params, X, batches):
    est = Estimator(
        optimizer=optimizer, optimizer_params=optimizer_params, max_iter=2, random_state=0,
        batch_size="auto" if optimizer == "diff2" else 30, **SMALL.get(Estimator, {}),
    )
    y = _targets(Estimator, X, multiclass=optimizer == "adaclip")
    dense, sparse = _fit_both(est, X, y)
    np.testing.assert_allclose(_params(sparse), _params(dense), rtol=RTOL, atol=ATOL)
    assert sparse.noise_multiplier_ == dense.noise_multiplier_
    assert sparse.privacy_report() == dense.privacy_report()


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_sparse_fit_equals_dense_fit_with_rdp_and_no_privacy(Estimator, X, batches):
    y = _targets(Estimator, X)
    for privacy, accountant in [((1.0, 1e-5), "rdp"), ((float("inf"), 0.0), "pld")]:
        est = Estimator(privacy=privacy, accountant=accountant, max_iter=2, batch_size=30,
                        random_state=1, **SMALL.get(Estimator, {}))
        dense, sparse = _fit_both(est, X, y)
        np.testing.assert_allclose(_params(sparse), _params(dense), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPRidge])
@pytest.mark.parametrize("accountant", ["pld", "last_iterate"])
def test_max_row_norm_with_sparse_input(Estimator, accountant, X, batches):
    est = Estimator(
        max_row_norm=0.8, accountant=accountant, eta0=0.3, batch_size=30, max_iter=2,
        random_state=0,
        **({"projection_radius": 5.0, "average": False} if accountant == "last_iterate" else {}),
    )
    dense, sparse = _fit_both(est, X, _targets(Estimator, X))
    np.testing.assert_allclose(_params(sparse), _params(dense), rtol=RTOL, atol=ATOL)
    assert "max_row_norm=0.8" in sparse.privacy_report()


def test_rescale_rows_on_sparse_rows_matches_dense_and_leaves_input_alone(X):
    Xs = sp.csc_matrix(X)  # any format; the result is canonical CSR
    before = Xs.copy()
    scaled = rescale_rows(Xs, 0.8)
    assert sp.issparse(scaled) and scaled.format == "csr" and scaled.dtype == np.float64
    np.testing.assert_allclose(scaled.toarray(), rescale_rows(X, 0.8), rtol=1e-12)
    norms = np.sqrt(np.asarray(scaled.multiply(scaled).sum(axis=1))).ravel()
    assert norms.max() <= 0.8 and norms[5] == pytest.approx(0.8, rel=1e-5)
    assert (Xs != before).nnz == 0


@pytest.mark.parametrize(
    "convert",
    [sp.csc_matrix, sp.coo_matrix, sp.lil_matrix, sp.csr_array, sp.csc_array,
     lambda A: sp.csr_matrix(A.astype(np.float32)),
     lambda A: _with_int64_indices(sp.csr_matrix(A))],
    ids=["csc", "coo", "lil", "csr_array", "csc_array", "float32", "int64_indices"],
)
def test_every_sparse_format_fits_like_csr(convert, X):
    y = _targets(DPLogisticRegression, X)
    est = DPLogisticRegression(max_iter=2, batch_size=30, random_state=0)
    reference = clone(est).fit(sp.csr_matrix(X), y)
    other = clone(est).fit(convert(X), y)
    np.testing.assert_allclose(_params(other), _params(reference), rtol=RTOL, atol=ATOL)


def _with_int64_indices(A):
    A.indices = A.indices.astype(np.int64)
    A.indptr = A.indptr.astype(np.int64)
    return A


def test_duplicate_entries_are_summed_before_norms_are_taken():
    # Row 0 stores (0, 0) twice: its value is 2.0, of norm 2.0, not sqrt(1 + 1).
    A = sp.csr_matrix((np.array([1.0, 1.0, 0.5]), np.array([0, 0, 1]), np.array([0, 2, 3])),
                      shape=(2, 3))
    assert not A.has_canonical_format
    rows = SparseRows.from_scipy(A, torch.float32, torch.device("cpu"))
    np.testing.assert_allclose(rows.row_sq_norms_float64().numpy(), [4.0, 0.25])
    assert A.nnz == 3  # the caller's matrix is left as it was
    scaled = rescale_rows(A, 1.0)
    assert scaled.toarray()[0, 0] == pytest.approx(1.0, rel=1e-5)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_predictions_mix_dense_and_sparse(Estimator, X):
    y = _targets(Estimator, X)
    Xs = sp.csr_matrix(X)
    dense, sparse = _fit_both(Estimator(max_iter=2, batch_size=30, random_state=0,
                                        **SMALL.get(Estimator, {})), X, y)
    methods = [m for m in ("predict", "predict_proba", "decision_function")
               if hasattr(dense, m)]
    for method in methods:
        expected = getattr(dense, method)(X)
        for model, data in [(dense, Xs), (dense, sp.csc_matrix(X)), (sparse, X), (sparse, Xs)]:
            np.testing.assert_allclose(getattr(model, method)(data), expected,
                                       rtol=RTOL, atol=ATOL)
    assert sparse.score(X, y) == pytest.approx(dense.score(Xs, y), abs=1e-6)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_a_matrix_without_stored_values_fits_like_zeros(Estimator, batches):
    X = np.zeros((40, 4))
    y = _targets(Estimator, _data(40, 4))
    for optimizer in ("noisy_sgd", "diff2"):
        est = Estimator(optimizer=optimizer, max_iter=2, random_state=0, **SMALL.get(Estimator, {}))
        dense, sparse = _fit_both(est, X, y, sparse_X=sp.csr_matrix((40, 4)))
        np.testing.assert_allclose(_params(sparse), _params(dense), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_sparse_tag_is_set(Estimator):
    assert get_tags(Estimator()).input_tags.sparse is True


def test_values_beyond_float32_are_refused_in_sparse_input(X):
    Xs = sp.csr_matrix(X)
    Xs.data[0] = 1e39
    with pytest.raises(ValueError, match="magnitude above"):
        DPLogisticRegression(max_iter=1).fit(Xs, _targets(DPLogisticRegression, X))


# --- kernels -------------------------------------------------------------------------------------
def _rows(A) -> SparseRows:
    return SparseRows.from_scipy(sp.csr_matrix(A), torch.float32, torch.device("cpu"))


INDICES = ([7, 0, 5, 3, 119, 2], [], list(range(120)))


def test_small_batches_of_narrow_rows_are_gathered_dense_and_exact(X):
    rows, dense = _rows(X), torch.tensor(X, dtype=torch.float32)
    for idx in INDICES:
        idx = torch.tensor(idx, dtype=torch.int64)
        batch = rows.index_select(0, idx)
        assert isinstance(batch, torch.Tensor)
        assert torch.equal(batch, dense.index_select(0, idx))
    # Too wide for a dense batch, or rows too uneven for a compact padded copy: sparse rows.
    assert isinstance(_rows(np.hstack([X] * 200)).index_select(0, idx), SparseRows)
    uneven = np.eye(120, 36)
    uneven[7] = 1.0  # one full row: padding every row to 36 values would be 28 times the storage
    assert isinstance(_rows(uneven).index_select(0, idx[:5]), SparseRows)


def test_gathers_products_and_norms_match_dense(X, monkeypatch):
    monkeypatch.setattr(_sparse, "DENSE_BATCH_MAX_ELEMENTS", -1)
    rows, dense = _rows(X), torch.tensor(X, dtype=torch.float32)
    for idx in INDICES:
        idx = torch.tensor(idx, dtype=torch.int64)
        batch, expected = rows.index_select(0, idx), dense.index_select(0, idx)
        assert isinstance(batch, SparseRows) and batch.shape == tuple(expected.shape)
        W = torch.randn(9, 4, generator=torch.Generator().manual_seed(0))
        R = torch.randn(idx.shape[0], 4, generator=torch.Generator().manual_seed(1))
        torch.testing.assert_close(batch.mm(W), expected @ W, rtol=1e-5, atol=1e-6)
        for kernel in (batch.t_mm_scipy, batch.t_mm_scatter):
            out = torch.full((9, 4), float("nan"))
            torch.testing.assert_close(kernel(R, out), expected.T @ R, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(batch.square().mm(W), expected.square() @ W)
        np.testing.assert_allclose(
            batch.row_sq_norms_float64().numpy(),
            np.linalg.norm(expected.double().numpy(), axis=1) ** 2, rtol=1e-12,
        )


MODELS = {
    "logistic": LinearModel(9, 1, GLMLoss.LOGISTIC, True),
    "softmax": LinearModel(9, 3, GLMLoss.SOFTMAX, False),
    "mlp": MLPModel((9, 5, 3), Activation.TANH, GLMLoss.SQUARED),
}


def _targets_for(model, n):
    g = torch.Generator().manual_seed(3)
    if model.loss is GLMLoss.LOGISTIC:
        return torch.randint(0, 2, (n, 1), generator=g).float()
    if model.loss is GLMLoss.SOFTMAX:
        return torch.randint(0, 3, (n,), generator=g)
    return torch.randn(n, 3, generator=g)


@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_model_kernels_on_sparse_batches_match_dense(model, X):
    rows, dense = _rows(X), torch.tensor(X, dtype=torch.float32)
    params = model.init_params(torch.device("cpu"), np.random.default_rng(0))
    params.add_(0.3 * torch.randn(params.shape, generator=torch.Generator().manual_seed(2)))
    other = params + 0.05 * torch.randn(params.shape, generator=torch.Generator().manual_seed(4))
    y = _targets_for(model, X.shape[0])
    torch.testing.assert_close(model.example_aux(rows), model.example_aux(dense))
    aux = model.example_aux(dense)
    for clip in (None, 0.5):
        got = model.clipped_grad_sum(params, rows, y, aux, clip, out=torch.empty_like(params))
        want = model.clipped_grad_sum(params, dense, y, aux, clip, out=torch.empty_like(params))
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    # adaclip's transformed norms and diff2's difference norms and sums.
    w = torch.rand(params.shape, generator=torch.Generator().manual_seed(5)) + 0.5
    a = 0.1 * torch.randn(params.shape, generator=torch.Generator().manual_seed(6))
    sums = []
    for data in (rows, dense):
        blocks = model.gradient_blocks(params, data, y)
        previous = model.gradient_blocks(other, data, y)
        norms = transformed_sq_norms(blocks, model.param_blocks(w), model.param_blocks(a),
                                     float((w.double() * a.double() ** 2).sum()))
        diff = difference_sq_norms(blocks, previous)
        out = torch.empty_like(params)
        weighted_difference_sum(blocks, previous, torch.full((X.shape[0],), 0.5),
                                model.param_blocks(out))
        sums.append((norms, diff, out))
    for got, want in zip(*sums, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_one_sparse_row_moves_the_clipped_sum_by_at_most_the_bound(model, X):
    # Add/remove one row: the clipped sum moves by at most C, however large the row.
    params = model.init_params(torch.device("cpu"), np.random.default_rng(0))
    clip = 0.7
    for value in (1.0, 1e6, 1e30):
        extra = np.zeros((1, X.shape[1]))
        extra[0, [0, 4]] = value
        with_row = np.vstack([X, extra])
        y = _targets_for(model, with_row.shape[0])
        big, small = _rows(with_row), _rows(X)
        sums = []
        for data, yb in ((big, y), (small, y[: X.shape[0]])):
            aux = model.example_aux(data)
            sums.append(model.clipped_grad_sum(params, data, yb, aux, clip,
                                               out=torch.empty_like(params)))
        assert float(torch.linalg.vector_norm((sums[0] - sums[1]).double())) <= clip * (1 + 1e-6)


def test_factored_norms_of_sparse_batches_are_per_example_norms(X):
    # The clipping norms of sparse batches are those of the materialised per-example gradients.
    model = LinearModel(9, 1, GLMLoss.LOGISTIC, True)
    params = 0.5 * torch.randn(model.n_params, generator=torch.Generator().manual_seed(0))
    y = _targets_for(model, X.shape[0])
    dense = torch.tensor(X, dtype=torch.float32)
    grads = model.per_example_gradients(params, dense, y)
    r = model.residuals(model.decision(params, _rows(X)), y)
    norms = model.per_example_norms(r, model.example_aux(_rows(X)))
    torch.testing.assert_close(norms, torch.linalg.vector_norm(grads, dim=1), rtol=1e-5,
                               atol=1e-7)
    assert Block(_rows(X), r, True, h_finite=True).h.shape == (120, 9)


def test_rounding_margin_never_turns_negative_for_very_wide_inputs():
    # Hashed features make 2**25 columns cheap; the float32 error bound is then void, and the
    # margin must make clipping total rather than negative (too weak).
    wide = _rows(sp.csr_matrix((2, 2**25)))
    assert rounding_margin([Block(wide, torch.ones(2, 1), True, h_finite=True)],
                           torch.float32) == float("inf")
    narrow = Block(_rows(np.eye(2)), torch.ones(2, 1), True, h_finite=True)
    assert 0 < rounding_margin([narrow], torch.float32) < 1e-5


# --- scale: a matrix whose dense form would not fit in memory ------------------------------------
def _peak_rss_kib() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPMLPClassifier])
def test_a_huge_sparse_matrix_fits_without_a_dense_copy(Estimator):
    n, d = 5_000, 2**20  # dense: 21 GB in float32, 42 GB in float64
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(n), 8)
    cols = rng.integers(0, d, size=rows.size)
    X = sp.csr_matrix((rng.random(rows.size) / 3, (rows, cols)), shape=(n, d))
    y = (cols.reshape(n, 8)[:, 0] % 2).astype(int)
    est = Estimator(max_iter=1, random_state=0,
                    **({"hidden_layer_sizes": (2,)} if Estimator is DPMLPClassifier else {}))
    measured = _reset_peak_rss()
    before = _peak_rss_kib()
    est.fit(X, y)
    assert est.predict(X[:100]).shape == (100,)
    if measured and before is not None:
        grown_mib = (_peak_rss_kib() - before) / 1024
        assert grown_mib < 1024, f"the fit grew the resident set by {grown_mib:.0f} MiB"
