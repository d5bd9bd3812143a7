"""Bad inputs to indexing ops, tensor creation, empty reductions, interpolate and cat: each
raises PyTorch's exception with PyTorch's message (recorded from PyTorch 2.13 on the same
inputs) instead of wrapping an index, building a malformed tensor or leaking a NumPy error.
Huge allocations use sizes beyond any address space, so they fail on every machine."""
import re

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._ops import indexing


def raises(exc, message):
    """``pytest.raises`` matching the whole message literally."""
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


def idx(*values):
    return ember.tensor(list(values))


# ---- indices out of range: no wrapping, PyTorch's class and wording per op --------------
def _index_ops():
    x = ember.arange(5.0)
    one = ember.ones(1)
    return {
        "gather": lambda i: ember.gather(x, 0, i),
        "Tensor.gather": lambda i: x.gather(0, i),
        "scatter": lambda i: ember.scatter(x, 0, i, one),
        "scatter value": lambda i: x.scatter(0, i, 2.0),
        "scatter reduce": lambda i: x.scatter(0, i, one, reduce="add"),
        "scatter_": lambda i: x.clone().scatter_(0, i, one),
        "scatter_add": lambda i: ember.scatter_add(x, 0, i, one),
        "scatter_add_": lambda i: x.clone().scatter_add_(0, i, one),
        "index_select": lambda i: ember.index_select(x, 0, i),
        "Tensor.index_select": lambda i: x.index_select(0, i),
        "index_add": lambda i: ember.index_add(x, 0, i, one),
        "index_add_": lambda i: x.clone().index_add_(0, i, one),
        "take_along_dim flat": lambda i: ember.take_along_dim(x, i),
    }


_GATHER_STYLE = {"gather", "Tensor.gather", "scatter", "scatter value", "scatter reduce",
                 "scatter_", "scatter_add", "scatter_add_", "take_along_dim flat"}


@pytest.mark.parametrize("op", sorted(_index_ops()))
@pytest.mark.parametrize("bad", [-1, 5, -6])
def test_index_out_of_range_raises(op, bad):
    fn = _index_ops()[op]
    if op in _GATHER_STYLE:
        expected = raises(RuntimeError, f"index {bad} is out of bounds for dimension 0 with size 5")
    else:
        expected = raises(IndexError, "index out of range in self")
    with expected:
        fn(idx(bad))


def test_first_offending_index_in_c_order_is_reported():
    x = ember.zeros(3, 4)
    with raises(RuntimeError, "index 9 is out of bounds for dimension 1 with size 4"):
        x.gather(1, ember.tensor([[0, 1, 2, 3], [0, 9, 0, -1], [5, 0, 0, 0]]))
    with raises(RuntimeError, "index -1 is out of bounds for dimension 1 with size 4"):
        x.scatter(1, ember.tensor([[0, 1, 2, 3], [0, -1, 0, 9], [5, 0, 0, 0]]), 1.0)
    assert indexing.first_out_of_range(np.array([[0, 7], [-2, 1]]), 5) == 7
    assert indexing.first_out_of_range(np.array([0, 4, 3], np.int32), 5) is None


def test_index_select_dim1_path_wording():
    x = ember.zeros(5, 3)
    with raises(RuntimeError, "INDICES element is out of DATA bounds, id=-1 axis_dim=3"):
        x.index_select(1, idx(0, -1))
    with raises(IndexError, "index out of range in self"):
        ember.zeros(2, 3, 5).index_select(2, idx(5))
    with raises(RuntimeError, "index_select(): self indexing axis dim should be positive"):
        ember.zeros(0, 3).index_select(0, idx(0))


def test_index_add_paths_wording():
    src = ember.ones(2, 2)
    with raises(RuntimeError, "index -1 is out of bounds for dimension 0 with size 3"):
        ember.zeros(3, 2).index_add(0, idx(0, -1), src)
    with raises(IndexError, "index out of range in self"):  # alpha != 1: the slice loop
        ember.zeros(3, 2).index_add(0, idx(0, -1), src, alpha=2)
    with raises(IndexError, "index out of range in self"):  # an int32 index likewise
        ember.zeros(3, 2).index_add(0, idx(0, 3).int(), src)
    with raises(IndexError, "index out of range in self"):  # a middle dim likewise
        ember.zeros(2, 3, 2).index_add(1, idx(0, 3), ember.ones(2, 2, 2))
    # an empty n-d tensor is returned before any index is looked at
    assert ember.zeros(3, 0).index_add(0, idx(7), ember.ones(1, 0)).shape == (3, 0)


