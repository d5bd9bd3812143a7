"""Bad inputs raise what PyTorch raises: the same exception class and the same message (its
essential part where PyTorch's carries C++ source locations or a C++ stack trace).

Covers indices out of range (gather/scatter/index_select/index_add/take_along_dim, their
method and in-place forms and their gradients), ``tensor()`` of non-numeric or ragged data,
huge or overflowing allocations, reductions of empty tensors, ``interpolate`` to empty
sizes and ``cat`` of nothing. Allocations are sized beyond any address space, so both
libraries fail on every machine (PyTorch would touch all the pages of one that succeeds)."""
import re

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import error_of


def essential(message):
    """A message without PyTorch's C++ decorations: the ``[enforce fail at file:line]``
    prefix and the ``Exception raised from ...`` stack trace (with the quote it opened)."""
    message = re.sub(r"^\[enforce fail at [^\]]+\] err == 0\. ", "", message)
    return message.split("\nException raised from")[0]


def assert_same_error(fn):
    expected, got = error_of(lambda: fn(torch)), error_of(lambda: fn(ember))
    assert expected is not None, "torch raised nothing"
    assert got is not None, f"ember raised nothing; torch raised {expected}"
    assert got[0] == expected[0], (got, expected)
    torch_message = essential(expected[1])
    ember_message = got[1].replace("ember.", "torch.")
    if torch_message == expected[1]:
        assert ember_message == torch_message
    else:  # cut short by a stack trace: ember closes the quote PyTorch left open
        assert ember_message in (torch_message, torch_message + '"'), (got, expected)


def index(lib, *values, dtype="int64"):
    return lib.tensor(list(values), dtype=getattr(lib, dtype))


# ---- indices out of range --------------------------------------------------------------
INDEX_OPS = {
    "gather": lambda lib, x, i: lib.gather(x, 0, i),
    "Tensor.gather": lambda lib, x, i: x.gather(0, i),
    "scatter": lambda lib, x, i: lib.scatter(x, 0, i, lib.ones(1)),
    "scatter value": lambda lib, x, i: x.scatter(0, i, 2.0),
    "scatter_": lambda lib, x, i: x.clone().scatter_(0, i, lib.ones(1)),
    "scatter_add": lambda lib, x, i: lib.scatter_add(x, 0, i, lib.ones(1)),
    "scatter_add_": lambda lib, x, i: x.clone().scatter_add_(0, i, lib.ones(1)),
    "index_select": lambda lib, x, i: lib.index_select(x, 0, i),
    "Tensor.index_select": lambda lib, x, i: x.index_select(0, i),
    "index_add": lambda lib, x, i: lib.index_add(x, 0, i, lib.ones(1)),
    "index_add_": lambda lib, x, i: x.clone().index_add_(0, i, lib.ones(1)),
    "take_along_dim flat": lambda lib, x, i: lib.take_along_dim(x, i),
}


@pytest.mark.parametrize("op", sorted(INDEX_OPS))
@pytest.mark.parametrize("bad", [-1, 5, -6, 2 ** 40])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_index_out_of_range(op, bad, dtype):
    if dtype == "int32" and (op.startswith("take_along_dim") or bad == 2 ** 40):
        pytest.skip("int64 indices only")
    assert_same_error(lambda lib: INDEX_OPS[op](lib, lib.arange(5.0), index(lib, 0, bad,
                                                                            dtype=dtype)))


