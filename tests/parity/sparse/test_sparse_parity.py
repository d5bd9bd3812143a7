"""Sparse COO tensors against PyTorch's: construction, conversion, coalescing, arithmetic,
products and their gradients, reductions, shape ops, errors, and nn.Embedding(sparse=True)
training with the optimizers that take sparse gradients."""
import warnings

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # (0, 2) twice: uncoalesced
V = [0.5, -1.5, 2.0, 0.25, 3.0]
SHAPE = (3, 4)
DTYPES = [np.float32, np.float64]
TOL = {np.float32: 1e-5, np.float64: 1e-12}


def pair(values=V, indices=IDX, shape=SHAPE, dtype=np.float32, requires_grad=False):
    v = np.asarray(values, dtype=dtype)
    out = []
    for lib in (ember, torch):
        out.append(lib.sparse_coo_tensor(lib.tensor(indices), lib.tensor(v), shape,
                                         requires_grad=requires_grad))
    return out


def dense_of(t):
    t = t.to_dense() if t.is_sparse else t
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def same(a, b, tol=1e-6, layout_flags=True):
    assert a.is_sparse == b.is_sparse
    assert tuple(a.shape) == tuple(b.shape)
    if a.is_sparse:
        assert a.is_coalesced() == b.is_coalesced() or not layout_flags
        assert a.sparse_dim() == b.sparse_dim() and a.dense_dim() == b.dense_dim()
    np.testing.assert_allclose(dense_of(a), dense_of(b), rtol=tol, atol=tol)


def test_construction_repr_and_metadata():
    e, t = pair()
    assert repr(e) == repr(t)
    assert (e._nnz(), e.sparse_dim(), e.dense_dim(), e.is_coalesced()) == \
        (t._nnz(), t.sparse_dim(), t.dense_dim(), t.is_coalesced())
    assert e.layout == ember.sparse_coo and e.is_sparse and not ember.ones(1).is_sparse
    assert tuple(e.shape) == tuple(t.shape) and e.dim() == t.dim() and e.numel() == t.numel()
    e, t = pair(requires_grad=True)
    assert repr(e) == repr(t)
    # the size inferred from the indices; dense dims from the values
    for lib in (ember, torch):
        s = lib.sparse_coo_tensor(lib.tensor([[0, 5]]), lib.tensor([[1., 2.], [3., 4.]]))
        assert tuple(s.shape) == (6, 2) and s.dense_dim() == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_to_dense_coalesce_indices_values(dtype):
    e, t = pair(dtype=dtype)
    same(e, t)
    ec, tc = e.coalesce(), t.coalesce()
    assert ec.indices().tolist() == tc.indices().tolist()
    np.testing.assert_allclose(ec.values().tolist(), tc.values().tolist(), rtol=TOL[dtype])
    assert e._indices().tolist() == t._indices().tolist()


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_dense_to_sparse(sparse_dim):
    x = np.array([[[0., 1.], [0., 0.]], [[2., 0.], [3., 4.]], [[0., 0.], [0., 0.]]],
                 dtype=np.float32)
    args = () if sparse_dim is None else (sparse_dim,)
    e, t = ember.tensor(x).to_sparse(*args), torch.tensor(x).to_sparse(*args)
    same(e, t)
    assert e.indices().tolist() == t.indices().tolist()
    assert e.values().tolist() == t.values().tolist()


