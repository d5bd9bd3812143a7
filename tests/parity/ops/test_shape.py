"""Parity with PyTorch for view and shape ops: values, gradients, storage sharing,
in-place ops through views and version counters."""
import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare

DTYPES = [np.float32, np.float64]


def arr(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.fixture(params=DTYPES, ids=["f32", "f64"])
def dt(request):
    return request.param


@pytest.fixture(params=[False, True], ids=["contig", "noncontig"])
def nc(request):
    return request.param


# ---- views and reshapes -------------------------------------------------------------------
VIEW_CASES = {
    "view": (lambda lib, x: x.contiguous().view(6, 4), (2, 3, 4)),
    "view_neg1": (lambda lib, x: x.contiguous().view(-1, 2) * 2, (2, 3, 4)),
    "view_tuple": (lambda lib, x: x.contiguous().view((4, -1)), (2, 3, 4)),
    "view_as": (lambda lib, x: x.contiguous().view_as(lib.ones(3, 8)), (2, 3, 4)),
    "reshape": (lambda lib, x: x.reshape(4, 6), (2, 3, 4)),
    "reshape_neg1": (lambda lib, x: x.reshape(-1), (2, 3, 4)),
    "reshape_mid": (lambda lib, x: x.reshape(2, -1, 2), (2, 3, 4)),
    "reshape_as": (lambda lib, x: x.reshape_as(lib.ones(12, 2)), (2, 3, 4)),
    "flatten": (lambda lib, x: x.flatten(), (2, 3, 4)),
    "flatten_range": (lambda lib, x: x.flatten(1), (2, 3, 4)),
    "flatten_neg": (lambda lib, x: x.flatten(0, -2), (2, 3, 4)),
    "unflatten": (lambda lib, x: x.unflatten(2, (2, 2)), (2, 3, 4)),
    "unflatten_neg1": (lambda lib, x: x.unflatten(-1, (-1, 2)), (2, 3, 4)),
    "transpose": (lambda lib, x: x.transpose(0, 2), (2, 3, 4)),
    "transpose_neg": (lambda lib, x: x.transpose(-1, -2), (2, 3, 4)),
    "swapaxes": (lambda lib, x: x.swapaxes(0, 1), (2, 3, 4)),
    "t": (lambda lib, x: x.t(), (3, 4)),
    "t_1d": (lambda lib, x: x[0].t(), (3, 4)),
    "T": (lambda lib, x: x.T, (3, 4)),
    "mT": (lambda lib, x: x.mT, (2, 3, 4)),
    "permute": (lambda lib, x: x.permute(2, 0, 1), (2, 3, 4)),
    "permute_tuple": (lambda lib, x: x.permute((1, -1, 0)), (2, 3, 4)),
    "fn_permute": (lambda lib, x: lib.permute(x, (1, 2, 0)), (2, 3, 4)),
    "squeeze": (lambda lib, x: x.squeeze(), (1, 3, 1, 4)),
    "squeeze_dim": (lambda lib, x: x.squeeze(2), (1, 3, 1, 4)),
    "squeeze_noop": (lambda lib, x: x.squeeze(1), (1, 3, 1, 4)),
    "squeeze_neg": (lambda lib, x: x.squeeze(-4), (1, 3, 1, 4)),
    "unsqueeze": (lambda lib, x: x.unsqueeze(0), (3, 4)),
    "unsqueeze_mid": (lambda lib, x: x.unsqueeze(1), (3, 4)),
    "unsqueeze_neg": (lambda lib, x: x.unsqueeze(-1), (3, 4)),
    "expand": (lambda lib, x: x[:, :1].expand(3, 5), (3, 4)),
    "expand_lead": (lambda lib, x: x.expand(2, 3, 4), (3, 4)),
    "expand_neg1": (lambda lib, x: x[:1].expand(-1, 4) * 1, (3, 4)),
    "expand_tuple": (lambda lib, x: x[:, 2:3].expand((2, 3, 6)), (3, 4)),
    "expand_as": (lambda lib, x: x[:1].expand_as(lib.ones(5, 4)), (3, 4)),
    "narrow": (lambda lib, x: x.narrow(1, 1, 2), (3, 4)),
    "narrow_neg": (lambda lib, x: x.narrow(-1, -3, 2), (3, 4)),
    "fn_narrow": (lambda lib, x: lib.narrow(x, 0, 1, 2), (3, 4)),
    "select": (lambda lib, x: x.select(1, 2), (3, 4)),
    "select_neg": (lambda lib, x: x.select(0, -1), (3, 4)),
    "unbind": (lambda lib, x: x.unbind(), (3, 4)),
    "unbind_dim": (lambda lib, x: x.unbind(1), (3, 4)),
    "chunk": (lambda lib, x: x.chunk(2), (5, 4)),
    "chunk_dim": (lambda lib, x: x.chunk(3, dim=1), (5, 4)),
    "chunk_more": (lambda lib, x: x.chunk(4, 0), (5, 4)),
    "split_int": (lambda lib, x: x.split(2), (5, 4)),
    "split_int_dim": (lambda lib, x: x.split(3, dim=1), (5, 4)),
    "split_sizes": (lambda lib, x: x.split([1, 3, 1]), (5, 4)),
    "split_sizes_dim": (lambda lib, x: lib.split(x, [3, 1], -1), (5, 4)),
    "contiguous": (lambda lib, x: x.contiguous(), (3, 4)),
    "clone": (lambda lib, x: x.clone(), (3, 4)),
    "fn_clone": (lambda lib, x: lib.clone(x) * 3, (3, 4)),
    "chain": (lambda lib, x: x.t().reshape(-1)[1:9:2].view(2, 2).unsqueeze(0), (3, 4)),
}


@pytest.mark.parametrize("name", list(VIEW_CASES))
def test_view_ops(name, dt, nc):
    fn, shape = VIEW_CASES[name]
    compare(fn, arr(*shape, dtype=dt), noncontiguous=nc)


def test_reshape_of_noncontiguous_copies(dt):
    a = arr(3, 4, dtype=dt)
    for lib in (torch, ember):
        x = lib.tensor(a)
        r = x.t().reshape(-1)
        r[0] = 100.0
        assert float(x[0, 0]) == float(a[0, 0])  # a copy: x untouched
        v = x.reshape(-1)  # contiguous: a view
        v[1] = 50.0
        assert float(x[0, 1]) == 50.0
    compare(lambda lib, x: x.t().reshape(2, 6), a)


def test_contiguous_flags():
    for lib in (torch, ember):
        x = lib.ones(3, 4)
        assert x.is_contiguous()
        assert not x.t().is_contiguous()
        assert not x[:, ::2].is_contiguous()
        assert x[1:].is_contiguous()
        y = x.t().contiguous()
        assert y.is_contiguous()
        assert x.contiguous() is x
        assert x.t().t().is_contiguous()


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_views_share_storage(lib):
    x = lib.zeros(3, 4)
    views = [x.view(12), x.view(-1, 6), x.reshape(2, 6), x.t(), x.T, x.permute(1, 0),
             x.unsqueeze(0), x[None], x[1], x[:, 1:3], x[..., ::2], x.narrow(1, 1, 2),
             x.select(1, 0), x.unbind(0)[2], x.chunk(2, 1)[1], x.split(1)[0], x.flatten(),
             x.transpose(0, 1), x.unflatten(1, (2, 2)), x.squeeze(), x.view_as(lib.ones(4, 3)),
             x.mT, x[-1, -2:], x.contiguous(), x.view(12)[3:].view(3, 3)]
    for i, v in enumerate(views):
        x.zero_()
        v[(-1,) * v.dim()] = i + 1.0
        assert float(x.sum()) == i + 1.0, i
        if v is not x:
            assert v._base is x, i
    e = x[:1].expand(5, 4)
    x[0, 2] = 3.0
    assert e[4, 2].item() == 3.0


def test_write_through_views_matches_torch():
    results = {}
    for lib in (torch, ember):
        x = lib.arange(12.).view(3, 4)
        x.t()[1, 2] = -1.0
        x[:, ::2][0] = 7.0
        x.view(-1)[5] = 99.0
        x.narrow(0, 2, 1).mul_(10)
        x.select(1, 3).add_(0.5)
        x.unsqueeze(0)[0, 1, 1:3] = lib.tensor([5.0, 6.0])
        results[lib] = x.numpy().copy()
    np.testing.assert_array_equal(results[ember], results[torch])


def test_base_write_seen_by_view():
    for lib in (torch, ember):
        x = lib.zeros(2, 3)
        v = x.t()[1]
        x[1, 1] = 4.0
        assert v.tolist() == [0.0, 4.0]


# ---- in-place ops on views and autograd ---------------------------------------------------
def _inplace_view_cases(lib, a, w):
    b = a * 1
    b[:, 1].mul_(w[:3])
    return b


INPLACE_VIEW_CASES = {
    "col_mul": lambda lib, a, w: _inplace_view_cases(lib, a, w),
    "flat_add": lambda lib, a, w: (lambda b: (b.view(-1).add_(1), b)[1])(a * 2),
    "t_zero": lambda lib, a, w: (lambda b: (b.t()[0].zero_(), b * w.sum())[1])(a * 1),
    "slice_copy": lambda lib, a, w: (lambda b: (b[1:, :3].copy_(w[:3].expand(2, 3)), b)[1])(
        a * 2),
    "setitem_view": lambda lib, a, w: (lambda b: (b.__setitem__((0, slice(None)), w[:4]), b)[1])(
        a + 0),
    "nested_views": lambda lib, a, w: (lambda b: (b.t()[1:].narrow(0, 0, 2).mul_(w[:3]), b)[1])(
        a * 3),
    "view_of_view_then_base": lambda lib, a, w: (lambda b: (b.unsqueeze(0)[0, 2].div_(w[:4]),
                                                            b.sin())[1])(a * 1),
    "view_used_after": lambda lib, a, w: (lambda b: (lambda v: (v.mul_(w[:3]), v * b.sum())[1])(
        b[:, 0]))(a * 1),
    "sigmoid_col": lambda lib, a, w: (lambda b: (b[:, 2].sigmoid_(), b * w[:4])[1])(a * 2),
    "iadd_row": lambda lib, a, w: (lambda b: (b[2].__iadd__(w[:4]), b)[1])(a - 1),
}


@pytest.mark.parametrize("name", list(INPLACE_VIEW_CASES))
def test_inplace_on_view_autograd(name, dt):
    compare(INPLACE_VIEW_CASES[name], arr(3, 4, dtype=dt), arr(5, dtype=dt, seed=1))


def test_inplace_view_grad_fn_names():
    for lib in (torch, ember):
        a = lib.ones(3, 4, requires_grad=True)
        b = a * 1
        v = b[:, 1]
        v.mul_(2)
        assert b.grad_fn.name().endswith("CopySlices")
        assert v.grad_fn is not None
        assert b._version == 1 and v._version == 1


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_version_counter(lib):
    x = lib.zeros(3, 4)
    assert x._version == 0
    v = x[1]
    w = x.view(-1)
    d = x.detach()
    x.add_(1)
    assert (x._version, v._version, w._version, d._version) == (1, 1, 1, 1)
    v.mul_(2)
    assert (x._version, v._version, w._version) == (2, 2, 2)
    x[0, 0] = 5.0
    assert x._version == 3
    w.zero_()
    assert x._version == 4
    x.t().fill_(1.0)
    assert x._version == 5
    y = x + 1  # out-of-place result has its own counter
    assert y._version == 0
    c = x.clone()
    c.add_(1)
    assert c._version == 1 and x._version == 5
    x.data.add_(1)  # .data does not share the version counter
    assert x._version == 5


def test_version_counter_values_match_torch():
    seq = {}
    for lib in (torch, ember):
        x = lib.ones(4, 3)
        out = []
        for op in (lambda: x.mul_(2), lambda: x[:, 1].zero_(), lambda: x.__setitem__(0, 3.0),
                   lambda: x.copy_(lib.ones(3)), lambda: x.t().transpose(0, 1).sub_(1),
                   lambda: x.fill_(2.0), lambda: x.clamp_(0, 1)):
            op()
            out.append(x._version)
        seq[lib] = out
    assert seq[ember] == seq[torch]


def test_inplace_on_leaf_view_errors():
    for lib in (torch, ember):
        a = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            a[0].mul_(2)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation"):
            a.mul_(2)


def test_saved_tensor_modified_inplace_errors():
    for lib in (torch, ember):
        a = lib.ones(3, requires_grad=True)
        b = a * 2
        c = b.sin()
        b[0].mul_(3)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            c.sum().backward()
        e = a.exp()  # exp saves its output
        e[1:].copy_(lib.zeros(2))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            e.sum().backward()


# ---- cat / stack / flip / roll / repeat / tile / tril / triu --------------------------------
def test_cat(dt, nc):
    a, b, c = arr(2, 3, dtype=dt), arr(2, 3, dtype=dt, seed=1), arr(2, 3, dtype=dt, seed=2)
    compare(lambda lib, x, y, z: lib.cat([x, y, z]), a, b, c, noncontiguous=nc)
    compare(lambda lib, x, y, z: lib.cat((x, y, z), dim=1), a, b, c, noncontiguous=nc)
    compare(lambda lib, x, y, z: lib.cat([x, y], -1) * z.sum(), a, b, c, noncontiguous=nc)
    compare(lambda lib, x, y: lib.cat([x[:1], y, x[1:]], dim=-2), a, arr(4, 3, dtype=dt),
            noncontiguous=nc)
    compare(lambda lib, x, y: lib.cat([x, lib.tensor([]), y], 0), a[0], b[1])


def test_stack(dt, nc):
    a, b = arr(2, 3, dtype=dt), arr(2, 3, dtype=dt, seed=1)
    for d in (0, 1, 2, -1, -3):
        compare(lambda lib, x, y: lib.stack([x, y, x], dim=d), a, b, noncontiguous=nc)


@pytest.mark.parametrize("op", ["cat", "stack"])
@pytest.mark.parametrize("dts", [("int32", "float64"), ("int64", "float32"), ("bool", "int32"),
                                 ("float32", "float64"), ("int8", "uint8", "int64"),
                                 ("float16", "float32"), ("bool", "int64", "float16")])
def test_cat_stack_mixed_dtype_promotion(op, dts):
    outs = {}
    for lib in (torch, ember):
        ts = [lib.ones(2, 2, dtype=getattr(lib, d if d != "bool" else "bool")) for d in dts]
        outs[lib] = getattr(lib, op)(ts, dim=-1)
    assert str(outs[torch].dtype).split(".")[-1] == outs[ember].dtype.name
    assert tuple(outs[torch].shape) == tuple(outs[ember].shape)


def test_cat_mixed_dtype_gradient():
    compare(lambda lib, x, y: lib.cat([x, y.double()]), arr(2, 3, dtype=np.float32),
            arr(1, 3, dtype=np.float32))
    compare(lambda lib, x: lib.cat([x, lib.ones(1, 3, dtype=lib.int64)]),
            arr(2, 3, dtype=np.float64))


FLIP_ETC = {
    "flip0": lambda lib, x: x.flip(0),
    "flip01": lambda lib, x: x.flip(0, 1),
    "flip_neg": lambda lib, x: lib.flip(x, [-1]),
    "roll": lambda lib, x: x.roll(1),
    "roll_dim": lambda lib, x: x.roll(2, 1),
    "roll_neg": lambda lib, x: x.roll(-1, 0),
    "roll_multi": lambda lib, x: lib.roll(x, (1, -2), (0, 1)),
    "repeat": lambda lib, x: x.repeat(2, 3),
    "repeat_lead": lambda lib, x: x.repeat(2, 1, 2),
    "repeat_tuple": lambda lib, x: x.repeat((1, 1)) * 2,
    "tile": lambda lib, x: x.tile(2),
    "tile_more": lambda lib, x: x.tile((2, 1, 2)),
    "fn_tile": lambda lib, x: lib.tile(x, (3, 1)),
    "tril": lambda lib, x: x.tril(),
    "tril_pos": lambda lib, x: x.tril(1),
    "tril_neg": lambda lib, x: lib.tril(x, -1),
    "triu": lambda lib, x: x.triu(),
    "triu_pos": lambda lib, x: lib.triu(x, diagonal=2),
    "triu_neg": lambda lib, x: x.triu(-1),
}


@pytest.mark.parametrize("name", list(FLIP_ETC))
def test_flip_roll_repeat_tri(name, dt, nc):
    compare(FLIP_ETC[name], arr(3, 4, dtype=dt), noncontiguous=nc)


def test_tri_batched_and_inplace(dt):
    compare(lambda lib, x: x.tril(-1) + x.triu(1), arr(2, 3, 4, dtype=dt))
    compare(lambda lib, x: (x * 1).tril_(1), arr(4, 3, dtype=dt))
    compare(lambda lib, x: (x * 1).triu_(0), arr(4, 3, dtype=dt))


def test_int_shape_ops_match():
    for fn in (lambda lib, x: x.flip(1), lambda lib, x: x.roll(1, 0), lambda lib, x: x.repeat(2, 1),
               lambda lib, x: x.tril(), lambda lib, x: lib.cat([x, x], 1),
               lambda lib, x: lib.stack([x, x]), lambda lib, x: x.t().reshape(-1),
               lambda lib, x: x.unsqueeze(1).expand(3, 2, 4)):
        compare(fn, np.arange(12).reshape(3, 4))


def test_squeeze_unsqueeze_inplace():
    for lib in (torch, ember):
        x = lib.ones(1, 3, 1)
        x.squeeze_()
        assert tuple(x.shape) == (3,)
        x.unsqueeze_(0)
        assert tuple(x.shape) == (1, 3)
        x.squeeze_(0)
        assert tuple(x.shape) == (3,)


def test_split_chunk_shapes_match():
    for n, args in [(7, (3,)), (6, (2,)), (5, (5,)), (4, (10,))]:
        t = [tuple(p.shape) for p in torch.ones(n, 2).split(*args)]
        e = [tuple(p.shape) for p in ember.ones(n, 2).split(*args)]
        assert t == e
    for n, c in [(7, 3), (6, 4), (5, 5), (5, 2), (2, 5), (0, 2)]:
        t = [tuple(p.shape) for p in torch.ones(n, 2).chunk(c)]
        e = [tuple(p.shape) for p in ember.ones(n, 2).chunk(c)]
        assert t == e, (n, c)


def test_zero_dim_views():
    compare(lambda lib, x: x.sum().view(1), arr(3))
    compare(lambda lib, x: x.sum().reshape(1, 1).squeeze(), arr(3))
    compare(lambda lib, x: x.sum().unsqueeze(0).expand(3), arr(3))
    compare(lambda lib, x: x.sum().t(), arr(3))
    compare(lambda lib, x: x.sum().flatten(), arr(3))
