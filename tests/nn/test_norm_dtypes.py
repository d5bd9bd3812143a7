"""Normalization with a float16/bfloat16 input, rms_norm / RMSNorm, BatchNorm3d and prelu's
dtype rule, without torch. A reduced-precision input is normalized in float32 and rounded once:
its expected values are the float64 formula on the input's (rounded) values, within one
rounding of its dtype; gradients are checked by finite differences in float64 (gradcheck) and
against the float64 run of the same call; error texts are PyTorch's."""
import re

import numpy as np
import pytest

import ember
from ember import nn
import ember.nn.functional as F

REDUCED = [ember.float16, ember.bfloat16]
#: one rounding of each reduced dtype (a relative error bound for a result rounded once)
ULP = {ember.float16: 2.0 ** -10, ember.bfloat16: 2.0 ** -7}


def rand(*shape, seed=0, scale=1.0, shift=0.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale + shift


def reduced(a, dtype, requires_grad=False):
    """``a`` rounded to ``dtype`` as a leaf tensor."""
    t = ember.tensor(a, dtype=ember.float32).to(dtype).detach()
    return t.requires_grad_() if requires_grad else t


def values(t):
    """A tensor's values in float64 (reduced dtypes widened exactly)."""
    return t.detach().float().numpy().astype(np.float64)


def can_differentiate(dtype):
    """Whether this build records gradients for ``dtype`` (bfloat16 autograd is newer)."""
    try:
        ember.zeros(1, dtype=dtype).requires_grad_()
    except NotImplementedError:
        return False
    return True


def assert_rounded_once(got, want, dtype):
    """``got`` (a tensor of ``dtype``) is ``want`` rounded once to it (plus float32 noise)."""
    assert got.dtype is dtype
    np.testing.assert_allclose(values(got), want, rtol=ULP[dtype],
                               atol=ULP[dtype] * 1e-3 * max(1.0, np.abs(want).max()))


# ---- float64 references (NumPy) ---------------------------------------------------------------
def ref_normalize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps), mean, var


def ref_layer_norm(x, k, w, b, eps=1e-5):
    out, _, _ = ref_normalize(x, tuple(range(x.ndim - k, x.ndim)), eps)
    return out * w + b