def test_take_along_dim_wraps_modulo_along_a_dim():
    x = ember.arange(12.0).reshape(3, 4)
    picked = ember.take_along_dim(x, ember.tensor([[5], [-1], [-9]]), 1)
    assert picked.flatten().tolist() == [1.0, 7.0, 11.0]
    with raises(RuntimeError, "ZeroDivisionError"):
        ember.take_along_dim(ember.zeros(0, 3), ember.zeros(1, 3, dtype=ember.int64), 0)


def test_scatter_gather_shape_checks():
    with raises(RuntimeError, "Size does not match at dimension 1 expected index [2, 5] to be "
                              "no larger than self [2, 3] apart from dimension 0"):
        ember.gather(ember.zeros(2, 3), 0, ember.zeros(2, 5, dtype=ember.int64))
    with raises(RuntimeError, "Expected index [2, 2] to be no larger than self [2, 3] apart "
                              "from dimension 0 and to be no larger size than src [1, 2]"):
        ember.scatter_add(ember.zeros(2, 3), 0, ember.zeros(2, 2, dtype=ember.int64),
                          ember.ones(1, 2))


@pytest.mark.parametrize("make", [
    lambda x, i: x.gather(0, i),
    lambda x, i: x.index_select(0, i),
    lambda x, i: ember.zeros(5).scatter(0, i, x[:2]),
    lambda x, i: ember.zeros(5).index_add(0, i, x[:2]),
], ids=["gather", "index_select", "scatter", "index_add"])
def test_backward_refuses_an_index_changed_in_place(make):
    x = ember.randn(5, requires_grad=True)
    i = idx(1, 2)
    y = make(x, i)
    i[0] = -1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("op", [
    lambda i: indexing.Gather.apply(ember.zeros(5), 0, i),
    lambda i: indexing.ScatterAdd.apply(ember.zeros(5), 0, i, ember.ones(1)),
    lambda i: indexing.Scatter.apply(ember.zeros(5), 0, i, 0.0),
    lambda i: indexing.IndexSelect.apply(ember.zeros(5), 0, i),
    lambda i: indexing.IndexAdd.apply(ember.zeros(5), 0, i, ember.ones(1), 1),
], ids=["Gather", "ScatterAdd", "Scatter", "IndexSelect", "IndexAdd"])
def test_the_ops_gradients_are_built_from_check_their_index(op):
    # gather's gradient is a ScatterAdd, index_select's an IndexAdd (and back): each op
    # checks its own index, so no gradient can wrap one either
    with pytest.raises((RuntimeError, IndexError), match="out of"):
        op(idx(-1))


def test_gradients_with_valid_indices_are_unchanged():
    x = ember.arange(5.0, requires_grad=True)
    (x.gather(0, idx(4, 4, 0)).sum() + x.index_select(0, idx(1)).sum()).backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0, 0.0, 2.0]


# ---- ember.tensor of data PyTorch rejects -------------------------------------------------
@pytest.mark.parametrize("data, exc, message", [
    (["a"], ValueError, "too many dimensions 'str'"),
    ("a", TypeError, "new(): invalid data type 'str'"),
    ([1, "a"], TypeError, "new(): invalid data type 'str'"),
    ([b"a"], TypeError, "new(): invalid data type 'bytes'"),
    (None, RuntimeError, "Could not infer dtype of NoneType"),
    ([1, None], RuntimeError, "Could not infer dtype of NoneType"),
    ([object()], RuntimeError, "Could not infer dtype of object"),
    ({1: 2}, RuntimeError, "Could not infer dtype of dict"),
    ((i for i in range(2)), RuntimeError, "Could not infer dtype of generator"),
    ([[1, 2], [3]], ValueError, "expected sequence of length 2 at dim 1 (got 1)"),
    ([[1], 2], TypeError, "not a sequence"),
    ([1, [2]], TypeError, "'list' object cannot be interpreted as an integer"),
    ([2 ** 64], ValueError, "Overflow when unpacking long long"),
    ([2 ** 63], ValueError, "Overflow when unpacking long long"),
    ([True, 2 ** 64], ValueError, "Overflow when unpacking long long"),
    ([ember.ones(2), ember.ones(2)], ValueError,
     "only one element tensors can be converted to Python scalars"),
], ids=lambda v: None)
def test_tensor_rejects_data_like_pytorch(data, exc, message):
    with raises(exc, message):
        ember.tensor(data)


