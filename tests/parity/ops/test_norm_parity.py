"""``ember.norm`` dispatches as ``torch.norm`` does ('fro' over at most two dims and every
number: a vector norm; 'nuc' and other strings: ``linalg.matrix_norm``): values, graph node
names, gradients (including PyTorch's 0 at zero vectors and entries, with no NumPy warning,
and no gradient at all for p=0), second derivatives and errors, against torch."""
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import error_of

R = np.random.default_rng(11)
WITH_ZEROS = R.standard_normal((2, 3, 4))
WITH_ZEROS[0, 1] = 0.0     # a zero vector along the last dim and a zero row
WITH_ZEROS[1, :, 2] = 0.0  # a zero vector along dim 1
FULL_RANK = R.standard_normal((2, 3, 4))  # the nuclear norm's gradient is unique here

ORDERS = ["fro", None, 2, 1, 0, 3, 0.5, 1.5, float("inf"), -float("inf"), -1, -2]
DIMS = ["default", None, 1, -1, (1,), (0, 2), (1, 2), (-1, -2), (0, 1, 2)]


def _run(lib, a, p, dim, keepdim, create_graph=False):
    x = lib.tensor(a, requires_grad=True)
    kwargs = {} if dim == "default" else {"dim": dim}
    y = lib.norm(x, p=p, keepdim=keepdim, **kwargs)
    g, = lib.autograd.grad(y.sum(), x, allow_unused=True, create_graph=create_graph)
    return (y.detach().numpy(), type(y.grad_fn).__name__,
            None if g is None else g.detach().numpy())


def _assert_same(expected, got, rtol=1e-10):
    np.testing.assert_allclose(got[0], expected[0], rtol=rtol, atol=1e-12)
    assert got[1] == expected[1]
    if expected[2] is None:
        assert got[2] is None
    else:
        np.testing.assert_allclose(got[2], expected[2], rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("p", ORDERS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_vector_orders_match_torch(p, dim, keepdim):
    if p == "fro" and dim == (0, 1, 2):
        pytest.skip("an error (test_errors_match_torch)")
    for create_graph in (False, True):
        expected = _run(torch, WITH_ZEROS, p, dim, keepdim, create_graph)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "invalid value in divide" at the zeros
            got = _run(ember, WITH_ZEROS, p, dim, keepdim, create_graph)
        _assert_same(expected, got)


@pytest.mark.parametrize("dim", ["default", None, (0, 1), (1, 0), (-1, -2)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_nuclear_norm_matches_torch(dim, keepdim):
    a = FULL_RANK[0] if dim in ("default", None) else FULL_RANK
    _assert_same(_run(torch, a, "nuc", dim, keepdim), _run(ember, a, "nuc", dim, keepdim),
                 rtol=1e-9)


@pytest.mark.parametrize("p", [2, 3, 0.5, 1.5, "fro"], ids=str)
def test_second_derivatives_match_torch(p):
    a = FULL_RANK
    v = R.standard_normal(a.shape)
    results = []
    for lib in (torch, ember):
        x = lib.tensor(a, requires_grad=True)
        g, = lib.autograd.grad(lib.norm(x, p=p, dim=-1).pow(2).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * lib.tensor(v)).sum(), x)
        results.append(gg.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-9, atol=1e-12)


def test_float32_and_dtype_argument():
    a = FULL_RANK.astype(np.float32)
    for p, dim in ((2, 1), ("fro", (1, 2)), ("nuc", (1, 2)), (3, None)):
        out = [lib.norm(lib.tensor(a), p=p, dim=dim) for lib in (torch, ember)]
        assert str(out[1].dtype).split(".")[-1] == str(out[0].dtype).split(".")[-1]
        np.testing.assert_allclose(out[1].numpy(), out[0].numpy(), rtol=1e-5)
        wide = [lib.norm(lib.tensor(a), p=p, dim=dim, dtype=lib.float64) for lib in (torch, ember)]
        assert wide[1].dtype == ember.float64
        np.testing.assert_allclose(wide[1].numpy(), wide[0].numpy(), rtol=1e-10)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.norm(x, p="nuc"),                   # 3-D input, no dim
    lambda lib, x: lib.norm(x[0, 0], p="nuc"),             # 1-D input
    lambda lib, x: lib.norm(x, p="nuc", dim=1),
    lambda lib, x: lib.norm(x, p="fro", dim=(0, 1, 2)),
    lambda lib, x: lib.norm(x, p="abc"),
    lambda lib, x: lib.norm(x, p="abc", dim=(0, 1)),
    lambda lib, x: lib.norm(x, p="nuc", dim=(1, 1)),
    lambda lib, x: lib.norm(x.long(), p=2),
])
def test_errors_match_torch(call):
    expected = error_of(lambda: call(torch, torch.tensor(WITH_ZEROS)))
    assert expected is not None
    assert error_of(lambda: call(ember, ember.tensor(WITH_ZEROS))) == expected
