"""Compressed sparse tensors (CSR, CSC, BSR, BSC): construction, indices against hand-made
ones, round trips through every layout, products and elementwise ops against NumPy,
finite-difference gradients, invariant checks and errors."""
import copy
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support")]

M = np.array([[0.0, 1.0, 0.0, 0.0],
              [2.0, 0.0, 3.0, 0.0],
              [0.0, 0.0, 0.0, 4.0],
              [5.0, 0.0, 0.0, 0.0]])
LAYOUTS = ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]


def to_layout(t, layout, blocksize=(2, 2)):
    if layout in ("sparse_bsr", "sparse_bsc"):
        return getattr(t, "to_" + layout)(blocksize)
    return getattr(t, "to_" + layout)()


def test_csr_indices_by_hand():
    c = ember.tensor(M).to_sparse_csr()
    assert c.layout == ember.sparse_csr and c.is_sparse_csr and not c.is_sparse
    assert c.crow_indices().tolist() == [0, 1, 3, 4, 5]
    assert c.col_indices().tolist() == [1, 0, 2, 3, 0]
    assert c.values().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert (c._nnz(), c.sparse_dim(), c.dense_dim()) == (5, 2, 0)
    assert tuple(c.shape) == (4, 4) and c.dtype == ember.float64


def test_csc_and_blocks_by_hand():
    c = ember.tensor(M).to_sparse_csc()
    assert c.ccol_indices().tolist() == [0, 2, 3, 4, 5]
    assert c.row_indices().tolist() == [1, 3, 0, 1, 2]
    assert c.values().tolist() == [2.0, 5.0, 1.0, 3.0, 4.0]
    b = ember.tensor(M).to_sparse_bsr((2, 2))
    assert b.crow_indices().tolist() == [0, 2, 4]
    assert b.col_indices().tolist() == [0, 1, 0, 1]
    np.testing.assert_array_equal(b.values().numpy()[1], M[:2, 2:])
    bc = ember.tensor(M).to_sparse_bsc(2)
    assert bc.ccol_indices().tolist() == [0, 2, 4]
    np.testing.assert_array_equal(bc.values().numpy()[1], M[2:, :2])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_round_trips(layout):
    c = to_layout(ember.tensor(M), layout)
    np.testing.assert_array_equal(c.to_dense().numpy(), M)
    np.testing.assert_array_equal(c.to_sparse_coo().to_dense().numpy(), M)
    for target in LAYOUTS:
        if layout in ("sparse_bsr", "sparse_bsc") and target in ("sparse_csr", "sparse_csc"):
            continue  # PyTorch refuses block -> non-block
        np.testing.assert_array_equal(to_layout(c, target).to_dense().numpy(), M)
    np.testing.assert_array_equal(
        ember.tensor(M).to_sparse().to_sparse(layout=getattr(ember, layout),
                                              blocksize=(2, 2) if "b" == layout[7] else None)
        .to_dense().numpy(), M)


def test_batched_and_hybrid():
    rng = np.random.default_rng(0)
    batch = rng.standard_normal((3, 4, 5))  # every element nonzero: equal counts per batch
    c = ember.tensor(batch).to_sparse_csr()
    assert tuple(c.crow_indices().shape) == (3, 5) and c._nnz() == 20
    np.testing.assert_array_equal(c.to_dense().numpy(), batch)
    hybrid = rng.standard_normal((4, 5, 2)) * (rng.random((4, 5, 1)) < 0.5)
    h = ember.tensor(hybrid).to_sparse_csr(dense_dim=1)
    assert h.dense_dim() == 1 and tuple(h.values().shape)[1:] == (2,)
    np.testing.assert_array_equal(h.to_dense().numpy(), hybrid)
    np.testing.assert_array_equal(h.to_sparse_csc().to_dense().numpy(), hybrid)
    with pytest.raises(RuntimeError, match="same number of specified elements per batch"):
        ember.arange(8.0).reshape(2, 2, 2).to_sparse_csr()


