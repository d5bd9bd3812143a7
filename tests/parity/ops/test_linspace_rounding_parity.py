"""linspace's values bit for bit as PyTorch's kernel rounds them (NumPy's linspace differs in
the last bit at many points), and affine_grid's base grid built from them: a grid sampled at
exact pixel centres must sit on the same floats, or the bilinear gradient w.r.t. the grid
picks the other neighbour."""
import re

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import DEVICE

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16"]
RANGES = [(-1, 1), (0.3, 7.9), (-5, 100), (3, -2.5), (-29.1394, -13.309)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_linspace_bitwise(dtype):
    for steps in (0, 1, 2, 5, 20, 64, 173):
        for start, end in RANGES:
            ours = ember.linspace(start, end, steps, dtype=getattr(ember, dtype), device=DEVICE)
            theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
            assert str(ours.dtype).split(".")[1] == dtype
            np.testing.assert_array_equal(ours.double().cpu().numpy(), theirs.double().numpy(),
                                          err_msg=f"{start}, {end}, {steps}")


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [[2, 1, 20, 20], [1, 3, 7, 33], [2, 1, 3, 4, 5]])
def test_affine_grid_identity_bitwise(size, align_corners):
    nd = len(size) - 2
    eye = np.eye(nd, nd + 1, dtype=np.float32)[None].repeat(size[0], 0)
    ours = ember.nn.functional.affine_grid(ember.tensor(eye, device=DEVICE), size,
                                           align_corners=align_corners).cpu()
    theirs = torch.nn.functional.affine_grid(torch.tensor(eye), size,
                                             align_corners=align_corners)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_grid_gradient_at_pixel_centres():
    rs = np.random.RandomState(0)
    x = rs.rand(2, 1, 20, 20).astype(np.float32)
    w = rs.randn(2, 1, 20, 20).astype(np.float32)
    eye = np.eye(2, 3, dtype=np.float32)[None].repeat(2, 0)
    grads = []
    for lib in (ember, torch):
        theta = lib.tensor(eye, requires_grad=True)
        grid = lib.nn.functional.affine_grid(theta, [2, 1, 20, 20], align_corners=False)
        out = lib.nn.functional.grid_sample(lib.tensor(x), grid, align_corners=False)
        (out * lib.tensor(w)).sum().backward()
        grads.append(theta.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64", "bool", "uint8"])
def test_linspace_kernel_free_lengths_and_refusals(dtype):
    # zero or one step runs no kernel, so the types without one still answer
    for steps in (0, 1, 3):
        try:
            theirs = torch.linspace(0, 2, steps, dtype=getattr(torch, dtype)).tolist()
        except NotImplementedError as error:
            with pytest.raises(NotImplementedError, match=re.escape(str(error))):
                ember.linspace(0, 2, steps, dtype=getattr(ember, dtype))
            continue
        assert ember.linspace(0, 2, steps, dtype=getattr(ember, dtype)).tolist() == theirs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_edges_bitwise(dtype):
    # histogram's equal bins are torch.linspace over the range: the same floats
    rs = np.random.RandomState(0)
    for bins in (3, 17, 101):
        a = rs.randn(40) * 37.0
        ours = ember.histogram(ember.tensor(a, dtype=getattr(ember, dtype), device=DEVICE),
                               bins=bins)
        theirs = torch.histogram(torch.tensor(a, dtype=getattr(torch, dtype)), bins=bins)
        np.testing.assert_array_equal(ours.bin_edges.cpu().numpy(), theirs.bin_edges.numpy())
        np.testing.assert_array_equal(ours.hist.cpu().numpy(), theirs.hist.numpy())
    s = rs.randn(30, 2)
    ours = ember.histogramdd(ember.tensor(s, dtype=getattr(ember, dtype)), bins=[5, 7])
    theirs = torch.histogramdd(torch.tensor(s, dtype=getattr(torch, dtype)), bins=[5, 7])
    for a, b in zip(ours.bin_edges, theirs.bin_edges):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
