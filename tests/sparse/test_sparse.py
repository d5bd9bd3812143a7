"""Sparse COO tensors without PyTorch: gradients by finite differences, the dispatch that
lives only as long as sparse tensors do, errors, and sparse-gradient training."""
import gc
import warnings

import numpy as np
import pytest

import ember
from ember._torch_function import DISPATCHING
from ember.autograd import gradcheck

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]


def values64(requires_grad=True):
    rng = np.random.default_rng(1)
    return ember.tensor(rng.standard_normal(5), dtype=ember.float64,
                        requires_grad=requires_grad)


def sp(v, shape=(3, 4)):
    return ember.sparse_coo_tensor(IDX, v, shape)


def test_to_dense_sums_duplicates_and_coalesce_sorts():
    s = sp(ember.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    expected = np.zeros((3, 4))
    for (r, c), v in zip(zip(*IDX), [1.0, 2.0, 3.0, 4.0, 5.0]):
        expected[r, c] += v
    assert s.to_dense().tolist() == expected.tolist()
    c = s.coalesce()
    assert c.is_coalesced() and c._nnz() == 4
    assert c.indices().tolist() == [[0, 1, 1, 2], [2, 0, 2, 1]]
    assert c.values().tolist() == [5.0, 2.0, 3.0, 5.0]


@pytest.mark.parametrize("fn", [
    lambda v: sp(v).to_dense(),
    lambda v: sp(v).coalesce().values(),
    lambda v: ember.sparse.mm(sp(v), ember.arange(8.0, dtype=ember.float64).reshape(4, 2)),
    lambda v: ember.arange(6.0, dtype=ember.float64).reshape(2, 3) @ sp(v),
    lambda v: ember.sparse.softmax(sp(v), 1).to_dense(),
    lambda v: ember.sparse.log_softmax(sp(v), 0).to_dense(),
    lambda v: ember.sparse.sum(sp(v), 0).to_dense(),
    lambda v: (sp(v) * sp(v)).to_dense(),
    lambda v: sp(v).abs().pow(1.5).to_dense(),
])
def test_gradients_through_values(fn):
    assert gradcheck(fn, (values64(),))


def test_gradient_wrt_the_dense_operand():
    s = sp(values64(requires_grad=False))
    d = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda d: ember.sparse.mm(s, d), (d,))


def test_leaf_gradient_is_sparse_at_its_elements_once():
    s = ember.sparse_coo_tensor(IDX, [1.0, 2.0, 3.0, 4.0, 5.0], (3, 4), requires_grad=True)
    w = ember.arange(12.0).reshape(3, 4)
    (s.to_dense() * w).sum().backward()
    g = s.grad
    assert g.is_sparse and g.is_coalesced()
    # each specified element once, with the dense gradient there (w)
    assert g.to_dense().tolist() == [[0, 0, 2, 0], [4, 0, 6, 0], [0, 9, 0, 0]]


def test_dispatch_is_held_only_while_sparse_tensors_live():
    gc.collect()
    before = DISPATCHING[0]
    s = ember.tensor([[0.0, 1.0]]).to_sparse()
    assert DISPATCHING[0]
    del s
    gc.collect()
    assert DISPATCHING[0] == before


def test_ops_without_sparse_kernels_raise_pytorchs_error():
    s = sp(ember.ones(5))
    for call, name in [(lambda: s.exp(), "exp"), (lambda: s.max(), "max"),
                       (lambda: s.view(12), "view"), (lambda: ember.sigmoid(s), "sigmoid")]:
        with pytest.raises(NotImplementedError,
                           match=f"Could not run 'aten::{name}' with arguments from the "
                                 "'SparseCPU' backend"):
            call()


@pytest.mark.parametrize("call,error,message", [
    (lambda: ember.sparse_coo_tensor([[0, 1]], [1.0]), RuntimeError,
     "indices and values must have same nnz, but got nnz from indices: 2, nnz from values: 1"),
    (lambda: ember.sparse_coo_tensor([0, 1], [1.0, 2.0]), RuntimeError,
     "indices must be sparse_dim x nnz"),
    (lambda: ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2, 2)), RuntimeError,
     r"number of dimensions must be sparse_dim \(1\) \+ dense_dim \(0\), but got 2"),
    (lambda: sp(ember.ones(5)) + ember.ones(3, 4), RuntimeError,
     r"add\(sparse, dense\) is not supported"),
    (lambda: sp(ember.ones(5)).indices(), RuntimeError,
     "Cannot get indices on an uncoalesced tensor"),
    (lambda: ember.ones(2).values(), RuntimeError,
     "values expected sparse tensor layout but got Strided"),
    (lambda: sp(ember.ones(5)).numpy(), TypeError, "can't convert Sparse layout tensor"),
    (lambda: ember.ones(2, 2).to_sparse(3), RuntimeError,
     r"sparse_dim argument must be in \[0,2\] but got 3"),
])
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_invariant_checks():
    with ember.sparse.check_sparse_tensor_invariants():
        assert ember.sparse.check_sparse_tensor_invariants.is_enabled()
        with pytest.raises(RuntimeError, match="for dim 1, size is 2 but found index 2"):
            ember.sparse_coo_tensor([[0, 1], [0, 2]], [1.0, 2.0], (2, 2))
    assert not ember.sparse.check_sparse_tensor_invariants.is_enabled()
    with pytest.raises(RuntimeError, match="found negative index"):
        ember.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (2,), check_invariants=True)