def ref_group_norm(x, groups, w, b, eps=1e-5):
    n, c = x.shape[:2]
    out, _, _ = ref_normalize(x.reshape(n, groups, -1), (2,), eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return out.reshape(x.shape) * w.reshape(shape) + b.reshape(shape)


def ref_batch_norm_train(x, w, b, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    out, mean, var = ref_normalize(x, axes, eps)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    count = x.size // x.shape[1]
    return (out * w.reshape(shape) + b.reshape(shape), mean.reshape(-1),
            var.reshape(-1) * count / (count - 1))


def ref_rms_norm(x, k, w, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    out = x / np.sqrt((x ** 2).mean(axis=axes, keepdims=True) + eps)
    return out if w is None else out * w


# ---- outputs: the input's dtype, the float32 computation rounded once ---------------------------
@pytest.mark.parametrize("dtype", REDUCED)
def test_layer_norm_with_float32_parameters_keeps_the_input_dtype(dtype):
    x = reduced(rand(4, 3, 8, scale=3, shift=1), dtype)
    w, b = rand(8, seed=1), rand(8, seed=2)
    out = F.layer_norm(x, (8,), ember.tensor(w, dtype=ember.float32),
                       ember.tensor(b, dtype=ember.float32))
    want = ref_layer_norm(values(x), 1, w.astype(np.float32), b.astype(np.float32))
    assert_rounded_once(out, want, dtype)
    # a strided input and two normalized dims take the same path
    xt = reduced(rand(3, 8, 4, seed=3), dtype).transpose(1, 2)
    out = F.layer_norm(xt, (4, 8))
    assert_rounded_once(out, ref_layer_norm(values(xt), 2, 1.0, 0.0), dtype)


@pytest.mark.parametrize("dtype", REDUCED)
def test_group_norm_with_float32_parameters_keeps_the_input_dtype(dtype):
    x = reduced(rand(2, 6, 5, scale=2), dtype)
    w, b = rand(6, seed=1).astype(np.float32), rand(6, seed=2).astype(np.float32)
    out = F.group_norm(x, 3, ember.tensor(w), ember.tensor(b))
    assert_rounded_once(out, ref_group_norm(values(x), 3, w, b), dtype)


@pytest.mark.parametrize("dtype", REDUCED)
def test_batch_norm_training_updates_float32_running_stats_in_float32(dtype):
    x = reduced(rand(5, 3, 4, scale=2, shift=1), dtype)
    w, b = rand(3, seed=1).astype(np.float32), rand(3, seed=2).astype(np.float32)
    rm, rv = ember.zeros(3), ember.ones(3)
    out = F.batch_norm(x, rm, rv, ember.tensor(w), ember.tensor(b), training=True,
                       momentum=0.25)
    want, mean, unbiased = ref_batch_norm_train(values(x), w, b)
    assert_rounded_once(out, want, dtype)
    assert rm.dtype is ember.float32 and rv.dtype is ember.float32
    # the statistics of the rounded input, kept in float32: no reduced-precision rounding
    np.testing.assert_allclose(rm.numpy(), 0.25 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.75 + 0.25 * unbiased, rtol=1e-5)


@pytest.mark.parametrize("dtype", REDUCED)
def test_batch_norm_eval_uses_float32_running_stats(dtype):
    x = reduced(rand(4, 3, 2), dtype)
    rm, rv = rand(3, seed=1).astype(np.float32), (np.abs(rand(3, seed=2)) + 0.5).astype(np.float32)
    w = rand(3, seed=3).astype(np.float32)
    out = F.batch_norm(x, ember.tensor(rm), ember.tensor(rv), ember.tensor(w), None)
    shape = (1, 3, 1)
    want = (values(x) - rm.reshape(shape)) / np.sqrt(rv.reshape(shape) + 1e-5) * w.reshape(shape)
    assert_rounded_once(out, want, dtype)


@pytest.mark.parametrize("dtype", REDUCED)
def test_batch_norm_with_statistics_of_the_input_dtype_blends_them_once(dtype):
    # a whole module cast to the reduced dtype: its running statistics are of that dtype too,
    # and move by the float32 batch statistics, rounded once
    x = reduced(rand(6, 2, 3, scale=2, shift=1), dtype)
    rm, rv = ember.zeros(2, dtype=dtype), ember.ones(2, dtype=dtype)
    out = F.batch_norm(x, rm, rv, ember.ones(2, dtype=dtype), ember.zeros(2, dtype=dtype),
                       training=True, momentum=0.5)
    want, mean, unbiased = ref_batch_norm_train(values(x), np.ones(2), np.zeros(2))
    assert_rounded_once(out, want, dtype)
    assert_rounded_once(rm, 0.5 * mean, dtype)
    assert_rounded_once(rv, 0.5 + 0.5 * unbiased, dtype)


@pytest.mark.parametrize("dtype", REDUCED)
def test_instance_norm_with_float32_parameters_keeps_the_input_dtype(dtype):
    x = reduced(rand(2, 3, 6, scale=2), dtype)
    w, b = rand(3, seed=1).astype(np.float32), rand(3, seed=2).astype(np.float32)
    rm, rv = ember.zeros(3), ember.ones(3)
    out = F.instance_norm(x, rm, rv, ember.tensor(w), ember.tensor(b), momentum=1.0)
    xv = values(x)
    norm, mean, var = ref_normalize(xv, (2,), 1e-5)
    assert_rounded_once(out, norm * w.reshape(1, 3, 1) + b.reshape(1, 3, 1), dtype)
    assert rm.dtype is ember.float32
    np.testing.assert_allclose(rm.numpy(), mean.reshape(2, 3).mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), (var * 6 / 5).reshape(2, 3).mean(0), rtol=1e-5)


@pytest.mark.parametrize("dtype", REDUCED)
def test_modules_with_float32_parameters_keep_the_input_dtype(dtype):
    cases = [(nn.LayerNorm(4), (2, 3, 4)), (nn.GroupNorm(2, 4), (2, 4, 3)),
             (nn.BatchNorm1d(4), (3, 4)), (nn.BatchNorm2d(4), (2, 4, 2, 3)),
             (nn.BatchNorm3d(4), (2, 4, 2, 2, 2)), (nn.InstanceNorm1d(4, affine=True), (2, 4, 5)),
             (nn.InstanceNorm2d(4, track_running_stats=True), (2, 4, 3, 3)),
             (nn.RMSNorm([3, 4]), (2, 3, 4))]
    for module, shape in cases:
        for training in (True, False):
            module.train(training)
            out = module(reduced(rand(*shape), dtype))
            assert out.dtype is dtype, (module, training)
            for name, t in list(module.named_parameters()) + list(module.named_buffers()):
                if name != "num_batches_tracked":
                    assert t.dtype is ember.float32, (module, name)


# ---- gradients: the input's in its dtype, the parameters' in theirs -----------------------------
NORMS = {
    "layer_norm": lambda x, w, b: F.layer_norm(x, (5,), w, b),
    "group_norm": lambda x, w, b: F.group_norm(x, 5, w, b),
    "batch_norm": lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
    "batch_norm_eval": lambda x, w, b: F.batch_norm(
        x, ember.linspace(-1, 1, 5, dtype=w.dtype), ember.linspace(0.5, 2, 5, dtype=w.dtype), w,
        b),
    "instance_norm": lambda x, w, b: F.instance_norm(x, None, None, w, b),
    "rms_norm": lambda x, w, b: F.rms_norm(x, (5,), w),
}


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("name", sorted(NORMS))
def test_gradients_come_back_in_each_tensor_dtype(name, dtype):
    if not can_differentiate(dtype):
        pytest.skip(f"no autograd for {dtype} in this build")
    fn = NORMS[name]
    # five channels, and a last dim of five: every norm's parameters have 5 values
    xa, wa, ba = rand(3, 5, 5, scale=2, shift=1), rand(5, seed=1), rand(5, seed=2)
    g = rand(3, 5, 5, seed=3)
    x = reduced(xa, dtype, requires_grad=True)
    w = ember.tensor(wa, dtype=ember.float32, requires_grad=True)
    b = None if name == "rms_norm" else ember.tensor(ba, dtype=ember.float32, requires_grad=True)
    out = fn(x, w, b)
    assert out.dtype is dtype
    out.backward(ember.tensor(g).to(dtype))
    assert x.grad.dtype is dtype and w.grad.dtype is ember.float32
    # the float64 run on the same (rounded) values: the gradient rounded once
    x64 = ember.tensor(values(x), requires_grad=True)
    w64 = ember.tensor(values(w), requires_grad=True)
    b64 = None if b is None else ember.tensor(values(b), requires_grad=True)
    fn(x64, w64, b64).backward(ember.tensor(values(ember.tensor(g).to(dtype))))
    assert_rounded_once(x.grad, x64.grad.numpy(), dtype)
    scale = np.abs(w64.grad.numpy()).max()
    np.testing.assert_allclose(w.grad.numpy(), w64.grad.numpy(), rtol=1e-5, atol=1e-6 * scale)
    if b is not None:
        assert b.grad.dtype is ember.float32
        np.testing.assert_allclose(b.grad.numpy(), b64.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_float16_layer_norm_runs_the_float32_op_between_two_casts():
    x = reduced(rand(4, 8), ember.float16, requires_grad=True)
    out = F.layer_norm(x, (8,), ember.ones(8, requires_grad=True))
    assert type(out.grad_fn).__name__ == "ToCopyBackward0"


# ---- dtype mixes PyTorch refuses ----------------------------------------------------------------
FLOAT_PARAM = "mixed dtype (CPU): expect parameter to have scalar type of Float"
SAME = "mixed dtype (CPU): all inputs must share same datatype."


@pytest.mark.parametrize("x_dtype,p_dtype,message", [
    (ember.float32, ember.bfloat16, FLOAT_PARAM),
    (ember.float32, ember.float16, FLOAT_PARAM),
    (ember.float32, ember.float64, FLOAT_PARAM),
    (ember.bfloat16, ember.float16, FLOAT_PARAM),
    (ember.float16, ember.float64, FLOAT_PARAM),
    (ember.float64, ember.float32, SAME),
])
def test_mixed_dtypes_other_than_reduced_input_with_float32_parameters_raise(x_dtype, p_dtype,
                                                                           message):
    x = ember.randn(4, 2, 3).to(x_dtype)
    p = ember.ones(2, dtype=p_dtype)
    calls = [lambda: F.layer_norm(x, (3,), ember.ones(3, dtype=p_dtype)),
             lambda: F.group_norm(x, 1, p, p),
             lambda: F.batch_norm(x, None, None, p, None, training=True),
             lambda: F.batch_norm(x, p, p, None, None),
             lambda: F.instance_norm(x, None, None, p, p),
             lambda: nn.LayerNorm(3, dtype=p_dtype)(x)]
    for call in calls:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == message


def test_parameters_that_disagree_with_the_first_one_raise():
    x = ember.randn(4, 2, 3).bfloat16()
    bf, f32 = ember.ones(2, dtype=ember.bfloat16), ember.ones(2)
    with pytest.raises(RuntimeError, match="^expected scalar type BFloat16 but found Float$"):
        F.group_norm(x, 2, bf, f32)  # the weight says "not mixed": the bias must follow it
    with pytest.raises(RuntimeError, match="^expected scalar type BFloat16 but found Float$"):
        F.batch_norm(x, f32, f32, bf, None)
    with pytest.raises(RuntimeError, match=f"^{re.escape(FLOAT_PARAM)}$"):
        F.group_norm(x, 2, f32, bf)  # mixed: every parameter float32
    with pytest.raises(RuntimeError, match=f"^{re.escape(FLOAT_PARAM)}$"):
        F.batch_norm(x, f32, bf, None, None, training=True)


def test_matching_float32_and_float64_calls_are_unchanged():
    for dtype in (ember.float32, ember.float64):
        x = ember.randn(3, 4, dtype=dtype, requires_grad=True)
        w = ember.ones(4, dtype=dtype)
        assert F.layer_norm(x, (4,), w).dtype is dtype
        assert F.group_norm(x, 2, w).dtype is dtype
        assert F.batch_norm(x, None, None, w, training=True).dtype is dtype


# ---- rms_norm / RMSNorm -------------------------------------------------------------------------
@pytest.mark.parametrize("shape,normalized", [((4, 6), (6,)), ((2, 3, 4), (3, 4)), ((5,), (5,))])
def test_rms_norm_matches_the_formula(shape, normalized):
    x = rand(*shape, scale=2)
    w = rand(*normalized, seed=1)
    k = len(normalized)
    got = F.rms_norm(ember.tensor(x), list(normalized), ember.tensor(w), eps=1e-3)
    np.testing.assert_allclose(got.numpy(), ref_rms_norm(x, k, w, 1e-3), rtol=1e-12)
    got = ember.rms_norm(ember.tensor(x, dtype=ember.float32), normalized)
    np.testing.assert_allclose(got.numpy(), ref_rms_norm(x, k, None, np.finfo(np.float32).eps),
                               rtol=1e-5)


@pytest.mark.parametrize("dtype,eps", [(ember.float64, np.finfo(np.float64).eps),
                                       (ember.float32, np.finfo(np.float32).eps),
                                       (ember.float16, np.finfo(np.float32).eps),
                                       (ember.bfloat16, np.finfo(np.float32).eps)])
def test_rms_norm_default_eps_is_that_of_the_dtype_computed_in(dtype, eps):
    # |x| ~ 1e-4: x**2 ~ 1e-8 is comparable to float32's eps, so eps shows in the result
    x = ember.tensor([[1e-4, -1e-4, 2e-4]], dtype=ember.float32).to(dtype)
    got = F.rms_norm(x, (3,))
    assert got.dtype is dtype
    want = ref_rms_norm(values(x), 1, None, eps)
    tol = ULP.get(dtype, 1e-6)
    np.testing.assert_allclose(values(got), want, rtol=tol)


def test_rms_norm_gradients_and_second_derivatives_match_finite_differences():
    x = ember.tensor(rand(3, 2, 4), requires_grad=True)
    w = ember.tensor(rand(2, 4, seed=1), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, w: F.rms_norm(x, (2, 4), w, 1e-2), (x, w))
    assert ember.autograd.gradgradcheck(lambda x, w: F.rms_norm(x, (2, 4), w, 1e-2), (x, w))
    assert ember.autograd.gradcheck(lambda x: F.rms_norm(x, (4,)), (x,))


@pytest.mark.parametrize("x_dtype,w_dtype", [(ember.float16, ember.float32),
                                             (ember.bfloat16, ember.float32),
                                             (ember.float16, ember.bfloat16),
                                             (ember.float32, ember.float64),
                                             (ember.float64, ember.float32)])
def test_rms_norm_takes_any_weight_dtype_and_returns_the_input_dtype(x_dtype, w_dtype):
    xa, wa = rand(3, 5), rand(5, seed=1)
    x = ember.tensor(xa, dtype=ember.float32).to(x_dtype)
    w = ember.tensor(wa, dtype=ember.float32).to(w_dtype)
    out = F.rms_norm(x, (5,), w)
    assert out.dtype is x_dtype
    want = ref_rms_norm(values(x), 1, values(w), np.finfo(np.float32).eps
                        if x_dtype is not ember.float64 else np.finfo(np.float64).eps)
    np.testing.assert_allclose(values(out), want, rtol=ULP.get(x_dtype, 1e-6))


def test_rms_norm_errors():
    x = ember.ones(2, 3)
    cases = [
        (lambda: F.rms_norm(x, 3), TypeError,
         "rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int"),
        (lambda: F.rms_norm(x, []), RuntimeError,
         "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
         "element, but got normalized_shape = []"),
        (lambda: F.rms_norm(x, (3,), ember.ones(4)), RuntimeError,
         "Expected weight to be of same shape as normalized_shape, but got weight of shape [4] "
         "and normalized_shape = [3]"),
        (lambda: F.rms_norm(ember.ones(3), (2, 3)), ValueError,
         "Input tensor must have at least 2 dimensions, but got 1"),
        (lambda: F.rms_norm(x, (4,)), RuntimeError,
         "Given normalized_shape=[4], expected input with shape [*4], but got input of "
         "size[2, 3]"),
        (lambda: nn.RMSNorm((3, 3))(x), RuntimeError,
         "Given normalized_shape=[3, 3], expected input with shape [*3, 3], but got input of "
         "size[2, 3]"),
        (lambda: F.rms_norm(ember.ones(2, 3, dtype=ember.int32), (3,)), NotImplementedError,
         "\"rms_norm\" not implemented for 'Int'"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind) as info:
            call()
        assert str(info.value) == message


def test_rms_norm_module_parameters_repr_and_state():
    m = nn.RMSNorm([2, 3])
    assert repr(m) == "RMSNorm((2, 3), eps=None, elementwise_affine=True)"
    assert list(m.state_dict()) == ["weight"]
    assert m.weight.shape == (2, 3) and bool((m.weight == 1).all())
    with ember.no_grad():
        m.weight.mul_(3)
    m.reset_parameters()
    assert bool((m.weight == 1).all())
    plain = nn.RMSNorm(4, eps=1e-6, elementwise_affine=False, dtype=ember.float64)
    assert repr(plain) == "RMSNorm((4,), eps=1e-06, elementwise_affine=False)"
    assert plain.weight is None and list(plain.state_dict()) == []
    assert nn.RMSNorm(4, dtype=ember.float64).weight.dtype is ember.float64
    x = rand(3, 4)
    np.testing.assert_allclose(plain(ember.tensor(x)).numpy(), ref_rms_norm(x, 1, None, 1e-6),
                               rtol=1e-12)


def test_rms_norm_module_trains_its_weight():
    m = nn.RMSNorm(4)
    x = ember.tensor(rand(5, 4), dtype=ember.float32)
    m(x).pow(2).sum().backward()
    xv = x.numpy().astype(np.float64)
    normed = ref_rms_norm(xv, 1, None, np.finfo(np.float32).eps)
    np.testing.assert_allclose(m.weight.grad.numpy(), (2 * normed ** 2).sum(0), rtol=1e-5)


def test_batch_norm_3d_checks_its_input():
    m = nn.BatchNorm3d(2)
    assert repr(m) == ("BatchNorm3d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                       "track_running_stats=True)")
    with pytest.raises(ValueError, match=r"^expected 5D input \(got 4D input\)$"):
        m(ember.ones(2, 2, 3, 3))
    x = rand(3, 2, 2, 3, 2, shift=1)
    out = m(ember.tensor(x, dtype=ember.float32))
    want, mean, _ = ref_batch_norm_train(x.astype(np.float32), np.ones(2), np.zeros(2))
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.running_mean.numpy(), 0.1 * mean, rtol=1e-5, atol=1e-7)


# ---- prelu: one dtype ---------------------------------------------------------------------------
@pytest.mark.parametrize("x_dtype,w_dtype,names", [
    (ember.bfloat16, ember.float32, "BFloat16 and Float"),
    (ember.float16, ember.float32, "Half and Float"),
    (ember.float32, ember.bfloat16, "Float and BFloat16"),
    (ember.float32, ember.float64, "Float and Double"),
    (ember.float64, ember.float32, "Double and Float"),
])
def test_prelu_refuses_to_promote(x_dtype, w_dtype, names):
    x = ember.randn(2, 3).to(x_dtype)
    message = f"prelu: Type promoting not supported. Got {names}"
    with pytest.raises(RuntimeError) as info:
        F.prelu(x, ember.full((1,), 0.25).to(w_dtype))
    assert str(info.value) == message
    with pytest.raises(RuntimeError) as info:  # the dtype is checked before the shapes
        F.prelu(x, ember.full((5,), 0.25).to(w_dtype))
    assert str(info.value) == message
    with pytest.raises(RuntimeError) as info:
        nn.PReLU(dtype=w_dtype)(x)
    assert str(info.value) == message


@pytest.mark.parametrize("dtype", REDUCED + [ember.float32, ember.float64])
def test_prelu_of_one_dtype_still_works(dtype):
    x = ember.tensor([[-2.0, 3.0], [4.0, -8.0]]).to(dtype)
    out = F.prelu(x, ember.tensor([0.25, 0.5]).to(dtype))
    assert out.dtype is dtype
    np.testing.assert_array_equal(values(out), [[-0.5, 3.0], [4.0, -4.0]])