@pytest.mark.parametrize("data, dtype, exc, message", [
    ([300], ember.uint8, RuntimeError, "value cannot be converted to type uint8 without overflow"),
    ([-256], ember.uint8, RuntimeError, "value cannot be converted to type uint8 without overflow"),
    ([2 ** 31], ember.int32, RuntimeError,
     "value cannot be converted to type int32 without overflow"),
    ([1e30], ember.int32, RuntimeError, "value cannot be converted to type int32 without overflow"),
    ([float("nan")], ember.int64, RuntimeError,
     "value cannot be converted to type int64 without overflow"),
    ([1, "a"], ember.float32, TypeError, "must be real number, not str"),
    ([1, None], ember.int64, TypeError, "'NoneType' object cannot be interpreted as an integer"),
    ([2 ** 64], ember.int64, ValueError, "Overflow when unpacking long long"),
], ids=lambda v: None)
def test_tensor_with_dtype_checks_each_value(data, dtype, exc, message):
    with raises(exc, message):
        ember.tensor(data, dtype=dtype)


def test_tensor_reads_what_pytorch_reads():
    assert ember.tensor([-1], dtype=ember.uint8).tolist() == [255]
    assert ember.tensor([2 ** 64], dtype=ember.float64).tolist() == [2.0 ** 64]
    assert ember.tensor([1.5, 2 ** 64]).dtype is ember.float32
    assert ember.tensor([[], [1]]).shape == (2, 0)
    assert ember.tensor(range(3)).tolist() == [0, 1, 2]
    assert ember.tensor([ember.ones(1), ember.zeros(1)]).shape == (2,)  # a tensor is a number
    assert ember.tensor([ember.tensor(1.0, dtype=ember.float64), ember.tensor(2)]).dtype \
        is ember.float64
    assert ember.tensor([[1, 2], ember.tensor([3, 4])]).tolist() == [[1, 2], [3, 4]]


def test_legacy_constructor_rejects_non_sequences():
    with raises(TypeError, "new(): data must be a sequence (got NoneType)"):
        ember.Tensor(None)
    with raises(ValueError, "too many dimensions 'str'"):
        ember.Tensor(["a"])


# ---- allocations: PyTorch's RuntimeErrors, never NumPy's MemoryError/ValueError ------------
_CREATORS = {
    "zeros": lambda *s: ember.zeros(*s), "ones": lambda *s: ember.ones(*s),
    "empty": lambda *s: ember.empty(*s), "rand": lambda *s: ember.rand(*s),
    "randn": lambda *s: ember.randn(*s), "full": lambda *s: ember.full(s, 1.0),
    "Tensor": lambda *s: ember.Tensor(*s),
}


@pytest.mark.parametrize("name", sorted(_CREATORS))
def test_allocation_failure_is_pytorchs_runtime_error(name):
    with raises(RuntimeError, "DefaultCPUAllocator: can't allocate memory: you tried to "
                              "allocate 1152921504606846976 bytes. Error code 12 (Cannot "
                              "allocate memory)"):
        _CREATORS[name](2 ** 58)  # 2**60 bytes: beyond every address space


@pytest.mark.parametrize("name", sorted(_CREATORS))
def test_size_overflow_is_pytorchs_runtime_error(name):
    with raises(RuntimeError, "Storage size calculation overflowed with sizes="
                              "[4611686018427387904, 4]"):
        _CREATORS[name](2 ** 62, 4)
    with raises(RuntimeError, "Stride calculation overflowed"):
        _CREATORS[name](0, 2 ** 62, 4)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_beyond_int64_is_pytorchs_type_error(name):
    fn = getattr(ember, name)
    with raises(TypeError, f"{name}(): argument 'size' failed to unpack the object at pos 2 "
                           f"with error \"Overflow when unpacking long long\""):
        fn(3, 2 ** 63)
    with raises(TypeError, f"{name}(): argument 'size' failed to unpack the object at pos 2 "
                           f"with error \"type must be tuple of ints,but got float\""):
        fn(3, 2.5)


def test_other_creators_allocate_through_the_same_check():
    message = "DefaultCPUAllocator: can't allocate memory: you tried to allocate " \
              "1152921504606846976 bytes. Error code 12 (Cannot allocate memory)"
    for make in (lambda: ember.arange(2 ** 57), lambda: ember.randint(0, 5, (2 ** 57,)),
                 lambda: ember.randperm(2 ** 57), lambda: ember.eye(2 ** 29),
                 lambda: ember.linspace(0, 1, 2 ** 58),
                 lambda: ember.zeros_like(ember.zeros(1).expand(2 ** 58))):
        with raises(RuntimeError, message):
            make()