def test_factories():
    c = ember.sparse_csr_tensor([0, 1, 3], [1, 0, 4], [1.0, 2.0, 3.0])
    assert tuple(c.shape) == (2, 5)  # size from the indices
    c = ember.sparse_csc_tensor([0, 1, 3], [1, 0, 4], [1.0, 2.0, 3.0])
    assert tuple(c.shape) == (5, 2)
    b = ember.sparse_bsr_tensor([0, 1, 3], [1, 0, 4], ember.ones(3, 2, 2))
    assert tuple(b.shape) == (4, 10)
    c = ember.sparse_compressed_tensor([0, 2], [0, 1], [1, 2], (2, 1), layout=ember.sparse_csc,
                                       dtype=ember.float32, requires_grad=True)
    assert c.dtype == ember.float32 and c.requires_grad and c.is_leaf
    np.testing.assert_array_equal(c.to_dense().detach().numpy(), [[1.0], [2.0]])
    with pytest.raises(RuntimeError, match="expected sparse compressed tensor layout but got "
                                           "none"):
        ember.sparse_compressed_tensor([0, 1], [0], [1.0])


def test_factory_warns_once_about_beta_state():
    from ember._sparse import compressed_factory
    compressed_factory._BETA_WARNED[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.sparse_csr_tensor([0, 1], [0], [1.0], (1, 1), check_invariants=True)
        ember.sparse_csr_tensor([0, 1], [0], [1.0], (1, 1), check_invariants=True)
    assert sum("beta state" in str(w.message) for w in caught) == 1


@pytest.mark.parametrize("comp, plain, size, message", [
    ([1, 1, 3], [1, 0, 2], (2, 3), r"`crow_indices\[..., 0\] == 0` is not satisfied"),
    ([0, 1, 2], [1, 0, 2], (2, 3), r"`crow_indices\[..., -1\] == nnz` is not satisfied"),
    ([0, 1, 3], [1, 0, 3], (2, 3), r"`0 <= col_indices < ncols` is not satisfied"),
    ([0, 1, 3], [1, 2, 0], (2, 3), "are sorted and distinct"),
    ([0, 1, 3], [1, 0, 2], (3, 3), r"number of rows \+ 1 \(=4\), but got 3"),
])
def test_invariants(comp, plain, size, message):
    with pytest.raises(RuntimeError, match=message):
        ember.sparse_csr_tensor(comp, plain, [1.0, 2.0, 3.0], size, check_invariants=True)
    with ember.sparse.check_sparse_tensor_invariants():
        with pytest.raises(RuntimeError, match=message):
            ember.sparse_csr_tensor(comp, plain, [1.0, 2.0, 3.0], size)
    ember.sparse_csr_tensor(comp, plain, [1.0, 2.0, 3.0], size)  # unchecked: accepted


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_bsr"])
def test_products_against_numpy(layout):
    rng = np.random.default_rng(1)
    b = rng.standard_normal((4, 3))
    c = to_layout(ember.tensor(M), layout)
    np.testing.assert_allclose((c @ ember.tensor(b)).numpy(), M @ b)
    np.testing.assert_allclose(ember.sparse.mm(c, ember.tensor(b)).numpy(), M @ b)
    np.testing.assert_allclose(c.mv(ember.tensor(b[:, 0])).numpy(), M @ b[:, 0])
    np.testing.assert_allclose(ember.addmm(ember.ones(4, 3), c, ember.tensor(b), beta=2,
                                           alpha=0.5).numpy(), 2 + 0.5 * (M @ b))
    if layout != "sparse_bsr":
        a = rng.standard_normal((2, 4))
        np.testing.assert_allclose((ember.tensor(a) @ c).numpy(), a @ M)


def test_elementwise_sum_and_transpose():
    c = ember.tensor(M).to_sparse_csr()
    np.testing.assert_allclose((c * 2).to_dense().numpy(), M * 2)
    np.testing.assert_allclose((-c).to_dense().numpy(), -M)
    np.testing.assert_allclose(c.sin().to_dense().numpy(), np.sin(M))
    np.testing.assert_allclose((c + c).to_dense().numpy(), 2 * M)
    np.testing.assert_allclose((c + ember.ones(4, 4)).numpy(), M + 1)
    assert float(c.sum()) == M.sum()
    np.testing.assert_allclose(c.sum(0, keepdim=True).to_dense().numpy(), M.sum(0, keepdims=True))
    np.testing.assert_allclose(c.sum(1, keepdim=True).to_dense().numpy(), M.sum(1, keepdims=True))
    t = c.t()
    assert t.layout == ember.sparse_csc
    np.testing.assert_array_equal(t.to_dense().numpy(), M.T)
    bt = ember.tensor(M).to_sparse_bsr(2).t()
    assert bt.layout == ember.sparse_bsc
    np.testing.assert_array_equal(bt.to_dense().numpy(), M.T)
    s = ember.sparse.sampled_addmm(c, ember.ones(4, 2), ember.ones(2, 4), beta=0.5)
    np.testing.assert_allclose(s.to_dense().numpy(), (M * 0.5 + 2) * (M != 0))


def test_gradients_finite_differences():
    rng = np.random.default_rng(2)
    b = ember.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    vals = ember.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=ember.float64, requires_grad=True)

    def csr(v):
        return ember.sparse_csr_tensor([0, 1, 3, 4, 5], [1, 0, 2, 3, 0], v, (4, 4))

    assert gradcheck(lambda v, d: csr(v) @ d, (vals, b))
    assert gradcheck(lambda v, d: d.t() @ csr(v), (vals, b))
    assert gradcheck(lambda v: (csr(v) * 3).sin().to_dense(), (vals,))
    assert gradcheck(lambda v: csr(v).to_sparse_csc().to_dense(), (vals,))
    assert gradcheck(lambda v: csr(v).to_sparse_bsr(2).to_dense(), (vals,))
    assert gradcheck(lambda v: csr(v).sum(0, keepdim=True).to_dense(), (vals,))
    assert gradcheck(lambda d: ember.tensor(M).to_sparse_csr() @ d, (b,))