def test_implicit_checks_warn_once():
    from ember import _sparse
    _sparse.INVARIANTS["warned"] = False
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ember.sparse_coo_tensor([[0]], [1.0], (1,))
        ember.sparse_coo_tensor([[0]], [1.0], (1,))
    assert [str(w.message)[:44] for w in seen] == ["Sparse invariant checks are implicitly disab"]


def test_embedding_sparse_gradient_and_sgd_step():
    emb = ember.nn.Embedding(5, 2, sparse=True, padding_idx=0)
    before = emb.weight.detach().clone()
    opt = ember.optim.SGD(emb.parameters(), lr=0.5)
    x = ember.tensor([[0, 2, 2], [4, 0, 2]])
    emb(x).sum().backward()
    g = emb.weight.grad
    assert g.is_sparse and not g.is_coalesced()
    assert g._indices().tolist() == [[2, 2, 4, 2]]  # the padding lookups left out
    opt.step()
    moved = (emb.weight.detach() - before).numpy()
    # the step is exact, the subtraction rounds (float32 weights drawn at random)
    np.testing.assert_allclose(moved, [[0, 0], [0, 0], [-1.5, -1.5], [0, 0], [-0.5, -0.5]],
                               atol=1e-6)


def test_sparse_adam_only_touches_looked_up_rows():
    emb = ember.nn.Embedding(4, 3, sparse=True)
    opt = ember.optim.SparseAdam(emb.parameters(), lr=0.01)
    before = emb.weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        emb(ember.tensor([1, 3])).pow(2).sum().backward()
        opt.step()
    changed = (emb.weight.detach() != before).any(1).tolist()
    assert changed == [False, True, False, True]
    # Adam's first step moves each element by lr (the sign of its gradient)
    emb2 = ember.nn.Embedding(2, 1, sparse=True)
    w0 = emb2.weight.detach().clone()
    opt2 = ember.optim.SparseAdam(emb2.parameters(), lr=0.01)
    emb2(ember.tensor([1])).sum().backward()
    opt2.step()
    assert abs(float(emb2.weight[1, 0] - w0[1, 0]) + 0.01) < 1e-6


def test_dense_optimizers_refuse_sparse_gradients():
    emb = ember.nn.Embedding(3, 2, sparse=True)
    emb(ember.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match="Adam does not support sparse gradients, please "
                                           "consider SparseAdam instead"):
        ember.optim.Adam(emb.parameters()).step()
    with pytest.raises(RuntimeError, match="RMSprop does not support sparse gradients"):
        ember.optim.RMSprop(emb.parameters()).step()
    emb.weight.grad = None
    emb.weight.sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        ember.optim.SparseAdam(emb.parameters()).step()


def test_dense_tensor_sparse_methods():
    t = ember.tensor([[0.0, 2.0], [0.0, 0.0]])
    assert t.to_dense() is t and t.sparse_dim() == 0 and t.dense_dim() == 2
    assert t.layout == ember.strided and not t.is_sparse
    s = t.to_sparse()
    assert s.layout == ember.sparse_coo and s.to_sparse() is s
    assert s.to_dense().tolist() == t.tolist()


def test_copies_pickles_and_formatting():
    import copy
    import pickle
    s = ember.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (3,), requires_grad=True)
    for made in (copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
        assert made.is_sparse and made.requires_grad and made is not s
        assert made.to_dense().tolist() == [1.0, 0.0, 2.0]
    assert f"{s}" == repr(s)
    m = ember.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse()
    assert m.T.to_dense().tolist() == [[0.0, 2.0], [1.0, 0.0]]
    assert m.itemsize == 4


def test_sparse_tensors_on_the_cuda_stand_in(fake_cuda):
    """Indices and values on the device: the ops run there, results stay there."""
    s = ember.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], (2, 3)).cuda()
    assert s.device.type == "cuda" and s.is_cuda and s._indices().is_cuda
    d = ember.arange(12.0).reshape(3, 4).cuda().requires_grad_()
    out = ember.sparse.mm(s, d)
    assert out.is_cuda
    out.sum().backward()
    assert d.grad.is_cuda
    assert out.cpu().tolist() == (s.cpu().to_dense() @ ember.arange(12.0).reshape(3, 4)).tolist()
    assert s.coalesce().to_dense().cpu().tolist() == [[0.0, 0.0, 1.0], [2.0, 0.0, 3.0]]
    assert (s * 2).sum().item() == 12.0
    emb = ember.nn.Embedding(4, 2, sparse=True).cuda()
    opt = ember.optim.SparseAdam(emb.parameters(), lr=0.1)
    emb(ember.tensor([1, 3]).cuda()).sum().backward()
    assert emb.weight.grad.is_sparse and emb.weight.grad.is_cuda
    opt.step()
    assert emb.weight.is_cuda
