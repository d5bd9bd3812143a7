"""Convolution and pooling ops keep PyTorch's graph node names for 1-D, 2-D and 3-D inputs
(``MaxPool3DWithIndicesBackward0``, ``AvgPool3DBackward0``, the adaptive ones, ``MeanBackward1``
for a 1-sized adaptive average, ``SqueezeBackward1`` for the 1-D ops that PyTorch runs as 2-D
ones), also (2-D, 3-D) for the gradient's own node under ``create_graph``; values and first
and second derivatives stay torch's."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare

NAMES = {1: "1d", 2: "2d", 3: "3d"}
RNG = np.random.default_rng(3)


def _weight(lib, x, nd, transposed):
    shape = ((3, 2) if transposed else (2, 3)) + (2,) * nd
    return lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), dtype=x.dtype)


# name -> op(F, lib, x, nd)
OPS = {
    "conv": lambda F, lib, x, nd: getattr(F, "conv" + NAMES[nd])(x, _weight(lib, x, nd, False)),
    "conv_transpose": lambda F, lib, x, nd: getattr(F, "conv_transpose" + NAMES[nd])(
        x, _weight(lib, x, nd, True)),
    "max_pool": lambda F, lib, x, nd: getattr(F, "max_pool" + NAMES[nd])(x, 2),
    "max_pool_overlapping": lambda F, lib, x, nd: getattr(F, "max_pool" + NAMES[nd])(
        x, 3, stride=2, padding=1, ceil_mode=True),
    "max_pool_indices": lambda F, lib, x, nd: getattr(F, "max_pool" + NAMES[nd])(
        x, 2, return_indices=True)[0],
    "avg_pool": lambda F, lib, x, nd: getattr(F, "avg_pool" + NAMES[nd])(x, 2),
    "avg_pool_padded": lambda F, lib, x, nd: getattr(F, "avg_pool" + NAMES[nd])(
        x, 3, stride=2, padding=1, count_include_pad=False),
    "avg_pool_divisor": lambda F, lib, x, nd: (
        F.avg_pool1d(x, 2) if nd == 1 else getattr(F, "avg_pool" + NAMES[nd])(
            x, 2, divisor_override=3)),
    "adaptive_max_pool": lambda F, lib, x, nd: getattr(F, "adaptive_max_pool" + NAMES[nd])(x, 4),
    "adaptive_avg_pool": lambda F, lib, x, nd: getattr(F, "adaptive_avg_pool" + NAMES[nd])(x, 4),
    "adaptive_avg_pool_to_1": lambda F, lib, x, nd: getattr(
        F, "adaptive_avg_pool" + NAMES[nd])(x, 1),
}


def _names(lib, F, op, a, nd):
    x = lib.tensor(a, requires_grad=True)
    y = op(F, lib, x, nd)
    g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    return type(y.grad_fn).__name__, type(g.grad_fn).__name__


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(OPS))
def test_node_names_match_torch(name, nd):
    a = RNG.standard_normal((2, 3) + (7,) * nd)
    op = OPS[name]
    expected = _names(torch, torch.nn.functional, op, a, nd)
    got = _names(ember, ember.nn.functional, op, a, nd)
    assert got[0] == expected[0]
    # the gradient's own node: pooling's double-backward nodes (a 1-D gradient ends in an
    # unsqueeze's backward, a convolution's gradient in a convolution, both named otherwise)
    if nd > 1 and "pool" in name and not name.endswith("to_1"):
        assert got[1] == expected[1]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(n for n in OPS if "pool" in n))
def test_unbatched_input_node_names_match_torch(name, nd):
    """An unbatched (C, *S) input is pooled by the same node, not a squeeze on top."""
    a = RNG.standard_normal((3,) + (7,) * nd)
    x = {lib: lib.tensor(a, requires_grad=True) for lib in (torch, ember)}
    names = [type(OPS[name](lib.nn.functional, lib, x[lib], nd).grad_fn).__name__
             for lib in (torch, ember)]
    assert names[1] == names[0]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batched", [True, False])
def test_values_and_gradients_match_torch(name, nd, dtype, batched):
    a = RNG.standard_normal((2, 3)[2 - (1 + batched):] + (7,) * nd).astype(dtype)
    op = OPS[name]

    def fn(lib, x):
        F = torch.nn.functional if lib is torch else ember.nn.functional
        return op(F, lib, x, nd)
    compare(fn, a)


@pytest.mark.parametrize("name", ["max_pool", "avg_pool", "adaptive_max_pool",
                                  "adaptive_avg_pool"])
def test_second_derivatives_of_3d_pooling_match_torch(name):
    a = RNG.standard_normal((1, 2, 6, 6, 6))
    v = RNG.standard_normal(a.shape)
    results = []
    for lib, F in ((torch, torch.nn.functional), (ember, ember.nn.functional)):
        x = lib.tensor(a, requires_grad=True)
        y = OPS[name](F, lib, x, 3)
        g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * lib.tensor(v)).sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10, atol=1e-12)