SHAPES = [(5, 3), (3, 5), (2, 5, 3), (4, 5, 2), (2, 3, 4, 5)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("bad", [-1, "size"])
def test_index_select_and_index_add_along_every_dim(shape, bad):
    for dim in range(len(shape)):
        i = [0, shape[dim] if bad == "size" else bad]
        src_shape = list(shape)
        src_shape[dim] = 2
        assert_same_error(lambda lib: lib.zeros(shape).index_select(dim, lib.tensor(i)))
        for alpha in (1, 2):
            assert_same_error(lambda lib: lib.zeros(shape).index_add(
                dim, lib.tensor(i), lib.ones(src_shape), alpha=alpha))
        assert_same_error(lambda lib: lib.zeros(shape).index_add(
            dim, lib.tensor(i, dtype=lib.int32), lib.ones(src_shape)))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_gather_and_scatter_along_every_dim(shape):
    rng = np.random.default_rng(0)
    for dim in range(len(shape)):
        values = rng.integers(-2 * shape[dim], 2 * shape[dim], size=shape)
        assert_same_error(lambda lib: lib.zeros(shape).gather(dim, lib.tensor(values)))
        assert_same_error(lambda lib: lib.zeros(shape).scatter(dim, lib.tensor(values), 1.0))
        assert_same_error(lambda lib: lib.zeros(shape).scatter_add(dim, lib.tensor(values),
                                                                   lib.ones(shape)))


@pytest.mark.parametrize("case", [
    lambda lib: lib.gather(lib.zeros(()), 0, lib.tensor(1)),
    lambda lib: lib.scatter(lib.zeros(()), 0, lib.tensor(-1), lib.ones(())),
    lambda lib: lib.gather(lib.zeros(0), 0, lib.tensor([0])),
    lambda lib: lib.index_select(lib.zeros(()), 0, lib.tensor([1])),
    lambda lib: lib.index_select(lib.zeros(0), 0, lib.tensor([0])),
    lambda lib: lib.index_select(lib.zeros(0, 3), 0, lib.tensor([0])),
    lambda lib: lib.index_select(lib.zeros(3, 0), 0, lib.tensor([5])),
    lambda lib: lib.index_add(lib.zeros(()), 0, lib.tensor([1]), lib.ones(())),
    lambda lib: lib.index_add(lib.zeros(0), 0, lib.tensor([0]), lib.ones(1)),
    lambda lib: lib.index_add(lib.zeros(3, 3), 0, lib.tensor(7), lib.ones(1, 3)),
    lambda lib: lib.gather(lib.zeros(2, 3), 0, lib.zeros(2, 5, dtype=lib.int64)),
    lambda lib: lib.scatter(lib.zeros(2, 3), 0, lib.zeros(2, 5, dtype=lib.int64), 1.0),
    lambda lib: lib.scatter_add(lib.zeros(2, 3), 0, lib.zeros(2, 2, dtype=lib.int64),
                                lib.ones(1, 2)),
    lambda lib: lib.scatter(lib.zeros(2, 3), 0, lib.zeros(1, 2, dtype=lib.int64),
                            lib.tensor(1.0)),
    lambda lib: lib.scatter(lib.zeros(2, 3), 0, lib.zeros(1, 1, dtype=lib.int64), lib.ones(5)),
    lambda lib: lib.scatter_add(lib.zeros(2, 3), 0, lib.zeros(1, 2, dtype=lib.int64),
                                lib.ones(1, 2, dtype=lib.float64)),
    lambda lib: lib.index_add(lib.zeros(2, 3), 0, lib.tensor([0]),
                              lib.ones(1, 3, dtype=lib.float64)),
    lambda lib: lib.take_along_dim(lib.zeros(3, 2), lib.tensor([0]), 0),
    lambda lib: lib.take_along_dim(lib.zeros(3, 2), lib.zeros(2, 2, dtype=lib.int64), 1),
    lambda lib: lib.take_along_dim(lib.zeros(3), lib.tensor([0], dtype=lib.int32), 0),
    lambda lib: lib.take_along_dim(lib.zeros(0, 3), lib.zeros(1, 3, dtype=lib.int64), 0),
    lambda lib: lib.take_along_dim(lib.tensor(1.0), lib.tensor(0), 0),
    lambda lib: lib.take_along_dim(lib.zeros(3, 4).t(), lib.tensor([1])),
], ids=lambda f: None)
def test_index_edge_cases(case):
    assert_same_error(case)


def test_take_along_dim_wraps_like_pytorch():
    values = [[5], [-1], [-9], [12]]
    for lib in (torch, ember):
        x = lib.arange(16.0, requires_grad=True)
        y = lib.take_along_dim(x.reshape(4, 4), lib.tensor(values), 1)
        y.sum().backward()
        if lib is torch:
            expected = (y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__)
    np.testing.assert_array_equal(y.detach().numpy(), expected[0])
    np.testing.assert_array_equal(x.grad.numpy(), expected[1])
    assert y.grad_fn.name() == expected[2]


@pytest.mark.parametrize("make", [
    lambda lib, x, i: x.gather(0, i),
    lambda lib, x, i: x.scatter(0, i, lib.ones(2)),
    lambda lib, x, i: lib.zeros(5).scatter(0, i, x[:2]),
    lambda lib, x, i: lib.zeros(5).scatter_add(0, i, x[:2]),
    lambda lib, x, i: x.index_select(0, i),
    lambda lib, x, i: lib.zeros(5).index_add(0, i, x[:2]),
], ids=["gather", "scatter", "scatter src", "scatter_add src", "index_select", "index_add src"])
def test_backward_after_the_index_changed_in_place(make):
    def run(lib):
        x = lib.randn(5, requires_grad=True)
        i = lib.tensor([1, 2])
        y = make(lib, x, i)
        i[0] = -1
        y.sum().backward()
    expected, got = error_of(lambda: run(torch)), error_of(lambda: run(ember))
    assert got[0] == expected[0]
    assert got[1].split(" Hint:")[0].replace("ember.", "torch.") == \
        expected[1].split(" Hint:")[0]


@pytest.mark.parametrize("make", [
    lambda lib, x, i: x.scatter_add(0, i, lib.ones(2)),
    lambda lib, x, i: x.index_add(0, i, lib.ones(2)),
    lambda lib, x, i: x.take_along_dim(i, 0),
], ids=["scatter_add self", "index_add self", "take_along_dim"])
def test_backward_that_does_not_read_the_changed_index(make):
    grads = []
    for lib in (torch, ember):
        x = lib.arange(5.0, requires_grad=True)
        i = lib.tensor([1, 2])
        y = make(lib, x, i)
        i[0] = -1
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


# ---- tensor() of data PyTorch rejects ------------------------------------------------------
class _Opaque:
    def __repr__(self):  # test ids the same in every process (pytest-xdist compares them)
        return "_Opaque()"


class _Object:  # a bare object with an address-free repr
    def __repr__(self):
        return "object()"


TENSOR_DATA = [
    ["a"], "a", [["a"]], [1, "a"], ["a", 1], b"a", [b"a"], [1, b"a"], [[1], [b"a"]], None,
    [None], [1, None], _Object(), [_Opaque()], {}, {1: 2}, {1, 2}, [[1, 2], [3]], [[1], 2],
    [1, [2]], [[1, 2], [3, 4, 5]], [[[1]], [2]], [[1, 2], "ab"], ["ab", [1, 2]], 2 ** 64,
    [2 ** 64], 2 ** 63, [2 ** 63], [-2 ** 63 - 1], [True, 2 ** 64], [10 ** 30],
    [1.0, 10 ** 400], ("a",), np.str_("a"), [np.str_("a")],
]


@pytest.mark.parametrize("data", TENSOR_DATA, ids=repr)
def test_tensor_of_bad_data(data):
    assert_same_error(lambda lib: lib.tensor(data))


@pytest.mark.parametrize("data, dtype", [
    (["a"], "float32"), ([1, "a"], "float32"), ([1, "a"], "int64"), ([1, None], "float32"),
    ([1, None], "int64"), ([1, None], "bool"), (None, "float32"), ([1, _Object()], "float32"),
    ([2 ** 63], "int32"), ([2 ** 31], "int32"), ([300], "uint8"), ([-256], "uint8"),
    ([-129], "int8"), ([128], "int8"), ([1e30], "int32"), ([1e20], "int64"), ([-1.0], "uint8"),
    ([255.9], "uint8"), ([float("nan")], "int64"), ([float("inf")], "int64"),
    ([10 ** 400], "float64"), ([2 ** 64], "int64"), ([1 + 2j], "float32"),
], ids=repr)
def test_tensor_of_bad_data_with_dtype(data, dtype):
    assert_same_error(lambda lib: lib.tensor(data, dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([lib.tensor([1, 2]), lib.tensor([3, 4])]),
    lambda lib: lib.tensor([lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])]),
    lambda lib: lib.Tensor(None), lambda lib: lib.Tensor(2.5), lambda lib: lib.Tensor({}),
    lambda lib: lib.Tensor(["a"]), lambda lib: lib.Tensor([None]), lambda lib: lib.Tensor("a"),
    lambda lib: lib.Tensor([[1, 2], [3]]), lambda lib: lib.as_tensor(["a"]),
    lambda lib: lib.zeros(1).new_tensor(["a"]),
], ids=lambda f: None)
def test_other_constructors_of_bad_data(make):
    assert_same_error(make)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([-1], dtype=lib.uint8), lambda lib: lib.tensor([-255], dtype=lib.uint8),
    lambda lib: lib.tensor([2 ** 64], dtype=lib.float64), lambda lib: lib.tensor([1.5, 2 ** 64]),
    lambda lib: lib.tensor([2 ** 63], dtype=lib.bool), lambda lib: lib.tensor([[], [1]]),
    lambda lib: lib.tensor(range(3)), lambda lib: lib.tensor(bytearray(b"ab")),
    lambda lib: lib.tensor([lib.tensor([1.0]), lib.tensor([2.0])]),
    lambda lib: lib.tensor([lib.tensor(1.0, dtype=lib.float64), lib.tensor(2)]),
    lambda lib: lib.tensor([[1, 2], lib.tensor([3, 4])]),
    lambda lib: lib.tensor([[1, 2], {3, 4}], dtype=lib.float32),
    lambda lib: lib.Tensor([2 ** 64]),
], ids=lambda f: None)
def test_tensor_of_unusual_data_reads_like_pytorch(make):
    expected, got = make(torch), make(ember)
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.dtype.name == str(expected.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


# ---- allocations --------------------------------------------------------------------------
CREATORS = {
    "zeros": lambda lib, *s: lib.zeros(*s), "ones": lambda lib, *s: lib.ones(*s),
    "empty": lambda lib, *s: lib.empty(*s), "rand": lambda lib, *s: lib.rand(*s),
    "randn": lambda lib, *s: lib.randn(*s), "full": lambda lib, *s: lib.full(s, 1.0),
    "Tensor": lambda lib, *s: lib.Tensor(*s),
    "new_empty": lambda lib, *s: lib.zeros(1).new_empty(s),
    "randint": lambda lib, *s: lib.randint(0, 5, s),
    "zeros_like": lambda lib, *s: lib.zeros_like(lib.zeros(1).expand(*s)),
}
SIZES = [(2 ** 58,), (2 ** 29, 2 ** 29), (2 ** 62, 4), (2 ** 40, 2 ** 40), (2 ** 61,),
         (2 ** 62, 4, 0), (0, 2 ** 62, 4), (0, 2 ** 40, 2 ** 40), (2 ** 62, 0, 2 ** 62, 2),
         (3, 2 ** 63), (2 ** 64,), (-2 ** 63 - 1,), (3, 2.5), (3, None), (3, "4")]


@pytest.mark.parametrize("name", sorted(CREATORS))
@pytest.mark.parametrize("size", SIZES, ids=str)
def test_allocation_errors(name, size):
    if name == "zeros_like" and size not in ((2 ** 58,), (2 ** 29, 2 ** 29)):
        pytest.skip("expand's own errors")
    if name in ("new_empty", "randint") and not all(isinstance(s, int) and 0 <= s < 2 ** 63
                                                    for s in size):
        pytest.skip("their own argument parsers")
    assert_same_error(lambda lib: CREATORS[name](lib, *size))


@pytest.mark.parametrize("make", [
    lambda lib: lib.arange(2 ** 57), lambda lib: lib.randperm(2 ** 57),
    lambda lib: lib.eye(2 ** 29), lambda lib: lib.linspace(0, 1, 2 ** 58),
    lambda lib: lib.zeros(2 ** 62), lambda lib: lib.zeros(2 ** 62, dtype=lib.int8),
    lambda lib: lib.zeros((2 ** 63,)), lambda lib: lib.zeros(None), lambda lib: lib.zeros("a"),
    lambda lib: lib.zeros((2.5,)), lambda lib: lib.zeros([3, 2.5]),
    lambda lib: lib.zeros(2.5, 3), lambda lib: lib.zeros(lib.tensor(3.0)),
    lambda lib: lib.full(2.5, 1.0), lambda lib: lib.full((2 ** 63,), 1.0),
    lambda lib: lib.zeros(-1), lambda lib: lib.ones(3, -1),
], ids=lambda f: None)
def test_other_allocation_errors(make):
    assert_same_error(make)


# ---- reductions of empty tensors ------------------------------------------------------------
@pytest.mark.parametrize("name", ["argmax", "argmin", "max", "min", "amax", "amin"])
@pytest.mark.parametrize("shape, dim", [
    ((0,), None), ((0,), 0), ((0, 3), None), ((0, 3), 0), ((3, 0), 1), ((3, 0), -1),
    ((0, 3), (0, 1)), ((3, 0), (1, 0)), ((2, 0, 0), [2, 1]), ((0, 3), ()), ((3, 0), [0, -1]),
], ids=str)
def test_reductions_of_empty_tensors(name, shape, dim):
    if isinstance(dim, (tuple, list)) and name not in ("amax", "amin"):
        pytest.skip("one dim only")
    if dim is None:
        assert_same_error(lambda lib: getattr(lib, name)(lib.zeros(shape)))
    else:
        assert_same_error(lambda lib: getattr(lib, name)(lib.zeros(shape), dim))


# ---- interpolate ----------------------------------------------------------------------------
@pytest.mark.parametrize("mode, shape", [
    ("nearest", (1, 1, 4)), ("nearest", (1, 1, 4, 4)), ("nearest", (1, 1, 2, 2, 2)),
    ("linear", (1, 1, 4)), ("bilinear", (1, 1, 4, 4)),
], ids=str)
@pytest.mark.parametrize("kwargs", [
    dict(scale_factor=0.0), dict(scale_factor=0), dict(scale_factor=-1.0),
    dict(scale_factor=0.1), dict(scale_factor=-0.3), dict(scale_factor=float("nan")),
    dict(scale_factor=float("inf")), dict(scale_factor=1e20), dict(scale_factor=1e18),
    dict(size=0), dict(size=-1), dict(size=2 ** 40), dict(size=2 ** 63),
    dict(scale_factor=0.1, recompute_scale_factor=True),
    dict(scale_factor=float("nan"), recompute_scale_factor=True),
    dict(scale_factor=1e20, recompute_scale_factor=True),
], ids=str)
def test_interpolate_to_bad_sizes(mode, shape, kwargs):
    assert_same_error(lambda lib: lib.nn.functional.interpolate(lib.zeros(shape), mode=mode,
                                                                **kwargs))


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), scale_factor=(0.0, 2.0)),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), scale_factor=(2.0, 0.1),
                                              mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 0, 4), scale_factor=2.0),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 0, 2, 2), size=0),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 0, 2, 2), size=3, mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(0, 0, 2, 2), size=3),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 0, 2), size=3, mode="linear"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 2), scale_factor=0.0),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 2), scale_factor=float("nan"),
                                              mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 2, 2), size=10 ** 6),
], ids=lambda f: None)
def test_interpolate_other_bad_inputs(make):
    assert_same_error(make)


# ---- cat / stack ----------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda lib: lib.cat([]), lambda lib: lib.cat(()), lambda lib: lib.cat([], dim=1),
    lambda lib: lib.cat(t for t in [lib.zeros(1)]), lambda lib: lib.cat(lib.zeros(2, 2)),
    lambda lib: lib.cat([1, 2]), lambda lib: lib.cat(None), lambda lib: lib.cat("ab"),
    lambda lib: lib.cat([lib.zeros(1), None]), lambda lib: lib.cat(((lib.zeros(1),),)),
    lambda lib: lib.stack([]), lambda lib: lib.stack(t for t in [lib.zeros(1)]),
    lambda lib: lib.stack([lib.zeros(1), 1]),
], ids=lambda f: None)
def test_cat_and_stack_arguments(make):
    assert_same_error(make)