def _ops():
    d = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    return {
        "s+s": lambda lib, s, s2: s + s2,
        "s-s": lambda lib, s, s2: s - s2,
        "add alpha": lambda lib, s, s2: lib.add(s, s2, alpha=2.5),
        "d+s": lambda lib, s, s2: lib.tensor(d) + s,
        "d-s": lambda lib, s, s2: lib.tensor(d) - s,
        "s*2": lambda lib, s, s2: s * 2,
        "2*s": lambda lib, s, s2: 2 * s,
        "s*d": lambda lib, s, s2: s * lib.tensor(d),
        "d*s": lambda lib, s, s2: lib.tensor(d) * s,
        "s*s": lambda lib, s, s2: s * s2,
        "s/4": lambda lib, s, s2: s / 4,
        "-s": lambda lib, s, s2: -s,
        "sum": lambda lib, s, s2: s.sum(),
        "sum0": lambda lib, s, s2: s.sum(0),
        "sparse.sum1": lambda lib, s, s2: lib.sparse.sum(s, 1),
        "t": lambda lib, s, s2: s.t(),
        "transpose": lambda lib, s, s2: s.transpose(0, 1),
        "unsqueeze": lambda lib, s, s2: s.unsqueeze(1),
        "index_select": lambda lib, s, s2: s.index_select(1, lib.tensor([2, 0, 2])),
        "select": lambda lib, s, s2: s.select(1, 2),
        "getitem": lambda lib, s, s2: s[1],
        "cat": lambda lib, s, s2: lib.cat([s, s2]),
        "norm": lambda lib, s, s2: s.norm(),
        "pow": lambda lib, s, s2: s.pow(2),
        "clone": lambda lib, s, s2: s.clone(),
        "double": lambda lib, s, s2: s.double(),
        "sparse_mask": lambda lib, s, s2: lib.tensor(d).sparse_mask(s2.coalesce()),
        "softmax": lambda lib, s, s2: lib.sparse.softmax(s, 1),
        "log_softmax0": lambda lib, s, s2: lib.sparse.log_softmax(s, 0),
        "mul_": lambda lib, s, s2: s.clone().mul_(3),
        "add_": lambda lib, s, s2: s.clone().add_(s2),
        "d.add_(s)": lambda lib, s, s2: lib.tensor(d).add_(s, alpha=-2),
        "zero_": lambda lib, s, s2: s.clone().zero_(),
    }


@pytest.mark.parametrize("name", sorted(_ops()))
def test_ops_match(name):
    fn = _ops()[name]
    e, t = pair()
    e2, t2 = pair(values=[1.0, 2.0, -1.0], indices=[[0, 2, 1], [2, 3, 0]])
    # sparse * sparse: ember keeps the common elements (coalesced), PyTorch lists zeros too
    same(fn(ember, e, e2), fn(torch, t, t2), layout_flags=name != "s*s")


UNARY = ["abs", "sqrt", "sin", "tanh", "relu", "log1p", "square", "sign", "expm1", "asin",
         "atan", "sinh", "tan", "floor", "ceil", "round", "trunc", "frac", "erf", "deg2rad"]


@pytest.mark.parametrize("name", UNARY)
def test_zero_preserving_unary(name):
    vals = [0.1, -0.2, 0.3, 0.05, 0.4]
    e, t = pair(values=vals)
    same(getattr(e, name)(), getattr(t, name)())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", ["sparse.mm", "mm", "matmul", "@", "dense@sparse", "mv",
                                  "addmm", "sparse.addmm"])
def test_products_and_gradients(dtype, form):
    rng = np.random.default_rng(0)
    dn = rng.standard_normal((4, 5)).astype(dtype)
    if form == "dense@sparse":
        dn = rng.standard_normal((2, 3)).astype(dtype)
    if form == "mv":
        dn = rng.standard_normal(4).astype(dtype)
    bias = rng.standard_normal((3, 5)).astype(dtype)
    grads = []
    for lib, s in zip((ember, torch), pair(dtype=dtype, requires_grad=True)):
        d = lib.tensor(dn, requires_grad=True)
        out = {"sparse.mm": lambda: lib.sparse.mm(s, d), "mm": lambda: lib.mm(s, d),
               "matmul": lambda: lib.matmul(s, d), "@": lambda: s @ d,
               "dense@sparse": lambda: d @ s, "mv": lambda: lib.mv(s, d),
               "addmm": lambda: lib.addmm(lib.tensor(bias), s, d, beta=0.5, alpha=2.0),
               "sparse.addmm": lambda: lib.sparse.addmm(lib.tensor(bias), s, d, beta=0.5,
                                                        alpha=2.0)}[form]()
        assert not out.is_sparse
        w = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(dtype))
        (out * w).sum().backward()
        grads.append((out, s.grad, d.grad))
    (eo, es, ed), (to, ts, td) = grads
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(dense_of(eo), dense_of(to), rtol=tol, atol=tol)
    np.testing.assert_allclose(dense_of(ed), dense_of(td), rtol=tol, atol=tol)
    # ember's gradient of a sparse leaf is sparse, at its specified elements; PyTorch's is
    # that for sparse.mm/sparse.addmm and dense (with values elsewhere too) for the others
    assert es.is_sparse and ts.is_sparse == form.startswith("sparse.")
    specified = dense_of(ember.sparse_coo_tensor(IDX, [1.0] * len(V), SHAPE)) != 0
    np.testing.assert_allclose(dense_of(es), np.where(specified, dense_of(ts), 0), rtol=tol,
                               atol=tol)