def test_overflow_check_follows_pytorchs_arithmetic():
    # the size product is taken in uint64 and an overflow sticks even when a 0 follows
    with raises(RuntimeError, "Storage size calculation overflowed with sizes="
                              "[4611686018427387904, 4, 0]"):
        ember.zeros(2 ** 62, 4, 0)
    assert ember.zeros(3, 0, 2 ** 20).shape == (3, 0, 2 ** 20)


# ---- reductions of empty tensors -----------------------------------------------------------
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_of_empty_tensors(name):
    fn = getattr(ember, name)
    with raises(IndexError, f"{name}(): Expected reduction dim to be specified for "
                            f"input.numel() == 0."):
        fn(ember.zeros(0))
    with raises(IndexError, f"{name}(): Expected reduction dim 0 to have non-zero size."):
        fn(ember.zeros(0, 3), 0)
    assert fn(ember.zeros(0, 3), 1).shape == (0,)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_value_reductions_of_empty_tensors(name):
    fn = getattr(ember, name)
    with raises(RuntimeError, f"{name}(): Expected reduction dim to be specified for "
                              f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                              f"argument."):
        fn(ember.zeros(0, 3))
    with raises(IndexError, f"{name}(): Expected reduction dim 1 to have non-zero size."):
        fn(ember.zeros(3, 0), 1)


def test_amax_reports_the_first_empty_dim_as_given():
    with raises(IndexError, "amin(): Expected reduction dim 2 to have non-zero size."):
        ember.amin(ember.zeros(2, 0, 0), [2, 1])
    with raises(IndexError, "amax(): Expected reduction dim -1 to have non-zero size."):
        ember.amax(ember.zeros(3, 0), [0, -1])
    with raises(IndexError, "max(): Expected reduction dim 1 to have non-zero size."):
        ember.max(ember.zeros(3, 0), -1)  # max names it wrapped


# ---- interpolate ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_interpolate_to_nothing(mode):
    x = ember.zeros(1, 1, 4, 4)
    with raises(RuntimeError, "Input and output sizes should be greater than 0, but got input "
                              "(H: 4, W: 4) output (H: 0, W: 0)"):
        F.interpolate(x, scale_factor=0.0, mode=mode)
    with raises(RuntimeError, "Input and output sizes should be greater than 0, but got input "
                              "(H: 4, W: 4) output (H: 8, W: 0)"):
        F.interpolate(x, scale_factor=(2.0, 0.1), mode=mode)
    with raises(RuntimeError, "value cannot be converted to type int64_t without overflow"):
        F.interpolate(x, scale_factor=float("nan"), mode=mode)
    with raises(RuntimeError, "Non-empty 4D data tensor expected but got a tensor with sizes "
                              "[1, 0, 2, 2]"):
        F.interpolate(ember.zeros(1, 0, 2, 2), size=3, mode=mode)


def test_interpolate_1d_and_huge_outputs():
    with raises(RuntimeError, "Input and output sizes should be greater than 0, but got input "
                              "(W: 4) and output (W: 0)"):
        F.interpolate(ember.zeros(1, 1, 4), size=0, mode="linear")
    with raises(RuntimeError, "Storage size calculation overflowed with sizes="
                              "[1, 1, 1099511627776, 1099511627776]"):
        F.interpolate(ember.zeros(1, 1, 2, 2), size=2 ** 40)
    assert F.interpolate(ember.zeros(0, 1, 4, 4), scale_factor=2.0).shape == (0, 1, 8, 8)


# ---- cat -------------------------------------------------------------------------------------
def test_cat_arguments():
    with raises(ValueError, "torch.cat(): expected a non-empty list of Tensors"):
        ember.cat([])
    with raises(TypeError, "cat(): argument 'tensors' (position 1) must be tuple of Tensors, "
                           "not generator"):
        ember.cat(t for t in [ember.zeros(1)])
    with raises(TypeError, "expected Tensor as element 1 in argument 0, but got NoneType"):
        ember.cat([ember.zeros(1), None])
    with raises(TypeError, "stack(): argument 'tensors' (position 1) must be tuple of Tensors, "
                           "not Tensor"):
        ember.stack(ember.zeros(2, 2))
