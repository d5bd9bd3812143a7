"""Python and NumPy scalars as operands, and the graph edges they get, vs PyTorch.

PyTorch treats a NumPy scalar like a Python number ("wrapped number"): it does not
promote a float32 tensor to float64. Binary arithmetic with a scalar records a
``(None, 0)`` edge for it in ``grad_fn.next_functions``.
"""
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare

SCALARS = [np.float64(1.5), np.float32(-0.5), np.int64(3), 2.5, 3]
OPS = {
    "mul": lambda x, s: x * s,
    "rmul": lambda x, s: s * x,
    "add": lambda x, s: x + s,
    "radd": lambda x, s: s + x,
    "sub": lambda x, s: x - s,
    "div": lambda x, s: x / s,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("scalar", SCALARS, ids=lambda s: f"{type(s).__name__}({s})")
def test_scalar_operand_keeps_dtype_values_and_grads(op, scalar, dtype):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(dtype)
    compare(lambda lib, t: OPS[op](t, scalar), x)
    compare(lambda lib, t: OPS[op](t, scalar), x, noncontiguous=True)


@pytest.mark.parametrize("scalar", [np.float64(2.0), np.int64(2), np.float32(2.0)],
                         ids=lambda s: type(s).__name__)
def test_integer_tensor_with_numpy_scalar(scalar):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = torch.tensor(a) * scalar
    e = ember.tensor(a) * scalar
    assert e.dtype.name == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def _edges(lib, y):
    return [None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions]


@pytest.mark.parametrize("expr", [
    lambda lib, x, w: x * 2.0,
    lambda lib, x, w: x + 0.1,
    lambda lib, x, w: x - 0.1,
    lambda lib, x, w: x / 2.0,
    lambda lib, x, w: x * w,
    lambda lib, x, w: (x * w) + x,
    lambda lib, x, w: x.tanh(),
])
def test_next_functions_match(expr):
    names = {}
    for lib in (torch, ember):
        x = lib.ones(3, requires_grad=True)
        w = lib.ones(3)
        y = expr(lib, x, w)
        assert isinstance(y.grad_fn.next_functions, tuple)
        names[lib] = _edges(lib, y)
    assert names[ember] == names[torch]


@pytest.mark.parametrize("data", [
    [np.float64(1.5)], [np.float32(1.5), 2.0], [1.5, np.float64(2)], [np.int32(1)],
    [[np.int32(1), 2]], [np.bool_(True), np.bool_(False)], [np.float16(1), 3],
    [np.array([1.0, 2.0])], [1.0, 2.0], [1, 2], np.float64(2.5), [[1, 2.5], [3, 4]],
], ids=repr)
def test_tensor_infers_dtype_of_numpy_scalars_in_sequences(data):
    t, e = torch.tensor(data), ember.tensor(data)
    assert e.dtype.name == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("expr", [lambda x: x.sum(), lambda x: x.sum(0), lambda x: x.mean(),
                                  lambda x: x.mean(1), lambda x: x.sum(dtype=None),
                                  lambda x: x.sum((0, 1))])
def test_reduction_node_names(expr):
    names = [expr(lib.ones(2, 3, requires_grad=True)).grad_fn.name() for lib in (torch, ember)]
    assert names[0] == names[1]


# Operands no op takes: PyTorch's operators return NotImplemented (Python's own TypeError
# follows, or identity for ==/!=); its functions raise TypeError naming the argument.
BAD_OPERANDS = [None, "a", [1.0, 2.0, 3.0], object()]
OPERATOR_EXPRESSIONS = ["x + s", "s + x", "x - s", "x * s", "x / s", "x ** s", "x < s",
                        "x >= s", "x == s", "x != s", "x & s"]


@pytest.mark.parametrize("expression", OPERATOR_EXPRESSIONS)
@pytest.mark.parametrize("bad", BAD_OPERANDS, ids=lambda s: type(s).__name__)
def test_operators_with_operands_of_no_tensor_type(expression, bad):
    def run(lib):
        try:
            result = eval(expression, {"x": lib.ones(3), "s": bad})
        except TypeError as error:
            return "TypeError", str(error).replace("torch", "ember")
        return "result", result if isinstance(result, bool) else result.tolist()
    if expression in ("x * s", "s + x") and isinstance(bad, (str, list)):
        # str/list repetition asks the tensor for __index__: both raise TypeError
        assert run(torch)[0] == run(ember)[0] == "TypeError"
        return
    assert run(ember) == run(torch)


@pytest.mark.parametrize("fn", ["add", "mul", "sub", "div"])
@pytest.mark.parametrize("bad", BAD_OPERANDS, ids=lambda s: type(s).__name__)
def test_functions_reject_operands_of_no_tensor_type(fn, bad):
    for lib in (torch, ember):
        with pytest.raises(TypeError, match=f"argument 'other' \\(position 2\\) must be Tensor, "
                                            f"not {type(bad).__name__}"):
            getattr(lib, fn)(lib.ones(3), bad)


def test_numpy_array_operand_counts_as_a_tensor_of_its_dtype():
    with warnings.catch_warnings():  # torch's own __array_wrap__ DeprecationWarning
        warnings.simplefilter("ignore")
        t = torch.ones(3) + np.full(3, 0.5)
    e = ember.ones(3) + np.full(3, 0.5)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1] == "float64"
    np.testing.assert_array_equal(e.numpy(), t.numpy())