def test_to_dense_gradient_reaches_values():
    grads = []
    for lib in (ember, torch):
        v = lib.tensor(np.array(V, dtype=np.float64), requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(IDX), v, SHAPE)
        w = lib.tensor(np.arange(12, dtype=np.float64).reshape(3, 4))
        (s.to_dense() * w).sum().backward()
        grads.append(v.grad.tolist())
    assert grads[0] == grads[1]


def test_sparse_times_sparse():
    e, t = pair()
    same(ember.sparse.mm(e, e.t()), torch.sparse.mm(t, t.t()))


ERRORS = {
    "s+d": lambda lib, s: s + lib.ones(3, 4),
    "s+1": lambda lib, s: s + 1,
    "exp": lambda lib, s: s.exp(),
    "max": lambda lib, s: s.max(),
    "indices uncoalesced": lambda lib, s: s.indices(),
    "values uncoalesced": lambda lib, s: s.values(),
    "dense indices": lambda lib, s: lib.ones(2).indices(),
    "dense coalesce": lambda lib, s: lib.ones(2).coalesce(),
    "dense is_coalesced": lambda lib, s: lib.ones(2).is_coalesced(),
    "numpy": lambda lib, s: s.numpy(),
    "item": lambda lib, s: s.item(),
    "data_ptr": lambda lib, s: s.data_ptr(),
    "nnz mismatch": lambda lib, s: lib.sparse_coo_tensor(lib.tensor([[0, 1]]),
                                                         lib.tensor([1.0])),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match(name):
    outcomes = []
    for lib, s in zip((ember, torch), pair()):
        with pytest.raises(Exception) as info:
            ERRORS[name](lib, s)
        outcomes.append((info.type, str(info.value).split(". This could")[0]))
    assert outcomes[0] == outcomes[1]


def test_invariant_checks_and_warning():
    for lib in (ember, torch):
        with lib.sparse.check_sparse_tensor_invariants():
            with pytest.raises(RuntimeError, match="size is inconsistent with indices: for "
                                                   "dim 0, size is 3 but found index 3"):
                lib.sparse_coo_tensor(lib.tensor([[0, 3]]), lib.tensor([1.0, 2.0]), (3,))
        s = lib.sparse_coo_tensor(lib.tensor([[0, 3]]), lib.tensor([1.0, 2.0]), (3,),
                                  check_invariants=False)
        assert s._nnz() == 2


def _train(lib, optimizer, kw):
    e = lib.nn.Embedding(6, 3, sparse=True, padding_idx=2)
    with lib.no_grad():
        e.weight.copy_(lib.tensor(np.arange(18, dtype=np.float32).reshape(6, 3) / 10))
    opt = getattr(lib.optim, optimizer)(e.parameters(), **kw)
    grads = []
    for x in ([0, 1, 1, 2], [3, 5, 5, 0], [[4, 4], [1, 2]]):
        opt.zero_grad()
        (e(lib.tensor(x)) ** 2).sum().backward()
        g = e.weight.grad
        grads.append((g.is_sparse, g._indices().tolist(), dense_of(g)))
        opt.step()
    return dense_of(e.weight), grads


@pytest.mark.parametrize("optimizer,kw", [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1)), ("Adagrad", dict(lr=0.1, lr_decay=0.1, maximize=True)),
    ("SparseAdam", dict(lr=0.1)), ("SparseAdam", dict(lr=0.1, betas=(0.8, 0.9)))])
