"""Parity with PyTorch for indexing: getitem/setitem, gather/scatter, index_select/add,
masked_select, take_along_dim, nonzero, sort, argsort, topk."""
import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare

DTYPES = [np.float32, np.float64]


def arr(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def distinct(*shape, dtype=np.float64, seed=0):
    """Values without ties (so sort/topk order is unambiguous)."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) * 0.37 - 1.3).reshape(shape).astype(dtype)


@pytest.fixture(params=DTYPES, ids=["f32", "f64"])
def dt(request):
    return request.param


@pytest.fixture(params=[False, True], ids=["contig", "noncontig"])
def nc(request):
    return request.param


def _idx(lib, v, dtype="int64"):
    return lib.tensor(v, dtype=getattr(lib, dtype))


MASK2 = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]

GETITEM = {
    "int": lambda lib, x: x[1],
    "neg_int": lambda lib, x: x[-1],
    "int_int": lambda lib, x: x[2, -3],
    "slice": lambda lib, x: x[1:],
    "slice_step": lambda lib, x: x[::2],
    "slice_step_cols": lambda lib, x: x[:, 1::2],
    "neg_slice": lambda lib, x: x[-2:, :-1],
    "slice_out_of_range": lambda lib, x: x[1:10, -10:2],
    "empty_slice": lambda lib, x: x[2:1],
    "none": lambda lib, x: x[None],
    "none_mid": lambda lib, x: x[:, None, 1:],
    "ellipsis": lambda lib, x: x[..., 1],
    "ellipsis_none": lambda lib, x: x[..., None],
    "ellipsis_front": lambda lib, x: x[1, ...],
    "all_mixed": lambda lib, x: x[None, -1, ..., 1:3, None],
    "bool_mask_full": lambda lib, x: x[lib.tensor(MASK2)],
    "bool_mask_rows": lambda lib, x: x[lib.tensor([True, False, True])],
    "bool_mask_rows_then_slice": lambda lib, x: x[lib.tensor([False, True, True]), 1:],
    "bool_mask_cols": lambda lib, x: x[:, lib.tensor([True, False, True, True])],
    "bool_list": lambda lib, x: x[[True, False, True]],
    "cmp_mask": lambda lib, x: x[x > 0],
    "int_tensor": lambda lib, x: x[_idx(lib, [2, 0])],
    "int_tensor_2d": lambda lib, x: x[_idx(lib, [[0, 1], [2, 2]])],
    "int_tensor_neg": lambda lib, x: x[_idx(lib, [-1, 0])],
    "int32_tensor": lambda lib, x: x[_idx(lib, [1, 2], "int32")],
    "list": lambda lib, x: x[[0, 2, 1]],
    "list_list": lambda lib, x: x[[0, 2], [3, 1]],
    "repeated": lambda lib, x: x[[0, 0, 1]],
    "repeated_pairs": lambda lib, x: x[[0, 0, 2, 0], [1, 1, 3, 1]],
    "adv_then_slice": lambda lib, x: x[[2, 1], 1:3],
    "slice_then_adv": lambda lib, x: x[1:, [3, 0, 3]],
    "int_and_adv": lambda lib, x: x[1, [0, 0, 2]],
    "adv_broadcast": lambda lib, x: x[_idx(lib, [[0], [2]]), _idx(lib, [1, 3])],
    "none_adv": lambda lib, x: x[None, [1, 2]],
    "ellipsis_adv": lambda lib, x: x[..., [3, 0]],
    "zero_dim_index_tensor": lambda lib, x: x[_idx(lib, 1)],
    "separated_adv": lambda lib, x: x.unsqueeze(1).expand(3, 2, 4)[[0, 2], :, [1, 1]],
}


@pytest.mark.parametrize("name", list(GETITEM))
def test_getitem(name, dt, nc):
    compare(GETITEM[name], arr(3, 4, dtype=dt), noncontiguous=nc)


def test_getitem_3d(dt, nc):
    a = arr(2, 3, 4, dtype=dt)
    for fn in (lambda lib, x: x[1, :, ::3], lambda lib, x: x[:, [0, 2], [1, 3]],
               lambda lib, x: x[[1, 0], :, [2, 2]], lambda lib, x: x[..., 1:, None, 0],
               lambda lib, x: x[lib.tensor([[True, False, True], [False, True, False]])],
               lambda lib, x: x[:, lib.tensor([True, False, True])][:, :, [3, 0]],
               lambda lib, x: x[-1][-1][-1], lambda lib, x: x[0, 1, 2]):
        compare(fn, a, noncontiguous=nc)


def test_getitem_int_tensors_values():
    a = np.arange(24).reshape(2, 3, 4)
    for fn in (lambda lib, x: x[1, [0, 2]], lambda lib, x: x[x > 10],
               lambda lib, x: x[..., lib.tensor([1, 1, 0])], lambda lib, x: x[:, 1:, ::2]):
        compare(fn, a)


def test_repeated_index_grad_accumulates():
    compare(lambda lib, x: x[[0, 0, 1]], arr(3, 2))
    for lib in (torch, ember):
        x = lib.zeros(3, requires_grad=True)
        x[[0, 0, 0, 2]].sum().backward()
        assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_basic_index_is_view_advanced_is_copy():
    for lib in (torch, ember):
        x = lib.zeros(3, 4)
        x[1:, ::2][0, 1] = 1.0
        x[[0, 1]][0, 0] = 5.0  # copy: no effect
        x[x > 100] = 9.0
        assert x.sum().item() == 1.0 and x[1, 2].item() == 1.0


# ---- setitem ------------------------------------------------------------------------------
def _set(index, value):
    def fn(lib, x, *vals):
        y = x * 1
        v = value(lib, *vals) if callable(value) else value
        y[index(lib) if callable(index) else index] = v
        return y
    return fn


SETITEM = {
    "int_scalar": (_set(1, 5.0), ()),
    "int_int_scalar": (_set((1, 2), -2.5), ()),
    "slice_scalar": (_set((slice(None), slice(1, 3)), 0.0), ()),
    "step_scalar": (_set((slice(None, None, 2),), 3), ()),
    "ellipsis_scalar": (_set(Ellipsis, 1.0), ()),
    "none_scalar": (_set((None, 0), 7.0), ()),
    "row_tensor": (_set(0, lambda lib, v: v), ((4,),)),
    "bcast_tensor": (_set((slice(1, None),), lambda lib, v: v), ((4,),)),
    "bcast_col": (_set((slice(None), slice(0, 2)), lambda lib, v: v), ((3, 1),)),
    "bcast_scalar_tensor": (_set((slice(None), 1), lambda lib, v: v.sum()), ((2,),)),
    "mask_scalar": (_set(lambda lib: lib.tensor(MASK2), -1.0), ()),
    "mask_rows_tensor": (_set(lambda lib: lib.tensor([True, False, True]), lambda lib, v: v),
                         ((4,),)),
    "mask_values": (_set(lambda lib: lib.tensor(MASK2), lambda lib, v: v), ((6,),)),
    "index_tensor_scalar": (_set(lambda lib: lib.tensor([2, 0]), 0.5), ()),
    "index_tensor_values": (_set(lambda lib: lib.tensor([2, 0]), lambda lib, v: v), ((2, 4),)),
    "index_pairs_values": (_set(([0, 2, 1], [3, 3, 0]), lambda lib, v: v), ((3,),)),
    "list_cols_bcast": (_set((slice(None), [0, 3]), lambda lib, v: v), ((3, 1),)),
    "adv_and_slice": (_set(([1, 2], slice(1, 3)), lambda lib, v: v), ((2,),)),
}


@pytest.mark.parametrize("name", list(SETITEM))
def test_setitem(name, dt, nc):
    fn, vshapes = SETITEM[name]
    arrays = [arr(3, 4, dtype=dt)] + [arr(*s, dtype=dt, seed=i + 1) for i, s in enumerate(vshapes)]
    compare(fn, *arrays, noncontiguous=nc)


def test_setitem_chained_on_non_leaf(dt):
    def fn(lib, x, v, w):
        y = x.sin()
        y[0] = v
        y[:, 2] = w[1:]
        y[y > 0.5] = 0.0
        return y * x
    compare(fn, arr(4, 3, dtype=dt), arr(3, dtype=dt, seed=1), arr(5, dtype=dt, seed=2))


def test_setitem_value_dtype_cast():
    for lib in (torch, ember):
        x = lib.zeros(3, dtype=lib.int64)
        x[0] = 2.7  # truncated
        x[1:] = lib.tensor([1.9, -1.9])
        assert x.tolist() == [2, 1, -1]
        b = lib.zeros(2, 2, dtype=lib.bool)
        b[0, 1] = True
        assert b.tolist() == [[False, True], [False, False]]
        f = lib.zeros(2)
        f[0] = lib.tensor(3)
        f[1] = True
        assert f.tolist() == [3.0, 1.0]


def test_setitem_leaf_requiring_grad_errors():
    for lib in (torch, ember):
        x = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            x[0] = 1.0
        with lib.no_grad():
            x[0] = 1.0
        assert x.tolist() == [1.0, 0.0, 0.0]


def test_setitem_shape_mismatch_errors():
    for lib in (torch, ember):
        x = lib.zeros(3, 4)
        msgs = []
        for idx, v in ((0, lib.ones(3)), ((slice(None), 1), lib.ones(2, 3)), ([0, 1], lib.ones(3)),
                       (lib.ones(3, 4, dtype=lib.bool), lib.ones(3))):
            with pytest.raises(RuntimeError) as err:
                x[idx] = v
            msgs.append(str(err.value).replace("torch.", "").replace("ember.", ""))
        if lib is torch:
            expected = msgs
        else:
            assert msgs == expected


# ---- gather / scatter ---------------------------------------------------------------------
IDX = [[0, 2, 1, 0], [2, 2, 0, 1]]


def test_gather(dt, nc):
    a = arr(3, 4, dtype=dt)
    compare(lambda lib, x: x.gather(0, lib.tensor(IDX)), a, noncontiguous=nc)
    compare(lambda lib, x: lib.gather(x, 1, lib.tensor([[3, 3], [0, 1], [2, 0]])), a,
            noncontiguous=nc)
    compare(lambda lib, x: x.gather(-1, lib.tensor([[1], [0]])), a, noncontiguous=nc)
    compare(lambda lib, x: x.gather(1, lib.tensor([[1, 0], [3, 3]], dtype=lib.int32)), a)


def test_gather_3d(dt):
    a = arr(2, 3, 4, dtype=dt)
    idx = np.random.default_rng(3).integers(0, 3, (2, 2, 4))
    compare(lambda lib, x: x.gather(1, lib.tensor(idx)), a)


def test_scatter_src_and_value(dt, nc):
    a, s = arr(3, 4, dtype=dt), arr(2, 4, dtype=dt, seed=1)
    idx = [[0, 2, 1, 0], [1, 0, 2, 2]]  # no duplicates within a column
    compare(lambda lib, x, src: x.scatter(0, lib.tensor(idx), src), a, s, noncontiguous=nc)
    compare(lambda lib, x, src: lib.scatter(x, 0, lib.tensor(idx), src), a, s)
    compare(lambda lib, x: x.scatter(1, lib.tensor([[0], [3], [1]]), 2.5), a, noncontiguous=nc)
    compare(lambda lib, x: x.scatter(0, lib.tensor(idx), value=-1.0), a)
    # src larger than index: only the leading part is used
    compare(lambda lib, x, src: x.scatter(1, lib.tensor([[1, 2], [0, 3], [3, 3]]), src), a,
            arr(3, 4, dtype=dt, seed=2), grad=False)  # torch's backward rejects this shape


def test_scatter_inplace(dt):
    idx = [[0, 2, 1, 0], [1, 0, 2, 2]]

    def fn(lib, x, src):
        y = x * 2
        y.scatter_(0, lib.tensor(idx), src)
        y.scatter_(1, lib.tensor([[3], [3], [3]]), 0.5)
        return y
    compare(fn, arr(3, 4, dtype=dt), arr(2, 4, dtype=dt, seed=1))
    for lib in (torch, ember):
        z = lib.zeros(2, 3)
        out = z.scatter_(1, lib.tensor([[2], [0]]), 1.0)
        assert out is z and z.tolist() == [[0, 0, 1], [1, 0, 0]] and z._version == 1


def test_scatter_add(dt, nc):
    a, s = arr(3, 4, dtype=dt), arr(2, 4, dtype=dt, seed=1)
    idx = [[0, 0, 1, 2], [0, 0, 1, 1]]  # duplicates accumulate
    compare(lambda lib, x, src: x.scatter_add(0, lib.tensor(idx), src), a, s, noncontiguous=nc)
    compare(lambda lib, x, src: lib.scatter_add(x, 1, lib.tensor([[1, 1], [0, 1], [3, 3]]),
                                                src.t()[:, :2]), a, arr(4, 3, dtype=dt))
    compare(lambda lib, x, src: (x * 1).scatter_add_(0, lib.tensor(idx), src), a, s)
    compare(lambda lib, x, src: x.scatter(0, lib.tensor(idx), src, reduce="add"), a, s,
            grad=False)  # torch has no derivative for scatter(reduce=)
    compare(lambda lib, x, src: x.scatter(0, lib.tensor(idx), src, reduce="multiply"), a, s,
            grad=False)
    compare(lambda lib, x: (x * 1).scatter_(1, lib.tensor([[0, 0], [3, 1], [2, 2]]), 1.5,
                                            reduce="multiply"), a, grad=False)


def test_scatter_reduce_argument_warns_once_for_tensor_src():
    """The deprecation warning of scatter(reduce=) with a Tensor src comes once per process
    (fresh processes: the warning state is process-wide in both libraries)."""
    import subprocess
    import sys
    code = ("import warnings, {lib} as t\nwarnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    t.zeros(3).scatter(0, t.tensor([0]), 2.0, reduce='add')\n"
            "    t.zeros(3).scatter(0, t.tensor([0]), t.ones(1), reduce='multiply')\n"
            "    t.zeros(3).scatter_(0, t.tensor([0]), t.ones(1), reduce='add')\n"
            "print(len(w), str(w[0].message).split(' (Triggered')[0])")
    outputs = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True,
                              text=True, timeout=120).stdout for lib in ("torch", "ember")]
    assert outputs[0] == outputs[1] and outputs[0].startswith("1 The reduce argument")


def test_scatter_int():
    compare(lambda lib, x: x.scatter(1, lib.tensor([[0, 1], [2, 2]]), lib.tensor([[7, 8], [9, 9]])),
            np.zeros((2, 3), np.int64))
    compare(lambda lib, x: x.scatter_add(0, lib.tensor([[1, 1, 1]]), lib.ones(1, 3,
                                                                          dtype=lib.int64)),
            np.arange(6).reshape(2, 3))


# ---- index_select / index_add / masked_select / take_along_dim -----------------------------
def test_index_select(dt, nc):
    a = arr(3, 4, dtype=dt)
    compare(lambda lib, x: x.index_select(0, lib.tensor([2, 0, 2])), a, noncontiguous=nc)
    compare(lambda lib, x: lib.index_select(x, 1, lib.tensor([3, 3, 1])), a, noncontiguous=nc)
    compare(lambda lib, x: x.index_select(-1, lib.tensor([0], dtype=lib.int32)), a)
    compare(lambda lib, x: x.index_select(0, lib.tensor(1)), a)
    compare(lambda lib, x: x.index_select(1, lib.tensor([], dtype=lib.int64)), a)


def test_index_add(dt, nc):
    a, s = arr(3, 4, dtype=dt), arr(3, 3, dtype=dt, seed=1)
    compare(lambda lib, x, src: x.index_add(1, lib.tensor([0, 3, 0]), src), a, s,
            noncontiguous=nc)
    compare(lambda lib, x, src: x.index_add(1, lib.tensor([2, 0, 2]), src, alpha=2.5), a, s)
    compare(lambda lib, x, src: lib.index_add(x, 0, lib.tensor([1, 1]), src[:2, :1].expand(2, 4)),
            a, s)
    compare(lambda lib, x, src: (x * 1).index_add_(0, lib.tensor([2, 0, 2]), src[:, :1] * x),
            a, s)


def test_masked_select(dt, nc):
    a = arr(3, 4, dtype=dt)
    compare(lambda lib, x: x.masked_select(lib.tensor(MASK2)), a, noncontiguous=nc)
    compare(lambda lib, x: lib.masked_select(x, x > 0.2), a, noncontiguous=nc)
    compare(lambda lib, x: x.masked_select(lib.tensor([True, False, False, True])), a)
    compare(lambda lib, x: x[0].masked_select(lib.tensor(MASK2)), a)


def test_take_along_dim(dt, nc):
    a = arr(3, 4, dtype=dt)
    compare(lambda lib, x: x.take_along_dim(lib.tensor([[0, 3], [1, 1], [2, 0]]), 1), a,
            noncontiguous=nc)
    compare(lambda lib, x: lib.take_along_dim(x, lib.tensor([[2, 0, 0, 1]]), dim=0), a,
            noncontiguous=nc)
    # torch: view fails on nc
    compare(lambda lib, x: x.take_along_dim(lib.tensor([5, 0, 5, 11])), a)
    compare(lambda lib, x: lib.take_along_dim(x, x.argsort(dim=1), dim=1), a)
    compare(lambda lib, x: lib.take_along_dim(x, x.argmax(0, keepdim=True), dim=0), a)
    compare(lambda lib, x: lib.take_along_dim(x, lib.tensor([[1], [0], [3]]), -1), a)


# ---- nonzero -------------------------------------------------------------------------------
def test_nonzero():
    for a in (np.array([[0, 1.5, 0], [2, 0, -1]]), np.array([0, 3, 0, 4]),
              np.array([[True, False], [True, True]]), np.zeros((2, 2)), np.array(5.0),
              np.array(0), np.arange(24).reshape(2, 3, 4) % 5):
        compare(lambda lib, x: x.nonzero(), a, grad=False)
        compare(lambda lib, x: lib.nonzero(x, as_tuple=True), a, grad=False)
        compare(lambda lib, x: x.nonzero(as_tuple=True), a, grad=False)


def test_nonzero_of_requires_grad_input():
    compare(lambda lib, x: x.nonzero(), arr(3, 4))
    compare(lambda lib, x: x[x.nonzero(as_tuple=True)], arr(3, 4))


# ---- sort / argsort / topk -----------------------------------------------------------------
def test_sort(dt, nc):
    a = distinct(3, 5, dtype=dt)
    compare(lambda lib, x: x.sort(), a, noncontiguous=nc)
    compare(lambda lib, x: x.sort(descending=True), a, noncontiguous=nc)
    compare(lambda lib, x: lib.sort(x, dim=0), a, noncontiguous=nc)
    compare(lambda lib, x: lib.sort(x, 0, True), a)
    compare(lambda lib, x: x.sort(dim=-2, descending=True, stable=True), a)
    compare(lambda lib, x: x.sort()[0] * x.sort(descending=True).values, a)
    compare(lambda lib, x: x.sort(stable=True).indices, a)
    compare(lambda lib, x: x[0].sort(), a)


def test_sort_namedtuple_and_stable_ties():
    for lib in (torch, ember):
        x = lib.tensor([[2.0, 1.0, 2.0, 1.0, 3.0]])
        r = x.sort(stable=True)
        assert r.values.tolist() == [[1.0, 1.0, 2.0, 2.0, 3.0]]
        assert r.indices.tolist() == [[1, 3, 0, 2, 4]]
        assert str(r.indices.dtype).endswith("int64")
        r = x.sort(descending=True, stable=True)
        assert r.indices.tolist() == [[4, 0, 2, 1, 3]]
        v, i = lib.sort(lib.tensor([3, 1, 2]))
        assert v.tolist() == [1, 2, 3] and i.tolist() == [1, 2, 0]


def test_sort_nan_and_ints():
    for desc in (False, True):
        t = torch.tensor([1.0, float("nan"), -1.0, 3.0]).sort(descending=desc)
        e = ember.tensor([1.0, float("nan"), -1.0, 3.0]).sort(descending=desc)
        np.testing.assert_array_equal(e.values.numpy(), t.values.numpy())
        assert e.indices.tolist() == t.indices.tolist()
    compare(lambda lib, x: x.sort(descending=True, stable=True), np.array([[3, -1, 7, 7, 0]]))
    compare(lambda lib, x: x.sort(stable=True), np.array([True, False, True]))


def test_argsort(dt, nc):
    a = distinct(4, 3, dtype=dt)
    compare(lambda lib, x: x.argsort(), a, noncontiguous=nc)
    compare(lambda lib, x: x.argsort(dim=0, descending=True), a, noncontiguous=nc)
    compare(lambda lib, x: lib.argsort(x, 1, True), a)
    compare(lambda lib, x: x.argsort(stable=True), np.array([[2, 2, 1, 1], [0, 3, 0, 3]]))


def test_topk(dt, nc):
    a = distinct(3, 5, dtype=dt)
    compare(lambda lib, x: x.topk(2), a, noncontiguous=nc)
    compare(lambda lib, x: x.topk(3, largest=False), a, noncontiguous=nc)
    compare(lambda lib, x: lib.topk(x, 2, dim=0), a, noncontiguous=nc)
    compare(lambda lib, x: x.topk(1, 0, False), a)
    compare(lambda lib, x: x.topk(5).values, a)
    compare(lambda lib, x: x.topk(0, 1)[0], a)
    compare(lambda lib, x: x[1].topk(4, largest=False, sorted=True), a)
    for lib in (torch, ember):
        r = lib.tensor([4.0, 9.0, 1.0]).topk(2)
        assert r.values.tolist() == [9.0, 4.0] and r.indices.tolist() == [1, 0]


# ---- error messages match PyTorch ----------------------------------------------------------
ERRORS = [
    lambda lib: lib.ones(3)[5],
    lambda lib: lib.ones(3)[-4],
    lambda lib: lib.ones(2, 3)[0, 3],
    lambda lib: lib.ones(2, 3)[0, 0, 0],
    lambda lib: lib.ones(3)[::-1],
    lambda lib: lib.ones(3)[1.0],
    lambda lib: lib.ones(2, 3)[lib.tensor([0, 2])],
    lambda lib: lib.ones(2, 3, 4)[:, [0], [9]],
    lambda lib: lib.ones(2, 3, 4)[..., [9]],
    lambda lib: lib.ones(3)[lib.tensor([1.0])],
    lambda lib: lib.ones(2, 3)[lib.tensor([True, False, True])],
    lambda lib: lib.ones(2, 3).gather(0, lib.zeros(2, 3)),
    lambda lib: lib.ones(2, 3).gather(0, lib.full((2, 3), 5)),
    lambda lib: lib.ones(2, 3).gather(1, lib.full((2, 3), -4)),
    lambda lib: lib.ones(2, 3).gather(0, lib.zeros(2, dtype=lib.int64)),
    lambda lib: lib.ones(2, 3).scatter(0, lib.zeros(2, 3), 1.0),
    lambda lib: lib.ones(2, 3).scatter(0, lib.full((2, 3), 7), 1.0),
    lambda lib: lib.ones(2, 3).scatter_add(0, lib.zeros(2, 3), lib.ones(2, 3)),
    lambda lib: lib.ones(2, 3).index_select(0, lib.tensor([2])),
    lambda lib: lib.ones(2, 3).index_select(0, lib.tensor([0.0])),
    lambda lib: lib.ones(2, 3).index_add(0, lib.tensor([0.0]), lib.ones(1, 3)),
    lambda lib: lib.ones(2, 3).index_add(0, lib.tensor([5]), lib.ones(1, 3)),
    lambda lib: lib.ones(2, 3).index_add(0, lib.tensor([0, 1]), lib.ones(3, 3)),
    lambda lib: lib.ones(2, 3).index_add(0, lib.tensor([0, 1]), lib.ones(2, 2)),
    lambda lib: lib.ones(2, 3).masked_select(lib.ones(2, 3)),
    lambda lib: lib.ones(2, 3).take_along_dim(lib.tensor([[1.0]]), 1),
    lambda lib: lib.ones(2, 3).topk(4),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_error_messages_match(i):
    fn = ERRORS[i]
    with pytest.raises(Exception) as t_err:
        fn(torch)
    with pytest.raises(Exception) as e_err:
        fn(ember)
    t_msg = str(t_err.value).split("\n")[0].replace("torch.", "ember.")
    assert type(e_err.value) is type(t_err.value), (e_err.value, t_err.value)
    assert str(e_err.value).replace("torch.", "ember.") == t_msg