def test_leaf_gradient_keeps_the_layout():
    c = ember.tensor(M).to_sparse_csr().requires_grad_()
    (c * 2).to_dense().sum().backward()
    g = c.grad
    assert g.layout == ember.sparse_csr
    assert g.col_indices().tolist() == [1, 0, 2, 3, 0]
    assert g.values().tolist() == [2.0] * 5


def test_errors():
    c = ember.tensor(M).to_sparse_csr()
    with pytest.raises(RuntimeError, match="ccol_indices expected sparse column compressed "
                                           "tensor layout but got SparseCsr"):
        c.ccol_indices()
    with pytest.raises(RuntimeError, match="crow_indices expected sparse row compressed tensor "
                                           "layout but got Strided"):
        ember.ones(2, 2).crow_indices()
    with pytest.raises(RuntimeError, match="unsupported tensor layout: SparseCsr"):
        c.exp()
    with pytest.raises(NotImplementedError, match="'aten::view' with arguments from the "
                                                  "'SparseCsrCPU' backend"):
        c.view(-1)
    with pytest.raises(RuntimeError, match="keepdim=False is unsupported"):
        c.sum(0)
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(4x4 and 3x2\)"):
        c @ ember.ones(3, 2)
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        c @ ember.ones(4, 2)
    with pytest.raises(RuntimeError, match=r"must be divisible by given blocksize \(3,3\)"):
        ember.tensor(M).to_sparse_bsr((3, 3))
    with pytest.raises(RuntimeError, match="without blocksize argument given is not supported"):
        ember.tensor(M).to_sparse(layout=ember.sparse_bsr)
    with pytest.raises(NotImplementedError, match="Cannot access storage"):
        copy.deepcopy(c)


def test_save_is_not_implemented(tmp_path):
    with pytest.raises(NotImplementedError):
        ember.save(ember.tensor(M).to_sparse_csr(), tmp_path / "c.pt")


def test_products_follow_in_place_changes_of_the_indices():
    """Products reuse the expanded rows only while the index tensors are unchanged."""
    x = ember.tensor(np.arange(8.0).reshape(4, 2))
    c = ember.tensor(M).to_sparse_csr()
    np.testing.assert_allclose((c @ x).numpy(), M @ x.numpy())
    other = M.T.copy()  # same number of elements, other places
    c.copy_(ember.tensor(other).to_sparse_csr())
    np.testing.assert_allclose((c @ x).numpy(), other @ x.numpy())
    c.add_(ember.eye(4, dtype=ember.float64).to_sparse_csr())
    np.testing.assert_allclose((c @ x).numpy(), (other + np.eye(4)) @ x.numpy())
    c.zero_()
    assert c._nnz() == 0 and c.crow_indices().tolist() == [0, 0, 0, 0, 0]
    np.testing.assert_allclose((c @ x).numpy(), np.zeros((4, 2)))
