"""layer_norm as one op (ember/_ops/norm_ops.py, compiled rows in ember.backend._vector):
the same values and gradients as the composite formula it replaces, higher derivatives
through the recomputed graph, and the composite kept for what the op does not take.
Expected values come from the composite formula in float64 or finite differences."""
import numpy as np
import pytest

import ember
from ember.backend import kernels

F = ember.nn.functional
needs_vector = pytest.mark.skipif(kernels._vector is None,
                                  reason="ember.backend._vector not built")


def _run(x, shape, w, b, g):
    xt = ember.tensor(x, requires_grad=True)
    wt = None if w is None else ember.tensor(w, requires_grad=True)
    bt = None if b is None else ember.tensor(b, requires_grad=True)
    out = F.layer_norm(xt, shape, wt, bt, eps=1e-5)
    out.backward(ember.tensor(g))
    grads = [t.grad.numpy() if t is not None else None for t in (xt, wt, bt)]
    return out, [out.detach().numpy()] + grads


@needs_vector
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-11), (np.float32, 2e-5)])
@pytest.mark.parametrize("shape,normalized,affine", [((64, 256), (256,), "both"),
                                                     ((3, 4, 5), (4, 5), "both"),
                                                     ((2, 7, 33), (33,), "weight"),
                                                     ((5, 9), (9,), "none")])
def test_op_matches_the_composite_formula(dtype, tol, shape, normalized, affine):
    rng = np.random.default_rng(len(shape) + shape[-1])
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    w = rng.standard_normal(normalized).astype(dtype) if affine != "none" else None
    b = rng.standard_normal(normalized).astype(dtype) if affine == "both" else None
    g = rng.standard_normal(shape).astype(dtype)
    out, fused = _run(x, normalized, w, b, g)
    assert type(out.grad_fn).__name__ == "NativeLayerNormBackward0"
    previous = kernels.set_enabled(False)
    try:  # the composite formula, in float64: the reference
        ref_out, ref = _run(x.astype(np.float64), normalized,
                            None if w is None else w.astype(np.float64),
                            None if b is None else b.astype(np.float64), g.astype(np.float64))
    finally:
        kernels.set_enabled(previous)
    assert type(ref_out.grad_fn).__name__ != "NativeLayerNormBackward0"
    for got, want in zip(fused, ref):
        if want is None:
            assert got is None
            continue
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1, np.abs(want).max()))


@needs_vector
def test_gradients_and_second_derivatives_match_finite_differences():
    rng = np.random.default_rng(7)
    x = ember.tensor(rng.standard_normal((3, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal(6), requires_grad=True)
    b = ember.tensor(rng.standard_normal(6), requires_grad=True)

    def fn(x, w, b):
        return F.layer_norm(x, (6,), w, b)
    assert type(fn(x, w, b).grad_fn).__name__ == "NativeLayerNormBackward0"
    assert ember.autograd.gradcheck(fn, (x, w, b))
    assert ember.autograd.gradgradcheck(fn, (x, w, b))


def test_other_inputs_take_the_composite_formula():
    x = ember.randn(4, 6, dtype=ember.float64).t()  # not contiguous
    assert type(F.layer_norm(x.requires_grad_(), (4,)).grad_fn).__name__ != \
        "NativeLayerNormBackward0"
    half = ember.randn(3, 8).half().requires_grad_()
    assert type(F.layer_norm(half, (8,)).grad_fn).__name__ != "NativeLayerNormBackward0"
    mixed = ember.randn(3, 8, requires_grad=True)
    w = ember.randn(8, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="mixed dtype"):  # PyTorch's CPU kernels refuse it
        F.layer_norm(mixed, (8,), w)


@needs_vector
def test_compiled_rows_check_their_buffers():
    x = np.zeros((4, 6), np.float32)
    stats = np.zeros(4), np.zeros(4)
    with pytest.raises(ValueError, match="layer_norm_forward: buffer sizes"):
        kernels._vector.layer_norm_forward(x, np.ones(5, np.float32), None, np.empty_like(x),
                                           *stats, 6, 1e-5, False)
    with pytest.raises(ValueError, match="one mean/rstd per row"):
        kernels._vector.layer_norm_forward(x, None, None, np.empty_like(x), np.zeros(3),
                                           np.zeros(4), 6, 1e-5, False)
    with pytest.raises(ValueError, match="layer_norm_backward: buffer sizes"):
        kernels._vector.layer_norm_backward(x, x, None, *stats, np.empty_like(x), np.zeros(5),
                                            None, 6, False)
    with pytest.raises(ValueError, match="layer_norm_backward: buffer sizes"):
        kernels._vector.layer_norm_backward(x[:3].copy(), x, None, *stats, None, None, None, 6,
                                            False)


@needs_vector
def test_gradients_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2048, 256)).astype(np.float32)
    w, b = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    before = ember.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            ember.set_num_threads(n)
            results.append(_run(x, (256,), w, b, g)[1])
    finally:
        ember.set_num_threads(before)
    for other in results[1:]:
        for got, first in zip(other, results[0]):
            np.testing.assert_array_equal(got, first)