def test_sparse_embedding_training(optimizer, kw):
    (we, ge), (wt, gt) = _train(ember, optimizer, kw), _train(torch, optimizer, kw)
    for (es, ei, ed), (ts, ti, td) in zip(ge, gt):
        assert es and ts and ei == ti
        np.testing.assert_allclose(ed, td, rtol=1e-6)
    np.testing.assert_allclose(we, wt, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("optimizer", ["Adam", "AdamW", "RMSprop", "Adadelta", "Adamax",
                                       "NAdam", "RAdam", "ASGD", "Rprop"])
def test_optimizers_refusing_sparse_gradients(optimizer):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            _train(lib, optimizer, {})
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_sparse_gradients_accumulate_as_dense_content():
    outs = []
    for lib in (ember, torch):
        e = lib.nn.Embedding(5, 2, sparse=True)
        with lib.no_grad():
            e.weight.copy_(lib.tensor(np.arange(10, dtype=np.float32).reshape(5, 2)))
        x = lib.tensor([[1, 2, 2], [0, 3, 1]])
        e(x).pow(2).sum().backward()
        e(x[:, :2]).sum().backward()
        outs.append(dense_of(e.weight.grad))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)


def test_scale_grad_by_freq_with_sparse_is_refused_as_in_torch():
    for lib in (ember, torch):
        e = lib.nn.Embedding(5, 2, sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
            e(lib.tensor([1, 1])).sum().backward()


def test_warning_once_when_checks_are_implicit():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        ember.sparse_coo_tensor([[0]], [1.0], (1,))  # the once-per-process warning may be spent
    assert ember.sparse.check_sparse_tensor_invariants.is_enabled() is False


@pytest.mark.parametrize("case", ["two sparse", "sparse+dense", "dense then sparse",
                                  "sparse then dense", "sparse then sparse"])
def test_sparse_and_dense_gradients_meet(case):
    outs = []
    for lib in (ember, torch):
        e = lib.nn.Embedding(4, 2, sparse=True)
        with lib.no_grad():
            e.weight.copy_(lib.arange(8.).reshape(4, 2))
        x = lib.tensor([1, 3])
        if case == "two sparse":  # both reach one buffer before the leaf
            (e(x).sum() + e(lib.tensor([1])).pow(2).sum()).backward()
        elif case == "sparse+dense":
            (e(x).sum() + e.weight.sum() * 2).backward()
        elif case == "dense then sparse":
            e.weight.sum().backward()
            e(x).sum().backward()
        elif case == "sparse then dense":
            e(x).sum().backward()
            e.weight.sum().backward()
        else:
            e(x).sum().backward()
            e(lib.tensor([0, 1])).pow(2).sum().backward()
        g = e.weight.grad
        outs.append((g.is_sparse, dense_of(g)))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[0][1], outs[1][1])


@pytest.mark.parametrize("mode,weighted,padding,last", [
    ("sum", False, None, False), ("mean", False, None, False), ("sum", True, None, False),
    ("sum", False, 2, False), ("mean", False, 2, True), ("sum", True, 4, True)])
def test_embedding_bag_sparse_gradient(mode, weighted, padding, last):
    outs = []
    for lib in (ember, torch):
        bag = lib.nn.EmbeddingBag(6, 2, mode=mode, sparse=True, padding_idx=padding,
                                  include_last_offset=last)
        with lib.no_grad():
            bag.weight.copy_(lib.arange(12.0).reshape(6, 2))
        x = lib.tensor([1, 2, 4, 5, 4, 3, 2, 3])
        offsets = lib.tensor([0, 2, 4, 8] if last else [0, 2, 4])
        w = lib.tensor([0.5, 2.0, 3.0, 1.0, -1.0, 0.25, 1.5, 2.0]) if weighted else None
        out = bag(x, offsets, per_sample_weights=w)
        (out * lib.arange(6.0).reshape(3, 2)).sum().backward()
        g = bag.weight.grad
        outs.append((dense_of(out), g.is_sparse, g._indices().tolist(), dense_of(g)))
    (eo, es, ei, eg), (to, ts, ti, tg) = outs
    np.testing.assert_allclose(eo, to, rtol=1e-6)
    assert es and ts and ei == ti
    np.testing.assert_allclose(eg, tg, rtol=1e-6)


def test_embedding_bag_sparse_max_is_refused():
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="max mode does not support sparse weights"):
            lib.nn.functional.embedding_bag(lib.tensor([[0, 1]]), lib.ones(3, 2), mode="max",
                                            sparse=True)
