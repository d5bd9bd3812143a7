"""Division by a tensor vs PyTorch, bit for bit: ``s / x`` is ``x.reciprocal() * s`` (as
PyTorch's ``Tensor.__rtruediv__``), ``div(s, x)`` divides by a wrapped scalar, and the
gradients follow PyTorch's formulas in PyTorch's order."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
DTYPES = [np.float32, np.float64]
CASES = {
    "scalar / x": lambda lib, x: 3.7 / x,
    "int / x": lambda lib, x: 2 / x,
    "div(scalar, x)": lambda lib, x: lib.div(-0.3, x),
    "x.reciprocal()": lambda lib, x: x.reciprocal(),
    "x / y": lambda lib, x: x / (x * 0.5 + 3.0),
}


def _node_names(t):
    names, node = [], t.grad_fn
    while node is not None:
        names.append(node.name())
        node = next((n for n, _ in node.next_functions if n is not None
                     and n.name() != "AccumulateGrad"), None)
    return names


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("create_graph", [False, True])
def test_division_is_bitwise_pytorch(name, dtype, create_graph):
    data = (RNG.standard_normal(5000) * 10).astype(dtype)
    cot = RNG.standard_normal(5000).astype(dtype)
    results = {}
    for lib in (torch, ember):
        x = lib.tensor(data, requires_grad=True)
        y = CASES[name](lib, x)
        g, = lib.autograd.grad(y, x, lib.tensor(cot), create_graph=create_graph)
        results[lib.__name__] = (y.detach().numpy(), g.detach().numpy(), _node_names(y))
    (ty, tg, tnames), (ey, eg, enames) = results["torch"], results["ember"]
    assert ey.dtype == ty.dtype
    assert np.array_equal(ey, ty)
    assert np.array_equal(eg, tg)
    assert enames == tnames


def test_scalar_division_of_integer_and_bool_tensors():
    for data in ([1, 2, 3], [True, False]):
        for f in (lambda lib, t: 2 / t, lambda lib, t: 2.5 / t, lambda lib, t: lib.div(2, t)):
            t, e = f(torch, torch.tensor(data)), f(ember, ember.tensor(data))
            assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            assert np.array_equal(e.numpy(), t.numpy())


def test_float64_keeps_a_float_scalar_in_float64():
    for f in (lambda lib, t: lib.remainder(0.1, t), lambda lib, t: lib.div(0.1, t),
              lambda lib, t: lib.div(0.1, t, rounding_mode="floor")):
        t = f(torch, torch.tensor([0.03, 3.0], dtype=torch.float64))
        e = f(ember, ember.tensor([0.03, 3.0], dtype=ember.float64))
        assert np.array_equal(e.numpy(), t.numpy())
